/**
 * Frozen: never edit a migration that has shipped; add a new one.
 * The paid catalog's snapshot (`GET {public_api_url}/catalog`, issue 9) carries `updated`, the time
 * its content last changed: one row per content digest seen, with the time it became current, so
 * every process and every restart serving the same content publishes the same time.
 */
import { type Kysely, PostgresAdapter, sql } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations are typed loosely (kysely recommendation)
export async function up(db: Kysely<any>): Promise<void> {
  const pg = db.getExecutor().adapter instanceof PostgresAdapter;
  const ts = pg ? sql`timestamptz` : sql`text`;
  await db.schema
    .createTable('catalog_snapshots')
    .addColumn('digest', 'text', (c) => c.primaryKey())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('catalog_snapshots').execute();
}
