/**
 * Drives the authorization server's sign-in and consent pages the way a browser would: follows
 * redirects by hand with a cookie jar and submits the forms it is shown.
 */
import http from 'node:http';
import * as oauth from 'oauth4webapi';

const insecure = { [oauth.allowInsecureRequests]: true };

export class CookieJar {
  readonly #cookies = new Map<string, string>();

  store(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = (pair ?? '').indexOf('=');
      if (eq < 1) continue;
      const name = (pair as string).slice(0, eq).trim();
      const value = (pair as string).slice(eq + 1).trim();
      if (value === '' || /expires=Thu, 01 Jan 1970/i.test(line)) this.#cookies.delete(name);
      else this.#cookies.set(name, value);
    }
  }

  header(): string {
    return [...this.#cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  async fetch(url: string, init: RequestInit = {}): Promise<Response> {
    const res = await fetch(url, {
      ...init,
      redirect: 'manual',
      headers: { ...(init.headers as Record<string, string>), cookie: this.header() },
    });
    this.store(res);
    return res;
  }
}

export interface OwnerCredentials {
  email: string;
  password: string;
}

export interface FlowStep {
  url: string;
  status: number;
  html?: string;
}

/** A hidden or named form field's value in a page the server rendered. */
export function formField(html: string, name: string): string | undefined {
  const re = new RegExp(`name="${name}"[^>]*value="([^"]*)"`);
  return re.exec(html)?.[1];
}

export function formAction(html: string): string | undefined {
  return /<form method="post" action="([^"]+)"/
    .exec(html)?.[1]
    ?.replace(/&#(\d+);/g, (_, c) => String.fromCharCode(Number(c)));
}

/**
 * Follows an authorization request until the browser would leave the authorization server: signs
 * in when asked, then approves (or denies) consent. Returns the redirect back to the client and
 * every page seen on the way.
 */
export async function authorizeInBrowser(
  authorizationUrl: string,
  owner: OwnerCredentials,
  options: { jar?: CookieJar; decision?: 'approve' | 'deny'; stopAt?: (url: string) => boolean } = {},
): Promise<{ redirect: URL; pages: FlowStep[]; jar: CookieJar }> {
  const jar = options.jar ?? new CookieJar();
  const pages: FlowStep[] = [];
  const origin = new URL(authorizationUrl).origin;
  let res = await jar.fetch(authorizationUrl);
  let url = authorizationUrl;
  for (let hops = 0; hops < 20; hops++) {
    if (res.status >= 300 && res.status < 400) {
      const location = new URL(res.headers.get('location') as string, url);
      if (location.origin !== origin || options.stopAt?.(location.href))
        return { redirect: location, pages, jar };
      url = location.href;
      res = await jar.fetch(url);
      continue;
    }
    const html = await res.text();
    pages.push({ url, status: res.status, html });
    if (res.status !== 200)
      throw new Error(`authorization stopped at ${url}: ${res.status} ${html.slice(0, 500)}`);
    const action = new URL(formAction(html) as string, url).href;
    const csrf = formField(html, 'csrf') as string;
    const body = html.includes('name="password"')
      ? new URLSearchParams({ csrf, email: owner.email, password: owner.password })
      : new URLSearchParams({ csrf, decision: options.decision ?? 'approve' });
    res = await jar.fetch(action, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body,
    });
    url = action;
  }
  throw new Error('authorization did not finish');
}

/** Registers a public client for the code flow with one redirect URI; returns its client id. */
export async function registerClient(
  authUrl: string,
  redirectUri: string,
  name = 'Test client',
): Promise<string> {
  const res = await fetch(`${authUrl}/oauth/clients/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: name, redirect_uris: [redirectUri] }),
  });
  if (res.status !== 201) throw new Error(`registration: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { client_id: string }).client_id;
}

export interface SignInForm {
  jar: CookieJar;
  /** Where the form posts to. */
  action: string;
  csrf: string;
  /** Posts the form with these credentials, as the browser that opened it. */
  submit(credentials: OwnerCredentials, headers?: Record<string, string>): Promise<Response>;
}

/**
 * Starts an authorization request (PKCE S256) for a registered client and opens the sign-in form
 * it leads to. `headers` go with every request (e.g. X-Forwarded-For behind a trusted proxy).
 */
