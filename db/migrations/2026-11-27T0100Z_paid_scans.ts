/**
 * Frozen: never edit a migration that has shipped; add a new one.
 * Which scan each payment of the `scan` SKU bought (the scan it queued, or the public one it
 * joined): a payment released after its scan was queued (its process died while the handler waited
 * on the scan) and sent again answers that scan instead of queueing another. One row per payment;
 * a scan joined by several payments has several.
 */
import { type Kysely, PostgresAdapter, sql } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations are typed loosely (kysely recommendation)
export async function up(db: Kysely<any>): Promise<void> {
  const pg = db.getExecutor().adapter instanceof PostgresAdapter;
  const ts = pg ? sql`timestamptz` : sql`text`;
  const uuid = pg ? sql`uuid` : sql`text`;
  await db.schema
    .createTable('paid_scans')
    .addColumn('payment_id', uuid, (c) => c.primaryKey().references('payments.id'))
    .addColumn('scan_id', uuid, (c) => c.notNull().references('scans.id'))
    .addColumn('created_at', ts, (c) => c.notNull())
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('paid_scans').execute();
}
