/**
 * Per request: an id, `X-Content-Type-Options: nosniff`, and one structured log line (pino): request id, method, path, status, duration. Never
 * the query string, headers or body - they can hold personal data. The request id comes from a
 * well-formed `X-Request-Id` or is generated, and is echoed in the response and in problem bodies.
 *
 * Hand-written rather than pino-http: pino-http serializes whole request and response objects and
 * costs about as much as the rest of a request (measured with `npm run bench`).
 */
import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import type { Logger } from 'pino';

declare module 'node:http' {
  interface IncomingMessage {
    /** Request id (X-Request-Id). */
    id: string;
    /** Logger bound to this request's id. */
    log: Logger;
  }
}

const requestIdPattern = /^[\w.:-]{1,64}$/;

export function requestLog(log: Logger): RequestHandler {
  return (req, res, next) => {
    const started = performance.now();
    const incoming = req.headers['x-request-id'];
    const id = typeof incoming === 'string' && requestIdPattern.test(incoming) ? incoming : randomUUID();
    req.id = id;
    req.log = log.child({ req_id: id });
    res.setHeader('X-Request-Id', id);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.once('close', () => {
      const status = res.writableFinished ? res.statusCode : 499;
      const level = status >= 500 ? 'error' : 'info';
      if (!log.isLevelEnabled(level)) return;
      const url = req.originalUrl;
      const query = url.indexOf('?');
      log[level](
        {
          req_id: id,
          method: req.method,
          path: query === -1 ? url : url.slice(0, query),
          status,
          ms: Math.round((performance.now() - started) * 10) / 10,
        },
        res.writableFinished ? 'request completed' : 'request aborted',
      );
    });
    next();
  };
}
