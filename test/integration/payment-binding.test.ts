/**
 * Issue 28, classes 3 to 5, written as the attacks: a payment signed for one paid resource sent to
 * every other paid resource (same price or not, REST or MCP); an authorization valid for ten years;
 * a v1 payment payload over MCP, which the MCP transport's v2 terms never asked for. Each is refused
 * 402 `payment_invalid` naming the field, nothing runs and nothing is recorded. The embedded
 * facilitator verifies offline (no chain): only our checks stand between these payments and a run.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/databases.ts';
import { type EchoCounter, TEST_SKU, withTestSku } from '../helpers/paid-operations.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import {
  newAccount,
  paymentHeader,
  paymentRequiredOf,
  signPayment,
  stockClient,
} from '../helpers/x402-payer.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are checked structurally
type Json = Record<string, any>;

/** A valid input for every paid SKU the registry sells (the test fails when one is missing). */
const inputs: Record<string, Json> = {
  [TEST_SKU]: { text: 'bound' },
  signal: { domain: 'example.com' },
  scan: { domain: 'example.com' },
  'llms-txt': { domain: 'example.com' },
  entity: { domain: 'example.com' },
  'people-search': { name: 'Ada Lovelace' },
  'featured-bid': { domain: 'example.com', bid_usdc: 1, days: 1 },
  spotlight: { domain: 'example.com' },
  boost: { domain: 'example.com', url: 'https://example.com/', amount_usdc: 5 },
  embodiment: { agent_handle: 'some-robot', contact: 'buyer@example.com' },
  'soul-write': { agent_id: `urn:ietf:params:oauth:jwk-thumbprint:sha-256:${'A'.repeat(43)}`, content: 'x' },
};

