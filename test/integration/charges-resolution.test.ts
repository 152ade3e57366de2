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

function merchantPage(options: { name: string; city?: string; country?: string; extra?: string }): string {
  const address = {
    ...(options.city ? { addressLocality: options.city } : {}),
    ...(options.country ? { addressCountry: options.country } : {}),
  };
  const jsonLd = {
    '@context': 'https://schema.org',
    '@type': 'Restaurant',
    name: options.name,
    ...(Object.keys(address).length > 0 ? { address: { '@type': 'PostalAddress', ...address } } : {}),
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

    // Issue 32 item 8: a local web without a search provider, and one whose search ranks a
    // directory and a same-name business above the merchant's own site.
    host(
      'fernwoodciderworks.com',
      (await fixture('bare', merchantPage({ name: 'Fernwood Ciderworks', city: 'Portland' }))).url,
    );
    host(
      'lumenquill.io',
      (
        await fixture(
          'bare',
          '<html><head><title>Lumenquill - notebooks that last</title><meta property="og:site_name" content="Lumenquill"></head><body><h1>Lumenquill</h1></body></html>',
        )
      ).url,
    );
    host(
      'tallowmoor.co.uk',
      (
        await fixture(
          'bare',
          '<html><head><title>Tallowmoor</title><meta property="og:site_name" content="Tallowmoor"></head><body></body></html>',
        )
      ).url,
    );
    // A review site whose home page features the bakery: title, JSON-LD list and the city, all of it.
    host(
      'bestlocalbites.com',
      (
        await fixture(
          'bare',
          `<html><head><title>Ottoleaf Bakehouse - Oakland's best bakery | Best Local Bites</title>
<script type="application/ld+json">${JSON.stringify({
            '@context': 'https://schema.org',
            '@type': 'ItemList',
            itemListElement: [
              {
                '@type': 'ListItem',
                position: 1,
                item: {
                  '@type': 'Bakery',
                  name: 'Ottoleaf Bakehouse',
                  address: { '@type': 'PostalAddress', addressLocality: 'Oakland' },
                },
              },
              { '@type': 'ListItem', position: 2, item: { '@type': 'Bakery', name: 'Crumb & Co' } },
            ],
          })}</script></head>
<body><h1>Best bakeries in Oakland</h1><p>Ottoleaf Bakehouse, Oakland. Write a review. Claim your business.</p></body></html>`,
        )
      ).url,
    );
    host(
      'ottoleafbakes.com',
      (
        await fixture(
          'bare',
          '<html><head><title>Ottoleaf Bakehouse</title></head><body><p>Bread baked daily in Oakland, CA.</p></body></html>',
        )
      ).url,
    );
    search.results.set('ottoleaf bakehouse oakland', [
      {
        url: 'https://bestlocalbites.com/oakland/ottoleaf-bakehouse',
        title: 'Ottoleaf Bakehouse - Best Local Bites',
      },
      { url: 'https://www.yelp.co.uk/biz/ottoleaf-bakehouse', title: 'Ottoleaf Bakehouse - Yelp' },
      { url: 'https://ottoleafbakes.com/', title: 'Ottoleaf Bakehouse' },
    ]);
    // Two cafés called Corvidae: one in the US (on .com, every signal), one in the UK (.co.uk, its title only).
    host(
      'corvidaecoffee.com',
      (await fixture('bare', merchantPage({ name: 'Corvidae Coffee', country: 'US' }))).url,
    );
    host(
      'corvidaecoffee.co.uk',
      (
        await fixture(
          'bare',
          '<html><head><title>Corvidae Coffee</title></head><body><p>Speciality coffee.</p></body></html>',
        )
      ).url,
    );
    // Issue 32 item 7: a name PayPal cut, a registry guess against a site that names the merchant,
    // and two same-name taverns in different states.
    host(
      'quillfeatherpens.com',
      (
        await fixture(
          'bare',
          '<html><head><title>Quillfeather Pens | Fountain pens</title><meta property="og:site_name" content="Quillfeather Pens"></head><body></body></html>',
        )
      ).url,
    );
    search.results.set('quillfeathe', [{ url: 'https://quillfeatherpens.com/', title: 'Quillfeather Pens' }]);
    host('spotiffycafehouse.com', (await fixture('bare', merchantPage({ name: 'Spotiffy Cafe House' }))).url);
    const tavern = (region: string) =>
      `<html><head><title>Bramblewick Tavern</title><script type="application/ld+json">${JSON.stringify({
        '@type': 'BarOrPub',
        name: 'Bramblewick Tavern',
        address: { '@type': 'PostalAddress', addressRegion: region, addressCountry: 'US' },
      })}</script></head><body></body></html>`;
    // A brand's home page that says only its product's name; its about page names the company.
    const kestrel = await fixture(
      'bare',
      '<html><head><title>Kestrel - tools for makers</title></head><body><a href="/about-us">About</a></body></html>',
    );
    kestrel.publish(
      '/about-us',
      'text/html; charset=utf-8',
      '<html><head><title>About us | Kestrelworks LLC</title></head><body><p>Made in Chicago.</p></body></html>',
    );
    host('kestrelworks.com', kestrel.url);
    host('bramblewicktavern.com', (await fixture('bare', tavern('OR'))).url);
    host('bramblewick.com', (await fixture('bare', tavern('CO'))).url);
    host(
      'wrenhollowcoffee.com',
      (await fixture('bare', merchantPage({ name: 'Wren Hollow Coffee', country: 'United States' }))).url,
    );
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

  it('resolves without a search provider: a merchant the registry does not hold, named from the line', async () => {
    const alone = await service({ 'research.search.searxng_url': null });
    const searched = search.requests.length;
    const body = await lookup(alone, 'SQ *FERNWOOD CIDERWORKS PORTLAND OR');
    expect(body.resolution).toMatchObject({
      status: 'resolved',
      domain: 'fernwoodciderworks.com',
      name: 'Fernwood Ciderworks',
      level: 'medium',
      evidence: { source: 'name', city: 'agrees' },
    });
    expect(body.matches[0]).toMatchObject({ domain: 'fernwoodciderworks.com', source: 'live_resolution' });
    expect(search.requests.length).toBe(searched);
  });

  it("reads the line's own website without a search provider: the site's name, source live_resolution", async () => {
    const alone = await service({ 'research.search.searxng_url': null });
    const body = await lookup(alone, 'LUMENQUILL.IO 0412');
    expect(body.resolution).toMatchObject({
      status: 'resolved',
      domain: 'lumenquill.io',
      name: 'Lumenquill',
      evidence: { source: 'website_hint' },
    });
    // One match for the domain: the line's own (source line) read and confirmed by its site.
    expect(body.matches.filter((m: Json) => m.domain === 'lumenquill.io')).toEqual([
      expect.objectContaining({ brand: 'Lumenquill', source: 'live_resolution', level: 'medium' }),
    ]);
  });

  it("takes the site the line printed on another country's domain than the line's state", async () => {
    const body = await lookup(main, 'TALLOWMOOR.CO.UK 0412 NY');
    expect(body.merchant.country).toBe('US');
    expect(body.resolution).toMatchObject({
      status: 'resolved',
      domain: 'tallowmoor.co.uk',
      evidence: { source: 'website_hint' },
    });
  });

  it('gets no guess for a line that names no brand: a place, generic words', async () => {
    const alone = await service({ 'research.search.searxng_url': null });
    for (const line of ['SANTA FE', 'CITY PARKING 0412', 'GAS STATION DENVER CO']) {
      const body = await lookup(alone, line);
      expect(body.resolution, line).toBeUndefined();
      expect(body.matches.filter((m: Json) => m.level === 'high' || m.level === 'very_high')).toEqual([]);
    }
  });

  it('never answers a directory or review site, even one ranked first whose home page features the merchant', async () => {
    const body = await lookup(main, 'OTTOLEAF BAKEHOUSE OAKLAND CA');
    expect(body.resolution).toMatchObject({
      status: 'resolved',
      domain: 'ottoleafbakes.com',
      evidence: { source: 'search', city: 'agrees' },
    });
    const row = await main.services.db
      .selectFrom('resolved_merchants')
      .select('evidence')
      .where('name_key', '=', 'OTTOLEAFBAKEHOUSE')
      .executeTakeFirstOrThrow();
    const outcomes = Object.fromEntries(
      JSON.parse(row.evidence).candidates.map((c: Json) => [c.domain, c.outcome]),
    );
    expect(outcomes['bestlocalbites.com']).toBe('directory');
    expect(outcomes).not.toHaveProperty('yelp.co.uk');
  });

  it('reads a name PayPal cut at eleven characters as the start of the site that names it', async () => {
    const body = await lookup(main, 'PAYPAL *QUILLFEATHE 402-935-7733 CA');
    expect(body.resolution).toMatchObject({
      status: 'resolved',
      domain: 'quillfeatherpens.com',
      name: 'Quillfeather Pens',
      level: 'medium',
      evidence: { source: 'search' },
    });
  });

  it("ranks a site that names the merchant before the registry's guess of a brand in the line", async () => {
    const alone = await service({ 'research.search.searxng_url': null });
    const body = await lookup(alone, 'SPOTIFFY CAFE HOUSE');
    expect(body.matches.map((m: Json) => [m.domain, m.source])).toEqual([
      ['spotiffycafehouse.com', 'live_resolution'],
      ...body.matches.slice(1).map((m: Json) => [m.domain, m.source]),
    ]);
    expect(body.matches.find((m: Json) => m.domain === 'spotify.com')).toMatchObject({
      source: 'registry',
      level: 'medium',
    });
  });

  it("reads the site's about page when its home page does not name the merchant", async () => {
    const alone = await service({ 'research.search.searxng_url': null });
    const body = await lookup(alone, 'KESTRELWORKS LLC CHICAGO IL');
    expect(body.resolution).toMatchObject({
      status: 'resolved',
      domain: 'kestrelworks.com',
      name: 'Kestrelworks LLC',
      evidence: { signals: ['organization'], city: 'agrees' },
    });
  });

  it('never lets a same-name business in another state win: its address is compared on the region', async () => {
    const alone = await service({ 'research.search.searxng_url': null });
    const body = await lookup(alone, 'BRAMBLEWICK TAVERN DENVER CO');
    expect(body.resolution).toMatchObject({ status: 'resolved', domain: 'bramblewick.com' });
    const row = await alone.services.db
      .selectFrom('resolved_merchants')
      .select('evidence')
      .where('name_key', '=', 'BRAMBLEWICKTAVERN')
      .executeTakeFirstOrThrow();
    const outcomes = Object.fromEntries(
      JSON.parse(row.evidence).candidates.map((c: Json) => [c.domain, c.outcome]),
    );
    expect(outcomes['bramblewicktavern.com']).toBe('region_mismatch');
  });

  it("never lets a same-name business in another country win over the line's own", async () => {
    const body = await lookup(main, 'CORVIDAE COFFEE BRISTOL GB');
    expect(body.resolution).toMatchObject({ status: 'resolved', domain: 'corvidaecoffee.co.uk' });
    expect(body.matches.map((m: Json) => m.domain)).not.toContain('corvidaecoffee.com');
    const row = await main.services.db
      .selectFrom('resolved_merchants')
      .select('evidence')
      .where('name_key', '=', 'CORVIDAECOFFEE')
      .executeTakeFirstOrThrow();
    expect(JSON.parse(row.evidence).candidates).toContainEqual({
      domain: 'corvidaecoffee.com',
      source: 'name',
      outcome: 'country_mismatch',
    });
    // The only site of that name is in another country: no answer rather than the wrong business.
    const alone = await lookup(main, 'WREN HOLLOW COFFEE BRISTOL GB');
    expect(alone.resolution).toMatchObject({ status: 'not_found' });
    expect(alone.matches.map((m: Json) => m.domain)).not.toContain('wrenhollowcoffee.com');
  });

  it("answers a regional line with the brand's site for its country, the others listed, on REST and MCP alike", async () => {
    const line = 'ALBERT HEIJN 1234 ANTWERPEN BE';
    const body = await lookup(main, line);
    expect(body.matches[0]).toMatchObject({
      brand: 'Albert Heijn',
      domain: 'ah.be',
      alternate_domains: ['ah.nl'],
      level: 'very_high',
      source: 'registry',
    });
    const mcp = await fetch(main.config.mcp_url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-11-25',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'lookup_card_charge', arguments: { charge: line } },
      }),
    });
    const text = await mcp.text();
    const message = JSON.parse(text.startsWith('{') ? text : (/^data: (.*)$/m.exec(text)?.[1] ?? '{}'));
    expect(message.result.structuredContent.matches[0]).toEqual(body.matches[0]);
    const openapi = await (await fetch(`${main.config.base_url}/openapi.json`)).json();
    expect(JSON.stringify(openapi)).toContain('alternate_domains');
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
