/**
 * HTTP of the authorization server: oidc-provider mounted at `auth_url` (its issuer) behind the
 * interaction pages and the registration rate limit, plus the metadata mirrors on `site_url`
 * (SPEC "Authentication" rule 7: the site's documents publish the issuer's own, same issuer).
 */
import express, { type RequestHandler, Router } from 'express';
import { invalid, toServiceError } from '../servers/errors.ts';
import { nulFields } from '../servers/input.ts';
import type { Services } from '../servers/services.ts';
import { signupHandler } from './anonymous/routes.ts';
import { interactionRouter } from './interactions/routes.ts';
import type { AuthorizationServer } from './provider.ts';
import { isLoopbackRedirect } from './redirects.ts';

const OIDC_METADATA = '/.well-known/openid-configuration';
const OAUTH_METADATA = '/.well-known/oauth-authorization-server';

/** Mounted at `auth_url`. */
export function authorizationRouter(services: Services, authz: AuthorizationServer): Router {
  const { provider } = authz;
  const router = Router();
  const callback = provider.callback() as unknown as RequestHandler;
  const authPath = new URL(authz.issuer).pathname.replace(/\/+$/, '');

  // oidc-provider keeps request parameters (the authorization request's, in its Interaction) and
  // PostgreSQL cannot store NUL (`servers/input.ts`): refused as RFC 6749 section 4.1.2.1 invalid_request.
  router.use((req, res, next) => {
    const nul = nulFields(req.query);
    if (nul.length === 0) return next();
    res.status(400).json({ error: 'invalid_request', error_description: invalid(nul).message });
  });

  router.use('/interaction', interactionRouter(services, provider, authz.keys.cookieKeys[0] as string));

  // Open registration (RFC 7591) is a write anyone can make: limited per client address.
  router.post(
    '/oauth/clients/register',
    express.json({ limit: services.config.http.body_limit_bytes }),
    async (req, res, next) => {
      try {
        await services.rateLimits.consume('unauthenticated_writes', req.ip ?? 'unknown');
      } catch (err) {
        const error = toServiceError(err);
        res
          .status(error.status)
          .set(error.headers)
          .json({ error: 'temporarily_unavailable', error_description: error.publicDetail });
        return;
      }
      const nul = nulFields(req.body);
      if (nul.length > 0) {
        // RFC 7591 section 3.2.2; the metadata would be stored (`servers/input.ts`).
        res.status(400).json({ error: 'invalid_client_metadata', error_description: invalid(nul).message });
        return;
      }
      nativeWhenLoopback(req.body);
      next();
    },
  );

  // The anonymous method of the agent authentication descriptor (`anonymous/sessions.ts`).
  router.post('/signup', signupHandler(services));

  // RFC 8414 section 3 names this document; oidc-provider serves the OpenID one. Same content.
  router.get(OAUTH_METADATA, (req, res, next) => {
    req.url = OIDC_METADATA;
    req.originalUrl = `${authPath}${OIDC_METADATA}`;
    callback(req, res, next);
  });

  router.use(callback);
  return router;
}

/**
 * Mounted at `site_url`: `/.well-known/oauth-authorization-server` and `/.well-known/openid-configuration`,
 * each at the site root and at the RFC 8414 section 3.1 path-inserted location for the issuer's path.
 * The document is the issuer's own, rendered for the issuer's host.
 */
export function authorizationMetadataMirror(services: Services, authz: AuthorizationServer): Router {
  const router = Router();
  const callback = authz.provider.callback() as unknown as RequestHandler;
  const issuer = new URL(authz.issuer);
  const authPath = issuer.pathname.replace(/\/+$/, '');
  const serve: RequestHandler = (req, res, next) => {
    req.url = OIDC_METADATA;
    req.originalUrl = `${authPath}${OIDC_METADATA}`;
    req.headers.host = issuer.host;
    if (services.config.trust_proxy !== false) req.headers['x-forwarded-host'] = issuer.host;
    callback(req, res, next);
  };
  for (const name of [OAUTH_METADATA, OIDC_METADATA]) {
    router.get(name, serve);
    if (authPath) router.get(`${name}${authPath}`, serve);
  }
  return router;
}

/**
 * RFC 8252 section 7.3: a native client's loopback redirect may use any port. oidc-provider applies
 * that to clients registered as `native`; a client that registers only loopback redirect URIs and
 * names no application type (as MCP clients do) is registered as one.
 */
function nativeWhenLoopback(body: unknown): void {
  if (typeof body !== 'object' || body === null) return;
  const metadata = body as Record<string, unknown>;
  const uris = metadata.redirect_uris;
  if (metadata.application_type !== undefined || !Array.isArray(uris) || uris.length === 0) return;
  if (uris.every((u) => typeof u === 'string' && isLoopbackRedirect(u))) metadata.application_type = 'native';
}
