/**
 * Agent-versus-human traffic over HTTP, once per dialect: the beacon and server-side batches are
 * ingested and classified, each answered only once written (a held database holds the answers, a
 * full queue sheds with 503, a write past `traffic.write_timeout_ms` is answered 503, a stop
 * answers the hits in flight), and the reads answer per account only.
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Dialect } from '../../db/database.ts';
import { createTestDatabase, dialects } from '../helpers/databases.ts';
import { waitFor } from '../helpers/receivers.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { accountWithSite, holdTrafficWrites, storedPaths } from '../helpers/traffic.ts';

const UA = {
  chrome:
    'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  gptbot:
    'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.1; +https://openai.com/gptbot)',
  chatgptUser:
    'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot',
  perplexityBot:
    'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; PerplexityBot/1.0; +https://perplexity.ai/perplexitybot)',
  googlebot: 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
};

interface Account {
  key: string;
}

const beacon = (
  api: string,
  siteId: string,
  page: string,
  extra: Record<string, string> = {},
  ua = UA.chrome,
) =>
  fetch(`${api}/beacon?${new URLSearchParams({ site: siteId, url: page, ...extra })}`, {
    headers: { 'user-agent': ua },
  });

const postEvents = (api: string, key: string | undefined, body: unknown) =>
  fetch(`${api}/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { 'x-service-key': key } : {}) },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

const get = (api: string, path: string, key?: string) =>
  fetch(`${api}${path}`, { headers: key ? { 'x-service-key': key } : {} });

describe.each(dialects)('traffic collection and stats (%s)', (dialect) => {
  let service: TestService;
  let api: string;
  let a: Account & { siteId: string };
  let b: Account & { siteId: string };

  beforeAll(async () => {
    service = await startTestService(dialect, {
      'rate_limits.unauthenticated_writes.points': 1000,
      // One site sends traffic here; the withholding threshold has its own test below.
      'traffic.network_min_sites': 1,
    });
    api = service.config.public_api_url;
    a = await accountWithSite(api, 'shop-a-traffic.com', true);
    b = await accountWithSite(api, 'shop-b-traffic.com');
  });
  afterAll(() => service?.close());

  it('takes beacon hits (204, or a GIF for the noscript form) and stores them classified, without IP or query', async () => {
    const page = 'https://www.shop-a-traffic.com/products/1?session=secret';
    const plain = await beacon(api, a.siteId, page, { ref: 'https://www.google.com/' });
    expect(plain.status).toBe(204);
    expect(plain.headers.get('cache-control')).toBe('no-store');
    const fromChatGpt = await beacon(api, a.siteId, page, { ref: 'https://chatgpt.com/' });
    expect(fromChatGpt.status).toBe(204);
    // The first hit loaded the site through the Express route, the second took the fast path for
    // cached sites: the answers must not differ.
    for (const name of ['cache-control', 'x-content-type-options', 'content-type', 'content-length']) {
      expect(fromChatGpt.headers.get(name), name).toBe(plain.headers.get(name));
    }
    expect(fromChatGpt.headers.get('x-request-id')).toMatch(/^[\w-]{36}$/);
    const img = await beacon(api, a.siteId, 'https://shop-a-traffic.com/', { img: '1' });
    expect(img.status).toBe(200);
    expect(img.headers.get('content-type')).toBe('image/gif');
    expect(
      Buffer.from(await img.arrayBuffer())
        .subarray(0, 6)
        .toString(),
    ).toBe('GIF89a');
    // Another site's page carrying this snippet, or a url that is no page address, is refused (the
    // site is cached now, so this also goes through the fast path first): never 2xx and dropped.
    for (const [url, headers, field] of [
      ['https://elsewhere.example/', {}, 'url'],
      ['/products/1', {}, 'url'],
      ['', { referer: 'https://elsewhere.example/copied' }, 'Referer'],
    ] as const) {
      const off = await fetch(`${api}/beacon?${new URLSearchParams({ site: a.siteId, url })}`, { headers });
      expect(off.status, url).toBe(400);
      expect(off.headers.get('content-type')).toMatch(/problem\+json/);
      expect((await off.json()).errors).toEqual([
        { field, message: expect.stringContaining('shop-a-traffic.com') },
      ]);
    }

    // Answered once written: the rows are there.
    const rows = await service.services.db
      .selectFrom('traffic_events')
      .selectAll()
      .where('site_id', '=', a.siteId)
      .where('source', '=', 'beacon')
      .orderBy('id')
      .execute();
    expect(rows.map((r) => [r.category, r.agent, r.path])).toEqual([
      ['human', null, '/products/1'],
      ['ai_referred', 'ChatGPT', '/products/1'],
      ['human', null, '/'],
    ]);
    expect(rows[0]?.ip_prefix).toBe('127.0.0.0/24');
    expect(rows[0]?.referrer_host).toBe('www.google.com');
    expect(JSON.stringify(rows)).not.toContain('secret');
  });

  it('answers beacon mistakes as problems: no site 400, unknown site 404, other methods 405', async () => {
    expect((await fetch(`${api}/beacon`)).status).toBe(400);
    const unknown = await beacon(api, '00000000-0000-4000-8000-000000000000', 'https://shop-a-traffic.com/');
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('content-type')).toMatch(/problem\+json/);
    expect((await fetch(`${api}/beacon`, { method: 'POST' })).status).toBe(405);
  });

  it('stores a server-side batch before answering, classified per event', async () => {
    const now = Date.now();
    const events = [
      {
        ts: new Date(now).toISOString(),
        url: '/docs',
        user_agent: UA.gptbot,
        ip: '203.0.113.77',
        status: 200,
      },
      { ts: now, url: '/docs', user_agent: UA.gptbot, ip: '2001:db8:1:2::5' },
      { ts: now, url: '/pricing?ref=x', user_agent: UA.chatgptUser },
      { ts: now, url: '/pricing', user_agent: UA.perplexityBot },
      { ts: now, url: '/', user_agent: UA.googlebot },
      { ts: now, url: '/', user_agent: 'curl/8.4.0' },
      {
        ts: now,
        url: '/agent',
        user_agent: UA.chrome,
        headers: { 'signature-agent': '"https://chatgpt.com"' },
      },
      { ts: now, url: '/', user_agent: UA.chrome, referrer: 'https://perplexity.ai/search' },
    ];
    const res = await postEvents(api, a.key, { site_id: a.siteId, events });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body).toMatchObject({
      site_id: a.siteId,
      accepted: 8,
      by_category: {
        ai_training: 2,
        ai_user_agent: 1,
        ai_search: 1,
        other_bot: 2,
        browser_agent: 1,
        ai_referred: 1,
        human: 0,
      },
    });
    // Durable before the reply: no flush needed to see the rows.
    const stored = await service.services.db
      .selectFrom('traffic_events')
      .select(['agent', 'ip_prefix', 'path'])
      .where('site_id', '=', a.siteId)
      .where('source', '=', 'server')
      .orderBy('id')
      .execute();
    expect(stored).toHaveLength(8);
    expect(stored[0]).toEqual({ agent: 'GPTBot', ip_prefix: '203.0.113.0/24', path: '/docs' });
    expect(stored[1]?.ip_prefix).toBe('2001:db8:1::/48');
    expect(stored[2]?.path).toBe('/pricing');
    expect(stored[6]?.agent).toBe('ChatGPT Agent');
  });

  it('reports the install status per site of the key’s account only', async () => {
    const res = await get(api, '/pixel', a.key);
    expect(res.status).toBe(200);
    const { sites } = await res.json();
    expect(sites).toHaveLength(1);
    expect(sites[0]).toMatchObject({
      site_id: a.siteId,
      domain: 'shop-a-traffic.com',
      verified: false,
      status: 'receiving',
      events_24h: { total: 11, beacon: 3, server: 8 },
      events_total: { total: 11, beacon: 3, server: 8 },
    });
    expect(sites[0].first_event_at).not.toBeNull();

    const other = await (await get(api, '/pixel', b.key)).json();
    expect(other.sites).toEqual([
      expect.objectContaining({ site_id: b.siteId, status: 'not_installed', first_event_at: null }),
    ]);
  });

  it('answers site stats from the rollups: shares, agents, days, top pages, AI referrals', async () => {
    const res = await get(api, `/site-stats?site_id=${a.siteId}&days=7`, a.key);
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.period.days).toBe(7);
    const [stats] = body.sites;
    expect(stats.totals).toMatchObject({ events: 11, human: 4, ai_agents: 5, other_bots: 2 });
    expect(stats.totals.ai_share).toBeCloseTo(5 / 11, 3);
    expect(stats.by_category.find((c: { category: string }) => c.category === 'ai_training')).toMatchObject({
      events: 2,
    });
    expect(stats.by_agent[0]).toMatchObject({
      agent: 'GPTBot',
      operator: 'OpenAI',
      category: 'ai_training',
      events: 2,
    });
    expect(stats.by_day).toHaveLength(7);
    expect(stats.by_day.at(-1).events).toBe(11);
    expect(stats.top_pages.ai_training).toEqual([{ path: '/docs', events: 2 }]);
    expect(stats.top_pages.human).toEqual([
      { path: '/', events: 1 },
      { path: '/products/1', events: 1 },
    ]);
    expect(stats.ai_referrals.events).toBe(2);
    expect(stats.ai_referrals.by_source.map((s: { source: string }) => s.source).sort()).toEqual([
      'ChatGPT',
      'Perplexity',
    ]);
  });

  it('keeps accounts apart: another key never sees or feeds a site it does not own', async () => {
    expect((await get(api, `/site-stats?site_id=${a.siteId}`, b.key)).status).toBe(404);
    expect((await get(api, `/pixel?site_id=${a.siteId}`, b.key)).status).toBe(404);
    const stats = await (await get(api, '/site-stats', b.key)).json();
    expect(stats.sites.map((s: { site_id: string }) => s.site_id)).toEqual([b.siteId]);
    expect(stats.sites[0].totals.events).toBe(0);
    const foreign = await postEvents(api, b.key, {
      site_id: a.siteId,
      events: [{ ts: Date.now(), url: '/', user_agent: UA.gptbot }],
    });
    expect(foreign.status).toBe(404);
    expect((await postEvents(api, undefined, { site_id: a.siteId, events: [] })).status).toBe(401);
    expect((await get(api, '/site-stats')).status).toBe(401);
    expect((await get(api, '/pixel', 'agsvc_sk_not-a-real-key')).status).toBe(401);
  });

  it('bounds a batch: over 1,000 events is 400 naming events, a huge body 413, a bad event names its index', async () => {
    const event = { ts: Date.now(), url: '/', user_agent: UA.chrome };
    const tooMany = await postEvents(api, a.key, { site_id: a.siteId, events: Array(1001).fill(event) });
    expect(tooMany.status).toBe(400);
    const problem = await tooMany.json();
    expect(problem.errors[0]).toMatchObject({ field: 'events' });
    expect(problem.errors[0].message).toMatch(/1000/);

    const huge = await postEvents(api, a.key, {
      site_id: a.siteId,
      events: [{ ...event, user_agent: 'x'.repeat(5 * 1024 * 1024) }],
    });
    expect(huge.status).toBe(413);

    const old = await postEvents(api, a.key, {
      site_id: a.siteId,
      events: [event, { ...event, ts: '2020-01-01T00:00:00Z' }],
    });
    expect(old.status).toBe(400);
    expect((await old.json()).errors[0].field).toBe('events.1.ts');
    const bad = await postEvents(api, a.key, { site_id: a.siteId, events: [{ ...event, status: 42 }] });
    expect((await bad.json()).errors[0].field).toBe('events.0.status');
  });

  it('publishes network aggregates and the agent directory without per-site data', async () => {
    const data = await (await get(api, '/ai-search-data?days=7')).json();
    expect(data.totals.events).toBe(11);
    expect(data.by_agent.map((x: { agent: string }) => x.agent)).toContain('GPTBot');
    // An opt-in names a site only once its owner proved the domain (anyone can register any domain).
    expect(data.opted_in_sites).toEqual([]);
    await service.services.db
      .updateTable('sites')
      .set({ verified_at: new Date().toISOString(), verification_method: 'dns' })
      .where('id', '=', a.siteId)
      .execute();
    const verified = await (await get(api, '/ai-search-data?days=7')).json();
    expect(verified.opted_in_sites).toEqual([
      { domain: 'shop-a-traffic.com', events: 11, ai_share: expect.any(Number) },
    ]);
    await service.services.db
      .updateTable('sites')
      .set({ verified_at: null })
      .where('id', '=', a.siteId)
      .execute();
    const training = await (await get(api, '/ai-search-data?days=7&category=ai_training')).json();
    expect(training.by_agent.every((x: { category: string }) => x.category === 'ai_training')).toBe(true);

    const tools = await (await get(api, '/ai-tools?q=openai')).json();
    const gptbot = tools.agents.find((t: { name: string }) => t.name === 'GPTBot');
    expect(gptbot).toMatchObject({
      operator: 'OpenAI',
      category: 'ai_training',
      category_source: 'https://developers.openai.com/api/docs/bots',
      robots_token: 'GPTBot',
      respects_robots_txt: 'yes',
      sites_seen: 1,
    });
    // Announced by its operator after the upstream list: in the directory, its category sourced.
    const ads = await (await get(api, '/ai-tools?q=oai-adsbot')).json();
    expect(ads.agents).toEqual([
      expect.objectContaining({
        name: 'OAI-AdsBot',
        category: 'other_bot',
        category_source: expect.any(String),
      }),
    ]);
    expect(tools.source.license).toBe('MIT');
    const search = await (await get(api, '/ai-tools?category=ai_search')).json();
    expect(search.agents.every((t: { category: string }) => t.category === 'ai_search')).toBe(true);
    expect((await get(api, '/ai-tools?category=robots')).status).toBe(400);
  });

  it('gives the scanner a domain’s 30-day live traffic, or null without events', async () => {
    // Unproven registrations never feed a public score (anyone can register any domain).
    expect(await service.services.traffic.liveTraffic('shop-a-traffic.com')).toBeNull();
    // The proofs themselves are tested in accounts-sites.test.ts; here the site is marked verified.
    await service.services.db
      .updateTable('sites')
      .set({ verified_at: new Date().toISOString(), verification_method: 'dns' })
      .where('id', '=', a.siteId)
      .execute();
    const live = await service.services.traffic.liveTraffic('shop-a-traffic.com');
    expect(live).toMatchObject({
      domain: 'shop-a-traffic.com',
      site_id: a.siteId,
      events_30d: 11,
      ai_events_30d: 5,
      ai_referrals_30d: 2,
      // Collection started today: nothing is known about the 30 days before.
      previous_ai_events_30d: null,
      previous_ai_referrals_30d: null,
    });
    expect(live?.agents_seen).toEqual(expect.arrayContaining(['GPTBot', 'ChatGPT-User', 'PerplexityBot']));
    expect(live?.daily).toHaveLength(30);
    expect(await service.services.traffic.liveTraffic('shop-b-traffic.com')).toBeNull();
    expect(await service.services.traffic.liveTraffic('never-registered.com')).toBeNull();
  });

  it('counts a beacon hit that names no page (no url, no Referer) for the site, page unknown, on both paths', async () => {
    // `<noscript>` images on a page with `Referrer-Policy: no-referrer` arrive like this: acknowledged,
    // so they must be stored and counted, never dropped.
    const d = await accountWithSite(api, 'shop-d-traffic.com');
    const bare = () =>
      fetch(`${api}/beacon?${new URLSearchParams({ site: d.siteId, img: '1' })}`, {
        headers: { 'user-agent': UA.chrome },
      });
    // The first hit finds the site uncached and takes the Express route; the second the fast path.
    const first = await bare();
    const second = await bare();
    const emptyUrl = await fetch(`${api}/beacon?site=${d.siteId}&url=`, {
      headers: { 'user-agent': UA.chrome },
    });
    const fromReferer = await fetch(`${api}/beacon?site=${d.siteId}`, {
      headers: { 'user-agent': UA.chrome, referer: 'https://shop-d-traffic.com/pricing?x=1' },
    });
    expect([first.status, second.status, emptyUrl.status, fromReferer.status]).toEqual([200, 200, 204, 204]);

    const rows = await service.services.db
      .selectFrom('traffic_events')
      .select(['path', 'category'])
      .where('site_id', '=', d.siteId)
      .orderBy('id')
      .execute();
    expect(rows).toEqual([
      { path: '(unknown)', category: 'human' },
      { path: '(unknown)', category: 'human' },
      { path: '(unknown)', category: 'human' },
      { path: '/pricing', category: 'human' },
    ]);
    const stats = await (await get(api, `/site-stats?site_id=${d.siteId}&days=1`, d.key)).json();
    expect(stats.sites[0].totals).toMatchObject({ events: 4, human: 4 });
    expect(stats.sites[0].top_pages.human).toEqual([
      { path: '(unknown)', events: 3 },
      { path: '/pricing', events: 1 },
    ]);
    const pixel = await (await get(api, `/pixel?site_id=${d.siteId}`, d.key)).json();
    expect(pixel.sites[0].events_total).toMatchObject({ beacon: 4 });
  });

  it('reads agent headers whatever the case of their names: a signed batch is never counted as people', async () => {
    // HTTP field names are case-insensitive (RFC 9110, section 5.1); log shippers keep the case they saw.
    const c = await accountWithSite(api, 'shop-c-traffic.com');
    const ts = Date.now();
    const signature = 'sig1=("@authority");created=1735689600;keyid="k";tag="web-bot-auth"';
    const events = [
      { ts, url: '/a', user_agent: UA.chrome, headers: { 'Signature-Agent': '"https://chatgpt.com"' } },
      {
        ts,
        url: '/b',
        user_agent: UA.chrome,
        headers: { 'SIGNATURE-AGENT': 'sig1="https://agent.example.com"' },
      },
      {
        ts,
        url: '/c',
        user_agent: UA.chrome,
        headers: { Signature: 'sig1=:dGVzdA==:', 'Signature-Input': signature },
      },
      // A shipper that logs the user agent among the headers rather than in user_agent.
      { ts, url: '/d', user_agent: '', headers: { 'User-Agent': UA.gptbot } },
      { ts, url: '/e', user_agent: '-', headers: { 'user-agent': UA.chatgptUser } },
    ];
    const res = await postEvents(api, c.key, { site_id: c.siteId, events });
    expect(res.status).toBe(200);
    expect((await res.json()).by_category).toMatchObject({
      browser_agent: 3,
      ai_training: 1,
      ai_user_agent: 1,
      human: 0,
      other_bot: 0,
    });
    const stored = await service.services.db
      .selectFrom('traffic_events')
      .select(['path', 'category', 'agent'])
      .where('site_id', '=', c.siteId)
      .orderBy('path')
      .execute();
    expect(stored.map((r) => r.agent)).toEqual([
      'ChatGPT Agent',
      'agent.example.com',
      'Web Bot Auth signer',
      'GPTBot',
      'ChatGPT-User',
    ]);
  });
});

describe('network figures need enough sites', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService('sqlite', {
      'rate_limits.unauthenticated_writes.points': 1000,
      'traffic.network_min_sites': 2,
    });
  });
  afterAll(() => service?.close());

  it('withholds network figures while fewer sites than the threshold sent traffic', async () => {
    const api = service.config.public_api_url;
    const send = async (domain: string) => {
      const site = await accountWithSite(api, domain);
      const res = await postEvents(api, site.key, {
        site_id: site.siteId,
        events: [{ ts: new Date().toISOString(), url: `https://${domain}/`, user_agent: UA.chrome }],
      });
      expect(res.status).toBe(200);
    };
    await send('only-one-site.com');
    const alone = await (await get(api, '/ai-search-data?days=7')).json();
    expect(alone.totals.events).toBe(0);
    expect(alone.by_agent).toEqual([]);
    expect(alone.note).toMatch(/withheld/);

    await send('second-site.com');
    const two = await (await get(api, '/ai-search-data?days=7')).json();
    expect(two.totals.events).toBe(2);
    expect(two.note).not.toMatch(/withheld/);
  });
});

/**
 * A service on a database of its own that the test can hold (`holdTrafficWrites`), with a site
 * whose first hit put it in the site cache: the hits that follow need no read of the database.
 */
