/**
 * REST projection of the registry: one Express router per surface, one route per operation.
 * The adapter only translates (query or JSON body in, JSON or problem+json out); behaviour lives in
 * `invokeOperation` and the handlers.
 */

import type { IncomingMessage, ServerResponse } from 'node:http';
import { encodePaymentResponseHeader } from '@x402/core/http';
import type { SettleResponse } from '@x402/core/types';
import cors from 'cors';
import {
  type ErrorRequestHandler,
  type NextFunction,
  type Request,
  type RequestHandler,
  type Response,
  Router,
} from 'express';
import type { Logger } from 'pino';
import { failureLogLevel, notFound, ServiceError, toServiceError } from '../errors.ts';
import { closeAfterAnswer } from '../http-refusals.ts';
import { jsonBody } from '../json-body.ts';
import { jsonSchemaOf } from '../json-schema.ts';
import {
  type AnyOperation,
  CallContext,
  invokeCall,
  isRecord,
  type OperationContext,
  pathParamsOf,
  type RequestInfo,
  type Surface,
} from '../operation.ts';
import type { PaymentCredential } from '../payments/credential.ts';
import type { PaidReceipt } from '../payments/service.ts';
import { publicUrlProblem } from '../public-address.ts';
import type { Services } from '../services.ts';
import { jsonOf } from './json.ts';
import { asYaml, openApiDocument, siteOpenApiDocument } from './openapi.ts';
import { sendProblem } from './problem.ts';

/** What an operation may know of the HTTP request it runs for, whichever adapter received it. */
export function requestInfo(req: Request, via: RequestInfo['via']): RequestInfo {
  return {
    id: String(req.id),
    ip: req.ip ?? req.socket.remoteAddress ?? 'unknown',
    via,
    headers: req.headers as Record<string, string | undefined>,
  };
}

function restContext(
  req: Request,
  res: Response,
  services: Services,
  operations: readonly AnyOperation[],
): OperationContext {
  return new CallContext(
    { services, operations, request: requestInfo(req, 'rest'), signal: () => abortedOnDisconnect(res) },
    () => req.log,
  );
}

/** Aborts once the client goes away before the response is finished (built when a handler asks). */
export function abortedOnDisconnect(res: ServerResponse): AbortSignal {
  const controller = new AbortController();
  if (!res.closed) {
    res.once('close', () => {
      if (!res.writableFinished) controller.abort();
    });
  } else if (!res.writableFinished) {
    controller.abort();
  }
  return controller.signal;
}

/**
 * The x402 payment of a request (specs/transports-v2/http.md): `PAYMENT-SIGNATURE` (v2), or
 * `X-PAYMENT` (v1 clients). Both at once is ambiguous; the core is handed the v2 one and refuses
 * what does not fit.
 */
function paymentCredential(req: Request): PaymentCredential | undefined {
  const v2 = req.headers['payment-signature'];
  if (typeof v2 === 'string') return { transport: 'http', header: 'PAYMENT-SIGNATURE', value: v2 };
  const v1 = req.headers['x-payment'];
  if (typeof v1 === 'string') return { transport: 'http', header: 'X-PAYMENT', value: v1 };
  return undefined;
}

/** The receipt of a paid response, as x402 clients read it (`PAYMENT-RESPONSE`, v1 `X-PAYMENT-RESPONSE`). */
function sendReceipt(res: Response, paid: PaidReceipt | undefined): void {
  if (!paid) return;
  const header = paid.version === 1 ? 'X-PAYMENT-RESPONSE' : 'PAYMENT-RESPONSE';
  res.setHeader(header, encodePaymentResponseHeader(paid.receipt as unknown as SettleResponse));
  res.setHeader('Cache-Control', 'private, no-store');
}

/**
 * Query values of a paid GET as the input schema types them: every SKU input is a scalar, and a
 * query string carries text only (`?public=false&max_pages=20`).
 */
function queryCoercer(op: AnyOperation): (query: Record<string, unknown>) => Record<string, unknown> {
  const properties = (jsonSchemaOf(op.input, 'input').properties ?? {}) as Record<
    string,
    Record<string, unknown>
  >;
  const types = new Map<string, Set<string>>();
  for (const [name, schema] of Object.entries(properties)) {
    const variants = (schema.anyOf as Record<string, unknown>[] | undefined) ?? [schema];
    types.set(name, new Set(variants.map((v) => String(v.type))));
  }
  return (query) => {
    const out: Record<string, unknown> = { ...query };
    for (const [name, value] of Object.entries(query)) {
      const expected = types.get(name);
      if (!expected || typeof value !== 'string' || expected.has('string')) continue;
      if (
        (expected.has('number') || expected.has('integer')) &&
        /^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(value)
      ) {
        out[name] = Number(value);
      } else if (expected.has('boolean') && (value === 'true' || value === 'false')) {
        out[name] = value === 'true';
      } else if (expected.has('null') && value === 'null') {
        out[name] = null;
      }
    }
    return out;
  };
}

