/**
 * The embedded OAuth 2.1 authorization server: oidc-provider 9 with one documented configuration
 * (ARCHITECTURE.md section 4, OAuth; SPEC "Authentication"). Issuer = `auth_url`. It offers exactly
 * what the specification lists - open dynamic client registration, the authorization code grant
 * with PKCE S256, refresh tokens (rotated), revocation, JWKS and sign-out - plus client ID metadata
 * documents, which MCP clients prefer to registering (`client-id-metadata.ts`), and turns off the
 * rest of what oidc-provider enables by default (PAR, DPoP, userinfo, the development login pages).
 *
 * Access tokens are JWTs (`typ at+jwt`, ES256) for one resource, the owner-scoped MCP server at
 * `{mcp_url}/auth`, and live ten minutes. A JWT cannot be recalled, so the resource server also
 * checks that the token's grant still exists (`bearer.ts`).
 */

import type { Kysely } from 'kysely';
import Provider, { type Configuration, errors, type KoaContextWithOIDC } from 'oidc-provider';
import type { Logger } from 'pino';
import type { Database } from '../db/schema.ts';
import type { Config } from '../servers/config.ts';
import type { SafeFetch } from '../servers/outbound/safe-fetch.ts';
import type { SecretBox } from '../servers/secrets.ts';
import type { Accounts } from './accounts.ts';
import { KyselyAdapter } from './adapter.ts';
import {
  clientIdMetadataDocumentFeature,
  clientIdUrlFailuresAsInvalidClient,
  providerFetch,
} from './client-id-metadata.ts';
import { agentAuthDescriptor } from './descriptor.ts';
import { dashboardClient, dashboardClientSecret, firstPartyGrant } from './first-party.ts';
import { logoutPage, logoutSuccessPage, oauthErrorPage } from './interactions/pages.ts';
import { type AuthorizationKeys, loadAuthorizationKeys } from './keys.ts';
import { resourceScopes, SERVICE_SCOPE } from './scopes.ts';

const MINUTE = 60;
const DAY = 24 * 60 * MINUTE;

/** Lifetimes, in seconds, of everything oidc-provider stores or issues. */
export const tokenLifetimes = {
  AccessToken: 10 * MINUTE,
  AuthorizationCode: MINUTE,
  ClientCredentials: 10 * MINUTE,
  DeviceCode: 10 * MINUTE,
  BackchannelAuthenticationRequest: 10 * MINUTE,
  Grant: 30 * DAY,
  IdToken: 60 * MINUTE,
  Interaction: 60 * MINUTE,
  RefreshToken: 30 * DAY,
  Session: 30 * DAY,
} as const;

/**
 * Caching of the published metadata (authorization server, OpenID configuration, JWKS, protected
 * resource metadata): short, because a rotated signing key is published when a process restarts
 * and verifiers that meet its key id fetch the JWKS again (auth/README.md, "Rotating the signing key").
 */
export const METADATA_CACHE_CONTROL = 'public, max-age=300';

/** URL of the owner-scoped MCP server: the default resource (RFC 8707) tokens are issued for. */
export const ownerMcpUrl = (config: Config): string => `${config.mcp_url}/auth`;

/**
 * The public API as a resource: a token for it (`resource={public_api_url}`) authorizes the
 * public API's Bearer writes (SPEC "Authentication": Bearer token for writes), e.g. POST /listings.
 */
export const publicApiResource = (config: Config): string => config.public_api_url;

/**
 * What a token for `indicator` looks like (RFC 8707 resource), or null when we issue none for it:
 * the owner MCP server takes the resource scopes, the public API and the site only the service scope.
 */
export function resourceServerInfo(config: Config, indicator: string) {
  const owner = ownerMcpUrl(config);
  if (indicator !== owner && indicator !== publicApiResource(config) && indicator !== siteResource(config))
    return null;
  return {
    scope: indicator === owner ? resourceScopes.join(' ') : SERVICE_SCOPE,
    audience: indicator,
    accessTokenTTL: tokenLifetimes.AccessToken,
    accessTokenFormat: 'jwt' as const,
    jwt: { sign: { alg: 'ES256' as const } },
  };
}

/**
 * The site as a resource (its metadata at `{site_url}/.well-known/oauth-protected-resource`): a token
 * for it authorizes the same Bearer writes as one for the public API, which lives under the site -
 * the site's own (the soul API at `{site_url}/api/soul`) and the public API's.
 */
export const siteResource = (config: Config): string => config.site_url;

/** Where the login and consent pages of an interaction live. */
export const interactionUrl = (config: Config, uid: string): string =>
  `${config.auth_url}/interaction/${uid}`;

/** Claim carrying the grant an access token belongs to, so the resource server can see it revoked. */
export const GRANT_CLAIM = 'grant_id';

