/**
 * What anyone may write to the authorization server without an account, written as the misuse:
 * open dynamic client registration (RFC 7591) limited per client address, answered in the OAuth
 * error format, refusing metadata that would spoof the consent page or send codes over plain
 * http, and keeping no client that never obtained a token; and authorization requests, each of
 * which stores an interaction, limited per address. The service trusts its proxy, so each case
 * comes from its own X-Forwarded-For address.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UNUSED_CLIENT_TTL_S } from '../../auth/adapter.ts';
import { tokenLifetimes } from '../../auth/provider.ts';
import { dialects } from '../helpers/databases.ts';
import { authorizeInBrowser } from '../helpers/oauth.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

const AUTHORIZATION_LIMIT = 5;
/** What is sent, the metadata, the RFC 7591 error expected. */
type Refusal = [string, Record<string, unknown>, string];

describe.each(dialects)('client registration and authorization requests (%s)', (dialect) => {
  let service: TestService;
  let addresses = 0;
  /** A client address no other case has used. */
  const fresh = () => ({ 'x-forwarded-for': `198.51.100.${++addresses}` });

  beforeAll(async () => {
    service = await startTestService(dialect, {
      trust_proxy: true,
      'rate_limits.unauthenticated_writes.points': 2,
      'rate_limits.authorization_requests.points': AUTHORIZATION_LIMIT,
    });
  });
  afterAll(async () => {
    await service?.close();
  });

  const register = (metadata: Record<string, unknown> | string, headers: Record<string, string> = {}) =>
    fetch(`${service.config.auth_url}/oauth/clients/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: typeof metadata === 'string' ? metadata : JSON.stringify(metadata),
    });

  it('registers a public client for the code flow, then rate limits the address', async () => {
    const res = await register({ client_name: 'First', redirect_uris: ['http://127.0.0.1/callback'] });
    expect(res.status).toBe(201);
    const client = (await res.json()) as Record<string, unknown>;
    expect(client).toMatchObject({
      application_type: 'native',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    });

    const bad = await register({ redirect_uris: ['http://127.0.0.1/cb'], response_types: ['token'] });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: string }).error).toBe('invalid_client_metadata');

    const limited = await register({ redirect_uris: ['http://127.0.0.1/callback'] });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(((await limited.json()) as { error: string }).error).toBe('temporarily_unavailable');
  });

  const refusals: Refusal[] = [
    [
      'an http redirect URI to another host',
      { redirect_uris: ['http://client.example/cb'] },
      'invalid_redirect_uri',
    ],
    [
      'an http redirect URI among https ones',
      { redirect_uris: ['https://client.example/cb', 'http://127.0.0.1.client.example/cb'] },
      'invalid_redirect_uri',
    ],
    [
      'an http sign-out redirect URI to another host',
      {
        redirect_uris: ['https://client.example/cb'],
        post_logout_redirect_uris: ['http://client.example/bye'],
      },
      'invalid_redirect_uri',
    ],
    [
      'eleven redirect URIs',
      { redirect_uris: Array.from({ length: 11 }, (_, i) => `http://127.0.0.1:${7000 + i}/cb`) },
      'invalid_redirect_uri',
    ],
    [
      'a client name of 201 characters',
      { client_name: 'n'.repeat(201), redirect_uris: ['http://127.0.0.1/cb'] },
      'invalid_client_metadata',
    ],
    ...['\u202E', '\u202A', '\u2066', '\u2069', '\u200E', '\u200F', '\u061C'].map(
      (c) =>
        [
          `a client name with U+${c.codePointAt(0)?.toString(16).toUpperCase().padStart(4, '0')}`,
          { client_name: `Trusted ${c}tneilC`, redirect_uris: ['http://127.0.0.1/cb'] },
          'invalid_client_metadata',
        ] satisfies Refusal,
    ),
    [
      'a client name with a control character',
      { client_name: 'Two\nlines', redirect_uris: ['http://127.0.0.1/cb'] },
      'invalid_client_metadata',
    ],
    [
      'a language-tagged client name with a bidi override',
      { client_name: 'Fine', 'client_name#ar': 'x\u202Ey', redirect_uris: ['http://127.0.0.1/cb'] },
      'invalid_client_metadata',
    ],
  ];
  it.each(refusals)('refuses %s', async (_name, metadata, error) => {
    const res = await register(metadata, fresh());
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: string; error_description: string };
    expect(body.error).toBe(error);
    expect(body.error_description).toMatch(/^(redirect_uris|post_logout_redirect_uris|client_name)/);
  });

  it('refuses oversized metadata as a whole with 413', async () => {
    const res = await register(
      { client_name: 'Big', redirect_uris: ['http://127.0.0.1/cb'], padding: 'x'.repeat(17 * 1024) },
      fresh(),
    );
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: string }).error).toBe('invalid_client_metadata');
    const garbled = await register('{"redirect_uris": [', fresh());
    expect(garbled.status).toBe(400);
    expect(((await garbled.json()) as { error: string }).error).toBe('invalid_request');
  });

  it('accepts what an honest client registers at the limits', async () => {
    for (const metadata of [
      { client_name: 'n'.repeat(200), redirect_uris: ['http://[::1]:8080/cb', 'http://localhost/cb'] },
      { client_name: 'Café 東京 👩‍💻', redirect_uris: ['https://client.example/cb'] },
      { redirect_uris: Array.from({ length: 10 }, (_, i) => `http://127.0.0.1:${7000 + i}/cb`) },
      { redirect_uris: ['com.example.app:/oauth/cb'], application_type: 'native' },
    ]) {
      const res = await register(metadata, fresh());
      expect(res.status, JSON.stringify(metadata)).toBe(201);
    }
  });

  it('lets a client that never obtains a token expire, and keeps one that does', async () => {
    const auth = service.config.auth_url;
    const expiry = async (id: string) => {
      const row = await service.services.db
        .selectFrom('oauth_records')
        .select('expires_at')
        .where('model', '=', 'Client')
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      return Date.parse(row.expires_at as string);
    };
    const before = Date.now();
    const res = await register({ client_name: 'Soon used', redirect_uris: ['http://127.0.0.1/cb'] }, fresh());
    const { client_id } = (await res.json()) as { client_id: string };
    expect(await expiry(client_id)).toBeGreaterThanOrEqual(before + UNUSED_CLIENT_TTL_S * 1000 - 1000);
    expect(await expiry(client_id)).toBeLessThanOrEqual(Date.now() + UNUSED_CLIENT_TTL_S * 1000);

    const owner = { email: 'client-user@example.com', password: 'correct horse battery staple' };
    await service.services.accounts.create(owner);
    const url = new URL(`${auth}/oauth/authorize`);
    url.search = new URLSearchParams({
      client_id,
      redirect_uri: 'http://127.0.0.1/cb',
      response_type: 'code',
      scope: 'agent-service',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    }).toString();
    const flow = await authorizeInBrowser(url.href, owner);
    expect(flow.redirect.searchParams.get('code')).toBeTypeOf('string');
    // Approved: the client lives at least as long as the grant it holds.
    expect(await expiry(client_id)).toBeGreaterThanOrEqual(before + tokenLifetimes.Grant * 1000 - 1000);
  });

  it('limits authorization requests per address before they store an interaction', async () => {
    const auth = service.config.auth_url;
    const { client_id } = (await (
      await register({ client_name: 'Flooded', redirect_uris: ['http://127.0.0.1/cb'] }, fresh())
    ).json()) as { client_id: string };
    const url = new URL(`${auth}/oauth/authorize`);
    url.search = new URLSearchParams({
      client_id,
      redirect_uri: 'http://127.0.0.1/cb',
      response_type: 'code',
      scope: 'agent-service',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    }).toString();
    const interactions = async () =>
      Number(
        (
          await service.services.db
            .selectFrom('oauth_records')
            .select((eb) => eb.fn.countAll().as('n'))
            .where('model', '=', 'Interaction')
            .executeTakeFirstOrThrow()
        ).n,
      );
    const stored = await interactions();
    const flooder = fresh();
    const statuses: number[] = [];
    let refused: Response | undefined;
    for (let i = 0; i < AUTHORIZATION_LIMIT + 20; i++) {
      const res = await fetch(url, { redirect: 'manual', headers: flooder });
      statuses.push(res.status);
      if (res.status === 429) refused = res;
      else await res.arrayBuffer();
    }
    expect(statuses).toEqual([...Array(AUTHORIZATION_LIMIT).fill(303), ...Array(20).fill(429)]);
    expect(Number(refused?.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused?.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await refused?.text()).toMatch(/Too many authorization requests/);
    expect((await interactions()) - stored).toBe(AUTHORIZATION_LIMIT);

    const post = await fetch(`${auth}/oauth/authorize`, {
      method: 'POST',
      redirect: 'manual',
      headers: { ...flooder, 'content-type': 'application/x-www-form-urlencoded' },
      body: url.searchParams,
    });
    expect(post.status).toBe(429);
    // Another address is not affected.
    expect((await fetch(url, { redirect: 'manual', headers: fresh() })).status).toBe(303);
  });
});
