/**
 * The OAuth clients an account has approved - one oidc-provider Grant each - as the owner sees
 * them (the dashboard, `GET {public_api_url}/account/clients`), and the revocation of one of them.
 * Revoking a grant deletes it with every code and refresh token issued under it; its access
 * tokens are refused from then on by every resource server, which checks that a token's grant
 * still exists (`bearer.ts`).
 */
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.ts';
import { DASHBOARD_CLIENT_ID } from './first-party.ts';

export interface ConnectedClient {
  grant_id: string;
  client_id: string;
  client_name: string | null;
  /** Scopes approved, per resource (RFC 8707 indicator) and for OpenID Connect. */
  scopes: string[];
  resources: string[];
  approved_at: string;
  expires_at: string | null;
  /** The service's own owner dashboard (ends on its sign-out as well). */
  first_party: boolean;
}

interface GrantPayload {
  clientId?: string;
  iat?: number;
  openid?: { scope?: string };
  resources?: Record<string, string>;
}

/** The account's grants in force, newest approval first, with their clients' registered names. */
export async function listConnectedClients(
  db: Kysely<Database>,
  accountId: string,
  now: Date,
): Promise<ConnectedClient[]> {
  const grants = await db
    .selectFrom('oauth_records')
    .select(['id', 'payload', 'expires_at'])
    .where('model', '=', 'Grant')
    .where('account_id', '=', accountId)
    .execute();
  const live = grants
    .filter((g) => g.expires_at === null || Date.parse(g.expires_at) > now.getTime())
    .map((g) => ({ ...g, grant: JSON.parse(g.payload) as GrantPayload }));
  const clientIds = [...new Set(live.map((g) => g.grant.clientId).filter((id) => id !== undefined))];
  const clients =
    clientIds.length === 0
      ? []
      : await db
          .selectFrom('oauth_records')
          .select(['id', 'payload'])
          .where('model', '=', 'Client')
          .where('id', 'in', clientIds)
          .execute();
  const names = new Map(
    clients.map((c) => [c.id, (JSON.parse(c.payload) as { client_name?: string }).client_name ?? null]),
  );
  names.set(DASHBOARD_CLIENT_ID, 'Owner dashboard');
  return live
    .map(({ id, grant, expires_at }) => {
      const resources = grant.resources ?? {};
      const scopes = new Set<string>();
      for (const scope of Object.values(resources).join(' ').split(' ')) if (scope) scopes.add(scope);
      for (const scope of (grant.openid?.scope ?? '').split(' ')) if (scope) scopes.add(scope);
      const clientId = grant.clientId ?? '';
      return {
        grant_id: id,
        client_id: clientId,
        client_name: names.get(clientId) ?? null,
        scopes: [...scopes].sort(),
        resources: Object.keys(resources).sort(),
        approved_at: new Date((grant.iat ?? 0) * 1000).toISOString(),
        expires_at,
        first_party: clientId === DASHBOARD_CLIENT_ID,
      };
    })
    .sort((a, b) => b.approved_at.localeCompare(a.approved_at) || a.grant_id.localeCompare(b.grant_id));
}

/**
 * Deletes one grant of the account with everything issued under it; false when the account has
 * no such grant (another account's grant id changes nothing).
 */
export async function revokeGrant(
  db: Kysely<Database>,
  accountId: string,
  grantId: string,
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const deleted = await trx
      .deleteFrom('oauth_records')
      .where('model', '=', 'Grant')
      .where('id', '=', grantId)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    if (Number(deleted.numDeletedRows) === 0) return false;
    await trx.deleteFrom('oauth_records').where('grant_id', '=', grantId).execute();
    return true;
  });
}
