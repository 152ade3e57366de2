/**
 * x402's Bazaar discovery extension (issue 31): every paid SKU's 402 carries `extensions.bazaar`
 * with its input and output, read here as a facilitator's indexer reads it - with the reference
 * validators of `@x402/extensions` - over REST and over MCP. An indexer probes with an unpaid
 * request that has no body (or a GET with no query) and expects the 402 with the full terms; a body
 * that is present and invalid is still answered 400 first.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { PaymentRequired } from '@x402/core/types';
import {
  type DiscoveryExtension,
  validateAndExtract,
  validateDiscoveryExtensionSpec,
} from '@x402/extensions/bazaar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../servers/registry.ts';
import { dialects } from '../helpers/databases.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { newAccount, paymentRequiredOf } from '../helpers/x402-payer.ts';

// biome-ignore lint/suspicious/noExplicitAny: schemas are checked structurally
type Json = Record<string, any>;

const skus = operations.filter((op) => op.sku && op.http);

/** The Bazaar extension of a 402, checked as an indexer checks it before cataloguing. */
function bazaarOf(required: PaymentRequired): DiscoveryExtension {
  const extension = required.extensions?.bazaar as DiscoveryExtension | undefined;
  expect(extension, 'extensions.bazaar').toBeDefined();
  expect(validateDiscoveryExtensionSpec(extension as never)).toMatchObject({ valid: true });
  const checked = validateAndExtract(extension as DiscoveryExtension);
  expect(checked.errors ?? []).toEqual([]);
  expect(checked.valid).toBe(true);
  return extension as DiscoveryExtension;
}

describe.each(dialects)('x402 Bazaar discovery (%s)', (dialect) => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService(dialect, { 'payments.pay_to': newAccount().address });
  });
  afterAll(() => service?.close());

  const urlOf = (op: (typeof skus)[number]) => `${service.config.site_url}${op.http?.path}`;

  it('answers a bodiless POST and a bare GET to every SKU 402, with Bazaar input and output valid for an indexer', async () => {
    expect(skus.length).toBeGreaterThan(5);
    // A SKU this deployment cannot sell (no provider configured) says so, 503, before any terms.
    const document = (await (await fetch(`${service.config.site_url}/.well-known/x402.json`)).json()) as {
      resources: { sku: string; available: boolean }[];
    };
    const available = new Set(document.resources.filter((r) => r.available).map((r) => r.sku));
    expect(available.size).toBeGreaterThan(5);
    for (const op of skus) {
      const sku = op.sku as NonNullable<typeof op.sku>;
      if (!available.has(sku.id)) {
        const res = await fetch(urlOf(op), { method: 'POST' });
        expect(res.status, sku.id).toBe(503);
        expect(((await res.json()) as Json).code).toBe('sku_unavailable');
        continue;
      }
      for (const request of [
        { method: 'POST' },
        { method: 'POST', headers: { 'content-length': '0' } },
        {},
      ]) {
        const res = await fetch(urlOf(op), request);
        expect(res.status, `${request.method ?? 'GET'} ${sku.id}: ${await res.clone().text()}`).toBe(402);
        const required = paymentRequiredOf(res);
        // The full terms, at the SKU's price: the same as a call with valid input would be offered.
        expect(required.accepts[0]?.amount).toBe(String(Math.round(sku.usdc * 1e6)));
        expect(required.resource.url).toBe(urlOf(op));
        const body = (await res.json()) as { detail: string };
        expect(body.detail).toMatch(new RegExp(`^${sku.id} costs [0-9.]+ USDC`));
        const { info } = validateAndExtract(bazaarOf(required));
        expect(info?.input).toMatchObject({ type: 'http', method: op.http?.method });
        // Its example input is one the SKU takes (the registry checks it at start).
        expect(op.input.safeParse(sku.example).success).toBe(true);
        expect((info?.input as { body?: unknown } | undefined)?.body).toEqual(sku.example);
        // The input described is the registry's JSON body, as the catalog shows it (the reference
        // builder describes an output only from an example of one, which the registry does not hold).
        const { properties } = (bazaarOf(required) as { schema: { properties: Record<string, Json> } })
          .schema;
        expect(Object.keys(properties.input?.properties ?? {})).toEqual(
          expect.arrayContaining(['type', 'method', 'bodyType', 'body']),
        );
      }
    }
  });

  it('still answers a body that is present and invalid 400 before any 402, and a wrong content type 415', async () => {
    for (const op of skus.filter((o) => o.http?.method === 'POST').slice(0, 3)) {
      const invalid = await fetch(urlOf(op), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ unexpected: 'field', domain: 7 }),
      });
      expect(invalid.status, op.name).toBe(400);
      expect(invalid.headers.get('payment-required')).toBeNull();
      const text = await fetch(urlOf(op), {
        method: 'POST',
        headers: { 'content-type': 'text/plain' },
        body: 'x',
      });
      expect(text.status, op.name).toBe(415);
    }
  });

  it('carries the MCP form of the extension (the tool and its input schema) in the paid tool 402', async () => {
    const op = skus.find((o) => o.sku?.id === 'signal') as (typeof skus)[number];
    const client = new Client({ name: 'bazaar-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(service.config.mcp_url)));
    try {
      const unpaid = await client.callTool({ name: op.toolName, arguments: { domain: 'example.com' } });
      expect(unpaid.isError).toBe(true);
      const required = unpaid.structuredContent as unknown as PaymentRequired;
      expect(required.x402Version).toBe(2);
      const { info } = validateAndExtract(bazaarOf(required));
      expect(info?.input).toMatchObject({ type: 'mcp', toolName: op.toolName, transport: 'streamable-http' });
    } finally {
      await client.close();
    }
  });

  it('lists the extensions in /.well-known/x402.json and /.well-known/x402', async () => {
    for (const path of ['/.well-known/x402.json', '/.well-known/x402']) {
      const document = (await (await fetch(`${service.config.site_url}${path}`)).json()) as {
        extensions: string[];
      };
      expect(document.extensions).toContain('bazaar');
    }
  });
});
