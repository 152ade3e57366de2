/**
 * The ingestion queue against a real database, both dialects: events that arrive together share
 * one transaction (group commit), and each caller is answered from its own write's outcome - also
 * when the COMMIT succeeded but its answer was lost (what a PostgreSQL connection cut between the
 * server's commit and the client's read looks like: the driver reports an error, the rows are
 * there): 503, never a 2xx for an unknown outcome, and nothing written twice behind the caller's back.
 */
import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../db/database.ts';
import {
  batchWriter,
  IngestQueue,
  type PreparedEvent,
  type StandaloneWriter,
  standaloneWriter,
} from '../../servers/features/traffic/ingest.ts';
import { createTestDatabase, dialects, type TestDatabase } from '../helpers/databases.ts';
import { storedPaths } from '../helpers/traffic.ts';

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

/**
 * The service's writer of unkeyed events, except that each write calls `started` first and, with
 * `loseFirstAnswer`, the answer of the first write that committed is lost.
 */
function observed(
  raw: DatabaseHandle['raw'],
  options: { started?: () => void; loseFirstAnswer?: boolean },
): StandaloneWriter {
  const write = standaloneWriter(raw);
  let lost = !options.loseFirstAnswer;
  return async (db, events, acknowledgement) => {
    options.started?.();
    await write(db, events, acknowledgement);
    if (!lost) {
      lost = true;
      throw new Error('Connection terminated unexpectedly');
    }
  };
}

