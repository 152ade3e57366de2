/**
 * The HTTP application: every surface mounted at the path of its URL (and, when its host differs
 * from the site's, only for requests to that host), one request log, one error format.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { type Express, type RequestHandler } from 'express';
import { anonymousSiteRouter } from '../auth/anonymous/routes.ts';
import { ssfConfigurationMirror } from '../auth/events/routes.ts';
import { protectedResourceMetadataUrls, servePrm, servePublicApiPrm } from '../auth/resource.ts';
import { authorizationMetadataMirror, authorizationRouter } from '../auth/router.ts';
import { a2aRouter } from './adapters/a2a.ts';
import { directRoutes } from './adapters/direct-routes.ts';
import { discoveryRouter, serverCardRouter } from './adapters/discovery.ts';
import { mcpInstructions } from './adapters/instructions.ts';
import { createMcpEndpoint } from './adapters/mcp.ts';
import { ownerMcpEndpoint } from './adapters/owner-mcp.ts';
import {
  methodNotAllowed,
  problemHandler,
  routeNotFound,
  sendFailure,
  surfaceRouter,
} from './adapters/rest.ts';
import { x402Document } from './adapters/x402-document.ts';
import { mcpAllowedHosts } from './config.ts';
import { errorCodes, ServiceError, toServiceError } from './errors.ts';
import { lookupCardCharge } from './features/charges/operations.ts';
import { getOwnerContext } from './features/owner/whoami.ts';
import { getReturnStatus, startReturnRequest } from './features/returns/operations.ts';
import { getScanScore, getSignal, requestScan } from './features/scans/operations.ts';
import { beaconFastPath, beaconRouter, type TrustProxy } from './features/traffic/beacon.ts';
import { type AnyOperation, skuUnavailableReason } from './operation.ts';
import { dashboardRouter } from './pages/dashboard.ts';
import { publicPagesRouter } from './pages/public.ts';
import { operations as registry } from './registry.ts';
import { requestLog } from './request-log.ts';
import type { Services } from './services.ts';

export interface App {
  app: Express;
  /** The request listener: the beacon's fast path, the direct routes (`adapters/direct-routes.ts`), then the Express application. */
  handler: (req: IncomingMessage, res: ServerResponse) => void;
  close(): Promise<void>;
}

/** What the public MCP server says about itself in `initialize`; its tool list comes from the registry. */
export const publicMcpInstructions = (operations: readonly AnyOperation[]): string =>
  mcpInstructions(
    operations,
    'public',
    'Customer service tools for personal agents, and the agent-readiness of websites. Each tool says ' +
      'when to use it; failures are results with isError and a JSON {code, message, errors?, retry_after_s?}.',
    [
      `An unknown card charge: call ${lookupCardCharge.toolName} with the statement line; to ask the brand ` +
        `for a return or refund, call ${startReturnRequest.toolName} with the match's domain as brand_domain ` +
        `(after the person approved it), then follow it with ${getReturnStatus.toolName}.`,
      `A website's readiness: ${getSignal.toolName} gives its 0-100 Signal Strength; ${requestScan.toolName} ` +
        `runs a full scan with progress and ${getScanScore.toolName} returns the breakdown.`,
    ],
  );

/** What the owner-scoped MCP server says about itself in `initialize`; its tool list comes from the registry. */
export const ownerMcpInstructions = (operations: readonly AnyOperation[]): string =>
  mcpInstructions(
    operations,
    'owner',
    'Your own data as a site owner, under the account that approved this client; no tool takes an account.',
    [`${getOwnerContext.toolName} tells which account, client and scopes this session has.`],
  );

