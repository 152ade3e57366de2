/**
 * Frozen: never edit a migration that has shipped; add a new one.
 * Read tokens of private scans bought through the x402 `scan` SKU (issue 9): the payer may have no
 * account, so the scan is read back with a random token handed out once; only its SHA-256 hex
 * digest is kept. Rows are looked up by id, so the digest needs no index.
 */
import type { Kysely } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations are typed loosely (kysely recommendation)
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('scans').addColumn('read_token_hash', 'text').execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('scans').dropColumn('read_token_hash').execute();
}
