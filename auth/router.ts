/**
 * HTTP of the authorization server: oidc-provider mounted at `auth_url` (its issuer) behind the
 * interaction pages, the limits on what anyone may write (registration, authorization requests)
 * and the registration metadata checks, plus the metadata mirrors on `site_url` (SPEC
 * "Authentication" rule 7: the site's documents publish the issuer's own, same issuer).
 */
import { type RequestHandler, Router } from 'express';
import { invalid, ServiceError, toServiceError } from '../servers/errors.ts';
import { nulFields } from '../servers/input.ts';
import { jsonBody } from '../servers/json-body.ts';
import { type AnonymousRouteDeps, signupHandler } from './anonymous/routes.ts';
import type { EmailCodes } from './assertions/email-codes.ts';
import { type AgentLogoutDeps, identityAssertionRouter } from './assertions/routes.ts';
import { clientMetadataProblem, MAX_METADATA_BYTES, nativeWhenLoopback } from './client-metadata.ts';
import { type SecurityEventRouteDeps, securityEventsRouter } from './events/routes.ts';
import { sendLimitPage } from './form-security.ts';
import { type InteractionDeps, interactionRouter } from './interactions/routes.ts';
import type { AuthorizationServer } from './provider.ts';

const OIDC_METADATA = '/.well-known/openid-configuration';
const OAUTH_METADATA = '/.well-known/oauth-authorization-server';

/**
 * oidc-provider builds every URL it publishes - the metadata's endpoints, `registration_client_uri`,
 * the resume and sign-out form targets - from the request's host and protocol (Koa `ctx.href`,
 * which reads X-Forwarded-Host and X-Forwarded-Proto when `provider.proxy` is set). Every request
 * reaches it addressed to the issuer, so those URLs come from `auth_url` and never from a header
 * the client chose; `provider.proxy` is on only so that the protocol set here is read.
 */
export function addressedToIssuer(issuer: string): RequestHandler {
  const { host, protocol } = new URL(issuer);
  const proto = protocol.slice(0, -1);
  return (req, _res, next) => {
    req.headers.host = host;
    req.headers['x-forwarded-host'] = host;
    req.headers['x-forwarded-proto'] = proto;
    next();
  };
}

/** What the authorization server's HTTP runs on: each router's own deps, given by the composition root. */
export type AuthorizationRouterDeps = AnonymousRouteDeps &
  InteractionDeps &
  AgentLogoutDeps &
  SecurityEventRouteDeps & { emailCodes: EmailCodes };