describe.each(dialects)('a payment is bound to what it was offered for (%s)', (dialect) => {
  let service: TestService;
  const counter: EchoCounter = { runs: new Map() };
  const payTo = newAccount().address;

  beforeAll(async () => {
    service = await startTestService(
      dialect,
      { 'payments.pay_to': payTo },
      { operations: withTestSku(counter) },
    );
  });
  afterAll(() => service?.close());

  const skuUrl = (sku: string) => `${service.config.site_url}/api/public/x402/${sku}`;
  const post = (sku: string, headers: Record<string, string> = {}) =>
    fetch(skuUrl(sku), {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(inputs[sku]),
    });
  const ledger = () => service.db.handle.db.selectFrom('payments').selectAll().execute();
  const paidSkus = () => withTestSku().flatMap((op) => (op.sku ? [op.sku.id] : []));

  it('has an input for every paid SKU', () => {
    expect(Object.keys(inputs).sort()).toEqual(paidSkus().sort());
  });

  it('refuses a payment signed for the echo at every other paid resource, before anything runs', async () => {
    // What the stock client signs when it pays the echo's 402: resource.url names the echo.
    const unpaid = await post(TEST_SKU);
    expect(unpaid.status).toBe(402);
    const offered = paymentRequiredOf(unpaid);
    const signed = await stockClient(newAccount()).createPaymentPayload(offered);
    expect(signed.resource?.url).toBe(skuUrl(TEST_SKU));

    const answers: Record<string, string> = {};
    for (const sku of paidSkus().filter((id) => id !== TEST_SKU)) {
      const res = await post(sku, { 'PAYMENT-SIGNATURE': paymentHeader(signed) });
      const body = (await res.json()) as Json;
      answers[sku] = `${res.status} ${body.code}`;
      if (res.status === 402) {
        expect(body.code, sku).toBe('payment_invalid');
        expect(body.errors, sku).toEqual([
          { field: 'PAYMENT-SIGNATURE.resource.url', message: expect.stringContaining(skuUrl(TEST_SKU)) },
        ]);
        expect(paymentRequiredOf(res).error, sku).toBe('invalid_payment_requirements');
      }
    }
    // signal and scan cost what the echo costs (0.10 USDC): only the binding refuses them. The SKUs
    // this test deployment cannot run (no provider configured) or whose target does not exist
    // answer before any payment is read.
    expect(answers).toEqual({
      signal: '402 payment_invalid',
      scan: '402 payment_invalid',
      'llms-txt': '402 payment_invalid',
      'featured-bid': '402 payment_invalid',
      spotlight: '402 payment_invalid',
      boost: '402 payment_invalid',
      embodiment: '503 sku_unavailable',
      entity: '402 payment_invalid',
      'people-search': '503 sku_unavailable',
      'soul-write': '404 not_found',
    });
    expect(await ledger()).toEqual([]);

    // The payment still pays for what it was made for.
    const paid = await post(TEST_SKU, { 'PAYMENT-SIGNATURE': paymentHeader(signed) });
    expect(paid.status).toBe(200);
    expect(counter.runs.get('bound')).toBe(1);
  });

  it('refuses it over MCP too, at another tool, and takes the tool name of the same SKU', async () => {
    const client = new Client({ name: 'binding-test', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(service.config.mcp_url)));
    try {
      const unpaid = await post(TEST_SKU);
      const signed = await stockClient(newAccount()).createPaymentPayload(paymentRequiredOf(unpaid));
      const refused = await client.callTool({
        name: 'buy_signal_check',
        arguments: inputs.signal,
        _meta: { 'x402/payment': signed },
      });
      expect(refused.isError).toBe(true);
      expect(refused.structuredContent).toMatchObject({
        code: 'payment_invalid',
        error: 'invalid_payment_requirements',
        errors: [{ field: '_meta.x402/payment.resource.url' }],
      });
      // The REST payment of the echo pays the echo's tool: the same SKU under its MCP name.
      const paid = await client.callTool({
        name: 'test_echo',
        arguments: { text: 'bound over mcp' },
        _meta: { 'x402/payment': signed },
      });
      expect(paid.isError).toBeFalsy();
      expect(counter.runs.get('bound over mcp')).toBe(1);
    } finally {
      await client.close();
    }
  });

  it('refuses an authorization valid for ten years; the terms allow maxTimeoutSeconds', async () => {
    const unpaid = await post(TEST_SKU);
    const offered = paymentRequiredOf(unpaid);
    const accepted = offered.accepts[0] as PaymentRequirements;
    const now = BigInt(Math.floor(Date.now() / 1000));
    const tenYears = await signPayment(newAccount(), accepted, offered.resource, {
      validBefore: now + 10n * 365n * 86_400n,
    });
    const res = await post(TEST_SKU, { 'PAYMENT-SIGNATURE': paymentHeader(tenYears) });
    expect(res.status).toBe(402);
    const body = (await res.json()) as Json;
    expect(body).toMatchObject({
      code: 'payment_invalid',
      errors: [{ field: 'PAYMENT-SIGNATURE.payload.authorization.validBefore' }],
    });
    expect(body.errors[0].message).toMatch(/maxTimeoutSeconds \(300 s\)/);
    expect(paymentRequiredOf(res).error).toBe('invalid_exact_evm_payload_authorization_valid_before');

    // A longer window declared in `accepted` does not help: the terms are ours.
    const declared = await signPayment(
      newAccount(),
      { ...accepted, maxTimeoutSeconds: 10 * 365 * 86_400 },
      offered.resource,
      { validBefore: now + 10n * 365n * 86_400n },
    );
    const res2 = await post(TEST_SKU, { 'PAYMENT-SIGNATURE': paymentHeader(declared) });
    expect(res2.status).toBe(402);
    expect(((await res2.json()) as Json).errors[0].field).toBe(
      'PAYMENT-SIGNATURE.accepted.maxTimeoutSeconds',
    );

    // The stock client's window (now + maxTimeoutSeconds), a few seconds of clock skew included, pays.
    const skewed = await signPayment(newAccount(), accepted, offered.resource, {
      validBefore: now + BigInt(accepted.maxTimeoutSeconds) + 5n,
    });
    expect((await post(TEST_SKU, { 'PAYMENT-SIGNATURE': paymentHeader(skewed) })).status).toBe(200);
  });

  it('refuses over MCP the v1 payload HTTP refuses in PAYMENT-SIGNATURE: one rule for both', async () => {
    // The v1 terms are offered in the body of the HTTP 402 only, answered in X-PAYMENT.
    const unpaid = await post(TEST_SKU);
    const v1 = await stockClient(newAccount()).createPaymentPayload(
      (await unpaid.json()) as unknown as PaymentRequired,
    );
    expect(v1.x402Version).toBe(1);
    const overHttp = await post(TEST_SKU, { 'PAYMENT-SIGNATURE': paymentHeader(v1) });
    expect(overHttp.status).toBe(402);
    expect(((await overHttp.json()) as Json).errors[0].field).toBe('PAYMENT-SIGNATURE.x402Version');

    const client = new Client({ name: 'binding-test', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(service.config.mcp_url)));
    try {
      const overMcp = await client.callTool({
        name: 'test_echo',
        arguments: { text: 'v1 over mcp' },
        _meta: { 'x402/payment': v1 as unknown as PaymentPayload },
      });
      expect(overMcp.isError).toBe(true);
      expect(overMcp.structuredContent).toMatchObject({
        code: 'payment_invalid',
        error: 'invalid_x402_version',
        errors: [{ field: '_meta.x402/payment.x402Version' }],
      });
      expect(counter.runs.get('v1 over mcp')).toBeUndefined();
    } finally {
      await client.close();
    }
    // The same v1 payload pays where v1 terms were offered.
    const overV1 = await post(TEST_SKU, { 'X-PAYMENT': paymentHeader(v1) });
    expect(overV1.status).toBe(200);
  });
});
