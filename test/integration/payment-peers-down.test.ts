/**
 * A payment peer that is down or stalls (issue 15, section 2): while the remote facilitator, or the
 * chain the embedded facilitator verifies against, does not answer, a paid SKU answers 503
 * `service_unavailable` with Retry-After before asking for payment - no 402 the caller could not
 * complete - over REST and MCP, and a payment sent anyway runs nothing and charges nothing. Once the
 * peer answers again, the same service asks for payment and settles without a restart. The peers
 * are real (x402-facilitator.ts on the local chain of chain.ts); the test's own TCP proxy in front
 * of each cuts it (connections refused) or stalls it (accepted, never answered).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type LocalChain, startLocalChain, USDC } from '../helpers/chain.ts';
import { dialects } from '../helpers/databases.ts';
import { type EchoCounter, TEST_SKU, withTestSku } from '../helpers/paid-operations.ts';
import { waitFor } from '../helpers/receivers.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.ts';
import { startFacilitator, type TestFacilitator } from '../helpers/x402-facilitator.ts';
import { paymentHeader, paymentRequiredOf, stockClient } from '../helpers/x402-payer.ts';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });

// biome-ignore lint/suspicious/noExplicitAny: response bodies are checked structurally
type Json = Record<string, any>;

describe.each(dialects)('payment peers down (%s)', (dialect) => {
  let chain: LocalChain;
  let facilitator: TestFacilitator;
  const counter: EchoCounter = { runs: new Map() };

  beforeAll(async () => {
    chain = await startLocalChain({ payerUsdc: 0n });
    facilitator = await startFacilitator(chain);
  });
  afterAll(async () => {
    await facilitator?.close();
    await chain?.close();
  });

  const post = (service: TestService, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${service.config.site_url}/api/public/x402/${TEST_SKU}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
  const rows = (service: TestService, from: string) =>
    service.db.handle.db.selectFrom('payments').selectAll().where('payer', '=', from.toLowerCase()).execute();

  /** What a caller sees while the peer is away: a 503 problem, never a 402 to pay. */
  async function expectUnavailable(res: Response) {
    expect(res.status).toBe(503);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(res.headers.get('payment-required')).toBeNull();
    const problem = (await res.json()) as Json;
    expect(problem).toMatchObject({
      code: 'service_unavailable',
      status: 503,
      retry_after_s: Number(res.headers.get('retry-after')),
    });
    expect(JSON.stringify(problem)).not.toMatch(/ECONN|fetch failed|127\.0\.0\.1|timeout|accepts/i);
  }

  async function checkPeer(service: TestService, peer: TcpProxy, fault: 'cut' | 'stall', text: string) {
    const account = privateKeyToAccount((await chain.newAccount(USDC)).privateKey);
    // Signed while the peer answers, sent while it does not.
    const unpaid = await post(service, { text });
    expect(unpaid.status).toBe(402);
    const payload = await stockClient(account).createPaymentPayload(paymentRequiredOf(unpaid));
    const header = { 'PAYMENT-SIGNATURE': paymentHeader(payload) };

    await peer[fault]();
    try {
      // The last verdict that the peer answered is trusted for a few seconds; then every call is 503.
      await waitFor(async () => (await post(service, { text })).status === 503, 60_000);
      await expectUnavailable(await post(service, { text }));
      await expectUnavailable(await post(service, { text }, header));

      const client = new Client({ name: 'peer-down', version: '1' });
      await client.connect(new StreamableHTTPClientTransport(new URL(service.config.mcp_url)));
      try {
        const tool = (await client.callTool({ name: 'test_echo', arguments: { text } })) as Json;
        // A tool failure the model can read, not the PaymentRequired of a paid tool's 402.
        expect(tool.isError).toBe(true);
        expect(tool.structuredContent).toBeUndefined();
        // The wait rides in the body: an MCP client sees no Retry-After header.
        expect(JSON.parse(tool.content[0].text)).toEqual({
          code: 'service_unavailable',
          message: 'Service temporarily unavailable',
          retry_after_s: expect.any(Number),
        });
      } finally {
        await client.close();
      }
      expect(counter.runs.get(text)).toBeUndefined();
      expect(await rows(service, account.address)).toEqual([]);
    } finally {
      await peer.restore();
    }

    // Back without a restart: the same payment goes through, once.
    await waitFor(async () => (await post(service, { text: `${text}-probe` })).status === 402, 60_000);
    const paid = await post(service, { text }, header);
    expect(paid.status).toBe(200);
    expect(counter.runs.get(text)).toBe(1);
    await waitFor(async () => (await chain.balanceOf(account.address)) === USDC - USDC / 10n, 30_000);
  }

  describe('remote facilitator', () => {
    let proxy: TcpProxy;
    let service: TestService;
    beforeAll(async () => {
      const { port } = new URL(facilitator.url);
      proxy = await startTcpProxy({ host: '127.0.0.1', port: Number(port) });
      service = await startTestService(
        dialect,
        {
          'payments.pay_to': chain.accounts.payTo.address,
          'payments.facilitator_url': `http://127.0.0.1:${proxy.port}`,
          'payments.rpc_url': chain.rpcUrl,
          'payments.sync_wait_seconds': 10,
        },
        { operations: withTestSku(counter) },
      );
    });
    afterAll(async () => {
      await service?.close();
      await proxy?.close();
    });

    it('answers 503 before any 402 while the facilitator refuses connections, and pays once it is back', async () => {
      await checkPeer(service, proxy, 'cut', 'facilitator-cut');
    });

    it('answers 503 before any 402 while the facilitator accepts and never answers', async () => {
      await checkPeer(service, proxy, 'stall', 'facilitator-stalled');
    });
  });

  describe('embedded facilitator on a chain', () => {
    let proxy: TcpProxy;
    let service: TestService;
    beforeAll(async () => {
      const { port } = new URL(chain.rpcUrl);
      proxy = await startTcpProxy({ host: '127.0.0.1', port: Number(port) });
      service = await startTestService(
        dialect,
        {
          'payments.pay_to': chain.accounts.payTo.address,
          'payments.rpc_url': `http://127.0.0.1:${proxy.port}`,
          'payments.settler_private_key': chain.accounts.settler.privateKey,
          'payments.sync_wait_seconds': 10,
        },
        { operations: withTestSku(counter) },
      );
    });
    afterAll(async () => {
      await service?.close();
      await proxy?.close();
    });

    it('answers 503 before any 402 while the RPC is down, and settles once it is back', async () => {
      await checkPeer(service, proxy, 'cut', 'rpc-cut');
    });
  });
});
