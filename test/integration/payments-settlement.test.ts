/**
 * x402 payments that move money, on the local chain of test/helpers/chain.ts (chain id 8453, an
 * EIP-3009 USDC double at USDC's address): the embedded facilitator settling with the settler key,
 * the settler job settling payments recorded `authorized` while no chain was configured, and the
 * remote-facilitator mode against the real facilitator of test/helpers/x402-facilitator.ts -
 * including its refusals and the outcomes it leaves unknown, which the settler reconciles from the
 * chain. Balances move by exactly the price, once.
 */
import { decodePaymentResponseHeader } from '@x402/core/http';
import type { PaymentRequired } from '@x402/core/types';
import { type Hex, type LocalAccount, parseEventLogs } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalChain, startLocalChain, USDC } from '../helpers/chain.ts';
import { testUsdcAbi } from '../helpers/contracts/chain-contracts.generated.ts';
import { dialects } from '../helpers/databases.ts';
import { type EchoCounter, TEST_SKU, withTestSku } from '../helpers/paid-operations.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { startFacilitator, type TestFacilitator } from '../helpers/x402-facilitator.ts';
import { payingFetch, paymentHeader, paymentRequiredOf, stockClient } from '../helpers/x402-payer.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are checked structurally
type Json = Record<string, any>;

