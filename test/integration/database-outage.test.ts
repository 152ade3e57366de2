/**
 * PostgreSQL goes away under load and comes back (issue 15, section 2): a real service process
 * reaches the shared PostgreSQL through a TCP proxy of the test's own, which cuts every connection
 * and refuses new ones, then listens again. While the database is unreachable every request that
 * needs it is answered 503 `service_unavailable` as problem+json, with Retry-After and nothing of
 * the cause; readiness says `database_unreachable` while liveness stays 200. Once it is back the
 * same process serves again without a restart, and everything it acknowledged - return requests
 * answered 200, pixel beacons answered 2xx (each answered once its write committed) - is in the
 * database.
 *
 * PostgreSQL only: SQLite is a file in the process, with no connection to lose.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestDatabase, postgresUrl, type TestDatabase } from '../helpers/databases.ts';
import { type ServiceProcess, spawnService } from '../helpers/process.ts';
import { waitFor } from '../helpers/receivers.ts';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.ts';
import { storedPaths } from '../helpers/traffic.ts';

// Real child processes start slowly on a loaded machine: room to start, never a timing assertion.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

// biome-ignore lint/suspicious/noExplicitAny: response bodies are checked structurally
type Json = Record<string, any>;

interface Answer {
  kind: 'return' | 'status' | 'beacon' | 'lookup';
  status: number;
  type: string | null;
  retryAfter: string | null;
  body: string;
  /** The request id of an accepted return request. */
  requestId?: string;
  /** The page a beacon hit named (each hit its own). */
  page?: string;
}

