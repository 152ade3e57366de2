/**
 * `WORKERS=N npm start` (node:cluster): on PostgreSQL two workers answer on one port (told apart by
 * the `pid` label of /metrics), and SIGTERM to the primary drains both and exits 0; on SQLite more
 * than one worker is refused at start with a message naming the fix.
 */
import http from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestDatabase, postgresUrl, type TestDatabase } from '../helpers/databases.ts';
import { type ServiceProcess, spawnService } from '../helpers/process.ts';
import { waitFor } from '../helpers/receivers.ts';

/** GET on a connection of its own, so the primary hands each request to the next worker. */
const getOnNewConnection = (url: string) =>
  new Promise<{ status: number; body: string }>((resolve, reject) => {
    http
      .get(url, { agent: false }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          body += d;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      })
      .once('error', reject);
  });

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('WORKERS on SQLite (sqlite)', () => {
  it('refuses more than one worker, naming PostgreSQL, with exit code 78', async () => {
    const db = await createTestDatabase('sqlite');
    try {
      await expect(spawnService({ ...db.env, WORKERS: '2' })).rejects.toThrow(
        /exited with 78: Invalid configuration:\n {2}- WORKERS=2 needs PostgreSQL \(DATABASE_URL=postgres:\/\/\.\.\.\)/,
      );
    } finally {
      await db.drop();
    }
  });
});

describe.runIf(postgresUrl)('WORKERS=2 on PostgreSQL (postgres)', () => {
  let db: TestDatabase | undefined;
  let service: ServiceProcess | undefined;

  afterEach(async () => {
    if (service && service.child.exitCode === null) await service.kill();
    await db?.drop();
  });

  it('answers from two worker processes on one port; SIGTERM to the primary stops both, exit 0', async () => {
    db = await createTestDatabase('postgres');
    service = await spawnService({ ...db.env, WORKERS: '2', METRICS_ENABLED: '1' });
    const primary = service.child.pid as number;
    const pids = new Set<number>();
    await waitFor(async () => {
      const res = await getOnNewConnection(`${service?.url}/metrics`);
      // A worker listens from its first moment and answers 503 until its services are up.
      if (res.status === 503) return false;
      expect(res.status).toBe(200);
      const pid = /^agent_service_process_start_time_seconds\{pid="(\d+)"\}/m.exec(res.body)?.[1];
      pids.add(Number(pid));
      return pids.size === 2;
    }, 60_000);
    expect(pids.has(primary)).toBe(false);
    for (const pid of pids) expect(alive(pid)).toBe(true);

    // Both serve the application, not only metrics.
    const ready = await getOnNewConnection(`${service.url}/api/public/health/ready`);
    expect(ready.status).toBe(200);

    expect(await service.stop()).toBe(0);
    await waitFor(() => [...pids].every((pid) => !alive(pid)));
  }, 180_000);
});