const PRICE = USDC / 10n; // 0.10 USDC, the test SKU's price

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe.each(dialects)('x402 settlement on a local chain (%s)', (dialect) => {
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

  const urlOf = (service: TestService) => `${service.config.site_url}/api/public/x402/${TEST_SKU}`;
  const post = (service: TestService, body: unknown, headers: Record<string, string> = {}) =>
    fetch(urlOf(service), {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
  const payer = async (usdc = USDC): Promise<LocalAccount> =>
    privateKeyToAccount((await chain.newAccount(usdc)).privateKey);
  const rowsOf = (service: TestService, from: string) =>
    service.db.handle.db.selectFrom('payments').selectAll().where('payer', '=', from.toLowerCase()).execute();
  /** Transfers of USDC to payTo recorded on chain for this payer. */
  const transfersFrom = async (from: string) => {
    const logs = await chain.client.getLogs({ address: chain.usdcAddress, fromBlock: 0n });
    return parseEventLogs({ abi: testUsdcAbi, logs, eventName: 'Transfer' }).filter(
      (log) => (log.args as { from: string }).from.toLowerCase() === from.toLowerCase(),
    );
  };

  describe('embedded facilitator with a settler key', () => {
    let service: TestService;
    beforeAll(async () => {
      service = await startTestService(
        dialect,
        {
          'payments.pay_to': chain.accounts.payTo.address,
          'payments.rpc_url': chain.rpcUrl,
          'payments.settler_private_key': chain.accounts.settler.privateKey,
          'payments.settler_poll_interval_ms': 100,
        },
        { operations: withTestSku(counter) },
      );
    });
    afterAll(() => service?.close());

    it('settles a payment of the stock client on chain: balances move by exactly the price', async () => {
      const account = await payer();
      const payToBefore = await chain.balanceOf(chain.accounts.payTo.address);
      const res = await payingFetch(account)(urlOf(service), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ text: 'settled' }),
      });
      expect(res.status).toBe(200);
      const receipt = decodePaymentResponseHeader(res.headers.get('payment-response') as string) as Json;
      expect(receipt).toMatchObject({ success: true, status: 'settled', network: 'eip155:8453' });
      expect(receipt.transaction).toMatch(/^0x[0-9a-f]{64}$/);
      const onChain = await chain.client.getTransactionReceipt({ hash: receipt.transaction as Hex });
      expect(onChain.status).toBe('success');
      expect(await chain.balanceOf(account.address)).toBe(USDC - PRICE);
      expect((await chain.balanceOf(chain.accounts.payTo.address)) - payToBefore).toBe(PRICE);
      const [row] = await rowsOf(service, account.address);
      expect(row).toMatchObject({ status: 'settled', transaction_hash: receipt.transaction });
      expect(row?.settled_at).not.toBeNull();
    });

    it('refuses a payer without the funds before running anything (the chain simulation)', async () => {
      const broke = await payer(0n);
      const unpaid = await post(service, { text: 'broke' });
      const payload = await stockClient(broke).createPaymentPayload(paymentRequiredOf(unpaid));
      const res = await post(service, { text: 'broke' }, { 'PAYMENT-SIGNATURE': paymentHeader(payload) });
      expect(res.status).toBe(402);
      expect(((await res.json()) as Json).code).toBe('payment_invalid');
      expect(paymentRequiredOf(res).error).toMatch(/insufficient/);
      expect(counter.runs.get('broke')).toBeUndefined();
      expect(await rowsOf(service, broke.address)).toEqual([]);
    });

    it('runs and settles once for 20 concurrent replays of one signature', async () => {
      const account = await payer();
      const body = { text: 'settled-concurrent', delay_ms: 200 };
      const payload = await stockClient(account).createPaymentPayload(
        paymentRequiredOf(await post(service, body)),
      );
      const header = { 'PAYMENT-SIGNATURE': paymentHeader(payload) };
      const responses = await Promise.all(Array.from({ length: 20 }, () => post(service, body, header)));
      expect(responses.filter((r) => r.status === 200).length).toBeGreaterThanOrEqual(1);
      for (const r of responses) expect([200, 402]).toContain(r.status);
      expect(counter.runs.get('settled-concurrent')).toBe(1);
      expect(await chain.balanceOf(account.address)).toBe(USDC - PRICE);
      expect(await transfersFrom(account.address)).toHaveLength(1);
      expect((await rowsOf(service, account.address)).map((r) => r.status)).toEqual(['settled']);
    });

    it('moves no money for a failing handler, and its authorization pays for the next request', async () => {
      const account = await payer();
      const payload = await stockClient(account).createPaymentPayload(
        paymentRequiredOf(await post(service, { text: 'settle-flaky', fail: true })),
      );
      const header = { 'PAYMENT-SIGNATURE': paymentHeader(payload) };
      expect((await post(service, { text: 'settle-flaky', fail: true }, header)).status).toBe(500);
      expect(await chain.balanceOf(account.address)).toBe(USDC);
      expect(
        await chain.authorizationState(
          account.address,
          (payload.payload as { authorization: { nonce: Hex } }).authorization.nonce,
        ),
      ).toBe(false);
      const retried = await post(service, { text: 'settle-flaky' }, header);
      expect(retried.status).toBe(200);
      expect(await chain.balanceOf(account.address)).toBe(USDC - PRICE);
    });

    it('credits the referral handle of a settled payment with its share', async () => {
      const api = service.config.public_api_url;
      const created = await fetch(`${api}/account`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          email: `ref-${dialect}@example.com`,
          password: 'correct horse battery staple',
        }),
      });
      const key = ((await created.json()) as Json).key.service_key as string;
      await fetch(`${api}/referral-handle`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-service-key': key },
        body: JSON.stringify({ handle: 'settled-ref' }),
      });
      const pay = payingFetch(await payer());
      for (const text of ['ref-1', 'ref-2']) {
        const res = await pay(`${urlOf(service)}?text=${text}&ref=settled-ref`);
        expect(res.status).toBe(200);
      }
      const balance = (await (await fetch(`${api}/referral-balance?handle=settled-ref`)).json()) as Json;
      expect(balance).toMatchObject({ handle: 'settled-ref', balance_usdc: 0.02, pending_usdc: 0, count: 2 });
    });
  });

  it('records payments authorized without a chain; the settler settles them once a chain and key are configured', async () => {
    const offline = await startTestService(
      dialect,
      { 'payments.pay_to': chain.accounts.payTo.address },
      { operations: withTestSku(counter), background: false },
    );
    const account = await payer();
    let paymentId: string;
    try {
      const res = await payingFetch(account)(`${urlOf(offline)}?text=later`);
      expect(res.status).toBe(200);
      const receipt = decodePaymentResponseHeader(res.headers.get('payment-response') as string) as Json;
      expect(receipt).toMatchObject({ status: 'authorized', transaction: '' });
      paymentId = receipt.id;
      expect(await chain.balanceOf(account.address)).toBe(USDC);
    } catch (err) {
      await offline.close();
      throw err;
    }
    // Another process on the same database, now with a chain and the settler key.
    const online = await startTestService(
      dialect,
      {
        'payments.pay_to': chain.accounts.payTo.address,
        'payments.rpc_url': chain.rpcUrl,
        'payments.settler_private_key': chain.accounts.settler.privateKey,
        'payments.settler_poll_interval_ms': 100,
      },
      { operations: withTestSku(counter), database: offline.db },
    );
    try {
      const receipt = await until(
        async () =>
          (await (await fetch(`${online.config.public_api_url}/payments/${paymentId}`)).json()) as Json,
        (r) => r.status === 'settled',
        'the settler',
      );
      expect(receipt.transaction).toMatch(/^0x[0-9a-f]{64}$/);
      expect(await chain.balanceOf(account.address)).toBe(USDC - PRICE);
      expect(counter.runs.get('later')).toBe(1);
    } finally {
      await online.close();
      await offline.close();
    }
  });

  describe('remote facilitator', () => {
    let service: TestService;
    beforeAll(async () => {
      service = await startTestService(
        dialect,
        {
          'payments.pay_to': chain.accounts.payTo.address,
          'payments.facilitator_url': facilitator.url,
          'payments.rpc_url': chain.rpcUrl,
          'payments.sync_wait_seconds': 2,
          'payments.settler_poll_interval_ms': 100,
        },
        { operations: withTestSku(counter) },
      );
    });
    afterAll(() => service?.close());

    const payOnce = async (account: LocalAccount, text: string) => {
      const required: PaymentRequired = paymentRequiredOf(await post(service, { text }));
      const payload = await stockClient(account).createPaymentPayload(required);
      return { payload, res: await post(service, { text }, { 'PAYMENT-SIGNATURE': paymentHeader(payload) }) };
    };

    it('verifies and settles through the facilitator: the money moves, the receipt names its transaction', async () => {
      const account = await payer();
      const calls = facilitator.requests.length;
      const res = await payingFetch(account)(`${urlOf(service)}?text=remote`);
      expect(res.status).toBe(200);
      const receipt = decodePaymentResponseHeader(res.headers.get('payment-response') as string) as Json;
      expect(receipt).toMatchObject({ status: 'settled', success: true });
      // Besides the probe that the facilitator answers (GET /supported, before any 402).
      const paying = facilitator.requests.slice(calls).filter((c) => c.path !== '/supported');
      expect(paying.map((c) => c.path)).toEqual(['/verify', '/settle']);
      expect(await chain.balanceOf(account.address)).toBe(USDC - PRICE);
      const [row] = await rowsOf(service, account.address);
      expect(row).toMatchObject({ facilitator: facilitator.url, status: 'settled' });
    });

    it('answers a refused settlement 402 without the result, moves nothing, records it failed', async () => {
      const account = await payer();
      facilitator.faults.settle = 'fail';
      try {
        const { res } = await payOnce(account, 'remote-refused');
        expect(res.status).toBe(402);
        const body = (await res.json()) as Json;
        expect(body.code).toBe('payment_settlement_failed');
        expect(body.echo).toBeUndefined();
        expect(decodePaymentResponseHeader(res.headers.get('payment-response') as string)).toMatchObject({
          success: false,
        });
      } finally {
        facilitator.faults.settle = undefined;
      }
      expect(counter.runs.get('remote-refused')).toBe(1);
      expect(await chain.balanceOf(account.address)).toBe(USDC);
      expect((await rowsOf(service, account.address)).map((r) => [r.status, r.result])).toEqual([
        ['failed', null],
      ]);
    });

    it('refuses what the facilitator finds invalid, and answers 503 when it cannot verify, running nothing', async () => {
      const account = await payer();
      facilitator.faults.verify = 'invalid';
      try {
        const { res } = await payOnce(account, 'remote-invalid');
        expect(res.status).toBe(402);
        expect(((await res.json()) as Json).code).toBe('payment_invalid');
      } finally {
        facilitator.faults.verify = undefined;
      }
      facilitator.faults.verify = 'error';
      try {
        const { res } = await payOnce(account, 'remote-invalid');
        expect(res.status).toBe(503);
        expect(((await res.json()) as Json).code).toBe('service_unavailable');
      } finally {
        facilitator.faults.verify = undefined;
      }
      expect(counter.runs.get('remote-invalid')).toBeUndefined();
      expect(await rowsOf(service, account.address)).toEqual([]);
    });

    it('delivers a settlement that timed out after settling as reconciling; the settler finds it settled on chain', async () => {
      const account = await payer();
      facilitator.faults.settle = 'hang-after-settle';
      let id: string;
      try {
        const { res } = await payOnce(account, 'remote-unknown');
        expect(res.status).toBe(200);
        expect(await res.json()).toMatchObject({ echo: 'remote-unknown' });
        const receipt = decodePaymentResponseHeader(res.headers.get('payment-response') as string) as Json;
        expect(receipt.status).toBe('reconciling');
        id = receipt.id;
      } finally {
        facilitator.faults.settle = undefined;
      }
      const receipt = await until(
        async () => (await (await fetch(`${service.config.public_api_url}/payments/${id}`)).json()) as Json,
        (r) => r.status === 'settled',
        'reconciliation',
      );
      expect(receipt.status).toBe('settled');
      expect(await chain.balanceOf(account.address)).toBe(USDC - PRICE);
      expect(await transfersFrom(account.address)).toHaveLength(1);
    });

    it('submits again a settlement that timed out before reaching the chain, once', async () => {
      const account = await payer();
      facilitator.faults.settle = 'hang';
      const settles = () => facilitator.requests.filter((c) => c.path === '/settle').length;
      const before = settles();
      // The request's settlement hangs; later ones (the settler's) go through.
      void until(
        async () => settles(),
        (n) => n > before,
        'the first settlement',
      ).then(() => {
        facilitator.faults.settle = undefined;
      });
      const { res, payload } = await payOnce(account, 'remote-lost');
      expect(res.status).toBe(200);
      const receipt = decodePaymentResponseHeader(res.headers.get('payment-response') as string) as Json;
      expect(receipt.status).toBe('reconciling');
      expect(
        await chain.authorizationState(
          account.address,
          (payload.payload as { authorization: { nonce: Hex } }).authorization.nonce,
        ),
      ).toBe(false);
      const settled = await until(
        async () =>
          (await (await fetch(`${service.config.public_api_url}/payments/${receipt.id}`)).json()) as Json,
        (r) => r.status === 'settled',
        'the settler',
      );
      expect(settled.transaction).toMatch(/^0x[0-9a-f]{64}$/);
      expect(await chain.balanceOf(account.address)).toBe(USDC - PRICE);
      expect(await transfersFrom(account.address)).toHaveLength(1);
      expect(counter.runs.get('remote-lost')).toBe(1);
    });
  });
});
