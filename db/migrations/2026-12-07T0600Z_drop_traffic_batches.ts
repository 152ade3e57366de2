/**
 * Frozen: never edit a migration that has shipped; add a new one.
 * Drops `traffic_batches` (migration 2026-11-26T1200Z_traffic_batches): the ids of traffic
 * ingestion batches that versions retrying acknowledged beacon hits after a lost answer recorded
 * for a day. No version writes it any more - every caller waits for its own write, and a failed
 * one is answered 503, never retried - and what earlier versions wrote was only ever needed for a day.
 */
import type { Kysely } from 'kysely';
import { columnTypes } from '../column-types.ts';

// biome-ignore lint/suspicious/noExplicitAny: migrations are typed loosely (kysely recommendation)
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('traffic_batches').ifExists().execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  const { ts } = columnTypes(db);
  await db.schema
    .createTable('traffic_batches')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('written_at', ts, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('traffic_batches_written').on('traffic_batches').column('written_at').execute();
}
