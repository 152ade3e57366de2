/**
 * Malformed input is the client's fault on every route, once per dialect: text holding NUL
 * (PostgreSQL cannot store it, SQLite would), dates outside the years both databases store, path
 * segments that are not valid percent-encoding, bodies that do not decode in their
 * Content-Encoding, and JSON bodies holding bytes that are not UTF-8, a lone surrogate or a name
 * given twice in one object (RFC 8259, RFC 7493 I-JSON). Each is written as the attack, over every
 * operation of the registry with an HTTP binding and every MCP tool (public and owner), plus the
 * routes outside the registry (the beacon, A2A, the authorization server's forms and endpoints, the
 * claim form). The answer is always a 4xx naming the field, never a 5xx, and nothing with NUL is
 * stored.
 */
import { createHash, randomBytes } from 'node:crypto';
import net from 'node:net';
import { brotliCompressSync, deflateSync, gzipSync, zstdCompressSync } from 'node:zlib';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATE_RANGE_MESSAGE, NUL_MESSAGE } from '../../servers/input.ts';
import { jsonSchemaOf } from '../../servers/json-schema.ts';
import { type AnyOperation, pathParamsOf } from '../../servers/operation.ts';
import { operations } from '../../servers/registry.ts';
import { dialects } from '../helpers/databases.ts';
import { authorizeInBrowser, CookieJar, formAction, formField } from '../helpers/oauth.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

// biome-ignore lint/suspicious/noExplicitAny: JSON schemas and bodies are walked structurally
type Json = any;
type Input = Record<string, unknown>;

const SOME_ID = '8a0e5f7c-3b1d-4c2e-9f00-1234567890ab';
/** A soul that does not exist, and a well-formed public key. */
const SOUL_ID = `urn:ietf:params:oauth:jwk-thumbprint:sha-256:${'A'.repeat(43)}`;
const soulKey = () => ({ kty: 'OKP', crv: 'Ed25519', x: 'B'.repeat(43) });
/** The account's own verified brand domain (registrable, as return requests require). */
const BRAND = 'nul-attack-brand.com';
/** Ids of the account's own resources, set before the attacks, so the attacks name real ones. */
const ids = { site: SOME_ID, request: SOME_ID, requestToken: 'rrt_unknown', key: SOME_ID };
const today = new Date().toISOString().slice(0, 10);
const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);

/**
 * An input each operation's schema accepts (checked below), naming the account's own resources, so
 * that in every attack the one changed field is the only fault: without the refusal the request
 * would reach the handler and, for writes, the database.
 */
