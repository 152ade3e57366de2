/**
 * The jwt-bearer grant with an Identity Assertion JWT Authorization Grant (issue 11, section 2):
 * a real identity provider on loopback (its own keys, its JWKS over HTTP) mints ID-JAGs, an
 * independent OAuth client (oauth4webapi) exchanges them at `{auth_url}/oauth/token`, and the MCP
 * SDK client uses the access token on the owner MCP server. Every refusal the draft asks for is
 * checked, and the agent's revocation at `{auth_url}/logout`.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sweepAssertionRecords } from '../../auth/assertions/repository.ts';
import { dialects } from '../helpers/databases.ts';
import { type LocalIdentityProvider, startIdentityProvider } from '../helpers/identity-provider.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const insecure = { [oauth.allowInsecureRequests]: true };

interface RegisteredClient {
  client: oauth.Client;
  auth: oauth.ClientAuth;
}

describe.each(dialects)('ID-JAG at the token endpoint (%s)', (dialect) => {
  let service: TestService;
  let idp: LocalIdentityProvider;
  let untrusted: LocalIdentityProvider;
  let as: oauth.AuthorizationServer;
  let agent: RegisteredClient;
  let other: RegisteredClient;
  const defaults = { audience: '', clientId: '' };
  const secrets = new Map<RegisteredClient, string>();
  let accountId: string;
  const linkedEmail = `idjag-${dialect}@example.com`;

  async function register(name: string): Promise<RegisteredClient> {
    const registered = await oauth.processDynamicClientRegistrationResponse(
      await oauth.dynamicClientRegistrationRequest(
        as,
        {
          client_name: name,
          grant_types: [JWT_BEARER],
          response_types: [],
          redirect_uris: [],
          token_endpoint_auth_method: 'client_secret_basic',
        },
        insecure,
      ),
    );
    const registeredClient = {
      client: { client_id: registered.client_id },
      auth: oauth.ClientSecretBasic(registered.client_secret as string),
    };
    secrets.set(registeredClient, registered.client_secret as string);
    return registeredClient;
  }

  async function exchange(
    assertion: string,
    who: RegisteredClient = agent,
    extra: Record<string, string> = {},
  ) {
    const response = await oauth.genericTokenEndpointRequest(
      as,
      who.client,
      who.auth,
      JWT_BEARER,
      new URLSearchParams({ assertion, ...extra }),
      insecure,
    );
    return oauth.processGenericTokenEndpointResponse(as, who.client, response);
  }

  async function refusal(
    assertion: string,
    who: RegisteredClient = agent,
    extra: Record<string, string> = {},
  ) {
    try {
      await exchange(assertion, who, extra);
    } catch (err) {
      if (err instanceof oauth.ResponseBodyError)
        return { status: err.status, error: err.error, description: err.error_description };
      throw err;
    }
    throw new Error('the assertion was accepted');
  }

  async function mcpContext(accessToken: string) {
    const client = new Client({ name: 'id-jag-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${service.config.mcp_url}/auth`), {
        requestInit: { headers: { authorization: `Bearer ${accessToken}` } },
      }),
    );
    try {
      return await client.callTool({ name: 'get_owner_context', arguments: {} });
    } finally {
      await client.close();
    }
  }

  beforeAll(async () => {
    idp = await startIdentityProvider(defaults);
    untrusted = await startIdentityProvider(defaults);
    service = await startTestService(dialect, {
      'auth.trusted_issuers': [{ issuer: idp.issuer, jwks_uri: idp.jwksUri, trusted_for_email: true }],
    });
    defaults.audience = service.config.auth_url;
    as = await oauth.processDiscoveryResponse(
      new URL(service.config.auth_url),
      await oauth.discoveryRequest(new URL(service.config.auth_url), { algorithm: 'oauth2', ...insecure }),
    );
    agent = await register('ID-JAG agent');
    other = await register('Another agent');
    defaults.clientId = agent.client.client_id;
    accountId = (await service.services.accounts.create({ email: linkedEmail })).account.id;
    await service.services.sites.register(accountId, `idjag-${dialect}.example.com`);
  });
  afterAll(async () => {
    await service?.close();
    await idp?.close();
    await untrusted?.close();
  });

  it('publishes the grant type in the metadata', () => {
    expect(as.grant_types_supported).toContain(JWT_BEARER);
  });

  it('exchanges an ID-JAG for the owner MCP access token, used through the MCP SDK client', async () => {
    const subject = `alice-${dialect}`;
    const tokens = await exchange(
      await idp.mint({ sub: subject, email: linkedEmail, email_verified: true, scope: 'agent-service' }),
    );
    expect(tokens.token_type).toBe('bearer');
    expect(tokens.refresh_token).toBeUndefined();
    expect(tokens.scope).toBe('agent-service');
    const claims = await oauth.validateJwtAccessToken(
      as,
      new Request('http://x', { headers: { authorization: `Bearer ${tokens.access_token}` } }),
      `${service.config.mcp_url}/auth`,
      insecure,
    );
    expect(claims.client_id).toBe(agent.client.client_id);
    expect(claims.sub).toBe(accountId);

    const result = await mcpContext(tokens.access_token);
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({
      account_id: accountId,
      client_id: agent.client.client_id,
      scopes: ['agent-service'],
    });

    // The subject is now linked: a later ID-JAG without an email reaches the same account.
    const again = await exchange(await idp.mint({ sub: subject }));
    expect((await mcpContext(again.access_token)).structuredContent).toMatchObject({ account_id: accountId });
  });

  it("fetches the issuer's JWKS once and keeps it", async () => {
    const before = idp.jwksFetches;
    expect(before).toBeGreaterThanOrEqual(1);
    for (let i = 0; i < 3; i++) await exchange(await idp.mint({ email: linkedEmail }));
    expect(idp.jwksFetches).toBe(before);
  });

  it('refuses a replay on another process sharing the database, which accepts fresh assertions', async () => {
    const second = await startTestService(
      dialect,
      { 'auth.trusted_issuers': [{ issuer: idp.issuer, jwks_uri: idp.jwksUri, trusted_for_email: true }] },
      { database: service.db },
    );
    try {
      const secondAs = await oauth.processDiscoveryResponse(
        new URL(second.config.auth_url),
        await oauth.discoveryRequest(new URL(second.config.auth_url), { algorithm: 'oauth2', ...insecure }),
      );
      const at = (assertion: string) =>
        oauth.genericTokenEndpointRequest(
          secondAs,
          agent.client,
          agent.auth,
          JWT_BEARER,
          new URLSearchParams({ assertion }),
          insecure,
        );
      const jti = crypto.randomUUID();
      await exchange(await idp.mint({ email: linkedEmail, jti }));
      const replay = await at(await idp.mint({ email: linkedEmail, jti, aud: second.config.auth_url }));
      expect(replay.status).toBe(400);
      expect(((await replay.json()) as { error_description: string }).error_description).toContain(
        'already used',
      );
      const fresh = await at(await idp.mint({ email: linkedEmail, aud: second.config.auth_url }));
      expect(fresh.status).toBe(200);
    } finally {
      await second.close();
    }
  });

  it('fetches JWKS only through the SSRF-safe fetcher: a loopback JWKS is refused where private networks are', async () => {
    const guarded = await startTestService(
      dialect,
      {
        'outbound.allow_private_networks': false,
        'scanner.allow_local_sites': false,
        'auth.trusted_issuers': [{ issuer: idp.issuer, jwks_uri: idp.jwksUri, trusted_for_email: true }],
      },
      { database: service.db },
    );
    try {
      const fetches = idp.jwksFetches;
      const res = await fetch(`${guarded.config.auth_url}/oauth/token`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`${agent.client.client_id}:${secrets.get(agent)}`).toString('base64')}`,
        },
        body: new URLSearchParams({
          grant_type: JWT_BEARER,
          assertion: await idp.mint({ email: linkedEmail, aud: guarded.config.auth_url }),
        }),
      });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error_description: string }).error_description).toContain('JWKS');
      expect(idp.jwksFetches).toBe(fetches);
    } finally {
      await guarded.close();
    }
  });

  it('refuses an untrusted issuer', async () => {
    const refused = await refusal(await untrusted.mint({ email: linkedEmail }));
    expect(refused).toMatchObject({ status: 400, error: 'invalid_grant' });
    expect(refused.description).toContain('not trusted');
  });

  it('refuses an assertion for another audience', async () => {
    const refused = await refusal(await idp.mint({ aud: 'https://other-as.example.com' }));
    expect(refused).toMatchObject({ status: 400, error: 'invalid_grant' });
    expect(refused.description).toContain('aud');
  });

  it("refuses another client's assertion", async () => {
    const assertion = await idp.mint({ email: linkedEmail, client_id: agent.client.client_id });
    const refused = await refusal(assertion, other);
    expect(refused).toMatchObject({ status: 400, error: 'invalid_grant' });
    expect(refused.description).toContain('another client');
  });

  it('refuses a replayed jti', async () => {
    const assertion = await idp.mint({ email: linkedEmail });
    await exchange(assertion);
    const refused = await refusal(assertion);
    expect(refused).toMatchObject({ status: 400, error: 'invalid_grant' });
    expect(refused.description).toContain('already used');
    // Another assertion with the same jti is a replay too.
    const { jti } = JSON.parse(Buffer.from(assertion.split('.')[1] as string, 'base64url').toString());
    expect((await refusal(await idp.mint({ email: linkedEmail, jti }))).description).toContain(
      'already used',
    );
  });

  it('refuses an expired assertion', async () => {
    const now = Math.floor(Date.now() / 1000);
    const refused = await refusal(await idp.mint({ email: linkedEmail, iat: now - 600, exp: now - 300 }));
    expect(refused).toMatchObject({ status: 400, error: 'invalid_grant' });
    expect(refused.description).toContain('expired');
  });

  it('refuses alg none', async () => {
    const refused = await refusal(idp.unsigned({ email: linkedEmail }));
    expect(refused).toMatchObject({ status: 400, error: 'invalid_grant' });
    expect(refused.description).toContain('alg');
  });

  it('refuses a JWT that is not an ID-JAG (typ)', async () => {
    for (const typ of ['JWT', 'at+jwt']) {
      const refused = await refusal(await idp.mint({ email: linkedEmail }, { typ }));
      expect(refused).toMatchObject({ status: 400, error: 'invalid_grant' });
      expect(refused.description).toContain('typ');
    }
  });

  it('refuses a signature by another key under the trusted issuer name', async () => {
    const refused = await refusal(await untrusted.mint({ iss: idp.issuer, email: linkedEmail }));
    expect(refused).toMatchObject({ status: 400, error: 'invalid_grant' });
  });

  it('refuses stored claims holding NUL with invalid_grant, never a server error', async () => {
    for (const claims of [{ sub: 'a\u0000b' }, { jti: 'j\u0000' }, { email: 'x\u0000@example.com' }]) {
      const refused = await refusal(await idp.mint({ email: linkedEmail, ...claims }));
      expect(refused).toMatchObject({ status: 400, error: 'invalid_grant' });
      expect(refused.description).toContain('NUL');
    }
  });

  it('refuses a subject with no account and no usable email', async () => {
    expect((await refusal(await idp.mint({ email: 'nobody@example.com' }))).description).toContain(
      'not linked',
    );
    expect(
      (await refusal(await idp.mint({ email: linkedEmail, email_verified: false }))).description,
    ).toContain('not linked');
  });

  it('holds scope and resource to what the assertion and the service allow', async () => {
    const narrow = await idp.mint({ email: linkedEmail, scope: 'email' });
    expect(await refusal(narrow, agent, { scope: 'agent-service' })).toMatchObject({
      error: 'invalid_scope',
    });
    expect(await refusal(await idp.mint({ email: linkedEmail, scope: 'agent-service admin' }))).toMatchObject(
      {
        error: 'invalid_scope',
      },
    );
    expect(
      await refusal(await idp.mint({ email: linkedEmail }), agent, {
        resource: 'https://elsewhere.example.com/',
      }),
    ).toMatchObject({ error: 'invalid_target' });
    // The public API is a resource too, with the service scope only.
    const api = await exchange(await idp.mint({ email: linkedEmail }), agent, {
      resource: service.config.public_api_url,
    });
    expect(api.scope).toBe('agent-service');
  });

  it('serves a public client (token_endpoint_auth_method none) registered for the grant', async () => {
    const registered = await oauth.processDynamicClientRegistrationResponse(
      await oauth.dynamicClientRegistrationRequest(
        as,
        {
          client_name: 'public agent',
          grant_types: [JWT_BEARER],
          response_types: [],
          redirect_uris: [],
          token_endpoint_auth_method: 'none',
        },
        insecure,
      ),
    );
    const publicAgent = { client: { client_id: registered.client_id }, auth: oauth.None() };
    const tokens = await exchange(
      await idp.mint({ email: linkedEmail, client_id: registered.client_id }),
      publicAgent,
    );
    expect((await mcpContext(tokens.access_token)).structuredContent).toMatchObject({
      account_id: accountId,
      client_id: registered.client_id,
    });
    // Its assertions still name it: the confidential agent's are refused.
    expect((await refusal(await idp.mint({ email: linkedEmail }), publicAgent)).description).toContain(
      'another client',
    );
  });

  it('refuses a client not registered for the grant type', async () => {
    const registered = await oauth.processDynamicClientRegistrationResponse(
      await oauth.dynamicClientRegistrationRequest(
        as,
        {
          client_name: 'code only',
          redirect_uris: ['http://127.0.0.1:9/cb'],
          token_endpoint_auth_method: 'none',
        },
        insecure,
      ),
    );
    const response = await oauth.genericTokenEndpointRequest(
      as,
      { client_id: registered.client_id },
      oauth.None(),
      JWT_BEARER,
      new URLSearchParams({
        assertion: await idp.mint({ email: linkedEmail, client_id: registered.client_id }),
      }),
      insecure,
    );
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toBe('invalid_request');
  });

  it('sweeps jtis once their assertions can no longer be accepted', async () => {
    const db = service.services.db;
    const count = async () =>
      Number(
        (
          await db
            .selectFrom('assertion_jtis')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    const stored = await count();
    expect(stored).toBeGreaterThan(0);
    await sweepAssertionRecords(db, new Date(Date.now() - 3_600_000));
    expect(await count()).toBe(stored);
    await sweepAssertionRecords(db, new Date(Date.now() + 3_600_000));
    expect(await count()).toBe(0);
  });

  it('revokes the agent at {auth_url}/logout: the next MCP call is refused', async () => {
    const tokens = await exchange(await idp.mint({ email: linkedEmail }));
    expect((await mcpContext(tokens.access_token)).isError).toBeFalsy();
    const res = await fetch(`${service.config.auth_url}/logout`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { revoked: boolean; grants_revoked: number };
    expect(body.revoked).toBe(true);
    expect(body.grants_revoked).toBeGreaterThanOrEqual(1);
    const mcp = await fetch(`${service.config.mcp_url}/auth`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${tokens.access_token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(mcp.status).toBe(401);
    expect(mcp.headers.get('www-authenticate')).toContain('invalid_token');
    // A revoked token cannot sign out again.
    const again = await fetch(`${service.config.auth_url}/logout`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    expect(again.status).toBe(401);
  });
});
