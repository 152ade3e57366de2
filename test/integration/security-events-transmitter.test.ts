/**
 * Our transmitter (docs/guides/authentication/caep.md): SSF metadata, stream management for a receiver,
 * the verification event, and the SETs an account's own actions emit - revoke all tokens, change
 * password, change email - pushed through the durable outbox to a real receiver on loopback that
 * verifies them against our JWKS with jose, retried when the receiver fails at first.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, dialects, type TestDatabase } from '../helpers/databases.ts';
import { type OwnerCredentials, OwnerTokenClient } from '../helpers/oauth.ts';
import { waitFor } from '../helpers/receivers.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { type LocalSetReceiver, type ReceivedSet, startSetReceiver } from '../helpers/ssf.ts';

const CAEP = 'https://schemas.openid.net/secevent/caep/event-type';
const SESSION_REVOKED = `${CAEP}/session-revoked`;
const CREDENTIAL_CHANGE = `${CAEP}/credential-change`;
const TOKEN_CLAIMS_CHANGE = `${CAEP}/token-claims-change`;
const VERIFICATION = 'https://schemas.openid.net/secevent/ssf/event-type/verification';
const PUSH = 'urn:ietf:rfc:8935';

/** The event of `type` in a received SET. */
const eventOf = (set: ReceivedSet | undefined, type: string): unknown =>
  (set?.payload?.events as Record<string, unknown> | undefined)?.[type];

