/**
 * The paid catalog over real HTTP and MCP, once per dialect: the snapshot at {public_api_url}/catalog
 * and the live catalog at {functions_url}/catalog (and the public MCP tool get_catalog) carry
 * exactly the fields of SPEC "Paid SKU catalog entry", the SKUs, prices and inputs of SPEC "SKUs and
 * their inputs", and agree with GET /services, the OpenAPI documents and the MCP tool list; the
 * snapshot's `updated` moves only when its content does; a SKU that cannot run here is unavailable
 * live and answers 503 sku_unavailable - after its input is valid, never before - and every SKU's
 * input is checked field by field before any 402 or 503.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  catalogDocument,
  snapshotUpdatedAt,
  typeDescription,
  USDC_ON_BASE,
} from '../../servers/adapters/catalog.ts';
import { loadConfig } from '../../servers/config.ts';
import { noSearchProvider } from '../../servers/features/catalog/people-search/operations.ts';
import { jsonSchemaOf } from '../../servers/json-schema.ts';
import type { AnyOperation } from '../../servers/operation.ts';
import { checkedOperations, operations } from '../../servers/registry.ts';
import { createTestDatabase, dialects, type TestDatabase } from '../helpers/databases.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

// biome-ignore lint/suspicious/noExplicitAny: documents are walked structurally; assertions check the shapes
type Json = any;

/**
 * SPEC.md "SKUs and their inputs", copied as it is written (the repository does not read SPEC.md):
 * sku, price_usdc, endpoint path, and each input's "type, requirement" text. Where the SPEC leaves a
 * requirement or bound unstated, the catalog's own choice is pinned in OUR_INPUTS below.
 */
const SPEC_SKUS: { sku: string; price_usdc: number; endpoint: string; inputs: Record<string, string> }[] = [
  {
    sku: 'featured-bid',
    price_usdc: 1,
    endpoint: '/api/public/x402/featured-bid',
    inputs: {
      domain: 'string, required',
      bid_usdc: 'number, minimum 1.00',
      days: 'number, default 1',
      url: 'string, optional',
      blurb: 'string, optional, at most 280 characters',
    },
  },
  {
    sku: 'spotlight',
    price_usdc: 25,
    endpoint: '/api/public/x402/spotlight',
    inputs: {
      domain: 'string, required',
      url: 'string',
      blurb: 'string, at most 280 characters',
      agent_handle: 'string',
      business_name: 'string',
    },
  },
  {
    sku: 'boost',
    price_usdc: 5,
    endpoint: '/api/public/x402/boost',
    inputs: {
      domain: 'string, required',
      url: 'string, required',
      amount_usdc: 'number, minimum 5.00',
      note: 'string, optional',
    },
  },
  {
    sku: 'signal',
    price_usdc: 0.1,
    endpoint: '/api/public/x402/signal',
    inputs: { domain: 'string, required' },
  },
  {
    sku: 'scan',
    price_usdc: 0.1,
    endpoint: '/api/public/x402/scan',
    inputs: { domain: 'string, required', public: 'boolean, optional, default true' },
  },
  {
    sku: 'people-search',
    price_usdc: 0.01,
    endpoint: '/api/public/x402/people-search',
    inputs: { name: 'required', context: 'optional', location: 'optional' },
  },
  {
    sku: 'entity',
    price_usdc: 0.5,
    endpoint: '/api/public/x402/entity',
    inputs: { domain: 'string, required', brand: 'string, optional' },
  },
  {
    sku: 'llms-txt',
    price_usdc: 1,
    endpoint: '/api/public/x402/llms-txt',
    inputs: { domain: 'string, required' },
  },
  {
    sku: 'soul-write',
    price_usdc: 0.01,
    endpoint: '/api/public/x402/soul-write',
    inputs: {
      agent_id: 'string, required',
      content: 'string, required',
      layer: 'one of episodic, semantic',
    },
  },
  {
    sku: 'embodiment',
    price_usdc: 650,
    endpoint: '/api/public/x402/embodiment',
    inputs: { contact: 'string, required', agent_handle: 'string, required', duration_days: 'number' },
  },
];

