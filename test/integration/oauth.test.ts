/**
 * The authorization server and the owner-scoped MCP server with an independent OAuth client
 * (oauth4webapi): discovery, registration, PKCE authorization through the sign-in and consent
 * pages, tokens, refresh rotation, revocation, and the resource server's refusals.
 */
import { type CryptoKey, decodeJwt, exportSPKI, importJWK, SignJWT } from 'jose';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { revokeAccountTokens } from '../../auth/bearer.ts';
import { dialects } from '../helpers/databases.ts';
import {
  authorizeInBrowser,
  CookieJar,
  formAction,
  formField,
  type OwnerCredentials,
} from '../helpers/oauth.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

const insecure = { [oauth.allowInsecureRequests]: true };
const redirectUri = 'http://127.0.0.1:7777/callback';

describe.each(dialects)('OAuth authorization server and owner MCP (%s)', (dialect) => {
  let service: TestService;
  let as: oauth.AuthorizationServer;
  let client: oauth.Client;
  let resource: string;
  const owner: OwnerCredentials = { email: 'owner@example.com', password: 'correct horse battery staple' };
  let accountId: string;
  let serviceKey: string;
  let registration: { accessToken: string; clientUri: string };

  beforeAll(async () => {
    service = await startTestService(dialect, { 'rate_limits.unauthenticated_writes.points': 1000 });
    resource = `${service.config.mcp_url}/auth`;
    const created = await service.services.accounts.create(owner);
    accountId = created.account.id;
    serviceKey = created.key.service_key;
    const issuer = new URL(service.config.auth_url);
    as = await oauth.processDiscoveryResponse(
      issuer,
      await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }),
    );
    const registered = await oauth.processDynamicClientRegistrationResponse(
      await oauth.dynamicClientRegistrationRequest(
        as,
        {
          client_name: 'Independent test client',
          redirect_uris: [redirectUri],
          grant_types: ['authorization_code', 'refresh_token'],
          token_endpoint_auth_method: 'none',
        },
        insecure,
      ),
    );
    client = { client_id: registered.client_id, token_endpoint_auth_method: 'none' };
    registration = {
      accessToken: registered.registration_access_token as string,
      clientUri: registered.registration_client_uri as string,
    };
  });
  afterAll(async () => {
    await service?.close();
  });

  /** One authorization code flow; returns the token response and the pages shown. */
  async function authorize(
    scope = 'agent-service email offline_access',
    jar?: CookieJar,
    redirect = redirectUri,
    target = resource,
  ): Promise<{
    tokens: oauth.TokenEndpointResponse;
    pages: { url: string; html?: string }[];
    jar: CookieJar;
  }> {
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const url = new URL(as.authorization_endpoint as string);
    url.search = new URLSearchParams({
      client_id: client.client_id,
      redirect_uri: redirect,
      response_type: 'code',
      scope,
      state,
      resource: target,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    }).toString();
    const flow = await authorizeInBrowser(url.href, owner, jar ? { jar } : {});
    const params = oauth.validateAuthResponse(as, client, flow.redirect, state);
    const response = await oauth.authorizationCodeGrantRequest(
      as,
      client,
      oauth.None(),
      params,
      redirect,
      verifier,
      {
        additionalParameters: { resource: target },
        ...insecure,
      },
    );
    return {
      tokens: await oauth.processAuthorizationCodeResponse(as, client, response),
      pages: flow.pages,
      jar: flow.jar,
    };
  }

  async function callTool(token: string | undefined, name = 'get_owner_context', query = '') {
    const res = await fetch(`${resource}${query}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: {} } }),
    });
    return { res, body: (await res.json()) as Record<string, unknown> };
  }

  it('publishes the same issuer at the issuer and on the site, and protected resource metadata', async () => {
    const site = service.config.site_url;
    const auth = service.config.auth_url;
    const urls = [
      `${auth}/.well-known/openid-configuration`,
      `${auth}/.well-known/oauth-authorization-server`,
      `${site}/.well-known/openid-configuration`,
      `${site}/.well-known/oauth-authorization-server`,
      `${site}/.well-known/oauth-authorization-server/auth/v1`,
      `${site}/.well-known/openid-configuration/auth/v1`,
    ];
    const docs = await Promise.all(
      urls.map(async (u) => (await fetch(u)).json() as Promise<Record<string, unknown>>),
    );
    for (const doc of docs) expect(doc).toEqual(docs[0]);
    const meta = docs[0] as Record<string, unknown>;
    expect(meta.issuer).toBe(auth);
    expect(meta.registration_endpoint).toBe(`${auth}/oauth/clients/register`);
    expect(meta.authorization_endpoint).toBe(`${auth}/oauth/authorize`);
    expect(meta.token_endpoint).toBe(`${auth}/oauth/token`);
    expect(meta.revocation_endpoint).toBe(`${auth}/oauth/revoke`);
    expect(meta.jwks_uri).toBe(`${auth}/oauth/jwks`);
    expect(meta.code_challenge_methods_supported).toEqual(['S256']);
    expect(meta.response_types_supported).toEqual(['code']);
    expect(meta.grant_types_supported).toEqual([
      'authorization_code',
      'refresh_token',
      'urn:ietf:params:oauth:grant-type:jwt-bearer',
    ]);
    expect(meta.scopes_supported).toEqual(
      expect.arrayContaining(['agent-service', 'profile', 'email', 'offline_access']),
    );
    for (const off of [
      'pushed_authorization_request_endpoint',
      'userinfo_endpoint',
      'introspection_endpoint',
      'dpop_signing_alg_values_supported',
      'device_authorization_endpoint',
    ]) {
      expect(meta[off]).toBeUndefined();
    }

    for (const u of [
      `${resource}/.well-known/oauth-protected-resource`,
      `${site}/.well-known/oauth-protected-resource/mcp/auth`,
    ]) {
      const prm = (await (await fetch(u)).json()) as Record<string, unknown>;
      expect(prm).toMatchObject({
        resource,
        authorization_servers: [auth],
        bearer_methods_supported: ['header'],
        scopes_supported: ['agent-service', 'profile', 'email'],
        resource_registration_endpoint: `${auth}/oauth/clients/register`,
      });
    }
  });

  it('issues tokens for the site (its RFC 9728 metadata at the root) that authorize the same Bearer writes', async () => {
    const site = service.config.site_url;
    const prm = (await (await fetch(`${site}/.well-known/oauth-protected-resource`)).json()) as Record<
      string,
      unknown
    >;
    expect(prm).toMatchObject({
      resource: site,
      authorization_servers: [service.config.auth_url],
      bearer_methods_supported: ['header'],
      scopes_supported: ['agent-service'],
    });
    const { tokens } = await authorize('agent-service', undefined, redirectUri, site);
    expect(decodeJwt(tokens.access_token)).toMatchObject({
      aud: site,
      sub: accountId,
      client_id: client.client_id,
    });
    const res = await fetch(`${service.config.public_api_url}/listings`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${tokens.access_token}` },
      body: JSON.stringify({
        domain: 'site-token-listing.example.com',
        name: 'Site token listing',
        description: 'Submitted with an access token for the site.',
        category: 'other',
        url: 'https://site-token-listing.example.com/',
        contact: { email: 'hello@site-token-listing.example.com' },
      }),
    });
    expect(res.status).toBe(200);
    // Not an owner token: the owner-scoped MCP server refuses it.
    expect((await callTool(tokens.access_token)).res.status).toBe(401);
  });

  it('issues tokens for the public API that authorize its Bearer writes and nothing else', async () => {
    const api = service.config.public_api_url;
    for (const u of [
      `${api}/.well-known/oauth-protected-resource`,
      `${service.config.site_url}/.well-known/oauth-protected-resource/api/public`,
    ]) {
      expect(await (await fetch(u)).json()).toMatchObject({
        resource: api,
        authorization_servers: [service.config.auth_url],
        bearer_methods_supported: ['header'],
      });
    }
    const listing = {
      domain: 'bearer-listing.example.com',
      name: 'Bearer listing',
      description: 'Submitted with an OAuth access token.',
      category: 'other',
      url: 'https://bearer-listing.example.com/',
      contact: { email: 'hello@bearer-listing.example.com' },
    };
    const post = (headers: Record<string, string>) =>
      fetch(`${api}/listings`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(listing),
      });

    const none = await post({});
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toContain(
      `resource_metadata="${api}/.well-known/oauth-protected-resource"`,
    );

    const { tokens } = await authorize('agent-service', undefined, redirectUri, api);
    const claims = decodeJwt(tokens.access_token);
    expect(claims).toMatchObject({ aud: api, sub: accountId, client_id: client.client_id });
    const ok = await post({ authorization: `Bearer ${tokens.access_token}` });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ domain: listing.domain, status: 'pending', created: true });
    const row = await service.services.db
      .selectFrom('listings')
      .select('account_id')
      .where('domain', '=', listing.domain)
      .executeTakeFirstOrThrow();
    expect(row.account_id).toBe(accountId);

    // Audiences do not mix, and a client's token does not manage the account's keys.
    expect((await callTool(tokens.access_token)).res.status).toBe(401);
    const owner = (await authorize('agent-service')).tokens.access_token;
    const wrongAudience = await post({ authorization: `Bearer ${owner}` });
    expect(wrongAudience.status).toBe(401);
    expect(wrongAudience.headers.get('www-authenticate')).toContain('error="invalid_token"');
    const keys = await fetch(`${api}/account/keys`, {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    expect(keys.status).toBe(401);
  });

  it('runs the code flow with PKCE through sign-in and consent, and serves get_owner_context', async () => {
    const { tokens, pages } = await authorize();
    expect(pages.map((p) => p.url.includes('/interaction/'))).toEqual([true, true]);
    expect(tokens.token_type.toLowerCase()).toBe('bearer');
    expect(tokens.expires_in).toBeLessThanOrEqual(600);
    expect(tokens.refresh_token).toBeTypeOf('string');

    const claims = await oauth.validateJwtAccessToken(
      as,
      new Request(resource, { headers: { authorization: `Bearer ${tokens.access_token}` } }),
      resource,
      insecure,
    );
    expect(claims).toMatchObject({
      client_id: client.client_id,
      sub: accountId,
      aud: resource,
      iss: service.config.auth_url,
    });
    expect(String(claims.scope).split(' ')).toContain('agent-service');

    const { res, body } = await callTool(tokens.access_token);
    expect(res.status).toBe(200);
    const result = body.result as { isError?: boolean; structuredContent: Record<string, unknown> };
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({
      account_id: accountId,
      email: owner.email,
      client_id: client.client_id,
      scopes: expect.arrayContaining(['agent-service', 'email']),
    });
  });

  it('does not ask an approved web client again, but does for new scopes', async () => {
    const webRedirect = 'https://client.example/callback';
    const registered = await oauth.processDynamicClientRegistrationResponse(
      await oauth.dynamicClientRegistrationRequest(
        as,
        { client_name: 'Web client', redirect_uris: [webRedirect], token_endpoint_auth_method: 'none' },
        insecure,
      ),
    );
    const start = async (scope: string, jar: CookieJar) => {
      const url = new URL(as.authorization_endpoint as string);
      url.search = new URLSearchParams({
        client_id: registered.client_id,
        redirect_uri: webRedirect,
        response_type: 'code',
        scope,
        resource,
        code_challenge: await oauth.calculatePKCECodeChallenge(oauth.generateRandomCodeVerifier()),
        code_challenge_method: 'S256',
      }).toString();
      return authorizeInBrowser(url.href, owner, { jar });
    };
    const jar = new CookieJar();
    const first = await start('agent-service', jar);
    expect(first.pages).toHaveLength(2);
    expect(first.redirect.searchParams.get('code')).toBeTypeOf('string');
    const again = await start('agent-service', jar);
    expect(again.pages).toEqual([]);
    expect(again.redirect.searchParams.get('code')).toBeTypeOf('string');
    // A new sign-in (another browser) finds the grant too: only the password is asked.
    const elsewhere = await start('agent-service', new CookieJar());
    expect(elsewhere.pages.map((p) => p.html?.includes('name="password"'))).toEqual([true]);
    const wider = await start('agent-service profile', jar);
    expect(wider.pages).toHaveLength(1);
    expect(wider.pages[0]?.html).toMatch(/See your account identifier/);
  });

  it('asks a native (loopback) client every time, as RFC 8252 section 8.6 advises', async () => {
    const jar = new CookieJar();
    await authorize('agent-service', jar);
    const again = await authorize('agent-service', jar);
    expect(again.pages).toHaveLength(1);
    expect(again.pages[0]?.html).toMatch(/Read your own sites/);
  });

  it('accepts a loopback redirect on another port (RFC 8252) but no other redirect', async () => {
    const { tokens } = await authorize('agent-service', undefined, 'http://127.0.0.1:9911/callback');
    expect(tokens.access_token).toBeTypeOf('string');
    const url = new URL(as.authorization_endpoint as string);
    url.search = new URLSearchParams({
      client_id: client.client_id,
      redirect_uri: 'http://127.0.0.1:7777/elsewhere',
      response_type: 'code',
      scope: 'agent-service',
      code_challenge: await oauth.calculatePKCECodeChallenge(oauth.generateRandomCodeVerifier()),
      code_challenge_method: 'S256',
    }).toString();
    const res = await fetch(url, { redirect: 'manual' });
    expect(res.status).toBe(400);
    expect(await res.text()).toMatch(/redirect_uri/);
  });

  it('refuses authorization without PKCE or with the plain method', async () => {
    const variants: Record<string, string>[] = [
      {},
      { code_challenge: 'a'.repeat(43), code_challenge_method: 'plain' },
    ];
    for (const pkce of variants) {
      const url = new URL(as.authorization_endpoint as string);
      url.search = new URLSearchParams({
        client_id: client.client_id,
        redirect_uri: redirectUri,
        response_type: 'code',
        scope: 'agent-service',
        ...pkce,
      }).toString();
      const res = await fetch(url, { redirect: 'manual' });
      expect(res.status).toBe(303);
      const back = new URL(res.headers.get('location') as string);
      expect(back.origin + back.pathname).toBe(redirectUri);
      expect(back.searchParams.get('error')).toBe('invalid_request');
    }
  });

  it('rotates refresh tokens and revokes the grant when a used one comes back', async () => {
    const { tokens } = await authorize();
    const first = tokens.refresh_token as string;
    const rotated = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, oauth.None(), first, {
        additionalParameters: { resource },
        ...insecure,
      }),
    );
    expect(rotated.refresh_token).toBeTypeOf('string');
    expect(rotated.refresh_token).not.toBe(first);
    expect((await callTool(rotated.access_token)).res.status).toBe(200);

    const reuse = await oauth.refreshTokenGrantRequest(as, client, oauth.None(), first, insecure);
    await expect(oauth.processRefreshTokenResponse(as, client, reuse)).rejects.toMatchObject({
      error: 'invalid_grant',
    });
    // The whole grant is gone: the newest refresh token and the access token stop working at once.
    const next = await oauth.refreshTokenGrantRequest(
      as,
      client,
      oauth.None(),
      rotated.refresh_token as string,
      insecure,
    );
    await expect(oauth.processRefreshTokenResponse(as, client, next)).rejects.toMatchObject({
      error: 'invalid_grant',
    });
    const refused = await callTool(rotated.access_token);
    expect(refused.res.status).toBe(401);
    expect(refused.res.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);
  });

  it('refuses an access token at once after its refresh token is revoked', async () => {
    const { tokens } = await authorize();
    expect((await callTool(tokens.access_token)).res.status).toBe(200);
    const revoked = await oauth.revocationRequest(
      as,
      client,
      oauth.None(),
      tokens.refresh_token as string,
      insecure,
    );
    await oauth.processRevocationResponse(revoked);
    const { res } = await callTool(tokens.access_token);
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);
  });

  it('refuses an access token at once after the owner signs out', async () => {
    const { tokens, jar } = await authorize();
    expect((await callTool(tokens.access_token)).res.status).toBe(200);
    const page = await jar.fetch(`${service.config.auth_url}/logout`);
    expect(page.status).toBe(200);
    const html = await page.text();
    const action = formAction(html.replace('id="op.logoutForm"', '')) ?? /action="([^"]+)"/.exec(html)?.[1];
    const xsrf = formField(html, 'xsrf') ?? (/name="xsrf" value="([^"]+)"/.exec(html)?.[1] as string);
    const done = await jar.fetch(new URL(action as string, service.config.auth_url).href, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ xsrf, logout: 'yes' }),
    });
    expect(done.status).toBeLessThan(400);
    const { res } = await callTool(tokens.access_token);
    expect(res.status).toBe(401);
  });

  it('answers 403 insufficient_scope to a token without the service scope', async () => {
    const { tokens } = await authorize('profile');
    const { res } = await callTool(tokens.access_token);
    expect(res.status).toBe(403);
    expect(res.headers.get('www-authenticate')).toMatch(/error="insufficient_scope"/);
    expect(res.headers.get('www-authenticate')).toMatch(/scope="agent-service"/);
  });

  it('keeps no refresh token, registration access token or session cookie a database reader could present', async () => {
    const { tokens, jar } = await authorize();
    const rotated = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token as string, {
        additionalParameters: { resource },
        ...insecure,
      }),
    );
    const session = /(?:^|; )_session=([^;]+)/.exec(jar.header())?.[1];
    const secrets = {
      refresh: tokens.refresh_token,
      rotated: rotated.refresh_token,
      registration: registration.accessToken,
      session,
    };
    for (const value of Object.values(secrets)) expect(value).toBeTypeOf('string');

    const rows = await service.services.db.selectFrom('oauth_records').selectAll().execute();
    expect(rows.map((r) => r.model)).toEqual(
      expect.arrayContaining(['RefreshToken', 'RegistrationAccessToken', 'Session']),
    );
    const everything = JSON.stringify(rows);
    for (const [name, value] of Object.entries(secrets)) expect(everything, name).not.toContain(value);

    // Whoever holds them can still use them: the registration access token reads the client, the
    // newest refresh token refreshes, the session still signs the browser in.
    const read = await fetch(registration.clientUri, {
      headers: { authorization: `Bearer ${registration.accessToken}` },
    });
    expect(read.status).toBe(200);
    expect(((await read.json()) as { client_id: string }).client_id).toBe(client.client_id);
    const again = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, oauth.None(), rotated.refresh_token as string, {
        additionalParameters: { resource },
        ...insecure,
      }),
    );
    expect((await callTool(again.access_token)).res.status).toBe(200);
    const signedIn = await authorize('agent-service', jar);
    expect(signedIn.pages.some((p) => p.html?.includes('name="password"'))).toBe(false);
  });

  describe('refuses tokens that are not ours to accept', () => {
    let valid: string;
    let claims: Record<string, unknown>;
    let signingKey: CryptoKey;
    let kid: string;

    beforeAll(async () => {
      valid = (await authorize('agent-service')).tokens.access_token;
      claims = JSON.parse(Buffer.from(valid.split('.')[1] as string, 'base64url').toString()) as Record<
        string,
        unknown
      >;
      const jwk = service.services.authorization.keys.jwks.keys[0];
      kid = jwk?.kid as string;
      signingKey = (await importJWK(jwk as object, 'ES256')) as CryptoKey;
    });

    const sign = (payload: Record<string, unknown>, typ = 'at+jwt') =>
      new SignJWT(payload).setProtectedHeader({ alg: 'ES256', typ, kid }).sign(signingKey);
    const unsigned = (payload: Record<string, unknown>) =>
      `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'at+jwt' })).toString('base64url')}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.`;

    it('without a token: 401 with a challenge naming the resource metadata', async () => {
      const { res } = await callTool(undefined);
      expect(res.status).toBe(401);
      const challenge = res.headers.get('www-authenticate') as string;
      expect(challenge).toMatch(/^Bearer /);
      expect(challenge).toContain(`resource_metadata="${resource}/.well-known/oauth-protected-resource"`);
      expect(challenge).not.toMatch(/error=/);
    });

    it('in the query string, even when valid', async () => {
      const { res } = await callTool(undefined, 'get_owner_context', `?access_token=${valid}`);
      expect(res.status).toBe(400);
      expect(res.headers.get('www-authenticate')).toMatch(/error="invalid_request"/);
    });

    it.each([
      [
        'an application-session JWT without client_id',
        async () => {
          const { client_id: _, ...rest } = claims;
          return sign(rest, 'JWT');
        },
      ],
      [
        'a token without client_id even when typed at+jwt',
        async () => {
          const { client_id: _, ...rest } = claims;
          return sign(rest);
        },
      ],
      ['alg none', async () => unsigned(claims)],
      [
        'HS256 keyed with our public key',
        async () => {
          const pub = await exportSPKI(
            (await importJWK(
              { ...service.services.authorization.keys.jwks.keys[0], d: undefined } as object,
              'ES256',
            )) as CryptoKey,
          );
          return new SignJWT(claims)
            .setProtectedHeader({ alg: 'HS256', typ: 'at+jwt', kid })
            .sign(new TextEncoder().encode(pub));
        },
      ],
      ['another audience', async () => sign({ ...claims, aud: 'https://elsewhere.example/mcp' })],
      ['another issuer', async () => sign({ ...claims, iss: 'https://elsewhere.example' })],
      [
        'an expired token',
        async () => sign({ ...claims, iat: Number(claims.iat) - 7200, exp: Number(claims.iat) - 3600 }),
      ],
      ['a token for a grant that does not exist', async () => sign({ ...claims, grant_id: 'no-such-grant' })],
      ['a tampered token', async () => `${valid.slice(0, -4)}AAAA`],
    ])('%s', async (_name, make) => {
      const { res } = await callTool(await make());
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);
    });

    it('and accepts the genuine one it was made from', async () => {
      expect((await callTool(valid)).res.status).toBe(200);
    });
  });

  // After the suites above that hold tokens: it signs the account out of every client.
  it('signs the account out of every client with POST /account/revoke-tokens', async () => {
    const { tokens } = await authorize();
    expect((await callTool(tokens.access_token)).res.status).toBe(200);
    const revoke = (key?: string) =>
      fetch(`${service.config.public_api_url}/account/revoke-tokens`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(key ? { 'x-service-key': key } : {}) },
        body: '{}',
      });
    expect((await revoke()).status).toBe(401);

    const res = await revoke(serviceKey);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toEqual({
      revoked_before: expect.any(String),
      grants_revoked: expect.any(Number),
      sessions_ended: expect.any(Number),
      security_events_queued: 0,
    });
    expect(body.grants_revoked).toBeGreaterThan(0);
    expect(body.sessions_ended).toBeGreaterThan(0);

    const { res: refused } = await callTool(tokens.access_token);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);
    const refresh = await oauth.refreshTokenGrantRequest(
      as,
      client,
      oauth.None(),
      tokens.refresh_token as string,
      insecure,
    );
    await expect(oauth.processRefreshTokenResponse(as, client, refresh)).rejects.toMatchObject({
      error: 'invalid_grant',
    });

    // Signing in again right away works: only what was issued before is refused.
    const again = await authorize();
    expect((await callTool(again.tokens.access_token)).res.status).toBe(200);
  });

  // Last: it revokes every token of the account.
  it('refuses every earlier token of an account whose tokens were revoked before a time', async () => {
    const { tokens } = await authorize('agent-service');
    expect((await callTool(tokens.access_token)).res.status).toBe(200);
    await revokeAccountTokens(service.services.db, accountId, new Date(Date.now() + 1000));
    const { res } = await callTool(tokens.access_token);
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);
  });
});
