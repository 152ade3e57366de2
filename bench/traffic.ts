/**
 * Traffic benchmarks (issue 3 section 2):
 * - `trafficScenarios`: beacon hits and 100-event server-side batches against the running service,
 *   for `run.ts` to pair with the bare baseline; `countStoredEvents` checks afterwards (the service
 *   stopped with SIGTERM, so its queue drained) that every acknowledged event is in the database;
 * - `measureSiteStats`: `GET /site-stats` (the TrafficService query behind it) over 10 million stored
 *   events, seeded with one bulk SQL statement (recursive CTE on SQLite, generate_series on
 *   PostgreSQL) and rolled up with INSERT ... SELECT ... GROUP BY, as ingestion would have.
 *
 * Environment: BENCH_TRAFFIC_EVENTS (default 10,000,000), BENCH_DATABASE_URL (also measure on PostgreSQL).
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type autocannon from 'autocannon';
import { sql } from 'kysely';
import { pino } from 'pino';
import { type DatabaseHandle, type OpenDatabaseOptions, openDatabase } from '../db/database.ts';
import { migrateToLatest } from '../db/migrate.ts';
import { loadConfig } from '../servers/config.ts';
import { createServices } from '../servers/services.ts';

const chrome =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const gptbot =
  'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.1; +https://openai.com/gptbot)';

export const BATCH_SIZE = 100;

export interface TrafficTarget {
  siteId: string;
  key: string;
  beacon: autocannon.Options;
  batch: autocannon.Options;
}

/** Creates an account and a site on the running service and returns the two load scenarios. */
export async function trafficScenarios(serviceUrl: string): Promise<TrafficTarget> {
  const api = `${serviceUrl}/api/public`;
  const account = await fetch(`${api}/account`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: `bench-${Date.now()}@example.com`, password: 'correct horse battery' }),
  });
  const key: string = ((await account.json()) as { key: { service_key: string } }).key.service_key;
  const install = await fetch(`${api}/pixel-install`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-service-key': key },
    body: JSON.stringify({ domain: 'bench-traffic.com' }),
  });
  const siteId: string = ((await install.json()) as { site_id: string }).site_id;
  const page = encodeURIComponent('https://bench-traffic.com/products/42?utm_source=chatgpt.com');
  const events = Array.from({ length: BATCH_SIZE }, (_, i) => ({
    ts: new Date().toISOString(),
    url: `/docs/page-${i % 20}`,
    user_agent: i % 3 === 0 ? gptbot : chrome,
    ip: `203.0.113.${i % 250}`,
    status: 200,
  }));
  return {
    siteId,
    key,
    beacon: {
      url: `${api}/beacon?site=${siteId}&url=${page}&ref=${encodeURIComponent('https://chatgpt.com/')}`,
      headers: { 'user-agent': chrome },
    },
    batch: {
      url: `${api}/events`,
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-key': key },
      body: JSON.stringify({ site_id: siteId, events }),
    },
  };
}

/** Events stored for the site (read after the service stopped). */
export async function countStoredEvents(database: OpenDatabaseOptions, siteId: string): Promise<number> {
  const handle = openDatabase(database);
  try {
    const row = await handle.db
      .selectFrom('traffic_events')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('site_id', '=', siteId)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  } finally {
    await handle.close();
  }
}

