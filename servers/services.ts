/**
 * The composition root: every service, built once from the configuration. Handlers receive the
 * part they may use as `ctx.services` (`OperationServices`); nothing here knows about HTTP or MCP,
 * and no feature or auth module imports this file (only the adapters, pages and the server do).
 */
import { existsSync } from 'node:fs';
import type { Kysely } from 'kysely';
import nodemailer, { type Transporter } from 'nodemailer';
import type { Logger } from 'pino';
import { sweepOauthRecords } from '../auth/adapter.ts';
import { AnonymousSessions } from '../auth/anonymous/sessions.ts';
import { EmailCodes } from '../auth/assertions/email-codes.ts';
import { registerJwtBearerGrant } from '../auth/assertions/grant.ts';
import { sweepAssertionRecords } from '../auth/assertions/repository.ts';
import { CLOCK_TOLERANCE_S, IdentityAssertionVerifier } from '../auth/assertions/verify.ts';
import { BearerVerifier } from '../auth/bearer.ts';
import { DashboardSessions } from '../auth/dashboard-sessions.ts';
import { SetDeliveryWorker, sweepSetDeliveries } from '../auth/events/outbox.ts';
import { SecurityEventReceiver, sweepSecurityEventReceipts } from '../auth/events/receiver.ts';
import { SecurityEventTransmitter } from '../auth/events/transmitter.ts';
import type { SigningJwk } from '../auth/keys.ts';
import {
  type AuthorizationServer,
  createAuthorizationServer,
  publicApiResource,
  siteResource,
} from '../auth/provider.ts';
import type { DatabaseHandle } from '../db/database.ts';
import type { Database } from '../db/schema.ts';
import { type Broadcast, createBroadcast } from './broadcast.ts';
import { type Config, inboundMailEnabled, localSitesAllowed, secretBoxOf } from './config.ts';
import { AccountsService } from './features/accounts/service.ts';
import { BoostCampaigns } from './features/catalog/boost/campaigns.ts';
import { EmbodimentBookings } from './features/catalog/embodiment/bookings.ts';
import { MarketplaceDeliveryWorker } from './features/catalog/marketplace-outbox.ts';
import { SpotlightPlacements } from './features/catalog/spotlight/placements.ts';
import { loadBrands } from './features/charges/brand-registry.ts';
import { DescriptorDeclarations } from './features/charges/declarations.ts';
import { ChargeLookup } from './features/charges/lookup.ts';
import { BrandMatcher } from './features/charges/matcher.ts';
import { deleteExpiredResolutions } from './features/charges/repository.ts';
import { MerchantResolver } from './features/charges/resolution.ts';
import { DirectoryService } from './features/directory/service.ts';
import { BrandA2aClient } from './features/returns/a2a-delivery.ts';
import { BrandTaskWorker } from './features/returns/brand-tasks.ts';
import { BrandChannels } from './features/returns/channels/brand-channels.ts';
import { sweepChannelFailures } from './features/returns/channels/repository.ts';
import type { InboundMailListener } from './features/returns/inbound/listener.ts';
import { ReplyAddresses } from './features/returns/inbound/reply-address.ts';
import { BrandMcpClient } from './features/returns/mcp-delivery.ts';
import { NotificationWorker } from './features/returns/notification-outbox.ts';
import { DeliveryWorker } from './features/returns/outbox.ts';
import { ReturnsService, statusUrl } from './features/returns/service.ts';
import type { LiveTraffic, LiveTrafficProvider } from './features/scans/scoring.ts';
import { ScansService } from './features/scans/service.ts';
import { SitesService } from './features/sites/service.ts';
import { loadLogSigner } from './features/souls/log-keys.ts';
import { SoulsService } from './features/souls/service.ts';
import { loadAgentDirectory } from './features/traffic/agents.ts';
import { Classifier } from './features/traffic/classify.ts';
import type { LiveTraffic as SiteTrafficSummary } from './features/traffic/schemas.ts';
import { TrafficService } from './features/traffic/service.ts';
import { sweepIdempotencyKeys } from './idempotency.ts';
import { Lifecycle } from './lifecycle.ts';
import { Metrics } from './metrics.ts';
import type { OperationServices } from './operation-services.ts';
import { BrowserPool } from './outbound/browser-pool.ts';
import { dnsServersFor, type OutboundResolver, outboundResolver } from './outbound/dns-lookup.ts';
import { languageModelStatus, languageModelsOf } from './outbound/llm.ts';
import { createSafeFetch, type SafeFetch } from './outbound/safe-fetch.ts';
import { searchProviderOf, searchProviderStatus } from './outbound/search.ts';
import type { PaymentFacilitator } from './payments/facilitator.ts';
import { PaymentsService } from './payments/service.ts';
import { Settler } from './payments/settler.ts';
import { SignInWithX } from './payments/sign-in.ts';
import { domainPolicyOf } from './public-address.ts';
import { createRateLimits, type RateLimits } from './rate-limit.ts';
import { resealStoredSecrets, type SecretBox, serviceSecret } from './secrets.ts';

