/**
 * MCP projection of the registry over Streamable HTTP (MCP 2025-11-25), stateless, JSON responses
 * (SSE only while a request that asked for progress runs).
 *
 * One long-lived SDK `Server` serves every HTTP request through a multiplexing transport: each
 * incoming JSON-RPC request gets a fresh internal id, and the reply is routed back to the HTTP
 * exchange that owns that id with the caller's own id restored. Requests of different clients can
 * therefore never collide (the reason the SDK's stateless transport refuses reuse), and nothing is
 * constructed per request - a new `McpServer` + transport per POST, as in the SDK's stateless
 * example, spends most of the request building them (see `npm run bench`).
 *
 * A `notifications/cancelled` arrives in a POST of its own: it is matched to the requests still
 * running by the caller's id and the requester (`requesterOf`), whose handlers' signals abort and
 * who get no reply (`MultiplexTransport.cancel`).
 */

import { createHash, randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import {
  InitializeRequestSchema,
  ListToolsRequestSchema,
  PingRequestSchema,
} from '@modelcontextprotocol/core';
import { hostHeaderValidation } from '@modelcontextprotocol/express';
import {
  type CacheHint,
  type CallToolResult,
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  classifyInboundRequest,
  createMcpHandler,
  type JSONRPCErrorResponse,
  type JSONRPCMessage,
  type JSONRPCNotification,
  type JSONRPCRequest,
  type JSONRPCResultResponse,
  type MessageExtraInfo,
  PerRequestHTTPServerTransport,
  PROTOCOL_VERSION_META_KEY,
  ProtocolError,
  ProtocolErrorCode,
  RELATED_TASK_META_KEY,
  type RequestId,
  Server,
  type ServerContext,
  SUPPORTED_PROTOCOL_VERSIONS,
  type Tool,
  type Transport,
  type TransportSendOptions,
} from '@modelcontextprotocol/server';
import express, { type Request as ExpressRequest, type RequestHandler, Router } from 'express';
import type { Logger } from 'pino';
import { z } from 'zod';
import { serviceVersion } from '../config.ts';
import { failureLogLevel, toServiceError } from '../errors.ts';
import { closeAfterAnswer } from '../http-refusals.ts';
import { describeFault, type MalformedJson, parseJsonBody } from '../json-body.ts';
import { jsonSchemaOf } from '../json-schema.ts';
import {
  type AnyOperation,
  CallContext,
  invokeCall,
  isRecord,
  type McpServerName,
  type OperationContext,
  type RequestInfo,
} from '../operation.ts';
import type { PaymentCredential } from '../payments/credential.ts';
import { PaymentRequiredDoc } from '../payments/schemas.ts';
import { SIGN_IN_META } from '../payments/sign-in.ts';
import type { Services } from '../services.ts';
import { jsonOf } from './json.ts';
import { JSON_CONTENT_TYPE, requestInfo, sendWhole } from './rest.ts';
import { X402_MCP_TRANSPORT } from './x402-document.ts';

/**
 * The params schema `tools/call` is registered with (the SDK's custom-schema form): any, so that
 * malformed params reach the handler and are answered Invalid params (-32602) naming the field
 * (`ToolCallParams`). The plain form checks the request against the SDK's wire schema and throws a
 * plain Error on a mismatch, which the Protocol answers Internal error - a client fault under a
 * server code.
 */
const AnyParams = z.unknown();

/**
 * The part of an MCP `tools/call` request this server uses (MCP 2025-11-25, server/tools). The
 * arguments are checked for being an object only: the tool's input contract checks what is in them
 * (`invokeOperation`), and `z.record` would run a key and a value schema per argument and copy
 * them into a new object first, on every call.
 */
const ToolCallParams = z.object({
  name: z.string(),
  arguments: z
    .custom<Record<string, unknown>>(isRecord, { error: 'Invalid input: expected an object' })
    .optional(),
});

/**
 * Params of the other methods this server answers, whose SDK handlers parse the request themselves
 * and report a failure as Internal error: checked before delivery, once per request of these
 * methods only, so that a client's fault is Invalid params as for tools/call.
 */
const paramsOf = new Map<string, z.ZodType>([
  ['initialize', InitializeRequestSchema.shape.params],
  ['ping', PingRequestSchema.shape.params],
  ['tools/list', ListToolsRequestSchema.shape.params],
]);

/**
 * The protocol revisions of the stateless era this server serves (through the SDK's
 * `createMcpHandler`, which answers `server/discover` with them; the SDK does not export its list,
 * test/integration/mcp-eras.test.ts pins this one to its answer). Revisions are dates, so a later
 * one sorts after.
 */
export const MODERN_PROTOCOL_VERSIONS: readonly string[] = ['2026-07-28'];

/** Every protocol revision the MCP endpoints speak, newest first: the stateless era's, then 2025-11-25 and before. */
export const PROTOCOL_VERSIONS: readonly string[] = [
  ...MODERN_PROTOCOL_VERSIONS,
  ...SUPPORTED_PROTOCOL_VERSIONS,
];

/** JSON-RPC "server error" code the MCP SDK uses for transport-level refusals. */
const SERVER_ERROR = -32000;

/** The MCP tool list of one server, derived from the registry. */
export function toolsOf(operations: readonly AnyOperation[], server: McpServerName): Tool[] {
  return operations
    .filter((op) => op.mcp?.includes(server))
    .map((op) => ({
      name: op.toolName,
      title: op.title,
      description: op.description,
      inputSchema: jsonSchemaOf(op.input, 'input') as Tool['inputSchema'],
      outputSchema: toolOutputSchema(op) as Tool['outputSchema'],
      annotations: { title: op.title, ...op.annotations },
      ...(op.sku
        ? {
            _meta: {
              'x402/price': { amount_usdc: op.sku.usdc, asset: 'USDC', transport: X402_MCP_TRANSPORT },
            },
          }
        : {}),
    }));
}

/**
 * A paid tool's structured results are its output or, in an isError result, the x402
 * PaymentRequired the x402 MCP transport requires in structuredContent; MCP clients validate
 * structuredContent against the output schema (the TypeScript SDK does so for error results too),
 * so the schema says both.
 */
export function toolOutputSchema(op: AnyOperation): Record<string, unknown> {
  const output = jsonSchemaOf(op.output, 'output');
  if (!op.sku && !op.errors?.includes('sign_in_required')) return output;
  return { type: 'object', anyOf: [output, jsonSchemaOf(PaymentRequiredDoc, 'output')] };
}

/** The x402 payment of a tools/call (`params._meta["x402/payment"]`), as the core decodes it. */
function mcpCredential(meta: Record<string, unknown> | undefined): PaymentCredential | undefined {
  const value = meta?.['x402/payment'];
  return value === undefined ? undefined : { transport: 'mcp', value };
}

/**
 * On a tool result whose one content block is the JSON text of its `structuredContent` (MCP
 * server/tools, "Structured Content": a tool returning structured content SHOULD also return it
 * serialized in a TextContent block): that text. A symbol-keyed property rather than a weak map:
 * every call makes a new result, and a weak-map entry per call costs the garbage collector more
 * than the property costs (JSON.stringify skips symbol keys, so the SDK's own path never sees it).
 */
const RESULT_TEXT = Symbol('result text');
type TextedResult = CallToolResult & { [RESULT_TEXT]?: string };

/** The JSON of a frozen output's content block (its text escaped as a JSON string), made once. */
const contentJsons = new WeakMap<object, string>();

/**
 * A reply as JSON. A tool result that carries its `RESULT_TEXT` embeds the text it already has as its
 * `structuredContent` rather than serializing the output a second time; a frozen output's content
 * block is escaped once too. Its other members (a 2026-07-28 result's `resultType` and `_meta`, the
 * SDK's encoding) are serialized as they are, in their order.
 */
function replyJson(message: JSONRPCMessage): string {
  const result = 'result' in message ? (message.result as CallToolResult) : undefined;
  const text = result ? (result as TextedResult)[RESULT_TEXT] : undefined;
  if (result === undefined || text === undefined) return JSON.stringify(message);
  const output = result.structuredContent;
  const kept = typeof output === 'object' && output !== null && Object.isFrozen(output) ? output : undefined;
  let content = kept && contentJsons.get(kept);
  if (content === undefined) {
    content = JSON.stringify(result.content);
    if (kept) contentJsons.set(kept, content);
  }
  let members = `"content":${content},"structuredContent":${text}`;
  for (const key in result) {
    if (key === 'content' || key === 'structuredContent') continue;
    const value = JSON.stringify((result as Record<string, unknown>)[key]);
    if (value !== undefined) members += `,${JSON.stringify(key)}:${value}`;
  }
  return `{"jsonrpc":"2.0","id":${JSON.stringify((message as JSONRPCResultResponse).id)},"result":{${members}}}`;
}

/** One HTTP POST: the JSON-RPC requests it carried and the replies still owed. */
export class Exchange {
  readonly caller: Caller;
  private readonly res: ServerResponse;
  private readonly streaming: boolean;
  private readonly owed = new Set<number>();
  private readonly replies: JSONRPCMessage[] = [];
  private readonly batch: boolean;

  constructor(caller: Caller, res: ServerResponse, streaming: boolean, batch: boolean) {
    this.caller = caller;
    this.res = res;
    this.streaming = streaming;
    this.batch = batch;
    if (streaming) {
      res.writeHead(200, [
        ...(caller.head ?? []),
        'Content-Type',
        'text/event-stream',
        'Cache-Control',
        'no-cache, no-transform',
        'X-Accel-Buffering',
        'no',
      ]);
      // Sent now, not with the first event: a client learns at once that its stream is open.
      res.flushHeaders();
    }
  }

  get open(): boolean {
    return this.owed.size > 0;
  }

  owe(id: number): void {
    this.owed.add(id);
  }

  pendingIds(): number[] {
    return [...this.owed];
  }

  /** A request of this POST that will be answered elsewhere: nothing is owed for it here. */
  disown(internalId: number): void {
    this.owed.delete(internalId);
  }

  notify(message: JSONRPCMessage): void {
    if (this.streaming && !this.res.writableEnded)
      this.res.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
  }

  reply(internalId: number, message: JSONRPCMessage): void {
    if (!this.owed.delete(internalId)) return;
    if (this.streaming) {
      this.notify(message);
      if (this.owed.size === 0) this.res.end();
      return;
    }
    this.replies.push(message);
    if (this.owed.size === 0 && !this.res.headersSent) {
      const body = this.batch ? JSON.stringify(this.replies) : replyJson(this.replies[0] as JSONRPCMessage);
      sendWhole(this.res, 200, this.caller.head, 'application/json', body);
    }
  }

  /**
   * A request of this POST was cancelled: nothing is sent for it (MCP basic/utilities/cancellation:
   * the receiver SHOULD "not send a response for the cancelled request"). Once nothing else is
   * owed the POST ends: an SSE stream closes; a JSON answer is the replies already made (a batch),
   * or, with none, an SSE stream without events - the one answer to a POST of requests that
   * carries no JSON-RPC response (Streamable HTTP, "Sending Messages to the Server").
   */
  cancel(internalId: number): void {
    if (!this.owed.delete(internalId) || this.owed.size > 0) return;
    if (this.streaming) {
      this.res.end();
      return;
    }
    if (this.res.headersSent) return;
    if (this.replies.length > 0) {
      sendWhole(this.res, 200, this.caller.head, 'application/json', JSON.stringify(this.replies));
      return;
    }
    sendWhole(this.res, 200, this.caller.head, 'text/event-stream', '');
  }
}

/**
 * A cancellation passed between processes: the requester as a digest (its session id stays in
 * the process that received it), the caller's request id.
 */
const ForwardedCancellation = z.object({
  requester: z.string(),
  requestId: z.union([z.string(), z.number()]),
  reason: z.string().optional(),
});
type ForwardedCancellation = z.infer<typeof ForwardedCancellation>;

const digestOf = (requester: string): string => createHash('sha256').update(requester).digest('hex');

/**
 * Who may cancel a request: the same requester, by the same id. This server keeps no session
 * state, so the requester is what every POST of one client carries and no other client can
 * present: the `Mcp-Session-Id` handed out at `initialize` (a random UUID, never stored) and, on
 * the owner endpoint, the OAuth grant the bearer token stands for. A POST with neither - a client
 * that skipped `initialize` on the public endpoint - names no requester, and its requests are
 * cancelled only by closing their connection: a JSON-RPC id (0, 1, 2 from most clients) or a
 * client address (shared behind a NAT or a proxy) would let anyone cancel anyone's calls.
 */
function requesterOf(caller: Caller): string | undefined {
  const session = caller.request.headers['mcp-session-id'];
  const grant = caller.principal?.grant?.grantId ?? caller.principal?.account?.id;
  if (!session && !grant) return undefined;
  return `${session ?? ''}\n${grant ?? ''}`;
}

/**
 * A Transport that many HTTP exchanges share. Internal ids are unique for the life of the process,
 * so the SDK's per-request state (abort controllers, handlers) stays per request.
 */
export class MultiplexTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;
  private nextId = 0;
  private readonly pending = new Map<number, { exchange: Exchange; callerId: RequestId }>();
  private deliverRequest: (message: JSONRPCRequest, extra: MessageExtraInfo) => void = (m, e) =>
    this.onmessage?.(m, e);
  private deliverNotification: (message: JSONRPCNotification) => void = (m) => this.onmessage?.(m);

  /**
   * Hands requests and notifications straight to the SDK's handlers once connected. The SDK's
   * generic onmessage classifies every message with up to four zod parses (most of them failing);
   * this transport only ever delivers messages it has already classified.
   */
  bindDirect(protocol: Server): boolean {
    const inner = protocol as unknown as {
      _onrequest?: (m: JSONRPCRequest, e: MessageExtraInfo) => void;
      _onnotification?: (m: JSONRPCNotification) => void;
    };
    if (typeof inner._onrequest !== 'function' || typeof inner._onnotification !== 'function') return false;
    this.deliverRequest = inner._onrequest.bind(protocol);
    this.deliverNotification = inner._onnotification.bind(protocol);
    return true;
  }

  async start(): Promise<void> {}

  async close(): Promise<void> {
    this.onclose?.();
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if (isResponse(message)) {
      const id = message.id as number;
      const entry = this.pending.get(id);
      if (!entry) return; // the caller went away
      this.pending.delete(id);
      if (id === this.inDispatch) {
        // Answered while being delivered: refused by a gate in front of its handler (`dispatchModern`).
        this.refusedInDispatch = true;
        entry.exchange.disown(id);
        return;
      }
      entry.exchange.reply(id, { ...message, id: entry.callerId } as JSONRPCMessage);
      return;
    }
    if (isNotification(message)) {
      const related = options?.relatedRequestId;
      if (related !== undefined) this.pending.get(related as number)?.exchange.notify(message);
      return; // stateless: no standalone stream for unrelated notifications
    }
    throw new ProtocolError(
      ProtocolErrorCode.InvalidRequest,
      'This server is stateless and does not send requests to clients',
    );
  }

  /** The internal id of the request being handed to the SDK by `dispatchModern`, while it is. */
  private inDispatch: number | undefined;
  private refusedInDispatch = false;

  /**
   * One 2026-07-28 request, handed to the long-lived server bound to that revision (`ModernBinding`).
   * The SDK answers the requests it refuses in front of their handler (era, method, envelope gates)
   * while the request is being delivered - its handlers always start a microtask later - and its
   * stateless entry gives such a refusal its own HTTP status. So a request answered during its
   * delivery is not answered here: `false`, nothing sent and nothing owed, and the caller passes it
   * to that entry, which answers it as it answers every refusal. No handler ran for it.
   */
  dispatchModern(exchange: Exchange, request: JSONRPCRequest, extra: MessageExtraInfo): boolean {
    const id = ++this.nextId;
    this.pending.set(id, { exchange, callerId: request.id });
    exchange.owe(id);
    this.inDispatch = id;
    this.refusedInDispatch = false;
    try {
      this.deliver({ ...request, id }, extra);
    } catch (err) {
      this.pending.delete(id);
      exchange.disown(id);
      throw err;
    } finally {
      this.inDispatch = undefined;
    }
    return !this.refusedInDispatch;
  }

  dispatch(exchange: Exchange, messages: JSONRPCMessage[], extra: MessageExtraInfo): void {
    for (const message of messages) {
      if (isRequest(message)) {
        const id = ++this.nextId;
        this.pending.set(id, { exchange, callerId: message.id });
        exchange.owe(id);
        const admitted = admit(message);
        if (typeof admitted === 'string') {
          void this.send({
            jsonrpc: '2.0',
            id,
            error: { code: ProtocolErrorCode.InvalidParams, message: admitted },
          });
          continue;
        }
        this.deliver({ ...admitted, id }, extra);
      } else if (isNotification(message)) {
        if (message.method === 'notifications/cancelled') this.cancel(exchange.caller, message);
        else this.deliver(message);
      }
    }
  }

  /**
   * `notifications/cancelled` from `caller`: the requests still running that the same requester
   * (`requesterOf`) sent with the id it names stop - their handler's signal aborts - and get no
   * reply. An id that names none of them here is passed to `elsewhere`: behind a load balancer the
   * cancellation may reach another process than the request (`cancelForwarded` there). An id
   * that names none anywhere (unknown, finished, another client's) is ignored, as MCP allows.
   */
  cancel(caller: Caller, notification: JSONRPCNotification): void {
    const requestId = notification.params?.requestId;
    if (typeof requestId !== 'string' && typeof requestId !== 'number') return;
    const requester = requesterOf(caller);
    if (requester === undefined) return;
    const given = notification.params?.reason;
    const reason = typeof given === 'string' ? given.slice(0, 200) : undefined;
    if (this.cancelWhere(requestId, (other) => other === requester, reason)) return;
    this.elsewhere?.({ requester: digestOf(requester), requestId, ...(reason ? { reason } : {}) });
  }

  /** Where a cancellation that names no request of this process goes (every other process). */
  elsewhere?: (cancellation: ForwardedCancellation) => void;

  /** A cancellation another process received for a request it does not run (`elsewhere`). */
  cancelForwarded(cancellation: ForwardedCancellation): void {
    this.cancelWhere(
      cancellation.requestId,
      (requester) => digestOf(requester) === cancellation.requester,
      cancellation.reason,
    );
  }

  /** Cancels the running requests with the caller id `requestId` whose requester `isRequester`. */
  private cancelWhere(
    requestId: RequestId,
    isRequester: (requester: string) => boolean,
    reason?: string,
  ): boolean {
    let found = false;
    for (const [id, entry] of this.pending) {
      if (entry.callerId !== requestId) continue;
      const requester = requesterOf(entry.exchange.caller);
      if (requester === undefined || !isRequester(requester)) continue;
      found = true;
      this.pending.delete(id);
      entry.exchange.cancel(id);
      this.deliver({
        jsonrpc: '2.0',
        method: 'notifications/cancelled',
        params: { requestId: id, reason: reason ?? 'cancelled by the client' },
      });
    }
    return found;
  }

  /** Hands a classified request or notification to the SDK (directly once `bindDirect` succeeded). */
  deliver(message: JSONRPCRequest | JSONRPCNotification, extra: MessageExtraInfo = {}): void {
    if ('id' in message) this.deliverRequest(message, extra);
    else this.deliverNotification(message);
  }

  /** The client disconnected: cancel what it still waits for, so handlers see their signal abort. */
  abandon(exchange: Exchange): void {
    for (const id of exchange.pendingIds()) {
      if (!this.pending.delete(id)) continue;
      this.deliver({
        jsonrpc: '2.0',
        method: 'notifications/cancelled',
        params: { requestId: id, reason: 'client disconnected' },
      });
    }
  }

  exchangeOf(requestId: RequestId): Exchange | undefined {
    return this.pending.get(requestId as number)?.exchange;
  }
}