export interface SiteStatsMeasure {
  dialect: string;
  events: number;
  seedMs: number;
  calls: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

const SITES = 20;
const DAYS = 90;
const PATHS = 100;
const LAST_DAY = '2026-11-20';

/** Seeds `events` over 20 sites and 90 days, then times site stats for 30-day periods. */
export async function measureSiteStats(events: number, databaseUrl?: string): Promise<SiteStatsMeasure> {
  const dir = mkdtempSync(path.join(tmpdir(), 'agent-service-bench-stats-'));
  let handle: DatabaseHandle;
  let schema: string | undefined;
  if (databaseUrl) {
    schema = `bench_${randomUUID().slice(0, 8)}`;
    const admin = openDatabase({ url: databaseUrl });
    await sql.raw(`create schema ${schema}`).execute(admin.db);
    await admin.close();
    handle = openDatabase({ url: databaseUrl, schema });
  } else {
    handle = openDatabase({ sqliteFile: path.join(dir, 'service.db') });
  }
  try {
    await migrateToLatest(handle.db);
    const accountId = randomUUID();
    const at = new Date().toISOString();
    await handle.db
      .insertInto('accounts')
      .values({ id: accountId, email: 'bench@example.com', password_hash: null, created_at: at })
      .execute();
    const siteIds = Array.from({ length: SITES }, () => randomUUID());
    await handle.db
      .insertInto('sites')
      .values(
        siteIds.map((id, i) => ({
          id,
          account_id: accountId,
          domain: `bench-${i}.com`,
          verification_token: 'bench',
          verified_at: at,
          verification_method: 'http',
          share_network: 0,
          created_at: at,
        })),
      )
      .execute();
    const started = performance.now();
    await seed(handle, siteIds, events);
    const seedMs = performance.now() - started;

    const config = loadConfig({ env: {}, overrides: { port: 0, data_dir: dir } });
    const services = await createServices({
      config,
      database: handle,
      log: pino({ level: 'silent' }),
      now: () => new Date(`${LAST_DAY}T18:00:00Z`),
    });
    const times: number[] = [];
    const calls = 400;
    for (let i = 0; i < calls + 20; i++) {
      const siteId = siteIds[i % SITES] as string;
      const t0 = performance.now();
      const result = await services.traffic.siteStats(accountId, { site_id: siteId, days: 30 });
      const ms = performance.now() - t0;
      if (i === 0 && (result.sites[0]?.totals.events ?? 0) === 0) throw new Error('seeded events not found');
      if (i >= 20) times.push(ms);
    }
    await services.stop();
    times.sort((a, b) => a - b);
    const pick = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))] as number;
    return {
      dialect: handle.dialect,
      events,
      seedMs,
      calls,
      p50Ms: pick(0.5),
      p99Ms: pick(0.99),
      maxMs: times.at(-1) as number,
    };
  } finally {
    await handle.close();
    if (databaseUrl && schema) {
      const admin = openDatabase({ url: databaseUrl });
      await sql.raw(`drop schema ${schema} cascade`).execute(admin.db);
      await admin.close();
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * One INSERT ... SELECT for the raw events (category mix: 55% human, 5% AI-referred, 10% training,
 * 7% AI search, 8% AI user agents, 2% browser agents, 13% other bots), then the rollups grouped
 * from them.
 */
async function seed(handle: DatabaseHandle, siteIds: string[], events: number): Promise<void> {
  const pg = handle.dialect === 'postgres';
  const siteList = sql.join(siteIds.map((id, i) => sql`(${i}, ${id})`));
  const category = sql.raw(`case
      when b < 55 then 'human' when b < 60 then 'ai_referred' when b < 70 then 'ai_training'
      when b < 77 then 'ai_search' when b < 85 then 'ai_user_agent' when b < 87 then 'browser_agent'
      else 'other_bot' end`);
  const agent = sql.raw(`case
      when b < 55 then null
      when b < 60 then (case k when 0 then 'ChatGPT' when 1 then 'Perplexity' else 'Gemini' end)
      when b < 70 then (case k when 0 then 'GPTBot' when 1 then 'ClaudeBot' else 'CCBot' end)
      when b < 77 then (case k when 0 then 'OAI-SearchBot' when 1 then 'PerplexityBot' else 'Claude-SearchBot' end)
      when b < 85 then (case k when 0 then 'ChatGPT-User' when 1 then 'Claude-User' else 'Perplexity-User' end)
      when b < 87 then 'ChatGPT Agent'
      else (case k when 0 then 'Googlebot' when 1 then 'bingbot' else 'curl' end) end`);
  if (pg) {
    await sql`
      insert into traffic_events (site_id, occurred_at, received_at, source, category, agent, path, referrer_host, status, ip_prefix, user_agent)
      select s.id::uuid, t.at, t.at, 'server', ${category}, ${agent}, '/p' || ((i * 7) % ${PATHS}), null, 200, '203.0.113.0/24', 'bench'
      from (
        select i, (i % 100) as b, ((i / 100) % 3) as k, (i % ${SITES}) as site,
          (${LAST_DAY}::date - ((i / ${SITES}) % ${DAYS})::int)::timestamp at time zone 'UTC' + interval '12 hours' as at
        from generate_series(0, ${events - 1}::bigint) as i
      ) t join (values ${siteList}) as s(idx, id) on s.idx::bigint = t.site`.execute(handle.db);
    await sql`
      insert into traffic_daily (site_id, day, category, agent, operator, events)
      select site_id, to_char(occurred_at at time zone 'UTC', 'YYYY-MM-DD'), category, coalesce(agent, ''), null, count(*)
      from traffic_events group by 1, 2, 3, 4`.execute(handle.db);
    await sql`
      insert into traffic_pages_daily (site_id, day, category, path, events)
      select site_id, to_char(occurred_at at time zone 'UTC', 'YYYY-MM-DD'), category, path, count(*)
      from traffic_events group by 1, 2, 3, 4`.execute(handle.db);
    // The steady state of a live database: without this, autovacuum of the freshly bulk-loaded raw
    // table competes with the measured queries.
    await sql`vacuum analyze`.execute(handle.db);
    return;
  }
  await sql`
    insert into traffic_events (site_id, occurred_at, received_at, source, category, agent, path, referrer_host, status, ip_prefix, user_agent)
    with recursive n(i) as (select 0 union all select i + 1 from n where i < ${events - 1}),
      t as (
        select i, (i % 100) as b, ((i / 100) % 3) as k, (i % ${SITES}) as site,
          strftime('%Y-%m-%dT12:00:00.000Z', ${LAST_DAY}, '-' || ((i / ${SITES}) % ${DAYS}) || ' days') as at
        from n
      ),
      s(idx, id) as (values ${siteList})
    select s.id, t.at, t.at, 'server', ${category}, ${agent}, '/p' || ((i * 7) % ${PATHS}), null, 200, '203.0.113.0/24', 'bench'
    from t join s on s.idx = t.site`.execute(handle.db);
  await sql`
    insert into traffic_daily (site_id, day, category, agent, operator, events)
    select site_id, substr(occurred_at, 1, 10), category, coalesce(agent, ''), null, count(*)
    from traffic_events group by 1, 2, 3, 4`.execute(handle.db);
  await sql`
    insert into traffic_pages_daily (site_id, day, category, path, events)
    select site_id, substr(occurred_at, 1, 10), category, path, count(*)
    from traffic_events group by 1, 2, 3, 4`.execute(handle.db);
  await sql`analyze`.execute(handle.db);
}
