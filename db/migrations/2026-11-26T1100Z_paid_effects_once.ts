/**
 * Frozen: never edit a migration that has shipped; add a new one.
 * A paid soul-write appends at most one entry per payment (the marketplace tables already hold
 * their payment ids unique): the backstop of the check `SoulsService.append` makes when a payment
 * released after its entry was written is sent again. Rows without a payment are not constrained
 * (NULLs are distinct in a unique index on SQLite and PostgreSQL alike).
 */
import type { Kysely } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations are typed loosely (kysely recommendation)
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('soul_memories_payment')
    .on('soul_memories')
    .column('payment_id')
    .unique()
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('soul_memories_payment').execute();
}