async function serviceToHold(dialect: Dialect, overrides: Record<string, unknown>) {
  const database = await createTestDatabase(dialect);
  const service = await startTestService(
    dialect,
    { 'rate_limits.unauthenticated_writes.points': 1000, ...overrides },
    { database },
  );
  const api = service.config.public_api_url;
  const { key, siteId } = await accountWithSite(api, 'held-traffic.com');
  const page = (path: string) => `https://held-traffic.com${path}`;
  const hit = (path: string, method = 'GET') =>
    fetch(`${api}/beacon?${new URLSearchParams({ site: siteId, url: page(path) })}`, {
      method,
      headers: { 'user-agent': UA.chrome },
    });
  expect((await hit('/first')).status).toBe(204);
  return {
    database,
    service,
    api,
    key,
    siteId,
    page,
    hit,
    stored: () => storedPaths(database.handle.db, siteId),
    async close() {
      await service.close();
      await database.drop();
    },
  };
}

describe.each(dialects)('traffic ingestion with a held database, overload and stop (%s)', (dialect) => {
  it('answers no hit before it is written; a full queue sheds with 503 at once, on both beacon paths', async () => {
    const { database, service, api, key, siteId, page, hit, stored, close } = await serviceToHold(dialect, {
      'traffic.queue_max_events': 3,
      // The hits held below must not time out on a loaded machine.
      'traffic.write_timeout_ms': 600_000,
    });
    try {
      // A batch larger than the queue's room is not taken.
      const batch = await postEvents(api, key, {
        site_id: siteId,
        events: Array.from({ length: 4 }, () => ({ ts: Date.now(), url: '/', user_agent: UA.gptbot })),
      });
      expect(batch.status).toBe(503);
      expect(batch.headers.get('retry-after')).toBe('1');

      const release = await holdTrafficWrites(database);
      let answered = 0;
      // Two hits on the fast path in front of Express, one (HEAD) through the Express route.
      const held = [hit('/p0'), beacon(api, siteId, page('/p1'), { img: '1' }), hit('/p2', 'HEAD')].map(
        (answer) => answer.finally(() => answered++),
      );
      await waitFor(() => service.services.traffic.queue.size === 3);
      for (const method of ['GET', 'HEAD']) {
        const shed = await hit('/p3', method);
        expect(shed.status).toBe(503);
        expect(shed.headers.get('retry-after')).toBe('1');
      }
      expect(answered).toBe(0);

      await release();
      expect((await Promise.all(held)).map((r) => r.status)).toEqual([204, 200, 204]);
      expect(await stored()).toEqual(['/first', '/p0', '/p1', '/p2']);
      const daily = await database.handle.db
        .selectFrom('traffic_daily')
        .select('events')
        .where('site_id', '=', siteId)
        .execute();
      expect(daily.map((r) => Number(r.events))).toEqual([4]);
    } finally {
      await close();
    }
  });

  it('answers 503 with Retry-After, never 204, when the write does not commit within traffic.write_timeout_ms', async () => {
    const { database, hit, stored, close } = await serviceToHold(dialect, {
      'traffic.write_timeout_ms': 200,
    });
    try {
      const release = await holdTrafficWrites(database);
      const late = await hit('/late');
      expect(late.status).toBe(503);
      expect(late.headers.get('retry-after')).toBe('5');
      expect(late.headers.get('content-type')).toMatch(/problem\+json/);
      expect(await late.json()).toMatchObject({ code: 'service_unavailable' });
      const viaExpress = await hit('/late', 'HEAD');
      expect(viaExpress.status).toBe(503);
      expect(viaExpress.headers.get('retry-after')).toBe('5');
      await release();
      // The database answers again: so does the beacon.
      expect((await hit('/again')).status).toBe(204);
      expect(await stored()).toContain('/again');
    } finally {
      await close();
    }
  });

  it('answers the hits in flight when the service stops, once they are written', async () => {
    const { database, service, api, siteId, page, stored, close } = await serviceToHold(dialect, {
      'traffic.write_timeout_ms': 600_000,
    });
    try {
      const release = await holdTrafficWrites(database);
      // On a connection of its own: the stop waits for the connections its answers leave open.
      const inFlight = new Promise<number>((resolve, reject) => {
        http
          .get(
            `${api}/beacon?${new URLSearchParams({ site: siteId, url: page('/in-flight') })}`,
            { agent: false },
            (res) => {
              res.resume();
              res.once('end', () => resolve(res.statusCode ?? 0));
            },
          )
          .once('error', reject);
      });
      await waitFor(() => service.services.traffic.queue.size === 1);
      const stopped = service.close();
      await release();
      expect(await inFlight).toBe(204);
      await stopped;
      expect(await stored()).toEqual(['/first', '/in-flight']);
    } finally {
      await close();
    }
  });
});

