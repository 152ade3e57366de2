/**
 * Starting and stopping the whole service: config -> database (migrated) -> services -> app -> listen.
 * `main.ts` runs it for `npm start`; tests and benchmarks start it the same way on port 0.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { type DatabaseHandle, openDatabase } from '../db/database.ts';
import { migrateToLatest } from '../db/migrate.ts';
import { createApp } from './app.ts';
import {
  type Config,
  ConfigError,
  type LoadConfigOptions,
  loadConfig,
  payToMissing,
  productionChecks,
  sqliteFile,
} from './config.ts';
import type { BrandMatcher } from './features/charges/matcher.ts';
import type { LiveTrafficProvider } from './features/scans/scoring.ts';
import { guardConnections } from './http-refusals.ts';
import { createLogger } from './logger.ts';
import type { AnyOperation } from './operation.ts';
import { type DevelopmentKey, developmentKey, readDevelopmentKey } from './payments/development-keys.ts';
import type { PaymentFacilitator } from './payments/facilitator.ts';
import { createServices, type Services } from './services.ts';

export interface StartOptions extends LoadConfigOptions {
  /** Use this database instead of opening one from the configuration (it is not closed on stop). */
  database?: DatabaseHandle;
  brands?: BrandMatcher;
  log?: Logger;
  /** Live traffic for Signal Strength (the pixel feature supplies it); default: none. */
  traffic?: LiveTrafficProvider;
  /** Start the delivery worker and housekeeping (default true). */
  background?: boolean;
  /** The operations to serve instead of the registry (tests and benchmarks add paid ones). */
  operations?: readonly AnyOperation[];
  /** Another x402 facilitator than the configured one. */
  facilitator?: PaymentFacilitator;
  /** The clock every service reads (tests move it instead of sleeping). */
  now?: () => Date;
  /**
   * In development mode without `PAY_TO`, sell the paid SKUs for the development address kept in
   * `DATA_DIR` (`payments/development-keys.ts`), announced in a log line: `npm start` does, so a
   * newcomer pays locally out of the box. Production mode never does.
   */
  developmentPayTo?: boolean;
}

export interface RunningService {
  url: string;
  config: Config;
  services: Services;
  server: http.Server;
  database: DatabaseHandle;
  stop(): Promise<void>;
}

export async function startService(options: StartOptions = {}): Promise<RunningService> {
  const loaded = loadConfig(options);
  const { server, port } = await listenBeforeReady(loaded);
  const { config, developmentPayTo } = resolveStartConfig(options, loaded, server, port);
  const log = options.log ?? createLogger(config);
  warnAtStart(config, log, developmentPayTo);
  const ownsDatabase = !options.database;
  const database =
    options.database ??
    openDatabase({
      url: config.database_url,
      sqliteFile: sqliteFile(config),
      poolSize: config.database_pool_size,
    });
  try {
    await migrateToLatest(database.db);
    const services = await createServices({
      config,
      database,
      log,
      env: options.env ?? process.env,
      ...(options.brands ? { brands: options.brands } : {}),
      ...(options.traffic ? { traffic: options.traffic } : {}),
      ...(options.facilitator ? { facilitator: options.facilitator } : {}),
      ...(options.now ? { now: options.now } : {}),
    });
    const app = createApp(services, options.operations);
    const guard = serveApp(server, app.handler, config, log);
    // Brands' replies by email (`returns.inbound_mail`): a second listener, drained with the first.
    await services.inboundMail?.listen();
    if (options.background !== false) services.startBackground();
    let stopping: Promise<void> | undefined;
    const stop = () => {
      stopping ??= drain({
        server,
        config,
        services,
        guard,
        closeApp: () => app.close(),
        closeDatabase: () => (ownsDatabase ? database.close() : Promise.resolve()),
      });
      return stopping;
    };
    return { url: `http://${hostFor(config.host)}:${port}`, config, services, server, database, stop };
  } catch (err) {
    server.close();
    if (ownsDatabase) await database.close();
    throw err;
  }
}

/**
 * Listens at once, answering 503 with Retry-After until the app is ready: the port is known (and
 * taken) before the database is migrated, so a `port: 0` start can name its URL.
 */
