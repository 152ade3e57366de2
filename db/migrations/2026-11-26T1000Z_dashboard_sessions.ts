/**
 * Frozen: never edit a migration that has shipped; add a new one.
 * Sign-ins to the owner dashboard (issue 14 section 2): the dashboard is a first-party OAuth client
 * of the embedded authorization server, and each sign-in keeps the grant it was approved under, so
 * revoking that grant (or every authorization of the account) ends the dashboard session too. Only
 * the SHA-256 digest of the session cookie is stored.
 */
import { type Kysely, PostgresAdapter, sql } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations are typed loosely (kysely recommendation)
export async function up(db: Kysely<any>): Promise<void> {
  const pg = db.getExecutor().adapter instanceof PostgresAdapter;
  const ts = pg ? sql`timestamptz` : sql`text`;
  const uuid = pg ? sql`uuid` : sql`text`;

  await db.schema
    .createTable('dashboard_sessions')
    .addColumn('id_hash', 'text', (c) => c.primaryKey())
    .addColumn('account_id', uuid, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('grant_id', 'text', (c) => c.notNull())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('expires_at', ts, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('dashboard_sessions_expires')
    .on('dashboard_sessions')
    .column('expires_at')
    .execute();
  await db.schema
    .createIndex('dashboard_sessions_account')
    .on('dashboard_sessions')
    .column('account_id')
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('dashboard_sessions').execute();
}
