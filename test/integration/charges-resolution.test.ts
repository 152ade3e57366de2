/**
 * Live resolution of merchants the registry does not know, over real HTTP, once per dialect, with
 * real peers: a DNS server on loopback resolves the candidate names to 127.0.0.1, a front server
 * hands each name to its own fixture site by `Host` (virtual hosting), and a SearXNG-compatible
 * server answers searches. Written as the attacks and mistakes: a site that does not name the
 * merchant, a parked domain, a namesake in another city, an SSRF target (loopback, metadata address)
 * offered by the DNS or the search engine, a flood of lookups of one merchant.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Dialect } from '../../db/database.ts';
import { dialects } from '../helpers/databases.ts';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server.ts';
import { type FixtureSite, startFixtureSite } from '../helpers/fixture-sites.ts';
import { type FrontProxy, startFrontProxy } from '../helpers/front-proxy.ts';
import { waitFor } from '../helpers/receivers.ts';
import { startSearchServer, type TestSearchServer } from '../helpers/search-server.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are checked field by field
type Json = any;

function merchantPage(options: { name: string; city?: string; extra?: string }): string {
  const jsonLd = {
    '@context': 'https://schema.org',
    '@type': 'Restaurant',
    name: options.name,
    ...(options.city ? { address: { '@type': 'PostalAddress', addressLocality: options.city } } : {}),
  };
  return `<!doctype html><html><head><title>${options.name}</title>
<meta property="og:site_name" content="${options.name}">
<script type="application/ld+json">${JSON.stringify(jsonLd)}</script></head>
<body><h1>${options.name}</h1>${options.extra ?? ''}</body></html>`;
}

describe.each(dialects)('live merchant resolution (%s)', (dialect: Dialect) => {
  let dns: TestDnsServer;
  let front: FrontProxy;
  let search: TestSearchServer;
  const sites: FixtureSite[] = [];
  const services: TestService[] = [];
  let halcyon: FixtureSite;
  let bare: FixtureSite;
  let parked: FixtureSite;
  let namesake: FixtureSite;
  let provisions: FixtureSite;

  /** Makes `hostname` resolve to loopback and reach `site` through the front server. */
  function host(hostname: string, origin: string): void {
    dns.a.set(hostname, ['127.0.0.1']);
    front.routeHost(hostname, origin);
  }

  async function fixture(kind: 'merchant' | 'bare', home?: string): Promise<FixtureSite> {
    const site = await startFixtureSite(kind);
    if (home) site.publish('/', 'text/html; charset=utf-8', home);
    sites.push(site);
    return site;
  }

  async function service(overrides: Record<string, unknown> = {}): Promise<TestService> {
    const started = await startTestService(dialect, {
      'scanner.allow_private_networks': true,
      'charges.live_resolution.enabled': true,
      // Local peers answer at once: the first lookup waits for them, so the tests need no timing.
      'charges.live_resolution.time_budget_ms': 30_000,
      'charges.live_resolution.home_page_scheme': 'http',
      'charges.live_resolution.home_page_port': Number(new URL(front.url).port),
      'charges.live_resolution.dns_servers': [dns.address],
      'research.search.searxng_url': search.url,
      ...overrides,
    });
    services.push(started);
    return started;
  }

  const lookup = async (svc: TestService, charge: string): Promise<Json> => {
    const res = await fetch(`${svc.config.base_url}/agent?charge=${encodeURIComponent(charge)}`);
    expect(res.status).toBe(200);
    return res.json();
  };

  const homeRequests = (site: FixtureSite) => site.requests.filter((r) => r.path === '/').length;

  let main: TestService;

  beforeAll(async () => {
    dns = await startDnsServer();
    front = await startFrontProxy();
    search = await startSearchServer();
    halcyon = await fixture('merchant');
    bare = await fixture('bare');
    parked = await fixture(
      'bare',
      '<html><head><title>Marlowe</title></head><body><h1>marlowe.com</h1><p>This domain is for sale! Buy this domain today.</p></body></html>',
    );
    namesake = await fixture('bare', merchantPage({ name: 'Marlowe Kitchen', city: 'Portland' }));
    provisions = await fixture(
      'bare',
      merchantPage({ name: 'Northside Provisions', city: 'Berkeley', extra: '<p>Berkeley, CA</p>' }),
    );
    host('halcyonroasters.com', halcyon.url);
    host('marlowekitchen.com', bare.url);
    host('marlowe.com', parked.url);
    host('marlowe-kitchen.com', namesake.url);
    host('nsprov.com', provisions.url);
    search.results.set('northside provisions', [
      { url: 'https://www.yelp.com/biz/northside-provisions-berkeley', title: 'Northside Provisions - Yelp' },
      { url: 'http://169.254.169.254/latest/meta-data/', title: 'Northside Provisions' },
      { url: 'https://www.nsprov.com/about', title: 'About | Northside Provisions' },
    ]);
    main = await service();
  });

  afterAll(async () => {
    for (const s of services) await s.close();
    for (const site of sites) await site.close();
    await search?.close();
    await front?.close();
    await dns?.close();
  });

  it('names a merchant the registry does not know from the site that names it, at medium, and keeps the evidence', async () => {
    const line = 'SQ *HALCYON ROASTERS OAKLAND CA';
    const body = await lookup(main, line);
    expect(body.resolution).toMatchObject({
      status: 'resolved',
      domain: 'halcyonroasters.com',
      name: 'Halcyon Roasters',
      category: 'coffee',
      level: 'medium',
      evidence: {
        url: expect.stringMatching(/^http:\/\/halcyonroasters\.com:\d+\/$/),
        signals: ['site_name', 'organization', 'title'],
        city: 'agrees',
        source: 'name',
      },
    });
    expect(body.resolution.confidence).toBeLessThan(0.85);
    expect(body.matches[0]).toMatchObject({
      brand: 'Halcyon Roasters',
      domain: 'halcyonroasters.com',
      source: 'live_resolution',
      matched_on: 'name',
      level: 'medium',
      processor: { name: 'Square' },
    });

    const row = await main.services.db
      .selectFrom('resolved_merchants')
      .selectAll()
      .where('name_key', '=', 'HALCYONROASTERS')
      .where('city_key', '=', 'OAKLAND')
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({ status: 'resolved', domain: 'halcyonroasters.com' });
    const evidence = JSON.parse(row.evidence);
    expect(evidence.candidates).toContainEqual({
      domain: 'halcyonroasters.com',
      source: 'name',
      outcome: 'accepted',
    });
    expect(evidence.candidates).toContainEqual({
      domain: 'halcyon-roasters.com',
      source: 'name',
      outcome: 'no_address',
    });

    // Served from the table: the site is not read again.
    const seen = homeRequests(halcyon);
    const again = await lookup(main, line);
    expect(again.resolution).toEqual(body.resolution);
    expect(homeRequests(halcyon)).toBe(seen);
  });

  it('accepts no site that fails to name the merchant - a bare page, a parked domain, a namesake in another city - and remembers the miss', async () => {
    const line = 'TST* MARLOWE KITCHEN SAN FRANCISCO CA';
    const body = await lookup(main, line);
    expect(body.matches).toEqual([]);
    expect(body.resolution).toMatchObject({ status: 'not_found', candidates_checked: expect.any(Number) });
    const row = await main.services.db
      .selectFrom('resolved_merchants')
      .selectAll()
      .where('name_key', '=', 'MARLOWEKITCHEN')
      .executeTakeFirstOrThrow();
    const outcomes = Object.fromEntries(
      JSON.parse(row.evidence).candidates.map((c: Json) => [c.domain, c.outcome]),
    );
    expect(outcomes).toMatchObject({
      'marlowekitchen.com': 'name_absent',
      'marlowe.com': 'parked',
      'marlowe-kitchen.com': 'city_mismatch',
    });

    const seen = [bare, parked, namesake].map(homeRequests);
    expect(seen.every((n) => n > 0)).toBe(true);
    expect((await lookup(main, line)).resolution.status).toBe('not_found');
    expect([bare, parked, namesake].map(homeRequests)).toEqual(seen);
  });

  it('finds a site through the search provider when its domain is not made from the name, skipping platforms and addresses', async () => {
    const before = search.requests.length;
    const body = await lookup(main, 'NORTHSIDE PROVISIONS 510-555-0199 CA');
    expect(body.resolution).toMatchObject({
      status: 'resolved',
      domain: 'nsprov.com',
      name: 'Northside Provisions',
      level: 'medium',
      evidence: { source: 'search', city: 'unknown' },
    });
    expect(search.requests.slice(before).map((r) => r.query.get('q'))).toEqual(['northside provisions']);
    const row = await main.services.db
      .selectFrom('resolved_merchants')
      .select('evidence')
      .where('name_key', '=', 'NORTHSIDEPROVISIONS')
      .executeTakeFirstOrThrow();
    const checked = JSON.parse(row.evidence).candidates.map((c: Json) => c.domain);
    expect(checked[0]).toBe('nsprov.com');
    expect(checked).not.toContain('yelp.com');
    expect(checked.some((d: string) => /169\.254|127\.0/.test(d))).toBe(false);
  });

  it('does not resolve what the registry already names with confidence', async () => {
    const body = await lookup(main, 'CHECKCARD 0312 NETFLIX.COM 866-579-7172 CA');
    expect(body.matches[0]).toMatchObject({ domain: 'netflix.com', level: 'very_high', source: 'registry' });
    expect(body.resolution).toBeUndefined();
  });

  it('runs one resolution for many concurrent lookups of one merchant', async () => {
    const seen = homeRequests(halcyon);
    const answers = await Promise.all(
      Array.from({ length: 6 }, () => lookup(main, 'HALCYON ROASTERS 510-555-0142')),
    );
    for (const answer of answers) expect(answer.resolution.status).toBe('resolved');
    expect(homeRequests(halcyon)).toBe(seen + 1);
  });

  it('answers pending past the time budget, and the stored verdict once the slow site has answered', async () => {
    let release: () => void = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const slow: Server = createServer((_req, res) => {
      released.then(() =>
        res
          .writeHead(200, { 'content-type': 'text/html' })
          .end(merchantPage({ name: 'Willowbrook Roastery', city: 'Oakland' })),
      );
    });
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    host('willowbrookroastery.com', `http://127.0.0.1:${(slow.address() as AddressInfo).port}`);
    try {
      const impatient = await service({ 'charges.live_resolution.time_budget_ms': 0 });
      const line = 'WILLOWBROOK ROASTERY OAKLAND CA';
      const first = await lookup(impatient, line);
      expect(first.resolution).toEqual({ status: 'pending', retry_after_s: expect.any(Number) });
      expect(first.matches).toEqual([]);
      release();
      let last: Json;
      await waitFor(async () => {
        last = await lookup(impatient, line);
        return last.resolution.status !== 'pending';
      });
      expect(last.resolution).toMatchObject({ status: 'resolved', domain: 'willowbrookroastery.com' });
      expect(last.matches[0]).toMatchObject({ domain: 'willowbrookroastery.com', source: 'live_resolution' });
    } finally {
      release();
      slow.closeAllConnections();
      slow.close();
    }
  });

  it('never fetches a candidate that resolves to a private address, nor an address a search result offers', async () => {
    const ownSearch = await startSearchServer();
    ownSearch.results.set('halcyon roasters oakland', [
      { url: `http://127.0.0.1:${halcyon.port}/`, title: 'Halcyon Roasters' },
      { url: `http://localhost:${halcyon.port}/`, title: 'Halcyon Roasters' },
      { url: `http://[::1]:${halcyon.port}/`, title: 'Halcyon Roasters' },
      { url: 'http://169.254.169.254/latest/meta-data/', title: 'Halcyon Roasters' },
    ]);
    try {
      const guarded = await service({
        'scanner.allow_private_networks': false,
        'research.search.searxng_url': ownSearch.url,
      });
      const seen = halcyon.requests.length;
      const body = await lookup(guarded, 'SQ *HALCYON ROASTERS OAKLAND CA');
      expect(body.resolution.status).toBe('not_found');
      expect(body.matches).toEqual([]);
      expect(halcyon.requests.length).toBe(seen);
      const row = await guarded.services.db
        .selectFrom('resolved_merchants')
        .select('evidence')
        .where('name_key', '=', 'HALCYONROASTERS')
        .executeTakeFirstOrThrow();
      const candidates = JSON.parse(row.evidence).candidates;
      expect(candidates).toContainEqual({
        domain: 'halcyonroasters.com',
        source: 'name',
        outcome: 'blocked',
      });
      expect(candidates.every((c: Json) => c.source === 'name')).toBe(true);
    } finally {
      await ownSearch.close();
    }
  });

  it('stays off unless configured: no request leaves, and the answer says so', async () => {
    const off = await service({ 'charges.live_resolution.enabled': 'auto' });
    const seen = halcyon.requests.length;
    const searched = search.requests.length;
    const body = await lookup(off, 'SQ *HALCYON ROASTERS OAKLAND CA');
    expect(body.resolution).toEqual({ status: 'off' });
    expect(body.matches).toEqual([]);
    expect(halcyon.requests.length).toBe(seen);
    expect(search.requests.length).toBe(searched);
  });
});
