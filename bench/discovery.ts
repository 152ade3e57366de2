/**
 * Brand channel discovery over loopback (issue 29): `GET {base_url}/brands/{domain}` for a brand
 * whose stored discovery was just removed, so each request runs one whole discovery of the fixture
 * site (robots.txt, home page, agent card, MCP catalog, sitemap, contact pages, MX lookups through
 * the local DNS server) - p50 and p99 of sequential runs, per fixture brand of
 * `test/helpers/brand-sites.ts`. What it costs without the internet's latency.
 *
 * `discoveryConfigFile` writes the configuration that points a spawned service at a brand world
 * (the hot paths' `POST /return` with discovery on and cached).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { openDatabase } from '../db/database.ts';
import { migrateToLatest } from '../db/migrate.ts';
import { projectRoot } from '../servers/config.ts';
import { loadBrands } from '../servers/features/charges/brand-registry.ts';
import { BrandMatcher } from '../servers/features/charges/matcher.ts';
import { startService } from '../servers/server.ts';
import {
  type BrandName,
  type BrandWorld,
  brandDomains,
  startBrandWorld,
} from '../test/helpers/brand-sites.ts';
import { percentile } from './charges.ts';

/** One fixture brand's discoveries: how many channels each found, and how long each took. */
export interface DiscoveryLatency {
  brand: BrandName;
  domain: string;
  channels: number;
  p50Ms: number;
  p99Ms: number;
}

export async function measureDiscovery(runs = 40): Promise<DiscoveryLatency[]> {
  const dir = mkdtempSync(path.join(tmpdir(), 'agent-service-bench-discovery-'));
  const database = openDatabase({ sqliteFile: path.join(dir, 'service.db') });
  await migrateToLatest(database.db);
  const world = await startBrandWorld();
  const service = await startService({
    env: {},
    database,
    brands: new BrandMatcher(loadBrands()),
    log: pino({ level: 'silent' }),
    background: false,
    overrides: {
      port: 0,
      host: '127.0.0.1',
      data_dir: dir,
      ...world.overrides,
      'returns.discovery.request_budget_ms': 30_000,
      // Every request here starts a discovery, which counts as a write of this one client address.
      'rate_limits.unauthenticated_writes.points': 1_000_000_000,
    },
  });
  const rows: DiscoveryLatency[] = [];
  try {
    for (const brand of ['jsonLd', 'mailto', 'a2a', 'mcp', 'formPhone'] as const) {
      const domain = brandDomains[brand];
      const times: number[] = [];
      let channels = 0;
      for (let i = 0; i < runs; i++) {
        await database.db.deleteFrom('brand_discoveries').where('domain', '=', domain).execute();
        const started = performance.now();
        const res = await fetch(`${service.config.base_url}/brands/${domain}`);
        const body = (await res.json()) as { channels: unknown[]; discovery: { status: string } };
        times.push(performance.now() - started);
        if (res.status !== 200 || body.discovery.status !== 'fresh') {
          throw new Error(`${domain}: ${res.status} ${body.discovery?.status}`);
        }
        channels = body.channels.length;
      }
      times.sort((a, b) => a - b);
      rows.push({
        brand,
        domain,
        channels,
        p50Ms: percentile(times, 0.5),
        p99Ms: percentile(times, 0.99),
      });
    }
    return rows;
  } finally {
    await service.stop();
    await world.close();
    await database.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * A configuration file (`CONFIG_FILE`) for a spawned service: the shipped defaults with channel
 * discovery on, pointed at `world` (its DNS server, its brands' port over http, loopback allowed).
 */
export function discoveryConfigFile(world: BrandWorld, dir: string): string {
  const config = JSON.parse(readFileSync(path.join(projectRoot, 'mcp.config.json'), 'utf8'));
  for (const [key, value] of Object.entries(world.overrides)) {
    const parts = key.split('.');
    let node = config;
    for (const part of parts.slice(0, -1)) node = node[part];
    node[parts.at(-1) as string] = value;
  }
  const file = path.join(dir, 'discovery.config.json');
  writeFileSync(file, JSON.stringify(config));
  return file;
}
