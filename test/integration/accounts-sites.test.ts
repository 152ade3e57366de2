/**
 * Accounts, service keys, site registration and domain verification over REST, once per dialect.
 * The "site" being verified is a real HTTP server on loopback (scanner private networks allowed).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/databases.ts';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

describe.each(dialects)('accounts and sites (%s)', (dialect) => {
  let service: TestService;
  let api: string;
  let site: Server;
  let siteHost: string;
  /** What the loopback site serves at the verification path. */
  let servedToken = '';
  let dns: TestDnsServer;

  beforeAll(async () => {
    dns = await startDnsServer();
    service = await startTestService(dialect, {
      'rate_limits.unauthenticated_writes.points': 1000,
      'scanner.allow_private_networks': true,
      'sites.verification_dns_servers': [dns.address],
    });
    api = service.config.public_api_url;
    site = createServer((req, res) => {
      if (req.url === '/.well-known/agent-service-verification.txt' && servedToken) {
        res.writeHead(200, { 'content-type': 'text/plain' }).end(`${servedToken}\n`);
      } else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    siteHost = `127.0.0.1:${(site.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await service?.close();
    site?.close();
    await dns?.close();
  });

  const call = (method: string, path: string, body?: unknown, key?: string) =>
    fetch(`${api}${path}`, {
      method,
      headers: {
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(key ? { 'x-service-key': key } : {}),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });

  let n = 0;
  const freshEmail = () => `owner${++n}-${Date.now()}@example.com`;

  async function newAccount(): Promise<{ id: string; key: string }> {
    const res = await call('POST', '/account', { email: freshEmail(), password: 'correct horse battery' });
    expect(res.status).toBe(201);
    const body = await res.json();
    return { id: body.account_id, key: body.key.service_key };
  }

  it('creates an account whose key is shown once, with a recognisable prefix, stored only as a digest', async () => {
    const email = freshEmail();
    const res = await call('POST', '/account', {
      email: email.toUpperCase(),
      password: 'correct horse battery',
    });
    expect(res.status).toBe(201);
    const body = await res.json();
    expect(body.email).toBe(email);
    expect(body.key.service_key).toMatch(/^agsvc_sk_[\w-]{43}$/);
    expect(body.key.service_key.startsWith(body.key.prefix)).toBe(true);

    const db = service.services.db;
    const account = await db
      .selectFrom('accounts')
      .selectAll()
      .where('id', '=', body.account_id)
      .executeTakeFirstOrThrow();
    expect(account.password_hash).toMatch(/^\$scrypt\$ln=17,r=8,p=1\$/);
    expect(account.password_hash).not.toContain('correct horse');
    const keys = await db
      .selectFrom('service_keys')
      .selectAll()
      .where('account_id', '=', body.account_id)
      .execute();
    expect(keys).toHaveLength(1);
    expect(JSON.stringify(keys)).not.toContain(body.key.service_key);
    expect(await service.services.accounts.verifyPassword(email, 'correct horse battery')).toMatchObject({
      id: body.account_id,
    });
    expect(await service.services.accounts.verifyPassword(email, 'wrong horse battery')).toBeNull();

    const again = await call('POST', '/account', { email, password: 'another password here' });
    expect(again.status).toBe(409);
    const problem = await again.json();
    expect(problem.code).toBe('account_exists');
    expect(JSON.stringify(problem)).not.toContain(body.account_id);
  });

  it('names the bad fields of a new account', async () => {
    const res = await call('POST', '/account', { email: 'not-an-email', password: 'short', extra: 1 });
    expect(res.status).toBe(400);
    const fields = (await res.json()).errors.map((e: { field: string }) => e.field).sort();
    expect(fields).toEqual(['email', 'extra', 'password']);
  });

  it('refuses a missing, malformed, unknown or revoked key with 401 problem+json', async () => {
    const { key } = await newAccount();
    const noKey = await call('GET', '/account/keys');
    expect(noKey.status).toBe(401);
    expect(noKey.headers.get('content-type')).toContain('application/problem+json');
    expect((await noKey.json()).code).toBe('unauthorized');
    expect((await call('GET', '/account/keys', undefined, 'nonsense')).status).toBe(401);
    const forged = `agsvc_sk_${'A'.repeat(43)}`;
    expect((await call('GET', '/account/keys', undefined, forged)).status).toBe(401);

    const second = await (await call('POST', '/account/keys', { label: 'nginx shipper' }, key)).json();
    expect(second.label).toBe('nginx shipper');
    expect((await call('GET', '/account/keys', undefined, second.service_key)).status).toBe(200);
    const revoked = await call('DELETE', `/account/keys/${second.key_id}`, undefined, key);
    expect(revoked.status).toBe(200);
    expect((await revoked.json()).revoked_at).not.toBeNull();
    expect((await call('GET', '/account/keys', undefined, second.service_key)).status).toBe(401);

    const listed = await (await call('GET', '/account/keys', undefined, key)).json();
    expect(listed.keys.map((k: { label: string }) => k.label)).toEqual(['first key', 'nginx shipper']);
    expect(JSON.stringify(listed)).not.toContain(second.service_key);
  });

  it("never lets one account see or revoke another account's keys or sites", async () => {
    const a = await newAccount();
    const b = await newAccount();
    const aKeys = await (await call('GET', '/account/keys', undefined, a.key)).json();
    const aKeyId = aKeys.keys[0].key_id;
    expect((await call('DELETE', `/account/keys/${aKeyId}`, undefined, b.key)).status).toBe(404);
    expect((await call('GET', '/account/keys', undefined, a.key)).status).toBe(200);

    const installed = await (
      await call('POST', '/pixel-install', { domain: 'isolation-example.com' }, a.key)
    ).json();
    expect((await call('POST', `/sites/${installed.site_id}/verify`, undefined, b.key)).status).toBe(404);
    const bSites = await (await call('GET', '/sites', undefined, b.key)).json();
    expect(bSites.sites).toEqual([]);
  });

  it('registers a site without a key by creating the account, once', async () => {
    const missing = await call('POST', '/pixel-install', { domain: 'example.org' });
    expect(missing.status).toBe(400);
    expect((await missing.json()).errors).toEqual([{ field: 'email', message: expect.any(String) }]);

    const res = await call('POST', '/pixel-install', {
      domain: 'https://www.Example.org/pricing',
      email: freshEmail(),
    });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body).toMatchObject({ domain: 'www.example.org', created: true, verified: false });
    expect(body.key.service_key).toMatch(/^agsvc_sk_/);
    expect(body.verification.http.url).toBe(
      'https://www.example.org/.well-known/agent-service-verification.txt',
    );
    expect(body.verification.dns.value).toBe(`agent-service-verification=${body.verification.token}`);
    expect(body.snippets.script).toContain(`${api}/beacon?site=${body.site_id}`);
    expect(body.snippets.noscript).toContain('img=1');
    expect(body.snippets.express).toContain(`${api}/events`);
    expect(body.snippets.nginx).toContain('log_format agent_events');

    const again = await (
      await call(
        'POST',
        '/pixel-install',
        { domain: 'www.example.org', share_network: true },
        body.key.service_key,
      )
    ).json();
    expect(again).toMatchObject({ site_id: body.site_id, created: false, key: null, share_network: true });

    const both = await call(
      'POST',
      '/pixel-install',
      { domain: 'example.net', email: freshEmail() },
      body.key.service_key,
    );
    expect(both.status).toBe(400);
  });

  it('verifies ownership with the token file on the site', async () => {
    const { key } = await newAccount();
    const installed = await (await call('POST', '/pixel-install', { domain: siteHost }, key)).json();
    expect(installed.verification.http.url).toBe(
      `http://${siteHost}/.well-known/agent-service-verification.txt`,
    );

    servedToken = 'someone-elses-token';
    const failed = await (await call('POST', `/sites/${installed.site_id}/verify`, undefined, key)).json();
    expect(failed.verified).toBe(false);
    expect(failed.checks).toEqual([
      { method: 'http', passed: false, detail: expect.stringContaining('does not contain the token') },
      { method: 'dns', passed: false, detail: expect.any(String) },
    ]);

    servedToken = installed.verification.token;
    const ok = await (await call('POST', `/sites/${installed.site_id}/verify`, undefined, key)).json();
    expect(ok).toMatchObject({ verified: true, verification_method: 'http' });
    const sites = await (await call('GET', '/sites', undefined, key)).json();
    expect(sites.sites).toEqual([expect.objectContaining({ site_id: installed.site_id, verified: true })]);
  });

  it('verifies ownership with a DNS TXT record when the file is not there', async () => {
    const { key } = await newAccount();
    const domain = `dns-${dialect}.example.com`;
    const installed = await (await call('POST', '/pixel-install', { domain }, key)).json();
    dns.txt.set(domain, ['v=spf1 -all']);
    const before = await (await call('POST', `/sites/${installed.site_id}/verify`, undefined, key)).json();
    expect(before.verified).toBe(false);
    expect(before.checks[1]).toEqual({
      method: 'dns',
      passed: false,
      detail: expect.stringContaining('none with the token'),
    });

    dns.txt.set(domain, ['v=spf1 -all', installed.verification.dns.value]);
    const after = await (await call('POST', `/sites/${installed.site_id}/verify`, undefined, key)).json();
    expect(after).toMatchObject({ verified: true, verification_method: 'dns' });
    expect(after.checks[0]).toMatchObject({ method: 'http', passed: false });
  });

  it('rejects domains that are not public names', async () => {
    const { key } = await newAccount();
    for (const domain of [
      '10.0.0.1',
      'not a domain',
      'example.invalidtld',
      'ftp://example.com',
      'example.com:8080',
    ]) {
      const res = await call('POST', '/pixel-install', { domain }, key);
      expect(res.status, domain).toBe(400);
      expect((await res.json()).errors[0].field).toBe('domain');
    }
  });
});

describe('local domains need scanner.allow_local_sites (or allow_private_networks)', () => {
  let service: TestService;
  beforeAll(async () => {
    // As in production mode, where `auto` is off (development mode allows local names by default).
    service = await startTestService('sqlite', { 'scanner.allow_local_sites': false });
  });
  afterAll(() => service?.close());

  it('refuses localhost:PORT with them off', async () => {
    const res = await fetch(`${service.config.public_api_url}/pixel-install`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ domain: 'localhost:8080', email: 'local@example.com' }),
    });
    expect(res.status).toBe(400);
    expect((await res.json()).errors).toEqual([{ field: 'domain', message: 'must be a public domain name' }]);
  });
});