/** Mounted at `auth_url`. */
export function authorizationRouter(services: AuthorizationRouterDeps, authz: AuthorizationServer): Router {
  const { provider } = authz;
  const router = Router();
  const callback = provider.callback() as unknown as RequestHandler;
  const authPath = new URL(authz.issuer).pathname.replace(/\/+$/, '');

  router.use(addressedToIssuer(authz.issuer));

  // oidc-provider keeps request parameters (the authorization request's, in its Interaction) and
  // PostgreSQL cannot store NUL (`servers/input.ts`): refused as RFC 6749 section 4.1.2.1 invalid_request.
  router.use((req, res, next) => {
    const nul = nulFields(req.query);
    if (nul.length === 0) return next();
    res.status(400).json({ error: 'invalid_request', error_description: invalid(nul).message });
  });

  router.use('/interaction', interactionRouter(services, provider, authz.keys.cookieKeys[0] as string));

  // Open registration (RFC 7591) is a write anyone can make: limited per client address, and its
  // metadata held to what `client-metadata.ts` allows before oidc-provider stores it.
  const registrationBody = jsonBody(MAX_METADATA_BYTES);
  router.post('/oauth/clients/register', async (req, res, next) => {
    const refuse = (status: number, error: string, error_description: string, headers = {}) => {
      res
        .status(status)
        .set({ 'Cache-Control': 'no-store', ...headers })
        .json({ error, error_description });
    };
    try {
      await services.rateLimits.consume('unauthenticated_writes', req.ip ?? 'unknown');
    } catch (err) {
      const error = toServiceError(err);
      refuse(error.status, 'temporarily_unavailable', error.publicDetail, error.headers);
      return;
    }
    registrationBody(req, res, (err?: unknown) => {
      const type = (err as { type?: string } | undefined)?.type;
      if (type === 'entity.too.large') {
        refuse(413, 'invalid_client_metadata', `client metadata over ${MAX_METADATA_BYTES / 1024} KiB`);
        return;
      }
      if (err instanceof ServiceError && err.code === 'malformed_json') {
        // RFC 7591 section 3.2.2 names no error for a body that is not JSON: RFC 6749's invalid_request.
        refuse(400, 'invalid_request', err.message);
        return;
      }
      if (err) {
        refuse(400, 'invalid_request', 'the client metadata is not a JSON object');
        return;
      }
      const nul = nulFields(req.body);
      if (nul.length > 0) {
        // RFC 7591 section 3.2.2; the metadata would be stored (`servers/input.ts`).
        refuse(400, 'invalid_client_metadata', invalid(nul).message);
        return;
      }
      if (typeof req.body === 'object' && req.body !== null && !Array.isArray(req.body)) {
        const metadata = req.body as Record<string, unknown>;
        const problem = clientMetadataProblem(metadata);
        if (problem) {
          refuse(400, problem.error, problem.error_description);
          return;
        }
        nativeWhenLoopback(metadata);
      }
      next();
    });
  });

  // Each authorization request stores an interaction before oidc-provider has validated anything,
  // so requests are limited per client address first. The refusal is a page, not a redirect:
  // the redirect URI is not validated yet (RFC 6749 section 4.1.2.1).
  router.all('/oauth/authorize', async (req, res, next) => {
    try {
      await services.rateLimits.consume('authorization_requests', req.ip ?? 'unknown');
      next();
    } catch (err) {
      if (!sendLimitPage(res, err)) next(err);
    }
  });

  // The identity_assertion method: verified-email codes and the agents' sign-out (`assertions/`).
  router.use(identityAssertionRouter(services, authz, services.emailCodes));
  // Security events: the CAEP receiver's push endpoint (`events/routes.ts`).
  router.use(securityEventsRouter(services));

  // The anonymous method of the agent authentication descriptor (`anonymous/sessions.ts`).
  router.post('/signup', signupHandler(services));
  // The descriptor names it as `register_uri`: an agent (or a scanner) that GETs it learns it exists
  // and takes POST (RFC 9110 section 15.5.6), not that there is nothing here.
  router.all('/signup', postOnly);

  // RFC 8414 section 3 names this document; oidc-provider serves the OpenID one. Same content.
  router.get(OAUTH_METADATA, (req, res, next) => {
    req.url = OIDC_METADATA;
    req.originalUrl = `${authPath}${OIDC_METADATA}`;
    callback(req, res, next);
  });

  router.use(callback);
  return router;
}

/** 405 with `Allow: POST` for a POST endpoint asked with another method. */
const postOnly: RequestHandler = (req, _res, next) =>
  next(
    new ServiceError('method_not_allowed', {
      detail: `${req.method} is not allowed here; use POST`,
      headers: { Allow: 'POST' },
    }),
  );

/**
 * Mounted at `site_url`: `/.well-known/oauth-authorization-server` and `/.well-known/openid-configuration`,
 * each at the site root and at the RFC 8414 section 3.1 path-inserted location for the issuer's path.
 * The document is the issuer's own, rendered for the issuer's address.
 */
export function authorizationMetadataMirror(authz: AuthorizationServer): Router {
  const router = Router();
  const callback = authz.provider.callback() as unknown as RequestHandler;
  const toIssuer = addressedToIssuer(authz.issuer);
  const authPath = new URL(authz.issuer).pathname.replace(/\/+$/, '');
  const serve: RequestHandler = (req, res, next) => {
    req.url = OIDC_METADATA;
    req.originalUrl = `${authPath}${OIDC_METADATA}`;
    toIssuer(req, res, () => callback(req, res, next));
  };
  for (const name of [OAUTH_METADATA, OIDC_METADATA]) {
    router.get(name, serve);
    if (authPath) router.get(`${name}${authPath}`, serve);
  }
  return router;
}