export async function openSignInForm(
  authUrl: string,
  clientId: string,
  redirectUri: string,
  headers: Record<string, string> = {},
): Promise<SignInForm> {
  const jar = new CookieJar();
  const url = new URL(`${authUrl}/oauth/authorize`);
  const challenge = Buffer.from(
    await crypto.subtle.digest('SHA-256', new TextEncoder().encode('v'.repeat(43))),
  ).toString('base64url');
  url.search = new URLSearchParams({
    client_id: clientId,
    redirect_uri: redirectUri,
    response_type: 'code',
    scope: 'agent-service',
    code_challenge: challenge,
    code_challenge_method: 'S256',
  }).toString();
  const start = await jar.fetch(url.href, { headers });
  if (start.status !== 303 && start.status !== 302)
    throw new Error(`authorization request: ${start.status} ${await start.text()}`);
  const formUrl = new URL(start.headers.get('location') as string, url).href;
  const html = await (await jar.fetch(formUrl, { headers })).text();
  const action = new URL(formAction(html) as string, formUrl).href;
  const csrf = formField(html, 'csrf') as string;
  return {
    jar,
    action,
    csrf,
    submit: (credentials, extra = {}) =>
      jar.fetch(action, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers, ...extra },
        body: new URLSearchParams({ csrf, ...credentials }),
      }),
  };
}

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** One HTTP request with exactly these headers, `Host` included (fetch always sends the URL's). */
export function rawRequest(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<RawResponse> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: `${target.pathname}${target.search}`,
        method: options.method ?? 'GET',
        headers: options.headers ?? {},
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          body += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

/** The `name=value` pairs a response sets, as a Cookie header. */
export function cookiesOf(headers: http.IncomingHttpHeaders): string {
  return (headers['set-cookie'] ?? []).map((line) => line.split(';')[0]).join('; ');
}

/**
 * An independent OAuth client (oauth4webapi) registered at the authorization server, which gets an
 * owner's tokens through the code flow with PKCE, the sign-in and consent pages driven as a browser
 * would.
 */
export class OwnerTokenClient {
  readonly #as: oauth.AuthorizationServer;
  readonly #client: oauth.Client;
  readonly redirectUri: string;

  private constructor(as: oauth.AuthorizationServer, client: oauth.Client, redirectUri: string) {
    this.#as = as;
    this.#client = client;
    this.redirectUri = redirectUri;
  }

  get clientId(): string {
    return this.#client.client_id;
  }

  static async register(
    authUrl: string,
    redirectUri = 'http://127.0.0.1:7779/callback',
  ): Promise<OwnerTokenClient> {
    const issuer = new URL(authUrl);
    const as = await oauth.processDiscoveryResponse(
      issuer,
      await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }),
    );
    const registered = await oauth.processDynamicClientRegistrationResponse(
      await oauth.dynamicClientRegistrationRequest(
        as,
        {
          client_name: 'Owner token test client',
          redirect_uris: [redirectUri],
          grant_types: ['authorization_code', 'refresh_token'],
          token_endpoint_auth_method: 'none',
        },
        insecure,
      ),
    );
    return new OwnerTokenClient(
      as,
      { client_id: registered.client_id, token_endpoint_auth_method: 'none' },
      redirectUri,
    );
  }

  /** The owner's tokens for `resource` (the owner MCP URL, or the public API). */
  async tokens(owner: OwnerCredentials, resource: string): Promise<oauth.TokenEndpointResponse> {
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const url = new URL(this.#as.authorization_endpoint as string);
    url.search = new URLSearchParams({
      client_id: this.#client.client_id,
      redirect_uri: this.redirectUri,
      response_type: 'code',
      scope: 'agent-service offline_access',
      state,
      resource,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    }).toString();
    const flow = await authorizeInBrowser(url.href, owner);
    const params = oauth.validateAuthResponse(this.#as, this.#client, flow.redirect, state);
    const response = await oauth.authorizationCodeGrantRequest(
      this.#as,
      this.#client,
      oauth.None(),
      params,
      this.redirectUri,
      verifier,
      { additionalParameters: { resource }, ...insecure },
    );
    return oauth.processAuthorizationCodeResponse(this.#as, this.#client, response);
  }

  /** A refresh grant; rejects with the OAuth error (`invalid_grant` for a revoked refresh token). */
  async refresh(refreshToken: string): Promise<oauth.TokenEndpointResponse> {
    return oauth.processRefreshTokenResponse(
      this.#as,
      this.#client,
      await oauth.refreshTokenGrantRequest(this.#as, this.#client, oauth.None(), refreshToken, insecure),
    );
  }
}

/** The HTTP status of an MCP `initialize` sent to `mcpUrl` with this bearer token (200 when accepted). */
export async function mcpInitializeStatus(mcpUrl: string, token: string): Promise<number> {
  const res = await fetch(mcpUrl, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'test', version: '1' } },
    }),
  });
  await res.body?.cancel();
  return res.status;
}
