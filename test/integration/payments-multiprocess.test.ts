/**
 * One authorization pays for one execution across processes: two service processes on one
 * database receive 20 concurrent copies of one payment; the reservation is the database's unique
 * constraint, not a lock in either process, so exactly one execution happens.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestDatabase, dialects, type TestDatabase } from '../helpers/databases.ts';
import { TEST_SKU } from '../helpers/paid-operations.ts';
import { type ServiceProcess, spawnService } from '../helpers/process.ts';
import { newAccount, paymentHeader, paymentRequiredOf, stockClient } from '../helpers/x402-payer.ts';

// Real child processes start slowly on a loaded machine: room to start, never a timing assertion.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

// biome-ignore lint/suspicious/noExplicitAny: response bodies are checked structurally
type Json = Record<string, any>;

describe.each(dialects)('x402 payments across processes (%s)', (dialect) => {
  let db: TestDatabase;
  let processes: ServiceProcess[] = [];

  beforeAll(async () => {
    db = await createTestDatabase(dialect);
    // One published URL for both, as behind a load balancer: a payment names the resource it was
    // made for, {site_url}/api/public/x402/<sku>, which both processes sell.
    const env = { ...db.env, PAY_TO: newAccount().address, SITE_URL: 'http://127.0.0.1:9' };
    processes = await Promise.all([
      spawnService(env, 'test/helpers/paid-service-main.ts'),
      spawnService(env, 'test/helpers/paid-service-main.ts'),
    ]);
  });
  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop()));
    await db?.drop();
  });

  it('runs one execution for 20 concurrent copies of a payment sent to two processes', async () => {
    const post = (process: ServiceProcess, body: unknown, headers: Record<string, string> = {}) =>
      fetch(`${process.url}/api/public/x402/${TEST_SKU}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });
    const body = { text: 'two processes', delay_ms: 300 };
    const [first, second] = processes as [ServiceProcess, ServiceProcess];
    const payer = newAccount();
    const payload = await stockClient(payer).createPaymentPayload(paymentRequiredOf(await post(first, body)));
    const header = { 'PAYMENT-SIGNATURE': paymentHeader(payload) };
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) => post(i % 2 ? second : first, body, header)),
    );
    const answers = await Promise.all(
      responses.map(async (r) => ({ status: r.status, body: (await r.json()) as Json })),
    );
    const ok = answers.filter((a) => a.status === 200);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    expect(new Set(ok.map((a) => a.body.execution)).size).toBe(1);
    for (const refused of answers.filter((a) => a.status !== 200)) {
      expect(refused).toMatchObject({ status: 402, body: { code: 'payment_already_used' } });
    }
    // Both processes answer later copies with the one stored result.
    for (const process of processes) {
      const again = await post(process, body, header);
      expect(again.status).toBe(200);
      expect(((await again.json()) as Json).execution).toBe(ok[0]?.body.execution);
    }
    const rows = await db.handle.db
      .selectFrom('payments')
      .select(['status'])
      .where('payer', '=', payer.address.toLowerCase())
      .execute();
    expect(rows).toEqual([{ status: 'authorized' }]);
  });
});
