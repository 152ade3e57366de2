/**
 * The public pages of issue 14 section 2 against a real deployment with real data: a fixture site
 * scanned over loopback, a soul registered by running the script the /robot-soul page shows. Each
 * page is opened in headless Chromium (playwright-core), screenshotted to test/artifacts/, and
 * checked with axe-core (no serious or critical violation); every link between pages resolves; the
 * scan report shows the numbers of GET /scan-score; Markdown on Accept: text/markdown; the CSP.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../servers/config.ts';
import { browserAvailable, launchChromium, seriousAxeViolations } from '../helpers/browser.ts';
import { type LocalChain, startLocalChain, USDC } from '../helpers/chain.ts';
import { dialects } from '../helpers/databases.ts';
import { type FixtureSite, scannerOnLoopback, startFixtureSite } from '../helpers/fixture-sites.ts';
import { waitFor } from '../helpers/receivers.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { payingFetch } from '../helpers/x402-payer.ts';

const artifacts = path.join(projectRoot, 'test', 'artifacts');

describe.skipIf(!browserAvailable).each(dialects)('public pages (%s)', (dialect) => {
  let service: TestService;
  let site: string;
  let api: string;
  let well: FixtureSite;
  let agentId: string;
  let chain: LocalChain;

  beforeAll(async () => {
    mkdirSync(artifacts, { recursive: true });
    [well, chain] = await Promise.all([startFixtureSite('wellPrepared'), startLocalChain({ payerUsdc: 0n })]);
    service = await startTestService(dialect, {
      'payments.pay_to': chain.accounts.payTo.address,
      'payments.rpc_url': chain.rpcUrl,
      'rate_limits.unauthenticated_writes.points': 1000,
      ...scannerOnLoopback,
    });
    site = service.config.site_url;
    api = service.config.public_api_url;
    const res = await fetch(`${api}/scans`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ domain: well.domain }),
    });
    expect(res.status).toBe(202);
    const { status_url } = (await res.json()) as { status_url: string };
    await waitFor(async () => {
      const scan = (await (await fetch(status_url)).json()) as { status: string };
      return scan.status === 'done' || scan.status === 'failed';
    }, 25_000);
  }, 60_000);
  afterAll(async () => {
    await service?.close();
    await well?.close();
    await chain?.close();
  });

  it('the script /robot-soul shows registers a soul and writes its memory against this deployment', async () => {
    const markdown = await (
      await fetch(`${site}/robot-soul`, { headers: { accept: 'text/markdown' } })
    ).text();
    const script = /```js\n([\s\S]*?)```/.exec(markdown)?.[1];
    expect(script).toContain(`${api}/soul/challenge`);
    const file = path.join(artifacts, `register-soul-${dialect}.mjs`);
    writeFileSync(file, script as string);
    // Run twice, as a reader trying it again would: each run registers its own soul (issue 33 item 6).
    const ids: string[] = [];
    for (let run = 0; run < 2; run += 1) {
      const { stdout } = await promisify(execFile)(process.execPath, [file], { cwd: projectRoot });
      const [first, second] = stdout.split('\n');
      expect(first).toMatch(/^urn:ietf:params:oauth:jwk-thumbprint:sha-256:/);
      expect(second).toMatch(/^201 /);
      ids.push(first as string);
    }
    expect(new Set(ids).size).toBe(2);
    agentId = ids[0] as string;
  }, 60_000);

  it('the scan report shows the numbers of GET /scan-score; pages answer Markdown and carry a strict CSP', async () => {
    const score = (await (await fetch(`${api}/scan-score?domain=${well.domain}`)).json()) as {
      score: number;
      tier: { name: string };
      components: Array<{ id: string; score: number | null }>;
      findings: Array<{ fix: string }>;
    };
    const res = await fetch(`${site}/scan/${well.domain}`);
    expect(res.status).toBe(200);
    const csp = res.headers.get('content-security-policy') ?? '';
    const scriptSrc = csp.split(';').find((d) => d.trim().startsWith('script-src')) ?? '';
    expect(scriptSrc).not.toContain('unsafe-inline');
    expect(res.headers.get('vary')).toMatch(/Accept/);
    const page = await res.text();
    expect(page).toContain(`<strong data-testid="score">${score.score}</strong>`);
    expect(page).toContain(`data-testid="tier">${score.tier.name}<`);
    for (const c of score.components) {
      expect(page).toMatch(
        new RegExp(
          `data-component="${c.id}"><td>[^<]+</td><td class="num">[\\d.]+</td><td class="num">${c.score ?? 'no data'}</td>`,
        ),
      );
    }
    expect(page).toMatch(/<svg role="img" aria-label="Signal Strength \d+ of 100/);
    const md = await (
      await fetch(`${site}/scan/${well.domain}`, { headers: { accept: 'text/markdown' } })
    ).text();
    expect(md).toContain(`Signal Strength: ${score.score}/100 (${score.tier.name})`);

    const board = await (await fetch(`${site}/leaderboard`, { headers: { accept: 'text/markdown' } })).text();
    expect(board).toContain(
      `| 1 | [${well.domain}](${site}/scan/${encodeURIComponent(well.domain)}) | ${score.score} |`,
    );
    expect((await fetch(`${site}/scan/never-scanned-site.com`)).status).toBe(404);
    expect((await fetch(`${site}/scan/not a domain`)).status).toBe(400);
  });

  it('the registry finds the soul by name with the GET form, and not by a name it does not have', async () => {
    const found = await (await fetch(`${site}/souls?q=My+robot`)).text();
    expect(found).toContain(`href="${site}/souls/${encodeURIComponent(agentId)}"`);
    const none = await (await fetch(`${site}/souls?q=nobody-here`)).text();
    expect(none).not.toContain(encodeURIComponent(agentId));
    expect(none).toContain('No soul matches “nobody-here”');
    const soulPage = await (await fetch(`${site}/souls/${encodeURIComponent(agentId)}`)).text();
    expect(soulPage).toContain('First memory');
  });

  it('a paid featured bid puts the Featured Brand in the header of every page, /featured and /agenthub show it', async () => {
    const before = await (await fetch(`${site}/leaderboard`)).text();
    expect(before).not.toContain('Featured Brand:');
    expect(await (await fetch(`${site}/featured`)).text()).toContain('The slot is free.');
    const payer = privateKeyToAccount((await chain.newAccount(10n * USDC)).privateKey);
    const res = await payingFetch(payer, 100)(`${site}/api/public/x402/featured-bid`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        domain: 'alpha-shop.com',
        bid_usdc: 2,
        days: 2,
        url: 'https://alpha-shop.com/spring',
        blurb: 'Alpha <ready> for agents',
      }),
    });
    expect(res.status).toBe(200);
    const slot = (await (await fetch(`${api}/featured`)).json()) as { minimum_next_bid_usdc: number };
    const brand =
      'Featured Brand: <a href="https://alpha-shop.com/spring" rel="sponsored">alpha-shop.com</a> - Alpha &lt;ready&gt; for agents';
    for (const p of [
      '/',
      '/leaderboard',
      `/scan/${well.domain}`,
      '/souls',
      '/robot-soul',
      '/docs',
      '/agenthub',
    ]) {
      expect(await (await fetch(`${site}${p}`)).text(), p).toContain(brand);
    }
    const featured = await (await fetch(`${site}/featured`)).text();
    expect(featured).toMatch(
      /data-testid="holder"><a href="https:\/\/alpha-shop.com\/spring" rel="sponsored"><strong>alpha-shop.com/,
    );
    expect(featured).toContain(`data-testid="minimum">${slot.minimum_next_bid_usdc.toFixed(2)} USDC<`);
    expect(featured).toContain(`POST ${site}/api/public/x402/featured-bid`);
    const hub = await (await fetch(`${site}/agenthub`)).text();
    expect(hub).toMatch(
      /<h2 id="featured-h">Featured<\/h2>\s*<ul><li class="card"><a href="https:\/\/alpha-shop.com\/spring" rel="sponsored"><strong>alpha-shop.com<\/strong><\/a> <span class="sponsored">Sponsored<\/span>/,
    );
  }, 60_000);

  it('every page opens in Chromium without serious or critical axe violations, and every link resolves', async () => {
    const browser = await launchChromium();
    const pages = [
      '/',
      '/leaderboard',
      '/agenthub',
      '/featured',
      `/scan/${well.domain}`,
      '/souls',
      `/souls/${encodeURIComponent(agentId)}`,
      '/robot-soul',
      '/agent-requests',
      '/docs',
    ];
    const links = new Set<string>();
    const cspErrors: string[] = [];
    try {
      // One page keeps the pages' own CSP (any violation is reported); axe-core is injected as
      // an inline script, which that CSP rightly refuses, so the audit runs in a second page.
      const strict = await browser.newPage({ viewport: { width: 1200, height: 900 } });
      strict.on('console', (m) => {
        if (m.type() === 'error') cspErrors.push(`${strict.url()}: ${m.text()}`);
      });
      const page = await browser.newPage({ viewport: { width: 1200, height: 900 }, bypassCSP: true });
      // Swagger UI renders /docs from the 1.2 MB OpenAPI document: ~1.4 s on an idle machine, over
      // 15 s in CI's full run with Chromium sharing two cores with the other test files. The wait
      // is for the render, not a measure of its speed.
      const rendered = { timeout: 60_000 };
      for (const p of pages) {
        const response = await strict.goto(`${site}${p}`, { waitUntil: 'load' });
        expect(response?.status(), p).toBe(200);
        if (p === '/docs') await strict.locator('.swagger-ui .info').waitFor(rendered);
        await page.goto(`${site}${p}`, { waitUntil: 'load' });
        if (p === '/docs') await page.locator('.swagger-ui .info').waitFor(rendered);
        const name =
          p === '/'
            ? 'home'
            : p
                .slice(1)
                .replace(/[^a-z0-9]+/gi, '-')
                .slice(0, 60);
        await page.screenshot({
          path: path.join(artifacts, `page-${name}-${dialect}.png`),
          fullPage: true,
        });
        expect(await seriousAxeViolations(page, p)).toEqual([]);
        const hrefs = (await page.evaluate(
          'Array.from(document.querySelectorAll("a[href]"), (a) => a.href)',
        )) as string[];
        for (const href of hrefs) {
          const url = new URL(href);
          url.hash = '';
          if (url.origin === new URL(site).origin) links.add(url.href);
        }
      }
    } finally {
      await browser.close();
    }
    expect(cspErrors).toEqual([]);
    expect(links.size).toBeGreaterThan(20);
    const broken: string[] = [];
    for (const link of links) {
      const res = await fetch(link);
      if (res.status !== 200) broken.push(`${res.status} ${link}`);
    }
    expect(broken).toEqual([]);
  }, 300_000);
});
