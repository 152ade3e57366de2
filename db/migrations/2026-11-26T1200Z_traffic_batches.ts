/**
 * Frozen: never edit a migration that has shipped; add a new one.
 * Ids of the traffic ingestion batches written (`features/traffic/ingest.ts`): a batch whose
 * COMMIT succeeded although the connection was lost before its answer (a PostgreSQL connection
 * cut) is retried with the same id, and the id already here tells it is written. Kept a day.
 */
import { type Kysely, PostgresAdapter, sql } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations are typed loosely (kysely recommendation)
export async function up(db: Kysely<any>): Promise<void> {
  const pg = db.getExecutor().adapter instanceof PostgresAdapter;
  const ts = pg ? sql`timestamptz` : sql`text`;
  await db.schema
    .createTable('traffic_batches')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('written_at', ts, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('traffic_batches_written').on('traffic_batches').column('written_at').execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('traffic_batches').execute();
}