/**
 * A paid call that carries neither input nor payment - no body (or an empty one) and no query, as
 * x402's Bazaar indexers send to read a resource's terms: answered with the 402 of its terms
 * (`PaymentsService.quote`) rather than a 400 or 415 about the input it did not mean to send.
 */
function unpaidWithoutInput(req: Request): boolean {
  if (paymentCredential(req) !== undefined) return false;
  if (req.method === 'GET' || req.method === 'HEAD') return Object.keys(req.query).length === 0;
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] === undefined && (length === undefined || length === '0');
}

/** JSON bodies only; anything else is 415 before the body is read. */
export function requireJson(): RequestHandler {
  return (req, _res, next) => {
    if (!req.is('application/json')) {
      next(
        new ServiceError('unsupported_media_type', {
          detail: `Send the body as application/json (got ${req.headers['content-type'] ?? 'no content type'})`,
        }),
      );
      return;
    }
    next();
  };
}

/**
 * express.json, refusing a body whose declared length is over `limit` before reading any of it:
 * body-parser reads such a body to its end before it answers 413. `problemHandler` then closes the
 * connection in stages while the client still sends (`closeAfterAnswer`).
 */
function jsonBodyWithin(limit: number): RequestHandler {
  const parse = jsonBody(limit);
  return (req, res, next) => {
    if (Number(req.headers['content-length']) > limit) return next(bodyTooLarge(limit));
    parse(req, res, next);
  };
}

const bodyTooLarge = (limit: number): ServiceError =>
  new ServiceError('payload_too_large', { detail: `The body is larger than ${limit} bytes` });

/**
 * The router of one REST surface: cross-origin access for agents running in browsers (keyless, no
 * cookies, so any origin), the surface's OpenAPI document as JSON and YAML, one route per operation,
 * and 405 with `Allow` for the other methods on those paths.
 */
