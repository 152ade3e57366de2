/**
 * Page data that needs more setup than the browser test: the agent-versus-human traffic section of
 * a scan report (a verified site whose owner opted in, with server-side events), and the spotlight
 * list on /leaderboard and /agenthub kept apart from the ranking (a paid spotlight placement).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/databases.ts';
import { scannerOnLoopback } from '../helpers/fixture-sites.ts';
import { waitFor } from '../helpers/receivers.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { newAccount, payingFetch } from '../helpers/x402-payer.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are checked structurally
type Json = Record<string, any>;

const GPTBOT =
  'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.1; +https://openai.com/gptbot)';
const CHROME =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

describe.each(dialects)('page data (%s)', (dialect) => {
  let service: TestService;
  let site: string;
  let api: string;
  let owned: Server;
  let host: string;
  let token = '';

  beforeAll(async () => {
    owned = createServer((req, res) => {
      if (req.url === '/.well-known/agent-service-verification.txt') {
        res.writeHead(200, { 'content-type': 'text/plain' }).end(`agent-service-verification=${token}\n`);
      } else if (req.url === '/') {
        res
          .writeHead(200, { 'content-type': 'text/html' })
          .end(
            '<!doctype html><html lang="en"><head><title>Owned</title></head><body><h1>Owned</h1></body></html>',
          );
      } else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => owned.listen(0, '127.0.0.1', resolve));
    host = `127.0.0.1:${(owned.address() as AddressInfo).port}`;
    service = await startTestService(dialect, {
      'payments.pay_to': newAccount().address,
      'rate_limits.unauthenticated_writes.points': 1000,
      ...scannerOnLoopback,
      'scanner.max_pages': 5,
      'outbound.allow_private_networks': true,
    });
    site = service.config.site_url;
    api = service.config.public_api_url;
  });
  afterAll(async () => {
    await service?.close();
    owned?.close();
  });

  const call = async (method: string, path: string, body?: unknown, key?: string) =>
    fetch(`${api}${path}`, {
      method,
      headers: {
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(key ? { 'x-service-key': key } : {}),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });

  it("shows a site's agent-versus-human traffic on its report once its verified owner opts in", async () => {
    const account = (await (
      await call('POST', '/account', {
        email: `pages-${dialect}@example.com`,
        password: 'correct horse battery',
      })
    ).json()) as Json;
    const key = account.key.service_key as string;
    const installed = (await (await call('POST', '/pixel-install', { domain: host }, key)).json()) as Json;
    token = installed.verification.token;
    expect(
      ((await (await call('POST', `/sites/${installed.site_id}/verify`, undefined, key)).json()) as Json)
        .verified,
    ).toBe(true);
    const now = Date.now();
    const events = [GPTBOT, GPTBOT, GPTBOT, CHROME, CHROME].map((ua, i) => ({
      ts: now - i * 1000,
      url: '/',
      user_agent: ua,
    }));
    expect((await call('POST', '/events', { site_id: installed.site_id, events }, key)).status).toBe(200);
    await service.services.traffic.drain();

    const scan = (await (await call('POST', '/scans', { domain: host })).json()) as Json;
    await waitFor(async () => {
      const s = (await (await fetch(scan.status_url)).json()) as Json;
      return s.status === 'done' || s.status === 'failed';
    }, 25_000);

    // Not opted in: the report has no traffic section.
    const closed = await (await fetch(`${site}/scan/${encodeURIComponent(host)}`)).text();
    expect(closed).toContain('Agent-readiness report');
    expect(closed).not.toContain('Events per day by category');

    // Opted in (share_network): the figures of GET /site-stats, drawn per category per day.
    expect(
      (await call('POST', '/pixel-install', { domain: host, share_network: true }, key)).status,
    ).toBeLessThan(300);
    const stats = (await (
      await call('GET', `/site-stats?site_id=${installed.site_id}`, undefined, key)
    ).json()) as Json;
    const totals = stats.sites[0].totals;
    expect(totals).toMatchObject({ ai_agents: 3, human: 2 });
    const open = await (await fetch(`${site}/scan/${encodeURIComponent(host)}`)).text();
    expect(open).toContain(
      `${totals.ai_agents} AI agent events, ${totals.human} human, ${totals.other_bots} other bots`,
    );
    expect(open).toMatch(/<svg role="img" aria-label="Events per day by category over 30 days"/);
  }, 60_000);

  it('lists a paid spotlight apart from the ranking on /leaderboard and on /agenthub, marked sponsored', async () => {
    const before = await (await fetch(`${site}/leaderboard`)).text();
    expect(before).not.toContain('id="spotlight-h"');
    const res = await payingFetch(newAccount(), 30)(`${site}/api/public/x402/spotlight`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        domain: 'spot-one.com',
        url: 'https://spot-one.com/agents',
        blurb: 'Agents welcome',
        business_name: 'Spot One',
      }),
    });
    expect(res.status).toBe(200);
    const board = await (await fetch(`${site}/leaderboard`)).text();
    const spotlight = board.slice(board.indexOf('id="spotlight-h"'), board.indexOf('<h2>Ranking</h2>'));
    expect(spotlight).toContain(
      '<a href="https://spot-one.com/agents" rel="sponsored">Spot One</a>: Agents welcome',
    );
    expect(spotlight).toContain('Sponsored');
    expect(board.slice(board.indexOf('<h2>Ranking</h2>'))).not.toContain('spot-one.com');
    const hub = await (await fetch(`${site}/agenthub`)).text();
    expect(hub.slice(hub.indexOf('id="spotlight-h"'), hub.indexOf('id="top-h"'))).toContain(
      '<a href="https://spot-one.com/agents" rel="sponsored"><strong>spot-one.com</strong></a> <span class="sponsored">Sponsored</span>',
    );
  });
});
