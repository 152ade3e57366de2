/**
 * The WebMCP check end to end below the service: fixture sites on loopback crawled with the real
 * headless Chromium pool (`outbound/browser-pool.ts`), the tools read from the shim, the check
 * judged. The address policy lets the scanner reach 127.0.0.1 only, so a page that points the
 * browser at 127.0.0.2 (a server listening there on the same port), the metadata address or a
 * WebSocket must be refused, and the server at 127.0.0.2 must see nothing.
 */
import http from 'node:http';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CrawlLimits, crawlSite } from '../../servers/features/scans/crawler.ts';
import { scoreSite } from '../../servers/features/scans/scoring.ts';
import type { SiteFacts } from '../../servers/features/scans/site-facts.ts';
import { BrowserPool } from '../../servers/outbound/browser-pool.ts';
import { createSafeFetch, type SafeFetch } from '../../servers/outbound/safe-fetch.ts';
import { browserAvailable, chromiumPath } from '../helpers/browser.ts';
import { type FixtureKind, scannerToken, startFixtureSite } from '../helpers/fixture-sites.ts';

const userAgent = `${scannerToken}/0.1.0 (+http://localhost/scanner)`;
const limits: CrawlLimits = {
  max_pages: 3,
  max_bytes: 256 * 1024,
  // Longer than the page budget: the page that never finishes must be ended by the budget.
  request_timeout_ms: 30_000,
  scan_timeout_ms: 60_000,
  concurrency: 2,
  delay_ms: 0,
  max_redirects: 5,
  max_sitemaps: 1,
};
const PAGE_BUDGET_MS = 4_000;

const webmcpCheck = (facts: SiteFacts) =>
  scoreSite(facts, null)
    .components.flatMap((c) => c.checks)
    .find((k) => k.id === 'webmcp');

describe.skipIf(!browserAvailable)('WebMCP tools read by headless Chromium', () => {
  let fetch: SafeFetch;
  let pool: BrowserPool;
  beforeAll(() => {
    fetch = createSafeFetch({
      allowPrivateNetworks: false,
      timeoutMs: 30_000,
      userAgent,
      allowAddress: (address) => address === '127.0.0.1',
    });
    pool = new BrowserPool({
      executablePath: chromiumPath,
      size: 1,
      userAgent,
      log: pino({ level: 'silent' }),
    });
  });
  afterAll(async () => {
    await pool?.close();
    await fetch?.close();
  });

  async function scan(kind: FixtureKind) {
    const site = await startFixtureSite(kind);
    try {
      const facts = await crawlSite({
        domain: site.domain,
        fetch,
        userAgent,
        limits,
        schemes: ['http'],
        browser: { pool, page_budget_ms: PAGE_BUDGET_MS },
      });
      return { facts, requests: site.requests, port: site.port };
    } finally {
      await site.close();
    }
  }

  it('reads tools registered every way, without the one withdrawn, and passes them', async () => {
    const { facts } = await scan('webmcpTools');
    expect(facts.webmcp?.outcome).toBe('loaded');
    const tools = facts.webmcp?.tools ?? [];
    expect(tools.map((t) => [t.name, t.via])).toEqual([
      ['search_widgets', 'document'],
      ['get_cart', 'provideContext'],
      ['track_order', 'document'],
      ['contact_us', 'form'],
    ]);
    expect(tools.every((t) => t.problems.length === 0)).toBe(true);
    expect(tools.find((t) => t.name === 'contact_us')?.input_schema).toEqual({
      type: 'object',
      properties: {
        message: { type: 'string', description: 'Your message' },
        topic: { type: 'string', enum: ['order', 'other'], description: 'What the message is about' },
      },
      required: ['message'],
    });
    expect(facts.requests?.some((r) => r.topic === 'webmcp' && r.url.endsWith('/tools.js'))).toBe(true);
    expect(webmcpCheck(facts)).toMatchObject({ status: 'pass', score: 1, weight: 0 });
  });

  it('scores broken tools partial, naming what breaks', async () => {
    const { facts } = await scan('webmcpBroken');
    const tools = facts.webmcp?.tools ?? [];
    expect(tools.map((t) => t.name)).toEqual(['lookup', 'bad name!', 'scalar_input', 'nonsense_schema']);
    expect(tools[0]?.problems).toEqual([]);
    expect(tools[1]?.problems.join(' ')).toMatch(/name is not .*description is empty.*no execute/);
    expect(tools[2]?.problems.join(' ')).toMatch(/does not describe an object/);
    expect(tools[3]?.problems.join(' ')).toMatch(/not valid JSON Schema/);
    expect(webmcpCheck(facts)).toMatchObject({ status: 'partial', score: 0.5 });
  });

  it('a page without tools fails the check, which stays weightless', async () => {
    const { facts } = await scan('bare');
    expect(facts.webmcp).toMatchObject({ outcome: 'loaded', tools: [] });
    expect(webmcpCheck(facts)).toMatchObject({ status: 'fail', score: 0, weight: 0 });
    expect(scoreSite(facts, null).findings.some((f) => f.id === 'webmcp')).toBe(false);
  });

  it('refuses what the page asks of private addresses, and the private server sees nothing', async () => {
    const site = await startFixtureSite('webmcpPrivate');
    const seen: string[] = [];
    const privateServer = http.createServer((req, res) => {
      seen.push(req.url ?? '');
      res.end('secret');
    });
    privateServer.on('upgrade', (req, socket) => {
      seen.push(`upgrade ${req.url}`);
      socket.destroy();
    });
    await new Promise<void>((resolve) => privateServer.listen(site.port, '127.0.0.2', () => resolve()));
    try {
      const facts = await crawlSite({
        domain: site.domain,
        fetch,
        userAgent,
        limits,
        schemes: ['http'],
        browser: { pool, page_budget_ms: PAGE_BUDGET_MS },
      });
      expect(facts.webmcp?.tools.map((t) => t.name)).toEqual(['probe']);
      expect(facts.webmcp?.blocked).toEqual(
        expect.arrayContaining([
          `http://127.0.0.2:${site.port}/secret`,
          'http://169.254.169.254/latest/meta-data/',
          `http://127.0.0.2:${site.port}/x.js`,
        ]),
      );
      expect(seen).toEqual([]);
    } finally {
      privateServer.closeAllConnections();
      await new Promise<void>((resolve) => privateServer.close(() => resolve()));
      await site.close();
    }
  });

  it('ends a page that never finishes loading at its budget, keeping what it registered', async () => {
    const { facts } = await scan('webmcpHang');
    expect(facts.webmcp?.outcome).toBe('time_budget');
    expect(facts.webmcp?.tools.map((t) => t.name)).toEqual(['early']);
    expect(webmcpCheck(facts)).toMatchObject({ status: 'pass' });
  });

  it('ends a page whose script never yields, and the pool goes on with the next page', async () => {
    const spun = await scan('webmcpSpin');
    expect(spun.facts.webmcp?.outcome).toBe('time_budget');
    expect(spun.facts.webmcp?.tools.map((t) => t.name)).toEqual(['before_spin']);
    const next = await scan('webmcpTools');
    expect(next.facts.webmcp?.outcome).toBe('loaded');
  });

  it('without a browser the check is not measured', async () => {
    const site = await startFixtureSite('webmcpTools');
    try {
      const facts = await crawlSite({ domain: site.domain, fetch, userAgent, limits, schemes: ['http'] });
      expect(facts.webmcp).toBeNull();
      expect(webmcpCheck(facts)).toMatchObject({ status: 'unable_to_check', score: null });
    } finally {
      await site.close();
    }
  });
});
