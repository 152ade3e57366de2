/**
 * Issue 31 item 7: a caller-priced SKU's 402 says the amount actually asked - a 2 USDC x 2-day
 * order asks 4 USDC, not the SKU's floor price - over REST and over MCP, in both protocol eras
 * (2026-07-28 through the shared server). The catalog's caller-priced SKUs (featured-bid, boost)
 * are REST only, so a test SKU priced the same way stands in for them on MCP.
 */

import { decodePaymentRequiredHeader } from '@x402/core/http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { usdc } from '../../servers/features/catalog/inputs.ts';
import { type AnyOperation, defineOperation } from '../../servers/operation.ts';
import { operations } from '../../servers/registry.ts';
import { dialects } from '../helpers/databases.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { newAccount } from '../helpers/x402-payer.ts';

// biome-ignore lint/suspicious/noExplicitAny: answers are checked structurally
type Json = Record<string, any>;

const perDay = defineOperation({
  name: 'testPerDay',
  title: 'Per day (test SKU)',
  description: 'Priced by the caller: usdc_per_day times days, for the 402 detail test.',
  input: z.strictObject({
    usdc_per_day: z.number().min(0.1).max(100),
    days: z.number().int().min(1).max(30),
  }),
  output: z.object({ days: z.number().int() }),
  annotations: { readOnlyHint: true, openWorldHint: false },
  access: 'paid',
  http: { surface: 'site', method: 'POST', path: '/api/public/x402/test-per-day', input: 'body' },
  mcp: ['public'],
  sku: {
    id: 'test-per-day',
    example: { usdc_per_day: 1, days: 1 },
    usdc: 0.1,
    amount: (input) => usdc(input.usdc_per_day * input.days),
  },
  handler: async (_ctx, input) => ({ days: input.days }),
});

const ASKED = /^test-per-day costs 4 USDC: /;
const ASKED_ATOMIC = '4000000';
const order = { usdc_per_day: 2, days: 2 };

describe.each(dialects)('the amount a caller-priced 402 asks (%s)', (dialect) => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService(
      dialect,
      { 'payments.pay_to': newAccount().address },
      { operations: [...operations, perDay] as AnyOperation[] },
    );
  });
  afterAll(async () => {
    await service?.close();
  });

  const mcp = async (headers: Record<string, string>, body: Json) => {
    const res = await fetch(service.config.mcp_url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...headers,
      },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as Json).result;
  };

  it('says it over REST: the detail and the requirements ask 4 USDC', async () => {
    const res = await fetch(`${service.config.site_url}/api/public/x402/test-per-day`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(order),
    });
    expect(res.status).toBe(402);
    const problem = (await res.json()) as Json;
    expect(problem.detail).toMatch(ASKED);
    const required = decodePaymentRequiredHeader(res.headers.get('payment-required') ?? '');
    expect(required.accepts[0]?.amount).toBe(ASKED_ATOMIC);
  });

  it('says it over MCP, 2025-11-25 and 2026-07-28: the message and the requirements ask 4 USDC', async () => {
    const legacy = await mcp(
      { 'mcp-protocol-version': '2025-11-25' },
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'test_per_day', arguments: order } },
    );
    const modern = await mcp(
      { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'test_per_day' },
      {
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: {
          name: 'test_per_day',
          arguments: order,
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientInfo': { name: 'asked', version: '1' },
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      },
    );
    for (const result of [legacy, modern]) {
      expect(result.isError).toBe(true);
      expect(result.structuredContent.message).toMatch(ASKED);
      expect(result.structuredContent.accepts[0].amount).toBe(ASKED_ATOMIC);
    }
    expect(modern.resultType).toBe('complete');
  });
});
