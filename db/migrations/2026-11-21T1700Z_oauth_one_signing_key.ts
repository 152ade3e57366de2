/**
 * Frozen: never edit a migration that has shipped; add a new one.
 * At most one unretired signing key. Two processes starting together on an empty database could
 * each create one and sign with different keys; with this index the second insert does nothing and
 * both load the first (`auth/keys.ts`). A database that already holds several keeps the newest.
 */
import { type Kysely, sql } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations are typed loosely (kysely recommendation)
export async function up(db: Kysely<any>): Promise<void> {
  const newest = await db
    .selectFrom('oauth_signing_keys')
    .select('kid')
    .where('retired_at', 'is', null)
    .orderBy('created_at', 'desc')
    .orderBy('kid', 'desc')
    .executeTakeFirst();
  if (newest) {
    await db
      .updateTable('oauth_signing_keys')
      .set({ retired_at: new Date().toISOString() })
      .where('retired_at', 'is', null)
      .where('kid', '<>', newest.kid)
      .execute();
  }
  // A unique index on a constant over the unretired rows: PostgreSQL and SQLite both take it.
  await sql`create unique index oauth_signing_keys_one_active on oauth_signing_keys ((retired_at is null)) where retired_at is null`.execute(
    db,
  );
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('oauth_signing_keys_one_active').execute();
}
