/**
 * Both MCP protocol eras on both MCP servers, with the SDK's own clients: the v2 client
 * (`@modelcontextprotocol/client`) in `legacy` mode (initialize, 2025-11-25), `auto` mode
 * (server/discover, then 2026-07-28) and pinned to 2026-07-28, and the v1 client
 * (`@modelcontextprotocol/sdk`). Each calls a free tool, a paid tool (paid with `@x402/fetch`'s
 * signer through `_meta["x402/payment"]`) and, on the owner server, an owner tool with a token from
 * a real OAuth flow (dynamic registration, PKCE, the sign-in and consent pages). Then every
 * 2026-07-28 error path the specification names, on both servers, over raw HTTP: the code and HTTP
 * status the SDK's stateless entry answers, never a 5xx.
 */

import {
  Client as ClientV2,
  StreamableHTTPClientTransport as TransportV2,
} from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { PaymentRequired } from '@x402/core/types';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MODERN_PROTOCOL_VERSIONS, PROTOCOL_VERSIONS } from '../../servers/adapters/mcp.ts';
import { dialects } from '../helpers/databases.ts';
import { type FixtureSite, startFixtureSite } from '../helpers/fixture-sites.ts';
import { type OwnerCredentials, OwnerTokenClient } from '../helpers/oauth.ts';
import { TEST_PRICE_ATOMIC, withTestSku } from '../helpers/paid-operations.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { newAccount, stockClient } from '../helpers/x402-payer.ts';

// biome-ignore lint/suspicious/noExplicitAny: answers are checked structurally
type Json = Record<string, any>;

const MODERN = '2026-07-28';
type Mode = 'v2 legacy' | 'v2 auto' | 'v2 pinned 2026-07-28' | 'v1';
const modes: Mode[] = ['v2 legacy', 'v2 auto', 'v2 pinned 2026-07-28', 'v1'];

/** What a test needs of either SDK's client. */
interface AnyClient {
  era: 'legacy' | 'modern';
  listTools(): Promise<{ tools: { name: string; outputSchema?: Json }[] }>;
  callTool(
    params: { name: string; arguments?: Json; _meta?: Json },
    onprogress?: (p: { progress: number; total?: number }) => void,
  ): Promise<Json>;
  close(): Promise<void>;
}

async function connect(mode: Mode, url: string, token?: string): Promise<AnyClient> {
  const requestInit = token ? { headers: { authorization: `Bearer ${token}` } } : undefined;
  type Progress = (p: { progress: number; total?: number }) => void;
  const options = (onprogress?: Progress) => ({ timeout: 30_000, ...(onprogress ? { onprogress } : {}) });
  if (mode === 'v1') {
    const client = new ClientV1({ name: 'era-test-v1', version: '1' });
    await client.connect(new TransportV1(new URL(url), requestInit ? { requestInit } : {}));
    return {
      era: 'legacy',
      listTools: () => client.listTools() as never,
      // v1: callTool(params, resultSchema, options).
      callTool: (params, onprogress) =>
        client.callTool(params, undefined, options(onprogress)) as Promise<Json>,
      close: () => client.close(),
    };
  }
  const negotiation =
    mode === 'v2 legacy'
      ? { mode: 'legacy' as const }
      : mode === 'v2 auto'
        ? { mode: 'auto' as const }
        : { mode: { pin: MODERN } };
  const client = new ClientV2({ name: 'era-test-v2', version: '1' }, { versionNegotiation: negotiation });
  await client.connect(new TransportV2(new URL(url), requestInit ? { requestInit } : {}));
  return {
    era: client.getProtocolEra() === 'modern' ? 'modern' : 'legacy',
    listTools: () => client.listTools() as never,
    callTool: (params, onprogress) => client.callTool(params, options(onprogress)) as Promise<Json>,
    close: () => client.close(),
  };
}

/** One raw POST to an MCP endpoint: status and parsed JSON answer (or SSE events). */
async function post(url: string, headers: Record<string, string>, body: unknown) {
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let json: Json | undefined;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, json, text };
}

