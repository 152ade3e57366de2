/**
 * `servers/adapters/direct-routes.ts` answers the free read-only GET operations in front of
 * Express. Side by side with the Express application alone, on the same services: the same status,
 * headers and body for answers and for problems, the request id echoed, and Express never reached
 * for them - while HEAD and other spellings of a path still go to Express; and the public MCP
 * endpoint alike, once its router accepted the Host.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isDirect } from '../../servers/adapters/direct-routes.ts';
import { createApp } from '../../servers/app.ts';
import { operations } from '../../servers/registry.ts';
import { dialects } from '../helpers/databases.ts';
import { OwnerTokenClient } from '../helpers/oauth.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

/** Headers that differ between any two answers (time, connection handling, the id when generated). */
const varying = new Set(['date', 'connection', 'keep-alive', 'x-request-id', 'transfer-encoding']);

async function ask(base: string, path: string, init: RequestInit = {}): Promise<Answer> {
  const res = await fetch(`${base}${path}`, init);
  const text = await res.text();
  const headers: Record<string, string> = {};
  for (const [name, value] of res.headers) if (!varying.has(name)) headers[name] = value;
  // Its value differs, but every answer carries one.
  if (res.headers.get('x-request-id')) headers['x-request-id'] = '(present)';
  let body: unknown = text;
  if (text && /json/.test(res.headers.get('content-type') ?? '')) {
    // Health answers carry the moment and the database's round trip: equal in kind, not in value.
    const parsed = JSON.parse(text, (key, value) =>
      ['time', 'latency_ms', 'uptime_s'].includes(key) ? typeof value : value,
    ) as Record<string, unknown>;
    if (typeof parsed.request_id === 'string' && parsed.request_id === res.headers.get('x-request-id'))
      parsed.request_id = '(the X-Request-Id)';
    body = parsed;
    // Equal bodies have equal lengths; a health answer's length follows its round trip's digits.
    delete headers['content-length'];
  }
  return { status: res.status, headers, body };
}