/**
 * Everything the process runs: what handlers may use (`OperationServices`, `operation-services.ts`)
 * and what only the composition root and the adapters hold - the background workers, the
 * authorization server, start and stop.
 */
export interface Services extends OperationServices {
  /** Live resolution of merchants the registry does not name (`charges.live_resolution`). */
  resolver: MerchantResolver;
  /** Outbound DNS (`outbound.dns_servers`): what both fetchers resolve names with, and mail domains. */
  dns: OutboundResolver;
  /** Seals and opens the secrets stored in the database (`SECRETS_KEY`). */
  secrets: SecretBox;
  deliveries: DeliveryWorker;
  /** Follows the tasks brands' A2A agents opened for delivered requests (`returns/brand-tasks.ts`). */
  brandTasks: BrandTaskWorker;
  /**
   * Tells requesters' agents of status changes and brand messages (`returns/notification-outbox.ts`);
   * `nudge()` it after committing a change made with `transitionRequest` or `appendMessage`.
   */
  notifications: NotificationWorker;
  /**
   * The SMTP listener for brands' replies to per-request addresses (`returns.inbound_mail`), or
   * null when it is off. `startService` makes it listen and stops it.
   */
  inboundMail: InboundMailListener | null;
  /** Settles authorized payments and reconciles unknown outcomes in the background. */
  settler: Settler;
  /** The embedded OAuth authorization server (`auth/provider.ts`). */
  authorization: AuthorizationServer;
  /** One-time email codes and the verified-email assertions they earn (`auth/assertions/email-codes.ts`). */
  emailCodes: EmailCodes;
  /** Verifies access tokens for the owner-scoped MCP server (`auth/bearer.ts`). */
  bearer: BearerVerifier;
  /** Sign-ins to the owner dashboard, each standing for its OAuth grant (`auth/dashboard-sessions.ts`). */
  dashboardSessions: DashboardSessions;
  /** Security events (`auth/events/`): the CAEP receiver, our transmitter and its delivery outbox. */
  securityEvents: {
    receiver: SecurityEventReceiver;
    transmitter: SecurityEventTransmitter;
    worker: SetDeliveryWorker;
  };
  /** Draining after SIGTERM or serving (readiness). */
  lifecycle: Lifecycle;
  /** Prometheus metrics (`metrics.enabled`), or null: nothing is measured. */
  metrics: Metrics | null;
  /** Messages every process of the deployment sees (`servers/broadcast.ts`). */
  broadcast: Broadcast;
  /** Starts background work (delivery outbox, housekeeping). */
  startBackground(): void;
  /** Stops background work and waits for what is in flight. Does not close the database. */
  stop(): Promise<void>;
}

export interface CreateServicesOptions {
  config: Config;
  database: DatabaseHandle;
  log: Logger;
  /** Prebuilt brand matcher (tests and benchmarks share one across servers). */
  brands?: BrandMatcher;
  now?: () => Date;
  /** Live traffic of a domain for Signal Strength; without it every site scores "no data" there. */
  traffic?: LiveTrafficProvider;
  /** Another x402 facilitator than the configured one (benchmarks). */
  facilitator?: PaymentFacilitator;
  /** Where providers' keys are read (the variables the configuration names); default `process.env`. */
  env?: NodeJS.ProcessEnv;
}

const HOUR_MS = 3_600_000;

