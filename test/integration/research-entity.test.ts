/**
 * The entity SKU bought as a customer buys it (the stock `@x402/fetch` client and the MCP SDK
 * client through the real payment core), against a brand's fixture site on loopback and an
 * OpenAI-compatible server answering fixed descriptions: one faithful, one with a planted wrong
 * founding year and headquarters. Without a configured model the own-source audit is sold alone;
 * a model that does not answer in time is a clear error and nothing is charged.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { decodePaymentResponseHeader } from '@x402/core/http';
import type { PaymentRequired } from '@x402/core/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/databases.ts';
import { type FixtureSite, startFixtureSite } from '../helpers/fixture-sites.ts';
import { startLlmServer, type TestLlmServer } from '../helpers/llm-server.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { newAccount, payingFetch, stockClient } from '../helpers/x402-payer.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are checked structurally
type Json = Record<string, any>;

const faithful = {
  name: 'Northwind Labs',
  category: 'Data pipeline software',
  description: 'Northwind Labs makes data pipeline software for small analytics teams.',
  founded: '2012',
  headquarters: 'Lisbon, Portugal',
  products: ['Streamline'],
  people: [{ name: 'Ana Ferreira', role: 'Founder' }],
};
const drifting = { ...faithful, founded: '2009', headquarters: 'Berlin, Germany' };

describe.each(dialects)('entity consistency audit (%s)', (dialect) => {
  let withModels: TestService;
  let withoutModels: TestService;
  let brand: FixtureSite;
  let conflicting: FixtureSite;
  let llm: TestLlmServer;
  const payTo = newAccount().address;
  const siteOverrides = {
    'payments.pay_to': payTo,
    'scanner.allow_private_networks': true,
    'scanner.delay_ms': 0,
  };

  beforeAll(async () => {
    [brand, conflicting, llm] = await Promise.all([
      startFixtureSite('brand'),
      startFixtureSite('brandConflicting'),
      startLlmServer(),
    ]);
    llm.apiKey = 'sk-entity-test';
    llm.answers.set('faithful-1', JSON.stringify(faithful));
    // A model without structured output: JSON in prose.
    llm.answers.set('drifting-1', `Here is what I know:\n${JSON.stringify(drifting)}`);
    withModels = await startTestService(
      dialect,
      {
        ...siteOverrides,
        'research.llm.providers': [
          { name: 'cloud', base_url: llm.url, model: 'faithful-1', api_key_env: 'TEST_ENTITY_LLM_KEY' },
          { name: 'local', base_url: llm.url, model: 'drifting-1', api_key_env: 'TEST_ENTITY_LLM_KEY' },
        ],
        'research.llm.timeout_ms': 1500,
      },
      { env: { TEST_ENTITY_LLM_KEY: 'sk-entity-test' } },
    );
    withoutModels = await startTestService(dialect, siteOverrides);
  });
  afterAll(async () => {
    await withModels?.close();
    await withoutModels?.close();
    await Promise.all([brand?.close(), conflicting?.close(), llm?.close()]);
  });

  const skuUrl = (service: TestService) => `${service.config.site_url}/api/public/x402/entity`;
  const buy = (service: TestService, body: Json, payer = newAccount()) =>
    payingFetch(payer)(skuUrl(service), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const ledger = (service: TestService) => service.db.handle.db.selectFrom('payments').selectAll().execute();
  const verdicts = (model: Json) =>
    Object.fromEntries((model.comparisons as Json[]).map((c) => [c.field, c.verdict]));

  it('finds the planted wrong founding year and headquarters, and no drift in a faithful answer', async () => {
    const before = llm.requests.length;
    const res = await buy(withModels, { domain: brand.domain });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Json;
    expect(body.brand).toBe('Northwind Labs');
    const truth = Object.fromEntries((body.ground_truth.fields as Json[]).map((f) => [f.field, f]));
    expect(truth.founded).toMatchObject({ value: '2012', source: 'json_ld', source_url: `${brand.url}/` });
    expect(truth.headquarters.value).toMatch(/^Lisbon/);
    // The site says it one way everywhere: no own-source drift.
    expect((body.ground_truth.consistency as Json[]).filter((c) => c.verdict === 'drift')).toEqual([]);

    const [cloud, local] = body.models as [Json, Json];
    expect(cloud.provider).toBe('cloud');
    expect(Object.values(verdicts(cloud))).not.toContain('drift');
    expect(verdicts(cloud)).toMatchObject({
      name: 'consistent',
      founded: 'consistent',
      headquarters: 'consistent',
    });
    expect(cloud.score).toBe(100);
    expect(JSON.parse(cloud.answer)).toEqual(faithful);

    expect(local.provider).toBe('local');
    expect(verdicts(local)).toMatchObject({ founded: 'drift', headquarters: 'drift', name: 'consistent' });
    const founded = (local.comparisons as Json[]).find((c) => c.field === 'founded');
    expect(founded).toMatchObject({ expected: '2012', found: '2009' });
    expect(local.score).toBeLessThan(cloud.score);
    expect(local.answer).toContain('"founded":"2009"');
    expect(body.score).toBe(Math.round((cloud.score + local.score) / 2));

    const critical = (body.findings as Json[]).filter((f) => f.severity === 'critical');
    expect(critical.map((f) => f.field).sort()).toEqual(['founded', 'headquarters']);
    expect(critical[0]?.seen).toMatch(/local/);
    expect(critical.every((f) => /JSON-LD/.test(f.fix))).toBe(true);
    expect(body.note).toBeNull();

    // Each provider was asked once for a json_schema structured description, with its key.
    const asked = llm.requests.slice(before);
    expect(asked.map((r) => r.model).sort()).toEqual(['drifting-1', 'faithful-1']);
    expect(asked.every((r) => r.response_format?.type === 'json_schema')).toBe(true);
    expect(asked.every((r) => r.authorization === 'Bearer sk-entity-test')).toBe(true);

    const receipt = decodePaymentResponseHeader(res.headers.get('payment-response') as string) as Json;
    expect((await ledger(withModels)).find((p) => p.id === receipt.id)).toMatchObject({
      sku: 'entity',
      amount: 500000,
      status: 'authorized',
    });
  });

  it('finds the own-source inconsistency of a site whose title names another company, with no model (MCP)', async () => {
    const client = new Client({ name: 'entity-buyer', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(withoutModels.config.mcp_url)));
    try {
      const args = { domain: conflicting.domain };
      const unpaid = await client.callTool({ name: 'audit_entity', arguments: args });
      expect(unpaid.isError).toBe(true);
      const required = unpaid.structuredContent as Json;
      expect(required).toMatchObject({ x402Version: 2, accepts: [{ amount: '500000', payTo }] });
      const payer = newAccount();
      const payload = await stockClient(payer).createPaymentPayload(required as unknown as PaymentRequired);
      const paid = await client.callTool({
        name: 'audit_entity',
        arguments: args,
        _meta: { 'x402/payment': payload },
      });
      expect(paid.isError).toBeFalsy();
      const body = paid.structuredContent as Json;
      expect(body.models).toEqual([]);
      expect(body.score).toBeNull();
      expect(body.note).toMatch(/No language model provider is configured/);
      const drift = (body.ground_truth.consistency as Json[]).filter((c) => c.verdict === 'drift');
      expect(drift).toEqual([
        expect.objectContaining({
          field: 'name',
          source: 'title',
          expected: 'Northwind Labs',
          found: 'Southbay Analytics | Home',
          source_url: `${conflicting.url}/`,
        }),
      ]);
      expect(body.ground_truth.score).toBeLessThan(100);
      expect(body.findings[0]).toMatchObject({ field: 'name', severity: 'critical' });
      expect((paid._meta as Json)['x402/payment-response']).toMatchObject({ success: true });
    } finally {
      await client.close();
    }
  });

  it('says in the live catalog which language models are configured, and sells entity without any', async () => {
    const live = async (service: TestService) => {
      const res = await fetch(`${service.config.functions_url}/catalog`);
      return ((await res.json()) as Json).skus.find((s: Json) => s.sku === 'entity') as Json;
    };
    expect(await live(withModels)).toMatchObject({
      available: true,
      providers: [
        { kind: 'llm', name: 'cloud', configured: true },
        { kind: 'llm', name: 'local', configured: true },
      ],
    });
    expect(await live(withoutModels)).toMatchObject({ available: true, providers: [] });
  });

  it('answers provider_unavailable naming the model that did not answer in time, and charges nothing', async () => {
    llm.delayMs = 4000;
    try {
      const payer = newAccount();
      const res = await buy(withModels, { domain: brand.domain }, payer);
      expect(res.status).toBe(502);
      const problem = (await res.json()) as Json;
      expect(problem.code).toBe('provider_unavailable');
      expect(problem.detail).toMatch(/(cloud|local): no answer within 1500 ms; nothing was charged/);
      expect(res.headers.get('payment-response')).toBeNull();
      const rows = (await ledger(withModels)).filter((p) => p.payer === payer.address.toLowerCase());
      expect(rows.map((r) => r.status)).toEqual(['released']);
    } finally {
      llm.delayMs = 0;
    }
  });
});