export function surfaceRouter(
  surface: Surface,
  operations: readonly AnyOperation[],
  services: Services,
): Router {
  const router = Router({ strict: false });
  const preflight = cors({ origin: '*', exposedHeaders, maxAge: 600 });
  const crossOrigin: RequestHandler = (req, res, next) => {
    if (req.method === 'OPTIONS') return preflight(req, res, next);
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.setHeader('Access-Control-Expose-Headers', exposedHeaders);
    next();
  };
  // The site root is shared with pages, the authorization server and cookies: there only the
  // surface's own routes are opened to other origins.
  if (surface !== 'site') router.use(crossOrigin);

  // The site's document is the whole site's: every surface in one (issue 14). Built and written out
  // on the first request for it, not at start: the YAML alone was a tenth of a start's CPU.
  let written: { json: string; yaml: string } | undefined;
  const documents = () => {
    if (written) return written;
    const document =
      surface === 'site'
        ? siteOpenApiDocument(operations, services.config)
        : openApiDocument(surface, operations, services.config);
    written = { json: JSON.stringify(document, null, 2), yaml: asYaml(document) };
    return written;
  };
  if (surface === 'site') router.all(['/openapi.json', '/openapi.yaml'], crossOrigin);
  router.get('/openapi.json', (_req, res) => {
    res.type('application/json').send(documents().json);
  });
  router.get('/openapi.yaml', (_req, res) => {
    res.type('application/yaml').send(documents().yaml);
  });

  const methodsByPath = new Map<string, Set<string>>();
  const defaultBody = jsonBodyWithin(services.config.http.body_limit_bytes);
  for (const op of operations) {
    const http = op.http;
    if (!http || http.surface !== surface) continue;
    const pathParams = pathParamsOf(http.path);
    const handler =
      (input: 'query' | 'body' | 'none', coerce?: ReturnType<typeof queryCoercer>): RequestHandler =>
      async (req, res) => {
        const ctx = restContext(req, res, services, operations);
        // x402 sign-in-with-x: the paying wallet's proof, for reads of what it paid for.
        const signIn = req.headers['sign-in-with-x'];
        if (typeof signIn === 'string') ctx.signIn = { transport: 'http', value: signIn };
        let source = input === 'query' ? req.query : input === 'body' ? req.body : undefined;
        const credential = op.sku ? paymentCredential(req) : undefined;
        if (op.sku) {
          if (input === 'query' && unpaidWithoutInput(req)) source = undefined;
          else if (coerce) source = coerce(source);
          // A paid POST may name its referral handle in the query as well (`?ref=`).
          else if (typeof req.query.ref === 'string' && isRecord(source) && !('ref' in source))
            source = { ...source, ref: req.query.ref };
        }
        // Path parameters win over same-named fields in the query or body.
        const merged = pathParams.length && isRecord(source) ? { ...source, ...req.params } : source;
        const { output, paid } = await invokeCall(op, ctx, merged, credential);
        if (http.redirect) {
          const location = http.redirect(output);
          // The public-address rule holds for every redirect, targets stored before it included.
          if (publicUrlProblem(location, services.domainPolicy))
            throw notFound('The target of this link is not a public address');
          res.setHeader('Cache-Control', 'no-store');
          res.redirect(302, location);
          return;
        }
        sendReceipt(res, paid);
        if (http.representation) {
          res
            .status(http.successStatus ?? 200)
            .type(http.representation.contentType)
            .send(http.representation.body(output));
          return;
        }
        sendJson(res, http.status?.(output) ?? http.successStatus ?? 200, output);
      };
    const method = http.method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete';
    const body = http.bodyLimitBytes ? jsonBodyWithin(http.bodyLimitBytes) : defaultBody;
    if (surface === 'site') router.all(http.path, crossOrigin);
    if (http.input === 'body' && op.sku) {
      const quote = handler('none');
      const unpaidBodiless: RequestHandler = (req, res, next) =>
        unpaidWithoutInput(req) ? quote(req, res, next) : next();
      router[method](http.path, unpaidBodiless, requireJson(), body, handler('body'));
    } else if (http.input === 'body') router[method](http.path, requireJson(), body, handler('body'));
    else router[method](http.path, handler('query'));
    const methods = methodsByPath.get(http.path) ?? new Set<string>();
    methods.add(http.method);
    // A SKU is sold over GET with query parameters too: every SKU input is a scalar (issue 9).
    if (op.sku && http.method !== 'GET') {
      router.get(http.path, handler('query', queryCoercer(op)));
      methods.add('GET');
    }
    if (methods.has('GET')) methods.add('HEAD');
    methodsByPath.set(http.path, methods);
  }

  for (const [path, methods] of methodsByPath) router.all(path, methodNotAllowed([...methods]));
  const paths = [...methodsByPath.keys()];
  router.use(((err, req, _res, next) => {
    next(isUndecodablePath(err) ? undecodablePath(req.path, paths) : err);
  }) as ErrorRequestHandler);
  return router;
}

/**
 * Express decodes each path parameter with decodeURIComponent and passes on the URIError, marked
 * 400, when a segment is not valid percent-encoding (RFC 3986 section 2.1) - `%E0%A4%A`.
 */
const isUndecodablePath = (err: unknown): boolean =>
  err instanceof URIError && (err as { status?: number }).status === 400;

const decodes = (segment: string): boolean => {
  try {
    decodeURIComponent(segment);
    return true;
  } catch {
    return false;
  }
};

/**
 * The problem for a path with a segment that does not decode, naming the parameter of the route
 * the path is meant for when one of `routes` (Express paths of this router) fits it.
 */
function undecodablePath(path: string, routes: readonly string[]): ServiceError {
  const segments = path.replace(/(?<=.)\/$/, '').split('/');
  const bad = segments.findIndex((segment) => !decodes(segment));
  const fits = (route: string[]) =>
    route.length === segments.length &&
    route[bad]?.startsWith(':') === true &&
    route.every((part, i) => part.startsWith(':') || part.toLowerCase() === segments[i]?.toLowerCase());
  const param = routes
    .map((route) => route.split('/'))
    .find(fits)
    ?.[bad]?.slice(1);
  return malformedPath(param);
}

function malformedPath(param?: string): ServiceError {
  const message = 'is not valid percent-encoding (RFC 3986 section 2.1)';
  return new ServiceError('malformed_request', {
    detail: param ? `${param}: ${message}` : `A segment of the path ${message}`,
    errors: [{ field: param ?? '(path)', message }],
  });
}

