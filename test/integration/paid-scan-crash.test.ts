/**
 * The `scan` SKU's process killed with SIGKILL while its handler waits on the scan it queued (issue
 * 15, section 2), both dialects, with real processes: the service as `npm start` runs it pays through
 * the real facilitator of x402-facilitator.ts on the local chain of chain.ts, and scans a site on
 * loopback that accepts the scanner's requests and never answers, so the scan is still running
 * (under the dead process's lease) when the payer retries. The retry of the same payment must answer
 * the scan that payment bought - not queue a second one - with a read token that reads it, and the
 * payment is charged once.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LocalAccount } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type LocalChain, startLocalChain, USDC } from '../helpers/chain.ts';
import { createTestDatabase, dialects, type TestDatabase } from '../helpers/databases.ts';
import { type ServiceProcess, spawnService } from '../helpers/process.ts';
import { waitFor } from '../helpers/receivers.ts';
import { startFacilitator, type TestFacilitator } from '../helpers/x402-facilitator.ts';
import { paymentHeader, paymentRequiredOf, stockClient } from '../helpers/x402-payer.ts';

// Real child processes start slowly on a loaded machine: room to start, never a timing assertion.
vi.setConfig({ testTimeout: 180_000, hookTimeout: 120_000 });

// biome-ignore lint/suspicious/noExplicitAny: response bodies are checked structurally
type Json = Record<string, any>;

const PRICE = USDC / 10n; // the scan SKU's 0.10 USDC

describe.each(dialects)('a paid scan killed while it waits on its scan (%s)', (dialect) => {
  let chain: LocalChain;
  let facilitator: TestFacilitator;
  let db: TestDatabase;
  let stalled: Server;
  let siteRequests = 0;
  let domain: string;
  let env: Record<string, string>;
  let current: ServiceProcess;

  beforeAll(async () => {
    chain = await startLocalChain({ payerUsdc: 0n });
    facilitator = await startFacilitator(chain);
    db = await createTestDatabase(dialect);
    // Takes every request and answers none: the scan stays running until its lease runs out.
    stalled = createServer(() => {
      siteRequests += 1;
    });
    await new Promise<void>((resolve) => stalled.listen(0, '127.0.0.1', resolve));
    domain = `127.0.0.1:${(stalled.address() as AddressInfo).port}`;
    env = {
      ...db.env,
      PAY_TO: chain.accounts.payTo.address,
      // One published URL for every process, as behind a load balancer: a payment names the resource
      // it was made for, {site_url}/api/public/x402/<sku>, and the restarted process sells the same.
      SITE_URL: 'http://127.0.0.1:9',
      X402_FACILITATOR_URL: facilitator.url,
      PAYMENTS_RPC_URL: chain.rpcUrl,
      SCAN_ALLOW_PRIVATE: '1',
      // The handler waits this long on the scan: the kill lands within it, and the retry answers
      // 202 (the scan still running) once it has passed.
      PAYMENTS_SYNC_WAIT_SECONDS: '6',
      PAYMENTS_SETTLER_POLL_INTERVAL_MS: '200',
      PAYMENTS_RESERVATION_LEASE_SECONDS: '2',
    };
    current = await spawnService(env);
  });
  afterAll(async () => {
    if (current?.child.exitCode === null) await current.kill();
    stalled?.closeAllConnections();
    await new Promise<void>((resolve) => (stalled ? stalled.close(() => resolve()) : resolve()));
    await facilitator?.close();
    await chain?.close();
    await db?.drop();
  });

  const buy = (headers: Record<string, string> = {}) =>
    fetch(`${current.url}/api/public/x402/scan`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ domain, public: false }),
    });
  const scansOfDomain = () =>
    db.handle.db.selectFrom('scans').select(['id', 'status']).where('domain', '=', domain).execute();

  it('answers the retry of the same payment with the scan it bought, charged once', async () => {
    const account: LocalAccount = privateKeyToAccount((await chain.newAccount(USDC)).privateKey);
    const payload = await stockClient(account).createPaymentPayload(paymentRequiredOf(await buy()));
    const header = { 'PAYMENT-SIGNATURE': paymentHeader(payload) };
    const answer = buy(header).then(
      (res) => `answered ${res.status}`,
      () => 'no answer',
    );
    // Verified, reserved, the scan queued and claimed: the scanner is knocking on the stalled site.
    await waitFor(() => siteRequests > 0, 60_000);
    const [queued] = await scansOfDomain();
    expect(queued?.status).toBe('running');

    await current.kill();
    expect(await answer).toBe('no answer');
    current = await spawnService(env);

    // The dead process's reservation holds until its lease runs out; then the same payment runs again.
    let res: Response;
    for (;;) {
      res = await buy(header);
      if (res.status !== 402) break;
      expect(((await res.json()) as Json).code).toBe('payment_already_used');
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(res.status).toBe(202);
    const bought = (await res.json()) as Json;
    expect(bought.scan_id).toBe(queued?.id);
    expect(bought.status).toBe('running');
    expect(await scansOfDomain()).toHaveLength(1);
    // A new token (the first one was never handed out) that reads the scan; without it, nothing is
    // read: the answer is the sign-in-with-x challenge for the paying wallet (402 sign_in_required).
    expect(bought.read_token).toMatch(/^agsvc_scan_/);
    // The status URL is published on SITE_URL; this process answers it on its own port.
    const onThisProcess = (url: string) => url.replace('http://127.0.0.1:9', current.url);
    const read = await fetch(onThisProcess(bought.status_url));
    expect(read.status).toBe(200);
    expect(((await read.json()) as Json).scan_id).toBe(queued?.id);
    const bare = await fetch(onThisProcess(String(bought.status_url).split('?')[0] as string));
    expect(bare.status).toBe(402);
    const challenge = (await bare.json()) as Json;
    expect(challenge).toMatchObject({ code: 'sign_in_required' });
    expect(challenge).not.toHaveProperty('result');

    // Settled once; the payment sent once more replays this answer.
    await waitFor(async () => (await chain.balanceOf(account.address)) === USDC - PRICE, 60_000);
    const again = await buy(header);
    expect(again.status).toBe(202);
    expect(((await again.json()) as Json).read_token).toBe(bought.read_token);
    expect(await scansOfDomain()).toHaveLength(1);
    expect(await chain.balanceOf(account.address)).toBe(USDC - PRICE);
  });
});