let warnedGenericPath = false;

/**
 * Connects the SDK server to the multiplexing transport and binds the transport straight to the
 * SDK's request and notification handlers. Those two members are not published by the SDK
 * (`Protocol._onrequest`, `_onnotification`); the generic path they skip classifies each message
 * with up to four zod parses, most of them failing (about 8 us of a tools/call on the shared
 * 2-core machine). test/unit/mcp-sdk-internals.test.ts pins that both members exist and answer
 * every kind of message exactly as the generic path does, so an SDK upgrade that changes them
 * fails there; should one ship anyway, the endpoint keeps working through the generic path and
 * says so once in the log.
 */
export async function connectMultiplexed(
  server: Server,
  transport: MultiplexTransport,
  log: Pick<Logger, 'warn'>,
): Promise<void> {
  await server.connect(transport);
  if (transport.bindDirect(server) || warnedGenericPath) return;
  warnedGenericPath = true;
  log.warn(
    { sdk: '@modelcontextprotocol/sdk', missing: ['Protocol._onrequest', 'Protocol._onnotification'] },
    'MCP SDK no longer has the members the MCP adapter binds to: every MCP request takes the slower generic path (see test/unit/mcp-sdk-internals.test.ts)',
  );
}

/** How long a client may keep a tool list (MCP 2026-07-28 `ttlMs`): it changes only with a deploy. */
const LIST_TTL_MS = 300_000;