const validInputs = (): Record<string, Input> => ({
  lookupCardCharge: { charge: 'NETFLIX.COM 866-579-7172 CA' },
  startReturnRequest: {
    brand_domain: 'netflix.com',
    name: 'Jane Doe',
    contact: 'jane@example.com',
    order_number: 'NF-2026-1',
    card_last4: '4242',
    date: yesterday,
    amount: 15.49,
    currency: 'USD',
    message: 'Charged twice, please refund one.',
    agent_id: 'agent-7',
    protocol: 'email',
    approval_proof: {
      format: 'declaration',
      statement: 'Jane approved this request in chat.',
      approved_at: new Date().toISOString(),
      method: 'chat',
    },
  },
  getReturnStatus: { request_id: ids.request },
  cancelReturnRequest: {
    request_id: ids.request,
    request_token: ids.requestToken,
    reason: 'Bought elsewhere.',
  },
  sendReturnMessage: { request_id: ids.request, request_token: ids.requestToken, message: 'Any news?' },
  getBrandChannels: { domain: 'netflix.com' },
  createAccount: { email: 'new-owner@example.com', password: 'correct horse battery staple' },
  createServiceKey: { label: 'ci' },
  revokeServiceKey: { key_id: ids.key },
  revokeConnectedClient: { grant_id: 'an-approval-the-account-does-not-have' },
  changePassword: {
    current_password: 'correct horse battery staple',
    new_password: 'another long passphrase',
  },
  changeEmail: { email: 'moved-owner@example.com' },
  installPixel: {
    domain: 'shop.example.com',
    email: 'pixel@example.com',
    password: 'correct horse battery staple',
    share_network: false,
  },
  verifySite: { site_id: ids.site },
  declareStatementDescriptors: { site_id: ids.site, descriptors: ['NLTTCK BRAND', 'SQ *NUL ATTACK'] },
  listStatementDescriptors: { site_id: ids.site },
  requestScan: { domain: 'example.com', public: false },
  getScan: { scan_id: SOME_ID },
  getScanFixes: { scan_id: SOME_ID },
  listScans: { domain: 'example.com', limit: 5 },
  getScanDiff: { scan_id: SOME_ID, against: SOME_ID },
  requestScanBatch: { domains: ['example.com', 'example.org'], public: false },
  getScanBatch: { batch_id: SOME_ID },
  startMyScanBatch: { domains: ['example.com', 'example.org'], public: false },
  getMyScanBatch: { batch_id: SOME_ID },
  getSignal: { domain: 'example.com' },
  getScanScore: { domain: 'example.com' },
  getLeaderboard: { limit: 5 },
  searchListings: { q: 'shop', category: 'ecommerce', min_score: 0, limit: 5 },
  submitListing: {
    domain: BRAND,
    name: 'Example',
    description: 'An example shop.',
    category: 'ecommerce',
    url: `https://${BRAND}/`,
    tags: ['shop'],
    contact: { email: 'owner@example.com', url: 'https://example.com/contact', phone: '+14155550123' },
  },
  listAgents: { kind: 'brand', limit: 5 },
  registerBrandAgent: {
    domain: BRAND,
    name: 'Example support',
    endpoint: `https://${BRAND}/agent`,
    protocols: ['webhook'],
    webhook_secret: `whsec_${randomBytes(32).toString('base64')}`,
    support_contact: { email: 'support@example.com', url: 'https://example.com/help', phone: '+14155550123' },
    return_contact: {
      email: 'returns@example.com',
      url: 'https://example.com/returns',
      phone: '+14155550123',
    },
    return_policy: { window_days: 30, conditions: 'Unused items.', url: 'https://example.com/policy' },
    statement_descriptors: ['NLTTCK BRAND'],
  },
  listBrandRequests: { status: 'received', brand_domain: BRAND, limit: 5 },
  updateBrandRequestStatus: {
    request_id: ids.request,
    status: 'acknowledged',
    note: 'Seen, refund on its way.',
  },
  ingestEvents: {
    site_id: ids.site,
    events: [
      {
        ts: new Date().toISOString(),
        url: '/pricing',
        user_agent: 'Mozilla/5.0 (compatible; GPTBot/1.2)',
        ip: '203.0.113.9',
        referrer: 'https://search.example/',
        status: 200,
        headers: { 'signature-agent': '"https://agent.example"' },
      },
    ],
  },
  getPixelStatus: { site_id: ids.site },
  getSiteStats: { site_id: ids.site, from: yesterday, to: today, top: 5 },
  getAiSearchData: { from: yesterday, to: today, category: 'human' },
  getAiTools: { category: 'ai_search', q: 'gpt' },
  getMyTraffic: { site_id: ids.site, from: yesterday, to: today, top: 5 },
  listMyFindings: {
    site_id: ids.site,
    domain: 'example.com',
    component: 'content_depth',
    severity: 'info',
    limit: 5,
  },
  listMyScans: { domain: 'example.com', limit: 5 },
  bidFeaturedSlot: {
    domain: BRAND,
    bid_usdc: 2.5,
    days: 3,
    url: `https://${BRAND}/spring`,
    blurb: 'Spring sale.',
  },
  buySpotlight: {
    domain: BRAND,
    url: `https://${BRAND}/`,
    blurb: 'Agent-ready shop.',
    agent_handle: 'shop-agent',
    business_name: 'Example Shop',
  },
  boostUrl: {
    domain: BRAND,
    url: `https://${BRAND}/launch`,
    amount_usdc: 5,
    note: 'Launch week.',
    campaign_id: SOME_ID,
  },
  researchPerson: { name: 'Jane Doe', context: 'Engineer at Example Corp', location: 'Berlin' },
  auditEntity: { domain: BRAND, brand: 'Example Shop' },
  writeSoulMemory: { agent_id: SOUL_ID, content: 'Delivered the order on time.', layer: 'semantic' },
  createSoulChallenge: { public_key: soulKey() },
  registerSoul: {
    public_key: soulKey(),
    challenge: 'soul-challenge.x',
    signature: 'aGVhZA.cGF5bG9hZA.c2ln',
    handle: 'nul-attacker',
    name: 'Attacker',
    description: 'Sends NUL.',
    endpoints: { mcp: 'https://agent.example/mcp' },
    operator: { name: 'Ops', email: 'ops@agent.example' },
  },
  getSoul: { agent_id: SOUL_ID },
  listSoulMemories: { agent_id: SOUL_ID, layer: 'episodic' },
  searchSouls: { q: 'agent' },
  getSoulErc8004Registration: { agent_id: SOUL_ID },
  updateSoulProfile: { agent_id: SOUL_ID, name: 'Renamed' },
  rotateSoulKey: { agent_id: SOUL_ID, public_key: soulKey(), proof: 'aGVhZA.cGF5bG9hZA.c2ln' },
  addSoulMemory: { agent_id: SOUL_ID, content: 'Remembered.' },
  retireSoul: { agent_id: SOUL_ID },
  linkSoulErc8004: {
    agent_id: SOUL_ID,
    agent_registry: 'eip155:8453:0x8004A169FB4a3325136EB29fA0ceB6D2e539a432',
    erc8004_agent_id: '1',
    owner: '0x8004A169FB4a3325136EB29fA0ceB6D2e539a432',
    signature: `0x${'ab'.repeat(65)}`,
  },
  bookEmbodiment: { contact: 'ops@example.com', agent_handle: 'shop-agent', duration_days: 2 },
  buySignalCheck: { domain: 'example.com' },
  buyFullScan: { domain: 'example.com', public: false },
  generateLlmsTxt: { domain: 'example.com' },
  getPayment: { payment_id: SOME_ID },
  registerReferralHandle: { handle: 'nul-attacker' },
  getReferralBalance: { handle: 'nul-attacker' },
  getCredits: { payer: `0x${'ab'.repeat(20)}` },
  getEmbodimentBooking: { booking_id: SOME_ID, token: 'agsvc_booking_x' },
  createBoostCampaign: {
    domain: BRAND,
    url: `https://${BRAND}/launch`,
    amount_usdc: 5,
    note: 'Launch week.',
  },
  getBoostCampaign: { campaign_id: SOME_ID, token: 'agsvc_boost_x' },
  cancelBoostCampaign: { campaign_id: SOME_ID },
  reportBoostImpressions: { campaign_id: SOME_ID, network: 'adnet', report_id: 'r1', impressions: 1000 },
  followBoostClick: { campaign_id: SOME_ID },
  moveEmbodimentBooking: {
    booking_id: SOME_ID,
    status: 'quoted',
    quote_usdc: 4200,
    quote_valid_until: '2027-01-01T00:00:00.000Z',
    note: 'Two units.',
  },
});
const validInput = (op: AnyOperation): Input => validInputs()[op.name] ?? {};

