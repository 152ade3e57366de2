/**
 * Row-level security for owner reads (issue 4, section 3): everything the owner-scoped MCP tools
 * read goes through `withOwnerScope`, so a query that forgets its account filter cannot return
 * another account's rows.
 *
 * - PostgreSQL: one read-only transaction that switches to the NOLOGIN role
 *   `agent_service_owner_reader` (`SET LOCAL ROLE`) and names the account in the transaction-local
 *   setting `app.account_id` (`set_config(..., true)`). The policies of migration
 *   `2026-11-21T1610Z_row_level_security` then hide every row of other accounts, whatever the query.
 * - SQLite has no roles or policies: the guarantee is that `OwnerScope` is the only way in. It
 *   hands out query builders that already carry the account predicate and does not expose the
 *   database itself. On PostgreSQL the same builders run, so both dialects answer alike and the
 *   policies are a second, independent line.
 */
import { type Kysely, sql } from 'kysely';
import type { Dialect } from './database.ts';
import type { Database } from './schema.ts';

/** The role owner reads run as on PostgreSQL (created by the row-level security migration). */
export const OWNER_READER_ROLE = 'agent_service_owner_reader';

/** Query builders restricted to one account's rows. */
export class OwnerScope {
  readonly accountId: string;
  readonly #db: Kysely<Database>;

  constructor(db: Kysely<Database>, accountId: string) {
    this.#db = db;
    this.accountId = accountId;
  }

  /** The account's sites. */
  sites() {
    return this.#db.selectFrom('sites').where('sites.account_id', '=', this.accountId);
  }

  /**
   * A feature's reads that take the account and keep only its rows, bound to this scope: traffic's
   * rollups (`features/traffic/rollups.ts`, the reads behind GET /pixel and GET /site-stats). The
   * reader is the feature's, so the data layer imports no feature; it must filter by the account
   * it is given, as the builders above do (on PostgreSQL the policies hold whatever it reads).
   */
  reads<R>(reader: (db: Kysely<Database>, accountId: string) => R): R {
    return reader(this.#db, this.accountId);
  }

  /** Scans the account requested (anonymous scans have no account and are never included). */
  scans() {
    return this.#db.selectFrom('scans').where('scans.account_id', '=', this.accountId);
  }

  /** Findings of the account's scans, joined to their scan. */
  findings() {
    return this.#db
      .selectFrom('scan_findings')
      .innerJoin('scans', 'scans.id', 'scan_findings.scan_id')
      .where('scans.account_id', '=', this.accountId);
  }
}

/**
 * Runs `fn` with reads scoped to `accountId`. On PostgreSQL the whole of `fn` runs in one
 * read-only transaction as the owner reader role; the setting and the role end with it, so a
 * pooled connection never carries them into another request.
 */
export async function withOwnerScope<T>(
  database: { db: Kysely<Database>; dialect: Dialect },
  accountId: string,
  fn: (scope: OwnerScope) => Promise<T>,
): Promise<T> {
  if (database.dialect === 'sqlite') return fn(new OwnerScope(database.db, accountId));
  return database.db.transaction().execute(async (trx) => {
    await sql`set transaction read only`.execute(trx);
    await sql.raw(`set local role ${OWNER_READER_ROLE}`).execute(trx);
    await sql`select set_config('app.account_id', ${accountId}, true)`.execute(trx);
    return fn(new OwnerScope(trx, accountId));
  });
}
