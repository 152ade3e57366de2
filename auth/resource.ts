/**
 * The protected resources of our authorization server (RFC 9728): the owner-scoped MCP server at
 * `{mcp_url}/auth` (SPEC "Authentication", rules 4-6) - its metadata and the bearer check with its
 * challenge, which the MCP adapter (`servers/adapters/owner-mcp.ts`) runs before each POST - and the
 * public API, whose Bearer writes take access tokens too.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseQuery } from 'node:querystring';
import type { RequestHandler } from 'express';
import type { Config } from '../servers/config.ts';
import type { AccountPrincipal } from './accounts.ts';
import type { BearerResult, BearerVerifier, OwnerGrant } from './bearer.ts';
import { type AuthorizationServer, clientRegistrationMetadata, METADATA_CACHE_CONTROL } from './provider.ts';
import { resourceScopes, SERVICE_SCOPE } from './scopes.ts';

/** What the metadata documents are made from: the configured URLs and the authorization server. */
export interface ResourceMetadataDeps {
  config: Pick<Config, 'site_url' | 'public_api_url'>;
  authorization: AuthorizationServer;
}

/** Where a resource's metadata is, under the resource (RFC 9728 section 3.1). */
export const PRM = '/.well-known/oauth-protected-resource';

/** RFC 9728 section 2; `resource` is exactly the URL clients connect to (section 3.3). */
export function protectedResourceMetadata(services: ResourceMetadataDeps) {
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
export function protectedResourceMetadataUrls(services: ResourceMetadataDeps): {
  resource: string;
  site: string;
} {
  const resource = new URL(services.authorization.resource);
  return {
    resource: `${services.authorization.resource}${PRM}`,
    site: `${services.config.site_url}${PRM}${resource.pathname.replace(/\/+$/, '')}`,
  };
}

export const servePrm =
  (services: ResourceMetadataDeps): RequestHandler =>
  (_req, res) => {
    res.set('Cache-Control', METADATA_CACHE_CONTROL).json(protectedResourceMetadata(services));
  };

/**
 * The owner-scoped MCP server's check of each POST: the account and grant of a valid access token,
 * or undefined once the 401/403 challenge is answered.
 */
export function ownerBearerAuthentication(
  services: ResourceMetadataDeps & { bearer: BearerVerifier },
): (
  req: IncomingMessage,
  res: ServerResponse,
) => Promise<{ account: AccountPrincipal; grant: OwnerGrant } | undefined> {
  const metadataUrl = protectedResourceMetadataUrls(services).resource;
  return async (req, res) => {
    // A token in the query (RFC 6750 section 2.3) is looked for only to be refused with its own error.
    const query = req.url?.includes('?') ? parseQuery(req.url.slice(req.url.indexOf('?') + 1)) : {};
    const result = await services.bearer.verify(req.headers.authorization, query.access_token);
    if (result.ok) {
      return { account: { id: result.grant.accountId, keyId: null }, grant: result.grant };
    }
    challenge(res, result, metadataUrl);
    return undefined;
  };
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
export function publicApiResourceMetadata(services: ResourceMetadataDeps) {
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
  (services: ResourceMetadataDeps): RequestHandler =>
  (_req, res) => {
    res.set('Cache-Control', METADATA_CACHE_CONTROL).json(publicApiResourceMetadata(services));
  };
