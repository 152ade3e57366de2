/**
 * Per request: an id, `X-Content-Type-Options: nosniff`, and one structured log line (pino): request id, method, path, status, duration. Never
 * the query string, headers or body - they can hold personal data. The request id comes from a
 * well-formed `X-Request-Id` or is generated, and is echoed in the response and in problem bodies.
 * The line is at error for a fault (500), at warn for a 5xx the service answers by design (503,
 * 502: `designed5xxStatuses`), at info otherwise.
 *
 * Hand-written rather than pino-http: pino-http serializes whole request and response objects and
 * costs about as much as the rest of a request (measured with `npm run bench`). The line goes to the
 * root logger's output as pino would write it, composed without pino's generic serialization
 * (`requestLineWriter` in `logger.ts`); `req.log`, a child bound to the request id, is built only
 * when something reads it (most requests log nothing but their line).
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Express, Request, RequestHandler } from 'express';
import type { Logger } from 'pino';
import { designed5xxStatuses } from './errors.ts';
import { requestLineWriter } from './logger.ts';

declare module 'node:http' {
  interface IncomingMessage {
    /** Request id (X-Request-Id). */
    id: string;
    /** Logger bound to this request's id (built on first use). */
    log: Logger;
  }
}

const requestIdPattern = /^[\w.:-]{1,64}$/;

/** Installs the request log on `app`: the middleware, and `req.log` on the app's requests. */
export function requestLog(app: Express, log: Logger): RequestHandler {
  const own = (req: Request, value: Logger): Logger => {
    Object.defineProperty(req, 'log', { value, writable: true, configurable: true, enumerable: true });
    return value;
  };
  Object.defineProperty(app.request, 'log', {
    configurable: true,
    get(this: Request): Logger {
      return own(this, log.child({ req_id: this.id }));
    },
    set(this: Request, value: Logger) {
      own(this, value);
    },
  });
  const track = requestTracker(log);
  return (req, res, next) => {
    req.id = track(req, res);
    next();
  };
}

/**
 * The headers every answer carries, as `res.writeHead` takes them after its own: the request's id
 * and `nosniff`.
 */
export const trackedHead = (id: string): string[] => [
  'X-Request-Id',
  id,
  'X-Content-Type-Options',
  'nosniff',
];

/**
 * What every request gets, whichever way it is answered (Express, or `direct-routes.ts`): its id
 * (a well-formed `X-Request-Id`, else a new one) in the response with `nosniff`, and its log line
 * once the response is finished or abandoned. Returns the id.
 *
 * With `headers: 'caller'` the two headers are not set on the response: the caller writes them with
 * every head it sends (`trackedHead`), in one `writeHead` call. Node keeps headers set one by one in
 * an object per response whose shape differs with every route's set of headers; once a service
 * answers many routes, each `setHeader` runs on megamorphic property accesses (callgrind: about
 * 3,400 instructions a call), and a public MCP call made three.
 */
export function requestTracker(
  log: Logger,
): (req: IncomingMessage, res: ServerResponse, headers?: 'set' | 'caller') => string {
  const write = requestLineWriter(log);
  return (req, res, headers = 'set') => {
    const started = performance.now();
    const incoming = req.headers['x-request-id'];
    const id = typeof incoming === 'string' && requestIdPattern.test(incoming) ? incoming : randomUUID();
    if (headers === 'set') {
      res.setHeader('X-Request-Id', id);
      res.setHeader('X-Content-Type-Options', 'nosniff');
    }
    // 'close' is emitted once per response: `on`, not `once`, which wraps the listener per call.
    res.on('close', () => {
      const status = res.writableFinished ? res.statusCode : 499;
      const level = status < 500 ? 'info' : designed5xxStatuses.has(status) ? 'warn' : 'error';
      if (!log.isLevelEnabled(level)) return;
      // Express's originalUrl: the URL as received, before any router trimmed its mount path.
      const url = (req as { originalUrl?: string }).originalUrl ?? req.url ?? '';
      const query = url.indexOf('?');
      write(
        level,
        {
          req_id: id,
          method: req.method as string,
          path: query === -1 ? url : url.slice(0, query),
          status,
          ms: Math.round((performance.now() - started) * 10) / 10,
        },
        res.writableFinished ? 'request completed' : 'request aborted',
      );
    });
    return id;
  };
}
