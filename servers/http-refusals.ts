/**
 * Requests refused at the HTTP level, before or while their body is read:
 * - a request line and header fields over Node's limit (a long query string): 431
 *   `request_header_fields_too_large`; a message that is not HTTP/1.1: 400 `malformed_request`;
 *   headers slower than Node's `headersTimeout`: 408 `request_timeout` - from `clientError`;
 * - a body not in `server.body_timeout_ms` after its headers: 408 `request_timeout`. Only receiving
 *   counts: a handler that takes longer once the body is in (a long tool call) is not cut;
 * - a body over its limit while the client still sends it: the adapters' 413, through
 *   `closeAfterAnswer` (REST for a declared length over it: body-parser reads a chunked body to
 *   its end first).
 *
 * Each is a whole problem+json answer with `Connection: close`, and the connection is then closed
 * in stages (RFC 9112 section 9.6, "Tear-down"): the write side first, then what the client still
 * sends is read and dropped for up to `LINGER_MS` and `LINGER_BYTES`, then the socket is closed.
 * Node's default closes the socket right after the answer: the kernel then answers the bytes still
 * arriving with a reset, and a client still sending its body never reads the answer.
 */
import { randomUUID } from 'node:crypto';
import {
  type IncomingMessage,
  maxHeaderSize,
  type Server,
  type ServerResponse,
  STATUS_CODES,
} from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import { PROBLEM_CONTENT_TYPE, type Problem, problemTypeUrl } from './adapters/problem.ts';
import { type ErrorCode, errorCodes } from './errors.ts';
import { requestLineWriter } from './logger.ts';

/** How long, and how many bytes, a refused client may go on sending before its socket is closed. */
const LINGER_MS = 5_000;
const LINGER_BYTES = 16 * 1024 * 1024;

interface Refusal {
  code: ErrorCode;
  detail: string;
}

/** Sockets being closed in stages, and how many bytes they had read when it began. */
const closing = new WeakMap<Socket, number>();

/**
 * Ends `socket`'s write side once what is queued (the answer) is sent, reads and drops what the
 * client still sends (its request's body, `req`), and closes it when the client closes its side,
 * after `LINGER_MS`, or past `LINGER_BYTES`.
 */
