/**
 * Password guessing at the sign-in forms, written as the attack: a guessing loop at one account,
 * the same across many emails from one address, and a burst of concurrent guesses beside an
 * unrelated request. The service runs behind a trusted proxy (`trust_proxy: true`), so each case
 * comes from its own X-Forwarded-For address.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/databases.ts';
import { CookieJar, formAction, formField, openSignInForm, registerClient } from '../helpers/oauth.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

const ACCOUNT_LIMIT = 3;
const ADDRESS_LIMIT = 8;
const redirectUri = 'http://127.0.0.1:7777/callback';
const from = (address: string) => ({ 'x-forwarded-for': address });

describe.each(dialects)('sign-in guessing limits (%s)', (dialect) => {
  let service: TestService;
  let auth: string;
  let clientId: string;
  const owner = { email: 'guessed@example.com', password: 'correct horse battery staple' };

  beforeAll(async () => {
    service = await startTestService(dialect, {
      trust_proxy: true,
      'rate_limits.unauthenticated_writes.points': 1000,
      'rate_limits.sign_in_failures_per_account.points': ACCOUNT_LIMIT,
      'rate_limits.sign_in_failures_per_address.points': ADDRESS_LIMIT,
    });
    auth = service.config.auth_url;
    await service.services.accounts.create(owner);
    clientId = await registerClient(auth, redirectUri);
  });
  afterAll(async () => {
    await service?.close();
  });

  it('refuses guesses at one account past its limit, the right password and other addresses too, and an unknown email alike', async () => {
    const form = await openSignInForm(auth, clientId, redirectUri, from('203.0.113.1'));
    const guess = async (email: string, i: number) => {
      const res = await form.submit({ email, password: `wrong guess number ${i}` });
      await res.arrayBuffer();
      return res.status;
    };
    const known: number[] = [];
    for (let i = 0; i < ACCOUNT_LIMIT + 2; i++) known.push(await guess(owner.email, i));
    expect(known).toEqual([...Array(ACCOUNT_LIMIT).fill(401), 429, 429]);

    const right = await form.submit(owner);
    expect(right.status).toBe(429);
    expect(Number(right.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(right.headers.get('cache-control')).toBe('no-store');
    expect(await right.text()).toMatch(/Too many failed sign-ins for this account/);

    // The limit is the account's: another address, another spelling of the email, are refused too.
    const elsewhere = await openSignInForm(auth, clientId, redirectUri, from('203.0.113.2'));
    expect((await elsewhere.submit({ ...owner, email: ' Guessed@EXAMPLE.com' })).status).toBe(429);

    // An email without an account is counted and answered the same way: no enumeration.
    const unknown: number[] = [];
    const other = await openSignInForm(auth, clientId, redirectUri, from('203.0.113.3'));
    for (let i = 0; i < ACCOUNT_LIMIT + 2; i++) {
      const res = await other.submit({ email: 'nobody@example.com', password: `wrong guess number ${i}` });
      await res.arrayBuffer();
      unknown.push(res.status);
    }
    expect(unknown).toEqual(known);
  });

  it('forgets an account’s failures when its owner signs in', async () => {
    const person = { email: 'forgetful@example.com', password: 'correct horse battery staple' };
    await service.services.accounts.create(person);
    const wrong = { email: person.email, password: 'not the password at all' };
    const first = await openSignInForm(auth, clientId, redirectUri, from('203.0.113.10'));
    for (let i = 0; i < ACCOUNT_LIMIT - 1; i++) expect((await first.submit(wrong)).status).toBe(401);
    const signedIn = await first.submit(person);
    expect(signedIn.status).toBe(303);
    // Without the reset the account would have ACCOUNT_LIMIT attempts on record: the next guess would be refused.
    const second = await openSignInForm(auth, clientId, redirectUri, from('203.0.113.10'));
    for (let i = 0; i < ACCOUNT_LIMIT - 1; i++) expect((await second.submit(wrong)).status).toBe(401);
  });

  it('refuses one address guessing across many emails, and only that address', async () => {
    const form = await openSignInForm(auth, clientId, redirectUri, from('203.0.113.20'));
    const statuses: number[] = [];
    for (let i = 0; i <= ADDRESS_LIMIT; i++) {
      const res = await form.submit({ email: `sprayed-${i}@example.com`, password: 'Summer2026!Summer' });
      statuses.push(res.status);
      if (res.status === 429) {
        expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
        expect(await res.text()).toMatch(/Too many failed sign-ins from this address/);
      } else await res.arrayBuffer();
    }
    expect(statuses).toEqual([...Array(ADDRESS_LIMIT).fill(401), 429]);
    const elsewhere = await openSignInForm(auth, clientId, redirectUri, from('203.0.113.21'));
    expect(
      (await elsewhere.submit({ email: 'sprayed-x@example.com', password: 'Summer2026!Summer' })).status,
    ).toBe(401);
  });

  it('counts the claim form’s sign-in against the same limits', async () => {
    // The owner's account is refused since the first case; the claim page asks the same question.
    const signup = (await (await fetch(`${auth}/signup`, { method: 'POST' })).json()) as {
      claim_url: string;
    };
    const jar = new CookieJar();
    const page = await jar.fetch(signup.claim_url, { headers: from('203.0.113.30') });
    const html = await page.text();
    const res = await jar.fetch(new URL(formAction(html) as string, signup.claim_url).href, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...from('203.0.113.30') },
      body: new URLSearchParams({
        csrf: formField(html, 'csrf') as string,
        claim: formField(html, 'claim') as string,
        mode: 'signin',
        ...owner,
      }),
    });
    expect(res.status).toBe(429);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('limits forty concurrent guesses while an unrelated account creation and health check complete', async () => {
    const target = { email: 'stormed@example.com', password: 'correct horse battery staple' };
    await service.services.accounts.create(target);
    const form = await openSignInForm(auth, clientId, redirectUri, from('203.0.113.40'));
    const guesses = Array.from({ length: 40 }, async (_, i) => {
      const res = await form.submit({ email: target.email, password: `concurrent guess ${i}` });
      await res.arrayBuffer();
      return res.status;
    });
    const account = fetch(`${service.config.public_api_url}/account`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'bystander@example.com', password: 'a password of my own' }),
    });
    const health = fetch(`${service.config.public_api_url}/health`);
    expect((await account).status).toBe(201);
    expect((await health).status).toBe(200);
    const statuses = await Promise.all(guesses);
    // Every guess counts when it is made, so concurrent guesses cannot all start before the first
    // failure is recorded: only ACCOUNT_LIMIT of them were checked.
    expect(statuses.filter((s) => s === 401)).toHaveLength(ACCOUNT_LIMIT);
    expect(statuses.filter((s) => s === 429)).toHaveLength(40 - ACCOUNT_LIMIT);
  });
});
