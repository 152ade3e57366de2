/**
 * What the MCP adapter binds to in the SDK beyond its published API (`servers/adapters/mcp.ts`):
 * - its 2025-11-25 fast path hands messages straight to the Protocol's `_onrequest` (private) and
 *   `_onnotification` (a subclass hook) (`connectMultiplexed`). Both exist, and every kind of
 *   message the adapter delivers is answered through them exactly as through the SDK's public
 *   entry (the transport's `onmessage`, which classifies each message itself). An SDK upgrade that
 *   renames them, changes their arguments or what they send fails here, loudly; the endpoint itself
 *   falls back to the public entry and says so once in the log (second test);
 * - `RegistryServer` overrides `_wrapHandler` (the Protocol's documented subclass hook) so that
 *   tools/call runs as registered (third test);
 * - the shared 2026-07-28 server (`sharedModernServer`): a server connected to a `ModernBinding`
 *   (a `PerRequestHTTPServerTransport` by class) is bound to the revision and encodes its answers
 *   as the revision does, and the SDK answers what it refuses in front of a handler while the
 *   request is delivered, so `dispatchModern` can leave those to the SDK's entry;
 * - `claimsModernEra` asks what the SDK's classifier asks before it answers `modern`, so a POST
 *   it says claims nothing can skip the classifier.
 */
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  classifyInboundRequest,
  type JSONRPCMessage,
  type JSONRPCNotification,
  type JSONRPCRequest,
  PROTOCOL_VERSION_META_KEY,
  ProtocolError,
  ProtocolErrorCode,
  Server,
  SUPPORTED_PROTOCOL_VERSIONS,
  type TransportSendOptions,
} from '@modelcontextprotocol/server';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  type Caller,
  claimsModernEra,
  connectMultiplexed,
  Exchange,
  ModernBinding,
  MultiplexTransport,
  RegistryServer,
} from '../../servers/adapters/mcp.ts';

type Sent = { message: JSONRPCMessage; relatedRequestId: unknown };

/** A server like the adapter's: tools/list, and tools/call in the custom-schema form on a RegistryServer. */
async function serverOn(transport: MultiplexTransport, cancelled: (reason: unknown) => void) {
  const server = new RegistryServer({ name: 'contract', version: '1' }, { capabilities: { tools: {} } });
  server.setRequestHandler('tools/list', async () => ({
    tools: [{ name: 'echo', inputSchema: { type: 'object' } }],
  }));
  server.setRequestHandler('tools/call', { params: z.unknown() }, async (params, ctx) => {
    const { name } = params as { name: string };
    if (name === 'refused') throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'Unknown tool: refused');
    if (name === 'broken') throw new Error('handler failed');
    if (name === 'progress') {
      await ctx.mcpReq.notify({
        method: 'notifications/progress',
        params: { progressToken: ctx.mcpReq._meta?.progressToken as string, progress: 1 },
      });
    }
    if (name === 'slow') {
      const { signal } = ctx.mcpReq;
      if (!signal.aborted)
        await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve()));
      cancelled(signal.reason);
    }
    return { content: [{ type: 'text', text: name }] };
  });
  const sent: Sent[] = [];
  transport.send = async (message: JSONRPCMessage, options?: TransportSendOptions) => {
    sent.push({ message, relatedRequestId: options?.relatedRequestId });
  };
  await server.connect(transport);
  return { server, sent };
}

const request = (id: number, method: string, params?: Record<string, unknown>): JSONRPCRequest => ({
  jsonrpc: '2.0',
  id,
  method,
  ...(params ? { params } : {}),
});

