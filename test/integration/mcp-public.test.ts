/**
 * The public MCP server with the MCP SDK's own client over Streamable HTTP.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../servers/registry.ts';
import { dialects } from '../helpers/databases.ts';
import { type FixtureSite, startFixtureSite } from '../helpers/fixture-sites.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

describe.each(dialects)('public MCP server (%s)', (dialect) => {
  let service: TestService;
  let client: Client;
  let site: FixtureSite;
  let other: FixtureSite;

  beforeAll(async () => {
    [site, other] = await Promise.all([startFixtureSite('wellPrepared'), startFixtureSite('bare')]);
    service = await startTestService(dialect, {
      'rate_limits.unauthenticated_writes.points': 1000,
      'scanner.allow_private_networks': true,
      'scanner.delay_ms': 100,
      'scanner.request_timeout_ms': 1000,
      'scanner.poll_interval_ms': 50,
      'scanner.workers': 1,
    });
    client = new Client({ name: 'test-client', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(service.config.mcp_url)));
  });
  afterAll(async () => {
    await client?.close();
    await service?.close();
    await Promise.all([site, other].map((s) => s?.close()));
  });

  it('negotiates protocol 2025-11-25 and declares tools', () => {
    expect(LATEST_PROTOCOL_VERSION).toBe('2025-11-25');
    expect(client.getServerCapabilities()?.tools).toBeDefined();
    expect(client.getServerVersion()?.name).toBe('agent-service-public');
    expect(client.getInstructions()).toMatch(/lookup_card_charge/);
  });

  it('lists every public tool with output schemas and annotations', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([
      'audit_entity',
      'bid_featured_slot',
      'book_embodiment',
      'boost_url',
      'buy_full_scan',
      'buy_signal_check',
      'buy_spotlight',
      'cancel_return_request',
      'generate_llms_txt',
      'get_agent_hub',
      'get_ai_search_data',
      'get_ai_tools',
      'get_brand_channels',
      'get_catalog',
      'get_credits',
      'get_embodiment_booking',
      'get_featured',
      'get_leaderboard',
      'get_payment',
      'get_readiness_index',
      'get_referral_balance',
      'get_return_status',
      'get_scan',
      'get_scan_diff',
      'get_scan_fixes',
      'get_scan_score',
      'get_signal',
      'get_soul',
      'get_soul_erc8004_registration',
      'list_agents',
      'list_scans',
      'list_services',
      'list_soul_memories',
      'lookup_card_charge',
      'request_scan',
      'research_person',
      'search_listings',
      'search_souls',
      'send_return_message',
      'start_return_request',
      'write_soul_memory',
    ]);
    for (const tool of tools) {
      expect(tool.outputSchema?.type).toBe('object');
      expect(tool.annotations?.readOnlyHint).toBeTypeOf('boolean');
    }
    expect(tools.find((t) => t.name === 'start_return_request')?.annotations?.readOnlyHint).toBe(false);
  });

  it('calls lookup_card_charge with structured content', async () => {
    const result = await client.callTool({
      name: 'lookup_card_charge',
      arguments: { charge: 'SQ *BLUE BOTTLE COFFEE Oakland CA' },
    });
    expect(result.isError).toBeFalsy();
    const content = result.structuredContent as {
      processor: { name: string };
      merchant: { name: string; city: string | null; region: string | null };
      matches: unknown[];
    };
    expect(content.processor.name).toBe('Square');
    expect(content.merchant).toMatchObject({ name: 'BLUE BOTTLE COFFEE', city: 'OAKLAND', region: 'CA' });
    expect(JSON.parse((result.content as { text: string }[])[0]?.text ?? '')).toEqual(content);
    // Asked again, the cached answer (frozen, its JSON kept) reads the same, text and structure.
    const again = await client.callTool({
      name: 'lookup_card_charge',
      arguments: { charge: 'SQ *BLUE BOTTLE COFFEE Oakland CA' },
    });
    expect(again).toEqual(result);
  });

  it('names the developer behind a store charge, with the store as processor', async () => {
    const result = await client.callTool({
      name: 'lookup_card_charge',
      arguments: { charge: 'GOOGLE *Zqvrx Games g.co/helppay#' },
    });
    const content = result.structuredContent as {
      processor: { name: string; kind: string };
      merchant: { name: string };
      matches: { domain: string; matched_on: string }[];
    };
    expect(content.processor).toMatchObject({ name: 'Google Play', kind: 'app_store' });
    expect(content.merchant.name).toBe('ZQVRX GAMES');
    expect(content.matches[0]).toMatchObject({ domain: 'google.com', matched_on: 'processor' });
  });

  it('starts a return request and reads its status through tools', async () => {
    const started = await client.callTool({
      name: 'start_return_request',
      arguments: {
        brand_domain: 'amazon.com',
        name: 'Jane Doe',
        contact: '+14155550123',
        order_number: '113-1234567-1234567',
      },
    });
    expect(started.isError).toBeFalsy();
    const { request_id, status_url } = started.structuredContent as {
      request_id: string;
      status_url: string;
    };
    expect(status_url).toContain(request_id);
    const status = await client.callTool({ name: 'get_return_status', arguments: { request_id } });
    expect(status.structuredContent).toMatchObject({ request_id, brand_domain: 'amazon.com' });
    expect(JSON.stringify(status.structuredContent)).not.toContain('+14155550123');
  });

  it('reports bad input as an isError result with the same code and fields as REST', async () => {
    const result = await client.callTool({
      name: 'start_return_request',
      arguments: { brand_domain: 'nope', name: 'x', contact: 'y' },
    });
    expect(result.isError).toBe(true);
    const error = JSON.parse((result.content as { text: string }[])[0]?.text ?? '');
    expect(error.code).toBe('validation_failed');
    expect(error.errors.map((e: { field: string }) => e.field).sort()).toEqual(['brand_domain', 'contact']);

    const missing = await client.callTool({
      name: 'get_return_status',
      arguments: { request_id: crypto.randomUUID() },
    });
    expect(missing.isError).toBe(true);
    expect(JSON.parse((missing.content as { text: string }[])[0]?.text ?? '').code).toBe('not_found');
  });

  it('answers an unknown tool with a JSON-RPC error, not a tool result', async () => {
    await expect(client.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toThrow(/Unknown tool/);
  });

  it('keeps concurrent clients apart even when they use the same JSON-RPC ids', async () => {
    const call = (charge: string) =>
      fetch(service.config.mcp_url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'lookup_card_charge', arguments: { charge } },
        }),
      }).then((r) => r.json());
    const charges = [
      'NETFLIX.COM',
      'STARBUCKS STORE 1234',
      'UBER *TRIP',
      'SPOTIFY P1A2B3C4D5',
      'TARGET 00012345',
    ];
    const replies = await Promise.all(charges.flatMap((c) => [call(c), call(c)]));
    replies.forEach((reply, i) => {
      expect(reply.id).toBe(1);
      expect(reply.result.structuredContent.charge).toBe(charges[Math.floor(i / 2)]);
    });
  });

  describe('transport rules', () => {
    const post = (body: unknown, headers: Record<string, string> = {}) =>
      fetch(service.config.mcp_url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...headers,
        },
        body: JSON.stringify(body),
      });
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    };

    it('rejects a foreign Host or Origin (DNS rebinding protection)', async () => {
      const { port } = new URL(service.url);
      const url = new URL(service.config.mcp_url);
      // fetch does not let a caller set Host; a raw request does.
      const http = await import('node:http');
      const status = await new Promise<number>((resolve, reject) => {
        const req = http.request(
          {
            host: '127.0.0.1',
            port,
            path: url.pathname,
            method: 'POST',
            headers: {
              host: 'evil.example.com',
              'content-type': 'application/json',
              accept: 'application/json, text/event-stream',
            },
          },
          (res) => resolve(res.statusCode ?? 0),
        );
        req.on('error', reject);
        req.end(JSON.stringify(initialize));
      });
      expect(status).toBe(403);
      expect((await post(initialize, { origin: 'http://evil.example.com' })).status).toBe(403);
      expect((await post(initialize, { origin: `http://localhost:${port}` })).status).toBe(200);
    });

    it('answers malformed tools/call params with Invalid params, not an internal error', async () => {
      for (const params of [
        { arguments: {} },
        { name: 'lookup_card_charge', arguments: 'x' },
        { name: 'lookup_card_charge', arguments: ['CHECKCARD NETFLIX.COM'] },
        { name: 'lookup_card_charge', arguments: null },
        { name: 42 },
      ]) {
        const reply = await (await post({ jsonrpc: '2.0', id: 9, method: 'tools/call', params })).json();
        expect(reply.id).toBe(9);
        expect(reply.error.code).toBe(-32602);
        expect(reply.error.message).toMatch(/Invalid tools\/call params: params\./);
        if ('name' in params && params.name === 'lookup_card_charge')
          expect(reply.error.message).toMatch(
            /Invalid tools\/call params: params\.arguments: Invalid input: expected an object$/,
          );
      }
    });

    it('answers notifications with 202, GET with 405, bad versions and bodies with 4xx', async () => {
      expect((await post({ jsonrpc: '2.0', method: 'notifications/initialized' })).status).toBe(202);
      const get = await fetch(service.config.mcp_url, { headers: { accept: 'text/event-stream' } });
      expect(get.status).toBe(405);
      expect(get.headers.get('allow')).toContain('POST');
      expect((await post(initialize, { 'mcp-protocol-version': '1999-01-01' })).status).toBe(400);
      expect((await post({ hello: 'world' })).status).toBe(400);
      const parse = await fetch(service.config.mcp_url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: '{nope',
      });
      expect(parse.status).toBe(400);
      expect((await parse.json()).error.code).toBe(-32700);
      const init = await post(initialize);
      expect((await init.json()).result.protocolVersion).toBe('2025-11-25');
    });
  });

  describe('at the edges of JSON-RPC 2.0 and MCP 2025-11-25', () => {
    type Message = {
      id?: unknown;
      method?: string;
      params?: Record<string, unknown>;
      result?: Record<string, unknown>;
      error?: { code: number; message: string };
    };
    /** POSTs a body as written (so ids JSON.stringify cannot express survive) and reads JSON or SSE. */
    const send = async (text: string): Promise<{ status: number; messages: Message[] }> => {
      const res = await fetch(service.config.mcp_url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: text,
      });
      const body = await res.text();
      if (res.headers.get('content-type')?.startsWith('text/event-stream')) {
        const data = body.split('\n').filter((line) => line.startsWith('data: '));
        return { status: res.status, messages: data.map((line) => JSON.parse(line.slice(6))) };
      }
      const parsed = body ? JSON.parse(body) : [];
      return { status: res.status, messages: Array.isArray(parsed) ? parsed : [parsed] };
    };
    const reply = async (request: unknown): Promise<Message> => {
      const { messages } = await send(JSON.stringify(request));
      const answer = messages.find((m) => m.method === undefined);
      if (!answer) throw new Error(`no reply in ${JSON.stringify(messages)}`);
      return answer;
    };
    const lookup = { name: 'lookup_card_charge', arguments: { charge: 'NETFLIX.COM' } };

    it('refuses integer ids it cannot echo exactly instead of answering under another id', async () => {
      // Beyond 2^53, or a fraction that parsing rounds to an integer (2^52 + 0.5 parses to 2^52).
      const altered = ['9007199254740993', '-9007199254740993', '9007199254740992', '4503599627370496.5'];
      for (const id of [...altered, '123456789.000000001', '1e-400', '1e400', '1.5']) {
        const { status, messages } = await send(`{"jsonrpc":"2.0","id":${id},"method":"ping"}`);
        expect(status).toBe(400);
        expect(messages).toHaveLength(1);
        expect(messages[0]?.id).toBeNull();
        expect(messages[0]?.error?.code).toBe(-32600);
        expect(messages[0]?.error?.message).toMatch(/\bid\b/);
      }
      // In a batch, as for any other malformed member, the whole POST is refused.
      const batch = await send(
        `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}]`,
      );
      expect(batch.status).toBe(400);
      expect(batch.messages[0]).toMatchObject({ id: null, error: { code: -32600 } });
      // The largest exact integer and any string come back as sent.
      const largest = await send(`{"jsonrpc":"2.0","id":9007199254740991,"method":"ping"}`);
      expect(largest.messages[0]).toEqual({ jsonrpc: '2.0', id: 9007199254740991, result: {} });
      const text = await send(`{"jsonrpc":"2.0","id":"9007199254740993","method":"ping"}`);
      expect(text.messages[0]?.id).toBe('9007199254740993');
      // Long numbers elsewhere in the body leave an exact id alone.
      const long = await send(
        `{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"lookup_card_charge","arguments":{"charge":"CARD 4111111111111111"},"_meta":{"n":45035996273704965e-1}}}`,
      );
      expect(long.messages[0]?.id).toBe(12);
      expect(long.messages[0]?.result?.isError).toBeFalsy();
    });

    it('refuses a progress token that is neither a string nor an integer, on every method', async () => {
      const paramsOf: Record<string, Record<string, unknown>> = {
        initialize: {
          protocolVersion: '2025-11-25',
          capabilities: {},
          clientInfo: { name: 'raw', version: '1' },
        },
        ping: {},
        'tools/list': {},
        'tools/call': lookup,
      };
      for (const [method, params] of Object.entries(paramsOf)) {
        for (const progressToken of [{ nested: 1 }, 1.5, true, null, [1], 2 ** 53]) {
          const answer = await reply({
            jsonrpc: '2.0',
            id: 7,
            method,
            params: { ...params, _meta: { progressToken } },
          });
          expect(answer.id).toBe(7);
          expect(answer.error?.code, `${method} ${JSON.stringify(progressToken)}`).toBe(-32602);
          expect(answer.error?.message).toContain('_meta.progressToken');
        }
        for (const meta of [5, 'x', [], null]) {
          const answer = await reply({ jsonrpc: '2.0', id: 8, method, params: { ...params, _meta: meta } });
          expect(answer.error?.code, `${method} _meta ${JSON.stringify(meta)}`).toBe(-32602);
          expect(answer.error?.message).toContain('_meta');
        }
        for (const progressToken of ['p-1', 3, -3]) {
          const answer = await reply({
            jsonrpc: '2.0',
            id: 'ok',
            method,
            params: { ...params, _meta: { progressToken } },
          });
          expect(answer.error, `${method} ${JSON.stringify(progressToken)}`).toBeUndefined();
          expect(answer.result).toBeDefined();
        }
      }
    });

    it('answers invalid params on initialize, ping and tools/list with Invalid params, not Internal error', async () => {
      const cases: [string, unknown, RegExp][] = [
        ['initialize', undefined, /params/],
        ['initialize', {}, /params\.protocolVersion/],
        [
          'initialize',
          { protocolVersion: 2025, capabilities: {}, clientInfo: { name: 'x', version: '1' } },
          /protocolVersion/,
        ],
        [
          'initialize',
          { protocolVersion: '2025-11-25', capabilities: 'all', clientInfo: { name: 'x', version: '1' } },
          /capabilities/,
        ],
        ['initialize', { protocolVersion: '2025-11-25', capabilities: {} }, /clientInfo/],
        ['ping', { _meta: 5 }, /_meta/],
        ['tools/list', { cursor: 5 }, /params\.cursor/],
        ['tools/list', { cursor: { next: 1 } }, /params\.cursor/],
      ];
      for (const [method, params, names] of cases) {
        const answer = await reply({
          jsonrpc: '2.0',
          id: 3,
          method,
          ...(params !== undefined ? { params } : {}),
        });
        expect(answer.id).toBe(3);
        expect(answer.error?.code, `${method} ${JSON.stringify(params)}`).toBe(-32602);
        expect(answer.error?.message).toMatch(names);
      }
      expect((await reply({ jsonrpc: '2.0', id: 4, method: 'ping' })).result).toEqual({});
      expect(
        (await reply({ jsonrpc: '2.0', id: 5, method: 'tools/list', params: {} })).result?.tools,
      ).toHaveLength(operations.filter((op) => op.mcp?.includes('public')).length);
    });

    it('sends request_scan progress that increases with every notification', async () => {
      // One scan worker and a polite crawl: the second scan waits queued behind the first, then
      // runs for several polls, so its caller sees it queued, starting, crawling and done.
      const scan = async (domain: string) => {
        const seen: { progress: number; total?: number }[] = [];
        const result = await client.callTool({ name: 'request_scan', arguments: { domain } }, undefined, {
          onprogress: (p) => seen.push(p),
          timeout: 30_000,
        });
        expect(result.isError).toBeFalsy();
        expect((result.structuredContent as { status: string }).status).toBe('done');
        return seen;
      };
      for (const seen of await Promise.all([scan(site.domain), scan(other.domain)])) {
        expect(seen.length).toBeGreaterThan(1);
        seen.forEach((p, i) => {
          const previous = seen[i - 1];
          if (previous) expect(p.progress, JSON.stringify(seen)).toBeGreaterThan(previous.progress);
          if (p.total !== undefined) expect(p.total, JSON.stringify(seen)).toBeGreaterThanOrEqual(p.progress);
        });
      }
    });

    it('runs a tools/call that asks for a task as a plain call, since tasks are not declared', async () => {
      expect(client.getServerCapabilities()?.tasks).toBeUndefined();
      const answer = await reply({
        jsonrpc: '2.0',
        id: 11,
        method: 'tools/call',
        params: { ...lookup, task: { ttl: 60_000 } },
      });
      expect(answer.error).toBeUndefined();
      expect(answer.result?.task).toBeUndefined();
      expect(answer.result?.structuredContent).toMatchObject({ charge: 'NETFLIX.COM' });
      // Task metadata on other requests is ignored the same way.
      expect((await reply({ jsonrpc: '2.0', id: 12, method: 'ping', params: { task: {} } })).result).toEqual(
        {},
      );
      // A request said to belong to a task still gets its progress on its own stream.
      const { messages } = await send(
        JSON.stringify({
          jsonrpc: '2.0',
          id: 13,
          method: 'tools/call',
          params: {
            name: 'request_scan',
            arguments: { domain: site.domain },
            task: { ttl: 60_000 },
            _meta: { progressToken: 'scan', 'io.modelcontextprotocol/related-task': { taskId: 'nope' } },
          },
        }),
      );
      const notes = messages.filter((m) => m.method === 'notifications/progress');
      expect(notes.length).toBeGreaterThan(0);
      for (const note of notes) expect(note.params).toMatchObject({ progressToken: 'scan' });
      const last = messages.at(-1);
      expect(last?.id).toBe(13);
      expect(last?.result?.isError).toBeFalsy();
      expect(last?.result?.structuredContent).toMatchObject({ status: 'done' });
    });
  });
});
