/**
 * oidc-provider storage over kysely, on SQLite and PostgreSQL alike (oidc-provider's adapter
 * contract: docs/README.md "adapter", example `lib/adapters/memory_adapter.js`). Every model lives
 * in `oauth_records`, keyed by (id, model), so any process sharing the database can continue a flow
 * another process started. A row past its expiry is absent to the provider; `sweepOauthRecords`
 * deletes such rows.
 */
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

export class KyselyAdapter implements Adapter {
  readonly #db: Kysely<Database>;
  readonly #model: string;
  readonly #now: () => Date;

  constructor(db: Kysely<Database>, model: string, now: () => Date = () => new Date()) {
    this.#db = db;
    this.#model = model;
    this.#now = now;
  }

  async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
    const row = {
      id,
      model: this.#model,
      grant_id: payload.grantId ?? null,
      uid: payload.uid ?? null,
      user_code: payload.userCode ?? null,
      account_id: payload.accountId ?? null,
      payload: JSON.stringify(payload),
      expires_at: expiresIn ? new Date(this.#now().getTime() + expiresIn * 1000).toISOString() : null,
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
          payload: row.payload,
          expires_at: row.expires_at,
          consumed_at: null,
        }),
      )
      .execute();
  }

  find(id: string): Promise<AdapterPayload | undefined> {
    return this.#findBy('id', id);
  }

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
      .where('id', '=', id)
      .where('model', '=', this.#model)
      .execute();
  }

  async destroy(id: string): Promise<void> {
    await this.#db
      .deleteFrom('oauth_records')
      .where('id', '=', id)
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
