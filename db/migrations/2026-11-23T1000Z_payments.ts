/**
 * Frozen: never edit a migration that has shipped; add a new one.
 * The x402 payments ledger (one row per payment authorization, unique per network, asset, payer and
 * nonce: the durable reservation that lets one authorization pay for one execution) and the
 * referral handles accounts register.
 */
import { type Kysely, PostgresAdapter, sql } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations are typed loosely (kysely recommendation)
export async function up(db: Kysely<any>): Promise<void> {
  const pg = db.getExecutor().adapter instanceof PostgresAdapter;
  const ts = pg ? sql`timestamptz` : sql`text`;
  const json = pg ? sql`jsonb` : sql`text`;
  const uuid = pg ? sql`uuid` : sql`text`;

  await db.schema
    .createTable('referral_handles')
    .addColumn('handle', 'text', (c) => c.primaryKey())
    .addColumn('account_id', uuid, (c) => c.notNull().unique().references('accounts.id').onDelete('cascade'))
    .addColumn('created_at', ts, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('payments')
    .addColumn('id', uuid, (c) => c.primaryKey())
    .addColumn('sku', 'text', (c) => c.notNull())
    .addColumn('network', 'text', (c) => c.notNull())
    .addColumn('asset', 'text', (c) => c.notNull())
    .addColumn('payer', 'text', (c) => c.notNull())
    .addColumn('nonce', 'text', (c) => c.notNull())
    .addColumn('amount', 'bigint', (c) => c.notNull())
    .addColumn('pay_to', 'text', (c) => c.notNull())
    .addColumn('x402_version', 'integer', (c) => c.notNull())
    .addColumn('facilitator', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('transaction_hash', 'text')
    .addColumn('error', 'text')
    .addColumn('referral_handle', 'text')
    .addColumn('referral_credit', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('request_hash', 'text', (c) => c.notNull())
    .addColumn('payload', json, (c) => c.notNull())
    .addColumn('requirements', json, (c) => c.notNull())
    .addColumn('valid_before', 'bigint', (c) => c.notNull())
    .addColumn('result', json)
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('lease_owner', 'text')
    .addColumn('lease_expires_at', ts)
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .addColumn('settled_at', ts)
    .addUniqueConstraint('payments_authorization', ['network', 'asset', 'payer', 'nonce'])
    .execute();
  // The settler's queue (authorized, reconciling, stale reserved) and the referral balance reads.
  await db.schema.createIndex('payments_status').on('payments').columns(['status', 'updated_at']).execute();
  await db.schema
    .createIndex('payments_referral')
    .on('payments')
    .columns(['referral_handle', 'status'])
    .where(sql.ref('referral_handle'), 'is not', null)
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['payments', 'referral_handles']) await db.schema.dropTable(table).execute();
}
