/**
 * `DATABASE_POOL_SIZE` bounds the PostgreSQL connections a process opens: twenty readiness checks
 * held at once grow the pool to the size set and no further, the rest wait for a connection, and
 * all are answered once the checks can go on.
 * PostgreSQL only: SQLite has one write and one read connection whatever the setting.
 */
import pg from 'pg';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { type RunningService, startService } from '../../servers/server.ts';
import { createTestDatabase, postgresUrl, type TestDatabase } from '../helpers/databases.ts';

describe.skipIf(!postgresUrl)('database pool size (postgres)', () => {
  let database: TestDatabase | undefined;
  let service: RunningService | undefined;

  afterEach(async () => {
    await service?.stop();
    await database?.drop();
    service = undefined;
    database = undefined;
  });

  for (const size of [3, 12]) {
    it(`opens at most DATABASE_POOL_SIZE=${size} connections and answers every request`, async () => {
      database = await createTestDatabase('postgres');
      const running = await startService({
        env: { ...database.env, DATABASE_POOL_SIZE: String(size) },
        overrides: { port: 0, host: '127.0.0.1' },
        log: pino({ level: 'silent' }),
        background: false,
      });
      service = running;
      expect(running.config.database_pool_size).toBe(size);
      const raw = running.database.raw;
      if (raw.kind !== 'postgres') throw new Error('expected PostgreSQL');
      const pool = raw.pool;

      // The readiness check reads the migration table: with it locked, each check holds its
      // connection, so twenty at once grow the pool to its bound and the rest wait for one.
      const locker = new pg.Client({ connectionString: database.env.DATABASE_URL });
      await locker.connect();
      try {
        await locker.query('begin');
        await locker.query('lock table kysely_migration in access exclusive mode');
        const answers = Array.from({ length: 20 }, () =>
          fetch(`${running.config.public_api_url}/health/ready`).then((res) => res.status),
        );
        await expect.poll(() => pool.waitingCount, { interval: 10, timeout: 4_000 }).toBeGreaterThan(0);
        expect(pool.totalCount).toBe(size);
        await locker.query('commit');
        expect(await Promise.all(answers)).toEqual(Array.from({ length: 20 }, () => 200));
      } finally {
        await locker.end();
      }
      expect(pool.totalCount).toBeLessThanOrEqual(size);
    });
  }
});