describe.each(dialects)('SSF transmitter (%s)', (dialect) => {
  let service: TestService;
  const receivers: LocalSetReceiver[] = [];
  const owner: OwnerCredentials = {
    email: `ssf-owner-${dialect}@example.com`,
    password: 'first passphrase here',
  };
  let accountId: string;
  let serviceKey: string;
  let otherKey: string;

  beforeAll(async () => {
    service = await startTestService(dialect, {
      'rate_limits.unauthenticated_writes.points': 1000,
      'auth.security_events.delivery.poll_interval_ms': 50,
      'auth.security_events.delivery.base_delay_ms': 50,
      'auth.security_events.delivery.max_attempts': 4,
    });
    const created = await service.services.accounts.create(owner);
    accountId = created.account.id;
    serviceKey = created.key.service_key;
    otherKey = (await service.services.accounts.create({ email: `other-${dialect}@example.com` })).key
      .service_key;
  });
  afterAll(async () => {
    await service?.close();
    await Promise.all(receivers.map((r) => r.close()));
  });

  /** A receiver that checks our SETs with our published JWKS, and `aud` = its own URL. */
  async function receiver(respond?: (attempt: number) => number): Promise<LocalSetReceiver> {
    const r: LocalSetReceiver = await startSetReceiver(
      () => ({
        issuer: service.config.auth_url,
        jwksUri: `${service.config.auth_url}/oauth/jwks`,
        audience: r.url,
      }),
      respond,
    );
    receivers.push(r);
    return r;
  }

  const api = (path: string, init: RequestInit & { key?: string; token?: string } = {}) =>
    fetch(`${service.config.auth_url}${path}`, {
      ...init,
      headers: {
        'content-type': 'application/json',
        ...(init.key ? { 'x-service-key': init.key } : {}),
        ...(init.token ? { authorization: `Bearer ${init.token}` } : {}),
      },
    });

  async function createStream(r: LocalSetReceiver, extra: Record<string, unknown> = {}, key = serviceKey) {
    const res = await api('/ssf/streams', {
      method: 'POST',
      key,
      body: JSON.stringify({
        delivery: { method: PUSH, endpoint_url: r.url, authorization_header: 'Bearer receiver-secret' },
        events_requested: [SESSION_REVOKED, CREDENTIAL_CHANGE, TOKEN_CLAIMS_CHANGE, 'urn:example:unknown'],
        description: 'test receiver',
        ...extra,
      }),
    });
    expect(res.status).toBe(201);
    return (await res.json()) as Record<string, unknown> & { stream_id: string };
  }

  const account = (path: string, body: unknown) =>
    fetch(`${service.config.public_api_url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-key': serviceKey },
      body: JSON.stringify(body),
    });

  it('publishes SSF 1.0 transmitter metadata at the issuer and on the site', async () => {
    const { site_url: site, auth_url: auth } = service.config;
    const urls = [
      `${auth}/.well-known/ssf-configuration`,
      `${site}/.well-known/ssf-configuration`,
      `${site}/.well-known/ssf-configuration${new URL(auth).pathname}`,
    ];
    const index = (await (await fetch(`${site}/`, { headers: { accept: 'application/json' } })).json()) as {
      urls: Record<string, string>;
    };
    expect(index.urls.security_events).toBe(urls[0]);
    const docs = await Promise.all(urls.map(async (u) => (await fetch(u)).json()));
    for (const doc of docs) expect(doc).toEqual(docs[0]);
    expect(docs[0]).toEqual({
      spec_version: '1_0',
      issuer: auth,
      jwks_uri: `${auth}/oauth/jwks`,
      delivery_methods_supported: [PUSH],
      configuration_endpoint: `${auth}/ssf/streams`,
      status_endpoint: `${auth}/ssf/status`,
      verification_endpoint: `${auth}/ssf/verify`,
      authorization_schemes: [{ spec_urn: 'urn:ietf:rfc:6749' }, { spec_urn: 'urn:ietf:rfc:6750' }],
      default_subjects: 'ALL',
    });
  });

  it('manages streams for the account that owns them', async () => {
    const r = await receiver();
    expect((await api('/ssf/streams', { method: 'POST', body: '{}' })).status).toBe(401);
    const bad = await api('/ssf/streams', {
      method: 'POST',
      key: serviceKey,
      body: JSON.stringify({ delivery: { method: 'urn:ietf:rfc:8936', endpoint_url: 'ftp://x.example/' } }),
    });
    expect(bad.status).toBe(400);
    const problem = (await bad.json()) as { errors: { field: string }[] };
    expect(problem.errors.map((e) => e.field).sort()).toEqual(['delivery.endpoint_url', 'delivery.method']);

    const nul = await api('/ssf/streams', {
      method: 'POST',
      key: serviceKey,
      body: JSON.stringify({ delivery: { method: PUSH, endpoint_url: r.url }, description: 'a\u0000b' }),
    });
    expect(nul.status).toBe(400);
    expect(((await nul.json()) as { errors: { field: string }[] }).errors[0]?.field).toBe('description');

    const stream = await createStream(r);
    expect(stream).toEqual({
      stream_id: expect.any(String),
      iss: service.config.auth_url,
      aud: r.url,
      delivery: { method: PUSH, endpoint_url: r.url },
      events_supported: [SESSION_REVOKED, CREDENTIAL_CHANGE, TOKEN_CLAIMS_CHANGE],
      events_requested: [SESSION_REVOKED, CREDENTIAL_CHANGE, TOKEN_CLAIMS_CHANGE, 'urn:example:unknown'],
      events_delivered: [SESSION_REVOKED, CREDENTIAL_CHANGE, TOKEN_CLAIMS_CHANGE],
      description: 'test receiver',
      min_verification_interval: 10,
    });
    const id = stream.stream_id;
    expect(await (await api(`/ssf/streams?stream_id=${id}`, { key: serviceKey })).json()).toEqual(stream);
    // Another account sees no such stream.
    expect((await api(`/ssf/streams?stream_id=${id}`, { key: otherKey })).status).toBe(404);
    expect(await (await api('/ssf/streams', { key: otherKey })).json()).toEqual([]);

    const patched = await api('/ssf/streams', {
      method: 'PATCH',
      key: serviceKey,
      body: JSON.stringify({ stream_id: id, events_requested: [CREDENTIAL_CHANGE] }),
    });
    expect(patched.status).toBe(200);
    expect(await patched.json()).toMatchObject({
      events_delivered: [CREDENTIAL_CHANGE],
      description: 'test receiver',
    });
    expect(await (await api(`/ssf/status?stream_id=${id}`, { key: serviceKey })).json()).toEqual({
      stream_id: id,
      status: 'enabled',
    });

    // An access token of ours works as well as the service key.
    const oauthClient = await OwnerTokenClient.register(service.config.auth_url);
    const { access_token } = await oauthClient.tokens(owner, `${service.config.mcp_url}/auth`);
    const listed = (await (await api('/ssf/streams', { token: access_token })).json()) as {
      stream_id: string;
    }[];
    expect(listed.map((s) => s.stream_id)).toContain(id);
    expect((await api('/ssf/streams', { token: 'not-a-token' })).status).toBe(401);

    expect((await api(`/ssf/streams?stream_id=${id}`, { method: 'DELETE', key: serviceKey })).status).toBe(
      204,
    );
    expect((await api(`/ssf/streams?stream_id=${id}`, { key: serviceKey })).status).toBe(404);
  });

  it("sends a verification event and the account's events, signed with our keys", async () => {
    const r = await receiver();
    const { stream_id } = await createStream(r);

    expect(
      (
        await api('/ssf/verify', {
          method: 'POST',
          key: serviceKey,
          body: JSON.stringify({ stream_id, state: 'check-1' }),
        })
      ).status,
    ).toBe(204);
    const soon = await api('/ssf/verify', {
      method: 'POST',
      key: serviceKey,
      body: JSON.stringify({ stream_id }),
    });
    expect(soon.status).toBe(429);
    expect(Number(soon.headers.get('retry-after'))).toBeGreaterThan(0);
    await waitFor(() => r.received.length === 1);
    const verification = r.received[0];
    expect(verification?.error).toBeUndefined();
    expect(verification?.contentType).toBe('application/secevent+jwt');
    expect(verification?.authorization).toBe('Bearer receiver-secret');
    expect(verification?.header?.typ).toBe('secevent+jwt');
    expect(verification?.payload).toMatchObject({
      iss: service.config.auth_url,
      aud: r.url,
      sub_id: { format: 'opaque', id: stream_id },
      events: { [VERIFICATION]: { state: 'check-1' } },
    });

    const subject = { format: 'iss_sub', iss: service.config.auth_url, sub: accountId };
    const revoked = await account('/account/revoke-tokens', {});
    expect(revoked.status).toBe(200);
    expect(await revoked.json()).toMatchObject({ security_events_queued: 1 });
    await waitFor(() => r.received.length === 2);

    const wrongPassword = await account('/account/password', {
      current_password: 'not the passphrase',
      new_password: 'second passphrase here',
    });
    expect(wrongPassword.status).toBe(400);
    const changed = await account('/account/password', {
      current_password: owner.password,
      new_password: 'second passphrase here',
    });
    expect(changed.status).toBe(200);
    expect(
      await service.services.accounts.verifyPassword(owner.email, 'second passphrase here'),
    ).not.toBeNull();
    await waitFor(() => r.received.length === 3);

    const newEmail = `moved-${dialect}@example.com`;
    const taken = await account('/account/email', { email: `other-${dialect}@example.com` });
    expect(taken.status).toBe(409);
    const moved = await account('/account/email', { email: newEmail });
    expect(moved.status).toBe(200);
    expect(await moved.json()).toEqual({ account_id: accountId, email: newEmail, security_events_queued: 1 });
    await waitFor(() => r.received.length === 4);

    const [, session, credential, claims] = r.received;
    for (const set of [session, credential, claims]) {
      expect(set?.error).toBeUndefined();
      expect(set?.payload).toMatchObject({ iss: service.config.auth_url, aud: r.url, sub_id: subject });
      expect(Object.keys(set?.payload?.events as object)).toHaveLength(1);
      expect(set?.payload?.sub).toBeUndefined();
    }
    expect(eventOf(session, SESSION_REVOKED)).toMatchObject({
      event_timestamp: expect.any(Number),
      initiating_entity: 'user',
    });
    expect(eventOf(credential, CREDENTIAL_CHANGE)).toMatchObject({
      credential_type: 'password',
      change_type: 'update',
    });
    expect(eventOf(claims, TOKEN_CLAIMS_CHANGE)).toMatchObject({
      claims: { email: newEmail },
    });
    // Each SET has its own jti; every one was delivered once.
    expect(new Set(r.received.map((s) => s.payload?.jti)).size).toBe(4);
  });

  it('retries with backoff when the receiver fails at first, with the same SET', async () => {
    const r = await receiver((attempt) => (attempt <= 2 ? 503 : 202));
    const { stream_id } = await createStream(r);
    expect(
      (await api('/ssf/verify', { method: 'POST', key: serviceKey, body: JSON.stringify({ stream_id }) }))
        .status,
    ).toBe(204);
    await waitFor(async () => {
      const row = await service.services.db
        .selectFrom('ssf_deliveries')
        .select('state')
        .where('stream_id', '=', stream_id)
        .executeTakeFirst();
      return row?.state === 'delivered';
    });
    expect(r.received).toHaveLength(3);
    expect(new Set(r.received.map((s) => s.token)).size).toBe(1);
    const row = await service.services.db
      .selectFrom('ssf_deliveries')
      .selectAll()
      .where('stream_id', '=', stream_id)
      .executeTakeFirstOrThrow();
    expect(row.attempts).toBe(3);
    expect(row.last_error).toBe('HTTP 503 invalid_request');
  });

  it('gives up at once on a SET the receiver refuses, and holds SETs of a paused stream', async () => {
    const refusing = await receiver(() => 400);
    const refused = await createStream(refusing);
    await api('/ssf/verify', {
      method: 'POST',
      key: serviceKey,
      body: JSON.stringify({ stream_id: refused.stream_id }),
    });
    await waitFor(async () => {
      const row = await service.services.db
        .selectFrom('ssf_deliveries')
        .select('state')
        .where('stream_id', '=', refused.stream_id)
        .executeTakeFirst();
      return row?.state === 'failed';
    });
    expect(refusing.received).toHaveLength(1);

    const paused = await receiver();
    const { stream_id } = await createStream(paused);
    const status = (body: unknown) =>
      api('/ssf/status', { method: 'POST', key: serviceKey, body: JSON.stringify(body) });
    expect(await (await status({ stream_id, status: 'paused', reason: 'maintenance' })).json()).toEqual({
      stream_id,
      status: 'paused',
      reason: 'maintenance',
    });
    await api('/ssf/verify', {
      method: 'POST',
      key: serviceKey,
      body: JSON.stringify({ stream_id, state: 'held' }),
    });
    const pending = await service.services.db
      .selectFrom('ssf_deliveries')
      .select('state')
      .where('stream_id', '=', stream_id)
      .execute();
    expect(pending).toEqual([{ state: 'pending' }]);
    expect((await status({ stream_id, status: 'enabled' })).status).toBe(200);
    await waitFor(() => paused.received.length === 1);

    // A disabled stream gets nothing and holds nothing: verifying it is refused.
    expect((await status({ stream_id: refused.stream_id, status: 'disabled' })).status).toBe(200);
    const disabled = await api('/ssf/verify', {
      method: 'POST',
      key: serviceKey,
      body: JSON.stringify({ stream_id: refused.stream_id }),
    });
    expect(disabled.status).toBe(403);
    expect(eventOf(paused.received[0], VERIFICATION)).toEqual({ state: 'held' });
  });
});

describe.each(dialects)('SSF transmitter outbox across a restart (%s)', (dialect) => {
  let database: TestDatabase;
  let receiver: LocalSetReceiver | undefined;
  let running: TestService | undefined;

  beforeAll(async () => {
    database = await createTestDatabase(dialect);
  });
  afterAll(async () => {
    await running?.close();
    await receiver?.close();
    await database?.drop();
  });

  const start = () =>
    startTestService(dialect, { 'auth.security_events.delivery.poll_interval_ms': 50 }, { database });

  it('delivers a SET queued before the process stopped, signed with the persisted key', async () => {
    running = await start();
    const { config } = running;
    receiver = await startSetReceiver(() => ({
      issuer: config.auth_url,
      jwksUri: `${(running as TestService).config.auth_url}/oauth/jwks`,
    }));
    const { account, key } = await running.services.accounts.create({
      email: `restart-${dialect}@example.com`,
    });
    const headers = { 'content-type': 'application/json', 'x-service-key': key.service_key };
    const created = await fetch(`${config.auth_url}/ssf/streams`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ delivery: { method: PUSH, endpoint_url: receiver.url } }),
    });
    const { stream_id } = (await created.json()) as { stream_id: string };
    // Paused, so the SET stays in the outbox while the process stops.
    await fetch(`${config.auth_url}/ssf/status`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ stream_id, status: 'paused' }),
    });
    const revoked = await fetch(`${config.public_api_url}/account/revoke-tokens`, {
      method: 'POST',
      headers,
      body: '{}',
    });
    expect(await revoked.json()).toMatchObject({ security_events_queued: 1 });
    await running.close();

    running = await start();
    const restarted = running.config;
    await fetch(`${restarted.auth_url}/ssf/status`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ stream_id, status: 'enabled' }),
    });
    await waitFor(() => (receiver as LocalSetReceiver).received.length === 1);
    const [set] = receiver.received;
    expect(set?.error).toBeUndefined();
    // Signed by the first process (its issuer: port 0 gives the restarted one another address),
    // verified against the keys the restarted process publishes: the same, kept in the database.
    expect(set?.payload?.iss).toBe(config.auth_url);
    expect(set?.payload?.sub_id).toEqual({ format: 'iss_sub', iss: config.auth_url, sub: account.id });
    expect(eventOf(set, SESSION_REVOKED)).toMatchObject({ initiating_entity: 'user' });
  });
});
