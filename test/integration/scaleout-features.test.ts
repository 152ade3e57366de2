/**
 * Every feature that keeps state between requests, driven across three service processes on one
 * database behind one front address (issue 15 section 1), on both dialects: the featured auction
 * (two equal bids paid on two processes at once: one holds the slot, the other is refused and not
 * charged), the per-address write limit and an anonymous session's scan quota (counted across
 * processes), the return delivery outbox and the scan queue (each item worked once, whichever
 * process claims it), the OAuth flow with its requests spread over the processes, and souls'
 * single-use challenges and token ids.
 */
import { createHash } from 'node:crypto';
import { CompactSign, exportJWK, generateKeyPair, SignJWT } from 'jose';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { upsertBrandChannel } from '../../servers/features/returns/repository.ts';
import { SecretBox } from '../../servers/secrets.ts';
import { type LocalChain, startLocalChain, USDC } from '../helpers/chain.ts';
import { createTestDatabase, dialects, type TestDatabase } from '../helpers/databases.ts';
import { type FixtureSite, startFixtureSite } from '../helpers/fixture-sites.ts';
import { type FrontProxy, startFrontProxy } from '../helpers/front-proxy.ts';
import { mcpInitializeStatus, OwnerTokenClient } from '../helpers/oauth.ts';
import { type ServiceProcess, spawnService } from '../helpers/process.ts';
import { startWebhookReceiver, type WebhookReceiver, waitFor } from '../helpers/receivers.ts';
import { payingFetch } from '../helpers/x402-payer.ts';

// Real child processes start slowly on a loaded machine: room to start, never a timing assertion.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 180_000 });

// biome-ignore lint/suspicious/noExplicitAny: response bodies are checked structurally
type Json = Record<string, any>;

const WRITES_PER_MINUTE = 4;

