/**
 * Payment benchmarks (issue 9, section 5), the embedded facilitator without a chain:
 * - `measurePaymentPath`: the payment path alone, in this process, one payment after another (one
 *   core): decode the PAYMENT-SIGNATURE header, match the terms, verify the EIP-712 signature, reserve
 *   the nonce (insert), run a trivial handler, record the outcome, build the receipt - through
 *   `invokeOperation`, as the adapters call it. Payments are signed beforehand (signing is the
 *   payer's cost). Target: at least 500 verified payments per second, p99 printed.
 * - `measurePaidRest`: over REST, a paid operation against the same operation with payment off
 *   (a free twin of the same handler), sequential requests alternating between the two in one run
 *   against a service process (`bench/servers/paid.ts`). Target: p50 overhead at most 5 ms.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { sql } from 'kysely';
import { pino } from 'pino';
import { z } from 'zod';
import { openDatabase } from '../db/database.ts';
import { migrateToLatest } from '../db/migrate.ts';
import { loadConfig } from '../servers/config.ts';
import {
  type AnyOperation,
  CallContext,
  defineOperation,
  invokeCall,
  type OperationContext,
} from '../servers/operation.ts';
import { atomicUsdc } from '../servers/payments/networks.ts';
import { paymentRequired, requirementsFor } from '../servers/payments/requirements.ts';
import { createServices } from '../servers/services.ts';
import { resourceOf } from '../servers/sku-terms.ts';
import { newAccount, paymentHeader, signPayment } from '../test/helpers/x402-payer.ts';

export const BENCH_SKU = 'bench-echo';
export const BENCH_PAY_TO = '0x209693Bc6afc0C5328bA36FaF03C514EF312287C';

const EchoInput = z.strictObject({ text: z.string().min(1).max(100) });
const EchoOutput = z.object({ echo: z.string() });
const echo = async (_ctx: OperationContext, input: z.output<typeof EchoInput>) => ({ echo: input.text });

/** The paid echo and its free twin: the same input, output and handler, with and without payment. */
export const benchOperations: AnyOperation[] = [
  defineOperation({
    name: 'benchEcho',
    title: 'Echo (benchmark SKU)',
    description: 'Echoes its text for 0.01 USDC.',
    input: EchoInput,
    output: EchoOutput,
    annotations: { readOnlyHint: true },
    access: 'paid',
    http: { surface: 'site', method: 'POST', path: `/api/public/x402/${BENCH_SKU}`, input: 'body' },
    mcp: ['public'],
    sku: { id: BENCH_SKU, example: { text: 'hello' }, usdc: 0.01 },
    handler: echo,
  }),
  defineOperation({
    name: 'benchEchoFree',
    title: 'Echo (benchmark, free)',
    description: 'The paid echo with payment switched off.',
    input: EchoInput,
    output: EchoOutput,
    annotations: { readOnlyHint: true },
    access: 'public',
    http: { surface: 'site', method: 'POST', path: `/bench/${BENCH_SKU}`, input: 'body' },
    handler: echo,
  }),
];

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] as number;

/** PAYMENT-SIGNATURE headers of `count` distinct payments for the bench SKU, signed by a few payers. */
async function signedHeaders(terms: PaymentRequired, count: number): Promise<string[]> {
  const payers = Array.from({ length: 8 }, newAccount);
  const accepted = terms.accepts[0] as PaymentRequirements;
  const headers: string[] = [];
  for (let i = 0; i < count; i++) {
    headers.push(
      paymentHeader(await signPayment(payers[i % payers.length] as never, accepted, terms.resource)),
    );
  }
  return headers;
}

export interface PaymentPathResult {
  payments: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  dialect: string;
  concurrency: number;
}

/**
 * `concurrency` payments in flight at once (default 1: one after another). SQLite's driver is
 * synchronous, so only PostgreSQL gains from more: its commits overlap.
 */
