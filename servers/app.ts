/**
 * The HTTP application: every surface mounted at the path of its URL (and, when its host differs
 * from the site's, only for requests to that host), one request log, one error format.
 */
import { randomUUID } from 'node:crypto';
import cors from 'cors';
import express, { type Express, type RequestHandler } from 'express';
import { pinoHttp } from 'pino-http';
import { createMcpEndpoint } from './adapters/mcp.ts';
import { asYaml, openApiDocument } from './adapters/openapi.ts';
import { problemHandler, routeNotFound, surfaceRouter } from './adapters/rest.ts';
import { mcpAllowedHosts, serviceVersion } from './config.ts';
import { errorCodes, ServiceError } from './errors.ts';
import type { AnyOperation, Surface } from './operation.ts';
import { operations as registry } from './registry.ts';
import type { Services } from './services.ts';

export interface App {
  app: Express;
  close(): Promise<void>;
}

const requestIdPattern = /^[\w.:-]{1,64}$/;

export const publicMcpInstructions =
  'Customer service tools for personal agents. To resolve an unknown card charge: call lookup_card_charge with ' +
  "the statement line; to ask the brand for a return or refund: call start_return_request with the match's " +
  'domain as brand_domain (after the person approved it); then follow it with get_return_status.';

export function createApp(services: Services, operations: readonly AnyOperation[] = registry): App {
  const { config } = services;
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', config.trust_proxy);
  app.set('etag', false);

  app.use(
    pinoHttp({
      logger: services.log,
      genReqId: (req, res) => {
        const incoming = req.headers['x-request-id'];
        const id = typeof incoming === 'string' && requestIdPattern.test(incoming) ? incoming : randomUUID();
        res.setHeader('X-Request-Id', id);
        return id;
      },
      serializers: {
        req: (req: { id: string; method: string; url: string }) => ({
          id: req.id,
          method: req.method,
          path: req.url.split('?')[0],
        }),
        res: (res: { statusCode: number }) => ({ status: res.statusCode }),
      },
      customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : 'info'),
      customSuccessMessage: () => 'request completed',
      customErrorMessage: () => 'request failed',
    }),
  );
  app.use(((_req, res, next) => {
    res.setHeader('X-Content-Type-Options', 'nosniff');
    next();
  }) as RequestHandler);

  const mcp = createMcpEndpoint(services, operations, {
    server: 'public',
    allowedHosts: mcpAllowedHosts(config),
    instructions: publicMcpInstructions,
  });

  // Deepest paths first: a surface at "/" must not shadow the others.
  const mounts: [string, RequestHandler][] = [
    [config.mcp_url, mcp.router],
    [config.base_url, restSurface('cs', operations, services)],
    [config.public_api_url, restSurface('public_api', operations, services)],
    [config.site_url, siteRouter(services)],
  ];
  mounts.sort((a, b) => new URL(b[0]).pathname.length - new URL(a[0]).pathname.length);
  const siteHost = new URL(config.site_url).host;
  for (const [url, handler] of mounts) mount(app, url, siteHost, handler);

  app.use(routeNotFound());
  app.use(problemHandler(config.site_url));

  return { app, close: mcp.close };
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

/** A REST surface: its operations, its OpenAPI document (JSON and YAML), cross-origin access for agents in browsers. */
function restSurface(
  surface: Surface,
  operations: readonly AnyOperation[],
  services: Services,
): RequestHandler {
  const router = express.Router();
  router.use(cors({ origin: '*', exposedHeaders: ['X-Request-Id', 'Retry-After'], maxAge: 600 }));
  const document = openApiDocument(surface, operations, services.config);
  const json = JSON.stringify(document, null, 2);
  const yaml = asYaml(document);
  router.get('/openapi.json', (_req, res) => {
    res.type('application/json').send(json);
  });
  router.get('/openapi.yaml', (_req, res) => {
    res.type('application/yaml').send(yaml);
  });
  router.use(surfaceRouter(surface, operations, services));
  return router;
}

/** The site root: where everything is, and the documentation of each problem `type`. */
function siteRouter(services: Services): RequestHandler {
  const { config } = services;
  const router = express.Router();
  router.get('/', (_req, res) => {
    res.json({
      service: 'agent-service',
      version: serviceVersion,
      urls: {
        site: config.site_url,
        customer_service_agent: config.base_url,
        customer_service_openapi: `${config.base_url}/openapi.json`,
        public_api: config.public_api_url,
        health: `${config.public_api_url}/health`,
        mcp: config.mcp_url,
      },
    });
  });
  router.get('/problems/:code', (req, res, next) => {
    const code = req.params.code as keyof typeof errorCodes;
    const known = Object.hasOwn(errorCodes, code) ? errorCodes[code] : undefined;
    if (!known) return next(new ServiceError('not_found', { detail: `No problem type ${req.params.code}` }));
    res.json({ type: `${config.site_url}/problems/${code}`, code, status: known.status, title: known.title });
  });
  return router;
}