describe.each(dialects)('direct routes (%s)', (dialect) => {
  let service: TestService;
  let expressOnly: http.Server;
  let closeApps: () => Promise<unknown>;
  let combined: http.Server;
  let expressCalls = 0;
  let direct: string;
  let viaExpress: string;

  beforeAll(async () => {
    service = await startTestService(dialect);
    // Two applications on the same services: the service's own request listener (direct routes,
    // then Express, counted), and Express alone.
    const withDirect = createApp(service.services);
    // Express's app.handle (untyped in @types/express) is where every request enters it.
    const app = withDirect.app as unknown as { handle: (...args: unknown[]) => unknown };
    const handle = app.handle.bind(app);
    app.handle = (...args) => {
      expressCalls++;
      return handle(...args);
    };
    const alone = createApp(service.services);
    closeApps = () => Promise.all([withDirect.close(), alone.close()]);
    combined = http.createServer(withDirect.handler);
    expressOnly = http.createServer(alone.app);
    const listen = (server: http.Server) =>
      new Promise<string>((resolve) =>
        server.listen(0, '127.0.0.1', () =>
          resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
        ),
      );
    direct = await listen(combined);
    viaExpress = await listen(expressOnly);
  });

  afterAll(async () => {
    combined?.close();
    expressOnly?.close();
    await closeApps?.();
    await service?.close();
  });

  const host = () => new URL(service.config.site_url).host;

  /**
   * Asks the service's own listener and Express alone the same thing: the answers must be equal,
   * and Express reached `expressReached` times on the way (0: a direct route answered).
   */
  async function sameAnswer(
    name: string,
    path: string,
    init: RequestInit,
    expressReached = 0,
  ): Promise<void> {
    const before = expressCalls;
    const mine = await ask(direct, path, init);
    const theirs = await ask(viaExpress, path, init);
    expect(mine, name).toEqual(theirs);
    expect(expressCalls - before, `${name}: requests that reached Express`).toBe(expressReached);
  }

  it('covers the free read-only GETs and nothing that pays, writes, limits or takes a path parameter', () => {
    const names = operations.filter(isDirect).map((op) => op.name);
    expect(names).toEqual(expect.arrayContaining(['lookupCardCharge', 'getReturnStatus', 'getHealth']));
    for (const op of operations.filter(isDirect)) {
      expect(op.http?.method).toBe('GET');
      expect(op.annotations.readOnlyHint).toBe(true);
      expect(op.sku).toBeUndefined();
      expect(op.rateLimit).toBeUndefined();
      expect(op.http?.path).not.toContain(':');
    }
    expect(names).not.toContain('startReturnRequest');
  });

  it('answers as Express does: results, problems, authentication, request ids', async () => {
    const { body: started } = await ask(service.url, '/cs/return', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ brand_domain: 'netflix.com', name: 'Direct Person', contact: 'd@example.com' }),
    });
    const requestId = (started as { request_id: string }).request_id;
    const cases: [string, RequestInit?][] = [
      ['/cs/agent?charge=CHECKCARD%200312%20NETFLIX.COM%20866-579-7172%20CA'],
      [
        '/cs/agent?charge=POS%20PURCHASE%20STARBUCKS%20STORE%2011234%20SEATTLE%20WA',
        { headers: { 'x-request-id': 'given-1' } },
      ],
      ['/cs/agent'],
      ['/cs/agent?charge=a&charge=b'],
      ['/cs/agent?charge=NETFLIX%00'],
      ['/cs/agent?charge=NETFLIX&extra=1'],
      [`/cs/status?request_id=${requestId}`],
      ['/cs/status?request_id=not-a-uuid'],
      ['/cs/status?request_id=0190a000-0000-7000-8000-000000000000'],
      ['/api/public/health'],
      ['/api/public/health/ready'],
      ['/api/public/sites'],
      ['/api/public/sites', { headers: { 'x-service-key': 'sk_not_a_key' } }],
      ['/api/public/leaderboard?limit=abc'],
      ['/api/public/leaderboard?limit=2'],
    ];
    for (const [path, init] of cases)
      await sameAnswer(path, path, { ...init, headers: { ...init?.headers, host: host() } });
    const echoed = await fetch(`${direct}/cs/agent?charge=NETFLIX`, {
      headers: { 'x-request-id': 'given-2' },
    });
    expect(echoed.headers.get('x-request-id')).toBe('given-2');
    const problem = await fetch(`${direct}/cs/agent`, { headers: { 'x-request-id': 'given-3' } });
    expect(await problem.json()).toMatchObject({
      request_id: 'given-3',
      instance: '/cs/agent',
      code: 'validation_failed',
    });
  });

  it('leaves HEAD, other spellings of a path and everything else to Express', async () => {
    for (const [path, method] of [
      ['/cs/agent?charge=NETFLIX', 'HEAD'],
      ['/cs/Agent?charge=NETFLIX', 'GET'],
      ['/cs/agent/?charge=NETFLIX', 'GET'],
      ['/cs/agent?charge=NETFLIX', 'POST'],
      ['/api/public/openapi.json', 'GET'],
    ] as const)
      await sameAnswer(`${method} ${path}`, path, { method, headers: { host: host() } }, 1);
  });

  it('answers the public MCP endpoint as its router does, once the Host passed the router', async () => {
    const mcp = new URL(service.config.mcp_url).pathname;
    const headers = {
      host: host(),
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
    };
    const rpc = (body: unknown) => ({ method: 'POST', headers, body: JSON.stringify(body) });
    // The first request of a Host is checked by the router (DNS-rebinding protection).
    const before = expressCalls;
    await ask(direct, mcp, rpc({ jsonrpc: '2.0', id: 0, method: 'ping' }));
    expect(expressCalls).toBe(before + 1);
    const call = (id: number | string, name: string, args: unknown) => ({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name, arguments: args },
    });
    const cases: [string, RequestInit][] = [
      [
        'lookup',
        rpc(call(1, 'lookup_card_charge', { charge: 'CHECKCARD 0312 NETFLIX.COM 866-579-7172 CA' })),
      ],
      ['string id', rpc(call('a-1', 'lookup_card_charge', { charge: 'SQ *BLUE BOTTLE COFFEE OAKLAND CA' }))],
      ['invalid arguments', rpc(call(2, 'lookup_card_charge', { charge: 7 }))],
      ['unknown tool', rpc(call(3, 'no_such_tool', {}))],
      ['tools/list', rpc({ jsonrpc: '2.0', id: 4, method: 'tools/list' })],
      [
        'batch',
        rpc([
          call(5, 'get_return_status', { request_id: 'nope' }),
          { jsonrpc: '2.0', id: 6, method: 'ping' },
        ]),
      ],
      ['notification', rpc({ jsonrpc: '2.0', method: 'notifications/initialized' })],
      ['not JSON', { method: 'POST', headers, body: '{"jsonrpc":' }],
      ['not a message', rpc({ hello: 'world' })],
      ['text/plain', { method: 'POST', headers: { ...headers, 'content-type': 'text/plain' }, body: '{}' }],
      [
        'protocol version',
        {
          ...rpc({ jsonrpc: '2.0', id: 7, method: 'ping' }),
          headers: { ...headers, 'mcp-protocol-version': '1999-01-01' },
        },
      ],
    ];
    for (const [name, init] of cases) await sameAnswer(name, mcp, init);
    // A browser's request (Origin) is the router's: it answers with CORS headers.
    const calls = expressCalls;
    const withOrigin = await ask(direct, mcp, {
      ...rpc({ jsonrpc: '2.0', id: 8, method: 'ping' }),
      headers: { ...headers, origin: service.config.site_url },
    });
    expect(withOrigin.status).toBe(200);
    expect(expressCalls).toBe(calls + 1);
  });

  it('answers the owner MCP endpoint as its router does: the bearer challenge and verified calls', async () => {
    const owner = { email: `direct-${dialect}@example.com`, password: 'correct horse battery staple' };
    const created = await fetch(`${service.url}/api/public/account`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(owner),
    });
    expect(created.status).toBe(201);
    const resource = `${service.config.mcp_url}/auth`;
    const client = await OwnerTokenClient.register(service.config.auth_url);
    const token = (await client.tokens(owner, resource)).access_token;
    const path = new URL(resource).pathname;
    const headers = {
      host: host(),
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
    };
    const whoami = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'get_owner_context', arguments: {} },
    });
    // The router accepts the Host first.
    await ask(direct, path, { method: 'POST', headers, body: whoami });
    const cases: [string, RequestInit][] = [
      ['no token', { method: 'POST', headers, body: whoami }],
      [
        'not a bearer',
        { method: 'POST', headers: { ...headers, authorization: 'Basic eDp5' }, body: whoami },
      ],
      [
        'forged token',
        { method: 'POST', headers: { ...headers, authorization: 'Bearer abc.def.ghi' }, body: whoami },
      ],
      [
        'get_owner_context',
        { method: 'POST', headers: { ...headers, authorization: `Bearer ${token}` }, body: whoami },
      ],
      [
        'tools/list',
        {
          method: 'POST',
          headers: { ...headers, authorization: `Bearer ${token}` },
          body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
        },
      ],
    ];
    for (const [name, init] of cases) await sameAnswer(name, path, init);
    const context = await ask(direct, path, cases[3]?.[1] as RequestInit);
    expect(JSON.stringify(context.body)).toContain(client.clientId);
    // A token in the query is refused by the router, which sees the query.
    const calls = expressCalls;
    const inQuery = await ask(direct, `${path}?access_token=${token}`, {
      method: 'POST',
      headers,
      body: whoami,
    });
    expect(inQuery.status).toBe(400);
    expect(expressCalls).toBe(calls + 1);
  });
});