/**
 * SPEC "What each SKU delivers": a phrase each catalog description must carry (the SKU's
 * description is its operation's, written from that text).
 */
const SPEC_DELIVERS: Record<string, RegExp> = {
  'featured-bid': /Featured Brand slot.*highest daily bid holds the slot until outbid.*starts at 1\.00 USDC/s,
  spotlight: /30 days of premium placement.*agent hub storefront.*scoreboard.*catalog.*full site scan/s,
  boost: /distribution of one URL across brand agents, agent interface pages and ad networks.*5\.00 USDC/s,
  signal: /Signal Strength/,
  scan: /Signal Strength/,
  'people-search': /not a consumer report or a background check/,
  entity: /large language models describe a brand entity.*drifts/s,
  'llms-txt': /llms\.txt/,
  'soul-write': /durable memory or validation to a registered agent identity/,
  embodiment: /live humanoid robot body.*quoted per deployment.*650\.00 USDC/s,
};

/**
 * The catalog's decisions where SPEC "SKUs and their inputs" is silent, pinned so that a change is
 * deliberate: requirement (the featured-bid and boost rows mark their optional inputs, so the bid and
 * the budget are required; issue 12 gives duration_days its default 1), upper bounds that keep every
 * amount exact in USDC's 6 decimals, and text lengths.
 */
const OUR_INPUTS: Record<string, Record<string, string>> = {
  'featured-bid': {
    domain: 'string, required, at most 300 characters',
    bid_usdc: 'number, required, minimum 1.00, maximum 1000000.00, at most 6 decimals',
    days: 'number, integer, optional, minimum 1, maximum 365, default 1',
    url: 'string, optional, at most 2048 characters, URL',
    blurb: 'string, optional, at most 280 characters',
  },
  spotlight: {
    domain: 'string, required, at most 300 characters',
    url: 'string, optional, at most 2048 characters, URL',
    blurb: 'string, optional, at most 280 characters',
    agent_handle: 'string, optional, at most 64 characters',
    business_name: 'string, optional, at most 200 characters',
  },
  boost: {
    domain: 'string, required, at most 300 characters',
    url: 'string, required, at most 2048 characters, URL',
    amount_usdc: 'number, required, minimum 5.00, maximum 1000000.00, at most 6 decimals',
    note: 'string, optional, at most 500 characters',
  },
  'people-search': {
    name: 'string, required, at most 200 characters',
    context: 'string, optional, at most 1000 characters',
    location: 'string, optional, at most 200 characters',
  },
  entity: {
    domain: 'string, required, at most 300 characters',
    brand: 'string, optional, at most 200 characters',
  },
  'soul-write': {
    agent_id: 'string, required, at most 200 characters',
    content: 'string, required, at most 8000 characters',
    layer: 'one of episodic, semantic, optional, default episodic',
  },
  embodiment: {
    contact: 'string, required, at most 320 characters',
    agent_handle: 'string, required, at most 64 characters',
    duration_days: 'number, integer, optional, minimum 1, maximum 3650, default 1',
  },
};

/**
 * Inputs we add to a SKU beyond SPEC's (optional, so every SPEC call stays valid): boost's
 * campaign_id funds a campaign made with POST /boost (its payment_url carries it; issue 12);
 * soul-write's kind says whether the entry is a memory or a validation (SPEC: "a durable memory or
 * validation").
 */
const EXTRA_INPUTS: Record<string, Record<string, string>> = {
  boost: { campaign_id: 'string, optional, UUID' },
  'soul-write': { kind: 'one of memory, validation, optional, default memory' },
};

/** SPEC "Surface B: free endpoints", in the catalog's notation (`?name` for a query parameter). */
const SPEC_FREE_ENDPOINTS = [
  'GET /health',
  'GET /catalog',
  'GET /services',
  'GET /listings',
  'POST /listings',
  'GET /agents',
  'GET /signal?domain',
  'GET /referral-balance?handle',
  'GET /leaderboard',
  'GET /readiness-index',
  'GET /ai-tools',
  'GET /agenthub',
  'GET /featured',
  'GET /soul',
  'POST /soul/challenge',
  'GET /scan-score?domain',
  'GET /ai-search-data',
  'POST /account',
  'POST /pixel-install',
  'GET /pixel x-service-key',
  'GET /site-stats x-service-key',
  'POST /brand-agent x-service-key',
  'POST /boost x-service-key',
];

