/**
 * The owner dashboard (issue 14 section 2) against a real deployment: two accounts with their own
 * sites, traffic from the real beacon and server-side feed, a scan of a fixture site over loopback,
 * and a real OAuth client connected to the owner-scoped MCP server. The dashboard is signed into
 * through the authorization server's own sign-in page, in headless Chromium and as a cookie-jar
 * browser; each page is audited with axe-core and screenshotted to test/artifacts/.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../servers/config.ts';
import { browserAvailable, launchChromium, seriousAxeViolations } from '../helpers/browser.ts';
import { dialects } from '../helpers/databases.ts';
import { type FixtureSite, scannerOnLoopback, startFixtureSite } from '../helpers/fixture-sites.ts';
import {
  authorizeInBrowser,
  CookieJar,
  mcpInitializeStatus,
  type OwnerCredentials,
  OwnerTokenClient,
} from '../helpers/oauth.ts';
import { waitFor } from '../helpers/receivers.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

const artifacts = path.join(projectRoot, 'test', 'artifacts');

const CHROME =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';
const GPTBOT =
  'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; GPTBot/1.1; +https://openai.com/gptbot';

interface Owner extends OwnerCredentials {
  key: string;
  siteId: string;
  domain: string;
}

/** A dashboard session as a cookie-jar browser: sign-in on the authorization server's page, back to the callback. */
async function signInToDashboard(site: string, owner: OwnerCredentials): Promise<CookieJar> {
  const jar = new CookieJar();
  const start = await jar.fetch(`${site}/dashboard/sign-in`);
  expect(start.status).toBe(303);
  const flow = await authorizeInBrowser(start.headers.get('location') as string, owner, {
    jar,
    stopAt: (url) => url.includes('/dashboard/callback'),
  });
  // Signed in and first-party: no consent page on the way.
  expect(flow.pages.map((p) => p.html ?? '').join('')).not.toContain('name="decision"');
  const back = await jar.fetch(flow.redirect.href);
  expect(back.status).toBe(303);
  expect(back.headers.get('location')).toBe(`${site}/dashboard`);
  return jar;
}

const csrfOf = (page: string) => /name="csrf" value="([^"]+)"/.exec(page)?.[1] as string;

