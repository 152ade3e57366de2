/**
 * The column types migrations use on each dialect (`schema.ts`: timestamps, JSON documents and
 * ids as native types on PostgreSQL, text on SQLite). For migrations written from 2026-11-28 on;
 * the older ones spell the same three lines out.
 */
import { type Kysely, PostgresAdapter, type RawBuilder, sql } from 'kysely';

export function columnTypes(
  // biome-ignore lint/suspicious/noExplicitAny: migrations are typed loosely (kysely recommendation)
  db: Kysely<any>,
): { ts: RawBuilder<unknown>; json: RawBuilder<unknown>; uuid: RawBuilder<unknown> } {
  const pg = db.getExecutor().adapter instanceof PostgresAdapter;
  return {
    ts: pg ? sql`timestamptz` : sql`text`,
    json: pg ? sql`jsonb` : sql`text`,
    uuid: pg ? sql`uuid` : sql`text`,
  };
}
