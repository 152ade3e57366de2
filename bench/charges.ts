/**
 * Card charge lookup latency over REST (issue 10, items 4 and 5): sequential `GET {base_url}/agent`
 * requests, p50 and p99, for three handlers started side by side on one database -
 * - `registry only`: the lookup as it was before live resolution (the matcher alone),
 * - `resolution off`: registry + declared descriptors (one indexed query) + stored verdicts,
 * - `resolution on`: the same with live resolution pointed at local peers (a DNS server on loopback,
 *   a fixture merchant site behind a virtual-hosting front), as tests run it -
 * and for the lines that take each path: a registry hit (cached and every line different), a
 * merchant whose verdict is stored, and a merchant nobody knows (a fresh resolution each time,
 * which on the local DNS ends in NXDOMAIN for every candidate: the resolution's own overhead,
 * without the internet's latency).
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { pino } from 'pino';
import { type DatabaseHandle, openDatabase } from '../db/database.ts';
import { migrateToLatest } from '../db/migrate.ts';
import { loadBrands } from '../servers/features/charges/brand-registry.ts';
import { BrandMatcher } from '../servers/features/charges/matcher.ts';
import type { AnyOperation } from '../servers/operation.ts';
import { operations } from '../servers/registry.ts';
import { type RunningService, startService } from '../servers/server.ts';
import { startDnsServer } from '../test/helpers/dns-server.ts';
import { startFixtureSite } from '../test/helpers/fixture-sites.ts';
import { startFrontProxy } from '../test/helpers/front-proxy.ts';

export interface LookupLatency {
  handler: 'registry only' | 'resolution off' | 'resolution on';
  path: string;
  requests: number;
  p50Ms: number;
  p99Ms: number;
}

/** The value at fraction `p` (0.5, 0.99) of sorted samples. */
export const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] as number;

/** The lookup as it was before issue 10 items 4 and 5: the in-process matcher only. */
const registryOnly: readonly AnyOperation[] = operations.map((op) =>
  op.name === 'lookupCardCharge'
    ? { ...op, handler: async (ctx, input: { charge: string }) => ctx.services.brands.lookup(input.charge) }
    : op,
);

export async function measureChargeLookups(
  options: { databaseUrl?: string; requests?: number } = {},
): Promise<{
  dialect: string;
  rows: LookupLatency[];
}> {
  const requests = options.requests ?? 2000;
  const dir = mkdtempSync(path.join(tmpdir(), 'agent-service-bench-charges-'));
  const { database, drop } = await benchDatabase(dir, options.databaseUrl);
  const dns = await startDnsServer();
  const front = await startFrontProxy();
  const merchant = await startFixtureSite('merchant');
  dns.a.set('halcyonroasters.com', ['127.0.0.1']);
  front.routeHost('halcyonroasters.com', merchant.url);
  const brands = new BrandMatcher(loadBrands());
  const log = pino({ level: 'silent' });
  const common = {
    env: {},
    database,
    brands,
    log,
    background: false,
    overrides: {
      port: 0,
      host: '127.0.0.1',
      data_dir: dir,
      'scanner.allow_private_networks': true,
      'charges.live_resolution.home_page_scheme': 'http',
      'charges.live_resolution.home_page_port': Number(new URL(front.url).port),
      'charges.live_resolution.dns_servers': [dns.address],
    },
  };
  const services: [LookupLatency['handler'], RunningService][] = [];
  try {
    services.push(['registry only', await startService({ ...common, operations: registryOnly })]);
    services.push(['resolution off', await startService(common)]);
    services.push([
      'resolution on',
      await startService({
        ...common,
        overrides: { ...common.overrides, 'charges.live_resolution.enabled': true },
      }),
    ]);
    const on = services[2]?.[1] as RunningService;
    const foundMs = await timeFirstResolution(on);

    let n = 0;
    const paths: [string, () => string, number][] = [
      [
        'registry hit, same line (cached match)',
        () => 'POS PURCHASE STARBUCKS STORE 11234 SEATTLE WA',
        requests,
      ],
      [
        'registry hit, every line different',
        () => `POS PURCHASE STARBUCKS STORE ${++n} SEATTLE WA`,
        requests,
      ],
      ['unknown merchant, verdict stored', () => 'SQ *HALCYON ROASTERS OAKLAND CA', requests],
      [
        'unknown merchant, first lookup (fresh resolution)',
        () => `SQ *QUILLFEATHER ${(++n).toString(36).toUpperCase().replace(/\d/g, 'Q')} OAKLAND CA`,
        Math.min(300, requests),
      ],
    ];
    const rows: LookupLatency[] = [
      {
        handler: 'resolution on',
        path: 'unknown merchant, first lookup, site found (once)',
        requests: 1,
        p50Ms: foundMs,
        p99Ms: foundMs,
      },
    ];
    for (const [label, line, count] of paths) {
      for (const [handler, service] of services) {
        const times = await timeLookups(`${service.config.base_url}/agent?charge=`, line, count, label);
        rows.push({
          handler,
          path: label,
          requests: count,
          p50Ms: percentile(times, 0.5),
          p99Ms: percentile(times, 0.99),
        });
      }
    }
    return { dialect: database.dialect, rows };
  } finally {
    for (const [, service] of services) await service.stop();
    await merchant.close();
    await front.close();
    await dns.close();
    await database.close();
    await drop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The stored verdict every handler then reads (the "on" one writes it): one resolution that finds
 * the site, timed alone (there is one such merchant on the fixture).
 */
async function timeFirstResolution(on: RunningService): Promise<number> {
  const started = performance.now();
  const found = await fetch(
    `${on.config.base_url}/agent?charge=${encodeURIComponent('SQ *HALCYON ROASTERS OAKLAND CA')}`,
  );
  if (((await found.json()) as { resolution?: { status: string } }).resolution?.status !== 'resolved') {
    throw new Error('the fixture merchant was not resolved');
  }
  return performance.now() - started;
}

/** `count` sequential lookups of `line()` after 50 to warm up; their durations, sorted. */
async function timeLookups(
  base: string,
  line: () => string,
  count: number,
  label: string,
): Promise<number[]> {
  for (let i = 0; i < 50; i++) await (await fetch(base + encodeURIComponent(line()))).arrayBuffer();
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    const res = await fetch(base + encodeURIComponent(line()));
    await res.arrayBuffer();
    times.push(performance.now() - started);
    if (res.status !== 200) throw new Error(`${label}: ${res.status}`);
  }
  return times.sort((a, b) => a - b);
}

/**
 * A migrated database for one run: SQLite in `dir`, or a schema of its own on `databaseUrl` that
 * `drop` removes afterwards.
 */
async function benchDatabase(
  dir: string,
  databaseUrl: string | undefined,
): Promise<{ database: DatabaseHandle; drop: () => Promise<void> }> {
  const schema = databaseUrl ? `bench_${randomUUID().slice(0, 8)}` : undefined;
  if (databaseUrl && schema) {
    const admin = openDatabase({ url: databaseUrl });
    await sql.raw(`create schema ${schema}`).execute(admin.db);
    await admin.close();
  }
  const database: DatabaseHandle = openDatabase({
    url: databaseUrl ?? null,
    sqliteFile: path.join(dir, 'service.db'),
    ...(schema ? { schema } : {}),
  });
  await migrateToLatest(database.db);
  const drop = async () => {
    if (!databaseUrl || !schema) return;
    const admin = openDatabase({ url: databaseUrl });
    await sql.raw(`drop schema ${schema} cascade`).execute(admin.db);
    await admin.close();
  };
  return { database, drop };
}
