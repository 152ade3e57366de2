/**
 * The owner dashboard's sign-in, as an OAuth client of the embedded authorization server
 * (`auth/first-party.ts`): an authorization code request with PKCE S256 and `state` for the
 * owner-scoped resource, the owner's sign-in on the authorization server's own page, then the code
 * exchanged at the token endpoint with the client's secret (oauth4webapi, a certified OAuth client
 * library, does the protocol work and checks every response). The access token is verified by the
 * same verifier as the owner-scoped MCP server's, and the session stands for its grant.
 *
 * The token request is handed to the authorization server's own HTTP handler in process
 * (light-my-request, made for injecting requests into a Node handler), not sent over the network:
 * the authorization server is this very process, and a deployment's public address is often not
 * reachable from inside it. It is the same HTTP request, addressed to the issuer as the router
 * addresses every request (`auth/router.ts`), through oidc-provider's client authentication and
 * PKCE check like any client's. (It goes to oidc-provider's Koa handler directly: Express swaps
 * the prototypes of the requests it handles, which light-my-request's response cannot survive.)
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Request, Response } from 'express';
import { inject } from 'light-my-request';
import * as oauth from 'oauth4webapi';
import type { OwnerGrant } from '../../auth/bearer.ts';
import { DASHBOARD_CLIENT_ID, DASHBOARD_SCOPE, dashboardRedirectUri } from '../../auth/first-party.ts';
import { cookieOf } from '../../auth/form-security.ts';
import { endpointPaths } from '../../auth/provider.ts';
import { addressedToIssuer } from '../../auth/router.ts';
import type { Services } from '../services.ts';

/** Holds a sign-in in flight (state, PKCE verifier, where to return) between the redirect and the callback. */
const PENDING_COOKIE = 'agsvc_dashboard_signin';
/** The session cookie. */
export const SESSION_COOKIE = 'agsvc_dashboard';
const PENDING_TTL_MS = 10 * 60_000;

interface Pending {
  state: string;
  verifier: string;
  returnTo: string;
}

export type SignInResult =
  | { ok: true; grant: OwnerGrant; returnTo: string }
  | { ok: false; status: 400 | 403 | 502; message: string };

export class DashboardSignIn {
  readonly #services: Services;
  /** oidc-provider's handler, as mounted at the issuer's path. */
  readonly #dispatch: (req: IncomingMessage, res: ServerResponse) => void;
  readonly #issuerPath: string;
  readonly #as: oauth.AuthorizationServer;
  readonly #client: oauth.Client = { client_id: DASHBOARD_CLIENT_ID };
  readonly #clientAuth: oauth.ClientAuth;
  readonly #redirectUri: string;
  readonly #cookiePath: string;
  readonly #secure: boolean;
  readonly #key: string;

