/**
 * Frozen: never edit a migration that has shipped; add a new one.
 * Channels found on brands' own sites (issue 29 part 1): each domain's discovery run - when it ran,
 * what it concluded, when it is due again, and the lease one process holds while it runs
 * (`brand_discoveries`); the channels it found with their evidence (`discovered_channels`, one row
 * per domain, kind and address); and channels a delivery found not to work (`channel_failures`),
 * kept apart so a refresh that finds the same channel again does not forget the failure.
 */
import { type Kysely, PostgresAdapter, sql } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations are typed loosely (kysely recommendation)
export async function up(db: Kysely<any>): Promise<void> {
  // Timestamps, JSON and ids in PostgreSQL's own types; text on SQLite (db/schema.ts conventions).
  const [ts, json, uuid] =
    db.getExecutor().adapter instanceof PostgresAdapter
      ? [sql`timestamptz`, sql`jsonb`, sql`uuid`]
      : [sql`text`, sql`text`, sql`text`];

  await db.schema
    .createTable('brand_discoveries')
    .addColumn('domain', 'text', (c) => c.primaryKey())
    .addColumn('outcome', 'text')
    .addColumn('report', json)
    .addColumn('started_at', ts)
    .addColumn('finished_at', ts)
    .addColumn('expires_at', ts)
    .addColumn('refresh_reason', 'text')
    .addColumn('lease_owner', 'text')
    .addColumn('lease_expires_at', ts)
    .execute();

  await db.schema
    .createTable('discovered_channels')
    .addColumn('id', uuid, (c) => c.primaryKey())
    .addColumn('domain', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('address', 'text', (c) => c.notNull())
    .addColumn('detail', json, (c) => c.notNull())
    .addColumn('source_url', 'text', (c) => c.notNull())
    .addColumn('found_by', 'text', (c) => c.notNull())
    .addColumn('found_at', ts, (c) => c.notNull())
    .addColumn('seen_at', ts, (c) => c.notNull())
    .addUniqueConstraint('discovered_channels_key', ['domain', 'kind', 'address'])
    .execute();

  await db.schema
    .createTable('channel_failures')
    .addColumn('domain', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('address', 'text', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('failed_at', ts, (c) => c.notNull())
    .addColumn('failed_until', ts, (c) => c.notNull())
    .addPrimaryKeyConstraint('channel_failures_pk', ['domain', 'kind', 'address'])
    .execute();
  await db.schema
    .createIndex('channel_failures_until')
    .on('channel_failures')
    .column('failed_until')
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['channel_failures', 'discovered_channels', 'brand_discoveries'])
    await db.schema.dropTable(table).execute();
}