describe.each(dialects)('owner dashboard (%s)', (dialect) => {
  let service: TestService;
  let site: string;
  let api: string;
  let fixture: FixtureSite;
  let alice: Owner;
  let bob: Owner;

  async function owner(email: string, domain: string): Promise<Owner> {
    const password = 'correct horse battery staple';
    const account = await fetch(`${api}/account`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password }),
    });
    expect(account.status).toBe(201);
    const key = ((await account.json()) as { key: { service_key: string } }).key.service_key;
    const install = await fetch(`${api}/pixel-install`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-key': key },
      body: JSON.stringify({ domain }),
    });
    expect(install.status).toBeLessThan(300);
    const siteId = ((await install.json()) as { site_id: string }).site_id;
    return { email, password, key, siteId, domain };
  }

  const mcpStatus = (token: string) => mcpInitializeStatus(`${service.config.mcp_url}/auth`, token);

  beforeAll(async () => {
    mkdirSync(artifacts, { recursive: true });
    fixture = await startFixtureSite('bare');
    service = await startTestService(dialect, {
      'rate_limits.unauthenticated_writes.points': 1000,
      ...scannerOnLoopback,
      'scanner.max_pages': 10,
    });
    site = service.config.site_url;
    api = service.config.public_api_url;
    alice = await owner('alice@dashboard.test', 'alice-shop.com');
    bob = await owner('bob@dashboard.test', 'bob-blog.com');
    // Traffic: a person through the beacon, a crawler through the server-side feed.
    const beacon = await fetch(
      `${api}/beacon?${new URLSearchParams({ site: alice.siteId, url: 'https://alice-shop.com/spring' })}`,
      { headers: { 'user-agent': CHROME } },
    );
    expect(beacon.status).toBe(204);
    const events = await fetch(`${api}/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-key': alice.key },
      body: JSON.stringify({
        site_id: alice.siteId,
        events: [
          {
            ts: new Date().toISOString(),
            url: 'https://alice-shop.com/',
            user_agent: GPTBOT,
            ip: '203.0.113.9',
          },
          {
            ts: new Date().toISOString(),
            url: 'https://alice-shop.com/faq',
            user_agent: GPTBOT,
            ip: '203.0.113.9',
          },
        ],
      }),
    });
    expect(events.status).toBeLessThan(300);
    await waitFor(async () => {
      const stats = (await (
        await fetch(`${api}/site-stats?site_id=${alice.siteId}`, { headers: { 'x-service-key': alice.key } })
      ).json()) as { sites: Array<{ totals: { events: number } }> };
      return (stats.sites[0]?.totals.events ?? 0) >= 3;
    }, 15_000);
    // Alice's scan of a site with findings (private: only her account sees it).
    const scan = await fetch(`${api}/scans`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-key': alice.key },
      body: JSON.stringify({ domain: fixture.domain, public: false }),
    });
    expect(scan.status).toBe(202);
    const { status_url } = (await scan.json()) as { status_url: string };
    await waitFor(async () => {
      const s = (await (await fetch(status_url, { headers: { 'x-service-key': alice.key } })).json()) as {
        status: string;
      };
      return s.status === 'done' || s.status === 'failed';
    }, 25_000);
  }, 90_000);

  afterAll(async () => {
    await service?.close();
    await fixture?.close();
  });

  it('signed out, /dashboard offers the sign-in; deeper pages send the owner to sign in and back', async () => {
    const res = await fetch(`${site}/dashboard`);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('x-robots-tag')).toContain('noindex');
    expect(await res.text()).toContain(`href="${site}/dashboard/sign-in"`);
    const deep = await fetch(`${site}/dashboard/sites/${alice.siteId}`, { redirect: 'manual' });
    expect(deep.status).toBe(303);
    const authorize = new URL(deep.headers.get('location') as string);
    expect(authorize.href.startsWith(`${service.config.auth_url}/oauth/authorize?`)).toBe(true);
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorize.searchParams.get('resource')).toBe(`${service.config.mcp_url}/auth`);
    // A sign-in started elsewhere, or a forged callback, makes no session.
    const forged = await fetch(`${site}/dashboard/callback?code=x&state=y`, { redirect: 'manual' });
    expect(forged.status).toBe(400);
    expect(forged.headers.getSetCookie().some((c) => c.startsWith('agsvc_dashboard='))).toBe(false);
  });

  it('shows one account its own sites, traffic, scans and keys - never another account’s', async () => {
    const jar = await signInToDashboard(site, alice);
    const page = await (await jar.fetch(`${site}/dashboard`)).text();
    expect(page).toContain('data-testid="account-email">alice@dashboard.test<');
    expect(page).toContain(`href="${site}/dashboard/sites/${alice.siteId}">alice-shop.com</a>`);
    expect(page).not.toContain('bob-blog.com');
    expect(page).toContain(fixture.domain);
    expect(page).toMatch(/data-testid="findings-(critical|warning|info)"/);

    const sitePage = await (await jar.fetch(`${site}/dashboard/sites/${alice.siteId}`)).text();
    expect(sitePage).toMatch(/data-testid="traffic-totals">3 events: 2 from AI agents/);
    expect(sitePage).toMatch(/<svg role="img" aria-label="Events per day by category/);
    expect(sitePage).toContain(`${api}/beacon?site=${alice.siteId}`);
    expect(sitePage).toContain('GPTBot');
    expect((await jar.fetch(`${site}/dashboard/sites/${bob.siteId}`)).status).toBe(404);

    const bobJar = await signInToDashboard(site, bob);
    const bobPage = await (await bobJar.fetch(`${site}/dashboard`)).text();
    expect(bobPage).toContain('bob-blog.com');
    expect(bobPage).not.toContain('alice-shop.com');
    expect(bobPage).not.toContain(fixture.domain);
    expect((await bobJar.fetch(`${site}/dashboard/sites/${alice.siteId}`)).status).toBe(404);
  });

  it('forms need the session’s anti-forgery token; keys are made and revoked; a site is added', async () => {
    const jar = await signInToDashboard(site, alice);
    const other = await signInToDashboard(site, bob);
    const page = await (await jar.fetch(`${site}/dashboard`)).text();
    const csrf = csrfOf(page);
    const otherCsrf = csrfOf(await (await other.fetch(`${site}/dashboard`)).text());
    const post = (j: CookieJar, p: string, body: Record<string, string>) =>
      j.fetch(`${site}${p}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(body),
      });
    expect((await post(jar, '/dashboard/keys', { label: 'no token' })).status).toBe(403);
    expect((await post(jar, '/dashboard/keys', { label: 'stolen', csrf: otherCsrf })).status).toBe(403);
    expect((await post(new CookieJar(), '/dashboard/keys', { label: 'nobody', csrf })).status).toBe(403);

    const created = await post(jar, '/dashboard/keys', { label: 'dashboard key', csrf });
    expect(created.status).toBe(200);
    expect(created.headers.get('cache-control')).toBe('no-store');
    const key = /data-testid="new-key">([^<]+)</.exec(await created.text())?.[1] as string;
    expect(key).toMatch(/^agsvc_sk_/);
    const listed = (await (
      await fetch(`${api}/account/keys`, { headers: { 'x-service-key': key } })
    ).json()) as {
      keys: Array<{ key_id: string; label: string | null }>;
    };
    const keyId = listed.keys.find((k) => k.label === 'dashboard key')?.key_id as string;
    expect(keyId).toBeDefined();
    const revoked = await post(jar, `/dashboard/keys/${keyId}/revoke`, { csrf });
    expect(revoked.status).toBe(303);
    expect((await fetch(`${api}/account/keys`, { headers: { 'x-service-key': key } })).status).toBe(401);

    const bad = await post(jar, '/dashboard/sites', { domain: 'not a domain', csrf });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toMatch(/role="alert">domain/);
    const added = await post(jar, '/dashboard/sites', { domain: 'alice-second.com', csrf });
    expect(added.status).toBe(303);
    const addedPage = await (await jar.fetch(added.headers.get('location') as string)).text();
    expect(addedPage).toContain('<h1>alice-second.com</h1>');
    expect(addedPage).toContain('Prove you own alice-second.com');
  });

  it('lists the OAuth clients the owner approved and revokes one: its tokens stop working at once', async () => {
    const client = await OwnerTokenClient.register(service.config.auth_url);
    const tokens = await client.tokens(alice, `${service.config.mcp_url}/auth`);
    expect(await mcpStatus(tokens.access_token)).toBe(200);

    const rest = (await (
      await fetch(`${api}/account/clients`, { headers: { 'x-service-key': alice.key } })
    ).json()) as {
      clients: Array<{ grant_id: string; client_id: string; client_name: string; first_party: boolean }>;
    };
    const grant = rest.clients.find((c) => c.client_id === client.clientId);
    expect(grant?.client_name).toBe('Owner token test client');
    expect(rest.clients.some((c) => c.first_party)).toBe(true);
    // Another account cannot revoke it.
    const foreign = await fetch(`${api}/account/clients/${grant?.grant_id}`, {
      method: 'DELETE',
      headers: { 'x-service-key': bob.key },
    });
    expect(foreign.status).toBe(404);

    const jar = await signInToDashboard(site, alice);
    const page = await (await jar.fetch(`${site}/dashboard`)).text();
    expect(page).toContain(`data-grant="${grant?.grant_id}"`);
    const revoke = await jar.fetch(
      `${site}/dashboard/clients/${encodeURIComponent(grant?.grant_id ?? '')}/revoke`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ csrf: csrfOf(page) }),
      },
    );
    expect(revoke.status).toBe(303);
    expect(await mcpStatus(tokens.access_token)).toBe(401);
    await expect(client.refresh(tokens.refresh_token as string)).rejects.toThrow();
    expect(await (await jar.fetch(`${site}/dashboard`)).text()).not.toContain(
      `data-grant="${grant?.grant_id}"`,
    );
  });

  it('sign-out, or revoking every authorization of the account, ends the session', async () => {
    const jar = await signInToDashboard(site, bob);
    const page = await (await jar.fetch(`${site}/dashboard`)).text();
    const cookie = jar.header();
    const out = await jar.fetch(`${site}/dashboard/sign-out`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf: csrfOf(page) }),
    });
    expect(out.status).toBe(200);
    const replay = await fetch(`${site}/dashboard`, { headers: { cookie } });
    expect(await replay.text()).toContain(`href="${site}/dashboard/sign-in"`);

    const again = await signInToDashboard(site, bob);
    expect(await (await again.fetch(`${site}/dashboard`)).text()).toContain('bob-blog.com');
    const all = await fetch(`${api}/account/revoke-tokens`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-key': bob.key },
      body: '{}',
    });
    expect(all.status).toBe(200);
    expect(await (await again.fetch(`${site}/dashboard`)).text()).toContain(
      `href="${site}/dashboard/sign-in"`,
    );
  });

  it('an open redirect through the sign-in is refused: it only ever returns to the dashboard', async () => {
    const jar = new CookieJar();
    const start = await jar.fetch(
      `${site}/dashboard/sign-in?return_to=${encodeURIComponent('https://evil.example/')}`,
    );
    const flow = await authorizeInBrowser(start.headers.get('location') as string, alice, {
      jar,
      stopAt: (url) => url.includes('/dashboard/callback'),
    });
    const back = await jar.fetch(flow.redirect.href);
    expect(back.headers.get('location')).toBe(`${site}/dashboard`);
  });

  it.skipIf(!browserAvailable)(
    'in Chromium: sign in on the real page, every dashboard page passes axe, forms work without scripts',
    async () => {
      const browser = await launchChromium();
      const cspErrors: string[] = [];
      try {
        const context = await browser.newContext({
          viewport: { width: 1200, height: 900 },
          javaScriptEnabled: false,
        });
        const page = await context.newPage();
        page.on('console', (m) => {
          // The authorization server's pages have no icon: the browser's /favicon.ico 404 is not ours to judge.
          if (m.type() === 'error' && /Content Security Policy/i.test(m.text()))
            cspErrors.push(`${page.url()}: ${m.text()}`);
        });
        await page.goto(`${site}/dashboard`);
        await page.getByRole('link', { name: 'Sign in', exact: true }).click();
        await page.getByLabel('Email').fill(alice.email);
        await page.getByLabel('Password').fill(alice.password);
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.waitForURL(`${site}/dashboard`);
        expect(await page.getByTestId('account-email').textContent()).toBe(alice.email);
        await page.getByLabel('New key label (optional)').fill('from chromium');
        await page.getByRole('button', { name: 'Create a key' }).click();
        expect(await page.getByTestId('new-key').textContent()).toMatch(/^agsvc_sk_/);

        // axe-core runs as an injected script, which the pages' CSP rightly refuses: audit in a
        // context that bypasses CSP, with the same session.
        const audit = await browser.newContext({ viewport: { width: 1200, height: 900 }, bypassCSP: true });
        await audit.addCookies(await context.cookies());
        const auditPage = await audit.newPage();
        for (const [name, url] of [
          ['dashboard', `${site}/dashboard`],
          ['dashboard-site', `${site}/dashboard/sites/${alice.siteId}`],
        ] as const) {
          const response = await auditPage.goto(url, { waitUntil: 'load' });
          expect(response?.status(), url).toBe(200);
          await auditPage.screenshot({
            path: path.join(artifacts, `page-${name}-${dialect}.png`),
            fullPage: true,
          });
          expect(await seriousAxeViolations(auditPage, url)).toEqual([]);
        }
        await page.goto(`${site}/dashboard`);
        await page.getByRole('button', { name: 'Sign out' }).click();
        await page.getByRole('heading', { name: 'Signed out of the dashboard' }).waitFor();
      } finally {
        await browser.close();
      }
      expect(cspErrors).toEqual([]);
    },
    120_000,
  );
});