export async function createServices(options: CreateServicesOptions): Promise<Services> {
  const { config, database, log } = options;
  const now = options.now ?? (() => new Date());
  const db = database.db;
  /** Every worker and sweep registers here as it is built: `startBackground` and `stop` run them all. */
  const lifecycle = new Lifecycle(log);
  const secrets = secretBoxOf(config);
  const resealed = await resealStoredSecrets(db, secrets);
  if (resealed > 0) log.info({ resealed, key_id: config.secrets.key?.id ?? null }, 'stored secrets resealed');
  const brands = options.brands ?? new BrandMatcher(loadBrands());
  const outbound = outboundClients(config, lifecycle);
  const broadcast = createBroadcast(database, log);
  lifecycle.onClose(() => broadcast.close());
  const rateLimits = await createRateLimits(
    config,
    database,
    await serviceSecret(db, secrets, 'rate_limit_key'),
  );
  const base: Foundation = { config, database, db, log, lifecycle, now, secrets, brands, ...outbound };
  const accounts = new AccountsService(db, rateLimits, now);
  const anonymous = new AnonymousSessions(db, config, now);
  const siteServices = createSiteServices(base, anonymous, options.traffic);
  const mailer: Transporter | null = config.smtp.url ? nodemailer.createTransport(config.smtp.url) : null;
  lifecycle.onClose(() => mailer?.close());
  const returnServices = await createReturnServices(base, mailer);
  const directory = new DirectoryService({ db, config, brands, returns: returnServices.returns, now });
  const research = createResearchServices(base, options.env ?? process.env);
  const commerce = createCommerceServices(base, mailer, options.facilitator);
  const auth = await createAuthServices(base, { accounts, rateLimits, mailer });
  registerSweeps(base, anonymous, auth.dashboardSessions);
  return {
    config,
    domainPolicy: domainPolicyOf(config),
    db,
    dialect: database.dialect,
    log,
    brands,
    ...research,
    ...returnServices,
    rateLimits,
    accounts,
    anonymous,
    ...siteServices,
    directory,
    ...commerce,
    ...auth,
    souls: new SoulsService({ db, config, now, signer: await loadLogSigner(db, secrets, now) }),
    ...outbound,
    secrets,
    now,
    lifecycle,
    metrics: config.metrics.enabled
      ? new Metrics({ db, now, trafficQueueDepth: () => siteServices.traffic.queue.size })
      : null,
    broadcast,
    startBackground() {
      lifecycle.start();
    },
    stop: () => lifecycle.stop(),
  };
}

/** What every group of services below is built from. */
interface Foundation {
  config: Config;
  database: DatabaseHandle;
  db: Kysely<Database>;
  log: Logger;
  lifecycle: Lifecycle;
  now: () => Date;
  secrets: SecretBox;
  brands: BrandMatcher;
  dns: OutboundResolver;
  fetch: SafeFetch;
  siteFetch: SafeFetch;
}

/** The resolver and the two SSRF-safe fetchers: one for brands' endpoints, one for owners' sites. */
function outboundClients(config: Config, lifecycle: Lifecycle) {
  const dns = outboundResolver(config.outbound.dns_servers);
  const fetch = createSafeFetch({
    allowPrivateNetworks: config.outbound.allow_private_networks,
    // Development mode: a brand agent, webhook or callback on this machine (`localhost:PORT`) is
    // reachable, as local sites are to the scanner; never another private network, and in production
    // only where local sites were explicitly allowed (`localSitesAllowed`).
    allowLoopback: localSitesAllowed(config),
    timeoutMs: config.outbound.timeout_ms,
    userAgent: config.outbound.user_agent,
    lookup: dns.lookup,
  });
  lifecycle.onClose(() => fetch.close());
  const siteFetch = createSafeFetch({
    allowPrivateNetworks: config.scanner.allow_private_networks,
    allowLoopback: localSitesAllowed(config),
    timeoutMs: config.outbound.timeout_ms,
    userAgent: config.outbound.user_agent,
    lookup: dns.lookup,
  });
  lifecycle.onClose(() => siteFetch.close());
  return { dns, fetch, siteFetch };
}

/** Owners' sites: verification, their traffic, and the scanner (with its browser when webmcp is on). */
function createSiteServices(
  { config, database, db, log, lifecycle, now, siteFetch, dns }: Foundation,
  anonymous: AnonymousSessions,
  liveTraffic: LiveTrafficProvider | undefined,
) {
  const sites = new SitesService({
    db,
    fetch: siteFetch,
    // TXT lookups get a second try: a verification the owner is waiting for should not fail on one lost packet.
    dns: outboundResolver(dnsServersFor(config, config.sites.verification_dns_servers), {
      timeoutMs: 3000,
      tries: 2,
    }),
    now,
  });
  const traffic = new TrafficService({
    db,
    dialect: database.dialect,
    config,
    log,
    sites,
    classifier: new Classifier(loadAgentDirectory()),
    now,
    raw: database.raw,
  });
  // Queued traffic events are written before the caller closes the database.
  lifecycle.run({ stop: () => traffic.drain() });
  lifecycle.sweep('traffic retention', () => traffic.sweep());
  const scans = new ScansService({
    db,
    dialect: database.dialect,
    config,
    log: log.child({ component: 'scans' }),
    fetch: siteFetch,
    browser: webmcpBrowser(config, log, lifecycle),
    resolveSvcb: dns.resolveSvcb,
    traffic: liveTraffic ?? (async (domain) => liveTrafficForScore(await traffic.liveTraffic(domain))),
    anonymous,
    now,
  });
  lifecycle.run(scans.worker);
  return { sites, traffic, scans };
}

