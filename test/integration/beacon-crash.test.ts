/**
 * A beacon hit answered 2xx survives a crash (issue 28 item 2): the real service (`npm start`) in a
 * process group of its own - on PostgreSQL three workers (`WORKERS=3`), on SQLite its one process -
 * is flooded with `GET /beacon` from many connections, each hit naming a page of its own, and the
 * whole group is killed with SIGKILL in the middle of the flood. After a restart every hit that was
 * answered 204 is stored, once, and the rollups count what is stored.
 */
import http from 'node:http';
import { describe, expect, it, vi } from 'vitest';
import { createTestDatabase, dialects } from '../helpers/databases.ts';
import { type ServiceProcess, spawnService } from '../helpers/process.ts';
import { waitFor } from '../helpers/receivers.ts';
import { accountWithSite, storedPaths } from '../helpers/traffic.ts';

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

/**
 * Floods the beacon of `siteId` from `CONNECTIONS` connections, each hit naming a page of its own,
 * until `ACKNOWLEDGED_BEFORE_KILL` were answered 204; then kills the service's process group.
 */
async function floodThenKill(service: ServiceProcess, siteId: string) {
  const api = `${service.url}/api/public`;
  const acknowledged: string[] = [];
  const statuses = new Set<number>();
  let unanswered = 0;
  let next = 0;
  let killed: Promise<void> | undefined;
  // Hits keep going until the processes are dead, so the kill lands in the middle of the flood.
  let dead = false;
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const connection = async () => {
    while (!dead) {
      const page = `/hit/${next++}`;
      try {
        const status = await get(
          agent,
          `${api}/beacon?${new URLSearchParams({ site: siteId, url: `https://${DOMAIN}${page}` })}`,
        );
        statuses.add(status);
        if (status === 204) acknowledged.push(page);
        if (acknowledged.length >= ACKNOWLEDGED_BEFORE_KILL) {
          killed ??= service.killGroup().then(() => {
            dead = true;
          });
        }
      } catch {
        // No answer: the hit met the processes dying or dead (answered at commit, every hit sent
        // before SIGKILL may well have been answered already, so none need be cut mid-write).
        unanswered++;
      }
    }
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, connection));
  await killed;
  agent.destroy();
  return { acknowledged, statuses: [...statuses], unanswered };
}

describe.each(dialects)('beacon hits answered 204, then kill -9 of the service (%s)', (dialect) => {
  it('keeps every acknowledged hit: each one is stored after the restart, once', async () => {
    const db = await createTestDatabase(dialect);
    const env = {
      ...db.env,
      // SQLite allows one writing process (servers/cluster.ts).
      ...(dialect === 'postgres' ? { WORKERS: '3' } : {}),
      RATE_LIMIT_WRITES_PER_MINUTE: '1000000000',
      // A write slower than traffic.write_timeout_ms (5 s) is answered 503, by design; on a loaded CI
      // machine a PostgreSQL batch under this flood once took longer. What this test checks is the
      // crash, so the timeout is out of its way and every answer before the kill must be a 204.
      TRAFFIC_WRITE_TIMEOUT_MS: '120000',
    };
    const started: ServiceProcess[] = [];
    try {
      const first = await spawnService(env, undefined, { processGroup: true });
      started.push(first);
      const { key, siteId } = await accountWithSite(`${first.url}/api/public`, DOMAIN);
      const flood = await floodThenKill(first, siteId);
      // Every answer before the kill was a 204 (no hit shed or refused).
      expect(flood.statuses).toEqual([204]);
      expect(flood.acknowledged.length).toBeGreaterThanOrEqual(ACKNOWLEDGED_BEFORE_KILL);
      // The flood was still running when the processes died.
      expect(flood.unanswered).toBeGreaterThan(0);

      const restarted = await spawnService(env, undefined, { processGroup: true });
      started.push(restarted);
      const stored = await storedPaths(db.handle.db, siteId);
      const pages = new Set(stored);
      expect(pages.size).toBe(stored.length);
      const missing = flood.acknowledged.filter((page) => !pages.has(page));
      expect(missing, `${missing.length} of ${flood.acknowledged.length} acknowledged hits missing`).toEqual(
        [],
      );
      // The rollups were written in the transactions that wrote the events: they count the same. (A
      // worker answers 503 until its services are up.)
      let total: unknown;
      await waitFor(async () => {
        const pixel = await fetch(`${restarted.url}/api/public/pixel?site_id=${siteId}`, {
          headers: { 'x-service-key': key },
        });
        if (pixel.status === 503) return false;
        expect(pixel.status).toBe(200);
        total = (await pixel.json()).sites[0].events_total;
        return true;
      }, 60_000);
      expect(total).toMatchObject({ beacon: stored.length });
    } finally {
      for (const service of started) await service.killGroup();
      await db.drop();
    }
  });
});
