/**
 * Frozen: never edit a migration that has shipped; add a new one.
 * Anonymous sessions (issue 4): an agent without an account signs up at `{auth_url}/signup` and
 * gets a bearer token good for a limited number of scans; a person later claims the session at
 * `{site_url}/register` and its scans move to their account. Only SHA-256 digests of the token and
 * of the claim code are stored. Scans remember the session that requested them.
 */
import { type Kysely, PostgresAdapter, sql } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations are typed loosely (kysely recommendation)
export async function up(db: Kysely<any>): Promise<void> {
  const pg = db.getExecutor().adapter instanceof PostgresAdapter;
  const ts = pg ? sql`timestamptz` : sql`text`;
  const uuid = pg ? sql`uuid` : sql`text`;

  await db.schema
    .createTable('anonymous_sessions')
    .addColumn('id', uuid, (c) => c.primaryKey())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('claim_code_hash', 'text', (c) => c.notNull().unique())
    .addColumn('scan_limit', 'integer', (c) => c.notNull())
    .addColumn('scans_used', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('expires_at', ts, (c) => c.notNull())
    .addColumn('claimed_at', ts)
    .addColumn('claimed_by', uuid, (c) => c.references('accounts.id').onDelete('set null'))
    .execute();
  await db.schema
    .createIndex('anonymous_sessions_expires')
    .on('anonymous_sessions')
    .column('expires_at')
    .execute();

  await db.schema
    .alterTable('scans')
    .addColumn('anonymous_session_id', uuid, (c) =>
      c.references('anonymous_sessions.id').onDelete('set null'),
    )
    .execute();
  await db.schema.createIndex('scans_anonymous_session').on('scans').column('anonymous_session_id').execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('scans_anonymous_session').execute();
  await db.schema.alterTable('scans').dropColumn('anonymous_session_id').execute();
  await db.schema.dropTable('anonymous_sessions').execute();
}
