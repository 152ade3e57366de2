/**
 * Several service processes on one database behave as one authorization server and one owner MCP
 * server (SPEC "Authentication": tokens issued by one process are accepted by another process
 * sharing the database). Each process is a child `node servers/main.ts`, so nothing can be shared
 * through memory; a front proxy gives them one public address, as a load balancer would, and each
 * step is sent to the process the test names.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { decodeProtectedHeader } from 'jose';
import * as oauth from 'oauth4webapi';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { projectRoot } from '../../servers/config.ts';
import { createTestDatabase, dialects, type TestDatabase } from '../helpers/databases.ts';
import { type FrontProxy, startFrontProxy } from '../helpers/front-proxy.ts';
import { authorizeInBrowser, type OwnerCredentials } from '../helpers/oauth.ts';
import { childEnv, type ServiceProcess, spawnService } from '../helpers/process.ts';

// Real child processes start slowly on a loaded machine: room to start, never a timing assertion.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

const run = promisify(execFile);
const nodeFlags = ['--experimental-strip-types', '--disable-warning=ExperimentalWarning'];
const insecure = { [oauth.allowInsecureRequests]: true };
const redirectUri = 'http://127.0.0.1:7777/callback';
const owner: OwnerCredentials = { email: 'owner@example.com', password: 'correct horse battery staple' };

interface Client {
  as: oauth.AuthorizationServer;
  client: oauth.Client;
}

describe.each(dialects)('OAuth across processes sharing one database (%s)', (dialect) => {
  let db: TestDatabase | undefined;
  let front: FrontProxy | undefined;
  const processes: ServiceProcess[] = [];

  afterEach(async () => {
    for (const p of processes.splice(0)) await p.kill();
    await front?.close();
    await db?.drop();
  });

  /** Two processes started together, both configured with the front's public URL. */
  async function startTwo(options: { migrate?: boolean } = {}) {
    db = await createTestDatabase(dialect, options);
    front = await startFrontProxy();
    const env = { ...db.env, SITE_URL: front.url };
    const [a, b] = await Promise.all([spawnService(env), spawnService(env)]);
    processes.push(a, b);
    return { a, b, env };
  }

  const on = (p: ServiceProcess) => (front as FrontProxy).route(p.url);
  const issuer = () => new URL(`${(front as FrontProxy).url}/auth/v1`);
  const resource = () => `${(front as FrontProxy).url}/mcp/auth`;

  async function createOwner(): Promise<string> {
    const res = await fetch(`${(front as FrontProxy).url}/api/public/account`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(owner),
    });
    expect(res.status).toBe(201);
    return ((await res.json()) as { account_id: string }).account_id;
  }

  /** Discovery and dynamic client registration (RFC 8414, RFC 7591). */
  async function register(): Promise<Client> {
    const as = await oauth.processDiscoveryResponse(
      issuer(),
      await oauth.discoveryRequest(issuer(), { algorithm: 'oauth2', ...insecure }),
    );
    const registered = await oauth.processDynamicClientRegistrationResponse(
      await oauth.dynamicClientRegistrationRequest(
        as,
        {
          client_name: 'Multi-process test client',
          redirect_uris: [redirectUri],
          grant_types: ['authorization_code', 'refresh_token'],
          token_endpoint_auth_method: 'none',
        },
        insecure,
      ),
    );
    return { as, client: { client_id: registered.client_id, token_endpoint_auth_method: 'none' } };
  }

  /** Authorization code flow with PKCE through the sign-in and consent pages. */
  async function authorize({ as, client }: Client): Promise<oauth.TokenEndpointResponse> {
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const url = new URL(as.authorization_endpoint as string);
    url.search = new URLSearchParams({
      client_id: client.client_id,
      redirect_uri: redirectUri,
      response_type: 'code',
      scope: 'agent-service email offline_access',
      state,
      resource: resource(),
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    }).toString();
    const flow = await authorizeInBrowser(url.href, owner);
    const params = oauth.validateAuthResponse(as, client, flow.redirect, state);
    return oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, redirectUri, verifier, {
        additionalParameters: { resource: resource() },
        ...insecure,
      }),
    );
  }

  async function mcp(token: string, method: 'tools/list' | 'tools/call') {
    const params = method === 'tools/call' ? { name: 'get_owner_context', arguments: {} } : {};
    const res = await fetch(resource(), {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${token}`,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    });
    return { res, body: (await res.json()) as { result?: Record<string, unknown> } };
  }

  async function jwks(p: ServiceProcess): Promise<unknown> {
    on(p);
    return (await fetch(`${issuer().href}/oauth/jwks`)).json();
  }

  it('accepts on one process the tokens, refresh and revocation of another', async () => {
    const { a, b } = await startTwo();
    on(a);
    const accountId = await createOwner();
    const client = await register();
    const tokens = await authorize(client);

    on(b);
    const listed = await mcp(tokens.access_token, 'tools/list');
    expect(listed.res.status).toBe(200);
    expect(listed.body.result?.tools).toContainEqual(expect.objectContaining({ name: 'get_owner_context' }));
    const called = await mcp(tokens.access_token, 'tools/call');
    expect(called.res.status).toBe(200);
    expect(called.body.result?.structuredContent).toMatchObject({
      account_id: accountId,
      client_id: client.client.client_id,
    });

    // Refresh on B: the refresh token A issued, and its rotation, live in the database.
    const refreshed = await oauth.processRefreshTokenResponse(
      client.as,
      client.client,
      await oauth.refreshTokenGrantRequest(
        client.as,
        client.client,
        oauth.None(),
        tokens.refresh_token as string,
        { additionalParameters: { resource: resource() }, ...insecure },
      ),
    );
    expect(refreshed.refresh_token).toBeTypeOf('string');
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    on(a);
    expect((await mcp(refreshed.access_token, 'tools/call')).res.status).toBe(200);

    // Revoke on B; A refuses the access token on its next request, through the grant check.
    on(b);
    await oauth.processRevocationResponse(
      await oauth.revocationRequest(
        client.as,
        client.client,
        oauth.None(),
        refreshed.refresh_token as string,
        insecure,
      ),
    );
    on(a);
    const refused = await mcp(refreshed.access_token, 'tools/call');
    expect(refused.res.status).toBe(401);
    expect(refused.res.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);
  });

  it('signs with one key when processes start together on an empty database', async () => {
    // PostgreSQL: an empty schema, migrated by both processes at once under the migrator's lock.
    // SQLite has no such lock across processes, so its file is migrated first; it holds no key yet.
    const { a, b } = await startTwo({ migrate: dialect === 'sqlite' });
    const keys = await (db as TestDatabase).handle.db
      .selectFrom('oauth_signing_keys')
      .select('kid')
      .execute();
    expect(keys).toHaveLength(1);
    expect(await jwks(a)).toEqual(await jwks(b));

    on(a);
    await createOwner();
    const client = await register();
    const fromA = await authorize(client);
    on(b);
    const fromB = await authorize(client);
    expect(decodeProtectedHeader(fromA.access_token).kid).toBe(keys[0]?.kid);
    expect(decodeProtectedHeader(fromB.access_token).kid).toBe(keys[0]?.kid);

    expect((await mcp(fromA.access_token, 'tools/call')).res.status).toBe(200);
    on(a);
    expect((await mcp(fromB.access_token, 'tools/call')).res.status).toBe(200);
  });

  it('accepts tokens signed with a rotated key on a process that has not restarted', async () => {
    const { a, b, env } = await startTwo();
    on(a);
    await createOwner();
    const client = await register();
    const before = await authorize(client);

    // The operator rotates (`npm run rotate-signing-key`) and restarts B; A keeps running with the
    // keys it loaded at start.
    const rotation = await run(
      process.execPath,
      [...nodeFlags, path.join(projectRoot, 'auth/rotate-signing-key.ts')],
      {
        cwd: projectRoot,
        env: { ...childEnv(), ...env },
      },
    );
    const kid = /signing key (\S+)/.exec(rotation.stdout)?.[1];
    const active = await (db as TestDatabase).handle.db
      .selectFrom('oauth_signing_keys')
      .select('kid')
      .where('retired_at', 'is', null)
      .execute();
    expect(active.map((k) => k.kid)).toEqual([kid]);
    await b.stop();
    const restarted = await spawnService(env);
    processes.push(restarted);
    on(restarted);
    const after = await authorize(client);
    expect(decodeProtectedHeader(after.access_token).kid).toBe(kid);
    const published = (await jwks(restarted)) as { keys: { kid: string }[] };
    expect(published.keys.map((k) => k.kid)).toEqual([kid, decodeProtectedHeader(before.access_token).kid]);

    on(a);
    expect((await mcp(after.access_token, 'tools/call')).res.status).toBe(200);
    on(restarted);
    expect((await mcp(before.access_token, 'tools/call')).res.status).toBe(200);
  });
});
