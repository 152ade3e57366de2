/**
 * The WebMCP check through the service, once per dialect: with `scanner.webmcp.enabled` the scan
 * worker opens the home page in the service's own browser pool and stores the tools with the scan;
 * the result shows the check and the browser's requests as its evidence. The service's own home
 * page registers its free public tools, and its own scan passes the check.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webmcpTools } from '../../servers/adapters/webmcp-tools.ts';
import { operations } from '../../servers/registry.ts';
import { browserAvailable, chromiumPath, launchChromium } from '../helpers/browser.ts';
import { dialects } from '../helpers/databases.ts';
import { type FixtureSite, scannerOnLoopback, startFixtureSite } from '../helpers/fixture-sites.ts';
import { waitFor } from '../helpers/receivers.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

// biome-ignore lint/suspicious/noExplicitAny: scan results are read structurally
type Json = Record<string, any>;

describe.skipIf(!browserAvailable).each(dialects)('WebMCP check in scans (%s)', (dialect) => {
  let service: TestService;
  let tools: FixtureSite;
  let broken: FixtureSite;

  beforeAll(async () => {
    [tools, broken] = await Promise.all([startFixtureSite('webmcpTools'), startFixtureSite('webmcpBroken')]);
    service = await startTestService(dialect, {
      'rate_limits.unauthenticated_writes.points': 1000,
      ...scannerOnLoopback,
      'scanner.request_timeout_ms': 5000,
      'scanner.webmcp.enabled': true,
      'scanner.webmcp.chromium_path': chromiumPath,
      'scanner.webmcp.page_budget_ms': 10_000,
    });
  });
  afterAll(async () => {
    await service?.close();
    await Promise.all([tools, broken].map((s) => s?.close()));
  });

  async function scanToEnd(domain: string): Promise<Json> {
    const res = await fetch(`${service.config.public_api_url}/scans`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ domain }),
    });
    expect(res.status).toBe(202);
    const accepted = (await res.json()) as Json;
    let scan: Json = accepted;
    await waitFor(async () => {
      scan = (await (await fetch(accepted.status_url)).json()) as Json;
      return scan.status === 'done' || scan.status === 'failed';
    }, 60_000);
    expect(scan.status).toBe('done');
    return scan;
  }

  const checkOf = (scan: Json): Json =>
    (scan.result.components as Json[])
      .flatMap((c) => c.checks as Json[])
      .find((k) => k.id === 'webmcp') as Json;

  it('a site registering valid tools passes, with the browser requests as evidence', async () => {
    const check = checkOf(await scanToEnd(tools.domain));
    expect(check).toMatchObject({ status: 'pass', score: 1, weight: 0 });
    expect(check.seen).toMatch(/4 tool\(s\).*search_widgets, get_cart, track_order, contact_us/);
    expect(check.evidence.some((e: Json) => e.topic === 'webmcp' && e.url.endsWith('/tools.js'))).toBe(true);
  });

  it('a site registering broken tools is partial, with a finding naming the tool', async () => {
    const scan = await scanToEnd(broken.domain);
    expect(checkOf(scan)).toMatchObject({ status: 'partial', score: 0.5 });
    const finding = (scan.result.findings as Json[]).find((f) => f.id === 'webmcp');
    expect(finding?.seen).toMatch(/3 of 4 tool\(s\) break the draft: bad name!/);
  });

  it('our own home page registers the free public reads, and our own scan passes the check', async () => {
    const expected = webmcpTools(operations, service.config).map((t) => t.name);
    expect(expected).toEqual(expect.arrayContaining(['lookup_card_charge', 'get_scan', 'get_leaderboard']));
    const check = checkOf(await scanToEnd(new URL(service.config.site_url).host));
    expect(check).toMatchObject({ status: 'pass', score: 1 });
    expect(check.seen).toContain(`${expected.length} tool(s) registered with valid schemas`);
  });

  it('a tool of our home page, called as an agent in the browser would, answers from the API', async () => {
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      // The smallest model context: the page's tools kept where the test can call them.
      await page.addInitScript(`Object.defineProperty(Document.prototype, 'modelContext', { value: {
        tools: {}, registerTool(tool) { this.tools[tool.name] = tool; return Promise.resolve(); } } });`);
      await page.goto(`${service.config.site_url}/`);
      await page.waitForFunction('Object.keys(document.modelContext.tools).length > 0');
      const board = (await page.evaluate('document.modelContext.tools.get_leaderboard.execute({})')) as Json;
      expect(board).toMatchObject({ entries: expect.any(Array), scoring_version: expect.any(Number) });
      const missing = await page.evaluate(
        "document.modelContext.tools.get_scan.execute({ scan_id: '00000000-0000-7000-8000-000000000000' }).then(() => 'found', (e) => e.message)",
      );
      expect(missing).toMatch(/not found|no scan/i);
    } finally {
      await browser.close();
    }
  });
});
