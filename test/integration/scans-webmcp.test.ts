/**
 * The WebMCP check through the service, once per dialect: with `scanner.webmcp.enabled` the scan
 * worker opens the home page in the service's own browser pool and stores the tools with the scan;
 * the result shows the check and the browser's requests as its evidence. The service's own home
 * page registers its free public tools, and its own scan passes the check.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserAvailable, chromiumPath } from '../helpers/browser.ts';
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
});
