/**
 * Scanner benchmarks (issue 3, section 3):
 * - a full scan of the 200-page local fixture site with the shipped politeness limits
 *   (`scanner.concurrency`, `scanner.delay_ms` from mcp.config.json), wall time; target < 5 s;
 * - GET /leaderboard over HTTP with 100,000 scored public domains in SQLite, p99 of sequential
 *   requests for the first page and for pages deep in the ranking (cursor); target p99 < 50 ms.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { openDatabase } from '../db/database.ts';
import { migrateToLatest } from '../db/migrate.ts';
import { loadConfig } from '../servers/config.ts';
import { crawlSite } from '../servers/features/scans/crawler.ts';
import { periodOf } from '../servers/features/scans/scores.ts';
import { tierOf } from '../servers/features/scans/scoring.ts';
import { createSafeFetch } from '../servers/outbound/safe-fetch.ts';
import { startService } from '../servers/server.ts';
import { startFixtureSite } from '../test/helpers/fixture-sites.ts';

export interface FixtureScanResult {
  pages: number;
  requests: number;
  wallMs: number;
  concurrency: number;
  delayMs: number;
}

export async function measureFixtureScan(): Promise<FixtureScanResult> {
  const { scanner } = loadConfig({ env: {} });
  const site = await startFixtureSite('large');
  const fetch = createSafeFetch({
    allowPrivateNetworks: true,
    timeoutMs: scanner.request_timeout_ms,
    userAgent: scanner.user_agent,
  });
  try {
    const started = performance.now();
    const facts = await crawlSite({
      domain: site.domain,
      fetch,
      userAgent: scanner.user_agent,
      schemes: ['http'],
      limits: { ...scanner, max_pages: 200 },
    });
    return {
      pages: facts.pages.length,
      requests: facts.crawl.requests,
      wallMs: performance.now() - started,
      concurrency: scanner.concurrency,
      delayMs: scanner.delay_ms,
    };
  } finally {
    await fetch.close();
    await site.close();
  }
}

export interface LeaderboardResult {
  domains: number;
  seedMs: number;
  requests: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

export async function measureLeaderboard(domains = 100_000, requests = 2_000): Promise<LeaderboardResult> {
  const dir = mkdtempSync(path.join(tmpdir(), 'agent-service-bench-scans-'));
  const database = openDatabase({ sqliteFile: path.join(dir, 'service.db') });
  try {
    await migrateToLatest(database.db);
    const seedStarted = performance.now();
    const now = new Date();
    const yesterday = periodOf(new Date(now.getTime() - 86_400_000));
    const rows = Array.from({ length: domains }, (_, i) => {
      const score = Math.floor(Math.random() * 101);
      return {
        domain: `site-${i}.example.com`,
        scan_id: randomUUID(),
        depth: 'full' as const,
        score,
        tier: tierOf(score).id,
        scanned_at: now.toISOString(),
        has_llms_txt: i % 3 === 0 ? 1 : 0,
        has_robots_ai_rules: i % 2,
        has_api_catalog: i % 10 === 0 ? 1 : 0,
        has_mcp: i % 20 === 0 ? 1 : 0,
        has_markdown: i % 7 === 0 ? 1 : 0,
        // The scan shown before, so every entry carries its movement since the last scan.
        previous_scan_id: randomUUID(),
        previous_score: Math.max(0, score - 3),
      };
    });
    for (let i = 0; i < rows.length; i += 500) {
      await database.db
        .insertInto('domain_scores')
        .values(rows.slice(i, i + 500))
        .execute();
    }
    // Yesterday's ranks, so every entry carries movement.
    const ranked = [...rows].sort((a, b) => b.score - a.score || a.domain.localeCompare(b.domain));
    const snapshot = ranked.map((r, i) => ({
      period: yesterday,
      domain: r.domain,
      rank: i + 1 + (i % 5) - 2,
      score: r.score,
      tier: r.tier,
    }));
    for (let i = 0; i < snapshot.length; i += 500) {
      await database.db
        .insertInto('leaderboard_snapshots')
        .values(snapshot.slice(i, i + 500))
        .execute();
    }
    await database.db
      .insertInto('readiness_snapshots')
      .values({ period: yesterday, taken_at: now.toISOString(), domains, tiers: '{}', adoption: '{}' })
      .execute();
    const seedMs = performance.now() - seedStarted;

    const service = await startService({
      env: {},
      overrides: { port: 0, host: '127.0.0.1', data_dir: dir, log_level: 'silent' },
      database,
      log: pino({ level: 'silent' }),
      background: false,
    });
    try {
      const api = service.config.public_api_url;
      // Cursors deep in the ranking, collected by walking pages once.
      const cursors: string[] = [];
      let cursor: string | null = null;
      for (let page = 0; page < 40; page++) {
        const url = `${api}/leaderboard?limit=100${cursor ? `&cursor=${cursor}` : ''}`;
        const body = (await (await fetch(url)).json()) as { next_cursor: string | null };
        if (!body.next_cursor) break;
        cursor = body.next_cursor;
        cursors.push(cursor);
      }
      const timings: number[] = [];
      for (let i = 0; i < requests; i++) {
        const c = i % 2 === 0 ? null : cursors[i % cursors.length];
        const started = performance.now();
        const res = await fetch(`${api}/leaderboard?limit=25${c ? `&cursor=${c}` : ''}`);
        await res.arrayBuffer();
        timings.push(performance.now() - started);
        if (res.status !== 200) throw new Error(`GET /leaderboard answered ${res.status}`);
      }
      timings.sort((a, b) => a - b);
      const at = (q: number) =>
        timings[Math.min(timings.length - 1, Math.floor(q * timings.length))] as number;
      return { domains, seedMs, requests, p50Ms: at(0.5), p99Ms: at(0.99), maxMs: timings.at(-1) as number };
    } finally {
      await service.stop();
    }
  } finally {
    await database.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
