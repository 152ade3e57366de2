/**
 * Frozen: never edit a migration that has shipped; add a new one.
 * The marketplace SKUs (issue 12): credits owed back to payers (`marketplace_credits`), the Featured
 * Brand auction (`featured_bids`), the lock rows that decide purchases of a limited placement one at
 * a time (`marketplace_locks`: `featured`, `spotlight`) the 30-day spotlight placements (`spotlights`), embodiment bookings with their history
 * (`embodiment_*`), boost campaigns with the impression reports of ad networks (`boost_*`), and the
 * outbox that delivers bookings to the robot operator and campaigns to ad networks
 * (`marketplace_deliveries`).
 */
import { type Kysely, PostgresAdapter, sql } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations are typed loosely (kysely recommendation)
export async function up(db: Kysely<any>): Promise<void> {
  const pg = db.getExecutor().adapter instanceof PostgresAdapter;
  const ts = pg ? sql`timestamptz` : sql`text`;
  const uuid = pg ? sql`uuid` : sql`text`;

  await db.schema
    .createTable('marketplace_credits')
    .addColumn('id', uuid, (c) => c.primaryKey())
    .addColumn('payer', 'text', (c) => c.notNull())
    .addColumn('amount', 'bigint', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('subject_id', 'text', (c) => c.notNull())
    .addColumn('source_payment_id', uuid, (c) => c.notNull().references('payments.id'))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('transaction_hash', 'text')
    .addColumn('raw_transaction', 'text')
    .addColumn('error', 'text')
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('lease_owner', 'text')
    .addColumn('lease_expires_at', ts)
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .addColumn('paid_at', ts)
    .addUniqueConstraint('marketplace_credits_subject', ['reason', 'subject_id'])
    .execute();
  await db.schema
    .createIndex('marketplace_credits_payer')
    .on('marketplace_credits')
    .columns(['payer', 'created_at'])
    .execute();
  await db.schema
    .createIndex('marketplace_credits_status')
    .on('marketplace_credits')
    .columns(['status', 'updated_at'])
    .execute();

  await db.schema
    .createTable('marketplace_locks')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .execute();
  for (const id of ['featured', 'spotlight']) {
    await db
      .insertInto('marketplace_locks')
      .values({ id, updated_at: new Date(0).toISOString() })
      .execute();
  }

  await db.schema
    .createTable('featured_bids')
    .addColumn('id', uuid, (c) => c.primaryKey())
    .addColumn('payment_id', uuid, (c) => c.notNull().unique().references('payments.id'))
    .addColumn('payer', 'text', (c) => c.notNull())
    .addColumn('domain', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('blurb', 'text')
    .addColumn('bid', 'bigint', (c) => c.notNull())
    .addColumn('days', 'integer', (c) => c.notNull())
    .addColumn('amount', 'bigint', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('holds_from', ts, (c) => c.notNull())
    .addColumn('holds_until', ts, (c) => c.notNull())
    .addColumn('ended_at', ts)
    .addColumn('credited', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', ts, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('featured_bids_status')
    .on('featured_bids')
    .columns(['status', 'holds_until'])
    .execute();
  await db.schema.createIndex('featured_bids_created').on('featured_bids').column('created_at').execute();

  await db.schema
    .createTable('spotlights')
    .addColumn('id', uuid, (c) => c.primaryKey())
    .addColumn('payment_id', uuid, (c) => c.notNull().unique().references('payments.id'))
    .addColumn('domain', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('blurb', 'text')
    .addColumn('agent_handle', 'text')
    .addColumn('business_name', 'text')
    .addColumn('scan_id', uuid)
    .addColumn('starts_at', ts, (c) => c.notNull())
    .addColumn('ends_at', ts, (c) => c.notNull())
    .addColumn('created_at', ts, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('spotlights_ends').on('spotlights').column('ends_at').execute();

  await db.schema
    .createTable('embodiment_bookings')
    .addColumn('id', uuid, (c) => c.primaryKey())
    .addColumn('payment_id', uuid, (c) => c.notNull().unique().references('payments.id'))
    .addColumn('payer', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.notNull())
    .addColumn('contact', 'text', (c) => c.notNull())
    .addColumn('agent_handle', 'text', (c) => c.notNull())
    .addColumn('duration_days', 'integer', (c) => c.notNull())
    .addColumn('deposit', 'bigint', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('quote_amount', 'bigint')
    .addColumn('quote_valid_until', ts)
    .addColumn('scheduled_for', ts)
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('embodiment_events')
    .addColumn('id', uuid, (c) => c.primaryKey())
    .addColumn('booking_id', uuid, (c) =>
      c.notNull().references('embodiment_bookings.id').onDelete('cascade'),
    )
    .addColumn('from_status', 'text')
    .addColumn('to_status', 'text', (c) => c.notNull())
    .addColumn('note', 'text')
    .addColumn('at', ts, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('embodiment_events_booking')
    .on('embodiment_events')
    .columns(['booking_id', 'at'])
    .execute();
  await db.schema
    .createTable('boost_campaigns')
    .addColumn('id', uuid, (c) => c.primaryKey())
    .addColumn('account_id', uuid, (c) => c.references('accounts.id').onDelete('set null'))
    .addColumn('payment_id', uuid, (c) => c.unique().references('payments.id'))
    .addColumn('payer', 'text')
    .addColumn('token_hash', 'text', (c) => c.notNull())
    .addColumn('domain', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('note', 'text')
    .addColumn('budget', 'bigint', (c) => c.notNull())
    .addColumn('spent', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('impressions', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('clicks', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .addColumn('ended_at', ts)
    .execute();
  await db.schema
    .createIndex('boost_campaigns_status')
    .on('boost_campaigns')
    .columns(['status', 'created_at'])
    .execute();
  await db.schema
    .createTable('boost_reports')
    .addColumn('campaign_id', uuid, (c) => c.notNull().references('boost_campaigns.id').onDelete('cascade'))
    .addColumn('network', 'text', (c) => c.notNull())
    .addColumn('report_id', 'text', (c) => c.notNull())
    .addColumn('impressions', 'bigint', (c) => c.notNull())
    .addColumn('charged', 'bigint', (c) => c.notNull())
    .addColumn('at', ts, (c) => c.notNull())
    .addPrimaryKeyConstraint('boost_reports_pk', ['campaign_id', 'network', 'report_id'])
    .execute();

  await db.schema
    .createTable('marketplace_deliveries')
    .addColumn('id', uuid, (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('subject_id', uuid, (c) => c.notNull())
    .addColumn('network', 'text')
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
    .createIndex('marketplace_deliveries_due')
    .on('marketplace_deliveries')
    .columns(['state', 'next_attempt_at'])
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  for (const table of [
    'marketplace_deliveries',
    'boost_reports',
    'boost_campaigns',
    'embodiment_events',
    'embodiment_bookings',
    'spotlights',
    'featured_bids',
    'marketplace_locks',
    'marketplace_credits',
  ]) {
    await db.schema.dropTable(table).execute();
  }
}