/** Words that would give the cause away: driver messages, socket errors, SQL, stack frames. */
const INTERNALS =
  /ECONN|EPIPE|ETIMEDOUT|Connection terminated|not queryable|timeout exceeded|postgres|pg-pool|kysely|select |insert |\.ts:\d|at .+\(/i;

describe.skipIf(!postgresUrl)('PostgreSQL outage under load (postgres)', () => {
  let db: TestDatabase;
  let proxy: TcpProxy;
  let service: ServiceProcess;
  let siteId: string;

  beforeAll(async () => {
    db = await createTestDatabase('postgres');
    const upstream = new URL(postgresUrl as string);
    proxy = await startTcpProxy({ host: upstream.hostname, port: Number(upstream.port || 5432) });
    const through = new URL(db.env.DATABASE_URL as string);
    through.hostname = '127.0.0.1';
    through.port = String(proxy.port);
    service = await spawnService({
      DATABASE_URL: through.toString(),
      // One client address sends the whole load: lift the per-address write limit.
      RATE_LIMIT_WRITES_PER_MINUTE: '1000000000',
    });
    const api = `${service.url}/api/public`;
    const account = await fetch(`${api}/account`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'outage@example.com', password: 'correct horse battery' }),
    });
    expect(account.status).toBe(201);
    const key = ((await account.json()) as Json).key.service_key as string;
    const install = await fetch(`${api}/pixel-install`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-key': key },
      body: JSON.stringify({ domain: 'outage-traffic.com' }),
    });
    siteId = ((await install.json()) as Json).site_id;
  });
  afterAll(async () => {
    if (service?.child.exitCode === null) await service.kill();
    await proxy?.close();
    await db?.drop();
  });

  const chrome =
    'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

  const acceptedIds: string[] = [];
  /** Beacon hits sent so far: each names a page of its own. */
  let hits = 0;

  async function send(kind: Answer['kind'], n: number): Promise<Answer> {
    let res: Response;
    let page: string | undefined;
    switch (kind) {
      case 'return':
        res = await fetch(`${service.url}/cs/return`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            brand_domain: 'netflix.com',
            name: 'Outage Person',
            contact: `outage-${n}@example.com`,
            order_number: `O-${n}`,
          }),
        });
        break;
      case 'status': {
        // A request accepted earlier: its status is read from the database.
        const id = acceptedIds[n % acceptedIds.length];
        if (!id) return send('return', n);
        res = await fetch(`${service.url}/cs/status?request_id=${id}`);
        break;
      }
      case 'beacon':
        page = `/p/${hits++}`;
        res = await fetch(
          `${service.url}/api/public/beacon?site=${siteId}&url=${encodeURIComponent(`https://outage-traffic.com${page}`)}`,
          { headers: { 'user-agent': chrome } },
        );
        break;
      case 'lookup':
        res = await fetch(`${service.url}/cs/agent?charge=${encodeURIComponent(`NETFLIX.COM ${n}`)}`);
        break;
    }
    const body = await res.text();
    const answer: Answer = {
      kind,
      status: res.status,
      type: res.headers.get('content-type'),
      retryAfter: res.headers.get('retry-after'),
      body,
    };
    if (kind === 'return' && res.status === 200) {
      answer.requestId = (JSON.parse(body) as Json).request_id;
      acceptedIds.push(answer.requestId as string);
    }
    if (page) answer.page = page;
    return answer;
  }

  /** `workers` loops sending the mix until `stop()`; every answer is kept. */
  function load(workers: number) {
    const answers: Answer[] = [];
    let running = true;
    let n = 0;
    const kinds: Answer['kind'][] = ['return', 'status', 'beacon', 'lookup'];
    const loops = Array.from({ length: workers }, async (_, w) => {
      while (running) {
        const i = n++;
        try {
          answers.push(await send(kinds[(i + w) % kinds.length] as Answer['kind'], i));
        } catch (err) {
          // The service must keep answering: a refused or reset connection to it is a failure.
          answers.push({ kind: 'return', status: 0, type: null, retryAfter: null, body: String(err) });
        }
      }
    });
    return {
      answers,
      async stop() {
        running = false;
        await Promise.all(loops);
        return answers;
      },
    };
  }

  const ready = async () => (await fetch(`${service.url}/api/public/health/ready`)).status;

  it('answers 503 service_unavailable while the database is cut, loses nothing acknowledged, recovers without a restart', async () => {
    const before = load(6);
    await waitFor(() => before.answers.filter((a) => a.kind === 'return').length >= 10, 60_000);
    const warm = await before.stop();
    expect(warm.filter((a) => a.status !== 200 && a.status !== 202 && a.status !== 204)).toEqual([]);
    expect(await ready()).toBe(200);

    const during = load(6);
    await waitFor(() => during.answers.length >= 10, 60_000);
    await proxy.cut();
    const cutAt = during.answers.length;
    // Long enough for every kind of request to meet the missing database more than once.
    await waitFor(
      () => during.answers.slice(cutAt).filter((a) => a.kind === 'return' && a.status === 503).length >= 5,
      60_000,
    );
    const readiness = await fetch(`${service.url}/api/public/health/ready`);
    expect(readiness.status).toBe(503);
    expect(((await readiness.json()) as Json).failed).toEqual(['database_unreachable']);
    expect((await fetch(`${service.url}/api/public/health`)).status).toBe(200);

    await proxy.restore();
    // The same process serves again: a return request is accepted without any restart.
    await waitFor(async () => (await send('return', 1_000_000)).status === 200, 60_000);
    const after = during.answers.length;
    await waitFor(() => during.answers.length >= after + 20, 60_000);
    const answers = await during.stop();
    expect(service.child.exitCode).toBeNull();
    expect(await ready()).toBe(200);

    // Every answer was a success or a clean 503: problem+json, Retry-After, no internals.
    const failures = answers.filter((a) => a.status >= 300);
    expect(failures.length).toBeGreaterThan(0);
    for (const failure of failures) {
      expect(failure).toMatchObject({ status: 503, retryAfter: expect.any(String) });
      expect(failure.type).toMatch(/^application\/problem\+json/);
      const problem = JSON.parse(failure.body) as Json;
      expect(problem).toMatchObject({ code: 'service_unavailable', status: 503 });
      expect(failure.body).not.toMatch(INTERNALS);
    }
    // Each kind that needs the database met the outage (none was answered from memory by luck).
    expect([...new Set(failures.map((f) => f.kind))].sort()).toEqual(
      expect.arrayContaining(['beacon', 'return', 'status']),
    );
    // Requests after the restore succeed again.
    expect(answers.slice(-8).filter((a) => a.status >= 300)).toEqual([]);

    // Nothing acknowledged is lost: every accepted return request is stored and readable...
    const accepted = [...warm, ...answers].filter((a) => a.requestId).map((a) => a.requestId as string);
    expect(accepted.length).toBeGreaterThan(10);
    const stored = await db.handle.db
      .selectFrom('return_requests')
      .select('id')
      .where('id', 'in', accepted)
      .execute();
    expect(stored.length).toBe(accepted.length);
    for (const id of accepted.slice(-3)) {
      expect((await fetch(`${service.url}/cs/status?request_id=${id}`)).status).toBe(200);
    }
    // ...and so is every acknowledged beacon hit. A hit answered 503 may be stored too (its write
    // committed, the answer lost with the connection): counted, never acknowledged and lost.
    const beacons = [...warm, ...answers].filter((a) => a.kind === 'beacon' && a.status < 300);
    expect(beacons.length).toBeGreaterThan(0);
    const events = await storedPaths(db.handle.db, siteId);
    const pages = new Set(events);
    expect(pages.size).toBe(events.length);
    expect(beacons.filter((a) => !pages.has(a.page as string))).toEqual([]);
  });
});
