/**
 * Frozen: never edit a migration that has shipped; add a new one.
 * Surface A storage: brand channels, return requests and their history, the delivery outbox,
 * idempotency keys, and the service's own generated secrets.
 */
import { type Kysely, PostgresAdapter, sql } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations are typed loosely (kysely recommendation)
export async function up(db: Kysely<any>): Promise<void> {
  const pg = db.getExecutor().adapter instanceof PostgresAdapter;
  const ts = pg ? sql`timestamptz` : sql`text`;
  const json = pg ? sql`jsonb` : sql`text`;
  const uuid = pg ? sql`uuid` : sql`text`;

  await db.schema
    .createTable('service_secrets')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('created_at', ts, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('brand_channels')
    .addColumn('brand_domain', 'text', (c) => c.primaryKey())
    .addColumn('webhook_url', 'text')
    .addColumn('webhook_secret', 'text')
    .addColumn('email', 'text')
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('return_requests')
    .addColumn('id', uuid, (c) => c.primaryKey())
    .addColumn('brand_domain', 'text', (c) => c.notNull())
    .addColumn('brand_name', 'text')
    .addColumn('requester_name', 'text', (c) => c.notNull())
    .addColumn('contact', 'text', (c) => c.notNull())
    .addColumn('contact_kind', 'text', (c) => c.notNull())
    .addColumn('order_number', 'text')
    .addColumn('card_last4', 'text')
    .addColumn('purchase_date', 'text')
    .addColumn('amount_cents', 'bigint')
    .addColumn('currency', 'text')
    .addColumn('message', 'text')
    .addColumn('agent_id', 'text')
    .addColumn('protocol', 'text', (c) => c.notNull())
    .addColumn('callback_url', 'text')
    .addColumn('approval', json)
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('return_requests_brand_status')
    .on('return_requests')
    .columns(['brand_domain', 'status'])
    .execute();

  await db.schema
    .createTable('return_events')
    .addColumn('id', uuid, (c) => c.primaryKey())
    .addColumn('request_id', uuid, (c) => c.notNull().references('return_requests.id').onDelete('cascade'))
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('from_status', 'text')
    .addColumn('to_status', 'text', (c) => c.notNull())
    .addColumn('actor', 'text', (c) => c.notNull())
    .addColumn('note', 'text')
    .addColumn('at', ts, (c) => c.notNull())
    .addUniqueConstraint('return_events_request_seq', ['request_id', 'seq'])
    .execute();

  await db.schema
    .createTable('deliveries')
    .addColumn('id', uuid, (c) => c.primaryKey())
    .addColumn('request_id', uuid, (c) => c.notNull().references('return_requests.id').onDelete('cascade'))
    .addColumn('channel', 'text', (c) => c.notNull())
    .addColumn('target', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', ts, (c) => c.notNull())
    .addColumn('lease_owner', 'text')
    .addColumn('lease_expires_at', ts)
    .addColumn('last_error', 'text')
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('delivered_at', ts)
    .execute();
  await db.schema
    .createIndex('deliveries_due')
    .on('deliveries')
    .columns(['state', 'next_attempt_at'])
    .execute();
  await db.schema.createIndex('deliveries_request').on('deliveries').column('request_id').execute();

  await db.schema
    .createTable('idempotency_keys')
    .addColumn('operation', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('fingerprint', 'text', (c) => c.notNull())
    .addColumn('response', json, (c) => c.notNull())
    .addColumn('created_at', ts, (c) => c.notNull())
    .addPrimaryKeyConstraint('idempotency_keys_pk', ['operation', 'key'])
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  for (const table of [
    'idempotency_keys',
    'deliveries',
    'return_events',
    'return_requests',
    'brand_channels',
    'service_secrets',
  ]) {
    await db.schema.dropTable(table).execute();
  }
}
