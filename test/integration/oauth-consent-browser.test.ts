/**
 * The sign-in and consent pages in headless Chromium (playwright-core): found by their labels and
 * roles as assistive technology finds them, the consent naming the client, where it sends you back
 * and each scope in plain words. A screenshot of the consent screen is kept in test/artifacts/.
 */
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../servers/config.ts';
import { dialects } from '../helpers/databases.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

const executablePath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const artifacts = path.join(projectRoot, 'test', 'artifacts');
const redirectUri = 'http://127.0.0.1:7391/callback';

// Outside CI a machine without Chromium skips these; CI (.ci/run installs it) must run them.
describe.skipIf(!existsSync(executablePath) && process.env.CI !== 'true').each(dialects)(
  'consent screen in Chromium (%s)',
  (dialect) => {
    let service: TestService;
    const owner = { email: 'browser-owner@example.com', password: 'browser passphrase 1' };

    beforeAll(async () => {
      service = await startTestService(dialect);
      await service.services.accounts.create(owner);
    });
    afterAll(async () => {
      await service?.close();
    });

    async function authorizationUrl(): Promise<string> {
      const res = await fetch(`${service.config.auth_url}/oauth/clients/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          client_name: 'Claude <Desktop>',
          redirect_uris: [redirectUri],
          token_endpoint_auth_method: 'none',
        }),
      });
      expect(res.status).toBe(201);
      const { client_id } = (await res.json()) as { client_id: string };
      const url = new URL(`${service.config.auth_url}/oauth/authorize`);
      url.search = new URLSearchParams({
        client_id,
        redirect_uri: redirectUri,
        response_type: 'code',
        scope: 'agent-service email offline_access',
        state: 'browser-state',
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        code_challenge_method: 'S256',
      }).toString();
      return url.href;
    }

    it('signs in, shows the consent in plain words and returns a code on Allow', async () => {
      const { browser, page, callbacks } = await openBrowser();
      try {
        await page.goto(await authorizationUrl());

        await expect(page.getByRole('heading', { name: 'Sign in' }).count()).resolves.toBe(1);
        await page.getByLabel('Email').fill(owner.email);
        await page.getByLabel('Password').fill('not the password');
        await page.getByRole('button', { name: 'Sign in' }).click();
        await expect(page.getByRole('alert').textContent()).resolves.toMatch(
          /email or password is not right/,
        );
        await page.getByLabel('Password').fill(owner.password);
        await page.getByRole('button', { name: 'Sign in' }).click();

        const heading = page.getByRole('heading', { level: 1 });
        await expect(heading.textContent()).resolves.toBe('Allow Claude <Desktop> to access your account?');
        const text = (await page.locator('main').textContent()) ?? '';
        expect(text).toContain('127.0.0.1:7391');
        expect(text).toContain(owner.email);
        const items = await page.getByRole('list').getByRole('listitem').allTextContents();
        expect(items).toEqual([
          expect.stringMatching(/^Read your own sites, their agent-versus-human traffic/),
          expect.stringMatching(/^See the email address of your account/),
          expect.stringMatching(/^Stay connected after you close this window/),
        ]);
        mkdirSync(artifacts, { recursive: true });
        await page.screenshot({ path: path.join(artifacts, `consent-${dialect}.png`), fullPage: true });

        await page.getByRole('button', { name: 'Allow' }).click();
        await page.waitForURL(/127\.0\.0\.1:7391\/callback/);
        const back = new URL(callbacks.at(-1) as string);
        expect(back.searchParams.get('code')).toBeTypeOf('string');
        expect(back.searchParams.get('state')).toBe('browser-state');
        expect(back.searchParams.get('iss')).toBe(service.config.auth_url);
      } finally {
        await browser.close();
      }
    });

    it('returns access_denied on Deny', async () => {
      const { browser, page, callbacks } = await openBrowser();
      try {
        await page.goto(await authorizationUrl());
        await page.getByLabel('Email').fill(owner.email);
        await page.getByLabel('Password').fill(owner.password);
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.getByRole('button', { name: 'Deny' }).click();
        await page.waitForURL(/127\.0\.0\.1:7391\/callback/);
        expect(new URL(callbacks.at(-1) as string).searchParams.get('error')).toBe('access_denied');
      } finally {
        await browser.close();
      }
    });
  },
);

/** Headless Chromium with the client's redirect URI answered in place (it has no server). */
async function openBrowser() {
  const browser = await chromium.launch({
    executablePath,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
  const page = await browser.newPage();
  const callbacks: string[] = [];
  await page.route('http://127.0.0.1:7391/**', (route) => {
    callbacks.push(route.request().url());
    return route.fulfill({ status: 200, contentType: 'text/plain', body: 'done' });
  });
  return { browser, page, callbacks };
}
