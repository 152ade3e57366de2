/**
 * Frozen: never edit a migration that has shipped; add a new one.
 * Agent-versus-human traffic: raw events (kept `traffic.raw_retention_days`) and the rollups every
 * read is served from, updated in the transaction that inserts each batch of events.
 * No foreign key to `sites`: the raw table is the highest-volume write of the service, and a
 * removed site's rows age out with retention.
 */
import { type Kysely, PostgresAdapter, sql } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations are typed loosely (kysely recommendation)
export async function up(db: Kysely<any>): Promise<void> {
  const pg = db.getExecutor().adapter instanceof PostgresAdapter;
  const ts = pg ? sql`timestamptz` : sql`text`;
  const uuid = pg ? sql`uuid` : sql`text`;

  await db.schema
    .createTable('traffic_events')
    .addColumn('id', pg ? sql`bigserial` : sql`integer`, (c) => c.primaryKey())
    .addColumn('site_id', uuid, (c) => c.notNull())
    .addColumn('occurred_at', ts, (c) => c.notNull())
    .addColumn('received_at', ts, (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('category', 'text', (c) => c.notNull())
    .addColumn('agent', 'text')
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('referrer_host', 'text')
    .addColumn('status', 'integer')
    .addColumn('ip_prefix', 'text')
    .addColumn('user_agent', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('traffic_events_occurred').on('traffic_events').column('occurred_at').execute();

  await db.schema
    .createTable('traffic_daily')
    .addColumn('site_id', uuid, (c) => c.notNull())
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('category', 'text', (c) => c.notNull())
    .addColumn('agent', 'text', (c) => c.notNull())
    .addColumn('operator', 'text')
    .addColumn('events', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('traffic_daily_pk', ['site_id', 'day', 'category', 'agent'])
    .execute();

  await db.schema
    .createTable('traffic_pages_daily')
    .addColumn('site_id', uuid, (c) => c.notNull())
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('category', 'text', (c) => c.notNull())
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('events', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('traffic_pages_daily_pk', ['site_id', 'day', 'category', 'path'])
    .execute();

  await db.schema
    .createTable('traffic_hourly')
    .addColumn('site_id', uuid, (c) => c.notNull())
    .addColumn('hour', 'text', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('events', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('traffic_hourly_pk', ['site_id', 'hour', 'source'])
    .execute();

  await db.schema
    .createTable('traffic_site_sources')
    .addColumn('site_id', uuid, (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('first_event_at', ts, (c) => c.notNull())
    .addColumn('last_event_at', ts, (c) => c.notNull())
    .addColumn('events', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('traffic_site_sources_pk', ['site_id', 'source'])
    .execute();

  await db.schema
    .createTable('traffic_network_daily')
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('category', 'text', (c) => c.notNull())
    .addColumn('agent', 'text', (c) => c.notNull())
    .addColumn('operator', 'text')
    .addColumn('events', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('traffic_network_daily_pk', ['day', 'category', 'agent'])
    .execute();

  await db.schema
    .createTable('traffic_agent_sites')
    .addColumn('agent', 'text', (c) => c.notNull())
    .addColumn('site_id', uuid, (c) => c.notNull())
    .addColumn('first_seen_at', ts, (c) => c.notNull())
    .addColumn('last_seen_at', ts, (c) => c.notNull())
    .addPrimaryKeyConstraint('traffic_agent_sites_pk', ['agent', 'site_id'])
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  for (const table of [
    'traffic_agent_sites',
    'traffic_network_daily',
    'traffic_site_sources',
    'traffic_hourly',
    'traffic_pages_daily',
    'traffic_daily',
    'traffic_events',
  ]) {
    await db.schema.dropTable(table).execute();
  }
}