/** Every kind of message the adapter delivers, and what each path sends back for them. */
async function exchange(deliver: (m: JSONRPCRequest | JSONRPCNotification) => void, sent: Sent[]) {
  deliver(
    request(1, 'initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'c', version: '1' },
    }),
  );
  deliver({ jsonrpc: '2.0', method: 'notifications/initialized' });
  deliver(request(2, 'ping'));
  deliver(request(3, 'tools/list'));
  deliver(request(4, 'tools/call', { name: 'echo', arguments: {} }));
  deliver(request(5, 'tools/call', { name: 'refused' }));
  deliver(request(6, 'tools/call', { name: 'broken' }));
  deliver(request(7, 'tools/call', { name: 'progress', _meta: { progressToken: 'p1' } }));
  deliver(request(8, 'no/such/method'));
  deliver(request(9, 'tools/call', { name: 'slow' }));
  deliver({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 9, reason: 'gone' } });
  for (let i = 0; i < 20 && sent.length < 10; i++) await new Promise((resolve) => setImmediate(resolve));
  return sent.map(({ message, relatedRequestId }) => ({
    message:
      'result' in message && 'serverInfo' in (message.result as object)
        ? { initialized: message.id }
        : message,
    relatedRequestId,
  }));
}

describe('MCP SDK internals the adapter relies on', () => {
  it('answers every kind of message through Protocol._onrequest/_onnotification as through the public entry', async () => {
    const viaPublic = new MultiplexTransport();
    const cancelledPublic: unknown[] = [];
    const generic = await serverOn(viaPublic, (r) => cancelledPublic.push(r));
    const publicReplies = await exchange((m) => viaPublic.onmessage?.(m, {}), generic.sent);

    const viaDirect = new MultiplexTransport();
    const cancelledDirect: unknown[] = [];
    const direct = await serverOn(viaDirect, (r) => cancelledDirect.push(r));
    expect(viaDirect.bindDirect(direct.server)).toBe(true);
    const directReplies = await exchange((m) => viaDirect.deliver(m), direct.sent);

    expect(directReplies).toEqual(publicReplies);
    // What the adapter counts on, spelled out (by request id; a notification before its reply):
    // results, errors with their codes, the progress notification tied to its request, and a
    // cancelled handler seeing its signal abort.
    const key = (r: (typeof directReplies)[number]) => {
      const m = r.message as { id?: number; initialized?: number };
      return (m.id ?? m.initialized ?? Number(r.relatedRequestId) - 0.5) as number;
    };
    expect([...directReplies].sort((a, b) => key(a) - key(b))).toEqual([
      { message: { initialized: 1 }, relatedRequestId: undefined },
      { message: { jsonrpc: '2.0', id: 2, result: {} }, relatedRequestId: undefined },
      {
        message: { jsonrpc: '2.0', id: 3, result: { tools: [expect.objectContaining({ name: 'echo' })] } },
        relatedRequestId: undefined,
      },
      {
        message: { jsonrpc: '2.0', id: 4, result: { content: [{ type: 'text', text: 'echo' }] } },
        relatedRequestId: undefined,
      },
      {
        message: expect.objectContaining({
          id: 5,
          error: expect.objectContaining({ code: ProtocolErrorCode.InvalidParams }),
        }),
        relatedRequestId: undefined,
      },
      {
        message: expect.objectContaining({
          id: 6,
          error: expect.objectContaining({ code: ProtocolErrorCode.InternalError }),
        }),
        relatedRequestId: undefined,
      },
      {
        message: expect.objectContaining({ method: 'notifications/progress' }),
        relatedRequestId: 7,
      },
      {
        message: { jsonrpc: '2.0', id: 7, result: { content: [{ type: 'text', text: 'progress' }] } },
        relatedRequestId: undefined,
      },
      {
        message: expect.objectContaining({
          id: 8,
          error: expect.objectContaining({ code: ProtocolErrorCode.MethodNotFound }),
        }),
        relatedRequestId: undefined,
      },
    ]);
    expect(cancelledDirect).toEqual(['gone']);
    expect(cancelledPublic).toEqual(['gone']);
    await generic.server.close();
    await direct.server.close();
  });

  it('falls back to the public entry when the members are gone, and says so once', async () => {
    const warnings: unknown[][] = [];
    const log = { warn: (...args: unknown[]) => warnings.push(args) };
    for (let i = 0; i < 2; i++) {
      const server = new Server({ name: 'no-internals', version: '1' }, { capabilities: { tools: {} } });
      // As after an upgrade that renamed it (the SDK's own entry would call the new name; here the
      // ping below is a request, which the public entry still hands to `_onrequest`).
      Object.defineProperty(server, '_onnotification', { value: undefined });
      const transport = new MultiplexTransport();
      const sent: JSONRPCMessage[] = [];
      transport.send = async (message: JSONRPCMessage) => {
        sent.push(message);
      };
      await connectMultiplexed(server, transport, log as never);
      transport.deliver(request(1, 'ping'));
      for (let t = 0; t < 5 && sent.length === 0; t++) await new Promise((resolve) => setImmediate(resolve));
      expect(sent).toEqual([{ jsonrpc: '2.0', id: 1, result: {} }]);
      await server.close();
    }
    expect(warnings).toHaveLength(1);
    expect(String(warnings[0]?.[1])).toMatch(/slower generic path/);
  });

  it('runs a RegistryServer tools/call handler as registered: the SDK re-validates nothing (`_wrapHandler`)', async () => {
    // A result the SDK's own tools/call wrapper refuses (an unknown content type): a RegistryServer
    // answers it as the handler made it, a plain Server with an error. Should the hook stop being
    // consulted, the first answer below becomes the second.
    const answers: JSONRPCMessage[] = [];
    for (const Kind of [RegistryServer, Server]) {
      const server = new Kind({ name: 'wrap', version: '1' }, { capabilities: { tools: {} } });
      server.setRequestHandler('tools/call', { params: z.unknown() }, async () => ({
        content: [{ type: 'not-a-content-type', text: 'x' }] as never,
      }));
      const transport = new MultiplexTransport();
      const sent: JSONRPCMessage[] = [];
      transport.send = async (message: JSONRPCMessage) => {
        sent.push(message);
      };
      await server.connect(transport);
      expect(transport.bindDirect(server)).toBe(true);
      transport.deliver(request(1, 'tools/call', { name: 'any' }));
      for (let t = 0; t < 20 && sent.length === 0; t++) await new Promise((resolve) => setImmediate(resolve));
      answers.push(sent[0] as JSONRPCMessage);
      await server.close();
    }
    expect(answers[0]).toEqual({
      jsonrpc: '2.0',
      id: 1,
      result: { content: [{ type: 'not-a-content-type', text: 'x' }] },
    });
    expect(answers[1]).toMatchObject({ id: 1, error: { code: ProtocolErrorCode.InvalidParams } });
  });

  it('binds a server connected to a ModernBinding to 2026-07-28; what it refuses before a handler is answered while delivered', async () => {
    const revision = '2026-07-28';
    const mux = new MultiplexTransport();
    const server = new RegistryServer(
      { name: 'modern', version: '1' },
      {
        capabilities: { tools: {} },
        supportedProtocolVersions: [...SUPPORTED_PROTOCOL_VERSIONS, revision],
        cacheHints: { 'tools/list': { ttlMs: 60_000, cacheScope: 'public' } },
      },
    );
    server.setRequestHandler('tools/list', async () => ({
      tools: [{ name: 'echo', inputSchema: { type: 'object' } }],
    }));
    server.setRequestHandler('tools/call', { params: z.unknown() }, async () => ({
      content: [{ type: 'text', text: 'ok' }],
    }));
    await server.connect(new ModernBinding(mux, revision));
    expect(server.getNegotiatedProtocolVersion()).toBe(revision);
    expect(mux.bindDirect(server)).toBe(true);
    const envelope = {
      [PROTOCOL_VERSION_META_KEY]: revision,
      [CLIENT_INFO_META_KEY]: { name: 'c', version: '1' },
      [CLIENT_CAPABILITIES_META_KEY]: {},
    };
    const extra = { classification: { era: 'modern' as const, revision } };
    /** One request through `dispatchModern`, on a response that records what is written. */
    const dispatch = async (method: string, params: Record<string, unknown>) => {
      const written: { status?: number; body?: string } = {};
      const res = {
        headersSent: false,
        writableEnded: false,
        writeHead(status: number) {
          written.status = status;
          this.headersSent = true;
        },
        end(body: string) {
          written.body = body;
        },
      };
      const caller: Caller = {
        request: { id: 'r', ip: '127.0.0.1', via: 'mcp', headers: {} },
        log: () => {
          throw new Error('no log in this test');
        },
      };
      const exchange = new Exchange(caller, res as never, false, false);
      const delivered = mux.dispatchModern(exchange, request(3, method, params), extra);
      for (let i = 0; i < 20 && written.body === undefined; i++) await new Promise((r) => setImmediate(r));
      return {
        delivered,
        open: exchange.open,
        written,
        json: written.body ? JSON.parse(written.body) : undefined,
      };
    };
    const call = await dispatch('tools/call', { name: 'echo', arguments: {}, _meta: envelope });
    expect(call).toMatchObject({ delivered: true, open: false, written: { status: 200 } });
    expect(call.json).toEqual({
      jsonrpc: '2.0',
      id: 3,
      result: {
        content: [{ type: 'text', text: 'ok' }],
        resultType: 'complete',
        _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'modern', version: '1' } },
      },
    });
    const list = await dispatch('tools/list', { _meta: envelope });
    expect(list.json.result).toMatchObject({ resultType: 'complete', ttlMs: 60_000, cacheScope: 'public' });
    // Refused in front of a handler - an envelope that is not the revision's, a method it does not
    // have - answered while delivered: nothing written, nothing owed, for the entry to answer.
    for (const [method, params] of [
      ['tools/call', { name: 'echo', _meta: { ...envelope, [CLIENT_CAPABILITIES_META_KEY]: 'none' } }],
      ['no/such/method', { _meta: envelope }],
      [
        'initialize',
        {
          protocolVersion: '2025-11-25',
          capabilities: {},
          clientInfo: { name: 'c', version: '1' },
          _meta: envelope,
        },
      ],
    ] as const) {
      const refused = await dispatch(method, params);
      expect(refused, method).toMatchObject({ delivered: false, open: false, written: {} });
    }
    await server.close();
  });

  it('finds no claim in a POST the SDK classifier would not route to 2026-07-28', () => {
    const value = fc.oneof(
      fc.constant(undefined),
      fc.constant('2025-11-25'),
      fc.constant('2026-07-28'),
      fc.constant(' 2026-07-28 '),
      fc.constant('2027-01-01'),
      fc.string({ maxLength: 12 }),
      fc.integer(),
      fc.constant({}),
    );
    const message = fc.record({
      kind: fc.constantFrom('request', 'notification', 'response'),
      method: fc.constantFrom('tools/call', 'initialize', 'notifications/cancelled', 'ping'),
      meta: fc.oneof(
        fc.constant(undefined),
        fc.constant('x'),
        fc.constant([]),
        fc.dictionary(
          fc.constantFrom(PROTOCOL_VERSION_META_KEY, CLIENT_INFO_META_KEY, 'progressToken'),
          value,
        ),
      ),
    });
    fc.assert(
      fc.property(
        fc.array(message, { minLength: 1, maxLength: 3 }),
        fc.boolean(),
        value,
        value,
        (parts, batch, version, method) => {
          const messages = parts.map((m, i) =>
            m.kind === 'response'
              ? { jsonrpc: '2.0', id: i, result: {} }
              : {
                  jsonrpc: '2.0',
                  method: m.method,
                  ...(m.kind === 'request' ? { id: i } : {}),
                  ...(m.meta === undefined ? {} : { params: { _meta: m.meta } }),
                },
          ) as JSONRPCMessage[];
          const headers: Record<string, string> = {};
          if (typeof version === 'string') headers['mcp-protocol-version'] = version;
          if (typeof method === 'string') headers['mcp-method'] = method;
          const body = batch || messages.length > 1 ? messages : messages[0];
          const route = classifyInboundRequest({
            httpMethod: 'POST',
            ...(headers['mcp-protocol-version'] !== undefined
              ? { protocolVersionHeader: headers['mcp-protocol-version'] }
              : {}),
            ...(headers['mcp-method'] !== undefined ? { mcpMethodHeader: headers['mcp-method'] } : {}),
            body,
          });
          if (!claimsModernEra({ headers }, messages)) expect(route.kind).not.toBe('modern');
        },
      ),
      { numRuns: 2000 },
    );
  });
});