interface Facets {
  type?: string;
  requirement?: 'required' | 'optional';
  oneOf?: string[];
  rules: string[];
  default?: string;
}

const RULE = /^(minimum|maximum|more than|less than|at most|at least) /;

/** A type description ("number, minimum 1.00", "one of episodic, semantic") read back into facets. */
function facets(text: string): Facets {
  const out: Facets = { rules: [] };
  const tokens = text.split(', ');
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i] as string;
    if (token.startsWith('one of ')) {
      out.oneOf = [token.slice('one of '.length)];
      while (i + 1 < tokens.length && !isFacet(tokens[i + 1] as string))
        out.oneOf.push(tokens[++i] as string);
    } else if (token === 'required' || token === 'optional') out.requirement = token;
    else if (token.startsWith('default ')) out.default = token.slice('default '.length);
    else if (['string', 'number', 'boolean'].includes(token)) out.type = token;
    else out.rules.push(token);
  }
  return out;
}
const isFacet = (token: string) =>
  ['required', 'optional', 'string', 'number', 'boolean', 'integer', 'URL'].includes(token) ||
  token.startsWith('default ') ||
  RULE.test(token);

/** What SPEC states about an input, each held by the catalog's description of it. */
function specHolds(spec: string, ours: string): string[] {
  const s = facets(spec);
  const o = facets(ours);
  const problems: string[] = [];
  if (s.type && s.type !== o.type) problems.push(`type ${s.type}, got ${o.type}`);
  if (s.requirement === 'required' && o.requirement !== 'required') problems.push('required');
  // "optional" is held by an optional input, with or without a default.
  if (s.requirement === 'optional' && o.requirement !== 'optional') problems.push('optional');
  if (s.default !== undefined && (s.default !== o.default || o.requirement !== 'optional'))
    problems.push(`default ${s.default}`);
  if (s.oneOf && JSON.stringify(s.oneOf) !== JSON.stringify(o.oneOf)) problems.push(`one of ${s.oneOf}`);
  for (const rule of s.rules) if (!o.rules.includes(rule)) problems.push(rule);
  return problems;
}