export function createApp(services: Services, operations: readonly AnyOperation[] = registry): App {
  const { config } = services;
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', config.trust_proxy);
  app.set('etag', false);

  app.use(requestLog(app, services.log));

  const mcp = createMcpEndpoint(services, operations, {
    server: 'public',
    allowedHosts: mcpAllowedHosts(config),
    instructions: publicMcpInstructions(operations),
  });

  const ownerMcp = ownerMcpEndpoint(services, operations, ownerMcpInstructions(operations));

  // The beacon answers images, not JSON, so it is a route of its own in front of the operations.
  const publicApi = express.Router();
  publicApi.use(beaconRouter(services, methodNotAllowed));
  publicApi.get('/.well-known/oauth-protected-resource', servePublicApiPrm(services));
  publicApi.use(surfaceRouter('public_api', operations, services));

  // Deepest paths first: a surface at "/" must not shadow the others.
  const mounts: [string, RequestHandler][] = [
    // SEP-2127 server cards at `<streamable-http-url>/server-card`, in front of the endpoints.
    [`${config.mcp_url}/auth/server-card`, serverCardRouter(services, operations, 'owner')],
    [`${config.mcp_url}/server-card`, serverCardRouter(services, operations, 'public')],
    [`${config.mcp_url}/auth`, ownerMcp.router],
    [config.mcp_url, mcp.router],
    [config.auth_url, authorizationRouter(services, services.authorization)],
    [config.base_url, surfaceRouter('cs', operations, services)],
    [config.public_api_url, publicApi],
    [config.site_url, siteRouter(services, operations)],
    [config.site_url, dashboardRouter(services, operations)],
    [config.site_url, authorizationMetadataMirror(services.authorization)],
    [config.site_url, ssfConfigurationMirror(services)],
    [config.site_url, anonymousSiteRouter(services, services.authorization.keys.cookieKeys[0] as string)],
    // After the site's own routes (same depth, kept in order): the paid SKUs at
    // {site_url}/api/public/x402/<sku>; requests the public API router (mounted deeper, at
    // {public_api_url}) has no route for fall through to here.
    [config.site_url, surfaceRouter('site', operations, services)],
    [config.functions_url, surfaceRouter('functions', operations, services)],
  ];
  mounts.sort((a, b) => new URL(b[0]).pathname.length - new URL(a[0]).pathname.length);
  const siteHost = new URL(config.site_url).host;
  for (const [url, handler] of mounts) mount(app, url, siteHost, handler);

  app.use(routeNotFound());
  app.use(problemHandler(config.site_url));

  const beacon = beaconFastPath(services, app.get('trust proxy fn') as TrustProxy, (req, res, err) =>
    sendFailure(
      req,
      res,
      err,
      toServiceError(err),
      () => services.log.child({ req_id: req.id }),
      config.site_url,
    ),
  );
  const direct = directRoutes(services, operations, app.get('trust proxy fn') as TrustProxy, {
    public: mcp.direct,
    owner: ownerMcp.direct,
  });
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    if (!beacon(req, res) && !direct(req, res)) app(req, res);
  };
  return {
    app,
    handler,
    close: async () => {
      await Promise.all([mcp.close(), ownerMcp.close()]);
    },
  };
}

function mount(app: Express, url: string, siteHost: string, handler: RequestHandler): void {
  const target = new URL(url);
  const path = target.pathname.replace(/\/+$/, '') || '/';
  if (target.host === siteHost) {
    app.use(path, handler);
    return;
  }
  app.use(path, ((req, res, next) =>
    req.get('host') === target.host ? handler(req, res, next) : next()) as RequestHandler);
}

/** The site root: where everything is, and the documentation of each problem `type`. */
function siteRouter(services: Services, operations: readonly AnyOperation[]): RequestHandler {
  const { config } = services;
  const router = express.Router();
  const x402 = JSON.stringify(
    x402Document(operations, config, (op) => skuUnavailableReason(op, services)),
    null,
    2,
  );
  // Crawlers look for both names (x402's discovery: `/.well-known/x402`; ours first: `.json`).
  router.get(['/.well-known/x402.json', '/.well-known/x402'], (_req, res) => {
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.type('application/json').send(x402);
  });
  router.use(discoveryRouter(services, operations));
  router.use(a2aRouter(services, operations));
  router.use(publicPagesRouter(services, operations));
  if (services.metrics) router.get('/metrics', services.metrics.handler());
  const prm = new URL(protectedResourceMetadataUrls(services).site).pathname.slice(
    new URL(config.site_url).pathname.replace(/\/+$/, '').length,
  );
  router.get(prm, servePrm(services));
  // The public API's metadata, path-inserted on the site too (RFC 9728 section 3.1).
  router.get(
    `/.well-known/oauth-protected-resource${new URL(config.public_api_url).pathname.replace(/\/+$/, '')}`,
    servePublicApiPrm(services),
  );
  router.get('/problems/:code', (req, res, next) => {
    const code = req.params.code as keyof typeof errorCodes;
    const known = Object.hasOwn(errorCodes, code) ? errorCodes[code] : undefined;
    if (!known) return next(new ServiceError('not_found', { detail: `No problem type ${req.params.code}` }));
    res.json({ type: `${config.site_url}/problems/${code}`, code, status: known.status, title: known.title });
  });
  return router;
}
