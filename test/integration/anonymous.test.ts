/**
 * Anonymous sessions end to end, once per dialect: sign-up, scans with the bearer token up to the
 * session's limit, refusals of bad tokens, attribution, the claim at /register (a new account and
 * an existing one, driven like a browser with cookies), and the agent authentication descriptor.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/databases.ts';
import { CookieJar, formAction, formField } from '../helpers/oauth.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

const SCAN_LIMIT = 3;

interface Signup {
  access_token: string;
  token_type: string;
  expires_in: number;
  scan_limit: number;
  scans_used: number;
  claim_url: string;
}

describe.each(dialects)('anonymous sessions and claims (%s)', (dialect) => {
  let service: TestService;
  let api: string;
  let site: string;
  let auth: string;

  beforeAll(async () => {
    // No background workers: scans stay queued, which is all attribution and claims need.
    service = await startTestService(
      dialect,
      { 'rate_limits.unauthenticated_writes.points': 1000, 'auth.anonymous.scan_limit': SCAN_LIMIT },
      { background: false },
    );
    api = service.config.public_api_url;
    site = service.config.site_url;
    auth = service.config.auth_url;
  });
  afterAll(async () => {
    await service?.close();
  });

  async function signup(): Promise<Signup> {
    const res = await fetch(`${auth}/signup`, { method: 'POST' });
    expect(res.status).toBe(201);
    expect(res.headers.get('cache-control')).toBe('no-store');
    return (await res.json()) as Signup;
  }

  const scan = (body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${api}/scans`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

  /** Opens a claim URL in a fresh browser and submits its form. */
  async function claim(claimUrl: string, fields: Record<string, string>, jar = new CookieJar()) {
    const page = await jar.fetch(claimUrl);
    expect(page.status).toBe(200);
    const html = await page.text();
    const action = new URL(formAction(html) as string, claimUrl).href;
    const res = await jar.fetch(action, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        csrf: formField(html, 'csrf') as string,
        claim: formField(html, 'claim') as string,
        ...fields,
      }),
    });
    return { res, html: await res.text(), form: html, jar, action };
  }

  it('signs up: a bearer token, its lifetime, the scan quota and a claim URL that is not the token', async () => {
    const s = await signup();
    expect(s).toEqual({
      access_token: expect.stringMatching(/^agsvc_anon_[A-Za-z0-9_-]{43}$/),
      token_type: 'Bearer',
      expires_in: service.config.auth.anonymous.session_ttl_s,
      scan_limit: SCAN_LIMIT,
      scans_used: 0,
      claim_url: expect.stringMatching(new RegExp(`^${site}/register\\?claim=`)),
    });
    expect(s.claim_url).not.toContain(s.access_token);
    const stored = await service.services.db.selectFrom('anonymous_sessions').selectAll().execute();
    expect(JSON.stringify(stored)).not.toContain(s.access_token);
    expect(JSON.stringify(stored)).not.toContain(new URL(s.claim_url).searchParams.get('claim'));
  });

  it('runs scans with the token up to the limit, then refuses with anonymous_scan_limit_reached', async () => {
    const s = await signup();
    const ids: string[] = [];
    for (let i = 0; i < SCAN_LIMIT; i++) {
      const res = await scan({ domain: `quota-${i}.example.com` }, bearer(s.access_token));
      expect(res.status).toBe(202);
      ids.push(((await res.json()) as { scan_id: string }).scan_id);
    }
    // Asking again for a scan of its own still queued joins it and costs nothing.
    const joined = await scan({ domain: 'quota-0.example.com' }, bearer(s.access_token));
    expect(joined.status).toBe(202);
    expect(((await joined.json()) as { scan_id: string }).scan_id).toBe(ids[0]);

    const refused = await scan({ domain: 'quota-over.example.com' }, bearer(s.access_token));
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ code: 'anonymous_scan_limit_reached' });

    const rows = await service.services.db
      .selectFrom('scans')
      .select(['id', 'account_id', 'anonymous_session_id'])
      .where('id', 'in', ids)
      .execute();
    expect(rows).toHaveLength(SCAN_LIMIT);
    const session = await service.services.db
      .selectFrom('anonymous_sessions')
      .selectAll()
      .where('id', '=', rows[0]?.anonymous_session_id as string)
      .executeTakeFirstOrThrow();
    expect(session.scans_used).toBe(SCAN_LIMIT);
    for (const row of rows) expect(row).toMatchObject({ account_id: null, anonymous_session_id: session.id });

    // Another session has its own quota; without a token the scan is the ordinary public kind.
    const other = await signup();
    expect((await scan({ domain: 'quota-over.example.com' }, bearer(other.access_token))).status).toBe(202);
    expect((await scan({ domain: 'quota-free.example.com' })).status).toBe(202);
  });

  it('refuses a bad bearer token with 401 invalid_token, on writes and reads alike', async () => {
    const unknown = `agsvc_anon_${'A'.repeat(43)}`;
    for (const token of [unknown, 'not-a-session-token', '']) {
      const res = await scan({ domain: 'example.com' }, { authorization: `Bearer ${token}`.trim() });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token"/);
      expect(await res.json()).toMatchObject({ code: 'invalid_token' });
    }
    const read = await fetch(`${api}/leaderboard`, { headers: bearer(unknown) });
    expect(read.status).toBe(401);
    // Public reads need nothing, and a live token changes nothing about them.
    const s = await signup();
    expect((await fetch(`${api}/leaderboard`)).status).toBe(200);
    expect((await fetch(`${api}/leaderboard`, { headers: bearer(s.access_token) })).status).toBe(200);
  });

  it('keeps a private scan to its session, over REST and the public MCP server', async () => {
    const s = await signup();
    const res = await scan({ domain: 'private.example.com', public: false }, bearer(s.access_token));
    expect(res.status).toBe(202);
    const { scan_id } = (await res.json()) as { scan_id: string };
    expect((await fetch(`${api}/scans/${scan_id}`, { headers: bearer(s.access_token) })).status).toBe(200);
    expect((await fetch(`${api}/scans/${scan_id}`)).status).toBe(404);
    const other = await signup();
    expect((await fetch(`${api}/scans/${scan_id}`, { headers: bearer(other.access_token) })).status).toBe(
      404,
    );

    const call = async (token: string) => {
      const mcp = await fetch(service.config.mcp_url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...bearer(token),
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'get_scan', arguments: { scan_id } },
        }),
      });
      expect(mcp.status).toBe(200);
      return (
        (await mcp.json()) as {
          result: { isError?: boolean; structuredContent: { scan_id?: string }; content: { text: string }[] };
        }
      ).result;
    };
    const mine = await call(s.access_token);
    expect(mine.isError).toBeFalsy();
    expect(mine.structuredContent.scan_id).toBe(scan_id);
    const bad = await call(`agsvc_anon_${'B'.repeat(43)}`);
    expect(bad.isError).toBe(true);
    expect(JSON.parse(bad.content[0]?.text as string)).toMatchObject({ code: 'invalid_token' });
  });

  it('claims with a new account: scans move, the token stops, the service key reads the private scan', async () => {
    const s = await signup();
    const pub = (await (await scan({ domain: 'claim-new.example.com' }, bearer(s.access_token))).json()) as {
      scan_id: string;
    };
    const priv = (await (
      await scan({ domain: 'claim-new.example.com', public: false }, bearer(s.access_token))
    ).json()) as { scan_id: string };

    const email = 'claimer-new@example.com';
    const { res, html, form } = await claim(s.claim_url, {
      mode: 'create',
      email,
      password: 'a long enough password',
    });
    expect(form).toMatch(/id="scan-count">2 scans</);
    expect(res.status).toBe(200);
    expect(html).toMatch(/id="moved-count">2</);
    expect(html).toContain(pub.scan_id);
    expect(html).toContain(priv.scan_id);
    const key = /id="service-key">([^<]+)</.exec(html)?.[1] as string;
    expect(key).toMatch(/^agsvc_sk_/);

    const account = await service.services.db
      .selectFrom('accounts')
      .select('id')
      .where('email', '=', email)
      .executeTakeFirstOrThrow();
    const read = await fetch(`${api}/scans/${priv.scan_id}`, { headers: { 'x-service-key': key } });
    expect(read.status).toBe(200);
    expect(await read.json()).toMatchObject({ scan_id: priv.scan_id, public: false });
    const rows = await service.services.db
      .selectFrom('scans')
      .select('account_id')
      .where('id', 'in', [pub.scan_id, priv.scan_id])
      .execute();
    expect(rows.map((r) => r.account_id)).toEqual([account.id, account.id]);

    const stale = await fetch(`${api}/scans/${priv.scan_id}`, { headers: bearer(s.access_token) });
    expect(stale.status).toBe(401);
    expect(stale.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);
  });

  it('claims into an existing account after a wrong password, and the claim code works once', async () => {
    const owner = { email: 'claimer-existing@example.com', password: 'correct horse battery staple' };
    const created = await service.services.accounts.create(owner);
    const s = await signup();
    const priv = (await (
      await scan({ domain: 'claim-existing.example.com', public: false }, bearer(s.access_token))
    ).json()) as { scan_id: string };

    const jar = new CookieJar();
    const wrong = await claim(
      s.claim_url,
      { mode: 'signin', email: owner.email, password: 'wrong password!!' },
      jar,
    );
    expect(wrong.res.status).toBe(401);
    expect(wrong.html).toMatch(/The email or password is not right/);
    // The page shown again carries a working form.
    const again = await jar.fetch(wrong.action, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        csrf: formField(wrong.html, 'csrf') as string,
        claim: formField(wrong.html, 'claim') as string,
        mode: 'signin',
        ...owner,
      }),
    });
    expect(again.status).toBe(200);
    const done = await again.text();
    expect(done).toMatch(/id="moved-count">1</);
    expect(done).not.toMatch(/service-key/);

    const read = await fetch(`${api}/scans/${priv.scan_id}`, {
      headers: { 'x-service-key': created.key.service_key },
    });
    expect(read.status).toBe(200);

    // Used: the link is refused, and so is the code however it comes back.
    expect((await fetch(s.claim_url)).status).toBe(410);
    const code = new URL(s.claim_url).searchParams.get('claim') as string;
    expect(await service.services.anonymous.claim(code, created.account.id)).toBeNull();
  });

  it('refuses a claim form posted without the page cookie, and an unknown claim code', async () => {
    const s = await signup();
    const jar = new CookieJar();
    const page = await jar.fetch(s.claim_url);
    const html = await page.text();
    const res = await fetch(new URL(formAction(html) as string, site).href, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        csrf: formField(html, 'csrf') as string,
        claim: formField(html, 'claim') as string,
        mode: 'create',
        email: 'csrf@example.com',
        password: 'a long enough password',
      }),
    });
    expect(res.status).toBe(403);
    // Not a form at all (JSON, or no body): refused the same way, never an internal error.
    for (const init of [
      { headers: { 'content-type': 'application/json' }, body: '{"claim":"x"}' },
      { headers: {}, body: undefined },
    ]) {
      expect((await fetch(`${site}/register`, { method: 'POST', ...init })).status).toBe(403);
    }
    expect((await fetch(`${site}/register?claim=agsvc_claim_${'C'.repeat(43)}`)).status).toBe(410);
    expect((await fetch(`${site}/register`)).status).toBe(410);
  });

  it('publishes the descriptor, the auth.md skill, and references them from the metadata', async () => {
    const res = await fetch(`${site}/.well-known/agent-auth.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const descriptor = (await res.json()) as Record<string, unknown>;
    expect(descriptor).toMatchObject({
      descriptor_uri: `${site}/.well-known/agent-auth.json`,
      issuer: auth,
      skill: `${site}/auth.md`,
      skill_name: 'auth.md',
      claim_uri: `${site}/register`,
      identity_types_supported: ['identity_assertion', 'anonymous'],
      // The auth.md protocol's own fields (workos.com/auth-md), which the scanner's auth_md check reads.
      register_uri: `${auth}/signup`,
      revocation_uri: `${auth}/ssf/push`,
      identity_assertion: {
        assertion_types_supported: ['urn:ietf:params:oauth:token-type:id-jag', 'verified_email'],
        credential_types_supported: ['bearer_token', 'jwt'],
      },
      anonymous: { credential_types_supported: ['bearer_token'] },
    });
    // Its POST endpoints say so to a GET (an agent or a scanner checking that they are there).
    for (const url of [`${auth}/signup`, `${auth}/ssf/push`]) {
      const got = await fetch(url);
      expect(got.status, url).toBe(405);
      expect(got.headers.get('allow'), url).toBe('POST');
      expect(got.headers.get('content-type'), url).toMatch(/^application\/problem\+json/);
    }
    const methods = descriptor.methods as { method: string }[];
    expect(methods.map((m) => m.method)).toEqual([
      'oauth_dynamic_client_registration',
      'identity_assertion',
      'anonymous',
    ]);
    expect(methods[0]).toMatchObject({
      endpoints: {
        registration: `${auth}/oauth/clients/register`,
        authorization: `${auth}/oauth/authorize`,
        token: `${auth}/oauth/token`,
        revocation: `${auth}/oauth/revoke`,
      },
      grant_types_supported: ['authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
      credential_types_supported: ['oauth_client_credentials', 'bearer_token'],
      bearer_methods_supported: ['header'],
    });
    // SPEC "Authentication", the identity_assertion row, and SPEC "Events".
    expect(methods[1]).toMatchObject({
      endpoints: { token: `${auth}/oauth/token`, revocation: `${auth}/logout`, claim: `${site}/register` },
      assertion_types_supported: ['urn:ietf:params:oauth:token-type:id-jag', 'verified_email'],
      credential_types_supported: ['bearer_token', 'jwt'],
      grant_types_supported: ['urn:ietf:params:oauth:grant-type:jwt-bearer'],
      events_supported: [
        'https://schemas.openid.net/secevent/caep/event-type/credential-change',
        'https://schemas.openid.net/secevent/caep/event-type/session-revoked',
        'https://schemas.openid.net/secevent/caep/event-type/token-claims-change',
      ],
    });
    expect(Object.keys((methods[1] as unknown as { endpoints: object }).endpoints)).toEqual([
      'token',
      'revocation',
      'claim',
    ]);
    expect(methods[2]).toMatchObject({
      endpoints: { token: `${auth}/signup`, claim: `${site}/register` },
      credential_types_supported: ['bearer_token'],
      scan_limit: SCAN_LIMIT,
    });

    const skill = await fetch(`${site}/auth.md`);
    expect(skill.status).toBe(200);
    expect(skill.headers.get('content-type')).toMatch(/^text\/markdown/);
    const text = await skill.text();
    expect(text).toMatch(/^# auth\.md/);
    for (const url of [
      `${auth}/signup`,
      `${site}/register`,
      `${auth}/oauth/clients/register`,
      `${auth}/oauth/token`,
      `${auth}/assertions/email`,
      `${auth}/assertions/email/verify`,
      `${auth}/logout`,
      'urn:ietf:params:oauth:grant-type:jwt-bearer',
      'oauth-id-jag+jwt',
    ])
      expect(text).toContain(url);

    for (const url of [
      `${auth}/.well-known/oauth-authorization-server`,
      `${auth}/.well-known/openid-configuration`,
      `${site}/.well-known/oauth-authorization-server`,
    ]) {
      const meta = (await (await fetch(url)).json()) as Record<string, unknown>;
      expect(meta.agent_auth).toEqual(descriptor);
    }
  });
});
