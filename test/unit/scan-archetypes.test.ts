/**
 * Scoring version 2 (with issue 35's commerce and mcp_era checks) against one fixture site per archetype (docs/reference/scoring.md "Profiles"), each with the
 * exact score, tier, profile and findings it must get, and the four lies the verification catches:
 * a server card that lists a tool the server does not serve, an OAuth chain whose OpenID
 * configuration names another issuer, markdown without Vary: Accept, and llms.txt with dead links.
 * Live traffic is absent (no pixel), so Live AI Traffic and Engagement Velocity are renormalized away.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crawlSite, type SiteFacts } from '../../servers/features/scans/crawler.ts';
import { fixSheet } from '../../servers/features/scans/fix-sheet.ts';
import { type SignalScore, scoreSite } from '../../servers/features/scans/scoring.ts';
import { createSafeFetch, type SafeFetch } from '../../servers/outbound/safe-fetch.ts';
import { type FixtureKind, scannerToken, startFixtureSite } from '../helpers/fixture-sites.ts';

const kinds = [
  'blog',
  'shop',
  'apiProduct',
  'wellPrepared',
  'spa',
  'blocker',
  'lyingCard',
  'badIssuer',
  'blogNoVary',
  'blogDeadLinks',
  'shopCommerce',
  'mcpBothEras',
] as const satisfies readonly FixtureKind[];

/** Score, tier, profile and the ids of the findings, in order, for each archetype. */
const expected: Record<
  (typeof kinds)[number],
  { score: number; tier: string; profile: string; findings: string[] }
> = {
  blog: { score: 98, tier: 'beacon', profile: 'content', findings: ['https', 'no_pixel'] },
  shop: { score: 96, tier: 'beacon', profile: 'shop', findings: ['https', 'commerce', 'x402', 'no_pixel'] },
  apiProduct: {
    score: 96,
    tier: 'beacon',
    profile: 'api',
    findings: ['https', 'a2a_agent_card', 'agent_skills', 'x402', 'json_ld', 'no_pixel'],
  },
  wellPrepared: { score: 98, tier: 'beacon', profile: 'api', findings: ['https', 'mcp_era', 'no_pixel'] },
  spa: { score: 30, tier: 'faint', profile: 'content', findings: [] },
  blocker: { score: 49, tier: 'faint', profile: 'content', findings: ['door_test', 'https', 'no_pixel'] },
  lyingCard: {
    score: 97,
    tier: 'beacon',
    profile: 'api',
    findings: ['https', 'mcp_live', 'mcp_era', 'no_pixel'],
  },
  badIssuer: {
    score: 97,
    tier: 'beacon',
    profile: 'api',
    findings: ['https', 'oauth_chain', 'mcp_era', 'no_pixel'],
  },
  blogNoVary: {
    score: 97,
    tier: 'beacon',
    profile: 'content',
    findings: ['markdown_negotiation', 'https', 'no_pixel'],
  },
  blogDeadLinks: {
    score: 97,
    tier: 'beacon',
    profile: 'content',
    findings: ['https', 'llms_txt_links', 'no_pixel'],
  },
  shopCommerce: { score: 97, tier: 'beacon', profile: 'shop', findings: ['https', 'x402', 'no_pixel'] },
  mcpBothEras: { score: 99, tier: 'beacon', profile: 'api', findings: ['https', 'no_pixel'] },
};

