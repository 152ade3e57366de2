/**
 * Frozen: never edit a migration that has shipped; add a new one.
 * Authorization server hardening: no bearer secret in clear in `oauth_records`, and registered
 * clients that expire (`auth/adapter.ts`).
 *
 * - `client_id`: the client a row belongs to (a Client row: its own id), so a client's lifetime can
 *   be extended with its registration access token's.
 * - Rows of models whose id is a bearer secret get the SHA-256 digest (base64url) of the id as id,
 *   and lose the id from their payload (`jti`); Interaction payloads lose the session cookie they
 *   copied (`session.cookie`). Tokens and sessions issued before keep working: the adapter looks
 *   them up by digest. Expired rows are deleted first rather than converted.
 * - Clients and registration access tokens stored without an expiry get one 30 days out (the
 *   longest lifetime of any token or session when this was written): every token a client holds
 *   ends before then, and a client still in use is kept longer as it gets new ones.
 *
 * Every process must run the code of this version once it has run: an older process would store
 * secret ids in clear, which the new code does not find.
 */
import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';

const SECRET_ID_MODELS = [
  'AccessToken',
  'AuthorizationCode',
  'RefreshToken',
  'ClientCredentials',
  'DeviceCode',
  'BackchannelAuthenticationRequest',
  'InitialAccessToken',
  'RegistrationAccessToken',
  'PushedAuthorizationRequest',
  'Session',
];
const EXPIRY_FOR_EXISTING_CLIENTS_MS = 30 * 24 * 60 * 60 * 1000;

// biome-ignore lint/suspicious/noExplicitAny: migrations are typed loosely (kysely recommendation)
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('oauth_records').addColumn('client_id', 'text').execute();
  await db.schema.createIndex('oauth_records_client').on('oauth_records').column('client_id').execute();

  const now = new Date();
  await db.deleteFrom('oauth_records').where('expires_at', '<=', now.toISOString()).execute();

  const rows = (await db.selectFrom('oauth_records').select(['id', 'model', 'payload']).execute()) as {
    id: string;
    model: string;
    payload: unknown;
  }[];
  for (const row of rows) {
    const payload = (typeof row.payload === 'string' ? JSON.parse(row.payload) : row.payload) as Record<
      string,
      unknown
    >;
    const secret = SECRET_ID_MODELS.includes(row.model);
    if (secret) delete payload.jti;
    const session = payload.session as Record<string, unknown> | undefined;
    if (session && typeof session === 'object') delete session.cookie;
    const clientId =
      row.model === 'Client' ? row.id : typeof payload.clientId === 'string' ? payload.clientId : null;
    await db
      .updateTable('oauth_records')
      .set({
        id: secret ? createHash('sha256').update(row.id).digest('base64url') : row.id,
        payload: JSON.stringify(payload),
        client_id: clientId,
      })
      .where('id', '=', row.id)
      .where('model', '=', row.model)
      .execute();
  }

  await db
    .updateTable('oauth_records')
    .set({ expires_at: new Date(now.getTime() + EXPIRY_FOR_EXISTING_CLIENTS_MS).toISOString() })
    .where('model', 'in', ['Client', 'RegistrationAccessToken'])
    .where('expires_at', 'is', null)
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  // Digests cannot be turned back into ids: the rows of secret-id models are dropped (their
  // clients sign in again); the rest stays as it is.
  await db.deleteFrom('oauth_records').where('model', 'in', SECRET_ID_MODELS).execute();
  await db.schema.dropIndex('oauth_records_client').execute();
  await db.schema.alterTable('oauth_records').dropColumn('client_id').execute();
}