/** The `_meta` envelope of a 2026-07-28 request. */
const envelope = (version = MODERN) => ({
  'io.modelcontextprotocol/protocolVersion': version,
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
});

/** A 2026-07-28 request and the standard headers that go with it (MCP 2026-07-28, SEP-2243). */
function modernRequest(method: string, params: Json = {}, name?: string) {
  return {
    headers: {
      'mcp-protocol-version': MODERN,
      'mcp-method': method,
      ...(name ? { 'mcp-name': name } : {}),
    } as Record<string, string>,
    body: { jsonrpc: '2.0', id: 7, method, params: { ...params, _meta: { ...envelope(), ...params._meta } } },
  };
}

/** A 2026-07-28 request with any of its parts mutated: method, id, name, arguments, envelope, headers, batch. */
function mutatedModernRequest() {
  const value = fc.oneof(
    fc.constant(undefined),
    fc.constant(null),
    fc.string({ maxLength: 12 }),
    fc.integer(),
    fc.boolean(),
    fc.constant({}),
    fc.constant([]),
    fc.constant(MODERN),
    fc.constant('2025-11-25'),
  );
  return fc.record({
    server: fc.constantFrom('public', 'owner'),
    method: fc.constantFrom('tools/call', 'tools/list', 'server/discover', 'initialize', 'ping', 'x/y', 5),
    id: fc.oneof(fc.integer(), fc.string({ maxLength: 5 }), fc.constant(null), fc.constant(undefined)),
    name: fc.oneof(fc.constant('lookup_card_charge'), fc.constant('get_owner_context'), value),
    args: fc.oneof(fc.constant({}), value),
    version: value,
    capabilities: value,
    clientInfo: value,
    requestState: value,
    headerVersion: value,
    headerMethod: value,
    headerName: value,
    batch: fc.boolean(),
  });
}

/**
 * A 2026-07-28 tools/call or tools/list the shared server would take, with a few of its members
 * changed or added: the id, extra members at each level, each envelope key, progress and other
 * `_meta` keys, the tool name and arguments, and each standard header.
 */
function nearMissModernRequest() {
  /** Each member's value in a request the shared server takes, then its changes. */
  const choices = {
    method: ['tools/call', 'tools/list', 'tools/List'],
    id: [7, 'seven', 2 ** 53, 1.5, null, undefined],
    extra: [undefined, { result: {} }, { error: 1 }, { other: 1 }],
    name: [
      'lookup_card_charge',
      'test_echo',
      'no_such_tool',
      '=?base64?bG9va3VwX2NhcmRfY2hhcmdl?=',
      5,
      undefined,
    ],
    args: [{ charge: 'NETFLIX.COM' }, {}, [], 'x', null, undefined, { text: 'near' }],
    params: [undefined, { cursor: 'c' }, { task: { ttl: 1 } }, { requestState: 's' }, { inputResponses: {} }],
    version: [MODERN, '2025-11-25', '2026-07-29', 5, undefined],
    clientInfo: [{ name: 'near', version: '1' }, undefined, 'x', { name: 1 }, {}],
    capabilities: [{}, undefined, 'none', { sampling: 5 }, []],
    meta: [
      undefined,
      { progressToken: 'p' },
      { 'x402/payment': { x402Version: 2 } },
      { traceparent: 'x' },
      { 'io.modelcontextprotocol/logLevel': 'debug' },
      { 'io.modelcontextprotocol/related-task': { taskId: 1 } },
    ],
    headerVersion: [MODERN, undefined, '2025-11-25', ` ${MODERN}`],
    headerMethod: ['same', undefined, 'tools/list', 'TOOLS/CALL'],
    headerName: ['same', undefined, 'other', 'LOOKUP_CARD_CHARGE'],
    batch: [false, true],
  } as const;
  type Choice = keyof typeof choices;
  const keys = Object.keys(choices) as Choice[];
  // Up to three members changed, each to one of its other values.
  return fc
    .array(fc.tuple(fc.constantFrom(...keys), fc.nat()), { maxLength: 3 })
    .map((changes) => {
      const r = Object.fromEntries(keys.map((k) => [k, choices[k][0]])) as Record<Choice, unknown>;
      for (const [key, n] of changes) r[key] = choices[key][1 + (n % (choices[key].length - 1))];
      return r;
    })
    .map((r) => {
      const meta: Json = { ...(r.meta as Json | undefined) };
      if (r.version !== undefined) meta['io.modelcontextprotocol/protocolVersion'] = r.version;
      if (r.clientInfo !== undefined) meta['io.modelcontextprotocol/clientInfo'] = r.clientInfo;
      if (r.capabilities !== undefined) meta['io.modelcontextprotocol/clientCapabilities'] = r.capabilities;
      const params: Json = { ...(r.params as Json | undefined), _meta: meta };
      if (r.method !== 'tools/list') {
        if (r.name !== undefined) params.name = r.name;
        if (r.args !== undefined) params.arguments = r.args;
      }
      const message: Json = { jsonrpc: '2.0', method: r.method, params, ...(r.extra as Json | undefined) };
      if (r.id !== undefined) message.id = r.id;
      const headers: Record<string, string> = {};
      if (r.headerVersion !== undefined) headers['mcp-protocol-version'] = r.headerVersion as string;
      if (r.headerMethod !== undefined)
        headers['mcp-method'] = r.headerMethod === 'same' ? String(r.method) : (r.headerMethod as string);
      if (r.headerName !== undefined && typeof params.name === 'string')
        headers['mcp-name'] = r.headerName === 'same' ? params.name : (r.headerName as string);
      return { headers, body: r.batch ? [message] : message };
    });
}

