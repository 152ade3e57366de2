/**
 * The public MCP server with the MCP SDK's own client over Streamable HTTP.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/databases.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

describe.each(dialects)('public MCP server (%s)', (dialect) => {
  let service: TestService;
  let client: Client;

  beforeAll(async () => {
    service = await startTestService(dialect, { 'rate_limits.unauthenticated_writes.points': 1000 });
    client = new Client({ name: 'test-client', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(service.config.mcp_url)));
  });
  afterAll(async () => {
    await client?.close();
    await service?.close();
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
      'get_agent_hub',
      'get_ai_search_data',
      'get_ai_tools',
      'get_leaderboard',
      'get_readiness_index',
      'get_return_status',
      'get_scan',
      'get_scan_score',
      'get_signal',
      'list_agents',
      'list_services',
      'lookup_card_charge',
      'request_scan',
      'search_listings',
      'start_return_request',
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
    const content = result.structuredContent as { processor: { name: string }; matches: unknown[] };
    expect(content.processor.name).toBe('Square');
    expect(JSON.parse((result.content as { text: string }[])[0]?.text ?? '')).toEqual(content);
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
        { name: 42 },
      ]) {
        const reply = await (await post({ jsonrpc: '2.0', id: 9, method: 'tools/call', params })).json();
        expect(reply.id).toBe(9);
        expect(reply.error.code).toBe(-32602);
        expect(reply.error.message).toMatch(/Invalid tools\/call params: params\./);
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
});