async function listenBeforeReady(config: Config): Promise<{ server: http.Server; port: number }> {
  const server = http.createServer((_req, res) => {
    res.writeHead(503, { 'Retry-After': '1' }).end();
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return { server, port };
}

/**
 * The configuration with what the start decided filled in: the port listened on when it was 0, and
 * the development pay-to address (`developmentPayTo`). A refused configuration closes the server.
 */
function resolveStartConfig(
  options: StartOptions,
  config: Config,
  server: http.Server,
  port: number,
): { config: Config; developmentPayTo: DevelopmentKey | null } {
  const resolved: Record<string, unknown> = {};
  if (config.port === 0) resolved.port = port;
  let developmentPayTo: DevelopmentKey | null = null;
  try {
    if (options.developmentPayTo && config.mode === 'development' && !config.payments.pay_to) {
      developmentPayTo = developmentKey(config.data_dir, 'pay-to');
      resolved['payments.pay_to'] = developmentPayTo.address;
    }
    if (config.mode === 'production') refuseDevelopmentPayTo(config);
  } catch (err) {
    server.close();
    throw err;
  }
  if (Object.keys(resolved).length === 0) return { config, developmentPayTo };
  return {
    config: loadConfig({ ...options, overrides: { ...options.overrides, ...resolved } }),
    developmentPayTo,
  };
}

/** The configuration's warnings, and how to pay the development address when one is used. */
function warnAtStart(config: Config, log: Logger, developmentPayTo: DevelopmentKey | null): void {
  const { warnings } = productionChecks(config);
  if (config.mode !== 'production' && !config.payments.pay_to) warnings.push(payToMissing);
  for (const warning of warnings) log.warn({ mode: config.mode }, warning);
  if (!developmentPayTo) return;
  const example = `npm run pay -- signal '{"domain":"${new URL(config.site_url).host}"}'`;
  const offline = !config.payments.facilitator_url && !config.payments.rpc_url;
  log.info(
    { mode: config.mode, pay_to: developmentPayTo.address, key_file: developmentPayTo.file },
    `development mode: paid SKUs answer 402 payable to the development address ${developmentPayTo.address} ` +
      `(generated once, key in ${developmentPayTo.file}; never used in production, which needs PAY_TO). ` +
      `Pay one locally with ${example}` +
      (offline ? ' - the embedded facilitator checks the signature offline and nothing moves on chain' : ''),
  );
}

type ConnectionGuard = ReturnType<typeof guardConnections>;

/** Replaces the placeholder 503 with the app, every request body watched by the connection guard. */
function serveApp(
  server: http.Server,
  handler: (req: http.IncomingMessage, res: http.ServerResponse) => void,
  config: Config,
  log: Logger,
): ConnectionGuard {
  const guard = guardConnections(server, {
    siteUrl: config.site_url,
    bodyTimeoutMs: config.server.body_timeout_ms,
    log,
  });
  server.removeAllListeners('request');
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    guard.watchBody(req, res);
    handler(req, res);
  });
  return guard;
}

/**
 * Draining: readiness answers 503 at once, the listening socket closes (new connections are
 * refused), requests already on a connection finish and close it, and after
 * `server.shutdown_timeout_ms` the connections still open are cut. Then the background work
 * drains: queued traffic events are written, the outbox, scan and settlement workers finish
 * their current batch (what they had not claimed stays in the database for the next process).
 */
async function drain(running: {
  server: http.Server;
  config: Config;
  services: Services;
  guard: ConnectionGuard;
  closeApp: () => Promise<void>;
  closeDatabase: () => Promise<void>;
}): Promise<void> {
  const { server, config, services } = running;
  services.lifecycle.beginDraining();
  // The SMTP listener drains beside HTTP: sessions under way get the same shutdown_timeout_ms.
  const mailClosed = services.inboundMail?.close();
  server.prependListener('request', (_req: http.IncomingMessage, res: http.ServerResponse) => {
    res.setHeader('Connection', 'close');
  });
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
    setTimeout(() => server.closeAllConnections(), config.server.shutdown_timeout_ms).unref();
  });
  running.guard.stop();
  await mailClosed;
  await services.stop();
  await running.closeApp();
  await running.closeDatabase();
}

/**
 * A production `PAY_TO` that is the development address of this `DATA_DIR` was copied from a
 * development start: its key sits in a file beside the data, so production refuses it.
 */
function refuseDevelopmentPayTo(config: Config): void {
  const payTo = config.payments.pay_to?.toLowerCase();
  if (!payTo) return;
  let development: DevelopmentKey | null = null;
  try {
    development = readDevelopmentKey(config.data_dir, 'pay-to');
  } catch {
    return; // A damaged development file names no address; production does not need it.
  }
  if (development?.address.toLowerCase() === payTo) {
    throw new ConfigError([
      `payments.pay_to (PAY_TO): ${config.payments.pay_to} is the development address of ${development.file}, ` +
        'whose key lies beside the data; production takes an address whose key is kept safe',
    ]);
  }
}

function hostFor(host: string): string {
  if (host === '0.0.0.0' || host === '::') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}