  constructor(services: Services) {
    const { config, authorization } = services;
    this.#services = services;
    const callback = authorization.provider.callback();
    const addressed = addressedToIssuer(authorization.issuer);
    this.#issuerPath = new URL(authorization.issuer).pathname.replace(/\/+$/, '');
    this.#dispatch = (req, res) => {
      // As Express hands it over when mounted at the issuer's path (oidc-provider reads the mount
      // path from originalUrl).
      (req as IncomingMessage & { originalUrl: string }).originalUrl = `${this.#issuerPath}${req.url}`;
      addressed(req as Request, res as Response, () => callback(req, res));
    };
    this.#as = {
      issuer: authorization.issuer,
      authorization_endpoint: `${authorization.issuer}${endpointPaths.authorization}`,
      token_endpoint: `${authorization.issuer}${endpointPaths.token}`,
      // oidc-provider returns `iss` with every authorization response (RFC 9207): checked.
      authorization_response_iss_parameter_supported: true,
    };
    this.#clientAuth = oauth.ClientSecretBasic(authorization.dashboardSecret);
    this.#redirectUri = dashboardRedirectUri(config);
    this.#cookiePath = `${new URL(config.site_url).pathname.replace(/\/+$/, '')}/dashboard`;
    this.#secure = config.site_url.startsWith('https:');
    this.#key = authorization.keys.cookieKeys[0] as string;
  }

  /** Sends the browser to the authorization endpoint; `returnTo` is a dashboard path to come back to. */
  async start(res: Response, returnTo: string): Promise<void> {
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const url = new URL(this.#as.authorization_endpoint as string);
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: DASHBOARD_CLIENT_ID,
      redirect_uri: this.#redirectUri,
      scope: DASHBOARD_SCOPE,
      resource: this.#services.authorization.resource,
      state,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    }).toString();
    res.cookie(PENDING_COOKIE, this.#seal({ state, verifier, returnTo }), {
      ...this.#cookieOptions(),
      maxAge: PENDING_TTL_MS,
    });
    res.set('Cache-Control', 'no-store').redirect(303, url.href);
  }

  /** The callback: checks the response against the pending sign-in, exchanges the code, verifies the token. */
  async finish(req: Request, res: Response): Promise<SignInResult> {
    const pending = this.#open(cookieOf(req, PENDING_COOKIE));
    res.clearCookie(PENDING_COOKIE, this.#cookieOptions());
    if (!pending) {
      return {
        ok: false,
        status: 400,
        message: 'This sign-in expired or was started in another browser. Sign in again.',
      };
    }
    const current = new URL(req.originalUrl, this.#redirectUri);
    let params: URLSearchParams;
    try {
      params = oauth.validateAuthResponse(this.#as, this.#client, current, pending.state);
    } catch (err) {
      if (err instanceof oauth.AuthorizationResponseError) {
        return {
          ok: false,
          status: 403,
          message:
            err.error === 'access_denied'
              ? 'Sign-in was cancelled.'
              : `The authorization server refused the sign-in (${err.error}).`,
        };
      }
      return { ok: false, status: 400, message: 'The sign-in response does not match this sign-in.' };
    }
    let accessToken: string;
    try {
      const response = await oauth.authorizationCodeGrantRequest(
        this.#as,
        this.#client,
        this.#clientAuth,
        params,
        this.#redirectUri,
        pending.verifier,
        {
          [oauth.customFetch]: this.#fetchInProcess,
          [oauth.allowInsecureRequests]: !this.#secure,
          additionalParameters: { resource: this.#services.authorization.resource },
        },
      );
      accessToken = (await oauth.processAuthorizationCodeResponse(this.#as, this.#client, response))
        .access_token;
    } catch (err) {
      req.log.warn({ err }, 'dashboard sign-in: code exchange failed');
      return { ok: false, status: 502, message: 'The sign-in could not be completed. Sign in again.' };
    }
    const verified = await this.#services.bearer.verify(`Bearer ${accessToken}`, undefined);
    if (!verified.ok) {
      req.log.warn({ error: verified.error, description: verified.description }, 'dashboard token refused');
      return { ok: false, status: 403, message: 'The sign-in did not grant access to your account data.' };
    }
    return { ok: true, grant: verified.grant, returnTo: pending.returnTo };
  }

  setSessionCookie(res: Response, cookie: string, maxAgeMs: number): void {
    res.cookie(SESSION_COOKIE, cookie, { ...this.#cookieOptions(), maxAge: maxAgeMs });
  }

  clearSessionCookie(res: Response): void {
    res.clearCookie(SESSION_COOKIE, this.#cookieOptions());
  }

  #cookieOptions() {
    return { httpOnly: true, sameSite: 'lax' as const, secure: this.#secure, path: this.#cookiePath };
  }

  /** oauth4webapi's fetch, answered by this process's own handler. */
  readonly #fetchInProcess = async (url: string, options: oauth.CustomFetchOptions<string, unknown>) => {
    const target = new URL(url);
    const headers = Object.fromEntries(
      new Headers(options.headers as ConstructorParameters<typeof Headers>[0]),
    );
    const reply = await inject(this.#dispatch, {
      method: options.method as 'POST',
      url: `${target.pathname.slice(this.#issuerPath.length)}${target.search}`,
      headers: { ...headers, host: target.host },
      payload: typeof options.body === 'string' ? options.body : String(options.body ?? ''),
      remoteAddress: '127.0.0.1',
    });
    const out = new Headers();
    for (const [name, value] of Object.entries(reply.headers)) {
      if (value === undefined) continue;
      for (const v of Array.isArray(value) ? value : [String(value)]) out.append(name, v);
    }
    return new globalThis.Response(reply.rawPayload, { status: reply.statusCode, headers: out });
  };

  #seal(pending: Pending): string {
    const body = Buffer.from(JSON.stringify(pending)).toString('base64url');
    return `${body}.${this.#mac(body)}`;
  }

  #open(value: string | undefined): Pending | null {
    const [body, mac] = (value ?? '').split('.');
    if (!body || !mac) return null;
    const expected = Buffer.from(this.#mac(body));
    const got = Buffer.from(mac);
    if (got.length !== expected.length || !timingSafeEqual(got, expected)) return null;
    try {
      const pending = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Pending;
      return typeof pending.state === 'string' && typeof pending.verifier === 'string' ? pending : null;
    } catch {
      return null;
    }
  }

  #mac(body: string): string {
    return createHmac('sha256', this.#key).update(`dashboard-sign-in:${body}`).digest('base64url');
  }
}