type Step = string | number;
interface Field {
  /** Steps into the input; `*` stands for a key of a record. */
  path: Step[];
  format: string | undefined;
}

/** Every string field a JSON schema declares, at any depth (array items at index 0, union branches). */
function stringFields(schema: Json, path: Step[] = [], out = new Map<string, Field>()): Field[] {
  for (const branch of [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])]) stringFields(branch, path, out);
  if (schema.type === 'string') {
    const key = path.join('.');
    if (!out.has(key) || schema.format) out.set(key, { path, format: schema.format });
  }
  if (schema.type === 'object') {
    for (const [name, property] of Object.entries(schema.properties ?? {}))
      stringFields(property, [...path, name], out);
    if (typeof schema.additionalProperties === 'object')
      stringFields(schema.additionalProperties, [...path, '*'], out);
  }
  if (schema.type === 'array' && schema.items) stringFields(schema.items, [...path, 0], out);
  return [...out.values()];
}

/**
 * `input` with `value(current)` at `path`, creating what is missing; returns the field's name as
 * errors name it (`events.0.headers.signature-agent`).
 */
function setAt(input: Input, path: Step[], value: (current: unknown) => unknown): string {
  const named: Step[] = [];
  let node: Json = input;
  path.forEach((step, i) => {
    const key = step === '*' ? (Object.keys(node)[0] ?? 'x') : step;
    named.push(key);
    if (i === path.length - 1) node[key] = value(node[key]);
    else {
      node[key] ??= typeof path[i + 1] === 'number' ? [] : {};
      node = node[key];
    }
  });
  return named.join('.');
}

/** The valid text with a NUL in its middle, so the value is otherwise what the field accepts. */
const withNul = (current: unknown) => {
  const text = typeof current === 'string' && current.length > 0 ? current : 'ab';
  const middle = Math.ceil(text.length / 2);
  return `${text.slice(0, middle)}\u0000${text.slice(middle)}`;
};

interface Outcome {
  attack: string;
  status: number;
  body: Json;
}

/** The attacks whose answer is not the expected 4xx naming the field (empty when all pass). */
function misses(outcomes: Outcome[], expected: (o: Outcome) => boolean): Outcome[] {
  return outcomes.filter((o) => !expected(o));
}

const names = (field: string, message: string) => (o: Outcome) =>
  o.status === 400 &&
  o.body?.code === 'validation_failed' &&
  o.body.errors?.some((e: Json) => e.field === field && e.message === message);

