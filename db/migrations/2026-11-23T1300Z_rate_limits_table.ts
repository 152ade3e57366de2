/**
 * Frozen: never edit a migration that has shipped; add a new one.
 * The rate-limit counters' table on PostgreSQL (`servers/rate-limit.ts`), in rate-limiter-flexible's
 * own layout. The library used to create it when each limiter was constructed; processes starting
 * together then raced on `CREATE TABLE IF NOT EXISTS` ("type rate_limits already exists"), which
 * migrations, run under the migrator's lock, cannot. SQLite keeps its counters in memory.
 */
import { type Kysely, PostgresAdapter, sql } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations are typed loosely (kysely recommendation)
export async function up(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await sql`create table if not exists rate_limits (
    key varchar(255) primary key,
    points integer not null default 0,
    expire bigint
  )`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await db.schema.dropTable('rate_limits').ifExists().execute();
}