describe('Signal Strength archetypes (scoring version 2)', () => {
  let fetch: SafeFetch;
  const facts = new Map<string, SiteFacts>();
  const scores = new Map<string, SignalScore>();

  beforeAll(async () => {
    const userAgent = `${scannerToken}/0.1.0`;
    fetch = createSafeFetch({ allowPrivateNetworks: true, timeoutMs: 3000, userAgent });
    const limits = {
      max_pages: 20,
      max_bytes: 1_000_000,
      request_timeout_ms: 3000,
      scan_timeout_ms: 30_000,
      concurrency: 4,
      delay_ms: 0,
      max_redirects: 5,
      max_sitemaps: 5,
    };
    for (const kind of kinds) {
      const site = await startFixtureSite(kind);
      try {
        const f = await crawlSite({ domain: site.domain, fetch, userAgent, limits, schemes: ['http'] });
        facts.set(kind, f);
        scores.set(kind, scoreSite(f, null));
      } finally {
        await site.close();
      }
    }
  }, 120_000);
  afterAll(() => fetch?.close());

  it.each(kinds)('%s gets its exact score, tier, profile and findings', (kind) => {
    const result = scores.get(kind) as SignalScore;
    const want = expected[kind];
    const ids = result.findings.map((f) => f.id);
    expect({ score: result.score, tier: result.tier.id, profile: result.profile.id }, ids.join(', ')).toEqual(
      {
        score: want.score,
        tier: want.tier,
        profile: want.profile,
      },
    );
    if (kind !== 'spa') expect(ids).toEqual(want.findings);
    expect(result.scoring_version).toBe(2);
  });

  it('marks API checks not applicable to a blog, and scores it lower when asked to as an API product', () => {
    const blog = scores.get('blog') as SignalScore;
    const technical = blog.components.find((c) => c.id === 'technical_foundation');
    for (const id of [
      'mcp_server_card',
      'mcp_live',
      'oauth_discovery',
      'oauth_chain',
      'x402',
      'api_catalog',
    ]) {
      expect(
        technical?.checks.find((k) => k.id === id),
        id,
      ).toMatchObject({ score: null, status: 'not_applicable' });
    }
    const asApi = scoreSite(facts.get('blog') as SiteFacts, null, null, { profile: 'api' });
    expect(asApi.profile).toMatchObject({ id: 'api', detected: 'content', source: 'requested' });
    expect(asApi.score).toBeLessThan(blog.score);
    expect(asApi.findings.map((f) => f.id)).toContain('mcp_server_card');
  });

  it('catches a server card that lists a tool the live server does not serve', () => {
    const finding = scores.get('lyingCard')?.findings.find((f) => f.id === 'mcp_live');
    expect(finding).toMatchObject({ severity: 'warning', component: 'technical_foundation' });
    expect(finding?.seen).toMatch(/on the card only: buy_widget/);
    // The evidence shows the MCP exchange: initialize and tools/list as POSTs to the endpoint.
    expect(
      finding?.evidence.filter((r) => r.method === 'POST' && r.url.endsWith('/mcp')).length,
    ).toBeGreaterThanOrEqual(2);
    expect(facts.get('wellPrepared')?.verification?.mcp?.live_tools).toEqual(['list_widgets', 'get_widget']);
  });

  it('catches an OAuth chain whose OpenID configuration names another issuer', () => {
    const finding = scores.get('badIssuer')?.findings.find((f) => f.id === 'oauth_chain');
    expect(finding?.seen).toMatch(/openid-configuration: issuer is http:\/\/127\.0\.0\.1:\d+\/tenant/);
    expect(finding?.spec_url).toMatch(/rfc8414/);
  });

  it('catches markdown served without Vary: Accept', () => {
    const result = scores.get('blogNoVary') as SignalScore;
    const check = result.components[0]?.checks.find((k) => k.id === 'markdown_negotiation');
    expect(check).toMatchObject({ score: 0.85, status: 'partial' });
    expect(check?.seen).toMatch(/no Vary: Accept/);
    expect(
      check?.evidence.some(
        (r) => r.topic === 'markdown' && r.headers['content-type']?.startsWith('text/markdown'),
      ),
    ).toBe(true);
  });

  it('catches llms.txt links that do not resolve', () => {
    const finding = scores.get('blogDeadLinks')?.findings.find((f) => f.id === 'llms_txt_links');
    expect(finding?.seen).toMatch(/2 of 3 link\(s\) checked do not resolve: .*\/posts\/gone \(HTTP 404\)/);
  });

  it('finds the block at the door, caps the score and says why', () => {
    const result = scores.get('blocker') as SignalScore;
    const door = result.findings.find((f) => f.id === 'door_test');
    expect(door).toMatchObject({ severity: 'critical' });
    expect(door?.seen).toMatch(/OAI-SearchBot \(HTTP 403\)/);
    expect(door?.evidence.some((r) => r.user_agent?.includes('ChatGPT-User') && r.status === 403)).toBe(true);
    expect(result.note).toMatch(/capped at 49/);
  });

  it('gives every failed check a goal, a specification, an agent prompt, and names the next level', () => {
    const spa = scores.get('spa') as SignalScore;
    for (const f of spa.findings.filter((f) => f.id !== 'no_pixel')) {
      expect(f.goal.length, f.id).toBeGreaterThan(10);
      expect(f.agent_prompt, f.id).toContain(f.fix);
    }
    expect(spa.next_level?.tier.id).toBe('emerging');
    expect(spa.next_level?.checks.length).toBeGreaterThan(0);
    expect(scores.get('blog')?.next_level).toBeNull();
    const sheet = fixSheet({
      scan_id: '00000000-0000-4000-8000-000000000000',
      domain: 'spa.example',
      public: true,
      depth: 'full',
      status: 'done',
      progress: { phase: 'done', done: 1, total: 1, message: null },
      requested_at: '2026-11-26T00:00:00.000Z',
      started_at: null,
      finished_at: '2026-11-26T00:00:01.000Z',
      error: null,
      status_url: 'http://localhost/scans/x',
      result: { ...spa, site: {} as never },
    });
    expect(sheet).toMatch(/^# Fix sheet: spa\.example/);
    expect(sheet).toMatch(/Next level: Emerging/);
    expect(sheet).toContain('Prompt for a coding agent:');
    expect(sheet).toContain('## 1. ');
  });
});

describe('the door test', () => {
  /** Crawls a local site whose home page `answer` serves, as the scanner does. */
  async function doorOf(answer: http.RequestListener) {
    const server = http.createServer(answer);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const userAgent = `${scannerToken}/0.1.0`;
    const fetch = createSafeFetch({ allowPrivateNetworks: true, timeoutMs: 2000, userAgent });
    try {
      return await crawlSite({
        domain: `127.0.0.1:${port}`,
        fetch,
        userAgent,
        schemes: ['http'],
        limits: {
          max_pages: 2,
          max_bytes: 100_000,
          request_timeout_ms: 2000,
          scan_timeout_ms: 20_000,
          concurrency: 4,
          delay_ms: 0,
          max_redirects: 5,
          max_sitemaps: 1,
        },
      });
    } finally {
      await fetch.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  }
  const home = (res: http.ServerResponse) =>
    res
      .writeHead(200, { 'content-type': 'text/html' })
      .end('<html lang="en"><body><h1>Hi</h1></body></html>');
  const agents = /GPTBot|OAI-SearchBot|ChatGPT-User|Claude-User/;

  it('calls a site that answers AI agents 429 unmeasured, not blocked, and does not knock again before its Retry-After', async () => {
    const tries = new Map<string, number>();
    const facts = await doorOf((req, res) => {
      const ua = req.headers['user-agent'] ?? '';
      if (!agents.test(ua)) return home(res);
      tries.set(ua, (tries.get(ua) ?? 0) + 1);
      // A minute is longer than a scan waits: one try each, no hammering.
      res.writeHead(429, { 'retry-after': '60' }).end();
    });
    expect(
      facts.verification?.door?.filter((d) => d.class !== 'browser').map((d) => [d.verdict, d.tries]),
    ).toEqual([
      ['unmeasured', 1],
      ['unmeasured', 1],
      ['unmeasured', 1],
      ['unmeasured', 1],
    ]);
    expect([...tries.values()]).toEqual([1, 1, 1, 1]);
    const result = scoreSite(facts, null);
    const check = result.components[0]?.checks.find((k) => k.id === 'door_test');
    expect(check).toMatchObject({ score: null, status: 'unable_to_check' });
    expect(check?.seen).toMatch(/^unmeasured: OAI-SearchBot \(HTTP 429\)/);
    expect(result.findings.some((f) => f.id === 'door_test')).toBe(false);
    expect(result.note ?? '').not.toMatch(/capped/);
  });

  it('knocks again once the Retry-After it was given has passed, and three times in all at a site that keeps failing', async () => {
    const knocks = new Map<string, number[]>();
    const facts = await doorOf((req, res) => {
      const ua = req.headers['user-agent'] ?? '';
      if (!agents.test(ua)) return home(res);
      const times = knocks.get(ua) ?? [];
      times.push(performance.now());
      knocks.set(ua, times);
      // GPTBot is asked to come back in a second and then served; the others get bare 503s.
      if (ua.includes('GPTBot')) {
        if (times.length === 1) return res.writeHead(429, { 'retry-after': '1' }).end();
        return home(res);
      }
      res.writeHead(503).end();
    });
    const door = facts.verification?.door ?? [];
    expect(door.find((d) => d.visitor === 'GPTBot')).toMatchObject({
      verdict: 'served',
      status: 200,
      tries: 2,
    });
    const [first, second] = [...knocks.entries()].find(([ua]) => ua.includes('GPTBot'))?.[1] ?? [];
    // Not sooner than asked (the lower bound is the server's own clock: no upper bound is checked).
    expect((second as number) - (first as number)).toBeGreaterThanOrEqual(950);
    for (const answer of door.filter((d) => d.class !== 'browser' && d.visitor !== 'GPTBot')) {
      // Three tries, backing off; agents refused while a browser is served are blocked.
      expect(answer).toMatchObject({ verdict: 'blocked', status: 503, tries: 3 });
    }
  });
});
