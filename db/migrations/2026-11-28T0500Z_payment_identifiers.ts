/**
 * Frozen: never edit a migration that has shipped; add a new one.
 * x402's payment-identifier extension (issue 31 item 4): the id a payer chose for one logical paid
 * request. At most one live payment (not released, not failed) holds a payer's id - a partial unique
 * index, so that concurrent retries in any process run the request once, and a retry after a failure
 * that charged nothing may run it again.
 */
import { type Kysely, sql } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations are typed loosely (kysely recommendation)
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('payments').addColumn('payment_identifier', 'text').execute();
  await db.schema
    .createIndex('payments_payment_identifier')
    .on('payments')
    .columns(['payer', 'payment_identifier'])
    .unique()
    .where(sql.ref('payment_identifier'), 'is not', null)
    .where(sql.ref('status'), 'not in', ['released', 'failed'])
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('payments_payment_identifier').execute();
  await db.schema.alterTable('payments').dropColumn('payment_identifier').execute();
}