export async function measurePaymentPath(
  count = 3000,
  databaseUrl?: string,
  concurrency = 1,
): Promise<PaymentPathResult> {
  const dir = mkdtempSync(path.join(tmpdir(), 'agent-service-bench-payments-'));
  const config = loadConfig({
    env: {},
    overrides: { 'payments.pay_to': BENCH_PAY_TO, data_dir: dir, database_url: databaseUrl ?? null },
  });
  // PostgreSQL: a schema of its own, dropped afterwards (as bench/traffic.ts does).
  const schema = databaseUrl ? `bench_${randomUUID().slice(0, 8)}` : undefined;
  if (databaseUrl && schema) {
    const admin = openDatabase({ url: databaseUrl });
    await sql.raw(`create schema ${schema}`).execute(admin.db);
    await admin.close();
  }
  const database = openDatabase({
    url: databaseUrl,
    sqliteFile: path.join(dir, 'service.db'),
    poolSize: Math.max(4, concurrency),
    ...(schema ? { schema } : {}),
  });
  const log = pino({ level: 'silent' });
  try {
    await migrateToLatest(database.db);
    const services = await createServices({ config, database, log });
    const op = benchOperations[0] as AnyOperation;
    const requirements = requirementsFor(config, atomicUsdc(0.01)) as PaymentRequirements;
    const terms = paymentRequired(requirements, resourceOf(config, op, 'rest'), 'bench', {});
    const headers = await signedHeaders(terms, count + 200);
    const context = () =>
      new CallContext(
        {
          services,
          operations: benchOperations,
          request: { id: 'bench', ip: '127.0.0.1', via: 'rest', headers: {} },
          signal: new AbortController().signal,
        },
        () => log,
      );
    const pay = async (header: string) => {
      const { paid } = await invokeCall(
        op,
        context(),
        { text: 'bench' },
        {
          transport: 'http',
          header: 'PAYMENT-SIGNATURE',
          value: header,
        },
      );
      if (paid?.receipt.status !== 'authorized') throw new Error('payment not authorized');
    };
    for (const header of headers.slice(count)) await pay(header); // warm-up
    const times: number[] = [];
    const queue = headers.slice(0, count);
    const started = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        for (let header = queue.shift(); header !== undefined; header = queue.shift()) {
          const t = performance.now();
          await pay(header);
          times.push(performance.now() - t);
        }
      }),
    );
    const elapsed = performance.now() - started;
    await services.stop();
    times.sort((a, b) => a - b);
    return {
      payments: count,
      perSecond: (count / elapsed) * 1000,
      p50Ms: percentile(times, 50),
      p99Ms: percentile(times, 99),
      dialect: database.dialect,
      concurrency,
    };
  } finally {
    await database.close();
    if (databaseUrl && schema) {
      const admin = openDatabase({ url: databaseUrl });
      await sql.raw(`drop schema ${schema} cascade`).execute(admin.db);
      await admin.close();
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface PaidRestResult {
  requests: number;
  paidP50Ms: number;
  freeP50Ms: number;
  paidP99Ms: number;
  freeP99Ms: number;
  overheadP50Ms: number;
}

/** Sequential requests on one keep-alive connection, paid and free alternating. */
export async function measurePaidRest(serviceUrl: string, count = 1500): Promise<PaidRestResult> {
  const paidUrl = `${serviceUrl}/api/public/x402/${BENCH_SKU}`;
  const freeUrl = `${serviceUrl}/bench/${BENCH_SKU}`;
  const body = JSON.stringify({ text: 'bench' });
  const post = (url: string, headers: Record<string, string> = {}) =>
    fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  const unpaid = await post(paidUrl);
  const required = unpaid.headers.get('payment-required');
  if (unpaid.status !== 402 || !required) throw new Error(`bench SKU answered ${unpaid.status}`);
  const terms = JSON.parse(Buffer.from(required, 'base64').toString('utf8')) as PaymentRequired;
  const headers = await signedHeaders(terms, count + 200);
  const timed = async (url: string, header?: string) => {
    const t = performance.now();
    const res = await post(url, header ? { 'PAYMENT-SIGNATURE': header } : {});
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`${url} answered ${res.status}`);
    return performance.now() - t;
  };
  for (const header of headers.slice(count)) {
    await timed(paidUrl, header);
    await timed(freeUrl);
  }
  const paid: number[] = [];
  const free: number[] = [];
  for (const header of headers.slice(0, count)) {
    paid.push(await timed(paidUrl, header));
    free.push(await timed(freeUrl));
  }
  paid.sort((a, b) => a - b);
  free.sort((a, b) => a - b);
  return {
    requests: count,
    paidP50Ms: percentile(paid, 50),
    freeP50Ms: percentile(free, 50),
    paidP99Ms: percentile(paid, 99),
    freeP99Ms: percentile(free, 99),
    overheadP50Ms: percentile(paid, 50) - percentile(free, 50),
  };
}
