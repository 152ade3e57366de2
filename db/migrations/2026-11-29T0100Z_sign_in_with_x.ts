/**
 * Frozen: never edit a migration that has shipped; add a new one.
 * x402 sign-in-with-x (issue 31 item 5): the payer's wallet reads what it paid for again by signing
 * a CAIP-122 message. Each message's nonce is spent once, across processes (`siwx_nonces`, kept
 * until the message could no longer be accepted anyway). Which wallet paid for a private scan is
 * the payer of its payments row, found through `paid_scans` by scan: indexed here.
 */
import type { Kysely } from 'kysely';
import { columnTypes } from '../column-types.ts';

// biome-ignore lint/suspicious/noExplicitAny: migrations are typed loosely (kysely recommendation)
export async function up(db: Kysely<any>): Promise<void> {
  const { ts } = columnTypes(db);
  await db.schema
    .createTable('siwx_nonces')
    .addColumn('nonce', 'text', (c) => c.primaryKey())
    .addColumn('address', 'text', (c) => c.notNull())
    .addColumn('used_at', ts, (c) => c.notNull())
    .addColumn('expires_at', ts, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('siwx_nonces_expiry').on('siwx_nonces').column('expires_at').execute();
  await db.schema.createIndex('paid_scans_scan').on('paid_scans').column('scan_id').execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('paid_scans_scan').execute();
  await db.schema.dropTable('siwx_nonces').execute();
}