export const exposedHeaders =
  'X-Request-Id, Retry-After, PAYMENT-REQUIRED, PAYMENT-RESPONSE, X-PAYMENT-RESPONSE';

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/** JSON without Express's res.json machinery (ETag, freshness): the hot path's last step. */
function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.statusCode = status;
  res.setHeader('Content-Type', JSON_CONTENT_TYPE);
  res.end(jsonOf(body));
}

/**
 * A whole response in one `writeHead`: `head` (headers not set on `res` yet: the request's own,
 * `trackedHead`, and the route's), then the body's type and length. Headers set on `res` before
 * are kept (Node merges them, the ones named here winning).
 */
export function sendWhole(
  res: ServerResponse,
  status: number,
  head: readonly string[] | undefined,
  contentType: string | undefined,
  body: string,
): void {
  const length = body === '' ? '0' : String(Buffer.byteLength(body));
  const own =
    contentType === undefined
      ? ['Content-Length', length]
      : ['Content-Type', contentType, 'Content-Length', length];
  res.writeHead(status, head === undefined ? own : [...head, ...own]);
  res.end(body);
}

export function methodNotAllowed(methods: string[]): RequestHandler {
  const allow = methods.join(', ');
  return (req, _res, next) => {
    next(
      new ServiceError('method_not_allowed', {
        detail: `${req.method} is not allowed here; use ${allow}`,
        headers: { Allow: allow },
      }),
    );
  };
}

export function routeNotFound(): RequestHandler {
  return (req, _res, next) => {
    next(new ServiceError('route_not_found', { detail: `No endpoint at ${req.path}` }));
  };
}

/**
 * body-parser failures, undecodable paths and everything thrown, as problem+json. 5xx details go to
 * the log only.
 */
export function problemHandler(siteUrl: string) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction): void => {
    const error =
      fromBodyParser(err, req) ??
      (isUndecodablePath(err) ? malformedPath() : undefined) ??
      toServiceError(err);
    if (error.code === 'payload_too_large') closeAfterAnswer(req, res);
    sendFailure(req, res, err, error, () => req.log, siteUrl);
  };
}

/**
 * `error` (made of `err`) as the client sees it, whichever way the request was answered (Express,
 * or `direct-routes.ts`): problem+json, or the connection cut once the headers went out; a 5xx's
 * details go to the request's log only.
 */
export function sendFailure(
  req: IncomingMessage,
  res: ServerResponse,
  err: unknown,
  error: ServiceError,
  log: () => Logger,
  siteUrl: string,
): void {
  const level = failureLogLevel(error);
  if (level) log()[level]({ err: error.cause ?? err, code: error.code }, 'request failed');
  if (res.headersSent) {
    // Cut an answer under way; one already complete (a 408 sent while its body was awaited,
    // `http-refusals.ts`) is left to close as it was sent.
    if (!res.writableEnded) res.destroy();
    return;
  }
  sendProblem(req, res, error, siteUrl);
}

function fromBodyParser(err: unknown, req: Request): ServiceError | undefined {
  const type = (err as { type?: string } | undefined)?.type;
  if (type === undefined) return fromDecompression(err, req);
  switch (type) {
    case 'entity.too.large':
      return bodyTooLarge((err as { limit: number }).limit);
    case 'entity.parse.failed':
      return new ServiceError('malformed_json', { detail: 'The body is not valid JSON' });
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new ServiceError('unsupported_media_type', { detail: (err as Error).message });
    case 'request.aborted':
    case 'request.size.invalid':
    case 'stream.encoding.set':
      return new ServiceError('malformed_json', { detail: 'The body could not be read' });
    default:
      return undefined;
  }
}

/**
 * body-parser decompresses a body sent with `Content-Encoding: gzip, deflate, br or zstd` and passes
 * the decompressor's failure on untyped, marked 400: the bytes are not valid data of that coding
 * (corrupt or truncated). zlib errors carry a numeric `errno`.
 */
function fromDecompression(err: unknown, req: Request): ServiceError | undefined {
  const { status, errno } = (err ?? {}) as { status?: number; errno?: number };
  const coding = req.headers['content-encoding']?.toLowerCase();
  if (status !== 400 || typeof errno !== 'number' || coding === undefined || coding === 'identity') return;
  return new ServiceError('malformed_request', {
    detail: `The body is not valid ${coding} data (Content-Encoding: ${coding})`,
  });
}
