/**
 * The calls agents make most, answered straight from `node:http` in front of Express: the free
 * read-only GET operations of the REST surfaces (`GET /agent` and its kind) and POSTs to the MCP
 * endpoints, public and owner. Express's per-request work (prototype swaps, a dozen router layers matched in turn,
 * `req.query`'s getters) cost about as much as looking the charge up.
 *
 * Same answer as Express's in every respect, from the same parts:
 * - REST: the request's id, its `nosniff` and its log line (`requestTracker`), the surface's
 *   cross-origin headers, the query parsed as Express's default parser does (`node:querystring`),
 *   `invokeOperation` (authentication, input contract, metrics), the JSON text, and on failure the
 *   same problem+json and 5xx log line (`sendFailure`, which `problemHandler` calls too). Only an
 *   exact `GET <surface path><operation path>` on the surface's host comes here.
 * - MCP, public and owner: the endpoint's own POST handling (`DirectMcp`, the function its router
 *   calls, the owner's bearer check included), for a POST to the exact endpoint path whose Host the
 *   router's DNS-rebinding check already accepted and that carries no Origin.
 * `HEAD`, other spellings of a path (case, trailing slash), browsers' MCP requests and everything
 * else go to Express. `test/integration/direct-routes.test.ts` asks both side by side.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseQuery } from 'node:querystring';
import proxyaddr from 'proxy-addr';
import { toServiceError } from '../errors.ts';
import type { TrustProxy } from '../features/traffic/beacon.ts';
import {
  type AnyOperation,
  CallContext,
  invokeOperation,
  pathParamsOf,
  type RequestInfo,
} from '../operation.ts';
import { requestTracker, trackedHead } from '../request-log.ts';
import type { Services } from '../services.ts';
import { jsonOf } from './json.ts';
import type { DirectMcp } from './mcp.ts';
import { surfaceUrl } from './openapi.ts';
import { abortedOnDisconnect, exposedHeaders, JSON_CONTENT_TYPE, sendFailure, sendWhole } from './rest.ts';

interface Route {
  op: AnyOperation;
  /** The Host a request must name (the surface is on another host than the site), or undefined. */
  host: string | undefined;
}

/** Whether the REST adapter's GET route of `op` is one a direct route can answer alike. */
export function isDirect(op: AnyOperation): boolean {
  const http = op.http;
  return (
    http !== undefined &&
    http.surface !== 'site' &&
    http.method === 'GET' &&
    http.input === 'query' &&
    op.annotations.readOnlyHint &&
    !op.sku &&
    !op.rateLimit &&
    !http.redirect &&
    !http.representation &&
    pathParamsOf(http.path).length === 0
  );
}

/**
 * A handler answering the direct routes of `operations`; returns false, having touched nothing,
 * for a request that is not one of them.
 */
export function directRoutes(
  services: Services,
  operations: readonly AnyOperation[],
  trustProxy: TrustProxy,
  mcpEndpoints: { public?: DirectMcp; owner?: DirectMcp } = {},
): (req: IncomingMessage, res: ServerResponse) => boolean {
  const { config, log } = services;
  const siteHost = new URL(config.site_url).host;
  const routes = new Map<string, Route>();
  for (const op of operations) {
    if (!isDirect(op)) continue;
    const http = op.http as NonNullable<AnyOperation['http']>;
    const surface = new URL(surfaceUrl(config, http.surface));
    const path = `${surface.pathname.replace(/\/+$/, '')}${http.path}`;
    routes.set(path, { op, host: surface.host === siteHost ? undefined : surface.host });
  }
  const track = requestTracker(log);
  const clientAddress =
    config.trust_proxy === false
      ? (req: IncomingMessage) => req.socket.remoteAddress ?? 'unknown'
      : (req: IncomingMessage) => proxyaddr(req, trustProxy);
  /** What `requestInfo` makes of an Express request, from node:http's. */
  const requestOf = (req: IncomingMessage, id: string, via: RequestInfo['via']): RequestInfo => ({
    id,
    ip: clientAddress(req),
    via,
    headers: req.headers as Record<string, string | undefined>,
  });

  /** The headers every answer of a direct REST route carries, as `writeHead` takes them. */
  const headOf = (id: string): string[] => {
    const head = trackedHead(id);
    head.push('Access-Control-Allow-Origin', '*', 'Access-Control-Expose-Headers', exposedHeaders);
    return head;
  };

  const answer = async (route: Route, req: IncomingMessage, res: ServerResponse, query: string) => {
    // The id, `nosniff` and the surface's cross-origin headers go out with the answer's head, in
    // one `writeHead` (`sendWhole`; why: `requestTracker`); a failure sets them before its problem.
    const id = track(req, res, 'caller');
    req.id = id;
    const ctx = new CallContext(
      {
        services,
        operations,
        request: requestOf(req, id, 'rest'),
        signal: () => abortedOnDisconnect(res),
      },
      () => log.child({ req_id: id }),
    );
    const http = route.op.http as NonNullable<AnyOperation['http']>;
    try {
      const output = await invokeOperation(route.op, ctx, parseQuery(query));
      const status = http.status?.(output) ?? http.successStatus ?? 200;
      sendWhole(res, status, headOf(id), JSON_CONTENT_TYPE, jsonOf(output));
    } catch (err) {
      if (!res.headersSent) {
        const head = headOf(id);
        for (let i = 0; i < head.length; i += 2) res.setHeader(head[i] as string, head[i + 1] as string);
      }
      sendFailure(req, res, err, toServiceError(err), () => ctx.log, config.site_url);
    }
  };

  const mcpUrl = new URL(config.mcp_url);
  const mcpPath = mcpUrl.pathname.replace(/\/+$/, '');
  const mcpHost = mcpUrl.host === siteHost ? undefined : mcpUrl.host;
  const endpoints = new Map<string, DirectMcp>();
  if (mcpEndpoints.public) endpoints.set(mcpPath || '/', mcpEndpoints.public);
  if (mcpEndpoints.owner) endpoints.set(`${mcpPath}/auth`, mcpEndpoints.owner);
  /**
   * A POST to an MCP endpoint whose Host the endpoint already accepted and that names no Origin (a
   * browser's request, checked and answered with CORS headers by the router): the same handling
   * as the router's (the owner endpoint's bearer check included), with the caller described as
   * `requestInfo` and `req.log` would.
   */
  const mcp = (req: IncomingMessage, res: ServerResponse): boolean => {
    const endpoint = endpoints.get(req.url ?? '');
    if (!endpoint || req.headers.origin !== undefined) return false;
    const host = req.headers.host;
    if (host === undefined || !endpoint.hostAccepted(host) || (mcpHost !== undefined && host !== mcpHost))
      return false;
    // Where the endpoint writes every head itself, the id and `nosniff` go with it (`Caller.head`).
    const id = track(req, res, endpoint.writesHead ? 'caller' : 'set');
    req.id = id;
    void endpoint.answer(req, res, {
      request: requestOf(req, id, 'mcp'),
      log: () => log.child({ req_id: id }),
      ...(endpoint.writesHead ? { head: trackedHead(id) } : {}),
    });
    return true;
  };

  return (req, res) => {
    if (req.method === 'POST') return mcp(req, res);
    if (req.method !== 'GET') return false;
    const url = req.url ?? '';
    const mark = url.indexOf('?');
    const route = routes.get(mark === -1 ? url : url.slice(0, mark));
    if (!route || (route.host !== undefined && req.headers.host !== route.host)) return false;
    void answer(route, req, res, mark === -1 ? '' : url.slice(mark + 1));
    return true;
  };
}