/** Paths of the endpoints under the issuer (oidc-provider `routes`). */
export const endpointPaths = {
  authorization: '/oauth/authorize',
  token: '/oauth/token',
  registration: '/oauth/clients/register',
  revocation: '/oauth/revoke',
  jwks: '/oauth/jwks',
  end_session: '/logout',
} as const;

export interface AuthorizationServer {
  provider: Provider;
  keys: AuthorizationKeys;
  issuer: string;
  resource: string;
  /** The owner dashboard's client secret (`first-party.ts`). */
  dashboardSecret: string;
  /** Whether an https URL may be a `client_id` (`client-id-metadata.ts`), as the metadata says. */
  clientIdMetadataDocuments: boolean;
}

/**
 * How a client of our authorization server gets a `client_id`, as every protected resource metadata
 * document says it. SPEC "Authentication" rule 4.2 names `resource_registration_endpoint`; RFC 9728
 * has no field for either, so both repeat what the authorization server metadata says: dynamic
 * registration there, and whether an https URL of a client ID metadata document may be the
 * `client_id` (`client_id_metadata_document_supported`, draft-ietf-oauth-client-id-metadata-document-02
 * section 6), which MCP clients prefer to registering.
 */
export function clientRegistrationMetadata(authz: AuthorizationServer) {
  return {
    resource_registration_endpoint: `${authz.issuer}/oauth/clients/register`,
    ...(authz.clientIdMetadataDocuments ? { client_id_metadata_document_supported: true } : {}),
  };
}

/** What the authorization server runs on; the composition root (`servers/services.ts`) gives it. */
export interface AuthorizationServerDeps {
  config: Config;
  db: Kysely<Database>;
  accounts: Pick<Accounts, 'get'>;
  log: Logger;
  secrets: SecretBox;
  /** SSRF-safe fetch for client ID metadata documents. */
  fetch: SafeFetch;
}

export async function createAuthorizationServer(
  services: AuthorizationServerDeps,
): Promise<AuthorizationServer> {
  const { config, db } = services;
  const keys = await loadAuthorizationKeys(db, services.secrets);
  const resource = ownerMcpUrl(config);
  const dashboardSecret = await dashboardClientSecret(db, services.secrets);
  const documents = config.auth.client_id_metadata_documents;

  const configuration = providerConfiguration(services, { keys, resource, dashboardSecret });
  const provider = new Provider(config.auth_url, configuration);
  // The router hands every request over addressed to the issuer, X-Forwarded-Host and -Proto
  // included (`router.ts`, addressedToIssuer): the provider reads them to build URLs from config.
  provider.proxy = true;
  clientIdUrlFailuresAsInvalidClient(provider);
  observeProvider(provider, services.log);
  return {
    provider,
    keys,
    issuer: config.auth_url,
    resource,
    dashboardSecret,
    clientIdMetadataDocuments: documents.enabled,
  };
}

/** oidc-provider's configuration: our clients, keys, scopes, token lifetimes and pages. */
function providerConfiguration(
  services: AuthorizationServerDeps,
  { keys, resource, dashboardSecret }: { keys: AuthorizationKeys; resource: string; dashboardSecret: string },
): Configuration {
  const { config, db, accounts } = services;
  const documents = config.auth.client_id_metadata_documents;
  return {
    adapter: (model: string) => new KyselyAdapter(db, model),
    // Registered clients come from dynamic registration or are named by the URL of their metadata
    // document (`client-id-metadata.ts`); the one static client is the service's own owner
    // dashboard (`first-party.ts`).
    clients: [dashboardClient(config, dashboardSecret)],
    jwks: keys.jwks,
    cookies: {
      keys: keys.cookieKeys,
      long: { signed: true, httpOnly: true, sameSite: 'lax' },
      short: { signed: true, httpOnly: true, sameSite: 'lax' },
    },
    async findAccount(_ctx, id) {
      const account = await accounts.get(id);
      if (!account) return undefined;
      return {
        accountId: account.id,
        claims: async () => ({ sub: account.id, email: account.email, email_verified: false }),
      };
    },
    // `openid` is oidc-provider's own; profile and email come from the claims they release.
    scopes: [SERVICE_SCOPE, 'offline_access'],
    claims: { openid: ['sub'], profile: [], email: ['email', 'email_verified'] },
    responseTypes: ['code'],
    clientAuthMethods: ['none', 'client_secret_basic', 'client_secret_post'],
    pkce: { required: () => true },
    clientDefaults: {
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      id_token_signed_response_alg: 'ES256',
    },
    routes: { ...endpointPaths },
    features: providerFeatures(config, resource, services.fetch),
    // Clients ask for offline_access, but oidc-provider drops it unless prompt=consent was sent
    // (OpenID Connect Core 11); every client allowed the refresh_token grant gets one instead.
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    // Public clients (MCP clients are) must rotate; a reused refresh token revokes its grant.
    rotateRefreshToken: () => true,
    // A grant's tokens live as long as the sign-in session that approved it: signing out
    // ({auth_url}/logout) revokes the grants of the session, so its tokens stop working at once.
    expiresWithSession: async () => true,
    async extraTokenClaims(_ctx, token) {
      return token.kind === 'AccessToken' && token.grantId ? { [GRANT_CLAIM]: token.grantId } : undefined;
    },
    loadExistingGrant: async (ctx) => (await loadExistingGrant(ctx, db)) ?? firstPartyGrant(ctx, resource),
    interactions: { url: (_ctx, interaction) => interactionUrl(config, interaction.uid) },
    // Browser-based MCP clients (the inspector) call the token endpoint across origins.
    clientBasedCORS: () => true,
    renderError: oauthErrorPage,
    // The agent authentication descriptor rides along in the metadata (`descriptor.ts`).
    discovery: { claim_types_supported: ['normal'], agent_auth: agentAuthDescriptor(config) },
    ttl: { ...tokenLifetimes },
    // Whatever oidc-provider fetches (client ID metadata documents, a client's sector identifier)
    // goes through the SSRF-safe fetcher.
    fetch: providerFetch(services.fetch, documents),
    // Read and limited by `providerFetch`; this bounds the normalised document it hands on.
    fetchResponseBodyLimits: { 'client_id metadata document': 2 * documents.max_bytes },
    enabledJWA: { requestObjectSigningAlgValues: [] },
  };
}

