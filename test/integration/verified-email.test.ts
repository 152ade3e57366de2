/**
 * The verified-email assertion end to end (issue 11, section 2): an agent asks for a code for a
 * person's email, a real SMTP server on loopback receives it, the agent sends the code back and
 * gets an identity assertion signed with our keys, exchanges it with the jwt-bearer grant
 * (oauth4webapi), and uses the access token on the owner MCP server. Five wrong codes lock it.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/databases.ts';
import { type ReceivedMail, startSmtpServer } from '../helpers/receivers.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const insecure = { [oauth.allowInsecureRequests]: true };

function codeIn(mail: ReceivedMail | undefined): string {
  const code = /one-time code is (\d{6})/.exec(mail?.raw ?? '')?.[1];
  if (!code) throw new Error(`no code in ${mail?.raw}`);
  return code;
}

describe.each(dialects)('verified-email assertion (%s)', (dialect) => {
  let service: TestService;
  let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
  let as: oauth.AuthorizationServer;
  let client: oauth.Client;
  let clientAuth: oauth.ClientAuth;

  const post = (path: string, body: unknown) =>
    fetch(`${service.config.auth_url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  async function requestCode(email: string) {
    const before = smtp.mails.length;
    const res = await post('/assertions/email', { email, client_id: client.client_id });
    expect(res.status).toBe(201);
    const body = (await res.json()) as { request_id: string; expires_in: number; attempts_allowed: number };
    // The mail is sent before the answer.
    expect(smtp.mails.length).toBe(before + 1);
    return { ...body, mail: smtp.mails.at(-1) };
  }

  beforeAll(async () => {
    smtp = await startSmtpServer();
    service = await startTestService(dialect, {
      'smtp.url': smtp.url,
      'smtp.from': 'auth@agent-service.test',
    });
    as = await oauth.processDiscoveryResponse(
      new URL(service.config.auth_url),
      await oauth.discoveryRequest(new URL(service.config.auth_url), { algorithm: 'oauth2', ...insecure }),
    );
    const registered = await oauth.processDynamicClientRegistrationResponse(
      await oauth.dynamicClientRegistrationRequest(
        as,
        {
          client_name: 'Email agent',
          grant_types: [JWT_BEARER],
          response_types: [],
          redirect_uris: [],
          token_endpoint_auth_method: 'client_secret_post',
        },
        insecure,
      ),
    );
    client = { client_id: registered.client_id };
    clientAuth = oauth.ClientSecretPost(registered.client_secret as string);
  });
  afterAll(async () => {
    await service?.close();
    await smtp?.close();
  });

  it('sends a code by SMTP, answers the right code with a signed assertion, and the assertion signs the agent in', async () => {
    const email = `Person-${dialect}@Example.com`;
    const requested = await requestCode(email);
    expect(requested.expires_in).toBe(600);
    expect(requested.attempts_allowed).toBe(5);
    expect(requested.mail?.to).toEqual([email.toLowerCase()]);
    expect(requested.mail?.from).toBe('auth@agent-service.test');
    const code = codeIn(requested.mail);

    // The code is stored only as a keyed digest.
    const row = await service.services.db
      .selectFrom('email_codes')
      .selectAll()
      .where('id', '=', requested.request_id)
      .executeTakeFirstOrThrow();
    expect(row.code_hash).not.toContain(code);

    const verified = await post('/assertions/email/verify', { request_id: requested.request_id, code });
    expect(verified.status).toBe(200);
    const body = (await verified.json()) as { assertion: string; assertion_type: string; expires_in: number };
    expect(body.assertion_type).toBe('verified_email');
    expect(decodeProtectedHeader(body.assertion).typ).toBe('oauth-id-jag+jwt');
    // Signed with the keys published at {auth_url}/oauth/jwks.
    const jwks = (await (await fetch(`${service.config.auth_url}/oauth/jwks`)).json()) as { keys: [] };
    const { payload } = await jwtVerify(body.assertion, createLocalJWKSet(jwks), {
      issuer: service.config.auth_url,
      audience: service.config.auth_url,
    });
    expect(payload).toMatchObject({
      email: email.toLowerCase(),
      email_verified: true,
      client_id: client.client_id,
    });

    // A code works once.
    const reused = await post('/assertions/email/verify', { request_id: requested.request_id, code });
    expect(reused.status).toBe(410);
    expect(((await reused.json()) as { code: string }).code).toBe('email_code_expired');

    const tokens = await oauth.processGenericTokenEndpointResponse(
      as,
      client,
      await oauth.genericTokenEndpointRequest(
        as,
        client,
        clientAuth,
        JWT_BEARER,
        new URLSearchParams({ assertion: body.assertion }),
        insecure,
      ),
    );
    const account = await service.services.accounts.getByEmail(email);
    expect(account).toBeDefined();

    const mcp = new Client({ name: 'email-agent', version: '1.0.0' });
    await mcp.connect(
      new StreamableHTTPClientTransport(new URL(`${service.config.mcp_url}/auth`), {
        requestInit: { headers: { authorization: `Bearer ${tokens.access_token}` } },
      }),
    );
    try {
      const result = await mcp.callTool({ name: 'get_owner_context', arguments: {} });
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toMatchObject({
        account_id: account?.id,
        client_id: client.client_id,
      });
    } finally {
      await mcp.close();
    }

    // The assertion is single use too.
    const replay = await oauth.genericTokenEndpointRequest(
      as,
      client,
      clientAuth,
      JWT_BEARER,
      new URLSearchParams({ assertion: body.assertion }),
      insecure,
    );
    expect(replay.status).toBe(400);
    expect(((await replay.json()) as { error_description: string }).error_description).toContain(
      'already used',
    );
  });

  it("binds the assertion to the client that asked for the code: another client's exchange is refused", async () => {
    const requested = await requestCode(`bound-${dialect}@example.com`);
    const verified = await post('/assertions/email/verify', {
      request_id: requested.request_id,
      code: codeIn(requested.mail),
    });
    const { assertion } = (await verified.json()) as { assertion: string };
    const other = await oauth.processDynamicClientRegistrationResponse(
      await oauth.dynamicClientRegistrationRequest(
        as,
        {
          client_name: 'Other agent',
          grant_types: [JWT_BEARER],
          response_types: [],
          redirect_uris: [],
          token_endpoint_auth_method: 'client_secret_post',
        },
        insecure,
      ),
    );
    const res = await oauth.genericTokenEndpointRequest(
      as,
      { client_id: other.client_id },
      oauth.ClientSecretPost(other.client_secret as string),
      JWT_BEARER,
      new URLSearchParams({ assertion }),
      insecure,
    );
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error_description: string }).error_description).toContain(
      'another client',
    );
  });

  it('locks the code after five wrong tries, even for the right code', async () => {
    const requested = await requestCode(`locked-${dialect}@example.com`);
    const code = codeIn(requested.mail);
    const wrong = code === '000000' ? '000001' : '000000';
    for (let i = 1; i <= 4; i++) {
      const res = await post('/assertions/email/verify', { request_id: requested.request_id, code: wrong });
      expect(res.status).toBe(400);
      const problem = (await res.json()) as { code: string; detail: string };
      expect(problem.code).toBe('email_code_invalid');
      expect(problem.detail).toContain(`${5 - i} ${5 - i === 1 ? 'try' : 'tries'} left`);
    }
    const fifth = await post('/assertions/email/verify', { request_id: requested.request_id, code: wrong });
    expect(fifth.status).toBe(403);
    expect(((await fifth.json()) as { code: string }).code).toBe('email_code_locked');
    const right = await post('/assertions/email/verify', { request_id: requested.request_id, code });
    expect(right.status).toBe(403);
    expect(((await right.json()) as { code: string }).code).toBe('email_code_locked');
  });

  it('expires codes after ten minutes', async () => {
    const requested = await requestCode(`late-${dialect}@example.com`);
    await service.services.db
      .updateTable('email_codes')
      .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
      .where('id', '=', requested.request_id)
      .execute();
    const res = await post('/assertions/email/verify', {
      request_id: requested.request_id,
      code: codeIn(requested.mail),
    });
    expect(res.status).toBe(410);
  });

  it('refuses bad input naming the field, and unknown clients', async () => {
    const bad = await post('/assertions/email', { email: 'not an email', client_id: client.client_id });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(await bad.json())).toContain('email');
    const unknown = await post('/assertions/email', { email: 'a@example.com', client_id: 'nope' });
    expect(unknown.status).toBe(400);
    expect(JSON.stringify(await unknown.json())).toContain('client_id');
    const code = await post('/assertions/email/verify', { request_id: crypto.randomUUID(), code: '12' });
    expect(code.status).toBe(400);
    expect(JSON.stringify(await code.json())).toContain('code');
    const missing = await post('/assertions/email/verify', {
      request_id: crypto.randomUUID(),
      code: '123456',
    });
    expect(missing.status).toBe(404);
  });

  it('limits code requests per email', async () => {
    const email = `limited-${dialect}@example.com`;
    const points = service.config.rate_limits.email_codes_per_email.points;
    for (let i = 0; i < points; i++) await requestCode(email);
    const res = await post('/assertions/email', { email, client_id: client.client_id });
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBeTruthy();
    expect(((await res.json()) as { detail: string }).detail).toContain('this email');
  });

  it('limits code requests and checks per address, across emails', async () => {
    const points = service.config.rate_limits.email_codes_per_address.points;
    let refused: Response | undefined;
    // Earlier tests in this file spent some of the address's points already.
    for (let i = 0; i <= points && !refused; i++) {
      const res = await post('/assertions/email', {
        email: `spread-${i}-${dialect}@example.com`,
        client_id: client.client_id,
      });
      if (res.status === 429) refused = res;
      else expect(res.status).toBe(201);
    }
    if (!refused) throw new Error('no request was refused');
    expect(((await refused.json()) as { detail: string }).detail).toContain('this address');
    const check = await post('/assertions/email/verify', { request_id: crypto.randomUUID(), code: '123456' });
    expect(check.status).toBe(429);
  });
});