/** The browser pool the webmcp check runs pages in, or null when `scanner.webmcp` is off. */
function webmcpBrowser(config: Config, log: Logger, lifecycle: Lifecycle): BrowserPool | null {
  const webmcp = config.scanner.webmcp;
  if (!webmcp.enabled) return null;
  const browser = new BrowserPool({
    executablePath: webmcp.chromium_path,
    size: webmcp.pool_size,
    userAgent: config.scanner.user_agent,
    log: log.child({ component: 'browser' }),
  });
  lifecycle.onClose(() => browser.close());
  if (!existsSync(webmcp.chromium_path))
    log.warn(
      { chromium_path: webmcp.chromium_path },
      'scanner.webmcp.enabled but no Chromium at scanner.webmcp.chromium_path: the webmcp check will not be measured',
    );
  return browser;
}

/**
 * Return requests: the service, its channels, and the outboxes and workers that deliver to brands
 * and notify requesters, with the inbound mail listener when replies by mail are on.
 */
async function createReturnServices(base: Foundation, mailer: Transporter | null) {
  const { config, database, db, log, lifecycle, now, secrets, brands, fetch } = base;
  const inboundDomain = config.returns.inbound_mail.domain;
  const replyAddresses =
    inboundMailEnabled(config) && inboundDomain
      ? new ReplyAddresses(await serviceSecret(db, secrets, 'inbound_reply_key'), inboundDomain)
      : null;
  /** What both outboxes of return requests send with: to brands, and to requesters' agents. */
  const returnOutboxes = {
    db,
    dialect: database.dialect,
    config,
    fetch,
    secrets,
    mailer,
    statusUrl: (id: string) => statusUrl(config, id),
    now,
  };
  const notifications = lifecycle.run(
    new NotificationWorker({ ...returnOutboxes, log: log.child({ component: 'requester-notifications' }) }),
  );
  /** A brand's agent is reached like its webhook: the outbound fetcher, its timeout. */
  const brandA2a = new BrandA2aClient(fetch, config.outbound.timeout_ms);
  /** How a delivery whose channel failed goes on: the channel held out, the next one queued. */
  const fallback: ChannelFallback = {
    nextChannel: (trx: Kysely<Database>, domain: string) => returns.nextChannel(trx, domain),
    holdMs: config.returns.discovery.failed_channel_hold_hours * HOUR_MS,
  };
  const nudgeBoth = () => {
    notifications.nudge();
    deliveries.nudge();
  };
  const deliveries: DeliveryWorker = lifecycle.run(
    new DeliveryWorker({
      ...returnOutboxes,
      ...fallback,
      a2a: brandA2a,
      mcp: new BrandMcpClient(fetch, config.outbound.timeout_ms),
      log: log.child({ component: 'deliveries' }),
      replyAddresses,
      notified: nudgeBoth,
    }),
  );
  const brandTasks = lifecycle.run(
    new BrandTaskWorker({
      db,
      dialect: database.dialect,
      config,
      ...fallback,
      a2a: brandA2a,
      log: log.child({ component: 'brand-tasks' }),
      now,
      changed: nudgeBoth,
    }),
  );
  const channels = lifecycle.run(
    new BrandChannels({
      db,
      config,
      brands,
      secrets,
      fetch: base.siteFetch,
      dns: base.dns,
      policy: domainPolicyOf(config),
      log: log.child({ component: 'brand-channels' }),
      now,
      onDeliverable: (domain) => returns.queueWaiting(domain),
    }),
  );
  lifecycle.sweep('channel failures', () => sweepChannelFailures(db, now().toISOString()));
  const returns = new ReturnsService({
    db,
    dialect: database.dialect,
    config,
    brands,
    channels,
    worker: deliveries,
    notifications,
    smtpConfigured: mailer !== null,
    secrets,
    now,
  });
  const inboundMail = replyAddresses
    ? await inboundMailListener(base, replyAddresses, {
        smtpConfigured: mailer !== null,
        fallback,
        channelDomain: (domain) => channels.keyOf(domain),
        notified: () => notifications.nudge(),
      })
    : null;
  return { returns, channels, deliveries, brandTasks, notifications, inboundMail };
}