describe.each(dialects)('traffic ingestion queue (%s)', (dialect) => {
  let db: TestDatabase | undefined;
  afterEach(async () => {
    await db?.drop();
  });

  const queueOn = (database: TestDatabase, observe: Parameters<typeof observed>[1]) =>
    new IngestQueue(database.handle.db, pino({ level: 'silent' }), {
      write: batchWriter(database.handle.raw),
      standalone: observed(database.handle.raw, observe),
      queueMaxEvents: 1000,
      flushMaxEvents: 100,
      writeTimeoutMs: 60_000,
    });
  const counted = async (siteId: string) =>
    Number(
      (
        await (db as TestDatabase).handle.db
          .selectFrom('traffic_daily')
          .select((eb) => eb.fn.sum<number>('events').as('n'))
          .where('site_id', '=', siteId)
          .executeTakeFirstOrThrow()
      ).n,
    );

  it('writes what arrives in one turn in one transaction, and what arrives during a write in the next', async () => {
    db = await createTestDatabase(dialect);
    const siteId = randomUUID();
    let transactions = 0;
    const during: Promise<unknown>[] = [];
    const queue = queueOn(db, {
      started: () => {
        // While the first write runs, two more callers arrive.
        if (++transactions === 1)
          during.push(queue.enqueue([event(siteId, '/d')]), queue.enqueue([event(siteId, '/e')]));
      },
    });
    const first = await Promise.all(['/a', '/b', '/c'].map((path) => queue.enqueue([event(siteId, path)])));
    expect(first).toEqual(['written', 'written', 'written']);
    expect(await Promise.all(during)).toEqual(['written', 'written']);
    expect(transactions).toBe(2);
    expect(await storedPaths((db as TestDatabase).handle.db, siteId)).toEqual(['/a', '/b', '/c', '/d', '/e']);
    expect(await counted(siteId)).toBe(5);
    expect(queue.size).toBe(0);
    await queue.close();
  });

  it('writes a batch of more rows than one INSERT carries: every event in order, every rollup row merged', async () => {
    db = await createTestDatabase(dialect);
    const siteId = randomUUID();
    const queue = queueOn(db, {});
    // 150 pages: the raw events and the page rollup span three SQLite statements (64 rows each at most).
    const paths = Array.from({ length: 150 }, (_, i) => `/p/${String(i).padStart(3, '0')}`);
    expect(await queue.enqueue(paths.map((path) => event(siteId, path)))).toBe('written');
    expect(
      await queue.enqueue(
        paths.map((path) => event(siteId, path)),
        undefined,
        'commit',
      ),
    ).toBe('written');
    const stored = await (db as TestDatabase).handle.db
      .selectFrom('traffic_events')
      .select('path')
      .where('site_id', '=', siteId)
      .orderBy('id')
      .execute();
    expect(stored.map((row) => row.path)).toEqual([...paths, ...paths]);
    const pages = await (db as TestDatabase).handle.db
      .selectFrom('traffic_pages_daily')
      .select(['path', 'events'])
      .where('site_id', '=', siteId)
      .orderBy('path')
      .execute();
    expect(pages.map((row) => [row.path, Number(row.events)])).toEqual(paths.map((path) => [path, 2]));
    expect(await counted(siteId)).toBe(300);
    await queue.close();
  });

  it('writes keyed and unkeyed callers of one turn in one transaction with the key, a key met again left out', async () => {
    db = await createTestDatabase(dialect);
    const siteId = randomUUID();
    let standalone = 0;
    const queue = queueOn(db, { started: () => standalone++ });
    const claim = (key: string) => ({ operation: `test:${siteId}`, key, fingerprint: 'f', response: '{}' });
    const outcomes = await Promise.all([
      queue.enqueue([event(siteId, '/pixel')], undefined, 'commit'),
      queue.enqueue([event(siteId, '/unkeyed')]),
      queue.enqueue([event(siteId, '/keyed')], claim('k1')),
      queue.enqueue([event(siteId, '/again')], claim('k1')),
    ]);
    expect(outcomes).toEqual(['written', 'written', 'written', 'duplicate']);
    // A key to record: the write ran as the transaction that records it, not as a standalone write.
    expect(standalone).toBe(0);
    expect(await storedPaths((db as TestDatabase).handle.db, siteId)).toEqual([
      '/keyed',
      '/pixel',
      '/unkeyed',
    ]);
    expect(await counted(siteId)).toBe(3);
    const keys = await (db as TestDatabase).handle.db
      .selectFrom('idempotency_keys')
      .select('key')
      .where('operation', '=', `test:${siteId}`)
      .execute();
    expect(keys.map((row) => row.key)).toEqual(['k1']);
    // Without a key, the next turn's callers - a pixel hit and a batch - share one standalone write.
    expect(
      await Promise.all([
        queue.enqueue([event(siteId, '/pixel-2')], undefined, 'commit'),
        queue.enqueue([event(siteId, '/unkeyed-2')]),
      ]),
    ).toEqual(['written', 'written']);
    expect(standalone).toBe(1);
    expect(await counted(siteId)).toBe(5);
    await queue.close();
  });

  it('answers the callers of a write whose COMMIT answer was lost 503, and writes nothing twice', async () => {
    db = await createTestDatabase(dialect);
    const siteId = randomUUID();
    const queue = queueOn(db, { loseFirstAnswer: true });
    const unknown = [
      queue.enqueue([event(siteId, '/a')]),
      queue.enqueue([event(siteId, '/b'), event(siteId, '/c')]),
    ];
    for (const outcome of unknown) {
      await expect(outcome).rejects.toMatchObject({
        code: 'service_unavailable',
        headers: { 'Retry-After': '5' },
      });
    }
    expect(await queue.enqueue([event(siteId, '/d')])).toBe('written');
    expect(queue.size).toBe(0);
    expect(await storedPaths((db as TestDatabase).handle.db, siteId)).toEqual(['/a', '/b', '/c', '/d']);
    expect(await counted(siteId)).toBe(4);
    await queue.close();
  });

  it('refuses events once closed, after writing those it took', async () => {
    db = await createTestDatabase(dialect);
    const siteId = randomUUID();
    const queue = queueOn(db, {});
    const taken = queue.enqueue([event(siteId, '/a')]);
    await queue.close();
    expect(await taken).toBe('written');
    expect(() => queue.enqueue([event(siteId, '/b')])).toThrow(
      expect.objectContaining({ code: 'service_unavailable' }),
    );
    expect(await storedPaths((db as TestDatabase).handle.db, siteId)).toEqual(['/a']);
  });
});