describe.each(dialects)('malformed input on every route (%s)', (dialect) => {
  let service: TestService;
  let serviceKey: string;
  let ownerToken: string;
  let publicMcp: Client;
  let ownerMcp: Client;
  const owner = { email: 'nul-owner@example.com', password: 'correct horse battery staple' };

  const httpOperations = operations.filter((op) => op.http);
  const surfaceUrl = (op: AnyOperation) =>
    ({
      cs: service.config.base_url,
      public_api: service.config.public_api_url,
      site: service.config.site_url,
      functions: service.config.functions_url,
    })[op.http?.surface ?? 'site'];
  // Every request authenticates, so it gets past authentication to validation wherever a key counts.
  const authHeaders = (): Record<string, string> => ({ 'x-service-key': serviceKey });

  /** The REST request for `input`: path parameters in the path, the rest in the query or JSON body. */
  function rest(
    op: AnyOperation,
    input: Input,
    pathOverride?: Record<string, string>,
  ): [string, RequestInit] {
    const http = op.http as NonNullable<AnyOperation['http']>;
    const params = pathParamsOf(http.path);
    let path = http.path;
    const remaining: Input = { ...input };
    for (const param of params) {
      path = path.replace(`:${param}`, pathOverride?.[param] ?? encodeURIComponent(String(input[param])));
      delete remaining[param];
    }
    const headers = authHeaders();
    if (http.input === 'query') {
      const query = new URLSearchParams(
        Object.entries(remaining).map(([k, v]): [string, string] => [k, String(v)]),
      );
      const search = query.size ? `?${query}` : '';
      return [`${surfaceUrl(op)}${path}${search}`, { method: http.method, headers }];
    }
    return [
      `${surfaceUrl(op)}${path}`,
      {
        method: http.method,
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(remaining),
      },
    ];
  }

  async function send(attack: string, [url, init]: [string, RequestInit]): Promise<Outcome> {
    const res = await fetch(url, init);
    const text = await res.text();
    const problem = res.headers.get('content-type')?.startsWith('application/problem+json');
    return { attack, status: res.status, body: problem ? JSON.parse(text) : text.slice(0, 200) };
  }

  async function call(client: Client, op: AnyOperation, attack: string, args: Input): Promise<Outcome> {
    const result = (await client.callTool({ name: op.toolName, arguments: args })) as Json;
    const body = result.isError ? JSON.parse(result.content[0].text) : result.structuredContent;
    // An isError result with the service's error code is how MCP reports a refused input.
    return { attack, status: result.isError ? (body.code === 'validation_failed' ? 400 : 500) : 200, body };
  }

  beforeAll(async () => {
    service = await startTestService(
      dialect,
      { 'rate_limits.unauthenticated_writes.points': 100_000 },
      { background: false },
    );
    serviceKey = (await service.services.accounts.create(owner)).key.service_key;

    // The account's resources: a site of its brand domain, verified (marked in the database: no
    // public DNS here), the brand's agent, a return request to it, and a second service key.
    const setUp = async (op: AnyOperation, input: Input) => {
      const [url, init] = rest(op, input);
      const res = await fetch(url, init);
      const body = await res.json();
      expect(res.status, JSON.stringify(body)).toBeLessThan(300);
      return body;
    };
    const byName = (name: string) => operations.find((op) => op.name === name) as AnyOperation;
    ids.site = (await setUp(byName('installPixel'), { domain: BRAND })).site_id;
    await service.services.db
      .updateTable('sites')
      .set({ verified_at: new Date().toISOString(), verification_method: 'dns' })
      .where('id', '=', ids.site)
      .execute();
    await setUp(byName('registerBrandAgent'), validInput(byName('registerBrandAgent')));
    const started = validInput(byName('startReturnRequest'));
    const request = await setUp(byName('startReturnRequest'), { ...started, brand_domain: BRAND });
    ids.request = request.request_id;
    ids.requestToken = request.request_token;
    ids.key = (await setUp(byName('createServiceKey'), { label: 'second' })).key_id;

    const auth = service.config.auth_url;
    const metadata = await (await fetch(`${auth}/.well-known/openid-configuration`)).json();
    const redirectUri = 'http://127.0.0.1:9/callback';
    const resource = `${service.config.mcp_url}/auth`;
    const client = await (
      await fetch(metadata.registration_endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          client_name: 'malformed input test',
          redirect_uris: [redirectUri],
          token_endpoint_auth_method: 'none',
          grant_types: ['authorization_code'],
        }),
      })
    ).json();
    const verifier = randomBytes(32).toString('base64url');
    const url = new URL(metadata.authorization_endpoint);
    url.search = new URLSearchParams({
      client_id: client.client_id,
      redirect_uri: redirectUri,
      response_type: 'code',
      scope: 'agent-service',
      state: 'state',
      resource,
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    }).toString();
    const flow = await authorizeInBrowser(url.href, owner);
    const tokens = await (
      await fetch(metadata.token_endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code: flow.redirect.searchParams.get('code') as string,
          redirect_uri: redirectUri,
          client_id: client.client_id,
          code_verifier: verifier,
          resource,
        }),
      })
    ).json();
    ownerToken = tokens.access_token;

    publicMcp = new Client({ name: 'malformed-input', version: '1' });
    await publicMcp.connect(new StreamableHTTPClientTransport(new URL(service.config.mcp_url)));
    ownerMcp = new Client({ name: 'malformed-input-owner', version: '1' });
    await ownerMcp.connect(
      new StreamableHTTPClientTransport(new URL(resource), {
        requestInit: { headers: { authorization: `Bearer ${ownerToken}` } },
      }),
    );
  });
  afterAll(async () => {
    await publicMcp?.close();
    await ownerMcp?.close();
    await service?.close();
  });

  it('starts every attack from an input the operation accepts', () => {
    for (const op of operations) {
      const parsed = op.input.safeParse(validInput(op));
      expect(parsed.success, `${op.name}: ${parsed.error?.message}`).toBe(true);
    }
  });

  it('refuses NUL in every string field of every REST route - query, body, path - naming the field', async () => {
    const outcomes: Outcome[] = [];
    const expected = new Map<string, (o: Outcome) => boolean>();
    for (const op of httpOperations) {
      const route = `${op.http?.method} ${op.http?.path}`;
      for (const field of stringFields(jsonSchemaOf(op.input, 'input'))) {
        const input = validInput(op);
        const name = setAt(input, field.path, withNul);
        const attack = `${route} ${name}`;
        expected.set(attack, names(name, NUL_MESSAGE));
        outcomes.push(await send(attack, rest(op, input)));
      }
      // A field the schema does not declare, and for bodies a key holding NUL.
      const undeclared = `${route} (undeclared note)`;
      expected.set(undeclared, names('note', NUL_MESSAGE));
      outcomes.push(await send(undeclared, rest(op, { ...validInput(op), note: 'a\u0000b' })));
      if (op.http?.input === 'body') {
        const key = `${route} (key)`;
        expected.set(key, names('na\\u0000me', `name ${NUL_MESSAGE}`));
        outcomes.push(await send(key, rest(op, { ...validInput(op), 'na\u0000me': 'x' })));
      }
    }
    expect(outcomes.length).toBeGreaterThan(80);
    expect(misses(outcomes, (o) => (expected.get(o.attack) as (o: Outcome) => boolean)(o))).toEqual([]);
  });

  it('refuses NUL in every string field of every MCP tool, public and owner, as an isError validation_failed result', async () => {
    const outcomes: Outcome[] = [];
    const expected = new Map<string, (o: Outcome) => boolean>();
    const tools = operations.filter((op) => op.mcp?.length);
    expect(tools.filter((op) => op.mcp?.includes('owner')).length).toBeGreaterThan(0);
    for (const op of tools) {
      const client = op.mcp?.includes('owner') ? ownerMcp : publicMcp;
      for (const field of stringFields(jsonSchemaOf(op.input, 'input'))) {
        const args = validInput(op);
        const name = setAt(args, field.path, withNul);
        const attack = `${op.toolName} ${name}`;
        expected.set(attack, names(name, NUL_MESSAGE));
        outcomes.push(await call(client, op, attack, args));
      }
      const undeclared = `${op.toolName} (undeclared note)`;
      expected.set(undeclared, names('note', NUL_MESSAGE));
      outcomes.push(await call(client, op, undeclared, { ...validInput(op), note: 'a\u0000b' }));
    }
    expect(misses(outcomes, (o) => (expected.get(o.attack) as (o: Outcome) => boolean)(o))).toEqual([]);
  });

  it('refuses dates outside 0001-01-01..9999-12-31 in every date field, over REST and MCP', async () => {
    const outcomes: Outcome[] = [];
    const expected = new Map<string, (o: Outcome) => boolean>();
    const outOfRange: Record<string, string[]> = {
      date: ['0000-01-01', '0000-12-31'],
      'date-time': ['0000-06-01T00:00:00Z', '0001-01-01T00:00:00+01:00', '9999-12-31T23:00:00-02:00'],
    };
    let dateFields = 0;
    for (const op of operations) {
      for (const field of stringFields(jsonSchemaOf(op.input, 'input'))) {
        for (const value of outOfRange[field.format ?? ''] ?? []) {
          dateFields++;
          const input = validInput(op);
          const name = setAt(input, field.path, () => value);
          if (op.http) {
            const attack = `${op.http.method} ${op.http.path} ${name}=${value}`;
            expected.set(attack, names(name, DATE_RANGE_MESSAGE));
            outcomes.push(await send(attack, rest(op, input)));
          }
          if (op.mcp?.length) {
            const attack = `${op.toolName} ${name}=${value}`;
            expected.set(attack, names(name, DATE_RANGE_MESSAGE));
            outcomes.push(await call(op.mcp.includes('owner') ? ownerMcp : publicMcp, op, attack, input));
          }
        }
      }
    }
    // returns date and approved_at, events ts, from and to of three traffic reads
    expect(dateFields).toBeGreaterThanOrEqual(2 * 6 + 3 * 2);
    expect(misses(outcomes, (o) => (expected.get(o.attack) as (o: Outcome) => boolean)(o))).toEqual([]);
  });

  it('refuses a period reaching back before year 1 and cursors forged with such dates or NUL', async () => {
    const api = service.config.public_api_url;
    const key = { 'x-service-key': serviceKey };
    const period = [
      await send('site-stats to=0001-01-05', [`${api}/site-stats?to=0001-01-05`, { headers: key }]),
      await send('ai-search-data to=0001-01-05', [`${api}/ai-search-data?to=0001-01-05&days=30`, {}]),
    ];
    expect(misses(period, names('days', 'the period must not start before 0001-01-01'))).toEqual([]);

    const forged = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const keyset = [forged(['0000-01-01T00:00:00Z', SOME_ID]), forged(['2026-01-01T00:00:00Z', 'a\u0000b'])];
    const leaderboard = [
      forged([50, 'a\u0000b.com', 3]),
      forged([50.5, 'a.com', 3]),
      Buffer.from('[50,"a.com",1e400]').toString('base64url'),
    ];
    const cursors: Outcome[] = [];
    for (const op of httpOperations.filter((o) =>
      Object.hasOwn(jsonSchemaOf(o.input, 'input').properties ?? {}, 'cursor'),
    )) {
      for (const cursor of op.name === 'getLeaderboard' ? leaderboard : keyset) {
        cursors.push(await send(`${op.http?.path} cursor`, rest(op, { ...validInput(op), cursor })));
      }
    }
    expect(cursors.length).toBe(leaderboard.length + 6 * keyset.length);
    expect(misses(cursors, (o) => o.status === 400 && o.body.errors?.[0]?.field === 'cursor')).toEqual([]);
  });

  it('answers 400 malformed_request naming the parameter for a path segment that is not percent-encoding', async () => {
    const outcomes: Outcome[] = [];
    const expected = new Map<string, string>();
    for (const op of httpOperations) {
      for (const param of pathParamsOf(op.http?.path ?? '')) {
        for (const bad of ['%E0%A4%A', '%', '%zz']) {
          const attack = `${op.http?.method} ${op.http?.path} ${param}=${bad}`;
          expected.set(attack, param);
          outcomes.push(await send(attack, rest(op, validInput(op), { [param]: bad })));
        }
      }
    }
    expect(expected.size).toBeGreaterThanOrEqual(3 * 4);
    expect(
      misses(
        outcomes,
        (o) =>
          o.status === 400 &&
          o.body.code === 'malformed_request' &&
          o.body.errors?.[0]?.field === expected.get(o.attack),
      ),
    ).toEqual([]);
    // Outside the operations: a route with a parameter on the site and one on the authorization server.
    const others = [
      await send('problems', [`${service.config.site_url}/problems/%E0%A4%A`, {}]),
      await send('interaction', [`${service.config.auth_url}/interaction/%E0%A4%A`, {}]),
    ];
    expect(misses(others, (o) => o.status === 400 && o.body.code === 'malformed_request')).toEqual([]);
  });

  it('answers every body route 415, 400 malformed_json, 413 and 400 malformed_request for a body that does not decode', async () => {
    const json = (op: AnyOperation) => Buffer.from(JSON.stringify(validInput(op)));
    const corrupt: [string, (op: AnyOperation) => Buffer][] = [
      ['gzip', () => Buffer.from('this is not gzip')],
      ['gzip', (op) => gzipSync(json(op)).subarray(0, 20)],
      ['deflate', () => Buffer.from('this is not deflate')],
      ['br', (op) => brotliCompressSync(json(op)).subarray(0, 5)],
      ['zstd', () => Buffer.from('this is not zstd')],
    ];
    const outcomes: Outcome[] = [];
    const expected = new Map<string, [number, string]>();
    let bodyRoutes = 0;
    for (const op of httpOperations.filter((o) => o.http?.input === 'body')) {
      const [url, init] = rest(op, validInput(op));
      const route = `${op.http?.method} ${op.http?.path}`;
      const headers = init.headers as Record<string, string>;
      const attacks: [string, RequestInit, number, string][] = [
        [
          'text/plain',
          { headers: { ...headers, 'content-type': 'text/plain' }, body: 'hi' },
          415,
          'unsupported_media_type',
        ],
        ['broken json', { headers, body: '{"a": ' }, 400, 'malformed_json'],
        [
          'too large',
          {
            headers,
            body: `"${'x'.repeat(op.http?.bodyLimitBytes ?? service.config.http.body_limit_bytes)}"`,
          },
          413,
          'payload_too_large',
        ],
        [
          'unknown coding',
          { headers: { ...headers, 'content-encoding': 'x-rot13' }, body: 'x' },
          415,
          'unsupported_media_type',
        ],
        ...corrupt.map(([coding, body], i): [string, RequestInit, number, string] => [
          `${coding} #${i}`,
          { headers: { ...headers, 'content-encoding': coding }, body: body(op) },
          400,
          'malformed_request',
        ]),
      ];
      for (const [name, extra, status, code] of attacks) {
        expected.set(`${route} ${name}`, [status, code]);
        outcomes.push(await send(`${route} ${name}`, [url, { ...init, ...extra }]));
      }
      // A body that decodes is checked like any other: NUL inside a valid compressed body.
      const nul = `${route} gzip with NUL`;
      expected.set(nul, [400, 'validation_failed']);
      const encoded = {
        gzip: gzipSync,
        deflate: deflateSync,
        br: brotliCompressSync,
        zstd: zstdCompressSync,
      };
      const coding = (['gzip', 'deflate', 'br', 'zstd'] as const)[bodyRoutes++ % 4] as keyof typeof encoded;
      outcomes.push(
        await send(nul, [
          url,
          {
            ...init,
            headers: { ...headers, 'content-encoding': coding },
            body: encoded[coding](Buffer.from(JSON.stringify({ ...validInput(op), note: 'a\u0000b' }))),
          },
        ]),
      );
    }
    expect(
      misses(outcomes, (o) => {
        const [status, code] = expected.get(o.attack) as [number, string];
        return o.status === status && o.body.code === code;
      }),
    ).toEqual([]);
  });

  it('refuses invalid UTF-8, lone surrogates and repeated names in every JSON body, naming the byte: REST, MCP, A2A, OAuth', async () => {
    const { site_url: site, auth_url: auth, mcp_url: mcp } = service.config;
    /** What an answer names: the status, the JSON-RPC or problem code, and the text naming the fault. */
    const outcomes: { attack: string; status: number; code: unknown; names: string }[] = [];
    const expected = new Map<string, { status: number; code: unknown; names: string[] }>();
    const attack = async (
      name: string,
      url: string,
      headers: Record<string, string>,
      body: Buffer,
      want: { status: number; code: unknown; names: string[] },
    ) => {
      const res = await fetch(url, { method: 'POST', headers, body });
      const answer = (await res.json()) as Json;
      const problem = answer.errors?.[0];
      outcomes.push({
        attack: name,
        status: res.status,
        code: answer.code ?? answer.error?.code ?? answer.error,
        names: problem
          ? `${problem.field}: ${problem.message}`
          : (answer.error?.message ?? answer.error_description ?? ''),
      });
      expected.set(name, want);
    };
    /**
     * The hostile versions of a valid JSON object `text`: a byte that is not UTF-8 (a lone 0xFF, a
     * surrogate encoded in UTF-8), a lone surrogate escape, and a repeated name smuggling a second
     * value for a real field - each with the byte offset and member the refusal must name.
     */
    const hostile = (text: string): [string, Buffer, number, string][] => {
      const rest = text === '{}' ? '}' : `,${text.slice(1)}`;
      const input = JSON.parse(text) as Input;
      const [field, value] = Object.entries(input)[0] ?? ['note', 'x'];
      const smuggled = JSON.stringify(typeof value === 'number' ? value * 100 : 'smuggled');
      const members = text === '{}' ? `{"${field}":"x"` : text.slice(0, -1);
      const raw = (bytes: number[]) =>
        Buffer.concat([Buffer.from('{"note":"a'), Buffer.from(bytes), Buffer.from(`b"${rest}`)]);
      return [
        ['0xFF byte', raw([0xff]), 10, '(body)'],
        ['UTF-8 encoded surrogate', raw([0xed, 0xa0, 0x80]), 10, '(body)'],
        ['lone surrogate escape', Buffer.from(`{"note":"a\\uD800b"${rest}`), 10, 'note'],
        [
          `repeated ${field}`,
          Buffer.from(`${members},"${field}":${smuggled}}`),
          Buffer.byteLength(members) + 1,
          field,
        ],
      ];
    };

    // Every body route of the registry: the customer service agent, the public API's writes, the
    // paid SKUs (refused before any payment is asked for), souls.
    let bodyRoutes = 0;
    for (const op of httpOperations.filter((o) => o.http?.input === 'body')) {
      bodyRoutes++;
      const [url, init] = rest(op, validInput(op));
      for (const [name, body, offset, field] of hostile(init.body as string)) {
        await attack(
          `${op.http?.method} ${op.http?.path} ${name}`,
          url,
          init.headers as Record<string, string>,
          body,
          {
            status: 400,
            code: 'malformed_json',
            names: [`${field}: `, `at byte ${offset}`],
          },
        );
      }
    }
    expect(bodyRoutes).toBeGreaterThan(20);

    // Both MCP servers, through the direct route and (with an Origin) the router: a JSON-RPC Parse
    // error naming the byte and the member.
    const rpc = (tool: string, args: string) =>
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"${tool}","arguments":${args}}}`;
    const mcpHeaders = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
    };
    const endpoints: [string, string, Record<string, string>, string, string][] = [
      ['public MCP', mcp, mcpHeaders, 'lookup_card_charge', '{"charge":"NETFLIX.COM"}'],
      [
        'public MCP via the router',
        mcp,
        { ...mcpHeaders, origin: new URL(mcp).origin },
        'lookup_card_charge',
        '{"charge":"NETFLIX.COM"}',
      ],
      [
        'owner MCP',
        `${mcp}/auth`,
        { ...mcpHeaders, authorization: `Bearer ${ownerToken}` },
        'get_owner_context',
        '{}',
      ],
    ];
    for (const [server, url, headers, tool, args] of endpoints) {
      const valid = rpc(tool, args);
      const bodies: [string, Buffer, number, string][] = [
        ...hostile(args).map(([name, body, offset, field]): [string, Buffer, number, string] => [
          name,
          Buffer.concat([Buffer.from(valid.slice(0, valid.indexOf(args))), body, Buffer.from('}}')]),
          valid.indexOf(args) + offset,
          field === '(body)' ? '' : `in params.arguments.${field}`,
        ]),
        // A second tool name after the arguments, and a second id.
        [
          'repeated tool name',
          Buffer.from(`${valid.slice(0, -2)},"name":"start_return_request"}}`),
          valid.length - 2 + 1,
          'in params.name',
        ],
        ['repeated id', Buffer.from(`${valid.slice(0, -1)},"id":2}`), valid.length, 'in id'],
      ];
      for (const [name, body, offset, member] of bodies) {
        await attack(`${server} ${name}`, url, headers, body, {
          status: 400,
          code: -32700,
          names: [`at byte ${offset}`, member],
        });
      }
    }

    // A2A JSON-RPC: a Parse error too.
    const a2a = '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1"}}}';
    await attack(
      'A2A repeated method',
      `${site}/a2a`,
      { 'content-type': 'application/json' },
      Buffer.from(`${a2a.slice(0, -1)},"method":"CancelTask"}`),
      {
        status: 400,
        code: -32700,
        names: [`at byte ${a2a.length}`, 'in method'],
      },
    );

    // The authorization server: client registration (RFC 7591) answers RFC 6749 invalid_request; the
    // email-code endpoint of the identity assertion method its problem+json.
    const registration = JSON.stringify({
      redirect_uris: ['http://127.0.0.1:9/cb'],
      client_name: 'attacker',
    });
    for (const [name, body, offset, field] of hostile(registration)) {
      await attack(
        `client registration ${name}`,
        `${auth}/oauth/clients/register`,
        { 'content-type': 'application/json' },
        body,
        {
          status: 400,
          code: 'invalid_request',
          names: [`at byte ${offset}`, field === '(body)' ? '' : `in ${field}`],
        },
      );
    }
    const emailCode = JSON.stringify({ email: owner.email, client_id: 'some-client' });
    for (const [name, body, offset, field] of hostile(emailCode)) {
      await attack(
        `email code ${name}`,
        `${auth}/assertions/email`,
        { 'content-type': 'application/json' },
        body,
        {
          status: 400,
          code: 'malformed_json',
          names: [`${field}: `, `at byte ${offset}`],
        },
      );
    }

    expect(
      outcomes.filter((o) => {
        const want = expected.get(o.attack) as { status: number; code: unknown; names: string[] };
        return (
          o.status !== want.status || o.code !== want.code || !want.names.every((n) => o.names.includes(n))
        );
      }),
    ).toEqual([]);
  });

  it('refuses NUL on the routes outside the registry: beacon, forms, client registration, authorization endpoints', async () => {
    const { site_url: site, auth_url: auth, public_api_url: api } = service.config;
    const form = 'application/x-www-form-urlencoded';

    // The beacon, through the route and through its fast path (the site is cached after one hit).
    const pixel = await (
      await fetch(`${api}/pixel-install`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-service-key': serviceKey },
        body: JSON.stringify({ domain: 'beacon-nul.example.com' }),
      })
    ).json();
    const beacon = (query: string) => `${api}/beacon?${query}`;
    const page = encodeURIComponent('https://beacon-nul.example.com/page');
    const beacons = [
      await send('beacon site', [beacon('site=%00'), {}]),
      await send('beacon url', [
        beacon(`site=${pixel.site_id}&url=https%3A%2F%2Fbeacon-nul.example.com%2F%00`),
        {},
      ]),
    ];
    expect((await fetch(beacon(`site=${pixel.site_id}&url=${page}`))).status).toBe(204);
    beacons.push(
      await send('beacon ref (cached site)', [beacon(`site=${pixel.site_id}&url=${page}&ref=a%00b`), {}]),
    );
    expect(beacons.map((o) => [o.attack, o.status, o.body.errors?.[0]?.field])).toEqual([
      ['beacon site', 400, 'site'],
      ['beacon url', 400, 'url'],
      ['beacon ref (cached site)', 400, 'ref'],
    ]);

    // Dynamic client registration and the authorization server's endpoints.
    const dcr = await send('registration', [
      `${auth}/oauth/clients/register`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ redirect_uris: ['http://127.0.0.1:9/cb'], client_name: 'a\u0000b' }),
      },
    ]);
    expect([dcr.status, JSON.parse(dcr.body).error]).toEqual([400, 'invalid_client_metadata']);
    const metadata = await (await fetch(`${auth}/.well-known/openid-configuration`)).json();
    const authorize = await send('authorize', [
      `${metadata.authorization_endpoint}?client_id=x&response_type=code&state=a%00b`,
      { redirect: 'manual' },
    ]);
    expect([authorize.status, JSON.parse(authorize.body).error]).toEqual([400, 'invalid_request']);
    const tokenRequests: Record<string, string>[] = [
      { grant_type: 'authorization_code', client_id: 'a\u0000b', code: 'x', code_verifier: 'v'.repeat(43) },
      { grant_type: 'refresh_token', client_id: 'x', refresh_token: 'a\u0000b' },
    ];
    for (const body of tokenRequests) {
      const token = await send('token', [
        metadata.token_endpoint,
        { method: 'POST', headers: { 'content-type': form }, body: new URLSearchParams(body) },
      ]);
      expect(token.status, token.body).toBeGreaterThanOrEqual(400);
      expect(token.status, token.body).toBeLessThan(500);
    }

    // The sign-in and consent forms, driven like a browser.
    const redirectUri = 'http://127.0.0.1:9/cb';
    const client = await (
      await fetch(metadata.registration_endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ redirect_uris: [redirectUri], token_endpoint_auth_method: 'none' }),
      })
    ).json();
    const jar = new CookieJar();
    const start = `${metadata.authorization_endpoint}?${new URLSearchParams({
      client_id: client.client_id,
      redirect_uri: redirectUri,
      response_type: 'code',
      scope: 'agent-service',
      resource: `${service.config.mcp_url}/auth`,
      code_challenge: 'c'.repeat(43),
      code_challenge_method: 'S256',
    })}`;
    const flow = await authorizeInBrowser(start, owner, {
      jar,
      stopAt: (url) => url.includes('/interaction/'),
    });
    const signIn = await jar.fetch(flow.redirect.href);
    const signInHtml = await signIn.text();
    const submit = (html: string, url: string, fields: Record<string, string>) =>
      jar.fetch(new URL(formAction(html) as string, url).href, {
        method: 'POST',
        headers: { 'content-type': form },
        body: new URLSearchParams({ csrf: formField(html, 'csrf') as string, ...fields }),
      });
    const forms: [string, Response][] = [
      [
        'sign-in email',
        await submit(signInHtml, flow.redirect.href, { email: `${owner.email}\u0000`, password: 'x' }),
      ],
      [
        'sign-in password',
        await submit(signInHtml, flow.redirect.href, { email: owner.email, password: 'x\u0000' }),
      ],
    ];
    const signedIn = await submit(signInHtml, flow.redirect.href, owner);
    expect(signedIn.status).toBe(303);
    let url = new URL(signedIn.headers.get('location') as string, flow.redirect).href;
    let consent = await jar.fetch(url);
    while (consent.status === 303) {
      url = new URL(consent.headers.get('location') as string, url).href;
      consent = await jar.fetch(url);
    }
    const consentHtml = await consent.text();
    expect(consentHtml).toContain('name="decision"');
    forms.push(['consent decision', await submit(consentHtml, url, { decision: 'approve\u0000' })]);

    // The claim form of an anonymous session, and its page.
    const signup = await (await fetch(`${auth}/signup`, { method: 'POST', body: 'a\u0000b' })).json();
    const claimJar = new CookieJar();
    const claimPage = await claimJar.fetch(signup.claim_url);
    const claimHtml = await claimPage.text();
    const claim = (fields: Record<string, string>) =>
      claimJar.fetch(new URL(formAction(claimHtml) as string, signup.claim_url).href, {
        method: 'POST',
        headers: { 'content-type': form },
        body: new URLSearchParams({
          csrf: formField(claimHtml, 'csrf') as string,
          claim: formField(claimHtml, 'claim') as string,
          ...fields,
        }),
      });
    forms.push([
      'claim sign-in email',
      await claim({ mode: 'signin', email: `${owner.email}\u0000`, password: 'x' }),
    ]);
    forms.push([
      'claim create email',
      await claim({ mode: 'create', email: 'a\u0000@example.com', password: 'x'.repeat(12) }),
    ]);
    forms.push(['claim page', await fetch(`${site}/register?claim=%00`)]);
    forms.push([
      'claim cookie not percent-encoding',
      await fetch(`${site}/register`, {
        method: 'POST',
        headers: { 'content-type': form, cookie: 'agsvc_claim=%E0%A4%A' },
        body: 'claim=x&csrf=y',
      }),
    ]);
    expect(forms.map(([name, res]) => [name, res.status])).toEqual([
      ['sign-in email', 400],
      ['sign-in password', 400],
      ['consent decision', 400],
      ['claim sign-in email', 400],
      ['claim create email', 400],
      ['claim page', 400],
      ['claim cookie not percent-encoding', 403],
    ]);
  });

  it('leaves a NUL in the service key header to the HTTP parser: 400, not 500', async () => {
    const url = new URL(`${service.config.public_api_url}/account/keys`);
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(Number(url.port), url.hostname, () => {
        socket.end(
          `GET ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nx-service-key: agsvc_sk_a\u0000b\r\n\r\n`,
        );
      });
      let data = '';
      socket.on('data', (chunk) => {
        data += chunk;
      });
      socket.on('end', () => resolve(data));
      socket.on('error', reject);
    });
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
  });

  it('stored no text holding NUL in any table', async () => {
    const { db } = service.db.handle;
    const tables =
      dialect === 'sqlite'
        ? await sql<{ name: string }>`select name from sqlite_master where type = 'table'`.execute(db)
        : await sql<{ name: string }>`select table_name as name from information_schema.tables
            where table_schema = current_schema() and table_type = 'BASE TABLE'`.execute(db);
    expect(tables.rows.length).toBeGreaterThan(10);
    const holding: string[] = [];
    for (const { name } of tables.rows) {
      const rows = await sql<Record<string, unknown>>`select * from ${sql.table(name)}`.execute(db);
      for (const row of rows.rows) {
        for (const [column, value] of Object.entries(row)) {
          const text =
            typeof value === 'string'
              ? value
              : value && typeof value === 'object'
                ? JSON.stringify(value)
                : '';
          if (text.includes('\u0000') || text.includes('\\u0000')) holding.push(`${name}.${column}`);
        }
      }
    }
    // The attacks that were valid apart from their NUL would have been stored by these routes.
    expect(holding).toEqual([]);
  });
});