/** How a delivery whose channel failed goes on: the next channel, and how long the failed one is held out. */
interface ChannelFallback {
  nextChannel: (trx: Kysely<Database>, domain: string) => ReturnType<ReturnsService['nextChannel']>;
  holdMs: number;
}

async function inboundMailListener(
  { config, database, db, log, now, dns }: Foundation,
  addresses: ReplyAddresses,
  returns: {
    smtpConfigured: boolean;
    fallback: ChannelFallback;
    channelDomain: (domain: string) => string | null;
    notified: () => void;
  },
): Promise<InboundMailListener> {
  // Loaded only when inbound mail is on: mailauth and mailparser add a second or more to every
  // start (measured 0.9-1.7 s on a loaded 2-core machine), which a service without it should not pay.
  const { InboundMail } = await import('./features/returns/inbound/inbound-mail.ts');
  const { InboundMailListener } = await import('./features/returns/inbound/listener.ts');
  return new InboundMailListener(
    config,
    new InboundMail({
      db,
      dialect: database.dialect,
      addresses,
      dns,
      smtpConfigured: returns.smtpConfigured,
      nextChannel: returns.fallback.nextChannel,
      holdMs: returns.fallback.holdMs,
      channelDomain: returns.channelDomain,
      notified: returns.notified,
      log: log.child({ component: 'inbound-mail' }),
      now,
    }),
    log.child({ component: 'inbound-mail' }),
  );
}

/** Charge lookup and the research providers it and people search use. */
function createResearchServices(
  { config, db, log, lifecycle, now, brands }: Foundation,
  env: NodeJS.ProcessEnv,
) {
  const search = searchProviderOf(config, env);
  const languageModels = languageModelsOf(config, env);
  const researchProviders = [...searchProviderStatus(config, env), ...languageModelStatus(config, env)];
  for (const provider of researchProviders) {
    // A language model the operator listed but cannot use is a mistake worth naming (STYLE.md 8).
    if (provider.kind === 'llm' && !provider.configured) {
      log.warn(
        { provider: provider.name },
        `research.llm.providers: ${provider.name} is not used: ${provider.reason}`,
      );
    }
  }
  const declarations = new DescriptorDeclarations({ db, brands, now });
  const resolver = lifecycle.run(
    new MerchantResolver({
      db,
      config,
      lookup: outboundResolver(dnsServersFor(config, config.charges.live_resolution.dns_servers)).lookup,
      search,
      log: log.child({ component: 'merchant-resolution' }),
      now,
    }),
  );
  lifecycle.sweep('resolved merchants', () => deleteExpiredResolutions(db, now().toISOString()));
  const charges = new ChargeLookup({ brands, declarations, resolver });
  return { search, languageModels, researchProviders, declarations, resolver, charges };
}

/** Payments and what is paid for: sign-in with x402, spotlights, embodiment, boosts, and their outboxes. */
function createCommerceServices(
  { config, database, db, log, lifecycle, now, secrets, fetch }: Foundation,
  mailer: Transporter | null,
  facilitator: PaymentFacilitator | undefined,
) {
  const signIn = new SignInWithX({ db, config, now });
  const payments = new PaymentsService({
    db,
    dialect: database.dialect,
    config,
    log: log.child({ component: 'payments' }),
    now,
    secrets,
    ...(facilitator ? { facilitator } : {}),
  });
  const spotlights = new SpotlightPlacements({ db, config, now });
  const marketplaceOutbox = lifecycle.run(
    new MarketplaceDeliveryWorker({
      db,
      dialect: database.dialect,
      config,
      log: log.child({ component: 'marketplace-outbox' }),
      fetch,
      mailer,
      now,
    }),
  );
  const embodiment = new EmbodimentBookings({ db, dialect: database.dialect, config, now }, () =>
    marketplaceOutbox.nudge(),
  );
  const boost = new BoostCampaigns({ db, dialect: database.dialect, config, now }, () =>
    marketplaceOutbox.nudge(),
  );
  const settler = lifecycle.run(
    new Settler({
      db,
      dialect: database.dialect,
      config,
      log: log.child({ component: 'settler' }),
      now,
      facilitator: payments.facilitator,
    }),
  );
  return { signIn, payments, spotlights, embodiment, boost, settler };
}

