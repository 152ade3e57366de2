/**
 * A paid call's process killed with SIGKILL at each point of the x402 flow (issue 15, section 2),
 * both dialects: a real service process (the test SKU, its runs appended to a file that outlives
 * the process) pays through the real facilitator of x402-facilitator.ts, which settles on the local
 * chain of chain.ts. The kill lands while the handler runs (verified, nothing settled), while
 * settlement is in flight (the facilitator stalls before touching the chain), and after settlement
 * but before the reply (the facilitator settles on chain and stalls). A new process on the same
 * database then recovers the reservation the dead one left (its lease is not renewed: released, or
 * reconciled from the chain when the result was stored), the handler has completed at most once,
 * the money moved at most once, and the payer's retry of the same payment gets the first result.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { PaymentPayload } from '@x402/core/types';
import { type Hex, type LocalAccount, parseEventLogs } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type LocalChain, startLocalChain, USDC } from '../helpers/chain.ts';
import { testUsdcAbi } from '../helpers/contracts/chain-contracts.generated.ts';
import { createTestDatabase, dialects, type TestDatabase } from '../helpers/databases.ts';
import { runsLogged, TEST_SKU } from '../helpers/paid-operations.ts';
import { type ServiceProcess, spawnService } from '../helpers/process.ts';
import { waitFor } from '../helpers/receivers.ts';
import { type SettleFault, startFacilitator, type TestFacilitator } from '../helpers/x402-facilitator.ts';
import { paymentHeader, paymentRequiredOf, stockClient } from '../helpers/x402-payer.ts';

// Real child processes start slowly on a loaded machine: room to start, never a timing assertion.
vi.setConfig({ testTimeout: 180_000, hookTimeout: 120_000 });

// biome-ignore lint/suspicious/noExplicitAny: response bodies are checked structurally
type Json = Record<string, any>;

const PRICE = USDC / 10n; // 0.10 USDC, the test SKU's price

describe.each(dialects)('a paid call killed mid-flight (%s)', (dialect) => {
  let chain: LocalChain;
  let facilitator: TestFacilitator;
  let db: TestDatabase;
  let dir: string;
  let log: string;
  let env: Record<string, string>;
  /** The process serving now; each test kills it and leaves its successor for the next. */
  let current: ServiceProcess;

  beforeAll(async () => {
    chain = await startLocalChain({ payerUsdc: 0n });
    facilitator = await startFacilitator(chain);
    db = await createTestDatabase(dialect);
    dir = mkdtempSync(path.join(tmpdir(), 'agent-service-crash-'));
    log = path.join(dir, 'runs.log');
    env = {
      ...db.env,
      PAY_TO: chain.accounts.payTo.address,
      // One published URL for every process, as behind a load balancer: a payment names the resource
      // it was made for, {site_url}/api/public/x402/<sku>, and the restarted process sells the same.
      SITE_URL: 'http://127.0.0.1:9',
      X402_FACILITATOR_URL: facilitator.url,
      PAYMENTS_RPC_URL: chain.rpcUrl,
      // The kill lands long before the service would give up on a stalled facilitator.
      PAYMENTS_SYNC_WAIT_SECONDS: '60',
      PAYMENTS_SETTLER_POLL_INTERVAL_MS: '200',
      PAYMENTS_RESERVATION_LEASE_SECONDS: '2',
      TEST_ECHO_LOG: log,
    };
    current = await spawnService(env, 'test/helpers/paid-service-main.ts');
  });
  afterAll(async () => {
    if (current?.child.exitCode === null) await current.kill();
    await facilitator?.close();
    await chain?.close();
    await db?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  const post = (body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${current.url}/api/public/x402/${TEST_SKU}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
  const payer = async (): Promise<LocalAccount> =>
    privateKeyToAccount((await chain.newAccount(USDC)).privateKey);
  const transfersFrom = async (from: string) => {
    const logs = await chain.client.getLogs({ address: chain.usdcAddress, fromBlock: 0n });
    return parseEventLogs({ abi: testUsdcAbi, logs, eventName: 'Transfer' }).filter(
      (entry) => (entry.args as { from: string }).from.toLowerCase() === from.toLowerCase(),
    );
  };
  const ledger = (from: string) =>
    db.handle.db
      .selectFrom('payments')
      .select(['id', 'status'])
      .where('payer', '=', from.toLowerCase())
      .execute();
  const settleCallFor = (nonce: string) =>
    facilitator.requests.find(
      (call) =>
        call.path === '/settle' &&
        (call.body as { paymentPayload: PaymentPayload }).paymentPayload.payload.authorization !==
          undefined &&
        (
          (call.body as { paymentPayload: PaymentPayload }).paymentPayload.payload.authorization as {
            nonce: string;
          }
        ).nonce === nonce,
    );

  /** Signs a payment for `body`, sends it, and returns what the kill needs. */
  async function payInFlight(body: Json) {
    const account = await payer();
    const payload = await stockClient(account).createPaymentPayload(paymentRequiredOf(await post(body)));
    const header = { 'PAYMENT-SIGNATURE': paymentHeader(payload) };
    const nonce = (payload.payload as { authorization: { nonce: Hex } }).authorization.nonce;
    // The connection dies with the process: the payer never gets an answer.
    const answer = post(body, header).then(
      (res) => `answered ${res.status}`,
      () => 'no answer',
    );
    return { account, header, nonce, answer };
  }

  /** SIGKILL, then a new process on the same database. */
  async function killAndRestart(answer: Promise<string>) {
    await current.kill();
    expect(await answer).toBe('no answer');
    current = await spawnService(env, 'test/helpers/paid-service-main.ts');
  }

  /** The payer sends the same payment again until it gets an answer other than "still running". */
  async function retry(body: Json, header: Record<string, string>): Promise<Response> {
    for (;;) {
      const res = await post(body, header);
      if (res.status !== 402) return res;
      const problem = (await res.json()) as Json;
      // The dead process's reservation, until its lease runs out: come back after Retry-After.
      expect(problem.code).toBe('payment_already_used');
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  const receiptOf = async (id: string) =>
    (await (await fetch(`${current.url}/api/public/payments/${id}`)).json()) as Json;

  it('keeps the reservation of a call that runs longer than its lease: a replay meanwhile runs nothing', async () => {
    const body = { text: 'longer-than-lease', delay_ms: 8000 };
    const { header, answer } = await payInFlight(body);
    await waitFor(() => runsLogged(log, body.text).started === 1, 60_000);
    // Two leases (PAYMENTS_RESERVATION_LEASE_SECONDS=2) pass while the handler runs: the running
    // request renews its reservation, so neither the settler nor a replay takes it for abandoned.
    await new Promise((resolve) => setTimeout(resolve, 4500));
    const replay = await post(body, header);
    expect(replay.status).toBe(402);
    expect(((await replay.json()) as Json).code).toBe('payment_already_used');
    expect(replay.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await answer).toBe('answered 200');
    expect(runsLogged(log, body.text)).toMatchObject({ started: 1, ended: [expect.any(String)] });
  });

  it('killed while the handler runs: released, and the retry runs it to completion once, charged once', async () => {
    const body = { text: 'killed-in-handler', delay_ms: 1500 };
    const { account, header, answer } = await payInFlight(body);
    await waitFor(() => runsLogged(log, body.text).started === 1, 60_000);
    await killAndRestart(answer);
    expect(runsLogged(log, body.text)).toEqual({ started: 1, ended: [] });
    expect(await chain.balanceOf(account.address)).toBe(USDC);

    const res = await retry(body, header);
    expect(res.status).toBe(200);
    const first = (await res.json()) as Json;
    // The cut run delivered nothing; the retry's run is the one execution that completed.
    expect(runsLogged(log, body.text)).toEqual({ started: 2, ended: [first.execution] });
    const again = await post(body, header);
    expect(((await again.json()) as Json).execution).toBe(first.execution);
    expect(await transfersFrom(account.address)).toHaveLength(1);
    expect(await chain.balanceOf(account.address)).toBe(USDC - PRICE);
    expect((await ledger(account.address)).map((r) => r.status)).toEqual(['settled']);
  });

  const killedAtSettlement = async (fault: SettleFault, text: string) => {
    const body = { text };
    facilitator.faults.settle = fault;
    let inFlight: Awaited<ReturnType<typeof payInFlight>>;
    try {
      inFlight = await payInFlight(body);
      const { nonce } = inFlight;
      // The service asked the facilitator to settle, and (hang-after-settle) the chain has the transfer.
      await waitFor(() => {
        const call = settleCallFor(nonce);
        return fault === 'hang-after-settle' ? call?.result !== undefined : call !== undefined;
      }, 60_000);
      await killAndRestart(inFlight.answer);
    } finally {
      facilitator.faults.settle = undefined;
    }
    const { account, header } = inFlight;
    // The handler ran once, before the kill, and stored its result before settlement started.
    const logged = runsLogged(log, text);
    expect(logged.started).toBe(1);
    expect(logged.ended).toHaveLength(1);

    const res = await retry(body, header);
    expect(res.status).toBe(200);
    expect(((await res.json()) as Json).execution).toBe(logged.ended[0]);
    const [row] = await ledger(account.address);
    await waitFor(async () => (await receiptOf(row?.id as string)).status === 'settled', 60_000);
    const again = await post(body, header);
    expect(again.status).toBe(200);
    expect(((await again.json()) as Json).execution).toBe(logged.ended[0]);
    expect(runsLogged(log, text)).toEqual(logged);
    expect(await transfersFrom(account.address)).toHaveLength(1);
    expect(await chain.balanceOf(account.address)).toBe(USDC - PRICE);
    expect((await ledger(account.address)).map((r) => r.status)).toEqual(['settled']);
  };

  it('killed while settlement is in flight (nothing on chain yet): reconciled, settled once, the retry gets the first result', async () => {
    await killedAtSettlement('hang', 'killed-settling');
  });

  it('killed after settlement, before the reply: reconciled from the chain, the retry gets the first result', async () => {
    await killedAtSettlement('hang-after-settle', 'killed-before-reply');
  });
});
