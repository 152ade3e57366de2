/**
 * Frozen: never edit a migration that has shipped; add a new one.
 * Security events (issue 11 section 3, CAEP over the Shared Signals Framework): Security Event
 * Tokens received from trusted transmitters (`security_event_receipts`, one row per issuer and
 * `jti`, so a SET takes effect once), the claims their token-claims-change events reported
 * (`account_event_claims`), and our own transmitter: receivers' streams (`ssf_streams`) and the
 * outbox of signed SETs pushed to them (`ssf_deliveries`).
 */
import { type Kysely, PostgresAdapter, sql } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations are typed loosely (kysely recommendation)
export async function up(db: Kysely<any>): Promise<void> {
  const pg = db.getExecutor().adapter instanceof PostgresAdapter;
  const ts = pg ? sql`timestamptz` : sql`text`;
  const json = pg ? sql`jsonb` : sql`text`;
  const uuid = pg ? sql`uuid` : sql`text`;

  await db.schema
    .createTable('security_event_receipts')
    .addColumn('issuer', 'text', (c) => c.notNull())
    .addColumn('jti', 'text', (c) => c.notNull())
    .addColumn('digest', 'text', (c) => c.notNull())
    .addColumn('event_type', 'text', (c) => c.notNull())
    .addColumn('account_id', uuid, (c) => c.references('accounts.id').onDelete('set null'))
    .addColumn('received_at', ts, (c) => c.notNull())
    .addPrimaryKeyConstraint('security_event_receipts_pk', ['issuer', 'jti'])
    .execute();
  await db.schema
    .createIndex('security_event_receipts_received')
    .on('security_event_receipts')
    .column('received_at')
    .execute();

  await db.schema
    .createTable('account_event_claims')
    .addColumn('account_id', uuid, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('issuer', 'text', (c) => c.notNull())
    .addColumn('claims', json, (c) => c.notNull())
    .addColumn('changed_at', ts, (c) => c.notNull())
    .addPrimaryKeyConstraint('account_event_claims_pk', ['account_id', 'issuer'])
    .execute();

  await db.schema
    .createTable('ssf_streams')
    .addColumn('id', uuid, (c) => c.primaryKey())
    .addColumn('account_id', uuid, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('endpoint_url', 'text', (c) => c.notNull())
    .addColumn('authorization_header', 'text')
    .addColumn('events_requested', json, (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('status_reason', 'text')
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('ssf_streams_account').on('ssf_streams').column('account_id').execute();

  await db.schema
    .createTable('ssf_deliveries')
    .addColumn('id', uuid, (c) => c.primaryKey())
    .addColumn('stream_id', uuid, (c) => c.notNull().references('ssf_streams.id').onDelete('cascade'))
    .addColumn('event_type', 'text', (c) => c.notNull())
    .addColumn('token', 'text', (c) => c.notNull())
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
    .createIndex('ssf_deliveries_due')
    .on('ssf_deliveries')
    .columns(['state', 'next_attempt_at'])
    .execute();
  await db.schema.createIndex('ssf_deliveries_stream').on('ssf_deliveries').column('stream_id').execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['ssf_deliveries', 'ssf_streams', 'account_event_claims', 'security_event_receipts'])
    await db.schema.dropTable(table).execute();
}
