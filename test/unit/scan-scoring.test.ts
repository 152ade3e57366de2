import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../servers/config.ts';
import { crawlSite, type SiteFacts } from '../../servers/features/scans/crawler.ts';
import {
  checks,
  components,
  type LiveTraffic,
  scoreSite,
  tierOf,
  tiers,
} from '../../servers/features/scans/scoring.ts';
import { createSafeFetch, type SafeFetch } from '../../servers/outbound/safe-fetch.ts';
import { scannerToken, startFixtureSite } from '../helpers/fixture-sites.ts';

const traffic: LiveTraffic = {
  window_days: 30,
  events: 10_000,
  ai_events: 1_200,
  ai_share: 0.12,
  agents_seen: ['GPTBot', 'ChatGPT-User', 'ClaudeBot', 'PerplexityBot', 'OAI-SearchBot', 'Claude-User'],
  ai_referrals: 1_000,
  previous_ai_events: 800,
  previous_ai_referrals: 600,
  last_event_at: '2026-11-20T10:00:00.000Z',
};

describe('Signal Strength scoring', () => {
  let fetch: SafeFetch;
  let well: SiteFacts;
  let bare: SiteFacts;
  let spa: SiteFacts;
  let spaWithDocuments: SiteFacts;

  beforeAll(async () => {
    const userAgent = `${scannerToken}/0.1.0`;
    fetch = createSafeFetch({ allowPrivateNetworks: true, timeoutMs: 2000, userAgent });
    const limits = {
      max_pages: 20,
      max_bytes: 1_000_000,
      request_timeout_ms: 2000,
      scan_timeout_ms: 20_000,
      concurrency: 4,
      delay_ms: 0,
      max_redirects: 5,
      max_sitemaps: 5,
    };
    const crawl = async (kind: Parameters<typeof startFixtureSite>[0]) => {
      const site = await startFixtureSite(kind);
      try {
        return await crawlSite({ domain: site.domain, fetch, userAgent, limits, schemes: ['http'] });
      } finally {
        await site.close();
      }
    };
    [well, bare, spa, spaWithDocuments] = await Promise.all([
      crawl('wellPrepared'),
      crawl('bare'),
      crawl('spa'),
      crawl('spaWithDocuments'),
    ]);
  });
  afterAll(() => fetch?.close());

  it('weights sum to 100 overall and within every component', () => {
    expect(components.reduce((n, c) => n + c.weight, 0)).toBe(100);
    for (const c of components) {
      expect(
        checks.filter((k) => k.component === c.id).reduce((n, k) => n + k.weight, 0),
        c.id,
      ).toBe(100);
    }
  });

  it('docs/reference/scoring.md documents every check with its weight, every component and every tier', () => {
    const doc = readFileSync(path.join(projectRoot, 'docs/reference/scoring.md'), 'utf8');
    for (const c of components) expect(doc).toContain(`| ${c.name} | ${c.weight} |`);
    for (const k of checks) expect(doc, k.id).toMatch(new RegExp(`\\| \`${k.id}\` \\| ${k.weight} \\|`));
    for (const t of tiers) expect(doc).toContain(`| ${t.name} | ${t.min}-${t.max} |`);
    expect(doc).toContain('`soft_404`');
  });

  it('tiers cover 0-100 without gaps', () => {
    for (let s = 0; s <= 100; s++) {
      const t = tierOf(s);
      expect(s >= t.min && s <= t.max, String(s)).toBe(true);
    }
  });

  it('without a pixel, Live AI Traffic is "no data", not zero, and the weights are renormalized', () => {
    const result = scoreSite(well, null);
    const live = result.components.find((c) => c.id === 'live_ai_traffic');
    expect(live).toMatchObject({ status: 'no_data', score: null });
    expect(live?.checks.every((k) => k.score === null)).toBe(true);
    expect(result.components.find((c) => c.id === 'engagement_velocity')?.status).toBe('no_data');
    expect(result.note).toMatch(/Live AI Traffic and Engagement Velocity had no data/);
    const scored = result.components.filter((c) => c.score !== null);
    const expected = Math.round(
      scored.reduce((n, c) => n + (c.score as number) * c.weight, 0) /
        scored.reduce((n, c) => n + c.weight, 0),
    );
    expect(result.score).toBe(expected);
    expect(result.recommended_next_tools).toContain('install_pixel');
    expect(result.findings.find((f) => f.id === 'no_pixel')).toMatchObject({ component: 'live_ai_traffic' });
  });

  it('ranks a well-prepared site far above a bare one, with findings that say what to fix', () => {
    const good = scoreSite(well, null);
    const poor = scoreSite(bare, null);
    expect(good.score).toBeGreaterThanOrEqual(85);
    expect(good.tier.id).toBe('beacon');
    expect(poor.score).toBeLessThan(25);
    expect(poor.tier.id).toBe('dark');
    const llms = poor.findings.find((f) => f.id === 'llms_txt');
    expect(llms).toMatchObject({ component: 'citation_signals', severity: 'warning' });
    expect(llms?.evidence_url).toMatch(/\/llms\.txt$/);
    expect(llms?.fix).toMatch(/H1/);
    for (const f of poor.findings) {
      expect(['critical', 'warning', 'info']).toContain(f.severity);
      expect(f.seen.length).toBeGreaterThan(0);
      expect(f.fix.length).toBeGreaterThan(0);
    }
    expect(poor.recommended_next_tools).toEqual(
      expect.arrayContaining(['generate_llms_txt', 'install_pixel', 'request_scan']),
    );
    // Critical findings first.
    const order = poor.findings.map((f) => f.severity);
    expect(order.indexOf('critical')).toBeLessThanOrEqual(order.indexOf('info'));
  });

  it('gives a site that answers every path with its app shell nothing for documents it does not have', () => {
    const checkScores = (facts: SiteFacts) => {
      const result = scoreSite(facts, null);
      const technical = result.components.find((c) => c.id === 'technical_foundation');
      const by = Object.fromEntries((technical?.checks ?? []).map((k) => [k.id, k.score]));
      return { result, by };
    };
    const { result, by } = checkScores(spa);
    // Before the soft-404 rule each of these earned 0.5 ("present but invalid"): 12.5 points.
    // A site with no machine interface is a content site: the API checks do not apply to it.
    expect(result.profile.id).toBe('content');
    expect(by).toMatchObject({ api_catalog: null, mcp_server_card: null, openapi: null, x402: null });
    // Scored as an API product, every one of them earns nothing.
    const asApi = scoreSite(spa, null, null, { profile: 'api' });
    const apiBy = Object.fromEntries(
      (asApi.components.find((c) => c.id === 'technical_foundation')?.checks ?? []).map((k) => [
        k.id,
        k.score,
      ]),
    );
    expect(apiBy).toMatchObject({
      api_catalog: 0,
      mcp_server_card: 0,
      openapi: 0,
      x402: 0,
      oauth_discovery: 0,
    });
    expect(asApi.profile).toMatchObject({ id: 'api', detected: 'content', source: 'requested' });
    expect(by).toMatchObject({ robots_txt: 0, content_signals: 0 });
    const finding = result.findings.find((f) => f.id === 'soft_404');
    expect(finding).toMatchObject({ component: 'technical_foundation', severity: 'warning' });
    expect(finding?.seen).toMatch(/HTTP 200 text\/html instead of 404/);
    expect(finding?.seen).toMatch(/\/\.well-known\/api-catalog/);
    expect(finding?.fix).toMatch(/404/);
    expect(finding?.evidence_url).toMatch(/\/\.well-known\/agent-service-probe-/);
    expect(asApi.findings.find((f) => f.id === 'x402')?.seen).toMatch(/soft 404/);
    expect(result.recommended_next_tools).toContain('request_scan');

    // Real documents behind the same app shell keep their credit, partial credit included.
    const real = checkScores(spaWithDocuments);
    expect(real.by).toMatchObject({
      robots_txt: 1,
      api_catalog: 1,
      mcp_server_card: 1,
      openapi: 1,
      x402: 0.5,
    });
    expect(real.result.findings.find((f) => f.id === 'soft_404')).toBeDefined();
    expect(real.result.score).toBeGreaterThan(result.score);

    // A site that answers unknown paths with 404 hears nothing about it.
    expect(scoreSite(well, null).findings.find((f) => f.id === 'soft_404')).toBeUndefined();
  });

  it('scores live traffic and velocity when the pixel and a previous scan give data', () => {
    const result = scoreSite(well, traffic, { score: 60, scanned_at: '2026-11-01T00:00:00.000Z' });
    expect(result.note).toBeNull();
    expect(result.components.every((c) => c.status === 'scored')).toBe(true);
    expect(result.components.find((c) => c.id === 'live_ai_traffic')?.score).toBe(100);
    const velocity = result.components.find((c) => c.id === 'engagement_velocity');
    expect(velocity?.score).toBeGreaterThan(50);
    expect(result.recommended_next_tools).not.toContain('install_pixel');
  });

  it('scores a pixel with no AI traffic as zero traffic, not as no data', () => {
    const quiet = {
      ...traffic,
      ai_events: 0,
      ai_share: 0,
      agents_seen: [],
      ai_referrals: 0,
      previous_ai_events: null,
    };
    const result = scoreSite(bare, quiet);
    expect(result.components.find((c) => c.id === 'live_ai_traffic')).toMatchObject({
      status: 'scored',
      score: 0,
    });
    expect(result.components.find((c) => c.id === 'engagement_velocity')?.status).toBe('no_data');
  });
});