/** oidc-provider's features: what this authorization server does, and all it does not. */
function providerFeatures(config: Config, resource: string, fetch: SafeFetch): Configuration['features'] {
  return {
    devInteractions: { enabled: false },
    registration: { enabled: true, initialAccessToken: false },
    clientIdMetadataDocument: clientIdMetadataDocumentFeature(
      config.auth.client_id_metadata_documents,
      fetch,
    ),
    // A client may only revoke its own tokens (RFC 7009 section 2.1).
    revocation: {
      enabled: true,
      allowedPolicy: async (_ctx, client, token) => token.clientId === client.clientId,
    },
    rpInitiatedLogout: {
      enabled: true,
      logoutSource: logoutPage,
      postLogoutSuccessSource: logoutSuccessPage,
    },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => resource,
      useGrantedResource: () => true,
      async getResourceServerInfo(_ctx, indicator) {
        const info = resourceServerInfo(config, indicator);
        if (!info)
          throw new errors.InvalidTarget(
            `tokens are only issued for ${[resource, publicApiResource(config), siteResource(config)].join(', ')}`,
          );
        return info;
      },
    },
    pushedAuthorizationRequests: { enabled: false },
    dPoP: { enabled: false },
    userinfo: { enabled: false },
    introspection: { enabled: false },
    deviceFlow: { enabled: false },
    clientCredentials: { enabled: false },
    backchannelLogout: { enabled: false },
    claimsParameter: { enabled: false },
    requestObjects: { enabled: false },
  };
}

/** Discovery and JWKS answers carry their cache lifetime; server errors and refused grants are logged. */
function observeProvider(provider: Provider, log: Logger): void {
  provider.use(async (ctx, next) => {
    await next();
    const route = (ctx as KoaContextWithOIDC).oidc?.route;
    if (ctx.status === 200 && (route === 'discovery' || route === 'jwks'))
      ctx.set('Cache-Control', METADATA_CACHE_CONTROL);
  });
  provider.on('server_error', (_ctx, err) => log.error({ err }, 'authorization server error'));
  provider.on('grant.error', (_ctx, err) => log.info({ err: err.message }, 'token request refused'));
}

/**
 * The grant this account already gave this client, so a client approved before is not asked again
 * unless it requests scopes beyond it - found through the browser session, or else among the
 * account's stored grants (a new sign-in has a new session).
 */
async function loadExistingGrant(ctx: KoaContextWithOIDC, db: Kysely<Database>) {
  const { provider, session, client, result } = ctx.oidc;
  if (!client || !session) return undefined;
  const known = result?.consent?.grantId ?? session.grantIdFor(client.clientId);
  if (known) return provider.Grant.find(known);
  if (!session.accountId) return undefined;
  const rows = await db
    .selectFrom('oauth_records')
    .select(['id', 'payload'])
    .where('model', '=', 'Grant')
    .where('account_id', '=', session.accountId)
    .execute();
  const mine = rows
    .map((row) => ({ id: row.id, grant: JSON.parse(row.payload) as { clientId?: string; iat?: number } }))
    .filter((row) => row.grant.clientId === client.clientId)
    .sort((a, b) => (b.grant.iat ?? 0) - (a.grant.iat ?? 0));
  for (const row of mine) {
    const grant = await provider.Grant.find(row.id);
    if (grant) return grant;
  }
  return undefined;
}