/** The authorization server and what rests on its keys: bearer verifiers, email codes, security events, dashboard sessions. */
async function createAuthServices(
  base: Foundation,
  {
    accounts,
    rateLimits,
    mailer,
  }: { accounts: AccountsService; rateLimits: RateLimits; mailer: Transporter | null },
) {
  const { config, db, log, now, secrets, fetch } = base;
  const authorization = await createAuthorizationServer({ config, db, accounts, log, secrets, fetch });
  // The jwt-bearer grant for identity assertions, inside the provider's token endpoint.
  registerJwtBearerGrant(authorization.provider, {
    services: { config, db, accounts, log },
    verifier: new IdentityAssertionVerifier({ config, db, secrets, fetch, now }),
    now,
  });
  const emailCodes = new EmailCodes({
    db,
    config,
    mailer,
    rateLimits,
    codeKey: await serviceSecret(db, secrets, 'email_code_key'),
    signingKey: authorization.keys.jwks.keys[0] as (typeof authorization.keys.jwks.keys)[number],
    now,
  });
  const bearer = new BearerVerifier({
    db,
    issuer: authorization.issuer,
    audience: authorization.resource,
    keys: authorization.keys.jwks.keys,
    secrets,
    now,
  });
  const publicApiBearer = new BearerVerifier({
    db,
    issuer: authorization.issuer,
    audience: [publicApiResource(config), siteResource(config)],
    keys: authorization.keys.jwks.keys,
    secrets,
    now,
  });
  const securityEvents = createSecurityEvents(base, authorization.keys.jwks.keys[0] as SigningJwk);
  const dashboardSessions = new DashboardSessions(
    db,
    bearer,
    authorization.keys.cookieKeys[0] as string,
    now,
  );
  return { authorization, emailCodes, bearer, publicApiBearer, securityEvents, dashboardSessions };
}

/** Security events (`auth/events/`): the CAEP receiver, our transmitter and its delivery outbox. */
function createSecurityEvents(
  { config, database, db, log, lifecycle, now, secrets, fetch }: Foundation,
  signingKey: SigningJwk,
): Services['securityEvents'] {
  const securityEventLog = log.child({ component: 'security-events' });
  const setWorker = lifecycle.run(
    new SetDeliveryWorker({
      db,
      dialect: database.dialect,
      config,
      log: securityEventLog,
      fetch,
      secrets,
      now,
    }),
  );
  return {
    receiver: new SecurityEventReceiver({ db, config, fetch, log: securityEventLog, now }),
    transmitter: new SecurityEventTransmitter({
      config,
      signingKey,
      now,
      nudge: () => setWorker.nudge(),
    }),
    worker: setWorker,
  };
}

/** The housekeeping sweeps of records that expire, run by the lifecycle. */
function registerSweeps(
  { db, lifecycle, now }: Foundation,
  anonymous: AnonymousSessions,
  dashboardSessions: DashboardSessions,
): void {
  lifecycle.sweep('idempotency', () => sweepIdempotencyKeys(db, new Date(now().getTime() - 24 * HOUR_MS)));
  lifecycle.sweep('oauth records', () => sweepOauthRecords(db, now()));
  lifecycle.sweep('anonymous sessions', () => anonymous.sweep());
  lifecycle.sweep('dashboard sessions', () => dashboardSessions.sweep());
  // A jti is kept while its assertion could still be accepted, clock tolerance included.
  lifecycle.sweep('identity assertion records', () =>
    sweepAssertionRecords(db, new Date(now().getTime() - 2 * CLOCK_TOLERANCE_S * 1000)),
  );
  lifecycle.sweep('security event receipts', () => sweepSecurityEventReceipts(db, now()));
  lifecycle.sweep('security event outbox', () => sweepSetDeliveries(db, now()));
}

/** The pixel's 30-day summary of a verified site, in the shape Signal Strength scores (docs/reference/scoring.md). */
function liveTrafficForScore(summary: SiteTrafficSummary | null): LiveTraffic | null {
  if (!summary) return null;
  return {
    window_days: 30,
    events: summary.events_30d,
    ai_events: summary.ai_events_30d,
    ai_share: summary.ai_share,
    agents_seen: summary.agents_seen,
    ai_referrals: summary.ai_referrals_30d,
    previous_ai_events: summary.previous_ai_events_30d,
    previous_ai_referrals: summary.previous_ai_referrals_30d,
    last_event_at: summary.last_event_at,
  };
}