describe.each(dialects)('stateful features across three processes behind one front (%s)', (dialect) => {
  let db: TestDatabase;
  let front: FrontProxy;
  let chain: LocalChain;
  let receiver: WebhookReceiver;
  let fixture: FixtureSite;
  let processes: ServiceProcess[] = [];
  let nextAddress = 10;

  /** A client address of its own (X-Forwarded-For, trusted from the loopback front): its own write budget. */
  const client = () => ({ 'x-forwarded-for': `198.51.100.${nextAddress++}` });
  const all = () => front.rotate(processes.map((p) => p.url));
  const on = (i: number) => front.route((processes[i] as ServiceProcess).url);

  beforeAll(async () => {
    [db, front, chain, receiver, fixture] = await Promise.all([
      createTestDatabase(dialect),
      startFrontProxy(),
      startLocalChain({ payerUsdc: 0n }),
      startWebhookReceiver(() => 200),
      startFixtureSite('bare'),
    ]);
    await upsertBrandChannel(
      db.handle.db,
      new SecretBox(null),
      {
        brand_domain: 'scaleout-brand.example',
        webhook_url: receiver.url,
        webhook_secret: receiver.secret,
        email: null,
      },
      new Date().toISOString(),
    );
    const env = {
      ...db.env,
      SITE_URL: front.url,
      TRUST_PROXY: 'loopback',
      PAY_TO: chain.accounts.payTo.address,
      PAYMENTS_RPC_URL: chain.rpcUrl,
      RATE_LIMIT_WRITES_PER_MINUTE: String(WRITES_PER_MINUTE),
      ANONYMOUS_SCAN_LIMIT: '2',
      OUTBOUND_ALLOW_PRIVATE: '1',
      SCAN_ALLOW_PRIVATE: '1',
      SCAN_DELAY_MS: '0',
      SCAN_MAX_PAGES: '3',
      DELIVERY_POLL_INTERVAL_MS: '50',
      DELIVERY_BASE_DELAY_MS: '100',
    };
    // One after the other: the first applies the migrations and makes the keys the others load.
    processes = [await spawnService(env)];
    processes.push(...(await Promise.all([spawnService(env), spawnService(env)])));
  });
  afterAll(async () => {
    await Promise.all(processes.filter((p) => p.child.exitCode === null).map((p) => p.kill()));
    await Promise.all([front?.close(), chain?.close(), receiver?.close(), fixture?.close()]);
    await db?.drop();
  });

  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${front.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });

  it('two equal featured bids paid on two processes at once: one holds the slot, the other is refused and not charged', async () => {
    const payers = await Promise.all([chain.newAccount(10n * USDC), chain.newAccount(10n * USDC)]);
    const bid = (i: number, domain: string) => {
      const pay = payingFetch(
        privateKeyToAccount((payers[i] as { privateKey: `0x${string}` }).privateKey),
        100,
      );
      return pay(`${front.url}/api/public/x402/featured-bid`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ domain, bid_usdc: 3 }),
      });
    };
    // Each bid's two requests (402, then paid) alternate over processes 0 and 1.
    front.rotate([processes[0] as ServiceProcess, processes[1] as ServiceProcess].map((p) => p.url));
    const answers = await Promise.all([bid(0, 'first-bidder.com'), bid(1, 'second-bidder.com')]);
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).toEqual([200, 409]);
    const refused = answers.find((a) => a.status === 409) as Response;
    expect(((await refused.json()) as Json).code).toBe('bid_too_low');

    on(2);
    const slot = (await (await fetch(`${front.url}/api/public/featured`)).json()) as Json;
    const winner = ((await (answers.find((a) => a.status === 200) as Response).json()) as Json).domain;
    expect(slot.holder.domain).toBe(winner);
    const payments = await db.handle.db.selectFrom('payments').select(['status', 'sku']).execute();
    const bids = payments.filter((p) => p.sku === 'featured-bid');
    // The refused bid's authorization was released: only the winner's payment stands.
    expect(
      bids.filter((p) => ['reserved', 'authorized', 'settled', 'reconciling'].includes(p.status)),
    ).toHaveLength(1);
  });

  // On SQLite the limits are counted in memory: one process per database file (docs/operations/scale-out.md).
  it.runIf(dialect === 'postgres')(
    'counts unauthenticated writes per client address across processes',
    async () => {
      all();
      const headers = client();
      const statuses: number[] = [];
      for (let i = 0; i < WRITES_PER_MINUTE + 2; i++) {
        const res = await post(
          '/cs/return',
          { brand_domain: 'limit-brand.example', name: 'A', contact: 'a@example.com' },
          headers,
        );
        statuses.push(res.status);
      }
      expect(statuses.slice(0, WRITES_PER_MINUTE)).toEqual(Array(WRITES_PER_MINUTE).fill(200));
      expect(statuses.slice(WRITES_PER_MINUTE)).toEqual([429, 429]);
      // Another address still has its budget, on any process.
      expect(
        (
          await post(
            '/cs/return',
            { brand_domain: 'limit-brand.example', name: 'B', contact: 'b@example.com' },
            client(),
          )
        ).status,
      ).toBe(200);
    },
  );

  it('delivers a return request once, whichever process claims it from the outbox', async () => {
    on(0);
    const res = await post(
      '/cs/return',
      { brand_domain: 'scaleout-brand.example', name: 'Jane Doe', contact: 'jane@example.com' },
      client(),
    );
    expect(res.status).toBe(200);
    const { request_id } = (await res.json()) as Json;
    await waitFor(() => receiver.processed.size === 1, 20_000);
    all();
    await waitFor(async () => {
      const status = (await (await fetch(`${front.url}/cs/status?request_id=${request_id}`)).json()) as Json;
      return status.status === 'delivered';
    }, 20_000);
    expect(new Set(receiver.requests.map((r) => r.id)).size).toBe(1);
    expect(receiver.processed.size).toBe(1);
  });

  it('spends an anonymous session’s scan quota across processes, and runs each scan once', async () => {
    all();
    const signup = await fetch(`${front.url}/auth/v1/signup`, { method: 'POST', headers: client() });
    expect(signup.status).toBe(201);
    const { access_token } = (await signup.json()) as Json;
    const auth = { authorization: `Bearer ${access_token}` };
    // A scan of a domain already running is joined, not repeated: each waits for the one before.
    const ids: string[] = [];
    const robotsReads: number[] = [];
    for (let i = 0; i < 2; i++) {
      const res = await post('/api/public/scans', { domain: fixture.domain, public: false }, auth);
      expect(res.status).toBe(202);
      const id = ((await res.json()) as Json).scan_id as string;
      ids.push(id);
      await waitFor(async () => {
        const row = await db.handle.db
          .selectFrom('scans')
          .select('status')
          .where('id', '=', id)
          .executeTakeFirst();
        return row?.status === 'done' || row?.status === 'failed';
      }, 40_000);
      robotsReads.push(fixture.requests.filter((r) => r.path === '/robots.txt').length);
    }
    expect(new Set(ids).size).toBe(2);
    const third = await post('/api/public/scans', { domain: fixture.domain, public: false }, auth);
    expect(third.status).toBe(403);
    expect(((await third.json()) as Json).code).toBe('anonymous_scan_limit_reached');

    // The second scan read robots.txt as often as the first: no scan was run by two processes.
    expect(robotsReads[0]).toBeGreaterThan(0);
    expect(robotsReads[1]).toBe(2 * (robotsReads[0] as number));
  });

  it('runs an OAuth code flow whose requests land on all three processes, and the owner MCP accepts the token anywhere', async () => {
    all();
    const email = `owner-${dialect}@scaleout.test`;
    const password = 'correct horse battery staple';
    expect((await post('/api/public/account', { email, password }, client())).status).toBe(201);
    const oauth = await OwnerTokenClient.register(`${front.url}/auth/v1`);
    const tokens = await oauth.tokens({ email, password }, `${front.url}/mcp/auth`);
    for (let i = 0; i < 3; i++) {
      on(i);
      expect(await mcpInitializeStatus(`${front.url}/mcp/auth`, tokens.access_token), `process ${i}`).toBe(
        200,
      );
    }
    // A refresh token rotated on one process cannot be reused on another.
    on(0);
    const refreshed = await oauth.refresh(tokens.refresh_token as string);
    on(1);
    await expect(oauth.refresh(tokens.refresh_token as string)).rejects.toThrow();
    expect(refreshed.access_token).toBeTruthy();
  });

  it('spends a soul challenge and a soul token id once across processes', async () => {
    const { publicKey, privateKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
    const public_key = await exportJWK(publicKey);
    on(0);
    const challengeRes = await post('/api/public/soul/challenge', { public_key }, client());
    expect(challengeRes.status).toBe(201);
    const { challenge } = (await challengeRes.json()) as Json;
    const signature = await new CompactSign(new TextEncoder().encode(challenge))
      .setProtectedHeader({ alg: 'EdDSA' })
      .sign(privateKey);
    const registration = {
      public_key,
      challenge,
      signature,
      handle: `scaleout-${dialect}`,
      name: 'Scale-out robot',
      description: 'Registered across processes.',
    };
    on(1);
    const registered = await post('/api/soul/agents', registration, client());
    expect(registered.status).toBe(201);
    const agentId = ((await registered.json()) as Json).agent_id as string;
    on(2);
    const again = await post(
      '/api/soul/agents',
      { ...registration, handle: `scaleout-again-${dialect}` },
      client(),
    );
    expect(again.status).toBeGreaterThanOrEqual(400);
    expect(again.status).toBeLessThan(500);

    // The memory claim signs what the first write records (docs/guides/souls.md); the others replay it.
    const memory = {
      content_digest: createHash('sha256').update('from process 0').digest('hex'),
      layer: 'episodic',
      kind: 'memory',
    };
    const token = await new SignJWT({ memory })
      .setProtectedHeader({ alg: 'EdDSA' })
      .setIssuer(agentId)
      .setAudience(`${front.url}/api/soul`)
      .setIssuedAt()
      .setExpirationTime('2m')
      .setJti(crypto.randomUUID())
      .sign(privateKey);
    const write = (i: number) => {
      on(i);
      return post(
        `/api/soul/agents/${encodeURIComponent(agentId)}/memories`,
        { content: `from process ${i}` },
        {
          authorization: `Bearer ${token}`,
        },
      );
    };
    expect((await write(0)).status).toBe(201);
    expect((await write(1)).status).toBe(401);
    expect((await write(2)).status).toBe(401);
    const memories = await db.handle.db
      .selectFrom('soul_memories')
      .select('content')
      .where('agent_id', '=', agentId)
      .execute();
    expect(memories.map((m) => m.content)).toEqual(['from process 0']);
  });
});