/**
 * The SDK's low-level server with one change: `Server` wraps the tools/call handler to parse the
 * request and then the whole result against the SDK's wire schemas, a third of a call's cost. The
 * params are checked here (`ToolCallParams`), and results are checked against each operation's
 * output schema by `invokeOperation` and are valid CallToolResults by construction.
 * `_wrapHandler` is the SDK's documented hook for subclasses (`Protocol._wrapHandler`); what it
 * hands over is pinned by test/unit/mcp-sdk-internals.test.ts.
 */
export class RegistryServer extends Server {
  protected override _wrapHandler(
    method: string,
    handler: Parameters<Server['_wrapHandler']>[1],
  ): ReturnType<Server['_wrapHandler']> {
    return method === 'tools/call' ? handler : super._wrapHandler(method, handler);
  }
}

/** A tool call's answer: its result, an isError result, or a ProtocolError for a client fault. */
type ToolCall = (params: unknown, ctx: ServerContext, caller: Caller | undefined) => Promise<CallToolResult>;

/** The tools/call handler of an endpoint, for either era: the registry's operation, invoked. */
function toolCaller(
  services: Services,
  operations: readonly AnyOperation[],
  byTool: ReadonlyMap<string, AnyOperation>,
): ToolCall {
  return async (rawParams, extra, caller) => {
    const parsed = ToolCallParams.safeParse(rawParams);
    if (!parsed.success)
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, invalidParams('tools/call', parsed.error));
    const params = parsed.data;
    const op = byTool.get(params.name);
    if (!op) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${params.name}`);
    const { id: requestId, signal, _meta: meta } = extra.mcpReq;
    const progressToken = meta?.progressToken;
    // MCP basic/utilities/progress: "The `progress` value MUST increase with each notification,
    // even if the total is unknown". Operations report what they observe (a scan queued, then
    // started, both with 0 done), so a value that did not grow is raised by one past the last one
    // sent, and a total, when given, kept at least as large as the progress.
    let lastProgress = Number.NEGATIVE_INFINITY;
    const ctx = new CallContext(
      {
        services,
        operations,
        request: caller?.request ?? { id: String(requestId), ip: 'unknown', via: 'mcp', headers: {} },
        signal,
        ...caller?.principal,
        // x402 sign-in-with-x: the paying wallet's proof rides beside, in _meta["x402/sign-in-with-x"].
        ...(meta?.[SIGN_IN_META] !== undefined
          ? { signIn: { transport: 'mcp' as const, value: meta[SIGN_IN_META] } }
          : {}),
        ...(progressToken !== undefined
          ? {
              reportProgress: (reported: number, total?: number, message?: string) => {
                const progress = reported > lastProgress ? reported : lastProgress + 1;
                lastProgress = progress;
                return extra.mcpReq.notify({
                  method: 'notifications/progress',
                  params: {
                    progressToken,
                    progress,
                    ...(total !== undefined ? { total: Math.max(total, progress) } : {}),
                    ...(message ? { message } : {}),
                  },
                });
              },
            }
          : {}),
      },
      caller?.log ?? (() => services.log),
    );
    try {
      // x402 MCP transport: the PaymentPayload rides in params._meta["x402/payment"].
      const credential = op.sku ? mcpCredential(meta) : undefined;
      const { output, paid } = await invokeCall(op, ctx, params.arguments ?? {}, credential);
      const receipt = paid?.receipt;
      const text = jsonOf(output);
      const result: TextedResult = {
        content: [{ type: 'text', text }],
        structuredContent: output,
        ...(receipt ? { _meta: { 'x402/payment-response': receipt } } : {}),
      };
      if (!receipt) result[RESULT_TEXT] = text;
      return result;
    } catch (err) {
      // Cancelled, or its client went away: the SDK sends nothing for it, and nothing failed.
      if (signal.aborted) {
        ctx.log.info({ tool: op.toolName }, 'tool call cancelled');
        return { isError: true, content: [] };
      }
      const error = toServiceError(err);
      const level = failureLogLevel(error);
      if (level) ctx.log[level]({ err: error.cause ?? err, tool: op.toolName }, 'tool failed');
      const body = error.toolBody();
      if (error.payment) {
        // x402 MCP transport, "Payment Required Signaling": the PaymentRequired in structuredContent
        // and, identical, as JSON in content[0].text; our code and message ride along.
        const required = { ...error.payment.required, ...body };
        return {
          isError: true,
          structuredContent: required,
          content: [{ type: 'text', text: JSON.stringify(required) }],
          ...(error.payment.settlement
            ? { _meta: { 'x402/payment-response': error.payment.settlement } }
            : {}),
        };
      }
      return { isError: true, content: [{ type: 'text', text: JSON.stringify(body) }] };
    }
  };
}

export interface McpEndpointOptions {
  server: McpServerName;
  /** Host names accepted in Host and Origin (DNS-rebinding protection). */
  allowedHosts: string[];
  instructions: string;
  /**
   * Authenticates each POST before its body is read. It either returns who the request acts for
   * (merged into the context of every tool call it carries) or answers the request itself (the
   * owner-scoped server's 401 challenge) and returns undefined.
   */
  authenticate?: (req: IncomingMessage, res: ServerResponse) => Promise<Principal | undefined>;
}

/** What an `authenticate` hook establishes for the tool calls of one request. */
export type Principal = Pick<OperationContext, 'account' | 'grant'>;

/** Who an MCP POST came from, as its tool calls see it. */
export interface Caller {
  request: RequestInfo;
  /** The logger bound to the request id (built when something logs). */
  log: () => Logger;
  principal?: Principal;
  /**
   * Headers every response to this POST carries that are not set on the response yet: the request's
   * id and `nosniff` of a request `direct-routes.ts` tracked with `headers: 'caller'`.
   */
  head?: readonly string[];
}

/** An endpoint's POST handling, for `direct-routes.ts` to call from node:http. */
export interface DirectMcp {
  /** Whether the Host header value already passed the endpoint's DNS-rebinding check. */
  hostAccepted(host: string): boolean;
  /**
   * Whether every response `answer` sends carries `caller.head`. Not where an `authenticate` hook
   * answers the request itself (the owner endpoint's 401): its headers must be set on the response
   * first.
   */
  writesHead: boolean;
  /** The POST of `caller`, authenticated first where the endpoint asks for it; never rejects. */
  answer(req: IncomingMessage, res: ServerResponse, caller: Caller): Promise<void>;
}

export function createMcpEndpoint(
  services: Services,
  operations: readonly AnyOperation[],
  options: McpEndpointOptions,
): { router: Router; close: () => Promise<void>; direct: DirectMcp } {
  const transport = new MultiplexTransport();
  relayCancellations(services, options.server, transport);
  const serverFor = toolServerFactory(services, operations, options);
  // 2025-11-25: one long-lived server behind the multiplexing transport.
  const server = serverFor(RegistryServer, (ctx) => transport.exchangeOf(ctx.mcpReq.id)?.caller);
  void connectMultiplexed(server, transport, services.log);
  const modern = modernEntry(services, serverFor);
  const shared = services.config.mcp.shared_modern_server
    ? sharedModernServer(serverFor, services.log)
    : undefined;
  const posts: PostHandling = {
    transport,
    limit: services.config.http.body_limit_bytes,
    serveModern: modern.serve,
    ...(shared ? { shared } : {}),
  };
  /** What the router's error handler does: the failure in the log, a bare Internal error to the client. */
  const failed = (err: unknown, res: ServerResponse, head?: readonly string[]): void => {
    services.log.error({ err }, 'mcp endpoint failed');
    if (res.headersSent) res.destroy();
    else rpcError(res, 500, ProtocolErrorCode.InternalError, 'Internal error', head);
  };
  /** The POST of `caller`, authenticated first where the endpoint asks for it. */
  const authenticated = async (req: IncomingMessage, res: ServerResponse, caller: Caller): Promise<void> => {
    if (options.authenticate) {
      const principal = await options.authenticate(req, res);
      if (!principal) return;
      caller.principal = principal;
    }
    await answerPost(posts, req, res, caller);
  };
  const { router, acceptedHosts } = mcpRouter(options.allowedHosts, authenticated, failed);
  return {
    router,
    close: async () => {
      await modern.close();
      await shared?.close();
      await server.close();
    },
    direct: {
      hostAccepted: (host) => acceptedHosts.has(host),
      writesHead: options.authenticate === undefined,
      answer: (req, res, caller) =>
        authenticated(req, res, caller).catch((err: unknown) => failed(err, res, caller.head)),
    },
  };
}

/**
 * A cancellation for a request another process holds is published to every process, and one
 * published elsewhere for a request this process holds is applied here.
 */
function relayCancellations(services: Services, name: McpServerName, transport: MultiplexTransport): void {
  const cancellations = `mcp-cancellation:${name}`;
  transport.elsewhere = (cancellation) => {
    services.broadcast
      .publish(cancellations, cancellation)
      .catch((err: unknown) => services.log.warn({ err }, 'mcp: a cancellation could not be passed on'));
  };
  services.broadcast.subscribe(cancellations, (message) => {
    const cancellation = ForwardedCancellation.safeParse(message);
    if (cancellation.success) transport.cancelForwarded(cancellation.data);
  });
}

type ToolServerFactory = (
  Kind: typeof Server | typeof RegistryServer,
  callerOf: (ctx: ServerContext) => Caller | undefined,
  supportedProtocolVersions?: string[],
) => Server;

/**
 * Makes SDK servers over this endpoint's tools, asking `callerOf` who made each call: the
 * `RegistryServer` for 2025-11-25, the SDK's own `Server` for 2026-07-28 (its tools/call wrapper
 * also verifies `requestState`, and a stateless request has the cost of a server anyway).
 */
function toolServerFactory(
  services: Services,
  operations: readonly AnyOperation[],
  options: McpEndpointOptions,
): ToolServerFactory {
  const tools = toolsOf(operations, options.server);
  const byTool = new Map(
    operations.filter((op) => op.mcp?.includes(options.server)).map((op) => [op.toolName, op]),
  );
  const callTool = toolCaller(services, operations, byTool);
  // MCP 2026-07-28 server/utilities/caching: the tool list changes only with a deploy; the owner
  // server's is per account (its tools and their results are the caller's own).
  const cacheHint: CacheHint = {
    ttlMs: LIST_TTL_MS,
    cacheScope: options.server === 'owner' ? 'private' : 'public',
  };
  return (Kind, callerOf, supportedProtocolVersions) => {
    const server = new Kind(
      { name: `agent-service-${options.server}`, title: 'Agent service', version: serviceVersion },
      {
        ...(supportedProtocolVersions ? { supportedProtocolVersions } : {}),
        capabilities: { tools: { listChanged: false } },
        instructions: options.instructions,
        cacheHints: { 'tools/list': cacheHint, 'server/discover': cacheHint },
        // MCP 2026-07-28 multi round-trip requests: this server asks for no input and so issues no
        // requestState; one presented is not ours, and is refused (-32602, by the SDK).
        requestState: {
          verify: () => {
            throw new Error('this server issues no requestState');
          },
        },
      },
    );
    server.setRequestHandler('tools/list', () => ({ tools }));
    server.setRequestHandler('tools/call', { params: AnyParams }, (params, ctx) =>
      callTool(params, ctx, callerOf(ctx)),
    );
    return server;
  };
}

type ServeModern = (
  req: IncomingMessage,
  res: ServerResponse,
  caller: Caller,
  body: unknown,
) => Promise<void>;

/**
 * 2026-07-28: the SDK's stateless entry, a server per request (the era is the request's, not a
 * connection's); the request's caller is found by the web Request the entry hands its factory.
 */
function modernEntry(
  services: Services,
  serverFor: ToolServerFactory,
): { serve: ServeModern; close: () => Promise<void> } {
  const callers = new WeakMap<Request, Caller>();
  const modern = createMcpHandler(
    ({ requestInfo }) => serverFor(Server, () => (requestInfo ? callers.get(requestInfo) : undefined)),
    {
      legacy: 'reject',
      onerror: (err) => services.log.debug({ err }, 'mcp: 2026-07-28 request refused or failed'),
    },
  );
  /**
   * A 2026-07-28 POST (or a refused claim), body already read: through the SDK's entry, its answer
   * - JSON, or an SSE stream once a tool reports progress - written back. Closing the response
   * aborts the request, the era's cancellation (basic/utilities/cancellation).
   */
  const serve: ServeModern = async (req, res, caller, body) => {
    const gone = new AbortController();
    const abort = () => gone.abort();
    res.once('close', abort);
    const request = new Request(MODERN_REQUEST_URL, {
      method: 'POST',
      headers: mcpHeadersOf(req),
      signal: gone.signal,
    });
    callers.set(request, caller);
    const response = await modern.fetch(request, { parsedBody: body });
    if (res.destroyed) {
      await response.body?.cancel();
      return;
    }
    await writeResponse(res, response, caller.head);
    res.off('close', abort);
  };
  return { serve, close: () => modern.close() };
}

/**
 * The transport of the long-lived 2026-07-28 server. By class a `PerRequestHTTPServerTransport`:
 * the SDK binds a `Server` connected to one to the revision it was classified with when the
 * server's `supportedProtocolVersions` lists it (the class's documented rule), and the server then
 * encodes every answer as that revision does (`resultType`, `ttlMs`/`cacheScope`, its serverInfo
 * in `_meta`, the revision's error codes). By behaviour the multiplexing transport: whatever the
 * server sends goes to the `MultiplexTransport` that routes it to the exchange it belongs to.
 */
export class ModernBinding extends PerRequestHTTPServerTransport {
  private readonly mux: MultiplexTransport;

  constructor(mux: MultiplexTransport, revision: string) {
    super({ classification: { era: 'modern', revision } });
    this.mux = mux;
  }

  override async start(): Promise<void> {}

  override send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    return this.mux.send(message, options);
  }

  override async close(): Promise<void> {
    this.onclose?.();
  }
}

/** The long-lived 2026-07-28 server and the requests it takes (`sharedModernServer`). */
interface SharedModernServer {
  /**
   * Whether the POST's one message is a request the shared server answers exactly as the SDK's
   * entry would, before the SDK's classifier has seen it.
   */
  takes(message: JSONRPCMessage, req: IncomingMessage): message is JSONRPCRequest;
  /** Answers it; a request the SDK refuses in front of its handler goes to `refused` (the entry) instead. */
  serve(
    res: ServerResponse,
    caller: Caller,
    request: JSONRPCRequest,
    refused: () => Promise<void>,
  ): Promise<void>;
  close(): Promise<void>;
}

/** The members of a request the shared server takes, its params' (by method) and its `_meta`'s. */
const SHARED_REQUEST = new Set(['jsonrpc', 'id', 'method', 'params']);
const SHARED_PARAMS = new Map([
  ['tools/call', new Set(['name', 'arguments', '_meta'])],
  ['tools/list', new Set(['_meta'])],
]);
const SHARED_META = new Set([
  PROTOCOL_VERSION_META_KEY,
  CLIENT_INFO_META_KEY,
  CLIENT_CAPABILITIES_META_KEY,
  'x402/payment',
  SIGN_IN_META,
]);

/**
 * MCP 2026-07-28 requests are stateless, so the SDK's entry (`createMcpHandler`) builds a server, a
 * transport, a web Request and a web Response for each: four times the CPU of a 2025-11-25 call.
 * The common requests - `tools/call` and `tools/list` - are served instead by one long-lived
 * server bound to the revision (`ModernBinding`) behind a multiplexing transport, as the 2025-11-25
 * requests are; the SDK still decodes, checks (the envelope against the revision's schema, the
 * method), dispatches and encodes every one of them.
 *
 * It takes a request only where every check of the entry in front of the server is known to pass,
 * so the SDK's classifier (its type guards cost 15-35 us a call here) is not asked: a JSON-RPC request
 * with no other members, one message, its `_meta` naming this revision, the standard headers equal
 * to what the body says, verbatim (`validateStandardRequestHeaders`), only the params and `_meta`
 * members listed above (no progress token: a progress stream is the entry's; no `requestState`).
 * The envelope's schema is checked by the server itself while the request is delivered, and what
 * it refuses there goes to the entry, which classifies it and answers as it answers every refusal.
 * Anything else - a mismatch, a Base64-encoded `Mcp-Name`, another method - is the entry's.
 * test/integration/mcp-eras.test.ts sends the same requests, hand-picked and generated (most of
 * them near misses of what the shared server takes), to a service with it and one without, and
 * requires the same answers; `mcp.shared_modern_server: false` turns it off.
 */
function sharedModernServer(serverFor: ToolServerFactory, log: Pick<Logger, 'warn'>): SharedModernServer {
  const mux = new MultiplexTransport();
  const revision = MODERN_PROTOCOL_VERSIONS[0] as string;
  const extra: MessageExtraInfo = { classification: { era: 'modern', revision } };
  const server = serverFor(RegistryServer, (ctx) => mux.exchangeOf(ctx.mcpReq.id)?.caller, [
    ...SUPPORTED_PROTOCOL_VERSIONS,
    ...MODERN_PROTOCOL_VERSIONS,
  ]);
  let ready = false;
  const unavailable = (reason: string): void =>
    log.warn(
      { reason },
      'mcp: no shared 2026-07-28 server; every 2026-07-28 request is served by the SDK entry',
    );
  server.connect(new ModernBinding(mux, revision)).then(
    () => {
      if (server.getNegotiatedProtocolVersion() !== revision)
        unavailable('the SDK did not bind it to the revision');
      else if (!mux.bindDirect(server)) unavailable('the SDK no longer has Protocol._onrequest');
      else ready = true;
    },
    (err: unknown) => unavailable(String(err)),
  );
  const onlyOf = (value: Record<string, unknown>, members: ReadonlySet<string>): boolean => {
    for (const key in value) if (!members.has(key)) return false;
    return true;
  };
  return {
    takes(message, req): message is JSONRPCRequest {
      if (!ready || !isRequest(message) || !onlyOf(message, SHARED_REQUEST)) return false;
      const { method, params } = message;
      const members = SHARED_PARAMS.get(method);
      if (!members || !isRecord(params) || !onlyOf(params, members)) return false;
      const meta = params._meta;
      if (!isRecord(meta) || meta[PROTOCOL_VERSION_META_KEY] !== revision || !onlyOf(meta, SHARED_META))
        return false;
      if (req.headers['mcp-protocol-version'] !== revision || req.headers['mcp-method'] !== method)
        return false;
      if (method === 'tools/list') return true;
      const { name, arguments: args } = params;
      return (
        typeof name === 'string' &&
        req.headers['mcp-name'] === name &&
        !name.startsWith('=?') &&
        (args === undefined || isRecord(args))
      );
    },
    async serve(res, caller, request, refused) {
      const exchange = new Exchange(caller, res, false, false);
      res.on('close', () => {
        if (exchange.open) mux.abandon(exchange);
      });
      if (!mux.dispatchModern(exchange, request, extra)) await refused();
    },
    close: () => server.close(),
  };
}

/** The Express side of an endpoint: host and origin checks, CORS preflight, POST, and 405 to GET and DELETE. */
function mcpRouter(
  allowedHosts: string[],
  authenticated: (req: IncomingMessage, res: ServerResponse, caller: Caller) => Promise<void>,
  failed: (err: unknown, res: ServerResponse) => void,
): { router: Router; acceptedHosts: Set<string> } {
  const router = Router();
  const acceptedHosts = new Set<string>();
  router.use(memoized(hostHeaderValidation(allowedHosts), (req) => req.headers.host, acceptedHosts));
  router.use(originValidation(allowedHosts));
  router.options('/', (_req, res) => {
    res
      .status(204)
      .set({
        'Access-Control-Allow-Methods': 'POST, OPTIONS',
        'Access-Control-Allow-Headers':
          'Content-Type, Accept, Authorization, Mcp-Protocol-Version, Mcp-Session-Id, Mcp-Method, Mcp-Name, Last-Event-Id',
        'Access-Control-Max-Age': '600',
      })
      .end();
  });
  router.post('/', (req, res) =>
    authenticated(req, res, { request: requestInfo(req, 'mcp'), log: () => req.log }),
  );
  const stateless: RequestHandler = (_req, res) => {
    res.set('Allow', 'POST, OPTIONS');
    rpcError(res, 405, SERVER_ERROR, 'Method not allowed: this server is stateless; send JSON-RPC with POST');
  };
  router.get('/', stateless);
  router.delete('/', stateless);
  router.use(((err, _req, res, _next) => failed(err, res)) as express.ErrorRequestHandler);
  return { router, acceptedHosts };
}

/** What answering a POST needs of its endpoint. */
interface PostHandling {
  transport: MultiplexTransport;
  /** `http.body_limit_bytes`. */
  limit: number;
  serveModern: ServeModern;
  /** The long-lived 2026-07-28 server (`mcp.shared_modern_server`), for the requests it takes. */
  shared?: SharedModernServer;
}

/** One POST, whoever received it (the router, or `direct-routes.ts`), for `caller`. */
async function answerPost(
  posts: PostHandling,
  req: IncomingMessage,
  res: ServerResponse,
  caller: Caller,
): Promise<void> {
  const read = await readMessages(req, res, caller, posts.limit);
  if (!read) return;
  // MCP 2026-07-28: the era is each request's own, claimed by its `_meta` envelope (and standard
  // headers). A message that claims nothing is 2025-era, even where the SDK's classifier finds its
  // shape wrong (a `_meta` that is not an object): the 2025-11-25 rules answer it, Invalid params
  // naming the field. The classifier answers `modern` only for a claim (`claimsModernEra` asks what
  // it asks), so a POST without one skips it: its type guards, failing zod parses for a request,
  // were 40% of a 2025-11-25 call (85 -> 47 us).
  if (!claimsModernEra(req, read.messages)) return dispatchLegacy(posts.transport, req, res, caller, read);
  // The common 2026-07-28 requests, on the shared server (`sharedModernServer`); what it refuses
  // goes to the SDK's entry.
  const [only] = read.messages;
  if (!read.batch && only && posts.shared?.takes(only, req))
    return posts.shared.serve(res, caller, only, () => posts.serveModern(req, res, caller, read.body));
  // The SDK classifies a claim; a modern request, or a claim it refuses, is its stateless entry's to
  // answer, as it answers it.
  const route = classifyInboundRequest({
    httpMethod: 'POST',
    ...standardHeadersOf(req),
    body: read.body,
  });
  if (route.kind === 'legacy') return dispatchLegacy(posts.transport, req, res, caller, read);
  return posts.serveModern(req, res, caller, read.body);
}

/**
 * The JSON-RPC messages of a POST: its Accept and Content-Type checked, its body read within the
 * limit and every envelope valid. Undefined once the POST is answered (the refusal) or gone.
 */
async function readMessages(
  req: IncomingMessage,
  res: ServerResponse,
  caller: Caller,
  limit: number,
): Promise<{ body: unknown; messages: JSONRPCMessage[]; batch: boolean } | undefined> {
  const refuse = (status: number, code: number, message: string): undefined => {
    rpcError(res, status, code, message, caller.head);
    return undefined;
  };
  const accept = req.headers.accept ?? '*/*';
  if (!/application\/json|\*\/\*|text\/event-stream/.test(accept))
    return refuse(406, SERVER_ERROR, 'Not Acceptable: accept application/json and text/event-stream');
  if (!jsonContentType.test(req.headers['content-type'] ?? ''))
    return refuse(
      415,
      ProtocolErrorCode.InvalidRequest,
      'Unsupported Media Type: Content-Type must be application/json',
    );
  const body = await readJson(req, limit);
  // Gone, or refused while its body was awaited (`http-refusals.ts`): nothing is left to answer.
  if (res.headersSent || (!body.ok && body.error === 'aborted')) return undefined;
  if (!body.ok) {
    if (body.error === 'invalid')
      return refuse(400, ProtocolErrorCode.ParseError, `Parse error: ${describeFault(body.fault)}`);
    closeAfterAnswer(req, res);
    return refuse(413, ProtocolErrorCode.InvalidRequest, 'Request body too large');
  }
  const batch = Array.isArray(body.value);
  const raw: unknown[] = batch ? (body.value as unknown[]) : [body.value];
  const messages: JSONRPCMessage[] = [];
  for (const item of raw) {
    const problem = envelopeProblem(item, body.roundedIds);
    if (problem) return refuse(400, ProtocolErrorCode.InvalidRequest, `Invalid Request: ${problem}`);
    messages.push(item as JSONRPCMessage);
  }
  if (messages.length === 0)
    return refuse(400, ProtocolErrorCode.InvalidRequest, 'Invalid Request: empty batch');
  return { body: body.value, messages, batch };
}

/** A 2025-11-25 POST: its protocol version and batch checked, its messages handed to the multiplexing transport. */
function dispatchLegacy(
  transport: MultiplexTransport,
  req: IncomingMessage,
  res: ServerResponse,
  caller: Caller,
  { messages, batch }: { messages: JSONRPCMessage[]; batch: boolean },
): void {
  const version = req.headers['mcp-protocol-version'];
  if (typeof version === 'string' && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
    rpcError(
      res,
      400,
      ProtocolErrorCode.InvalidRequest,
      `Unsupported protocol version: ${version} (supported: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`,
      caller.head,
    );
    return;
  }
  if (messages.length > 1 && messages.some((m) => isRequest(m) && m.method === 'initialize')) {
    rpcError(
      res,
      400,
      ProtocolErrorCode.InvalidRequest,
      'Invalid Request: initialize must be sent alone',
      caller.head,
    );
    return;
  }
  const requests = messages.filter(isRequest);
  // A session id only names this client's requests for its cancellations (`requesterOf`).
  if (requests[0]?.method === 'initialize') res.setHeader('Mcp-Session-Id', randomUUID());
  if (requests.length === 0) {
    transport.dispatch(new Exchange(caller, res, false, batch), messages, NO_EXTRA);
    sendWhole(res, 202, caller.head, undefined, '');
    return;
  }
  const wantsProgress = requests.some((r) => r.params?._meta?.progressToken !== undefined);
  const streaming = wantsProgress && /text\/event-stream/.test(req.headers.accept ?? '*/*');
  const exchange = new Exchange(caller, res, streaming, batch);
  res.on('close', () => {
    if (exchange.open) transport.abandon(exchange);
  });
  transport.dispatch(exchange, messages, NO_EXTRA);
}

/**
 * The URL of the web Requests handed to the SDK's 2026-07-28 entry: it reads their headers and
 * signal, never the URL (Host and Origin were checked by the router).
 */
const MODERN_REQUEST_URL = 'http://mcp.invalid/';

/**
 * Whether a POST claims the 2026-07-28 era: a message whose `_meta` names a protocol version (the
 * per-request envelope claim), or an `MCP-Protocol-Version` header naming a modern revision - what
 * the SDK's `classifyInboundRequest` looks for before it answers `modern` or refuses a claim
 * (`hasEnvelopeClaim`, `isModernProtocolVersion`; pinned by a property in
 * test/unit/mcp-sdk-internals.test.ts).
 */
export function claimsModernEra(
  req: Pick<IncomingMessage, 'headers'>,
  messages: readonly JSONRPCMessage[],
): boolean {
  const version = req.headers['mcp-protocol-version'];
  if (typeof version === 'string' && version.trim() >= (MODERN_PROTOCOL_VERSIONS[0] as string)) return true;
  return messages.some((m) => {
    const meta = 'params' in m && isRecord(m.params) ? m.params._meta : undefined;
    return isRecord(meta) && PROTOCOL_VERSION_META_KEY in meta;
  });
}

/** The standard MCP request headers (MCP 2026-07-28 basic/transports, SEP-2243), as the SDK's classifier takes them. */
function standardHeadersOf(req: Pick<IncomingMessage, 'headers'>): {
  protocolVersionHeader?: string;
  mcpMethodHeader?: string;
  mcpNameHeader?: string;
} {
  const version = req.headers['mcp-protocol-version'];
  const method = req.headers['mcp-method'];
  const name = req.headers['mcp-name'];
  return {
    ...(typeof version === 'string' ? { protocolVersionHeader: version } : {}),
    ...(typeof method === 'string' ? { mcpMethodHeader: method } : {}),
    ...(typeof name === 'string' ? { mcpNameHeader: name } : {}),
  };
}

/** The headers the SDK's entry reads: content negotiation and every `Mcp-*` header. */
function mcpHeadersOf(req: IncomingMessage): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    if (name !== 'content-type' && name !== 'accept' && !name.startsWith('mcp-')) continue;
    if (typeof value === 'string') headers.set(name, value);
    else for (const item of value) headers.append(name, item);
  }
  return headers;
}

/**
 * Writes a web Response of the SDK's entry to a node response, with `head` (the request id and
 * the headers every answer carries). A stream (SSE) is passed on as it comes; the client closing
 * the response cancels it.
 */
async function writeResponse(
  res: ServerResponse,
  response: Response,
  head?: readonly string[],
): Promise<void> {
  const headers: string[] = head ? [...head] : [];
  response.headers.forEach((value, name) => {
    if (name !== 'content-length') headers.push(name, value);
  });
  const stream = response.body;
  if (stream && response.headers.get('content-type')?.startsWith('text/event-stream')) {
    res.writeHead(response.status, headers);
    res.flushHeaders();
    await new Promise<void>((resolve) => {
      Readable.fromWeb(stream as import('node:stream/web').ReadableStream)
        .on('error', () => res.destroy())
        .on('close', resolve)
        .pipe(res);
    });
    return;
  }
  // As text: node writes the head and a string body in one write; a Buffer body took a second
  // (writev) and doubled the cost of the write on the 2026-07-28 path.
  const body = stream ? await response.text() : '';
  headers.push('Content-Length', String(Buffer.byteLength(body)));
  res.writeHead(response.status, headers);
  res.end(body);
}

// Envelope classification of messages already checked by `isJsonRpcMessage` or produced by the
// SDK. The SDK's own guards run a zod parse each (a failing one for every non-matching message).
const isRequest = (m: JSONRPCMessage): m is JSONRPCRequest => 'method' in m && 'id' in m;
const isNotification = (m: JSONRPCMessage): m is JSONRPCNotification => 'method' in m && !('id' in m);
const isResponse = (m: JSONRPCMessage): m is JSONRPCResultResponse | JSONRPCErrorResponse =>
  !('method' in m) && ('result' in m || 'error' in m);

/**
 * JSON-RPC 2.0 envelope check (request, notification or response): why `value` is not a message
 * this server accepts, or undefined. The SDK validates each method's params against its schema
 * when it handles the message; checking the whole message against the SDK's union schema here as
 * well doubled the cost of a tool call.
 *
 * MCP 2025-11-25 basic: an id is a string or an integer. A number id must also be one the reply
 * can carry back unchanged: beyond 2^53 (or rounded from a long fraction, see `readJson`) it was
 * already altered by parsing, and answering it would answer a request the client never sent.
 */
function envelopeProblem(value: unknown, roundedIds: WeakSet<object> | undefined): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return notAMessage;
  const m = value as Record<string, unknown>;
  if (m.jsonrpc !== '2.0') return notAMessage;
  if (typeof m.id === 'number' && (!Number.isSafeInteger(m.id) || roundedIds?.has(m))) return inexactId;
  const hasId = typeof m.id === 'string' || typeof m.id === 'number';
  if (typeof m.method === 'string') {
    if (m.params !== undefined && (typeof m.params !== 'object' || m.params === null)) return notAMessage;
    return hasId || m.id === undefined ? undefined : notAMessage;
  }
  return hasId && ('result' in m || 'error' in m) ? undefined : notAMessage;
}
const notAMessage = 'not a JSON-RPC 2.0 message';
const inexactId = 'id must be a string or an integer from -(2^53 - 1) to 2^53 - 1';

/**
 * What MCP 2025-11-25 asks of a request before its handler runs, where the SDK would answer
 * otherwise. Returns the request to deliver, or the message of its Invalid params error.
 * - `_meta` is an object, and "Progress tokens MUST be a string or integer value"
 *   (basic/utilities/progress), for every method: the SDK checks this only where it parses the
 *   whole request, and then reports it as Internal error.
 * - "Receivers that do not declare the task capability for a request type MUST process requests
 *   of that type normally, ignoring any task-augmentation metadata" (basic/utilities/tasks, Task
 *   Support and Handling). This server declares none, so `task` and the related-task `_meta` key
 *   are removed: the SDK refuses the first, and for the second sends the request's progress
 *   notifications to a task queue this server does not have, which fails the call.
 * - initialize, ping and tools/list params are checked against their schemas (`paramsOf`).
 * The common request (tools/call, no `_meta`, no `task`) costs two property reads and a map lookup.
 */
function admit(request: JSONRPCRequest): JSONRPCRequest | string {
  let params = request.params as Record<string, unknown> | undefined;
  const meta = params?._meta;
  if (meta !== undefined) {
    if (typeof meta !== 'object' || meta === null || Array.isArray(meta))
      return `Invalid ${request.method} params: params._meta: expected an object`;
    const token = (meta as Record<string, unknown>).progressToken;
    if (token !== undefined && typeof token !== 'string' && !Number.isSafeInteger(token))
      return `Invalid ${request.method} params: params._meta.progressToken: expected a string or an integer`;
    if (RELATED_TASK_META_KEY in meta) {
      const { [RELATED_TASK_META_KEY]: _ignored, ...rest } = meta as Record<string, unknown>;
      params = { ...params, _meta: rest };
    }
  }
  if (params?.task !== undefined) {
    const { task: _ignored, ...rest } = params;
    params = rest;
  }
  const schema = paramsOf.get(request.method);
  if (schema) {
    const parsed = schema.safeParse(params);
    if (!parsed.success) return invalidParams(request.method, parsed.error);
  }
  return params === request.params ? request : { ...request, params };
}

/** The Invalid params message of a request, naming each offending field from `params`. */
function invalidParams(method: string, error: z.ZodError): string {
  const detail = error.issues
    .map((i) => `${['params', ...i.path.map(String)].join('.')}: ${i.message}`)
    .join('; ');
  return `Invalid ${method} params: ${detail}`;
}

const jsonContentType = /^application\/json\s*(?:;|$)/i;

/**
 * Remembers the header values a check accepted, so the check runs once per distinct value (the
 * SDK's host validation parses a URL on every request). Bounded; refusals are never remembered.
 */
function memoized(
  check: RequestHandler,
  keyOf: (req: ExpressRequest) => string | undefined,
  accepted: Set<string>,
): RequestHandler {
  return (req, res, next) => {
    const key = keyOf(req);
    if (key !== undefined && accepted.has(key)) return next();
    check(req, res, (err?: unknown) => {
      if (err === undefined && key !== undefined && accepted.size < 256) accepted.add(key);
      next(err);
    });
  };
}

/**
 * The only JSON number literals that can parse to an integer they are not: 16 or more digits
 * (IEEE 754 doubles hold 15 to 17 significant ones: 4503599627370496.5 parses to 2^52) or an
 * exponent below -99 (1e-400 parses to 0). Strings that look alike only cost the slower parse;
 * the test over a typical tools/call body takes a fraction of a microsecond.
 */
const inexactNumber = /\d(?:\.?\d){15}|\d[eE]-\d{3}/;

/** Whether a JSON number literal (RFC 8259 section 6) denotes exactly the integer `value`. */
function denotes(literal: string, value: number): boolean {
  const parts = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(literal);
  if (!parts) return false;
  const fraction = parts[3] ?? '';
  const significant = `${parts[2]}${fraction}`.replace(/^0+/, '');
  const digits = significant.replace(/0+$/, '');
  if (digits === '') return value === 0;
  const zeros = Number(parts[4] ?? 0) - fraction.length + significant.length - digits.length;
  if (zeros < 0 || digits.length + zeros > 16) return false; // a fraction, or beyond 2^53
  return `${parts[1]}${digits}${'0'.repeat(zeros)}` === String(value);
}

/**
 * Reads a JSON body up to `limit` bytes. Lighter than body-parser on the hot path of every MCP call;
 * the content type was checked by the caller. The body is held to the service's one rule for JSON
 * (`parseJsonBody`). A body that may hold an inexact number is parsed with each number's source
 * text (ECMAScript JSON.parse source text access), and the objects whose numeric `id` parsing
 * altered are returned in `roundedIds`.
 */
async function readJson(
  req: IncomingMessage,
  limit: number,
): Promise<
  | { ok: true; value: unknown; roundedIds?: WeakSet<object> }
  | { ok: false; error: 'too_large' | 'aborted' }
  | { ok: false; error: 'invalid'; fault: MalformedJson }
> {
  // Not read: Node drops the rest of a body its answer did not read.
  if (Number(req.headers['content-length']) > limit) return { ok: false, error: 'too_large' };
  const chunks: Buffer[] = [];
  const outcome = await new Promise<'read' | 'too_large' | 'aborted'>((resolve) => {
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.removeAllListeners('data');
        req.resume();
        resolve('too_large');
      } else chunks.push(chunk);
    });
    req.once('end', () => resolve('read'));
    // One function for both: `on` keeps it as it is, `once` would wrap it for each.
    const aborted = () => resolve('aborted');
    req.on('aborted', aborted).on('error', aborted);
  });
  if (outcome !== 'read') return { ok: false, error: outcome };
  let roundedIds: WeakSet<object> | undefined;
  const parsed = parseJsonBody(
    chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks),
    (text) => {
      if (!inexactNumber.test(text)) return undefined;
      const rounded = new WeakSet<object>();
      roundedIds = rounded;
      return function (this: object, key, value, context) {
        if (key === 'id' && typeof value === 'number' && !denotes(context?.source ?? '', value))
          rounded.add(this);
        return value;
      };
    },
  );
  if (!parsed.ok) return { ok: false, error: 'invalid', fault: parsed.fault };
  return roundedIds ? { ok: true, value: parsed.value, roundedIds } : { ok: true, value: parsed.value };
}

/** What the SDK's handlers are told of a 2025-11-25 request's HTTP side: nothing; a tool call reads its `Caller`. */
const NO_EXTRA: MessageExtraInfo = {};

function rpcError(
  res: ServerResponse,
  status: number,
  code: number,
  message: string,
  head?: readonly string[],
): void {
  const body = JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null });
  sendWhole(res, status, head, JSON_CONTENT_TYPE, body);
}

/** MCP transports, security warning: validate Origin to prevent DNS rebinding. */
function originValidation(allowedHosts: string[]): RequestHandler {
  return (req, res, next) => {
    const origin = req.headers.origin;
    if (origin === undefined) return next();
    let hostname: string;
    try {
      hostname = new URL(origin).hostname;
    } catch {
      return rpcError(res, 403, SERVER_ERROR, 'Invalid Origin header');
    }
    if (!allowedHosts.includes(hostname)) {
      return rpcError(res, 403, SERVER_ERROR, `Origin not allowed: ${origin}`);
    }
    res.set({
      'Access-Control-Allow-Origin': origin,
      Vary: 'Origin',
      'Access-Control-Expose-Headers': 'Mcp-Session-Id',
    });
    next();
  };
}