function closeInStages(socket: Socket, req?: IncomingMessage): void {
  if (closing.has(socket) || socket.destroyed) return;
  closing.set(socket, socket.bytesRead);
  if (req) {
    req.on('data', () => dropPastLimit(socket));
    req.resume();
  }
  socket.end();
  const timer = setTimeout(() => socket.destroy(), LINGER_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
}

function dropPastLimit(socket: Socket): void {
  const from = closing.get(socket);
  if (from !== undefined && socket.bytesRead - from > LINGER_BYTES) socket.destroy();
}

/**
 * Makes the answer `res` is about to send the last on its connection when `req`'s body is still
 * arriving: `Connection: close`, and the connection closed in stages once the answer is written.
 * Node calls `destroySoon` when a `Connection: close` answer is finished; this socket's closes it
 * in stages instead. The tests of test/integration/http-refusals.test.ts fail with a reset if
 * Node stops calling it.
 */
export function closeAfterAnswer(req: IncomingMessage, res: ServerResponse): void {
  if (req.complete || res.headersSent) return;
  res.setHeader('Connection', 'close');
  const socket = req.socket;
  socket.destroySoon = () => closeInStages(socket, req);
}

function problemOf(siteUrl: string, refusal: Refusal, instance: string, requestId: string): string {
  const { status, title } = errorCodes[refusal.code];
  const problem: Problem = {
    type: problemTypeUrl(siteUrl, refusal.code),
    title,
    status,
    detail: refusal.detail,
    code: refusal.code,
    instance,
    request_id: requestId,
  };
  return JSON.stringify(problem);
}

/** What a `clientError` is refused with; undefined: nothing to answer (the client reset, a write failed). */
function refusalOf(err: NodeJS.ErrnoException & { reason?: unknown }): Refusal | undefined {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return {
        code: 'request_header_fields_too_large',
        detail: `The request line and header fields are larger than ${maxHeaderSize} bytes`,
      };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { code: 'payload_too_large', detail: 'The chunk extensions of the body are too large' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { code: 'request_timeout', detail: 'The request did not arrive in time' };
  }
  if (!err.code?.startsWith('HPE_')) return undefined;
  const reason = typeof err.reason === 'string' ? `: ${err.reason}` : '';
  return { code: 'malformed_request', detail: `The request is not valid HTTP/1.1${reason}` };
}

/** Method and path (without the query) of the request line at the start of `raw`, as far as they read. */
function requestLineOf(raw: unknown): { method: string; path: string } {
  const start = Buffer.isBuffer(raw) ? raw.subarray(0, 2048).toString('latin1') : '';
  const line = /^([A-Z]{1,20}) ([!-~]*?)(?:[? ]|$)/.exec(start);
  return { method: line?.[1] ?? '-', path: line?.[2] || '-' };
}

export interface ConnectionGuardOptions {
  siteUrl: string;
  /** `server.body_timeout_ms`. */
  bodyTimeoutMs: number;
  log: Logger;
}

/**
 * Installs the refusals on `server`. The request listener calls `watchBody` with each request
 * before handling it (one listener: Node copies the listener list of an event that has several,
 * on every request); `stop` ends the body watch.
 */
export function guardConnections(
  server: Server,
  options: ConnectionGuardOptions,
): { watchBody(req: IncomingMessage, res: ServerResponse): void; stop(): void } {
  const { siteUrl, bodyTimeoutMs, log } = options;
  const writeLine = requestLineWriter(log);

  /** The refusal as the answer of `res`, whose request's body is still arriving. */
  const answerThrough = (req: IncomingMessage, res: ServerResponse, refusal: Refusal): void => {
    const id = typeof req.id === 'string' ? req.id : randomUUID();
    const url = (req as { originalUrl?: string }).originalUrl ?? req.url ?? '/';
    const body = problemOf(siteUrl, refusal, url.split('?')[0] || '/', id);
    closeAfterAnswer(req, res);
    res
      .writeHead(errorCodes[refusal.code].status, {
        'Content-Type': `${PROBLEM_CONTENT_TYPE}; charset=utf-8`,
        'Content-Length': Buffer.byteLength(body),
        'Cache-Control': 'no-store',
        'X-Request-Id': id,
        'X-Content-Type-Options': 'nosniff',
      })
      .end(body);
    // What reads the body (raw-body under Express and oidc-provider, the MCP adapter's `readJson`)
    // ends on `aborted`, as when the client goes away: no handler runs for a request answered.
    req.emit('aborted');
  };

  server.on('clientError', (err: NodeJS.ErrnoException & { rawPacket?: unknown }, socket: Socket) => {
    // While it is closed in stages the parser refuses every further chunk the client sends.
    if (closing.has(socket)) return dropPastLimit(socket);
    const refusal = refusalOf(err);
    // The response under way on this socket (`_httpMessage`, what Node's own clientError default
    // looks at): the refusal is its answer if it has not started and its body is what failed.
    const current = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
    if (!refusal || !socket.writable || (current && (current.headersSent || current.req.complete))) {
      socket.destroy();
      return;
    }
    if (current) return answerThrough(current.req, current, refusal);
    const id = randomUUID();
    const { method, path } = requestLineOf(err.rawPacket);
    const body = problemOf(siteUrl, refusal, path === '-' ? '/' : path, id);
    const status = errorCodes[refusal.code].status;
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nDate: ${new Date().toUTCString()}\r\n` +
        `Content-Type: ${PROBLEM_CONTENT_TYPE}; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `Cache-Control: no-store\r\nX-Request-Id: ${id}\r\nX-Content-Type-Options: nosniff\r\n` +
        `Connection: close\r\n\r\n${body}`,
    );
    closeInStages(socket);
    if (log.isLevelEnabled('info'))
      writeLine('info', { req_id: id, method, path, status, ms: 0 }, 'request refused');
  });

  // Requests whose body is still arriving once the chunk that brought their headers is parsed,
  // and since when. Looked at a turn later (`setImmediate`, one for all the requests of a turn),
  // not at once: Node parses a body that came with its headers only after the request event, and
  // a request held here until a sweep would outlive the collector's young generation.
  const awaiting = new Map<IncomingMessage, { res: ServerResponse; since: number }>();
  let arrived: (IncomingMessage | ServerResponse)[] = [];
  const lookAtArrived = (): void => {
    const since = performance.now();
    const list = arrived;
    arrived = [];
    for (let i = 0; i < list.length; i += 2) {
      const req = list[i] as IncomingMessage;
      if (!req.complete && !req.destroyed) awaiting.set(req, { res: list[i + 1] as ServerResponse, since });
    }
  };
  const watchBody = (req: IncomingMessage, res: ServerResponse): void => {
    const headers = req.headers;
    if (headers['content-length'] === undefined && headers['transfer-encoding'] === undefined) return;
    if (arrived.length === 0) setImmediate(lookAtArrived);
    arrived.push(req, res);
  };
  const interval = Math.min(1_000, Math.max(10, Math.floor(bodyTimeoutMs / 4)));
  const sweep = setInterval(() => {
    const now = performance.now();
    for (const [req, { res, since }] of awaiting) {
      if (req.complete || req.destroyed) {
        awaiting.delete(req);
        continue;
      }
      if (now - since < bodyTimeoutMs) continue;
      awaiting.delete(req);
      if (!res.headersSent) {
        answerThrough(req, res, {
          code: 'request_timeout',
          detail: `The body did not arrive within ${bodyTimeoutMs} ms of the headers`,
        });
      } else if (res.writableEnded) {
        // Answered before its body was read (a 413, a 401) and the rest still trickles in.
        closeInStages(req.socket, req);
      } else {
        req.socket.destroy();
      }
    }
  }, interval);
  sweep.unref();
  // Node's own bound on a whole request (`requestTimeout`, 300 s by default) stays as a backstop
  // behind this one.
  server.requestTimeout = Math.max(
    server.requestTimeout,
    server.headersTimeout + bodyTimeoutMs + 2 * interval,
  );
  return { watchBody, stop: () => clearInterval(sweep) };
}
