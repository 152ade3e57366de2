/**
 * Three service processes on one database behind one front address (both dialects): a payment
 * made on one process and replayed on the two others runs nothing again (each answers the first
 * result), the metrics of any process show the deployment's one payment, and a paid call running
 * when its process gets SIGTERM completes before the process exits 0.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, dialects, type TestDatabase } from '../helpers/databases.ts';
import { type FrontProxy, startFrontProxy } from '../helpers/front-proxy.ts';
import { TEST_SKU } from '../helpers/paid-operations.ts';
import { type ServiceProcess, spawnService } from '../helpers/process.ts';
import { newAccount, paymentHeader, paymentRequiredOf, stockClient } from '../helpers/x402-payer.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are checked structurally
type Json = Record<string, any>;

describe.each(dialects)('three processes behind one front (%s)', (dialect) => {
  let db: TestDatabase;
  let front: FrontProxy;
  let processes: ServiceProcess[] = [];

  beforeAll(async () => {
    db = await createTestDatabase(dialect);
    front = await startFrontProxy();
    const env = { ...db.env, PAY_TO: newAccount().address, SITE_URL: front.url, METRICS_ENABLED: '1' };
    processes = await Promise.all(
      [0, 1, 2].map(() => spawnService(env, 'test/helpers/paid-service-main.ts')),
    );
  }, 120_000);
  afterAll(async () => {
    await Promise.all(processes.filter((p) => p.child.exitCode === null).map((p) => p.kill()));
    await front?.close();
    await db?.drop();
  });

  const on = (p: ServiceProcess | undefined) => front.route((p as ServiceProcess).url);
  const pay = (body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${front.url}/api/public/x402/${TEST_SKU}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });

  it('runs a payment once: replayed on the other two processes it answers the first result', async () => {
    const [a, b, c] = processes;
    const body = { text: 'three processes' };
    const payer = newAccount();
    on(a);
    const payload = await stockClient(payer).createPaymentPayload(paymentRequiredOf(await pay(body)));
    const header = { 'PAYMENT-SIGNATURE': paymentHeader(payload) };
    const first = await pay(body, header);
    expect(first.status).toBe(200);
    const execution = ((await first.json()) as Json).execution;
    for (const p of [b, c]) {
      on(p);
      const replay = await pay(body, header);
      expect(replay.status).toBe(200);
      expect(((await replay.json()) as Json).execution).toBe(execution);
    }
    const rows = await db.handle.db
      .selectFrom('payments')
      .select(['status'])
      .where('payer', '=', payer.address.toLowerCase())
      .execute();
    expect(rows).toHaveLength(1);

    // The ledger gauge is read from the database: process c reports the payment a took.
    on(c);
    const metrics = await (await fetch(`${front.url}/metrics`)).text();
    const status = rows[0]?.status as string;
    expect(metrics).toMatch(new RegExp(`^agent_service_payments\\{status="${status}",pid="\\d+"\\} 1$`, 'm'));
  });

  it('lets a paid call running at SIGTERM finish before the process exits 0', async () => {
    const c = processes[2] as ServiceProcess;
    on(c);
    const body = { text: 'in flight at SIGTERM', delay_ms: 1500 };
    const payload = await stockClient(newAccount()).createPaymentPayload(paymentRequiredOf(await pay(body)));
    const running = pay(body, { 'PAYMENT-SIGNATURE': paymentHeader(payload) });
    // The call is in flight (verified, before its handler's 1.5 s) once its payment is reserved.
    await expect
      .poll(async () => (await db.handle.db.selectFrom('payments').select('id').execute()).length, {
        timeout: 15_000,
      })
      .toBe(2);
    const exited = c.stop();
    const answer = await running;
    expect(answer.status).toBe(200);
    expect(((await answer.json()) as Json).echo).toBe('in flight at SIGTERM');
    expect(await exited).toBe(0);
  });
});