describe.each(dialects)('paid catalog (%s)', (dialect) => {
  let service: TestService;
  let client: Client;
  let snapshot: Json;
  let live: Json;

  const byName = (name: string) => operations.find((op) => op.name === name) as AnyOperation;
  const skuOps = () => operations.filter((op) => op.sku);
  const getJson = async (url: string) => {
    const res = await fetch(url);
    expect(res.status, url).toBe(200);
    return res.json();
  };

  beforeAll(async () => {
    service = await startTestService(dialect);
    client = new Client({ name: 'catalog-test', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(service.config.mcp_url)));
    snapshot = await getJson(`${service.config.public_api_url}/catalog`);
    live = await getJson(`${service.config.functions_url}/catalog`);
  });
  afterAll(async () => {
    await client?.close();
    await service?.close();
  });

  it('carries exactly the fields of SPEC "Paid SKU catalog entry", snapshot and live', () => {
    const documentFields = [
      'updated',
      'free_endpoints',
      'skus',
      'attribution',
      'api_base',
      'live_endpoint',
      'snapshot',
    ];
    const skuFields = [
      'sku',
      'title',
      'description',
      'price_usdc',
      'endpoint',
      'url',
      'input_schema',
      'payment',
    ];
    const { config } = service;
    for (const doc of [snapshot, live]) {
      // The live view adds the sponsored spotlight list after the SKUs.
      expect(Object.keys(doc)).toEqual(
        doc.snapshot
          ? documentFields
          : [...documentFields.slice(0, 3), 'spotlight', ...documentFields.slice(3)],
      );
      expect(new Date(doc.updated).toISOString()).toBe(doc.updated);
      expect(Object.keys(doc.attribution).sort()).toEqual(['attribution', 'attribution_html', 'site']);
      expect(doc.attribution.site).toBe(config.site_url);
      expect(doc.attribution.attribution_html).toContain(`href="${config.site_url}"`);
      expect(doc.api_base).toBe(config.public_api_url);
      expect(doc.live_endpoint).toBe(`${config.functions_url}/catalog`);
      expect(doc.free_endpoints.every((e: unknown) => typeof e === 'string')).toBe(true);
      for (const entry of doc.skus) {
        // The live catalog adds availability, and the providers of the SKUs that call outside ones.
        const extra = doc.snapshot
          ? []
          : [
              'available',
              ...(entry.available ? [] : ['unavailable_reason']),
              ...(['entity', 'people-search'].includes(entry.sku) ? ['providers'] : []),
              // SKUs whose floor moves with demand (the auction's minimum next bid).
              ...(entry.sku === 'featured-bid' ? ['current_minimum_usdc'] : []),
            ];
        expect(Object.keys(entry), entry.sku).toEqual([...skuFields, ...extra]);
        expect(typeof entry.price_usdc).toBe('number');
        expect(entry.url).toBe(`${config.site_url}${entry.endpoint}`);
        expect(entry.payment).toEqual({
          protocol: 'x402',
          network: 'base',
          asset: 'USDC',
          asset_address: USDC_ON_BASE,
        });
        expect(Object.values(entry.input_schema).every((t) => typeof t === 'string')).toBe(true);
      }
    }
    expect(USDC_ON_BASE).toBe('0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913');
    expect(snapshot.snapshot).toBe(true);
    expect(live.snapshot).toBe(false);
  });

  it('lists every SKU the registry sells, in SPEC table order, with SPEC prices, endpoints and inputs', () => {
    const sold = skuOps().map((op) => op.sku?.id);
    const specOrder = SPEC_SKUS.map((s) => s.sku);
    // All ten of SPEC's, in its order, and nothing else.
    expect(snapshot.skus.map((s: Json) => s.sku)).toEqual(specOrder);
    expect([...sold].sort()).toEqual([...specOrder].sort());

    const problems: string[] = [];
    for (const entry of snapshot.skus) {
      const spec = SPEC_SKUS.find((s) => s.sku === entry.sku) as (typeof SPEC_SKUS)[number];
      if (entry.price_usdc !== spec.price_usdc) problems.push(`${entry.sku}: price ${entry.price_usdc}`);
      if (entry.endpoint !== spec.endpoint) problems.push(`${entry.sku}: endpoint ${entry.endpoint}`);
      if (!SPEC_DELIVERS[entry.sku]?.test(entry.description)) problems.push(`${entry.sku}: description`);
      // SPEC's inputs, in its order, then ours (EXTRA_INPUTS).
      expect(Object.keys(entry.input_schema), entry.sku).toEqual([
        ...Object.keys(spec.inputs),
        ...Object.keys(EXTRA_INPUTS[entry.sku] ?? {}),
      ]);
      for (const [name, text] of Object.entries(spec.inputs)) {
        for (const miss of specHolds(text, entry.input_schema[name])) {
          problems.push(
            `${entry.sku}.${name}: SPEC says ${miss}; catalog says "${entry.input_schema[name]}"`,
          );
        }
      }
    }
    expect(problems).toEqual([]);
    for (const [sku, inputs] of Object.entries(OUR_INPUTS)) {
      expect(snapshot.skus.find((s: Json) => s.sku === sku)?.input_schema, sku).toEqual({
        ...inputs,
        ...EXTRA_INPUTS[sku],
      });
    }
  });

  it('names the free endpoints of the public API as SPEC writes them, derived from the registry', () => {
    const publicApi = operations.filter((op) => op.http?.surface === 'public_api');
    expect(snapshot.free_endpoints).toHaveLength(publicApi.length);
    // Each endpoint of SPEC's table that the service has is written as SPEC writes it.
    const ours = new Set<string>(snapshot.free_endpoints);
    const routes = new Set(publicApi.map((op) => `${op.http?.method} ${op.http?.path}`));
    for (const spec of SPEC_FREE_ENDPOINTS) {
      const route = spec.replace(/[? ].*$/, '');
      if (routes.has(route)) expect(ours.has(spec), spec).toBe(true);
    }
    expect(ours.has('GET /catalog')).toBe(true);
    expect(ours.has('DELETE /account/keys/{key_id} x-service-key')).toBe(true);
  });

  it('serves the same content live, now, with the availability of each SKU and why not', async () => {
    const strip = ({ updated: _u, snapshot: _s, spotlight: _sp, ...rest }: Json) => ({
      ...rest,
      skus: rest.skus.map(
        ({
          available: _a,
          unavailable_reason: _r,
          providers: _p,
          current_minimum_usdc: _m,
          ...entry
        }: Json) => entry,
      ),
    });
    expect(strip(live)).toEqual(strip(snapshot));
    const before = Date.now();
    const again = await getJson(`${service.config.functions_url}/catalog`);
    expect(Date.parse(again.updated)).toBeGreaterThanOrEqual(before - 1000);
    // people-search is built and needs a web search provider, which this deployment has none of.
    expect(again.skus.find((s: Json) => s.sku === 'people-search')).toMatchObject({
      available: false,
      unavailable_reason: noSearchProvider,
      providers: expect.arrayContaining([
        expect.objectContaining({ kind: 'search', name: 'searxng', configured: false }),
      ]),
    });
    // The public MCP tool get_catalog is the live catalog.
    const result = (await client.callTool({ name: 'get_catalog', arguments: {} })) as Json;
    expect(result.isError).toBeFalsy();
    expect(strip(result.structuredContent)).toEqual(strip(snapshot));
    expect(result.structuredContent.snapshot).toBe(false);
    expect(
      result.structuredContent.skus.map((s: Json) => [s.sku, s.available, s.unavailable_reason]),
    ).toEqual(again.skus.map((s: Json) => [s.sku, s.available, s.unavailable_reason]));
  });

  it('agrees with GET /services, x402.json, the OpenAPI documents and the public MCP tool list for every SKU', async () => {
    const services = (await getJson(`${service.config.public_api_url}/services`)).services as Json[];
    const x402 = await getJson(`${service.config.site_url}/.well-known/x402.json`);
    const live = await getJson(`${service.config.functions_url}/catalog`);
    expect((x402.resources as Json[]).map((r) => r.sku).sort()).toEqual(
      (snapshot.skus as Json[]).map((e) => e.sku).sort(),
    );
    for (const entry of live.skus as Json[]) {
      const resource = (x402.resources as Json[]).find((r) => r.sku === entry.sku);
      expect(resource, entry.sku).toMatchObject({
        resource: entry.url,
        price_usdc: entry.price_usdc,
        title: entry.title,
        available: entry.available,
        unavailable_reason: entry.unavailable_reason ?? null,
      });
    }
    const site = await getJson(`${service.config.site_url}/openapi.json`);
    const { tools } = (await client.listTools()) as Json;
    const entries = snapshot.skus as Json[];
    expect(entries.length).toBeGreaterThanOrEqual(7);

    for (const entry of entries) {
      // /services: the same URL, method, access and price.
      const listed = services.filter((s) => s.url === entry.url);
      expect(listed, entry.sku).toHaveLength(1);
      const svc = listed[0];
      expect(svc).toMatchObject({
        method: 'POST',
        access: 'paid',
        free: false,
        title: entry.title,
        description: entry.description,
        price: { amount_usdc: entry.price_usdc, protocol: 'x402', network: 'base', asset: 'USDC' },
        surfaces: { rest: 'site', mcp: ['public'] },
      });

      // OpenAPI: the route at the endpoint, its operation, and inputs whose every description is
      // the catalog's (derived from the document's own schema).
      expect(`${site.servers[0].url}${entry.endpoint}`).toBe(entry.url);
      const route = site.paths[entry.endpoint]?.post;
      expect(route, entry.sku).toBeDefined();
      expect(route.operationId).toBe(svc.name);
      expect(route['x-mcp-tool']).toBe(svc.tool_name);
      const body = route.requestBody.content['application/json'].schema;
      const required = new Set(body.required ?? []);
      expect(Object.keys(body.properties)).toEqual(Object.keys(entry.input_schema));
      for (const [name, property] of Object.entries(body.properties as Json)) {
        expect(typeDescription(property as Json, required.has(name)), `${entry.sku}.${name}`).toBe(
          entry.input_schema[name],
        );
      }
      expect(route.responses['503'].description).toContain('sku_unavailable');

      // MCP: the tool, with the same inputs and requirements.
      const tool = tools.find((t: Json) => t.name === svc.tool_name);
      expect(tool, entry.sku).toBeDefined();
      expect(tool.description).toContain(entry.description);
      const toolRequired = new Set(tool.inputSchema.required ?? []);
      expect(Object.keys(tool.inputSchema.properties)).toEqual(Object.keys(entry.input_schema));
      for (const [name, property] of Object.entries(tool.inputSchema.properties as Json)) {
        expect(typeDescription(property as Json, toolRequired.has(name))).toBe(entry.input_schema[name]);
      }
    }

    // Nothing is sold that the catalog does not list.
    const catalogUrls = new Set(entries.map((e) => e.url));
    expect(services.filter((s) => !s.free).every((s) => catalogUrls.has(s.url))).toBe(true);
    const x402Paths = Object.keys(site.paths).filter((p) => p.startsWith('/api/public/x402/'));
    expect(x402Paths.sort()).toEqual(entries.map((e) => e.endpoint).sort());
    const paidTools = new Set(skuOps().map((op) => op.toolName));
    expect(tools.filter((t: Json) => paidTools.has(t.name))).toHaveLength(entries.length);
  });

  it('checks every SKU input field by field before any 402 or 503, and answers an unavailable SKU 503 sku_unavailable once its input is valid', async () => {
    const post = async (op: AnyOperation, body: unknown) => {
      const res = await fetch(`${service.config.site_url}${op.http?.path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as Json };
    };
    const valid: Record<string, Record<string, unknown>> = {
      bidFeaturedSlot: {
        domain: 'example.com',
        bid_usdc: 2.5,
        days: 3,
        url: 'https://www.example.com/spring',
      },
      buySpotlight: { domain: 'example.com', blurb: 'Agent-ready.' },
      boostUrl: { domain: 'example.com', url: 'https://example.com/launch', amount_usdc: 5 },
      researchPerson: { name: 'Jane Doe', location: 'Berlin' },
      auditEntity: { domain: 'https://Example.com/about' },
      writeSoulMemory: {
        agent_id: `urn:ietf:params:oauth:jwk-thumbprint:sha-256:${'A'.repeat(43)}`,
        content: 'Delivered on time.',
      },
      bookEmbodiment: { contact: '+14155550123', agent_handle: 'shop-agent' },
    };
    /** Each attack changes one field; the answer must name it. */
    const attacks: [string, Record<string, unknown>, string][] = [
      ['bidFeaturedSlot', { bid_usdc: 0.99 }, 'bid_usdc'],
      ['bidFeaturedSlot', { bid_usdc: 1.0000001 }, 'bid_usdc'],
      ['bidFeaturedSlot', { bid_usdc: '0x10' }, 'bid_usdc'],
      ['bidFeaturedSlot', { bid_usdc: undefined }, 'bid_usdc'],
      ['bidFeaturedSlot', { days: 0 }, 'days'],
      ['bidFeaturedSlot', { days: 1.5 }, 'days'],
      ['bidFeaturedSlot', { url: 'https://elsewhere.example.org/' }, 'url'],
      ['bidFeaturedSlot', { blurb: 'x'.repeat(281) }, 'blurb'],
      ['bidFeaturedSlot', { domain: 'not a domain' }, 'domain'],
      ['buySpotlight', { blurb: 'x'.repeat(281) }, 'blurb'],
      ['buySpotlight', { url: 'ftp://example.com/' }, 'url'],
      ['buySpotlight', { domain: undefined }, 'domain'],
      ['boostUrl', { amount_usdc: 4.99 }, 'amount_usdc'],
      ['boostUrl', { url: undefined }, 'url'],
      ['boostUrl', { url: 'https://example.com.evil.example/' }, 'url'],
      ['researchPerson', { name: '   ' }, 'name'],
      ['researchPerson', { name: undefined }, 'name'],
      ['auditEntity', { domain: '10.0.0.1' }, 'domain'],
      ['writeSoulMemory', { layer: 'procedural' }, 'layer'],
      ['writeSoulMemory', { content: undefined }, 'content'],
      ['writeSoulMemory', { agent_id: 'a/b' }, 'agent_id'],
      ['bookEmbodiment', { contact: 'call me maybe' }, 'contact'],
      ['bookEmbodiment', { duration_days: -1 }, 'duration_days'],
      ['bookEmbodiment', { agent_handle: undefined }, 'agent_handle'],
      ['bookEmbodiment', { surprise: true }, 'surprise'],
    ];
    const misses: unknown[] = [];
    for (const [name, change, field] of attacks) {
      const { status, body } = await post(byName(name), { ...valid[name], ...change });
      if (
        status !== 400 ||
        body.code !== 'validation_failed' ||
        !body.errors?.some((e: Json) => e.field === field)
      )
        misses.push({ name, change, status, body });
    }
    expect(misses).toEqual([]);

    // Built, but without a search provider here: unavailable, before any 402, over REST and MCP.
    const people = byName('researchPerson');
    const unavailable = await post(people, valid.researchPerson);
    expect(unavailable.status).toBe(503);
    expect(unavailable.body).toMatchObject({
      code: 'sku_unavailable',
      detail: `people-search: ${noSearchProvider}`,
    });
    const called = (await client.callTool({
      name: people.toolName,
      arguments: valid.researchPerson,
    })) as Json;
    expect(JSON.parse(called.content[0].text).code).toBe('sku_unavailable');
  });

  it('keeps the snapshot time across restarts and processes, and moves it only when the content changes', async () => {
    const database: TestDatabase = await createTestDatabase(dialect);
    // One public address for every process, as behind a load balancer: each listens on its own port.
    const site = { site_url: 'http://catalog.example.test' };
    const start = (overrides: Record<string, unknown> = {}) =>
      startTestService(dialect, { ...site, ...overrides }, { database, background: false });
    const fetchCatalog = (running: TestService) => getJson(`${running.url}/api/public/catalog`);
    const catalogOf = async (overrides: Record<string, unknown> = {}) => {
      const running = await start(overrides);
      try {
        return await fetchCatalog(running);
      } finally {
        await running.close();
      }
    };
    try {
      const first = await catalogOf();
      expect(first.api_base).toBe('http://catalog.example.test/api/public');
      // Restarted, as two processes side by side, on the same database and content, later.
      const [a, b] = await Promise.all([start(), start()]);
      const [fromA, fromB] = await Promise.all([fetchCatalog(a), fetchCatalog(b)]);
      await Promise.all([a.close(), b.close()]);
      expect(fromA.updated).toBe(first.updated);
      expect(fromB.updated).toBe(first.updated);
      expect(Date.parse(first.updated)).toBeLessThanOrEqual(Date.now());

      // Another content (the live catalog moved host): another time.
      const moved = await catalogOf({ functions_url: 'http://live.example.test/functions/v1' });
      expect(moved.live_endpoint).toBe('http://live.example.test/functions/v1/catalog');
      expect(moved.updated).not.toBe(first.updated);
      expect(await catalogOf({ functions_url: 'http://live.example.test/functions/v1' })).toEqual(moved);
    } finally {
      await database.drop();
    }
  });

  it('records the time a content became current: first seen, kept by later processes, moved when it comes back', async () => {
    const db = service.services.db;
    const t = (minute: number) => new Date(Date.UTC(2030, 0, 1, 0, minute));
    const iso = (minute: number) => t(minute).toISOString();
    const [a, b] = ['a'.repeat(64), 'b'.repeat(64)];
    expect(await snapshotUpdatedAt(db, a, t(0))).toBe(iso(0));
    expect(await snapshotUpdatedAt(db, a, t(5))).toBe(iso(0));
    expect(await snapshotUpdatedAt(db, b, t(10))).toBe(iso(10));
    // Back to content a: it became current again at minute 20.
    expect(await snapshotUpdatedAt(db, a, t(20))).toBe(iso(20));
    expect(await snapshotUpdatedAt(db, a, t(25))).toBe(iso(20));
    // Ten processes meeting a new content at once all publish the first time written.
    const c = 'c'.repeat(64);
    const times = await Promise.all(
      Array.from({ length: 10 }, (_, i) => snapshotUpdatedAt(db, c, t(30 + i))),
    );
    expect(new Set(times).size).toBe(1);
    expect(times[0]).toMatch(/^2030-01-01T00:3\d:00\.000Z$/);
  });
});

describe('paid catalog, pure parts', () => {
  const byName = (name: string) => operations.find((op) => op.name === name) as AnyOperation;

  it('lists whatever SKUs a registry sells, in SPEC table order, and SKUs SPEC does not name last', () => {
    const config = loadConfig({ env: {} });
    const selling = (op: AnyOperation, id: string, usdc: number): AnyOperation => ({
      ...op,
      name: `sell${id.replace(/-/g, '')}`,
      toolName: `sell_${id.replace(/-/g, '_')}`,
      sku: { id, example: op.sku?.example ?? {}, usdc },
      http: { ...(op.http as NonNullable<AnyOperation['http']>), path: `/api/public/x402/${id}` },
    });
    const template = byName('auditEntity');
    const registry = checkedOperations([
      selling(template, 'zeta', 2),
      ...[...operations].filter((op) => !['llms-txt', 'signal'].includes(op.sku?.id ?? '')).reverse(),
      selling(template, 'llms-txt', 1),
      selling(template, 'alpha', 3),
      selling(template, 'signal', 0.1),
    ]);
    const doc = catalogDocument(registry, config, { live: false, updated: '2030-01-01T00:00:00.000Z' });
    expect(doc.skus.map((s) => s.sku)).toEqual([
      'featured-bid',
      'spotlight',
      'boost',
      'signal',
      'scan',
      'people-search',
      'entity',
      'llms-txt',
      'soul-write',
      'embodiment',
      'alpha',
      'zeta',
    ]);
    expect(doc.skus.find((s) => s.sku === 'signal')).toMatchObject({
      price_usdc: 0.1,
      url: `${config.site_url}/api/public/x402/signal`,
    });
    // Pure: the same registry and configuration give the same document, whatever the order.
    expect(catalogDocument([...registry].reverse(), config, { live: false, updated: doc.updated })).toEqual(
      doc,
    );
  });

  it('reads numbers written as JSON numbers and refuses any other text', () => {
    const op = byName('bidFeaturedSlot');
    const base = { domain: 'example.com' };
    expect(op.input.parse({ ...base, bid_usdc: '2.5', days: '3' })).toMatchObject({ bid_usdc: 2.5, days: 3 });
    expect(op.input.parse({ ...base, bid_usdc: '1e1' })).toMatchObject({ bid_usdc: 10, days: 1 });
    for (const garbage of ['', ' 2', '0x10', 'Infinity', 'NaN', '2,5', '+2', '2.', 'two']) {
      expect(op.input.safeParse({ ...base, bid_usdc: garbage }).success, JSON.stringify(garbage)).toBe(false);
    }
    expect(
      byName('bookEmbodiment').input.safeParse({
        contact: 'a@example.com',
        agent_handle: 'x',
        duration_days: '1.5',
      }).success,
    ).toBe(false);
  });

  it('charges bid x days for featured-bid and the budget for boost, exact in USDC decimals', () => {
    const bid = byName('bidFeaturedSlot');
    const amount = (op: AnyOperation, input: unknown) => op.sku?.amount?.(op.input.parse(input));
    expect(amount(bid, { domain: 'example.com', bid_usdc: 1.1, days: 3 })).toBe(3.3);
    expect(amount(bid, { domain: 'example.com', bid_usdc: 1 })).toBe(1);
    expect(amount(bid, { domain: 'example.com', bid_usdc: 1_000_000, days: 365 })).toBe(365_000_000);
    expect(Number.isSafeInteger(365_000_000 * 1e6)).toBe(true);
    const boost = byName('boostUrl');
    expect(
      amount(boost, { domain: 'example.com', url: 'https://example.com/', amount_usdc: 12.345678 }),
    ).toBe(12.345678);
    expect(jsonSchemaOf(bid.input, 'input').required).toEqual(['domain', 'bid_usdc']);
  });
});
