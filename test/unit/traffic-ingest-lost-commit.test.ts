/**
 * The ingestion queue against a real database whose first COMMIT succeeds but whose answer is lost
 * (what a PostgreSQL connection cut between the server's commit and the client's read looks like:
 * the driver reports an error, the rows are there). The acknowledged events are retried as the same
 * batch, and the batch id recorded by the committed transaction keeps them from being stored twice.
 */
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { Database } from '../../db/schema.ts';
import { batchWriter, IngestQueue, type PreparedEvent } from '../../servers/features/traffic/ingest.ts';
import { createTestDatabase, dialects, type TestDatabase } from '../helpers/databases.ts';

const event = (siteId: string, path: string): PreparedEvent => ({
  site_id: siteId,
  occurred_at: new Date().toISOString(),
  received_at: new Date().toISOString(),
  source: 'beacon',
  category: 'human',
  agent: null,
  operator: null,
  path,
  referrer_host: null,
  status: null,
  ip_prefix: null,
  user_agent: 'Mozilla/5.0',
});

/** The database, except that the answer of its first committed transaction is lost. */
function losingFirstCommitAnswer(db: Kysely<Database>): Kysely<Database> {
  let lost = false;
  return new Proxy(db, {
    get(target, prop, receiver) {
      if (prop !== 'transaction') return Reflect.get(target, prop, receiver);
      return () => ({
        execute: async <T>(fn: (trx: Kysely<Database>) => Promise<T>) => {
          const result = await target.transaction().execute(fn);
          if (!lost) {
            lost = true;
            throw new Error('Connection terminated unexpectedly');
          }
          return result;
        },
      });
    },
  });
}

describe.each(dialects)('traffic ingestion after a lost COMMIT answer (%s)', (dialect) => {
  let db: TestDatabase | undefined;
  afterEach(async () => {
    await db?.drop();
  });

  it('stores each acknowledged event once: the retried batch is known as written', async () => {
    db = await createTestDatabase(dialect);
    const siteId = randomUUID();
    const queue = new IngestQueue(losingFirstCommitAnswer(db.handle.db), pino({ level: 'silent' }), {
      write: batchWriter(db.handle.raw),
      queueMaxEvents: 1000,
      flushMaxEvents: 100,
      flushIntervalMs: 60_000,
    });
    queue.enqueue([event(siteId, '/a')]);
    queue.enqueue([event(siteId, '/b'), event(siteId, '/c')]);
    // The first write commits and reports a failure; flushNow writes what went back to the queue.
    await queue.flushNow();
    queue.enqueue([event(siteId, '/d')]);
    await queue.flushNow();
    expect(queue.size).toBe(0);
    const rows = await db.handle.db
      .selectFrom('traffic_events')
      .select('path')
      .where('site_id', '=', siteId)
      .orderBy('path')
      .execute();
    expect(rows.map((r) => r.path)).toEqual(['/a', '/b', '/c', '/d']);
    const daily = await db.handle.db
      .selectFrom('traffic_daily')
      .select((eb) => eb.fn.sum<number>('events').as('n'))
      .where('site_id', '=', siteId)
      .executeTakeFirstOrThrow();
    expect(Number(daily.n)).toBe(4);
    await queue.close();
  });
});