describe.each(dialects)('server-side batches sent again with an Idempotency-Key (%s)', (dialect) => {
  let service: TestService;
  let api: string;
  let c: Account & { siteId: string };
  let d: Account & { siteId: string };

  beforeAll(async () => {
    service = await startTestService(dialect, { 'rate_limits.unauthenticated_writes.points': 1000 });
    api = service.config.public_api_url;
    c = await accountWithSite(api, 'shop-c-traffic.com');
    d = await accountWithSite(api, 'shop-d-traffic.com');
  });
  afterAll(() => service?.close());

  const keyed = (account: Account, key: string, body: unknown) =>
    fetch(`${api}/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-key': account.key, 'idempotency-key': key },
      body: JSON.stringify(body),
    });
  const storedFor = async (siteId: string) =>
    (
      await service.services.db
        .selectFrom('traffic_events')
        .select('id')
        .where('site_id', '=', siteId)
        .execute()
    ).length;

  it('stores a batch once and answers a resend with the first answer; another body under the key is 409', async () => {
    const batch = {
      site_id: c.siteId,
      events: [
        { ts: Date.now(), url: '/docs', user_agent: UA.gptbot },
        { ts: Date.now(), url: '/', user_agent: UA.chrome },
      ],
    };
    const first = await keyed(c, 'batch-0001', batch);
    expect(first.status).toBe(200);
    const answer = await first.json();
    expect(answer).toMatchObject({ site_id: c.siteId, accepted: 2 });
    const again = await keyed(c, 'batch-0001', batch);
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual(answer);
    expect(await storedFor(c.siteId)).toBe(2);

    const other = await keyed(c, 'batch-0001', { ...batch, events: batch.events.slice(0, 1) });
    expect(other.status).toBe(409);
    expect((await other.json()).code).toBe('idempotency_key_reused');
    expect(await storedFor(c.siteId)).toBe(2);

    // Keys are the account's own: another account's batch under the same key is its own.
    const theirs = await keyed(d, 'batch-0001', { site_id: d.siteId, events: batch.events });
    expect(theirs.status).toBe(200);
    expect(await storedFor(d.siteId)).toBe(2);
  });

  it('writes concurrent sends of one keyed batch once, each answered alike', async () => {
    const before = await storedFor(c.siteId);
    const batch = {
      site_id: c.siteId,
      events: [
        { ts: Date.now(), url: '/a', user_agent: UA.perplexityBot },
        { ts: Date.now(), url: '/b', user_agent: UA.googlebot },
        { ts: Date.now(), url: '/c', user_agent: UA.chrome },
      ],
    };
    const answers = await Promise.all(Array.from({ length: 6 }, () => keyed(c, 'batch-0002', batch)));
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
    const bodies = await Promise.all(answers.map((r) => r.json()));
    for (const body of bodies) expect(body).toEqual(bodies[0]);
    expect(bodies[0]).toMatchObject({ accepted: 3 });
    expect(await storedFor(c.siteId)).toBe(before + 3);
  });
});
