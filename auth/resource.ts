/**
 * The owner-scoped MCP server at `{mcp_url}/auth` (SPEC "Authentication", rules 4-6): the registry's
 * `owner` tools behind bearer authentication, and its protected resource metadata (RFC 9728).
 */
import type { ServerResponse } from 'node:http';
import { parse as parseQuery } from 'node:querystring';
import { type RequestHandler, Router } from 'express';
import { createMcpEndpoint } from '../servers/adapters/mcp.ts';
import { mcpAllowedHosts } from '../servers/config.ts';
import type { AnyOperation } from '../servers/operation.ts';
import type { Services } from '../servers/services.ts';
import type { BearerResult } from './bearer.ts';
import { clientRegistrationMetadata, METADATA_CACHE_CONTROL } from './provider.ts';
import { resourceScopes, SERVICE_SCOPE } from './scopes.ts';

const PRM = '/.well-known/oauth-protected-resource';

/** RFC 9728 section 2; `resource` is exactly the URL clients connect to (section 3.3). */
export function protectedResourceMetadata(services: Services) {
  const authz = services.authorization;
  return {
    resource: authz.resource,
    authorization_servers: [authz.issuer],
    bearer_methods_supported: ['header'],
    scopes_supported: [...resourceScopes],
    ...clientRegistrationMetadata(authz),
    resource_name: 'Agent service, owner-scoped MCP server',
    resource_documentation: `${services.config.site_url}/`,
  };
}

/** Where the metadata is: under the resource, and path-inserted on the site (RFC 9728 section 3.1). */
export function protectedResourceMetadataUrls(services: Services): { resource: string; site: string } {
  const resource = new URL(services.authorization.resource);
  return {
    resource: `${services.authorization.resource}${PRM}`,
    site: `${services.config.site_url}${PRM}${resource.pathname.replace(/\/+$/, '')}`,
  };
}

export const servePrm =
  (services: Services): RequestHandler =>
  (_req, res) => {
    res.set('Cache-Control', METADATA_CACHE_CONTROL).json(protectedResourceMetadata(services));
  };

/** Mounted at `{mcp_url}/auth`. */
/** The owner-scoped MCP server; `instructions` are what it says about itself in `initialize`. */
export function ownerMcpEndpoint(
  services: Services,
  operations: readonly AnyOperation[],
  instructions: string,
) {
  const metadataUrl = protectedResourceMetadataUrls(services).resource;
  const endpoint = createMcpEndpoint(services, operations, {
    server: 'owner',
    allowedHosts: mcpAllowedHosts(services.config),
    instructions,
    async authenticate(req, res) {
      // A token in the query (RFC 6750 section 2.3) is looked for only to be refused with its own error.
      const query = req.url?.includes('?') ? parseQuery(req.url.slice(req.url.indexOf('?') + 1)) : {};
      const result = await services.bearer.verify(req.headers.authorization, query.access_token);
      if (result.ok) {
        return { account: { id: result.grant.accountId, keyId: null }, grant: result.grant };
      }
      challenge(res, result, metadataUrl);
      return undefined;
    },
  });
  const router = Router();
  router.get(PRM, servePrm(services));
  router.use(endpoint.router);
  return { router, close: endpoint.close, direct: endpoint.direct };
}

/** RFC 6750 section 3 with the RFC 9728 section 5.1 `resource_metadata` parameter. */
function challenge(
  res: ServerResponse,
  result: Extract<BearerResult, { ok: false }>,
  metadataUrl: string,
): void {
  const params = [`resource_metadata="${metadataUrl}"`, `scope="${SERVICE_SCOPE}"`];
  if (result.error) params.push(`error="${result.error}"`);
  if (result.description) params.push(`error_description="${result.description.replace(/["\\]/g, '')}"`);
  res.statusCode = result.status;
  res.setHeader('WWW-Authenticate', `Bearer ${params.join(', ')}`);
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.end(
    JSON.stringify({
      error: result.error ?? 'unauthorized',
      error_description:
        result.description ?? 'This MCP server needs an OAuth access token; see WWW-Authenticate',
    }),
  );
}

/**
 * The public API as a protected resource: its Bearer writes (POST /listings) take access tokens
 * issued for `resource={public_api_url}`. Served under the API and path-inserted on the site.
 */
export function publicApiResourceMetadata(services: Services) {
  const authz = services.authorization;
  return {
    resource: services.config.public_api_url,
    authorization_servers: [authz.issuer],
    bearer_methods_supported: ['header'],
    scopes_supported: [SERVICE_SCOPE],
    ...clientRegistrationMetadata(authz),
    resource_name: 'Agent service, public API (Bearer writes)',
    resource_documentation: `${services.config.public_api_url}/openapi.json`,
  };
}

export const servePublicApiPrm =
  (services: Services): RequestHandler =>
  (_req, res) => {
    res.set('Cache-Control', METADATA_CACHE_CONTROL).json(publicApiResourceMetadata(services));
  };
