/**
 * What a handler and the call pipeline may use (`ctx.services`, ARCHITECTURE.md 4a "Handlers see
 * narrow interfaces"): each feature's service, the clock, the logger, the fetchers, the payment core.
 * `services.ts`, the composition root, builds it as part of `Services`; no module this file names
 * may import the composition root or `operation.ts` back (Biome `noImportCycles`). Background
 * workers, the authorization server and start/stop stay in `Services`, out of a handler's reach.
 */
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { AnonymousSessions } from '../auth/anonymous/sessions.ts';
import type { BearerVerifier } from '../auth/bearer.ts';
import type { SecurityEventTransmitter } from '../auth/events/transmitter.ts';
import type { Dialect } from '../db/database.ts';
import type { Database } from '../db/schema.ts';
import type { Config } from './config.ts';
import type { AccountsService } from './features/accounts/service.ts';
import type { BoostCampaigns } from './features/catalog/boost/campaigns.ts';
import type { EmbodimentBookings } from './features/catalog/embodiment/bookings.ts';
import type { SpotlightPlacements } from './features/catalog/spotlight/placements.ts';
import type { DescriptorDeclarations } from './features/charges/declarations.ts';
import type { ChargeLookup } from './features/charges/lookup.ts';
import type { BrandMatcher } from './features/charges/matcher.ts';
import type { DirectoryService } from './features/directory/service.ts';
import type { BrandChannels } from './features/returns/channels/brand-channels.ts';
import type { ReturnsService } from './features/returns/service.ts';
import type { ScansService } from './features/scans/service.ts';
import type { SitesService } from './features/sites/service.ts';
import type { SoulsService } from './features/souls/service.ts';
import type { TrafficService } from './features/traffic/service.ts';
import type { LanguageModel } from './outbound/llm.ts';
import type { SafeFetch } from './outbound/safe-fetch.ts';
import type { ProviderStatus, SearchProvider } from './outbound/search.ts';
import type { PaymentsService } from './payments/service.ts';
import type { SignInWithX } from './payments/sign-in.ts';
import type { DomainPolicy } from './public-address.ts';
import type { RateLimits } from './rate-limit.ts';

/** Readiness as a handler sees it: whether the process drains after SIGTERM (`lifecycle.ts`). */
export interface DrainingState {
  readonly draining: boolean;
}

/** What the pipeline measures per call (`metrics.ts`). */
export interface OperationMetrics {
  observeOperation(operation: string, via: string, status: number, startedMs: number): void;
}

export interface OperationServices {
  config: Config;
  /** Which domains and URLs operations accept, publish and redirect to (`public-address.ts`). */
  domainPolicy: DomainPolicy;
  db: Kysely<Database>;
  dialect: Dialect;
  log: Logger;
  brands: BrandMatcher;
  /** The card charge lookup: registry, declared descriptors, live resolution (`features/charges/lookup.ts`). */
  charges: ChargeLookup;
  /** Statement descriptors brands declare for their verified domains. */
  declarations: DescriptorDeclarations;
  /** The configured web search provider (`research.search`), or null. */
  search: SearchProvider | null;
  /** The usable language model providers (`research.llm.providers`), in configuration order. */
  languageModels: LanguageModel[];
  /** Every research provider the configuration names, configured or not (the live catalog says). */
  researchProviders: ProviderStatus[];
  returns: ReturnsService;
  /** Brands' channels: registered, from the registry, discovered on their sites (`returns.discovery`). */
  channels: BrandChannels;
  rateLimits: RateLimits;
  accounts: AccountsService;
  /** Sessions of agents without an account (`auth/anonymous/sessions.ts`). */
  anonymous: AnonymousSessions;
  sites: SitesService;
  scans: ScansService;
  directory: DirectoryService;
  /** Agent identities and their hash-chained memories (`features/souls/`). */
  souls: SoulsService;
  traffic: TrafficService;
  /** x402: authorizes and settles paid operations (`servers/payments/`). */
  payments: PaymentsService;
  /** x402 sign-in-with-x: the paying wallet reads what it bought again (`payments/sign-in.ts`). */
  signIn: SignInWithX;
  /** The spotlight placements shown now and their slot limit (`marketplace.spotlight_slots`). */
  spotlights: SpotlightPlacements;
  /** Robot embodiment bookings and their delivery to the operator (`marketplace.embodiment`). */
  embodiment: EmbodimentBookings;
  /** Boost campaigns: budgets, impressions, clicks (`marketplace.boost_cpm_usdc`, `ad_networks`). */
  boost: BoostCampaigns;
  /** Security events a handler emits (`auth/events/transmitter.ts`). */
  securityEvents: { transmitter: SecurityEventTransmitter };
  /**
   * Verifies access tokens issued for the public API (`resource={public_api_url}`) or the site it lives
   * under (`resource={site_url}`), for Bearer writes.
   */
  publicApiBearer: BearerVerifier;
  /** SSRF-safe fetch for brand webhooks (address policy `outbound.allow_private_networks`). */
  fetch: SafeFetch;
  /** SSRF-safe fetch for site owners' domains (address policy `scanner.allow_private_networks`, `localSitesAllowed`). */
  siteFetch: SafeFetch;
  /** The clock every service reads (tests may fix it); reads outside a service use it too. */
  now: () => Date;
  /** Draining after SIGTERM or serving (readiness). */
  lifecycle: DrainingState;
  /** Prometheus metrics (`metrics.enabled`), or null: nothing is measured. */
  metrics: OperationMetrics | null;
}

/**
 * What a feature's long work sees of the call it runs for - the services it reads, the request's
 * logger, the abort signal and, when the caller asked for it, progress - so that it takes a
 * handler's `ctx` without importing `operation.ts`.
 */
export interface CallScope<S extends keyof OperationServices = keyof OperationServices> {
  services: Pick<OperationServices, S>;
  log: Logger;
  signal: AbortSignal;
  reportProgress?: ((progress: number, total?: number, message?: string) => Promise<void>) | undefined;
}
