/**
 * The CAEP receiver (docs/guides/authentication/caep.md): a real local transmitter with its own keys and
 * JWKS on loopback pushes SETs (RFC 8935) to `{auth_url}/ssf/push`; each event's effect is seen at
 * once on the owner MCP server through the MCP SDK client holding a real access token, and forged,
 * misdirected and replayed SETs are refused with the RFC 8935 error codes.
 */
import { randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { linkSubject } from '../../auth/assertions/repository.ts';
import { dialects } from '../helpers/databases.ts';
import { type OwnerCredentials, OwnerTokenClient } from '../helpers/oauth.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { type LocalTransmitter, startTransmitter } from '../helpers/ssf.ts';

const CAEP = 'https://schemas.openid.net/secevent/caep/event-type';
const SESSION_REVOKED = `${CAEP}/session-revoked`;
const CREDENTIAL_CHANGE = `${CAEP}/credential-change`;
const TOKEN_CLAIMS_CHANGE = `${CAEP}/token-claims-change`;
const PUSH_TOKEN = 'push-token-of-the-guarded-transmitter';

describe.each(dialects)('CAEP receiver (%s)', (dialect) => {
  let service: TestService;
  let transmitter: LocalTransmitter;
  let untrusted: LocalTransmitter;
  let guarded: LocalTransmitter;
  let oauthClient: OwnerTokenClient;
  const owners: OwnerCredentials[] = ['revoked', 'credential', 'claims', 'replay', 'linked'].map((name) => ({
    email: `${name}-${dialect}@example.com`,
    password: 'a long enough passphrase',
  }));
  const accountIds: string[] = [];
  const open: Client[] = [];

  beforeAll(async () => {
    const audience = () => service.config.auth_url;
    transmitter = await startTransmitter(audience);
    untrusted = await startTransmitter(audience);
    guarded = await startTransmitter(audience);
    service = await startTestService(dialect, {
      'rate_limits.unauthenticated_writes.points': 1000,
      'auth.trusted_transmitters': [
        { issuer: transmitter.issuer, jwks_uri: transmitter.jwksUri },
        {
          issuer: guarded.issuer,
          jwks_uri: guarded.jwksUri,
          push_token: PUSH_TOKEN,
          events: [SESSION_REVOKED],
          email_subjects: false,
        },
      ],
    });
    for (const owner of owners) accountIds.push((await service.services.accounts.create(owner)).account.id);
    oauthClient = await OwnerTokenClient.register(service.config.auth_url);
  });
  afterAll(async () => {
    for (const c of open) await c.close().catch(() => {});
    await service?.close();
    await Promise.all([transmitter?.close(), untrusted?.close(), guarded?.close()]);
  });

  const mcpUrl = () => `${service.config.mcp_url}/auth`;

  /** A code flow for `owner`: the access and refresh tokens a real client holds. */
  const tokensFor = (owner: OwnerCredentials) => oauthClient.tokens(owner, mcpUrl());

  /** An MCP SDK client connected to the owner server with `token`. */
  async function mcpClient(token: string): Promise<Client> {
    const mcp = new Client({ name: 'caep-test', version: '1.0.0' });
    await mcp.connect(
      new StreamableHTTPClientTransport(new URL(mcpUrl()), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    open.push(mcp);
    return mcp;
  }

  async function whoami(mcp: Client): Promise<unknown> {
    const result = await mcp.callTool({ name: 'get_owner_context', arguments: {} });
    expect(result.isError).toBeFalsy();
    return (result.structuredContent as { account_id: string }).account_id;
  }

  const refresh = (refreshToken: string) => oauthClient.refresh(refreshToken);

  function push(token: string, headers: Record<string, string> = {}) {
    return fetch(`${service.config.auth_url}/ssf/push`, {
      method: 'POST',
      headers: { 'content-type': 'application/secevent+jwt', ...headers },
      body: token,
    });
  }

  async function refused(res: Response, status: number, err: string): Promise<void> {
    expect(res.status).toBe(status);
    expect(((await res.json()) as { err: string }).err).toBe(err);
  }

  const ourSubject = (accountId: string) => ({
    format: 'iss_sub',
    iss: service.config.auth_url,
    sub: accountId,
  });

  it('session-revoked ends the sessions and grants: the next MCP call with the earlier token is refused', async () => {
    const [owner] = owners as [OwnerCredentials];
    const accountId = accountIds[0] as string;
    const tokens = await tokensFor(owner);
    const mcp = await mcpClient(tokens.access_token);
    expect(await whoami(mcp)).toBe(accountId);

    const set = await transmitter.sign(
      SESSION_REVOKED,
      { event_timestamp: Math.floor(Date.now() / 1000) },
      ourSubject(accountId),
    );
    const res = await push(set);
    expect(res.status).toBe(202);
    expect(await res.text()).toBe('');

    await expect(mcp.callTool({ name: 'get_owner_context', arguments: {} })).rejects.toThrow(
      /invalid_token.*grant of this access token was revoked/,
    );
    await expect(refresh(tokens.refresh_token as string)).rejects.toMatchObject({ error: 'invalid_grant' });
    const grants = await service.services.db
      .selectFrom('oauth_records')
      .select('id')
      .where('account_id', '=', accountId)
      .where('model', 'in', ['Grant', 'Session', 'RefreshToken'])
      .execute();
    expect(grants).toEqual([]);

    // The same SET sent again (a transmitter's retry) is accepted and does nothing more: a token
    // issued after the first delivery keeps working.
    const again = await tokensFor(owner);
    const fresh = await mcpClient(again.access_token);
    expect(await whoami(fresh)).toBe(accountId);
    expect((await push(set)).status).toBe(202);
    expect(await whoami(fresh)).toBe(accountId);
    const receipts = await service.services.db
      .selectFrom('security_event_receipts')
      .selectAll()
      .where('issuer', '=', transmitter.issuer)
      .where('account_id', '=', accountId)
      .execute();
    expect(receipts).toHaveLength(1);
    expect(receipts[0]?.event_type).toBe(SESSION_REVOKED);
  });

  it('credential-change (email subject) revokes the refresh tokens; the access token lives out its short life', async () => {
    const owner = owners[1] as OwnerCredentials;
    const tokens = await tokensFor(owner);
    const mcp = await mcpClient(tokens.access_token);
    const set = await transmitter.sign(
      CREDENTIAL_CHANGE,
      { credential_type: 'password', change_type: 'update' },
      { format: 'email', email: owner.email.toUpperCase() },
    );
    expect((await push(set)).status).toBe(202);
    await expect(refresh(tokens.refresh_token as string)).rejects.toMatchObject({ error: 'invalid_grant' });
    expect(await whoami(mcp)).toBe(accountIds[1]);
  });

  it('token-claims-change (opaque subject) refuses earlier tokens at once and stores the claims', async () => {
    const accountId = accountIds[2] as string;
    const tokens = await tokensFor(owners[2] as OwnerCredentials);
    const mcp = await mcpClient(tokens.access_token);
    expect(await whoami(mcp)).toBe(accountId);
    const first = await transmitter.sign(
      TOKEN_CLAIMS_CHANGE,
      { claims: { role: 'reader', department: 'ops' } },
      { format: 'opaque', id: accountId },
    );
    expect((await push(first)).status).toBe(202);
    await expect(mcp.callTool({ name: 'get_owner_context', arguments: {} })).rejects.toThrow(
      /invalid_token.*revoked its access tokens/,
    );

    // A complex subject naming the user; claims merge per transmitter.
    const second = await transmitter.sign(
      TOKEN_CLAIMS_CHANGE,
      { claims: { role: 'admin' } },
      { format: 'complex', user: { format: 'iss_sub', iss: service.config.auth_url, sub: accountId } },
    );
    expect((await push(second)).status).toBe(202);
    const stored = await service.services.db
      .selectFrom('account_event_claims')
      .selectAll()
      .where('account_id', '=', accountId)
      .executeTakeFirstOrThrow();
    expect(stored.issuer).toBe(transmitter.issuer);
    const claims = typeof stored.claims === 'string' ? JSON.parse(stored.claims) : stored.claims;
    expect(claims).toEqual({ role: 'admin', department: 'ops' });
  });

  it("names the account an identity assertion linked to the transmitter's own subject, and no other issuer's", async () => {
    const accountId = accountIds[4] as string;
    // The link an accepted ID-JAG from this issuer leaves (auth/assertions): its subject -> our account.
    await linkSubject(service.services.db, {
      issuer: transmitter.issuer,
      subject: 'idp-user-4',
      accountId,
      at: new Date(),
    });
    const tokens = await tokensFor(owners[4] as OwnerCredentials);
    const mcp = await mcpClient(tokens.access_token);
    expect(await whoami(mcp)).toBe(accountId);

    // Another transmitter cannot speak for this issuer's subjects: accepted, no account, no effect.
    const foreign = await guarded.sign(
      SESSION_REVOKED,
      { event_timestamp: Math.floor(Date.now() / 1000) },
      { format: 'iss_sub', iss: transmitter.issuer, sub: 'idp-user-4' },
    );
    expect((await push(foreign, { authorization: `Bearer ${PUSH_TOKEN}` })).status).toBe(202);
    expect(await whoami(mcp)).toBe(accountId);

    const set = await transmitter.sign(
      SESSION_REVOKED,
      { event_timestamp: Math.floor(Date.now() / 1000) },
      { format: 'iss_sub', iss: transmitter.issuer, sub: 'idp-user-4' },
    );
    expect((await push(set)).status).toBe(202);
    await expect(mcp.callTool({ name: 'get_owner_context', arguments: {} })).rejects.toThrow(/invalid_token/);
  });

  it('refuses forged, misdirected, replayed and malformed SETs with RFC 8935 codes', async () => {
    const accountId = accountIds[3] as string;
    const tokens = await tokensFor(owners[3] as OwnerCredentials);
    const mcp = await mcpClient(tokens.access_token);
    const subject = ourSubject(accountId);
    const revoke = (options = {}) => transmitter.sign(SESSION_REVOKED, {}, subject, options);

    // Signed by another key under the transmitter's key id: invalid_key.
    const { privateKey: otherKey } = await generateKeyPair('ES256');
    await refused(await push(await revoke({ key: otherKey })), 400, 'invalid_key');
    // A key id the transmitter never published: invalid_key.
    await refused(await push(await revoke({ kid: 'unknown-key' })), 400, 'invalid_key');
    // An issuer that is not configured: invalid_issuer.
    await refused(await push(await untrusted.sign(SESSION_REVOKED, {}, subject)), 400, 'invalid_issuer');
    // Meant for another receiver: invalid_audience.
    await refused(
      await push(await revoke({ audience: 'https://elsewhere.example' })),
      400,
      'invalid_audience',
    );
    // Not a SET: wrong typ, wrong content type, unsigned, two events, bad event payload, no subject.
    await refused(await push(await revoke({ typ: 'JWT' })), 400, 'invalid_request');
    const wrongType = await fetch(`${service.config.auth_url}/ssf/push`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: await revoke(),
    });
    await refused(wrongType, 400, 'invalid_request');
    const unsigned = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'secevent+jwt' })).toString('base64url')}.${Buffer.from(
      JSON.stringify({ iss: transmitter.issuer, jti: randomUUID(), iat: 1, events: {} }),
    ).toString('base64url')}.`;
    await refused(await push(unsigned), 400, 'invalid_request');
    await refused(
      await push(await revoke({ claims: { events: { [SESSION_REVOKED]: {}, [CREDENTIAL_CHANGE]: {} } } })),
      400,
      'invalid_request',
    );
    await refused(
      await push(await transmitter.sign(CREDENTIAL_CHANGE, { credential_type: 'password' }, subject)),
      400,
      'invalid_request',
    );
    await refused(await push(await transmitter.sign(SESSION_REVOKED, {}, undefined)), 400, 'invalid_request');
    await refused(
      await push(await transmitter.sign(SESSION_REVOKED, {}, { format: 'phone_number', phone_number: '+1' })),
      400,
      'invalid_request',
    );
    // NUL cannot be stored (PostgreSQL): refused, not a 500.
    await refused(
      await push(await transmitter.sign(TOKEN_CLAIMS_CHANGE, { claims: { name: 'a\u0000b' } }, subject)),
      400,
      'invalid_request',
    );
    // Older than the receipts are kept (so a replay could not be told apart), or from the future.
    const day = 86_400;
    await refused(
      await push(await revoke({ claims: { iat: Math.floor(Date.now() / 1000) - 8 * day } })),
      400,
      'invalid_request',
    );
    await refused(
      await push(await revoke({ claims: { iat: Math.floor(Date.now() / 1000) + day } })),
      400,
      'invalid_request',
    );
    // The guarded transmitter must send its push token, and may only send session-revoked.
    const guardedSet = await guarded.sign(SESSION_REVOKED, {}, { format: 'email', email: owners[3]?.email });
    await refused(await push(guardedSet), 401, 'authentication_failed');
    await refused(
      await push(guardedSet, { authorization: 'Bearer not-the-push-token' }),
      401,
      'authentication_failed',
    );
    await refused(
      await push(
        await guarded.sign(
          CREDENTIAL_CHANGE,
          { credential_type: 'password', change_type: 'update' },
          subject,
        ),
        {
          authorization: `Bearer ${PUSH_TOKEN}`,
        },
      ),
      403,
      'access_denied',
    );
    // With the token it is accepted, but this transmitter is not trusted with emails: no account matched.
    expect((await push(guardedSet, { authorization: `Bearer ${PUSH_TOKEN}` })).status).toBe(202);
    expect(await whoami(mcp)).toBe(accountId);

    // Replay: a new SET reusing an accepted jti is refused and has no effect.
    const jti = randomUUID();
    const harmless = await transmitter.sign(
      TOKEN_CLAIMS_CHANGE,
      { claims: { nickname: 'x' } },
      { format: 'opaque', id: randomUUID() },
      { jti },
    );
    expect((await push(harmless)).status).toBe(202);
    await refused(await push(await revoke({ jti })), 400, 'invalid_request');

    // None of the refused SETs touched the account.
    expect(await whoami(mcp)).toBe(accountId);
    const receipts = await service.services.db
      .selectFrom('security_event_receipts')
      .select('jti')
      .where('account_id', '=', accountId)
      .execute();
    expect(receipts).toEqual([]);
  });
});

describe.each(dialects)('CAEP receiver behind the outbound address policy (%s)', (dialect) => {
  let service: TestService;
  let transmitter: LocalTransmitter;

  beforeAll(async () => {
    transmitter = await startTransmitter(() => service.config.auth_url);
    service = await startTestService(dialect, {
      'outbound.allow_private_networks': false,
      'scanner.allow_local_sites': false,
      'auth.trusted_transmitters': [{ issuer: transmitter.issuer, jwks_uri: transmitter.jwksUri }],
    });
  });
  afterAll(async () => {
    await service?.close();
    await transmitter?.close();
  });

  it('fetches the JWKS through the SSRF-safe fetcher: a loopback jwks_uri is never called', async () => {
    const set = await transmitter.sign(SESSION_REVOKED, {}, { format: 'opaque', id: randomUUID() });
    const res = await fetch(`${service.config.auth_url}/ssf/push`, {
      method: 'POST',
      headers: { 'content-type': 'application/secevent+jwt' },
      body: set,
    });
    expect(res.status).toBe(503);
    expect(((await res.json()) as { err: string }).err).toBe('temporarily_unavailable');
    expect(transmitter.jwksFetches).toBe(0);
    const receipts = await service.services.db.selectFrom('security_event_receipts').selectAll().execute();
    expect(receipts).toEqual([]);
  });
});
