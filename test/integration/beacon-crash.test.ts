/**
 * A beacon hit answered 2xx survives a crash (issue 28 item 2): the real service (`npm start`) in a
 * process group of its own - on PostgreSQL three workers (`WORKERS=3`), on SQLite its one process -
 * is flooded with `GET /beacon` from many connections, each hit naming a page of its own, and the
 * whole group is killed with SIGKILL while hits are in flight. After a restart every hit that was
 * answered 204 is stored, once, and the rollups count what is stored.
 */
import http from 'node:http';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createTestDatabase, dialects, type TestDatabase } from '../helpers/databases.ts';
import { type ServiceProcess, spawnService } from '../helpers/process.ts';
import { waitFor } from '../helpers/receivers.ts';

// Real child processes start slowly on a loaded machine: room to start, never a timing assertion.
vi.setConfig({ testTimeout: 240_000, hookTimeout: 120_000 });

const CHROME =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';
const DOMAIN = 'crash-beacon.com';
const CONNECTIONS = 48;
/** Hits answered 204 before the kill: the issue's run lost 37% of 3,000. */
const ACKNOWLEDGED_BEFORE_KILL = 3000;

/** One GET on a kept-alive connection of `agent`: its status once the whole answer arrived. */
const get = (agent: http.Agent, url: string) =>
  new Promise<number>((resolve, reject) => {
    http
      .get(url, { agent, headers: { 'user-agent': CHROME } }, (res) => {
        res.resume();
        res.once('end', () => resolve(res.statusCode ?? 0));
        res.once('error', reject);
      })
      .once('error', reject);
  });

describe.each(dialects)('beacon hits answered 204, then kill -9 of the service (%s)', (dialect) => {
  let db: TestDatabase | undefined;
  let service: ServiceProcess | undefined;

  afterEach(async () => {
    if (service && service.child.exitCode === null) await service.killGroup();
    await db?.drop();
  });

  it('keeps every acknowledged hit: each one is stored after the restart, once', async () => {
    db = await createTestDatabase(dialect);
    const env = {
      ...db.env,
      // SQLite allows one writing process (servers/cluster.ts).
      ...(dialect === 'postgres' ? { WORKERS: '3' } : {}),
      RATE_LIMIT_WRITES_PER_MINUTE: '1000000000',
    };
    service = await spawnService(env, undefined, { processGroup: true });
    const api = `${service.url}/api/public`;
    const account = await fetch(`${api}/account`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'crash-owner@example.com', password: 'correct horse battery' }),
    });
    expect(account.status).toBe(201);
    const key: string = (await account.json()).key.service_key;
    const install = await fetch(`${api}/pixel-install`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-key': key },
      body: JSON.stringify({ domain: DOMAIN }),
    });
    expect(install.status).toBeLessThan(300);
    const siteId: string = (await install.json()).site_id;

    const acknowledged: string[] = [];
    const statuses = new Map<number, number>();
    let failed = 0;
    let next = 0;
    let killing: Promise<void> | undefined;
    const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
    const flood = Array.from({ length: CONNECTIONS }, async () => {
      while (!killing) {
        const page = `/hit/${next++}`;
        const url = `${api}/beacon?${new URLSearchParams({ site: siteId, url: `https://${DOMAIN}${page}` })}`;
        try {
          const status = await get(agent, url);
          statuses.set(status, (statuses.get(status) ?? 0) + 1);
          if (status === 204) acknowledged.push(page);
          if (acknowledged.length >= ACKNOWLEDGED_BEFORE_KILL) killing ??= service?.killGroup();
        } catch {
          // The answer never came: the hit was in flight when the processes died.
          failed++;
        }
      }
    });
    await Promise.all(flood);
    await killing;
    agent.destroy();
    // Every answer before the kill was a 204 (no hit shed or refused), and hits were in flight.
    expect([...statuses.keys()]).toEqual([204]);
    expect(acknowledged.length).toBeGreaterThanOrEqual(ACKNOWLEDGED_BEFORE_KILL);
    expect(failed).toBeGreaterThan(0);

    service = await spawnService(env, undefined, { processGroup: true });
    const stored = await db.handle.db
      .selectFrom('traffic_events')
      .select('path')
      .where('site_id', '=', siteId)
      .execute();
    const paths = new Set(stored.map((r) => r.path));
    expect(paths.size).toBe(stored.length);
    const missing = acknowledged.filter((page) => !paths.has(page));
    expect(missing.length, `of ${acknowledged.length} acknowledged, missing: ${missing.slice(0, 5)}...`).toBe(
      0,
    );
    // The rollups were written in the transactions that wrote the events: they count the same. (A
    // worker answers 503 until its services are up.)
    let total: unknown;
    await waitFor(async () => {
      const pixel = await fetch(`${service?.url}/api/public/pixel?site_id=${siteId}`, {
        headers: { 'x-service-key': key },
      });
      if (pixel.status === 503) return false;
      expect(pixel.status).toBe(200);
      total = (await pixel.json()).sites[0].events_total;
      return true;
    }, 60_000);
    expect(total).toMatchObject({ beacon: stored.length });
  });
});
