/**
 * What the drivers throw when the database cannot take the work now is answered 503
 * `service_unavailable` with Retry-After; a statement that is wrong stays a 500. Each error here is
 * made by the real driver (better-sqlite3 behind another connection's write lock, node-postgres
 * against a port nobody listens on, a PostgreSQL connection cut mid-query); the cut itself is
 * covered with a real service process in test/integration/database-outage.test.ts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { isDatabaseUnavailable } from '../../db/database.ts';
import { toServiceError } from '../../servers/errors.ts';

const caught = async (run: () => unknown): Promise<unknown> => {
  try {
    await run();
  } catch (err) {
    return err;
  }
  throw new Error('expected a failure');
};

describe('database failures as 503', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'agent-service-unavailable-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("answers SQLite's lock (SQLITE_BUSY past busy_timeout) 503 with Retry-After; a bad statement stays 500", async () => {
    const file = path.join(dir, 'busy.db');
    const holder = new SQLite(file);
    holder.exec('create table t (x integer)');
    const waiter = new SQLite(file);
    waiter.pragma('busy_timeout = 0');
    holder.exec('begin immediate');
    try {
      const busy = await caught(() => waiter.exec('insert into t values (1)'));
      expect((busy as { code: string }).code).toBe('SQLITE_BUSY');
      const error = toServiceError(busy);
      expect(error).toMatchObject({ code: 'service_unavailable', status: 503, expose: false });
      expect(error.headers['Retry-After']).toMatch(/^\d+$/);
      expect(error.publicDetail).toBe('Service temporarily unavailable');
    } finally {
      holder.exec('rollback');
    }
    const wrong = await caught(() => waiter.exec('select nope from t'));
    expect(isDatabaseUnavailable(wrong)).toBe(false);
    expect(toServiceError(wrong)).toMatchObject({ code: 'internal_error', status: 500 });
    holder.close();
    waiter.close();
  });

  it('answers a refused PostgreSQL connection 503', async () => {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as net.AddressInfo;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const client = new pg.Client({ host: '127.0.0.1', port, user: 'x', database: 'x' });
    const refused = await caught(() => client.connect());
    expect(isDatabaseUnavailable(refused)).toBe(true);
    expect(toServiceError(refused).code).toBe('service_unavailable');
  });

  it.skipIf(!process.env.TEST_DATABASE_URL)(
    'answers a PostgreSQL connection cut during a query 503',
    async () => {
      const client = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
      client.on('error', () => {});
      await client.connect();
      const cut = caught(() => client.query('select pg_sleep(5)'));
      // The server ends this backend as a restart would (SQLSTATE 57P01, admin_shutdown).
      const admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
      await admin.connect();
      await admin.query('select pg_terminate_backend($1)', [
        (client as unknown as { processID: number }).processID,
      ]);
      await admin.end();
      expect(isDatabaseUnavailable(await cut)).toBe(true);
      expect(toServiceError(await cut).status).toBe(503);
      await client.end().catch(() => {});
    },
  );
});
