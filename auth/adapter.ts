/**
 * oidc-provider storage over kysely, on SQLite and PostgreSQL alike (oidc-provider's adapter
 * contract: docs/README.md "adapter", example `lib/adapters/memory_adapter.js`). Every model lives
 * in `oauth_records`, keyed by (id, model), so any process sharing the database can continue a flow
 * another process started. A row past its expiry is absent to the provider; `sweepOauthRecords`
 * deletes such rows.
 *
 * Secrets at rest: where a model's id is itself the credential (a refresh token, a registration
 * access token, a session cookie...), the row holds only its SHA-256 digest, and the payload
 * neither the id (`jti`, put back from the caller's argument on read) nor another row's secret id.
 * Someone reading the table learns no value they could present. The ids are 126 to 256 random
 * bits, so an unsalted fast digest is enough (as for service keys).
 *
 * Clients: a registered client that no person ever approves expires `UNUSED_CLIENT_TTL_S` after
 * registering; every row stored for it later (a grant, a refresh token) keeps it, and its
 * registration access token, at least as long as that row.
 */
import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Adapter, AdapterPayload } from 'oidc-provider';
import type { Database } from '../db/schema.ts';

/** Models whose rows can be found by grant id, so revoking a grant removes them all. */
const grantable = new Set([
  'AccessToken',
  'AuthorizationCode',
  'RefreshToken',
  'DeviceCode',
  'BackchannelAuthenticationRequest',
]);

/**
 * Models whose id is a bearer secret, stored as its digest. Not hashed: Client and Grant (their
 * ids are public: `client_id`, the `grant_id` claim of access tokens), ReplayDetection (ids of
 * assertions already used), and Interaction, whose id is the path of the sign-in page and sits in
 * its own `returnTo`; its payload loses the session cookie it copies (`session.cookie`).
 */
const secretIds = new Set([
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
]);

/** How long a registered client lives unless a person approves it (docs/guides/authentication/oauth.md). */
export const UNUSED_CLIENT_TTL_S = 24 * 60 * 60;

/** Rows that live as long as their client, absent a lifetime of their own. */
const clientBound = new Set(['Client', 'RegistrationAccessToken']);

export function digestOf(id: string): string {
  return createHash('sha256').update(id).digest('base64url');
}

export class KyselyAdapter implements Adapter {
  readonly #db: Kysely<Database>;
  readonly #model: string;
  readonly #now: () => Date;
  readonly #secret: boolean;

  constructor(db: Kysely<Database>, model: string, now: () => Date = () => new Date()) {
    this.#db = db;
    this.#model = model;
    this.#now = now;
    this.#secret = secretIds.has(model);
  }

  /** The `id` column of a row: the id, or its digest for secret models. */
  #key(id: string): string {
    return this.#secret ? digestOf(id) : id;
  }

  async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
    const now = this.#now().getTime();
    const lifetime = expiresIn || (clientBound.has(this.#model) ? UNUSED_CLIENT_TTL_S : 0);
    const clientId = this.#model === 'Client' ? id : (payload.clientId ?? null);
    const row = {
      id: this.#key(id),
      model: this.#model,
      grant_id: payload.grantId ?? null,
      uid: payload.uid ?? null,
      user_code: payload.userCode ?? null,
      account_id: payload.accountId ?? null,
      client_id: clientId,
      payload: JSON.stringify(this.#atRest(payload)),
      expires_at: lifetime ? new Date(now + lifetime * 1000).toISOString() : null,
      consumed_at: null,
    };
    await this.#db
      .insertInto('oauth_records')
      .values(row)
      .onConflict((oc) =>
        oc.columns(['id', 'model']).doUpdateSet({
          grant_id: row.grant_id,
          uid: row.uid,
          user_code: row.user_code,
          account_id: row.account_id,
          client_id: row.client_id,
          payload: row.payload,
          // A client stored again (its metadata updated) keeps the lifetime it has earned.
          ...(expiresIn || !clientBound.has(this.#model) ? { expires_at: row.expires_at } : {}),
          consumed_at: null,
        }),
      )
      .execute();
    if (clientId !== null && row.expires_at !== null && !clientBound.has(this.#model)) {
      await this.#db
        .updateTable('oauth_records')
        .set({ expires_at: row.expires_at })
        .where('client_id', '=', clientId)
        .where('model', 'in', [...clientBound])
        .where('expires_at', '<', row.expires_at)
        .execute();
    }
  }

  /** The payload as stored: without the secret id, nor the session cookie an Interaction copies. */
  #atRest(payload: AdapterPayload): AdapterPayload {
    const stored: AdapterPayload = { ...payload };
    if (this.#secret) delete stored.jti;
    if (stored.session?.cookie !== undefined) {
      const { cookie: _, ...session } = stored.session;
      stored.session = session;
    }
    return stored;
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    const payload = await this.#findBy('id', this.#key(id));
    return payload && this.#secret ? { ...payload, jti: id } : payload;
  }

  /** Sessions are found by uid only to be read (oidc-provider `Session.findByUid`); no `jti` comes back. */
  findByUid(uid: string): Promise<AdapterPayload | undefined> {
    return this.#findBy('uid', uid);
  }

  findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
    return this.#findBy('user_code', userCode);
  }

  async consume(id: string): Promise<void> {
    await this.#db
      .updateTable('oauth_records')
      .set({ consumed_at: this.#now().toISOString() })
      .where('id', '=', this.#key(id))
      .where('model', '=', this.#model)
      .execute();
  }

  async destroy(id: string): Promise<void> {
    await this.#db
      .deleteFrom('oauth_records')
      .where('id', '=', this.#key(id))
      .where('model', '=', this.#model)
      .execute();
  }

  /** Called on the Grant's own adapter too; every grantable model's rows of that grant go. */
  async revokeByGrantId(grantId: string): Promise<void> {
    await this.#db
      .deleteFrom('oauth_records')
      .where('grant_id', '=', grantId)
      .where('model', 'in', [...grantable])
      .execute();
  }

  async #findBy(column: 'id' | 'uid' | 'user_code', value: string): Promise<AdapterPayload | undefined> {
    // A client's guess (a code, a client_id) with NUL was never stored, and PostgreSQL refuses it.
    if (value.includes('\u0000')) return undefined;
    const row = await this.#db
      .selectFrom('oauth_records')
      .select(['payload', 'expires_at', 'consumed_at'])
      .where(column, '=', value)
      .where('model', '=', this.#model)
      .executeTakeFirst();
    if (!row) return undefined;
    if (row.expires_at !== null && Date.parse(row.expires_at) <= this.#now().getTime()) return undefined;
    const payload = JSON.parse(row.payload) as AdapterPayload;
    return row.consumed_at === null
      ? payload
      : { ...payload, consumed: Math.floor(Date.parse(row.consumed_at) / 1000) };
  }
}

/** Deletes expired rows; returns how many. Run by the housekeeping timer. */
export async function sweepOauthRecords(db: Kysely<Database>, now: Date = new Date()): Promise<number> {
  const result = await db
    .deleteFrom('oauth_records')
    .where('expires_at', '<=', now.toISOString())
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
