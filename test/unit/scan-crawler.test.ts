/**
 * The crawler against local fixture sites, with the address policy of production except that
 * 127.0.0.1 (where the fixtures listen) is reachable: everything else private stays blocked.
 */
import type { LookupAddress } from 'node:dns';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type CrawlLimits,
  type CrawlProgress,
  crawlSite,
  sameSite,
} from '../../servers/features/scans/crawler.ts';
import { doorVisitors } from '../../servers/features/scans/verify.ts';
import { createSafeFetch, isPublicAddress, type SafeFetch } from '../../servers/outbound/safe-fetch.ts';
import { type FixtureSite, scannerToken, startFixtureSite } from '../helpers/fixture-sites.ts';

const userAgent = `${scannerToken}/0.1.0 (+http://localhost/scanner)`;
const limits: CrawlLimits = {
  max_pages: 50,
  max_bytes: 256 * 1024,
  request_timeout_ms: 500,
  scan_timeout_ms: 20_000,
  concurrency: 4,
  delay_ms: 5,
  max_redirects: 5,
  max_sitemaps: 5,
};
const onlyFixtureHost = (address: string) => address === '127.0.0.1' || isPublicAddress(address);

describe('crawler', () => {
  let fetch: SafeFetch;
  const sites: FixtureSite[] = [];
  const start = async (kind: Parameters<typeof startFixtureSite>[0]) => {
    const site = await startFixtureSite(kind);
    sites.push(site);
    return site;
  };

  beforeAll(() => {
    fetch = createSafeFetch({
      allowPrivateNetworks: false,
      timeoutMs: 2000,
      userAgent,
      allowAddress: onlyFixtureHost,
    });
  });
  afterAll(async () => {
    await fetch.close();
    await Promise.all(sites.map((s) => s.close()));
  });

  it('collects every signal of a well-prepared site and obeys its robots.txt for our token', async () => {
    const site = await start('wellPrepared');
    const progress: CrawlProgress[] = [];
    const facts = await crawlSite({
      domain: site.domain,
      fetch,
      userAgent,
      // Only the hostile site needs the short request timeout; a loaded machine must not drop pages here.
      limits: { ...limits, request_timeout_ms: 5_000 },
      onProgress: (p) => progress.push(p),
    });
    expect(facts.origin).toBe(site.url);
    expect(facts.robots.present).toBe(true);
    expect(facts.robots.content_signals.length).toBe(2);
    expect(facts.llms_txt).toMatchObject({ valid: true, title: 'Example Widgets', link_count: 3 });
    expect(facts.llms_full_txt?.bytes).toBeGreaterThan(1000);
    expect(facts.ai_txt?.groups.length).toBe(1);
    expect(facts.sitemap.urls_found).toBe(5);
    expect(facts.sitemap.documents.map((d) => d.kind)).toEqual(['index', 'urlset']);
    expect(facts.markdown.supported).toBe(true);
    for (const [id, check] of Object.entries(facts.discovery)) {
      // Only sites that run agents of their own publish a Web Bot Auth key directory.
      if (id !== 'web_bot_auth') expect(check.valid, id).toBe(true);
    }
    // Every request is evidence, under its topic.
    expect(facts.requests?.find((r) => r.topic === 'robots' && r.url.startsWith('http:'))).toMatchObject({
      method: 'GET',
      url: `${site.url}/robots.txt`,
      status: 200,
      headers: { 'content-type': 'text/plain' },
    });
    expect(facts.requests?.every((r) => r.duration_ms >= 0)).toBe(true);
    // The MCP verification spoke to the live server, and never called a tool.
    expect(facts.verification?.mcp).toMatchObject({
      initialized: true,
      live_tools: ['list_widgets', 'get_widget'],
    });
    const mcpBodies = facts.requests?.filter((r) => r.topic === 'mcp' && r.method === 'POST') ?? [];
    expect(mcpBodies.length).toBeGreaterThanOrEqual(2);
    expect(facts.pages.map((p) => new URL(p.url).pathname).sort()).toEqual([
      '/',
      '/about',
      '/docs',
      '/faq',
      '/products/widget',
    ]);
    expect(facts.crawl.skipped_by_robots).toBe(1);
    expect(site.requests.some((r) => r.path.startsWith('/private/'))).toBe(false);
    // Every request names the scanner, except the door test's, which asks for the home page only.
    const door = new Set(doorVisitors.map((v) => v.userAgent));
    expect(
      site.requests.every(
        (r) => r.userAgent === userAgent || (door.has(r.userAgent ?? '') && r.path === '/'),
      ),
    ).toBe(true);
    // The markdown probe asked for markdown.
    expect(site.requests.some((r) => r.path === '/' && r.accept?.startsWith('text/markdown'))).toBe(true);
    expect(progress.at(-1)).toMatchObject({ phase: 'done' });
    expect(progress.at(-1)?.done).toBe(progress.at(-1)?.total);
    for (let i = 1; i < progress.length; i++)
      expect(progress[i]?.done).toBeGreaterThanOrEqual(progress[i - 1]?.done as number);
  });

  it('asks for one made-up /.well-known/ path and credits no document that answers the same (soft 404)', async () => {
    for (const kind of ['spa', 'catchAllJson', 'catchAllText'] as const) {
      const site = await start(kind);
      const facts = await crawlSite({ domain: site.domain, fetch, userAgent, limits });
      const probes = site.requests.filter((r) => r.path.startsWith('/.well-known/agent-service-probe-'));
      expect(probes, kind).toHaveLength(1);
      expect(probes[0]?.path, kind).toMatch(/^\/\.well-known\/agent-service-probe-[0-9a-f]{16}$/);
      expect(facts.unknown_path, kind).toMatchObject({ status: 200, soft_404: true });
      // Every document the site seemed to have was its answer to anything.
      expect(facts.robots.present, kind).toBe(false);
      expect(facts.llms_txt, kind).toBeNull();
      expect(facts.llms_full_txt, kind).toBeNull();
      expect(facts.ai_txt, kind).toBeNull();
      for (const [name, check] of Object.entries(facts.discovery))
        expect(check, `${kind} ${name}`).toMatchObject({ present: false, valid: false });
      const same = facts.unknown_path?.same_answer.map((u) => new URL(u).pathname);
      expect(same, kind).toEqual(
        expect.arrayContaining([
          '/.well-known/api-catalog',
          '/.well-known/mcp/server-card.json',
          '/.well-known/x402.json',
          '/openapi.json',
        ]),
      );
    }
  });

  it('still credits the real documents of a site that answers unknown paths with its app shell', async () => {
    const site = await start('spaWithDocuments');
    const facts = await crawlSite({ domain: site.domain, fetch, userAgent, limits });
    expect(facts.unknown_path).toMatchObject({ soft_404: true, media_type: 'text/html' });
    expect(facts.robots.present).toBe(true);
    expect(facts.llms_txt).toMatchObject({ valid: true, title: 'Acme' });
    expect(facts.discovery.api_catalog).toMatchObject({ present: true, valid: true });
    expect(facts.discovery.mcp_server_card).toMatchObject({ present: true, valid: true });
    expect(facts.discovery.openapi).toMatchObject({ present: true, valid: true });
    // There, but listing nothing: present, so partial credit.
    expect(facts.discovery.x402).toMatchObject({ present: true, valid: false });
    expect(facts.discovery.oauth_protected_resource).toMatchObject({ present: false });
    expect(facts.ai_txt).toBeNull();
  });

  it('follows the SEP-2127 MCP catalog to a server card on the site when there is no card under /.well-known/', async () => {
    const site = await start('bare');
    const cardUrl = `${site.url}/mcp/server-card`;
    site.publish(
      '/.well-known/mcp/catalog.json',
      'application/json',
      JSON.stringify({
        specVersion: 'draft',
        entries: [
          {
            identifier: 'urn:air:elsewhere.example:x',
            displayName: 'X',
            type: 'application/mcp-server-card+json',
            url: 'https://elsewhere.example/mcp/server-card',
          },
          {
            identifier: 'urn:air:localhost:shop',
            displayName: 'Shop',
            type: 'application/mcp-server-card+json',
            url: '/mcp/server-card',
          },
        ],
      }),
    );
    site.publish(
      '/mcp/server-card',
      'application/mcp-server-card+json',
      JSON.stringify({
        name: 'localhost/shop',
        version: '1.0.0',
        description: 'A shop',
        remotes: [{ type: 'streamable-http', url: `${site.url}/mcp` }],
      }),
    );
    const facts = await crawlSite({ domain: site.domain, fetch, userAgent, limits, schemes: ['http'] });
    // The first entry is on another host: the crawler stays on the site and reads the second.
    expect(facts.discovery.mcp_server_card).toMatchObject({ present: true, valid: true, url: cardUrl });

    // A catalog naming only cards elsewhere, or none: there, so partial credit, but not a card.
    const other = await start('bare');
    other.publish(
      '/.well-known/mcp/catalog.json',
      'application/json',
      JSON.stringify({
        specVersion: 'draft',
        entries: [{ type: 'application/mcp-server-card+json', url: 'https://elsewhere.example/c' }],
      }),
    );
    const partial = await crawlSite({ domain: other.domain, fetch, userAgent, limits, schemes: ['http'] });
    expect(partial.discovery.mcp_server_card).toMatchObject({ present: true, valid: false });
  });

  it('finds no soft 404 on a site that answers unknown paths with 404', async () => {
    const site = await start('wellPrepared');
    const facts = await crawlSite({ domain: site.domain, fetch, userAgent, limits });
    expect(facts.unknown_path).toMatchObject({ status: 404, soft_404: false, same_answer: [] });
  });

  it('survives a hostile site: byte limit, redirect loop, slow response, redirects to private addresses, binaries', async () => {
    const site = await start('hostile');
    // `/slow` never answers, so it times out whatever the bound; a bound of seconds, not 500 ms, lets
    // the redirect loop's hops run to their limit on a loaded machine before any clock does.
    const facts = await crawlSite({
      domain: site.domain,
      fetch,
      userAgent,
      limits: { ...limits, request_timeout_ms: 3_000 },
      schemes: ['http'],
    });
    const errors = Object.fromEntries(facts.crawl.errors.map((e) => [new URL(e.url).pathname, e.error]));
    expect(errors['/loop-b'] ?? errors['/loop-a']).toBe('redirect loop');
    expect(errors['/slow']).toBe('timed out');
    expect(errors['/metadata']).toMatch(/leaves the site|not allowed/);
    expect(errors['/internal']).toMatch(/leaves the site|not allowed/);
    expect(errors['/binary']).toMatch(/not HTML/);
    const huge = facts.pages.find((p) => p.url.endsWith('/huge'));
    expect(huge).toMatchObject({ truncated: true, bytes: limits.max_bytes });
    expect(facts.pages.map((p) => new URL(p.url).pathname).sort()).toEqual(['/', '/fine', '/huge']);
  });

  it('stops at the page limit and reports it', async () => {
    const site = await start('large');
    const facts = await crawlSite({
      domain: site.domain,
      fetch,
      userAgent,
      limits: { ...limits, max_pages: 30, request_timeout_ms: 5_000 },
    });
    expect(facts.pages.length).toBe(30);
    expect(facts.crawl.stopped).toBe('max_pages');
    expect(facts.sitemap.urls_found).toBe(200);
  });

  it('reads all 200 pages of the large site with politeness limits on', async () => {
    const site = await start('large');
    let inFlight = 0;
    let maxInFlight = 0;
    const counting = Object.assign(
      async (url: string | URL, init?: Parameters<SafeFetch>[1]) => {
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        try {
          return await fetch(url, init);
        } finally {
          inFlight--;
        }
      },
      { close: () => Promise.resolve() },
    ) as SafeFetch;
    const facts = await crawlSite({
      domain: site.domain,
      fetch: counting,
      userAgent,
      // Time enough per page for a loaded machine: what is checked is the count and the politeness.
      limits: { ...limits, max_pages: 200, request_timeout_ms: 10_000, scan_timeout_ms: 120_000 },
    });
    expect(facts.pages.length).toBe(200);
    expect(facts.crawl.stopped).toBeNull();
    expect(maxInFlight).toBeLessThanOrEqual(limits.concurrency);
  });

  it('ends the whole scan at its time budget', async () => {
    const site = await start('hostile');
    const facts = await crawlSite({
      domain: site.domain,
      fetch,
      userAgent,
      limits: { ...limits, request_timeout_ms: 10_000, scan_timeout_ms: 300 },
      schemes: ['http'],
    });
    expect(facts.crawl.stopped).toBe('time_budget');
  });

  it('refuses to start on a private address when private networks are not allowed', async () => {
    const strict = createSafeFetch({ allowPrivateNetworks: false, timeoutMs: 1000, userAgent });
    const site = await start('bare');
    try {
      await expect(
        crawlSite({ domain: site.domain, fetch: strict, userAgent, limits }),
      ).rejects.toMatchObject({
        name: 'CrawlError',
        reason: 'blocked',
      });
      await expect(
        crawlSite({ domain: `localhost:${site.port}`, fetch: strict, userAgent, limits }),
      ).rejects.toMatchObject({ reason: 'blocked' });
      expect(site.requests).toEqual([]);
    } finally {
      await strict.close();
    }
  });

  it('blocks DNS rebinding: each connection is checked against the address it is made to', async () => {
    const site = await start('wellPrepared');
    // First answer public-looking fixture address, then the metadata address, as a rebinding DNS would.
    const answers = ['127.0.0.1', '169.254.169.254'];
    let calls = 0;
    const rebinding = ((
      _host: string,
      _options: unknown,
      callback: (e: null, a: LookupAddress[]) => void,
    ) => {
      const address = answers[Math.min(calls++, answers.length - 1)] as string;
      callback(null, [{ address, family: 4 }]);
    }) as unknown as typeof import('node:dns').lookup;
    const connectOnce = async (path: string) => {
      // A fresh agent per call: no pooled connection, so every call resolves and connects anew.
      const safe = createSafeFetch({
        allowPrivateNetworks: false,
        timeoutMs: 1000,
        userAgent,
        allowAddress: onlyFixtureHost,
        lookup: rebinding,
      });
      try {
        const res = await safe(`http://rebind.test:${site.port}${path}`);
        await res.text();
        return res.status;
      } catch (err) {
        return (err as Error & { cause?: Error }).cause?.name ?? (err as Error).name;
      } finally {
        await safe.close();
      }
    };
    expect(await connectOnce('/robots.txt')).toBe(200);
    expect(await connectOnce('/llms.txt')).toBe('BlockedDestinationError');
    expect(calls).toBe(2);
  });

  it('blocks a same-site redirect to a name that resolves to a private address', async () => {
    const site = await start('wellPrepared');
    const lookup = ((host: string, _options: unknown, callback: (e: null, a: LookupAddress[]) => void) => {
      callback(null, [{ address: host.startsWith('evil.') ? '10.0.0.1' : '127.0.0.1', family: 4 }]);
    }) as unknown as typeof import('node:dns').lookup;
    const safe = createSafeFetch({
      allowPrivateNetworks: false,
      timeoutMs: 1000,
      userAgent,
      allowAddress: onlyFixtureHost,
      lookup,
    });
    try {
      // Same registrable domain, so the crawler follows; the connect-time check refuses.
      expect(sameSite(new URL('http://site.test:1/'), new URL('http://evil.site.test:1/'))).toBe(true);
      const blocked = await safe(`http://evil.site.test:${site.port}/`).catch((e: Error) => e);
      expect((blocked as Error & { cause?: Error }).cause?.name).toBe('BlockedDestinationError');
      const facts = await crawlSite({
        domain: `site.test:${site.port}`,
        fetch: safe,
        userAgent,
        limits,
        schemes: ['http'],
      });
      expect(facts.robots.present).toBe(true);
    } finally {
      await safe.close();
    }
  });
});
