/**
 * First-party clients of the authorization server: the owner dashboard at `{site_url}/dashboard`.
 *
 * The dashboard signs owners in the way every other client does - an authorization code request
 * with PKCE S256 for the owner-scoped resource, the same sign-in page and browser session - so it
 * reads with exactly the rights an MCP client approved by the owner has, and revoking its grant
 * ends it. It is a confidential client declared in oidc-provider's static `clients` (its secret
 * generated on first start and shared by every process through the database), and the service's
 * own: the owner is not asked to approve it on a consent screen (oidc-provider's documented way,
 * a grant made in `loadExistingGrant`).
 */
import type { Kysely } from 'kysely';
import type { ClientMetadata, KoaContextWithOIDC } from 'oidc-provider';
import type { Database } from '../db/schema.ts';
import type { Config } from '../servers/config.ts';
import { type SecretBox, serviceSecret } from '../servers/secrets.ts';
import { SERVICE_SCOPE } from './scopes.ts';

export const DASHBOARD_CLIENT_ID = 'agent-service-dashboard';

/** Where the authorization server sends the owner back to, with the code. */
export const dashboardRedirectUri = (config: Config): string => `${config.site_url}/dashboard/callback`;

/** What the dashboard asks for: the owner scope of the owner-scoped resource, nothing else. */
export const DASHBOARD_SCOPE = SERVICE_SCOPE;

export async function dashboardClientSecret(db: Kysely<Database>, box: SecretBox): Promise<string> {
  return serviceSecret(db, box, 'dashboard_client_secret');
}

/** The dashboard's registration, as oidc-provider's static `clients` entry. */
export function dashboardClient(config: Config, secret: string): ClientMetadata {
  return {
    client_id: DASHBOARD_CLIENT_ID,
    client_secret: secret,
    client_name: 'Owner dashboard',
    client_uri: `${config.site_url}/dashboard`,
    redirect_uris: [dashboardRedirectUri(config)],
    grant_types: ['authorization_code'],
    response_types: ['code'],
    token_endpoint_auth_method: 'client_secret_basic',
  };
}

/**
 * The grant of a first-party client, made when the signed-in owner has none for it yet: the owner
 * scope on the resource it asked for. Any other client gets undefined (its owner decides on the
 * consent screen).
 */
export async function firstPartyGrant(ctx: KoaContextWithOIDC, ownerResource: string) {
  const { provider, session, client } = ctx.oidc;
  if (client?.clientId !== DASHBOARD_CLIENT_ID || !session?.accountId) return undefined;
  const grant = new provider.Grant({ clientId: client.clientId, accountId: session.accountId });
  // The service scope is one of the provider's own scopes as well as the resource's: both are granted.
  grant.addOIDCScope(DASHBOARD_SCOPE);
  grant.addResourceScope(ownerResource, DASHBOARD_SCOPE);
  await grant.save();
  return grant;
}
