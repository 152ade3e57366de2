/**
 * Test-only paid operations (no SKU of the catalog): an echo sold at the site's
 * /api/public/x402/test-echo for 0.10 USDC, which counts its executions, can be made slow (to
 * overlap concurrent requests) and can fail (to check that a failed request is not charged).
 * Served by passing `[...operations, ...testPaidOperations()]` to startTestService.
 */
import { randomUUID } from 'node:crypto';
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { z } from 'zod';
import { ServiceError } from '../../servers/errors.ts';
import { type AnyOperation, defineOperation } from '../../servers/operation.ts';
import { operations } from '../../servers/registry.ts';

export const TEST_SKU = 'test-echo';
export const TEST_PRICE_USDC = 0.1;
export const TEST_PRICE_ATOMIC = '100000';

export interface EchoCounter {
  /** Executions of the handler per `text`. */
  runs: Map<string, number>;
  /**
   * A file that outlives the process: each run appends `start <text>` when it begins and
   * `end <text> <execution>` when it returns its result (crash tests count runs across a kill -9).
   */
  log?: string;
}

/** The runs a counter's log recorded for `text`: how many began, and the executions that ended. */
export function runsLogged(log: string, text: string): { started: number; ended: string[] } {
  const lines = existsSync(log) ? readFileSync(log, 'utf8').split('\n') : [];
  return {
    started: lines.filter((l) => l === `start ${text}`).length,
    ended: lines.filter((l) => l.startsWith(`end ${text} `)).map((l) => l.slice(`end ${text} `.length)),
  };
}

export function testPaidOperations(counter: EchoCounter = { runs: new Map() }): AnyOperation[] {
  const echo = defineOperation({
    name: 'testEcho',
    title: 'Echo (test SKU)',
    description: 'Echoes its text, for payment tests.',
    input: z.strictObject({
      text: z.string().min(1).max(200),
      times: z.number().int().min(1).max(5).default(1),
      loud: z.boolean().default(false),
      delay_ms: z.number().int().min(0).max(10_000).default(0),
      fail: z.boolean().default(false),
    }),
    output: z.object({
      echo: z.string(),
      run: z.number().int(),
      /** Unique per execution: two responses with one execution id come from one run. */
      execution: z.uuid(),
      payment_id: z.string().nullable(),
    }),
    annotations: { readOnlyHint: true, openWorldHint: false },
    access: 'paid',
    http: { surface: 'site', method: 'POST', path: `/api/public/x402/${TEST_SKU}`, input: 'body' },
    mcp: ['public'],
    sku: { id: TEST_SKU, example: { text: 'hello' }, usdc: TEST_PRICE_USDC },
    handler: async (ctx, input) => {
      const run = (counter.runs.get(input.text) ?? 0) + 1;
      counter.runs.set(input.text, run);
      if (counter.log) appendFileSync(counter.log, `start ${input.text}\n`);
      if (input.delay_ms) await new Promise((resolve) => setTimeout(resolve, input.delay_ms));
      if (input.fail) throw new ServiceError('internal_error', { cause: new Error('test handler failed') });
      const text = Array.from({ length: input.times }, () => input.text).join(' ');
      const execution = randomUUID();
      if (counter.log) appendFileSync(counter.log, `end ${input.text} ${execution}\n`);
      return {
        echo: input.loud ? text.toUpperCase() : text,
        run,
        execution,
        payment_id: ctx.payment?.id ?? null,
      };
    },
  });
  return [echo];
}

/** The registry plus the test SKU. */
export const withTestSku = (counter?: EchoCounter): AnyOperation[] => [
  ...operations,
  ...testPaidOperations(counter),
];
