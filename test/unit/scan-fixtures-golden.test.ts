/**
 * The scanner's results on every fixture site, pinned: each site is crawled and scored, and what
 * came out is compared with the copy recorded in `test/fixtures/scan-golden/<kind>.json`. The
 * crawler and the scoring may be reorganised freely; what they find and score may not change
 * unnoticed. A deliberate change records the files again: `UPDATE_SCAN_GOLDEN=1 npx vitest run
 * test/unit/scan-fixtures-golden.test.ts`, and the diff shows what changed.
 *
 * One request at a time (`concurrency: 1`, no delay), so the order of the recorded requests
 * (evidence), of the pages and of the progress reports is the same on every run. Left out or
 * masked, because they differ between runs of the same code:
 * - the fixture's port: `127.0.0.1:<port>` reads `fixture.test` (sites listen on port 0);
 * - every `duration_ms` (evidence and crawl) reads 0;
 * - the random tail of the made-up `/.well-known/` path the crawler asks for;
 * - the `catchAllJson` fixture's request ids (a counter and a random tail of random length), and
 *   the lengths and SHA-256 digests of its answers, which hold them;
 * - x402's `PAYMENT-REQUIRED` header is recorded decoded, so that its URL's port can be masked.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../servers/config.ts';
import { type CrawlLimits, type CrawlProgress, crawlSite } from '../../servers/features/scans/crawler.ts';
import type { RequestEvidence } from '../../servers/features/scans/evidence.ts';
import { type LiveTraffic, scoreSite } from '../../servers/features/scans/scoring.ts';
import { createSafeFetch, type SafeFetch } from '../../servers/outbound/safe-fetch.ts';
import { type FixtureKind, scannerToken, startFixtureSite } from '../helpers/fixture-sites.ts';

const kinds = {
  wellPrepared: true,
  bare: true,
  hostile: true,
  large: true,
  spa: true,
  spaWithDocuments: true,
  catchAllJson: true,
  catchAllText: true,
  merchant: true,
  brand: true,
  brandConflicting: true,
  people: true,
  blog: true,
  blogNoVary: true,
  blogDeadLinks: true,
  shop: true,
  blocker: true,
  lyingCard: true,
  badIssuer: true,
  apiProduct: true,
  webmcpTools: true,
  webmcpBroken: true,
  webmcpPrivate: true,
  webmcpHang: true,
  webmcpSpin: true,
  mcpBothEras: true,
  paidApi: true,
  shopCommerce: true,
  shopBrokenCommerce: true,
} satisfies Record<FixtureKind, true>;

const userAgent = `${scannerToken}/0.1.0 (+http://localhost/scanner)`;
const limits: CrawlLimits = {
  max_pages: 30,
  max_bytes: 256 * 1024,
  // The hostile site's response that never comes waits this long; every other answer is local.
  request_timeout_ms: 2_000,
  scan_timeout_ms: 120_000,
  concurrency: 1,
  delay_ms: 0,
  max_redirects: 5,
  max_sitemaps: 5,
};

const traffic: LiveTraffic = {
  window_days: 30,
  events: 10_000,
  ai_events: 1_200,
  ai_share: 0.12,
  agents_seen: ['GPTBot', 'ChatGPT-User', 'ClaudeBot', 'PerplexityBot'],
  ai_referrals: 400,
  previous_ai_events: 800,
  previous_ai_referrals: 600,
  last_event_at: '2026-11-20T10:00:00.000Z',
};

const goldenDir = path.join(projectRoot, 'test/fixtures/scan-golden');
const update = process.env.UPDATE_SCAN_GOLDEN === '1';

/** What a scan of one fixture produced, with the volatile parts masked (see the header). */
async function scanOf(kind: FixtureKind, fetch: SafeFetch): Promise<string> {
  const site = await startFixtureSite(kind);
  try {
    const progress: CrawlProgress[] = [];
    const pagesRead: { url: string; html_chars: number; title: string | null }[] = [];
    const facts = await crawlSite({
      domain: site.domain,
      fetch,
      userAgent,
      limits,
      schemes: ['https', 'http'],
      onProgress: (p) => progress.push(p),
      onPage: (p) => pagesRead.push({ url: p.url, html_chars: p.html.length, title: p.facts.title }),
    });
    const scores = {
      without_pixel: scoreSite(facts, null),
      with_traffic: scoreSite(facts, traffic, { score: 40, scanned_at: '2026-11-01T00:00:00.000Z' }),
      as_api: scoreSite(facts, null, null, { profile: 'api' }),
    };
    const record = {
      facts,
      progress,
      pages_read: pagesRead,
      requests_to_site: site.requests,
      scores: evidenceAsIndexes(scores, facts.requests ?? []),
    };
    return `${JSON.stringify(mask(record, site.domain, kind), null, 2)}\n`;
  } finally {
    await site.close();
  }
}

/**
 * A score's checks and findings carry requests of `facts.requests`: recorded as their indexes there
 * (`#3`), which keeps each file a few hundred kilobytes smaller and pins the same thing.
 */
function evidenceAsIndexes(scores: object, requests: RequestEvidence[]): unknown {
  // Two requests alike but for their durations read as the first of them.
  const timeless = requests.map((r) => ({ ...r, duration_ms: 0 }));
  return JSON.parse(JSON.stringify(scores), (key, value) => {
    if (key !== 'evidence' || !Array.isArray(value)) return value;
    return value.map((entry) => {
      const index = timeless.findIndex((r) => isDeepStrictEqual(r, { ...entry, duration_ms: 0 }));
      return index >= 0 ? `#${index}` : entry;
    });
  });
}

function mask(record: unknown, domain: string, kind: FixtureKind): unknown {
  const text = JSON.stringify(record, (key, value) =>
    // x402's PAYMENT-REQUIRED header is base64 JSON naming the resource's URL, port and all.
    key === 'payment-required' && typeof value === 'string'
      ? `decoded: ${Buffer.from(value.replace(/\.\.\.$/, ''), 'base64').toString('utf8')}`
      : value,
  )
    .split(domain)
    .join('fixture.test')
    .replace(/agent-service-probe-[0-9a-f]{16}/g, 'agent-service-probe-RANDOM')
    .replace(/req-\d+-[a-z0-9]+/g, 'req-N-RANDOM');
  return JSON.parse(text, (key, value) => {
    if (key === 'duration_ms' && typeof value === 'number') return 0;
    if (kind === 'catchAllJson' && ['sha256', 'bytes', 'content-length'].includes(key)) return 'MASKED';
    return value;
  });
}

describe('scanner results on every fixture site', () => {
  let fetch: SafeFetch;
  beforeAll(() => {
    fetch = createSafeFetch({ allowPrivateNetworks: true, timeoutMs: 5_000, userAgent });
    if (update) mkdirSync(goldenDir, { recursive: true });
  });
  afterAll(() => fetch?.close());

  for (const kind of Object.keys(kinds) as FixtureKind[]) {
    it(`${kind}: the same facts, evidence and scores as recorded`, async () => {
      const file = path.join(goldenDir, `${kind}.json`);
      const got = await scanOf(kind, fetch);
      if (update || !existsSync(file)) {
        expect(update, `${file} is missing: record it with UPDATE_SCAN_GOLDEN=1`).toBe(true);
        writeFileSync(file, got);
        return;
      }
      const recorded = readFileSync(file, 'utf8');
      // The answer of this run beside the recorded one, for `diff` when they differ.
      if (got !== recorded)
        writeFileSync(path.join(mkdtempSync(path.join(tmpdir(), 'scan-golden-')), `${kind}.json`), got);
      expect(got).toBe(recorded);
    });
  }
});
