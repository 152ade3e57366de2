/**
 * x402's payment-identifier extension (issue 31 item 4): a payer that lost an answer retries with a
 * new authorization carrying the same payment id and gets the first result, in any process - the
 * request runs once and only the first authorization is ever charged. Three service processes on one
 * database, the stock x402 client with the reference `appendPaymentIdentifierToExtensions`.
 */
import type { PaymentRequired } from '@x402/core/types';
import {
  appendPaymentIdentifierToExtensions,
  generatePaymentId,
  PAYMENT_IDENTIFIER,
} from '@x402/extensions/payment-identifier';
import type { LocalAccount } from 'viem';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestDatabase, dialects, type TestDatabase } from '../helpers/databases.ts';
import { TEST_SKU } from '../helpers/paid-operations.ts';
import { type ServiceProcess, spawnService } from '../helpers/process.ts';
import { newAccount, paymentHeader, paymentRequiredOf, stockClient } from '../helpers/x402-payer.ts';

// Real child processes start slowly on a loaded machine: room to start, never a timing assertion.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

// biome-ignore lint/suspicious/noExplicitAny: response bodies are checked structurally
type Json = Record<string, any>;

describe.each(dialects)('x402 payment-identifier across three processes (%s)', (dialect) => {
  let db: TestDatabase;
  let processes: ServiceProcess[] = [];

  beforeAll(async () => {
    db = await createTestDatabase(dialect);
    const env = { ...db.env, PAY_TO: newAccount().address, SITE_URL: 'http://127.0.0.1:9' };
    processes = await Promise.all(
      [0, 1, 2].map(() => spawnService(env, 'test/helpers/paid-service-main.ts')),
    );
  });
  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop()));
    await db?.drop();
  });

  const post = (process: ServiceProcess, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${process.url}/api/public/x402/${TEST_SKU}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });

  /** A new authorization (new nonce) of `payer` for `body`, carrying payment id `id` as the stock client sends it. */
  async function signed(payer: LocalAccount, body: unknown, id: string): Promise<Record<string, string>> {
    const required: PaymentRequired = paymentRequiredOf(await post(processes[0] as ServiceProcess, body));
    const client = stockClient(payer);
    client.onBeforePaymentCreation(async ({ paymentRequired }) => {
      paymentRequired.extensions ??= {};
      appendPaymentIdentifierToExtensions(paymentRequired.extensions, id);
    });
    const payload = await client.createPaymentPayload(required);
    expect((payload.extensions?.[PAYMENT_IDENTIFIER] as Json)?.info?.id).toBe(id);
    return { 'PAYMENT-SIGNATURE': paymentHeader(payload) };
  }

  const receiptOf = (res: Response): Json =>
    JSON.parse(Buffer.from(res.headers.get('payment-response') ?? '', 'base64').toString('utf8'));

  const paymentsOf = (payer: LocalAccount) =>
    db.handle.db
      .selectFrom('payments')
      .select(['id', 'status', 'payment_identifier'])
      .where('payer', '=', payer.address.toLowerCase())
      .execute();

  it('declares the extension in every 402, as the reference server does', async () => {
    const required = paymentRequiredOf(await post(processes[1] as ServiceProcess, { text: 'declared' }));
    expect(required.extensions?.[PAYMENT_IDENTIFIER]).toMatchObject({ info: { required: false } });
  });

  it('runs once for concurrent retries with new authorizations and one id, in three processes', async () => {
    const payer = newAccount();
    const id = generatePaymentId();
    const body = { text: 'retried across processes', delay_ms: 400 };
    // Nine retries, each a new authorization (new nonce) of the same payer with the same id.
    const headers = await Promise.all(Array.from({ length: 9 }, () => signed(payer, body, id)));
    const responses = await Promise.all(
      headers.map((header, i) => post(processes[i % 3] as ServiceProcess, body, header)),
    );
    const answers = await Promise.all(
      responses.map(async (r) => ({ status: r.status, body: (await r.json()) as Json })),
    );
    const ok = answers.filter((a) => a.status === 200);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    expect(new Set(ok.map((a) => a.body.execution)).size).toBe(1);
    for (const other of answers.filter((a) => a.status !== 200)) {
      expect(other).toMatchObject({ status: 409, body: { code: 'payment_identifier_conflict' } });
    }
    // One payment in the ledger: the retries' authorizations were never reserved, verified or settled.
    const rows = await paymentsOf(payer);
    expect(rows).toEqual([{ id: expect.any(String), status: 'authorized', payment_identifier: id }]);

    // Later retries, in every process: the first result and the first payment's receipt.
    for (const process of processes) {
      const again = await post(process, body, await signed(payer, body, id));
      expect(again.status).toBe(200);
      expect(((await again.json()) as Json).execution).toBe(ok[0]?.body.execution);
      expect(receiptOf(again)).toMatchObject({
        success: true,
        id: rows[0]?.id,
        payment_identifier: id,
        payer: payer.address.toLowerCase(),
      });
    }
    expect(await paymentsOf(payer)).toHaveLength(1);
  });

  it('refuses the id for another request (409) and a retry the payer did not sign (402)', async () => {
    const payer = newAccount();
    const id = generatePaymentId('order_');
    const body = { text: 'the first request' };
    const first = await post(processes[0] as ServiceProcess, body, await signed(payer, body, id));
    expect(first.status).toBe(200);
    expect(receiptOf(first).payment_identifier).toBe(id);

    const other = { text: 'another request' };
    const conflict = await post(processes[1] as ServiceProcess, other, await signed(payer, other, id));
    expect(conflict.status).toBe(409);
    expect(await conflict.json()).toMatchObject({ code: 'payment_identifier_conflict' });

    // Someone else's authorization rewritten to name the payer: the signature does not recover to it.
    const forgerHeader = await signed(newAccount(), body, id);
    const forged = JSON.parse(Buffer.from(forgerHeader['PAYMENT-SIGNATURE'] as string, 'base64').toString());
    forged.payload.authorization.from = payer.address;
    const refused = await post(processes[2] as ServiceProcess, body, {
      'PAYMENT-SIGNATURE': paymentHeader(forged),
    });
    expect(refused.status).toBe(402);
    expect(await refused.json()).toMatchObject({
      code: 'payment_invalid',
      errors: [{ field: 'PAYMENT-SIGNATURE.payload.signature' }],
    });

    // Another wallet's ids are its own: the same id from another payer is a new payment.
    const stranger = newAccount();
    const own = await post(processes[2] as ServiceProcess, other, await signed(stranger, other, id));
    expect(own.status).toBe(200);
    expect(await paymentsOf(payer)).toHaveLength(1);
  });

  it('lets a retry run when the first attempt failed and charged nothing', async () => {
    const payer = newAccount();
    const id = generatePaymentId();
    const failing = { text: 'fails first', fail: true };
    const failed = await post(processes[0] as ServiceProcess, failing, await signed(payer, failing, id));
    expect(failed.status).toBe(500);
    const fixed = { text: 'fails first' };
    const retried = await post(processes[1] as ServiceProcess, fixed, await signed(payer, fixed, id));
    expect(retried.status).toBe(200);
    expect(receiptOf(retried).payment_identifier).toBe(id);
    const rows = await paymentsOf(payer);
    expect(rows.map((r) => r.status).sort()).toEqual(['authorized', 'released']);
  });

  it('refuses a malformed id naming the field, before anything is reserved', async () => {
    const payer = newAccount();
    const body = { text: 'malformed id' };
    const required = paymentRequiredOf(await post(processes[0] as ServiceProcess, body));
    const client = stockClient(payer);
    client.onBeforePaymentCreation(async ({ paymentRequired }) => {
      (paymentRequired.extensions as Json)[PAYMENT_IDENTIFIER] = { info: { required: false, id: 'short' } };
    });
    const payload = await client.createPaymentPayload(required);
    const res = await post(processes[0] as ServiceProcess, body, {
      'PAYMENT-SIGNATURE': paymentHeader(payload),
    });
    expect(res.status).toBe(402);
    expect(await res.json()).toMatchObject({
      code: 'payment_invalid',
      errors: [{ field: `PAYMENT-SIGNATURE.extensions.${PAYMENT_IDENTIFIER}.info.id` }],
    });
    expect(await paymentsOf(payer)).toHaveLength(0);
  });
});
