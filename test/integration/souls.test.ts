/**
 * Souls over real HTTP, once per dialect (issue 11): keys made with jose (Ed25519 and P-256)
 * register through the challenge, are read back (document, registry, GET /agents, public MCP tools),
 * write with their own short JWTs and with OAuth access tokens of a linked account (a real code flow),
 * rotate, retire. Every refusal the issue names is exercised. The memory log is checked by a reader
 * written from the client check of docs/guides/souls.md (test/helpers/soul-log-check.ts, not the service's code),
 * which also catches a tampered row; soul-log-attacks.test.ts runs the attacks on the signatures.
 * soul-write is bought with the stock @x402/fetch client.
 */
import { createHash, randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { decodePaymentResponseHeader } from '@x402/core/http';
import { calculateJwkThumbprint, calculateJwkThumbprintUri, exportJWK, generateKeyPair } from 'jose';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/databases.ts';
import { authorizeInBrowser, type OwnerCredentials } from '../helpers/oauth.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { type JwtOptions, newKey, SoulClient, send, signText, type TestKey } from '../helpers/soul-client.ts';
import { checkSoulLog } from '../helpers/soul-log-check.ts';
import {
  newAccount,
  payingFetch,
  paymentHeader,
  paymentRequiredOf,
  signPayment,
} from '../helpers/x402-payer.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are checked field by field
type Json = any;

const insecure = { [oauth.allowInsecureRequests]: true };
const redirectUri = 'http://127.0.0.1:7777/callback';

describe.each(dialects)('souls (%s)', (dialect) => {
  let service: TestService;
  let site: string;
  let api: string;
  let soulApi: string;
  let agent: SoulClient;
  const payTo = newAccount().address;
  const owner: OwnerCredentials = {
    email: 'soul-owner@example.com',
    password: 'correct horse battery staple',
  };
  const other: OwnerCredentials = { email: 'someone-else@example.com', password: 'another long passphrase' };
  let as: oauth.AuthorizationServer;
  let client: oauth.Client;

  beforeAll(async () => {
    service = await startTestService(dialect, {
      'rate_limits.unauthenticated_writes.points': 1000,
      'payments.pay_to': payTo,
    });
    site = service.config.site_url;
    api = service.config.public_api_url;
    soulApi = `${site}/api/soul`;
    agent = new SoulClient(service.config);
    await service.services.accounts.create(owner);
    await service.services.accounts.create(other);
    const issuer = new URL(service.config.auth_url);
    as = await oauth.processDiscoveryResponse(
      issuer,
      await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }),
    );
    const registered = await oauth.processDynamicClientRegistrationResponse(
      await oauth.dynamicClientRegistrationRequest(
        as,
        { client_name: 'Soul test client', redirect_uris: [redirectUri], token_endpoint_auth_method: 'none' },
        insecure,
      ),
    );
    client = { client_id: registered.client_id, token_endpoint_auth_method: 'none' };
  });
  afterAll(async () => {
    await service?.close();
  });

  /** An access token for the public API (resource = public_api_url) through the code flow. */
  async function accessToken(who: OwnerCredentials): Promise<string> {
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const url = new URL(as.authorization_endpoint as string);
    url.search = new URLSearchParams({
      client_id: client.client_id,
      redirect_uri: redirectUri,
      response_type: 'code',
      scope: 'agent-service',
      state,
      resource: api,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    }).toString();
    const flow = await authorizeInBrowser(url.href, who);
    const params = oauth.validateAuthResponse(as, client, flow.redirect, state);
    const response = await oauth.authorizationCodeGrantRequest(
      as,
      client,
      oauth.None(),
      params,
      redirectUri,
      verifier,
      { additionalParameters: { resource: api }, ...insecure },
    );
    return (await oauth.processAuthorizationCodeResponse(as, client, response)).access_token;
  }

  async function challengeFor(key: TestKey): Promise<string> {
    const res = await send('POST', `${api}/soul/challenge`, { public_key: key.publicJwk });
    expect(res.status).toBe(201);
    expect(Date.parse(res.body.expires_at) - Date.now()).toBeLessThanOrEqual(5 * 60_000);
    return res.body.challenge;
  }

  let handles = 0;
  async function register(key: TestKey, extra: Record<string, unknown> = {}, token?: string) {
    const challenge = await challengeFor(key);
    handles += 1;
    return send(
      'POST',
      `${soulApi}/agents`,
      {
        public_key: key.publicJwk,
        challenge,
        signature: await signText(key, challenge),
        handle: `agent-${dialect}-${handles}-${randomUUID().slice(0, 6)}`,
        name: `Test Agent ${handles}`,
        description: 'An agent that remembers.',
        endpoints: { mcp: 'https://agent.example.com/mcp', web: 'https://agent.example.com/' },
        ...extra,
      },
      token,
    );
  }

  const soulJwt = (key: TestKey, agentId: string, options?: JwtOptions) =>
    agent.soulJwt(key, agentId, options);
  const memoryJwt = (...args: Parameters<SoulClient['memoryJwt']>) => agent.memoryJwt(...args);
  const rotationJwt = (...args: Parameters<SoulClient['rotationJwt']>) => agent.rotationJwt(...args);
  const readLog = (agentId: string) => agent.readLog(agentId);
  const allMemories = (agentId: string) => agent.allMemories(agentId);

  it.each(['EdDSA', 'ES256'] as const)(
    'registers a %s key: agent_id is its RFC 9278 thumbprint URI',
    async (alg) => {
      const key = await newKey(alg);
      const res = await register(key, { operator: { name: 'Ops', email: 'ops@agent.example' } });
      expect(res.status).toBe(201);
      const agentId = await calculateJwkThumbprintUri(key.publicJwk, 'sha256');
      expect(res.body).toMatchObject({
        agent_id: agentId,
        status: 'active',
        linked_account: false,
        memory_counts: { episodic: 0, semantic: 0 },
        head: null,
        profile: { endpoints: { mcp: 'https://agent.example.com/mcp' }, operator: { name: 'Ops' } },
      });
      expect(res.body.keys).toHaveLength(1);
      expect(res.body.keys[0]).toMatchObject({ valid_until: null });
      expect(res.body.keys[0].jwk).toMatchObject({ kty: key.publicJwk.kty, x: key.publicJwk.x });

      const read = await send('GET', `${soulApi}/agents/${agentId}`);
      expect(read.status).toBe(200);
      expect(read.body).toEqual(res.body);
    },
  );

  it('refuses a replayed challenge, a signature by another key, a taken handle, a private key, bad handles', async () => {
    const key = await newKey('EdDSA');
    const challenge = await challengeFor(key);
    const body = {
      public_key: key.publicJwk,
      challenge,
      signature: await signText(key, challenge),
      handle: `replay-${dialect}`,
      name: 'Replay',
      description: 'Replays its challenge.',
    };
    expect((await send('POST', `${soulApi}/agents`, body)).status).toBe(201);
    const replay = await send('POST', `${soulApi}/agents`, { ...body, handle: `replay-two-${dialect}` });
    expect(replay.status).toBe(400);
    expect(replay.body.errors[0].field).toBe('challenge');

    const victim = await newKey('ES256');
    const intruder = await newKey('ES256');
    const c2 = await challengeFor(victim);
    const forged = await send('POST', `${soulApi}/agents`, {
      ...body,
      public_key: victim.publicJwk,
      challenge: c2,
      signature: await signText(intruder, c2),
      handle: `forged-${dialect}`,
    });
    expect(forged.status).toBe(400);
    expect(forged.body.errors[0].field).toBe('signature');
    // A challenge issued for another key cannot be answered by this one.
    const c3 = await challengeFor(victim);
    const crossed = await send('POST', `${soulApi}/agents`, {
      ...body,
      public_key: intruder.publicJwk,
      challenge: c3,
      signature: await signText(intruder, c3),
      handle: `crossed-${dialect}`,
    });
    expect(crossed.status).toBe(400);
    expect(crossed.body.errors[0].field).toBe('challenge');

    // Five minutes pass (the stored expiry is moved back): the challenge no longer registers.
    const late = await newKey('EdDSA');
    const c4 = await challengeFor(late);
    await service.db.handle.db
      .updateTable('soul_challenges')
      .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
      .where('challenge_hash', '=', createHash('sha256').update(c4).digest('hex'))
      .execute();
    const expired = await send('POST', `${soulApi}/agents`, {
      ...body,
      public_key: late.publicJwk,
      challenge: c4,
      signature: await signText(late, c4),
      handle: `late-${dialect}`,
    });
    expect(expired.status).toBe(400);
    expect(expired.body.errors[0].field).toBe('challenge');

    const taken = await register(await newKey('EdDSA'), { handle: `replay-${dialect}` });
    expect(taken.status).toBe(409);
    expect(taken.body.code).toBe('handle_taken');

    const upper = await register(await newKey('EdDSA'), { handle: 'Upper-Case' });
    expect(upper.status).toBe(400);
    expect(upper.body.errors[0].field).toBe('handle');

    const { privateKey } = await generateKeyPair('EdDSA', { extractable: true });
    const privateJwk = await exportJWK(privateKey);
    const leaked = await send('POST', `${api}/soul/challenge`, { public_key: privateJwk });
    expect(leaked.status).toBe(400);
    const rsa = await send('POST', `${api}/soul/challenge`, {
      public_key: { kty: 'RSA', n: 'AQAB', e: 'AQAB' },
    });
    expect(rsa.status).toBe(400);
  });

  it('lists souls in the registry, in GET /agents with kind soul, and serves the reads as public MCP tools', async () => {
    const key = await newKey('EdDSA');
    const marker = `zq${randomUUID().slice(0, 8)}`;
    const made = await register(key, { name: `Searchable ${marker}` });
    const agentId = made.body.agent_id;
    const search = await send('GET', `${api}/soul?q=${marker.toUpperCase()}`);
    expect(search.status).toBe(200);
    expect(search.body.souls).toEqual([
      expect.objectContaining({
        agent_id: agentId,
        name: `Searchable ${marker}`,
        url: `${soulApi}/agents/${agentId}`,
      }),
    ]);
    expect((await send('GET', `${api}/soul?q=${marker}%25`)).body.souls).toEqual([]);
    const byHandle = await send('GET', `${api}/soul?q=${made.body.handle}`);
    expect(byHandle.body.souls.map((s: Json) => s.agent_id)).toEqual([agentId]);

    // Newest first, cursor pages without repeats.
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: Json = await send('GET', `${api}/soul?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      seen.push(...page.body.souls.map((s: Json) => s.agent_id));
      cursor = page.body.next_cursor;
    } while (cursor);
    expect(seen[0]).toBe(agentId);
    expect(new Set(seen).size).toBe(seen.length);

    const agents = await send('GET', `${api}/agents?kind=soul`);
    expect(agents.body.agents[0]).toMatchObject({
      kind: 'soul',
      agent_id: agentId,
      handle: made.body.handle,
      endpoint: 'https://agent.example.com/mcp',
      protocols: ['mcp'],
    });
    const all = await send('GET', `${api}/agents`);
    expect(all.body.agents.some((a: Json) => a.agent_id === agentId)).toBe(true);
    // The directory's pages over souls hold the registry's souls, newest first, each once.
    const listed: string[] = [];
    cursor = null;
    do {
      const page: Json = await send('GET', `${api}/agents?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      listed.push(...page.body.agents.filter((a: Json) => a.kind === 'soul').map((a: Json) => a.agent_id));
      cursor = page.body.next_cursor;
    } while (cursor);
    expect(listed).toEqual(seen);

    const mcp = new Client({ name: 'souls-test', version: '1' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(service.config.mcp_url)));
    try {
      const doc = await mcp.callTool({ name: 'get_soul', arguments: { agent_id: agentId } });
      expect(doc.isError).toBeFalsy();
      expect(doc.structuredContent).toEqual((await send('GET', `${soulApi}/agents/${agentId}`)).body);
      const found = await mcp.callTool({ name: 'search_souls', arguments: { q: marker } });
      expect((found.structuredContent as Json).souls[0].agent_id).toBe(agentId);
      const file = await mcp.callTool({
        name: 'get_soul_erc8004_registration',
        arguments: { agent_id: agentId },
      });
      expect(file.structuredContent).toEqual(
        (await send('GET', `${soulApi}/agents/${agentId}/erc-8004`)).body,
      );
      const memories = await mcp.callTool({ name: 'list_soul_memories', arguments: { agent_id: agentId } });
      expect(memories.structuredContent).toEqual({ memories: [], next_cursor: null });
      const missing = await mcp.callTool({
        name: 'get_soul',
        arguments: { agent_id: `urn:ietf:params:oauth:jwk-thumbprint:sha-256:${'A'.repeat(43)}` },
      });
      expect(missing.isError).toBe(true);
    } finally {
      await mcp.close();
    }
  });

  it('writes with soul-signed JWTs and refuses replayed, expired, too long, wrong-key and other-soul tokens', async () => {
    const key = await newKey('ES256');
    const agentId = (await register(key)).body.agent_id;
    const otherKey = await newKey('EdDSA');
    const otherId = (await register(otherKey)).body.agent_id;
    const url = `${soulApi}/agents/${agentId}/memories`;
    const memory = { content: 'Met the user.', layer: 'episodic' };

    const none = await send('POST', url, memory);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer /);

    const token = await memoryJwt(key, agentId, memory);
    const ok = await send('POST', url, memory, token);
    expect(ok.status).toBe(201);
    expect(ok.body).toMatchObject({
      sequence: 1,
      previous_digest: null,
      writer: { kind: 'soul', id: agentId },
      // The JWT that wrote it is its signature, named by the key's thumbprint.
      signature: {
        signer: 'soul',
        origin: 'writer',
        jws: token,
        kid: await calculateJwkThumbprint(key.publicJwk),
      },
    });

    const replayed = await send('POST', url, memory, token);
    expect(replayed.status).toBe(401);
    expect(replayed.headers.get('www-authenticate')).toContain('error="invalid_token"');
    // The jti is spent in the database: another process sharing it refuses the replay too.
    const second = await startTestService(dialect, {}, { database: service.db, background: false });
    try {
      const elsewhere = await send(
        'POST',
        `${second.config.site_url}/api/soul/agents/${agentId}/memories`,
        memory,
        token,
      );
      expect(elsewhere.status).toBe(401);
    } finally {
      await second.close();
    }

    const now = Math.floor(Date.now() / 1000);
    const expired = await send(
      'POST',
      url,
      memory,
      await memoryJwt(key, agentId, memory, { iat: now - 400, exp: now - 100 }),
    );
    expect(expired.status).toBe(401);
    const tooLong = await send(
      'POST',
      url,
      memory,
      await memoryJwt(key, agentId, memory, { exp: now + 600 }),
    );
    expect(tooLong.status).toBe(401);
    const wrongAudience = await send(
      'POST',
      url,
      memory,
      await memoryJwt(key, agentId, memory, { aud: api }),
    );
    expect(wrongAudience.status).toBe(401);
    // iss names this soul, signed by another soul's key.
    const wrongKey = await send('POST', url, memory, await memoryJwt(otherKey, agentId, memory));
    expect(wrongKey.status).toBe(401);
    expect(wrongKey.headers.get('www-authenticate')).toContain('error="invalid_token"');
    // A valid token of another soul does not write here.
    const otherSoul = await send('POST', url, memory, await memoryJwt(otherKey, otherId, memory));
    expect(otherSoul.status).toBe(403);
    expect(otherSoul.headers.get('www-authenticate')).toContain('error="insufficient_scope"');

    const profile = await send(
      'POST',
      `${soulApi}/agents/${agentId}/profile`,
      { name: 'Renamed', endpoints: { a2a: 'https://agent.example.com/.well-known/agent-card.json' } },
      await soulJwt(key, agentId),
    );
    expect(profile.status).toBe(200);
    expect(profile.body.profile).toMatchObject({ name: 'Renamed', endpoints: { a2a: expect.any(String) } });

    const memories = await allMemories(agentId);
    expect(memories).toHaveLength(1);
  });

  it('rotates the key with both signatures: the old key stops working, the agent_id stays', async () => {
    const oldKey = await newKey('EdDSA');
    const agentId = (await register(oldKey)).body.agent_id;
    const newKeyPair = await newKey('ES256');
    const rotateUrl = `${soulApi}/agents/${agentId}/keys`;

    // Without the new key's proof, or with a proof by another key: refused.
    const stranger = await newKey('ES256');
    const badProof = await send(
      'POST',
      rotateUrl,
      { public_key: newKeyPair.publicJwk, proof: await soulJwt(stranger, agentId) },
      await rotationJwt(oldKey, agentId, newKeyPair),
    );
    expect(badProof.status).toBe(400);
    expect(badProof.body.errors[0].field).toBe('proof');

    const rotated = await send(
      'POST',
      rotateUrl,
      { public_key: newKeyPair.publicJwk, proof: await soulJwt(newKeyPair, agentId) },
      await rotationJwt(oldKey, agentId, newKeyPair),
    );
    expect(rotated.status).toBe(200);
    expect(rotated.body.agent_id).toBe(agentId);
    expect(rotated.body.keys).toHaveLength(2);
    expect(rotated.body.keys[0]).toMatchObject({
      valid_until: null,
      jwk: { kty: 'EC', x: newKeyPair.publicJwk.x },
    });
    expect(rotated.body.keys[1].valid_until).toEqual(expect.any(String));

    const url = `${soulApi}/agents/${agentId}/memories`;
    const byOld = await send(
      'POST',
      url,
      { content: 'old key' },
      await memoryJwt(oldKey, agentId, { content: 'old key' }),
    );
    expect(byOld.status).toBe(401);
    const byNew = await send(
      'POST',
      url,
      { content: 'new key', layer: 'semantic' },
      await memoryJwt(newKeyPair, agentId, { content: 'new key', layer: 'semantic' }),
    );
    expect(byNew.status).toBe(201);
    expect(byNew.body.layer).toBe('semantic');
    expect(byNew.body.signature.kid).toBe(await calculateJwkThumbprint(newKeyPair.publicJwk));
    // The new key is endorsed by the old one: the check follows the keys from the agent_id.
    const log = await readLog(agentId);
    expect(log.document.keys[0].endorsement).toMatchObject({
      signer: 'soul',
      origin: 'writer',
      kid: await calculateJwkThumbprint(oldKey.publicJwk),
    });
    expect(await checkSoulLog(log)).toBeNull();
  });

  it('keeps a hash chain a reader can verify, under concurrent appends, and detects a tampered row', async () => {
    const key = await newKey('ES256');
    const agentId = (await register(key)).body.agent_id;
    const url = `${soulApi}/agents/${agentId}/memories`;
    const writes = await Promise.all(
      Array.from({ length: 12 }, async (_, i) => {
        const body = {
          content: `entry ${i}`,
          layer: i % 3 === 0 ? 'semantic' : 'episodic',
          kind: i === 5 ? 'validation' : 'memory',
        };
        return send('POST', url, body, await memoryJwt(key, agentId, body));
      }),
    );
    expect(writes.map((w) => w.status)).toEqual(Array(12).fill(201));
    const log = await readLog(agentId);
    const { entries } = log;
    expect(entries.map((e) => e.sequence)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
    expect(await checkSoulLog(log)).toBeNull();

    const semantic = await send('GET', `${url}?layer=semantic`);
    expect(semantic.body.memories.every((m: Json) => m.layer === 'semantic')).toBe(true);
    expect(semantic.body.memories).toHaveLength(4);
    const doc = (await send('GET', `${soulApi}/agents/${agentId}`)).body;
    expect(doc.memory_counts).toEqual({ episodic: 8, semantic: 4 });
    expect(doc.head).toEqual({ sequence: 12, digest: entries[11].digest });
    expect(doc.validations.count).toBe(1);

    await service.db.handle.db
      .updateTable('soul_memories')
      .set({ content: 'rewritten history' })
      .where('agent_id', '=', agentId)
      .where('sequence', '=', 7)
      .execute();
    expect(await checkSoulLog(await readLog(agentId))).toBe('content of 7 changed');
    await service.db.handle.db
      .deleteFrom('soul_memories')
      .where('agent_id', '=', agentId)
      .where('sequence', '=', 7)
      .execute();
    expect(await checkSoulLog(await readLog(agentId))).toBe('gap at 7');
  });

  it('links a soul registered with an OAuth token to the account, which then writes; others are refused', async () => {
    const token = await accessToken(owner);
    const key = await newKey('EdDSA');
    const made = await register(key, {}, token);
    expect(made.status).toBe(201);
    expect(made.body.linked_account).toBe(true);
    const agentId = made.body.agent_id;
    const url = `${soulApi}/agents/${agentId}/memories`;

    const byAccount = await send('POST', url, { content: 'Written by my operator.' }, token);
    expect(byAccount.status).toBe(201);
    expect(byAccount.body.writer.kind).toBe('account');
    expect(byAccount.body.signature).toMatchObject({ signer: 'service', origin: 'writer' });
    expect(await checkSoulLog(await readLog(agentId))).toBeNull();

    const stranger = await accessToken(other);
    const refused = await send('POST', url, { content: 'Not mine.' }, stranger);
    expect(refused.status).toBe(403);
    expect(refused.headers.get('www-authenticate')).toContain('error="insufficient_scope"');

    // An unlinked soul does not take the account's token; rotation needs the soul's own key.
    const unlinked = (await register(await newKey('ES256'))).body.agent_id;
    expect(
      (await send('POST', `${soulApi}/agents/${unlinked}/memories`, { content: 'x' }, token)).status,
    ).toBe(403);
    const rotate = await send(
      'POST',
      `${soulApi}/agents/${agentId}/keys`,
      { public_key: (await newKey('ES256')).publicJwk, proof: 'a.b.c' },
      token,
    );
    expect(rotate.status).toBe(403);
    const garbage = await send('POST', url, { content: 'x' }, 'not.a.token');
    expect(garbage.status).toBe(401);

    const retired = await send('POST', `${soulApi}/agents/${agentId}/retire`, {}, token);
    expect(retired.status).toBe(200);
    expect(retired.body.status).toBe('retired');
    const after = await send(
      'POST',
      url,
      { content: 'too late' },
      await memoryJwt(key, agentId, { content: 'too late' }),
    );
    expect(after.status).toBe(409);
    expect(after.body.code).toBe('soul_retired');
  });

  it('sells soul-write: 404 or 400 before any 402, one memory per payment, written by the payer', async () => {
    const key = await newKey('EdDSA');
    const agentId = (await register(key)).body.agent_id;
    const skuUrl = `${site}/api/public/x402/soul-write`;
    const post = (body: unknown, f: typeof fetch = fetch) =>
      f(skuUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });

    const unknown = await post({
      agent_id: `urn:ietf:params:oauth:jwk-thumbprint:sha-256:${'B'.repeat(43)}`,
      content: 'x',
    });
    expect(unknown.status).toBe(404);
    const badLayer = await post({ agent_id: agentId, content: 'x', layer: 'procedural' });
    expect(badLayer.status).toBe(400);
    const tooLong = await post({ agent_id: agentId, content: 'x'.repeat(8001) });
    expect(tooLong.status).toBe(400);
    expect((await post({ agent_id: agentId, content: 'Reliable.' })).status).toBe(402);
    expect(await allMemories(agentId)).toHaveLength(0);

    const payer = newAccount();
    const paid = await post(
      { agent_id: agentId, content: 'Delivered on time.', layer: 'semantic' },
      payingFetch(payer),
    );
    expect(paid.status).toBe(200);
    const entry = (await paid.json()) as Json;
    expect(entry).toMatchObject({
      sequence: 1,
      kind: 'memory',
      layer: 'semantic',
      writer: { kind: 'payer', id: payer.address.toLowerCase() },
    });
    const receipt = decodePaymentResponseHeader(paid.headers.get('payment-response') as string) as Json;
    const rows = await service.db.handle.db
      .selectFrom('soul_memories')
      .selectAll()
      .where('payment_id', '=', receipt.id)
      .execute();
    expect(rows).toHaveLength(1);
    // A payer may attest to the soul's work: a validation, written by the payer.
    const second = await post(
      { agent_id: agentId, content: 'Again.', kind: 'validation' },
      payingFetch(payer),
    );
    expect(second.status).toBe(200);
    expect(await second.json()).toMatchObject({
      sequence: 2,
      kind: 'validation',
      writer: { kind: 'payer', id: payer.address.toLowerCase() },
    });

    // The same signed payment sent twice (and at once) pays for one entry: the replay gets the
    // stored result, not a second append.
    const body = { agent_id: agentId, content: 'Paid once.' };
    const required = paymentRequiredOf(await post(body));
    const header = paymentHeader(await signPayment(payer, required.accepts[0] as never, required.resource));
    const sendPaid = () =>
      fetch(skuUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'payment-signature': header },
        body: JSON.stringify(body),
      });
    const [a, b] = await Promise.all([sendPaid(), sendPaid()]);
    const c = await sendPaid();
    expect([a.status, b.status, c.status].filter((status) => status === 200).length).toBeGreaterThanOrEqual(
      1,
    );
    const log = await readLog(agentId);
    const { entries } = log;
    expect(entries.filter((e) => e.content === 'Paid once.')).toHaveLength(1);
    expect(entries).toHaveLength(3);
    expect(await checkSoulLog(log)).toBeNull();
    const doc = (await send('GET', `${soulApi}/agents/${agentId}`)).body;
    expect(doc.memory_counts).toEqual({ episodic: 2, semantic: 1 });
    expect(doc.validations).toMatchObject({ count: 1, latest: [{ content: 'Again.', kind: 'validation' }] });

    // Over MCP: an unknown soul is not_found, a known one asks for the payment.
    const mcp = new Client({ name: 'soul-writer', version: '1' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(service.config.mcp_url)));
    try {
      const missing = (await mcp.callTool({
        name: 'write_soul_memory',
        arguments: {
          agent_id: `urn:ietf:params:oauth:jwk-thumbprint:sha-256:${'C'.repeat(43)}`,
          content: 'x',
        },
      })) as Json;
      expect(missing.isError).toBe(true);
      expect(JSON.parse(missing.content[0].text)).toMatchObject({ code: 'not_found' });
      expect(missing.structuredContent?.x402Version).toBeUndefined();
      const unpaid = (await mcp.callTool({
        name: 'write_soul_memory',
        arguments: { agent_id: agentId, content: 'x' },
      })) as Json;
      expect(unpaid.isError).toBe(true);
      expect(unpaid.structuredContent).toMatchObject({
        x402Version: 2,
        accepts: [{ amount: '10000', payTo }],
      });
    } finally {
      await mcp.close();
    }

    await send('POST', `${soulApi}/agents/${agentId}/retire`, {}, await soulJwt(key, agentId));
    const retired = await post({ agent_id: agentId, content: 'x' });
    expect(retired.status).toBe(409);
  });

  it('serves the ERC-8004 registration file and links an identity proven by the owning wallet', async () => {
    const key = await newKey('ES256');
    const made = await register(key, { image: 'https://agent.example.com/avatar.png' });
    const agentId = made.body.agent_id;
    const fileUrl = made.body.urls.erc8004_registration;
    expect(fileUrl).toBe(`${soulApi}/agents/${agentId}/erc-8004`);

    const wallet = newAccount();
    const agentRegistry = 'eip155:8453:0x8004A169FB4a3325136EB29fA0ceB6D2e539a432';
    const message = `Link ERC-8004 agent 42 of ${agentRegistry} to soul ${agentId}`;
    const link = (signature: string) =>
      send(
        'POST',
        `${soulApi}/agents/${agentId}/registrations`,
        { agent_registry: agentRegistry, erc8004_agent_id: '42', owner: wallet.address, signature },
        undefined,
      );
    expect((await link(await wallet.signMessage({ message }))).status).toBe(401);

    const withToken = async (signature: string) =>
      send(
        'POST',
        `${soulApi}/agents/${agentId}/registrations`,
        { agent_registry: agentRegistry, erc8004_agent_id: '42', owner: wallet.address, signature },
        await soulJwt(key, agentId),
      );
    const forged = await withToken(await newAccount().signMessage({ message }));
    expect(forged.status).toBe(400);
    expect(forged.body.errors[0].field).toBe('signature');
    const linked = await withToken(await wallet.signMessage({ message }));
    expect(linked.status).toBe(201);
    expect(linked.body.registrations).toEqual([
      expect.objectContaining({
        agentRegistry: agentRegistry.toLowerCase().replace('eip155:8453:0x', 'eip155:8453:0x'),
        agentId: '42',
      }),
    ]);

    const file = await send('GET', fileUrl);
    expect(file.status).toBe(200);
    expect(file.body).toEqual({
      type: 'https://eips.ethereum.org/EIPS/eip-8004#registration-v1',
      name: made.body.profile.name,
      description: made.body.profile.description,
      image: 'https://agent.example.com/avatar.png',
      services: [
        { name: 'web', endpoint: 'https://agent.example.com/' },
        { name: 'MCP', endpoint: 'https://agent.example.com/mcp', version: '2025-11-25' },
        { name: 'soul', endpoint: `${soulApi}/agents/${agentId}` },
        { name: 'agentWallet', endpoint: `eip155:8453:${wallet.address.toLowerCase()}` },
      ],
      x402Support: true,
      active: true,
      registrations: [{ agentId: 42, agentRegistry: agentRegistry.toLowerCase() }],
      supportedTrust: [],
    });
  });
});