type MutatedRequest = ReturnType<typeof mutatedModernRequest> extends fc.Arbitrary<infer T> ? T : never;

/** The headers and body of a mutated request (with a bearer token for the owner server). */
function wireOf(r: MutatedRequest, token?: string): { headers: Record<string, string>; body: unknown } {
  const meta: Json = {};
  if (r.version !== undefined) meta['io.modelcontextprotocol/protocolVersion'] = r.version;
  if (r.capabilities !== undefined) meta['io.modelcontextprotocol/clientCapabilities'] = r.capabilities;
  if (r.clientInfo !== undefined) meta['io.modelcontextprotocol/clientInfo'] = r.clientInfo;
  const message: Json = {
    jsonrpc: '2.0',
    method: r.method,
    params: { name: r.name, arguments: r.args, requestState: r.requestState, _meta: meta },
  };
  if (r.id !== undefined) message.id = r.id;
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  for (const [header, v] of [
    ['mcp-protocol-version', r.headerVersion],
    ['mcp-method', r.headerMethod],
    ['mcp-name', r.headerName],
  ] as const)
    if (v !== undefined && v !== null && typeof v !== 'object') headers[header] = String(v);
  return { headers, body: r.batch ? [message] : message };
}

describe.each(dialects)('both MCP eras on both servers (%s)', (dialect) => {
  let service: TestService;
  let site: FixtureSite;
  let token: string;
  let accountId: string;
  let publicUrl: string;
  let ownerUrl: string;
  const payTo = newAccount().address;
  const owner: OwnerCredentials = {
    email: `eras-${dialect}@example.com`,
    password: 'a long enough passphrase',
  };

  beforeAll(async () => {
    site = await startFixtureSite('wellPrepared');
    service = await startTestService(
      dialect,
      {
        'payments.pay_to': payTo,
        'scanner.allow_private_networks': true,
        'scanner.delay_ms': 100,
        'scanner.poll_interval_ms': 50,
        'scanner.workers': 1,
      },
      { operations: withTestSku() },
    );
    publicUrl = service.config.mcp_url;
    ownerUrl = `${service.config.mcp_url}/auth`;
    accountId = (await service.services.accounts.create(owner)).account.id;
    await service.services.sites.register(accountId, `eras-${dialect}.example.com`);
    const oauthClient = await OwnerTokenClient.register(service.config.auth_url);
    token = (await oauthClient.tokens(owner, ownerUrl)).access_token;
  });
  afterAll(async () => {
    await service?.close();
    await site?.close();
  });

  describe.each(modes)('with the %s client', (mode) => {
    const era = mode === 'v2 auto' || mode === 'v2 pinned 2026-07-28' ? 'modern' : 'legacy';

    it(`lists the public tools in registry order and calls a free and a paid one (${era} era)`, async () => {
      const client = await connect(mode, publicUrl);
      try {
        expect(client.era).toBe(era);
        const { tools } = await client.listTools();
        expect(tools.map((t) => t.name)).toEqual(
          withTestSku()
            .filter((op) => op.mcp?.includes('public'))
            .map((op) => op.toolName),
        );
        const free = await client.callTool({
          name: 'lookup_card_charge',
          arguments: { charge: 'SQ *BLUE BOTTLE COFFEE Oakland CA' },
        });
        expect(free.isError).toBeFalsy();
        expect(free.structuredContent).toMatchObject({
          processor: { name: 'Square' },
          merchant: { name: 'BLUE BOTTLE COFFEE' },
        });
        expect(JSON.parse(free.content[0].text)).toEqual(free.structuredContent);

        const text = `paid in the ${era} era by ${mode}`;
        const unpaid = await client.callTool({ name: 'test_echo', arguments: { text } });
        expect(unpaid.isError).toBe(true);
        const required = unpaid.structuredContent as Json;
        expect(required).toMatchObject({ x402Version: 2, accepts: [{ amount: TEST_PRICE_ATOMIC, payTo }] });
        expect(JSON.parse(unpaid.content[0].text)).toEqual(required);
        const payer = newAccount();
        const payload = await stockClient(payer).createPaymentPayload(required as unknown as PaymentRequired);
        const paid = await client.callTool({
          name: 'test_echo',
          arguments: { text },
          _meta: { 'x402/payment': payload },
        });
        expect(paid.isError).toBeFalsy();
        expect(paid.structuredContent).toMatchObject({ echo: text, run: 1 });
        expect(paid._meta?.['x402/payment-response']).toMatchObject({
          success: true,
          payer: payer.address.toLowerCase(),
        });
      } finally {
        await client.close();
      }
    });

    it(`reports a long tool's progress, always increasing (${era} era)`, async () => {
      const client = await connect(mode, publicUrl);
      try {
        const seen: { progress: number; total?: number }[] = [];
        const result = await client.callTool(
          { name: 'request_scan', arguments: { domain: site.domain } },
          (p) => seen.push(p),
        );
        expect(result.isError).toBeFalsy();
        expect((result.structuredContent as Json).status).toBe('done');
        expect(seen.length, JSON.stringify(seen)).toBeGreaterThan(1);
        seen.forEach((p, i) => {
          const previous = seen[i - 1];
          if (previous) expect(p.progress).toBeGreaterThan(previous.progress);
        });
      } finally {
        await client.close();
      }
    });

    it(`calls owner tools with the OAuth token, this account's rows only (${era} era)`, async () => {
      const client = await connect(mode, ownerUrl, token);
      try {
        expect(client.era).toBe(era);
        const { tools } = await client.listTools();
        expect(tools.map((t) => t.name)).toEqual(
          withTestSku()
            .filter((op) => op.mcp?.includes('owner'))
            .map((op) => op.toolName),
        );
        const context = await client.callTool({ name: 'get_owner_context', arguments: {} });
        expect(context.isError).toBeFalsy();
        expect(context.structuredContent).toMatchObject({ account_id: accountId, scopes: ['agent-service'] });
        const sites = await client.callTool({ name: 'list_my_sites', arguments: {} });
        expect(
          (sites.structuredContent as { sites: { domain: string }[] }).sites.map((s) => s.domain),
        ).toEqual([`eras-${dialect}.example.com`]);
      } finally {
        await client.close();
      }
    });
  });

  describe('2026-07-28 on the wire', () => {
    it("answers server/discover with both servers' identity, the era and cache fields", async () => {
      for (const [url, scope, auth] of [
        [publicUrl, 'public', {}],
        [ownerUrl, 'private', { authorization: `Bearer ${token}` }],
      ] as const) {
        const { headers, body } = modernRequest('server/discover');
        const answer = await post(url, { ...headers, ...auth }, body);
        expect(answer.status).toBe(200);
        expect(answer.json?.result).toMatchObject({
          supportedVersions: [...MODERN_PROTOCOL_VERSIONS],
          capabilities: { tools: { listChanged: false } },
          resultType: 'complete',
          cacheScope: scope,
          ttlMs: expect.any(Number),
        });
        expect(answer.headers.get('mcp-session-id')).toBeNull();
        const list = modernRequest('tools/list');
        const tools = await post(url, { ...list.headers, ...auth }, list.body);
        expect(tools.json?.result).toMatchObject({ cacheScope: scope, ttlMs: expect.any(Number) });
      }
      expect(PROTOCOL_VERSIONS.slice(0, MODERN_PROTOCOL_VERSIONS.length)).toEqual([
        ...MODERN_PROTOCOL_VERSIONS,
      ]);
    });

    it('answers the same tool call the same in both eras, a result and its structured content', async () => {
      const args = { charge: 'CHECKCARD 0312 NETFLIX.COM 866-579-7172 CA' };
      const { headers, body } = modernRequest(
        'tools/call',
        { name: 'lookup_card_charge', arguments: args },
        'lookup_card_charge',
      );
      const modern = await post(publicUrl, headers, body);
      const legacy = await post(
        publicUrl,
        {},
        {
          jsonrpc: '2.0',
          id: 7,
          method: 'tools/call',
          params: { name: 'lookup_card_charge', arguments: args },
        },
      );
      expect(modern.status).toBe(200);
      expect(modern.json?.result.structuredContent).toEqual(legacy.json?.result.structuredContent);
      expect(modern.json?.result.resultType).toBe('complete');
      expect(legacy.json?.result.resultType).toBeUndefined();
    });

    it('refuses a 2026-07-28 request without a valid token on the owner server, as in 2025-11-25', async () => {
      const { headers, body } = modernRequest('tools/list');
      const anonymous = await post(ownerUrl, headers, body);
      expect(anonymous.status).toBe(401);
      expect(anonymous.headers.get('www-authenticate')).toContain(
        `resource_metadata="${ownerUrl}/.well-known/oauth-protected-resource"`,
      );
      const forged = await post(ownerUrl, { ...headers, authorization: 'Bearer not-a-token' }, body);
      expect(forged.status).toBe(401);
    });

    it('never answers a 5xx to a mutated 2026-07-28 request, on either server', async () => {
      await fc.assert(
        fc.asyncProperty(mutatedModernRequest(), async (r) => {
          const { headers, body } = wireOf(r, r.server === 'owner' ? token : undefined);
          const answer = await post(r.server === 'public' ? publicUrl : ownerUrl, headers, body);
          expect(answer.status, `${JSON.stringify(r)} -> ${answer.text}`).toBeLessThan(500);
        }),
        { numRuns: 300 },
      );
    });

    it('answers every 2026-07-28 request on the shared server exactly as the SDK entry does (mcp.shared_modern_server off)', async () => {
      // The same database, the same tools; the second service serves every 2026-07-28 request
      // through the SDK's createMcpHandler, a server per request.
      const entry = await startTestService(
        dialect,
        { 'payments.pay_to': payTo, 'mcp.shared_modern_server': false },
        { operations: withTestSku(), database: service.db },
      );
      try {
        const entryUrl = entry.config.mcp_url;
        /** An answer with each service's own origin (in x402 resource URLs) made alike; JSON as values (members in any order). */
        const comparable = (answer: Awaited<ReturnType<typeof post>>) => {
          const alike = (text: string) => text.replace(/http:\/\/127\.0\.0\.1:\d+/g, 'http://origin');
          return {
            status: answer.status,
            type: answer.headers.get('content-type'),
            body: answer.json ? JSON.parse(alike(JSON.stringify(answer.json))) : alike(answer.text),
          };
        };
        const same = async (headers: Record<string, string>, body: unknown) => {
          const [shared, perRequest] = await Promise.all([
            post(publicUrl, headers, body),
            post(entryUrl, headers, body),
          ]);
          const label = `${JSON.stringify(headers)} ${JSON.stringify(body)}`;
          expect(comparable(shared), label).toEqual(comparable(perRequest));
          return shared;
        };
        const call = (name: string, params: Json = {}, nameHeader: string | undefined = name) =>
          modernRequest('tools/call', { name, ...params }, nameHeader);
        const args = { charge: 'CHECKCARD 0312 NETFLIX.COM 866-579-7172 CA' };
        const cases = [
          modernRequest('tools/list'),
          call('lookup_card_charge', { arguments: args }),
          call('lookup_card_charge', { arguments: {} }),
          call('lookup_card_charge'),
          call('no_such_tool', { arguments: {} }),
          call('test_echo', { arguments: { text: 'unpaid' } }),
          call('test_echo', { arguments: { text: 7 } }),
          // Not the shared server's: the SDK entry answers them on both.
          call('lookup_card_charge', { arguments: [] }),
          call('lookup_card_charge', { arguments: args, requestState: 'forged' }),
          call('lookup_card_charge', { arguments: args, task: { ttl: 1 } }),
          call('lookup_card_charge', { arguments: args }, `=?base64?${btoa('lookup_card_charge')}?=`),
          modernRequest('tools/list', { cursor: 'x' }),
          modernRequest('ping'),
        ];
        for (const { headers, body } of cases) await same(headers, body);
        const listed = await same(modernRequest('tools/list').headers, modernRequest('tools/list').body);
        expect(listed.json?.result).toMatchObject({ resultType: 'complete', cacheScope: 'public' });
        // Which path answered a tool call shows in the framing alone: the multiplexing transport
        // writes a tool result with `jsonrpc` and `id` first (`replyJson`), the SDK's per-request
        // transport the SDK's message as it is (`result` first). Same answers: the shared server
        // did answer.
        const lookup = call('lookup_card_charge', { arguments: args });
        const [shared, perRequest] = await Promise.all([
          post(publicUrl, lookup.headers, lookup.body),
          post(entryUrl, lookup.headers, lookup.body),
        ]);
        expect(shared.text.startsWith('{"jsonrpc":"2.0","id":7,"result":')).toBe(true);
        expect(perRequest.text.startsWith('{"result":')).toBe(true);
        await fc.assert(
          fc.asyncProperty(mutatedModernRequest(), async (r) => {
            const { headers, body } = wireOf(r);
            await same(headers, body);
          }),
          { numRuns: 100 },
        );
        // Near misses of what the shared server takes: one valid request, a few members changed.
        await fc.assert(
          fc.asyncProperty(nearMissModernRequest(), async ({ headers, body }) => {
            await same(headers, body);
          }),
          { numRuns: 250 },
        );
      } finally {
        await entry.close();
      }
    });

    describe.each(['public', 'owner'] as const)('error paths on the %s server', (server) => {
      const url = () => (server === 'public' ? publicUrl : ownerUrl);
      const auth = (): Record<string, string> =>
        server === 'owner' ? { authorization: `Bearer ${token}` } : {};
      const tool = () => (server === 'public' ? 'lookup_card_charge' : 'get_owner_context');
      const expectError = (answer: Awaited<ReturnType<typeof post>>, status: number, code: number) => {
        expect(answer.status, answer.text).toBe(status);
        expect(answer.json?.error?.code, answer.text).toBe(code);
        expect(answer.json?.jsonrpc).toBe('2.0');
      };

      it('an unknown or unsupported protocol version in _meta: -32022 with the supported ones, 400', async () => {
        for (const version of ['2099-01-01', '2030-02-30']) {
          const { headers, body } = modernRequest('tools/list');
          body.params._meta['io.modelcontextprotocol/protocolVersion'] = version;
          const answer = await post(url(), { ...auth(), ...headers, 'mcp-protocol-version': version }, body);
          expectError(answer, 400, -32022);
          expect(answer.json?.error?.data?.supported).toEqual([...MODERN_PROTOCOL_VERSIONS]);
        }
      });

      it('a header that does not match the body: -32020, 400', async () => {
        const { headers, body } = modernRequest('tools/call', { name: tool(), arguments: {} }, tool());
        const wrongs: Record<string, string>[] = [
          { 'mcp-method': 'tools/list' },
          { 'mcp-name': 'another_tool' },
          { 'mcp-protocol-version': '2025-11-25' },
        ];
        for (const wrong of wrongs) {
          const answer = await post(url(), { ...auth(), ...headers, ...wrong }, body);
          expect(answer.status, `${JSON.stringify(wrong)}: ${answer.text}`).toBe(400);
          expect([-32020, -32602], `${JSON.stringify(wrong)}: ${answer.text}`).toContain(
            answer.json?.error?.code,
          );
        }
        const mismatch = await post(url(), { ...auth(), ...headers, 'mcp-method': 'tools/list' }, body);
        expectError(mismatch, 400, -32020);
      });

      it('a required header missing: -32020, 400', async () => {
        const { headers, body } = modernRequest('tools/call', { name: tool(), arguments: {} }, tool());
        for (const missing of ['mcp-method', 'mcp-name', 'mcp-protocol-version']) {
          const { [missing]: _dropped, ...rest } = headers;
          const answer = await post(url(), { ...auth(), ...rest }, body);
          expectError(answer, 400, -32020);
        }
      });

      it('a requestState this server never issued: -32602, never served', async () => {
        const { headers, body } = modernRequest(
          'tools/call',
          { name: tool(), arguments: {}, requestState: 'eyJzdGVwIjoidGFtcGVyZWQifQ.forged' },
          tool(),
        );
        const answer = await post(url(), { ...auth(), ...headers }, body);
        expect(answer.status).toBeLessThan(500);
        expect(answer.json?.error?.code, answer.text).toBe(-32602);
      });

      it('methods this server does not serve: -32601; 2025-only ones in the 2026 era too', async () => {
        for (const method of ['resources/list', 'prompts/list', 'no/such/method', 'logging/setLevel']) {
          const { headers, body } = modernRequest(
            method,
            method === 'logging/setLevel' ? { level: 'info' } : {},
          );
          const answer = await post(url(), { ...auth(), ...headers }, body);
          expect(answer.status, `${method}: ${answer.text}`).toBeLessThan(500);
          expect(answer.status, `${method}: ${answer.text}`).toBeGreaterThanOrEqual(200);
          expect(answer.json?.error?.code, `${method}: ${answer.text}`).toBe(-32601);
        }
      });

      it('a malformed envelope or params: Invalid params naming the fault, never a 5xx', async () => {
        const bad: { headers: Record<string, string>; body: Json }[] = [];
        const noCaps = modernRequest('tools/list');
        delete noCaps.body.params._meta['io.modelcontextprotocol/clientCapabilities'];
        bad.push(noCaps);
        const badName = modernRequest('tools/call', { name: 5, arguments: {} }, '5');
        bad.push(badName);
        const noEnvelope = modernRequest('tools/list');
        delete (noEnvelope.body.params as Json)._meta;
        bad.push(noEnvelope);
        for (const { headers, body } of bad) {
          const answer = await post(url(), { ...auth(), ...headers }, body);
          // Refused before dispatch: 400; by the handler: in-band, 200 (the SDK's stateless entry).
          expect([200, 400], answer.text).toContain(answer.status);
          expect(answer.json?.error?.code, answer.text).toBe(-32602);
        }
      });
    });
  });
});
