/**
 * A brand's channels, kept fresh: discovery runs when a domain's last run is due (its TTL passed,
 * or `refreshSoon` after a failed delivery), one process at a time per domain across processes
 * (the lease in `brand_discoveries`), one run at a time per domain within a process (in-flight
 * map), at most `max_concurrent` per process. A read waits for a run at most its budget; past it the
 * run goes on in the background until `deadline_ms` and the read answers what is stored, so neither
 * `POST /return` nor `GET /brands/{domain}` waits on a slow site.
 *
 * What the delivery worker calls: `ranked(domain)` (the channels in delivery order, discovering
 * within a short budget when nothing fresh is stored) and `markChannelFailed` / `refreshSoon` from
 * `repository.ts`, inside its own transaction.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Kysely } from 'kysely';
import pLimit, { type LimitFunction } from 'p-limit';
import type { Logger } from 'pino';
import { getDomain } from 'tldts';
import type { BrandDiscoveryRow, Database } from '../../../../db/schema.ts';
import { type Config, channelDiscoveryEnabled } from '../../../config.ts';
import type { OutboundResolver } from '../../../outbound/dns-lookup.ts';
import type { SafeFetch } from '../../../outbound/safe-fetch.ts';
import { type DomainPolicy, isLocalDomain, normalizeDomain } from '../../../public-address.ts';
import type { SecretBox } from '../../../secrets.ts';
import { withinBudget } from '../../../time-budget.ts';
import type { BrandMatcher } from '../../charges/matcher.ts';
import { PageReader } from '../../scans/page-reader.ts';
import { discoverChannels } from './discovery.ts';
import { rankedChannelsOf } from './ranking.ts';
import { claimDiscovery, findDiscovery, releaseDiscovery, saveDiscovery } from './repository.ts';
import type {
  BrandChannelsResult,
  BrandChannelView,
  DiscoveryReport,
  DiscoveryStatus,
  RankedChannel,
} from './schemas.ts';

const HOUR_MS = 3_600_000;
/** A partial or unreachable run is tried again sooner than the TTL: the site may answer next time. */
const INCONCLUSIVE_TTL_MS = HOUR_MS;
/** Runs waiting for a slot, per running slot; past that a read starts none and answers what is stored. */
const QUEUE_PER_SLOT = 8;
/** How often a read waiting on another process's run looks whether it finished. */
const POLL_MS = 100;
/** Pages read at once within one run. */
const PAGES_AT_ONCE = 2;
/** How long this process trusts a fresh discovery row it read, and how many domains it remembers. */
const FRESH_MEMO_MS = 5_000;
const FRESH_MEMO_SIZE = 10_000;

export interface BrandChannelsDeps {
  db: Kysely<Database>;
  config: Config;
  brands: BrandMatcher;
  /** Opens registered webhook secrets (only to know one is there). */
  secrets: SecretBox;
  /** The SSRF-safe fetcher with the scanner's address policy. */
  fetch: SafeFetch;
  /** Outbound DNS, for mail domains (`outbound.dns_servers`). */
  dns: Pick<OutboundResolver, 'resolveMx' | 'resolve4' | 'resolve6'>;
  policy: DomainPolicy;
  log: Logger;
  now: () => Date;
  /** Called after a run stored a channel delivery can use (requests waiting for one are queued). */
  onDeliverable?: (domain: string) => Promise<unknown>;
}

/** What a reader of a domain's channels may do before a run starts for it (a rate limit). */
export type BeforeDiscovery = () => Promise<void>;

export class BrandChannels {
  readonly enabled: boolean;
  readonly #deps: BrandChannelsDeps;
  readonly #settings: Config['returns']['discovery'];
  readonly #slots: LimitFunction;
  readonly #inflight = new Map<string, Promise<void>>();
  readonly #stopping = new AbortController();
  readonly #owner = `channels-${randomUUID()}`;
  /**
   * Domains this process read fresh, until when (epoch ms): a hot path (`POST /return` for one brand
   * again and again) reads the discovery row once per `FRESH_MEMO_MS`, not per request. A
   * `refreshSoon` from another process is seen within that time.
   */
  readonly #freshUntil = new Map<string, number>();

  constructor(deps: BrandChannelsDeps) {
    this.#deps = deps;
    this.#settings = deps.config.returns.discovery;
    this.enabled = channelDiscoveryEnabled(deps.config);
    this.#slots = pLimit(this.#settings.max_concurrent);
  }

  /**
   * The registrable domain channels are kept under (`help.netflix.com` -> `netflix.com`), or null
   * when `domain` is not a name the public-address rule lets the service fetch.
   */
  keyOf(domain: string): string | null {
    const normal = normalizeDomain(domain, this.#deps.policy);
    if (!normal.ok) return null;
    return isLocalDomain(normal.domain) ? normal.domain : (getDomain(normal.domain) ?? normal.domain);
  }

  /**
   * The channels of `domain` in delivery order (`ranking.ts`), discovering first when nothing fresh
   * is stored - waiting at most `budgetMs`, the run going on in the background past it. The
   * delivery worker's one call.
   */
  async ranked(domain: string, budgetMs = this.#settings.request_budget_ms): Promise<RankedChannel[]> {
    const key = this.keyOf(domain) ?? domain;
    await this.ensureFresh(key, budgetMs);
    return this.rankedNow(this.#deps.db, key);
  }

  /**
   * The channels as stored now, ranked, in `db` (a transaction's view when given one); with `only`,
   * the channels of those kinds alone (`rankedChannelsOf`).
   */
  rankedNow(
    db: Kysely<Database>,
    domain: string,
    only?: (kind: RankedChannel['kind']) => boolean,
  ): Promise<RankedChannel[]> {
    const { secrets, brands, now } = this.#deps;
    return rankedChannelsOf(db, secrets, brands.brandByDomain(domain), domain, now().toISOString(), only);
  }

  /**
   * Makes sure a run of `domain` (a key from `keyOf`) is fresh, started or joined, and waits for it
   * at most `budgetMs`. `beforeStart` runs before this process starts one (it may refuse, throwing).
   * `trustRecent`: a row this process read fresh in the last `FRESH_MEMO_MS` is not read again (the
   * hot path of `POST /return`; a `refreshSoon` reaches it within that time). False when a run is
   * still going on past the budget; true otherwise.
   */
  async ensureFresh(
    domain: string,
    budgetMs: number,
    options: { beforeStart?: BeforeDiscovery | undefined; trustRecent?: boolean } = {},
  ): Promise<boolean> {
    if (!this.enabled || this.#stopping.signal.aborted) return true;
    if (options.trustRecent && (this.#freshUntil.get(domain) ?? 0) > Date.now()) return true;
    if (this.keyOf(domain) !== domain) return true;
    const { beforeStart } = options;
    let running = this.#inflight.get(domain);
    if (!running) {
      const row = await findDiscovery(this.#deps.db, domain);
      if (this.#fresh(row)) {
        this.#remember(domain, row as BrandDiscoveryRow);
        return true;
      }
      if (this.#slots.pendingCount >= this.#settings.max_concurrent * QUEUE_PER_SLOT) return true;
      await beforeStart?.();
      // Another read of this domain may have started its run while this one was reading and counting.
      running = this.#inflight.get(domain);
      if (!running) {
        running = this.#slots(() => this.#discover(domain))
          .catch((err: unknown) => {
            this.#deps.log.error({ err, domain }, 'brand channel discovery failed');
          })
          .finally(() => this.#inflight.delete(domain));
        this.#inflight.set(domain, running);
      }
    }
    return (
      (await withinBudget(
        running.then(() => true),
        budgetMs,
      )) === true
    );
  }

  /** `GET {base_url}/brands/{domain}`: the channels, how each was found, and the discovery's state. */
  async describe(
    domain: string,
    options: {
      budgetMs: number;
      beforeStart?: BeforeDiscovery;
      /** Whether the outbox can deliver on this channel now (the first such is `delivery_channel`). */
      deliverableNow: (channel: RankedChannel) => boolean;
    },
  ): Promise<BrandChannelsResult> {
    const key = this.keyOf(domain);
    const brand = this.#deps.brands.brandByDomain(key ?? domain);
    if (key) await this.ensureFresh(key, options.budgetMs, { beforeStart: options.beforeStart });
    const [channels, row] = await Promise.all([
      this.rankedNow(this.#deps.db, key ?? domain),
      key ? findDiscovery(this.#deps.db, key) : undefined,
    ]);
    return {
      domain: key ?? domain,
      name: brand?.name ?? null,
      known: brand !== undefined,
      channels: channels.map(viewOf),
      delivery_channel:
        channels.find((c) => c.delivery_rank !== null && options.deliverableNow(c))?.kind ?? null,
      discovery: {
        status: this.#status(key, row),
        outcome: row?.outcome ?? null,
        ran_at: row?.finished_at ?? null,
        next_run_at: row?.finished_at ? row.expires_at : null,
        refresh_reason: row?.refresh_reason ?? null,
        retry_after_s: this.#leaseHeld(row) ? Math.ceil(this.#settings.deadline_ms / 1000) : null,
        report: row?.report ? (JSON.parse(row.report) as DiscoveryReport) : null,
      },
    };
  }

  /** Stops runs in flight (their fetches are cut; what they read is stored) and waits for them. */
  async stop(): Promise<void> {
    this.#stopping.abort();
    this.#slots.clearQueue();
    await Promise.allSettled([...this.#inflight.values()]);
  }

  #status(key: string | null, row: BrandDiscoveryRow | undefined): DiscoveryStatus {
    if (!key) return 'not_public';
    if (!this.enabled) return 'off';
    if (this.#leaseHeld(row)) return 'running';
    if (!row?.finished_at) return 'never';
    return this.#fresh(row) ? 'fresh' : 'stale';
  }

  #remember(domain: string, row: BrandDiscoveryRow): void {
    if (this.#freshUntil.size >= FRESH_MEMO_SIZE) this.#freshUntil.clear();
    const expires = Date.parse(row.expires_at ?? '') - (this.#deps.now().getTime() - Date.now());
    this.#freshUntil.set(domain, Math.min(expires, Date.now() + FRESH_MEMO_MS));
  }

  #fresh(row: BrandDiscoveryRow | undefined): boolean {
    return !!row?.finished_at && !!row.expires_at && row.expires_at > this.#deps.now().toISOString();
  }

  #leaseHeld(row: BrandDiscoveryRow | undefined): boolean {
    return !!row?.lease_expires_at && row.lease_expires_at > this.#deps.now().toISOString();
  }

  /** One run under the lease; another process's run is waited for instead (until its deadline). */
  async #discover(domain: string): Promise<void> {
    const { db, log, now } = this.#deps;
    const started = now();
    const { deadline_ms } = this.#settings;
    const leaseUntil = new Date(started.getTime() + deadline_ms + 10_000).toISOString();
    if (!(await claimDiscovery(db, domain, this.#owner, started.toISOString(), leaseUntil))) {
      await this.#waitForOther(domain, started.getTime() + deadline_ms);
      return;
    }
    const signal = AbortSignal.any([this.#stopping.signal, AbortSignal.timeout(deadline_ms)]);
    let result: Awaited<ReturnType<typeof discoverChannels>>;
    try {
      result = await discoverChannels(this.#discoveryDeps(), domain, signal);
    } catch (err) {
      log.error({ err, domain }, 'brand channel discovery crashed');
      await releaseDiscovery(
        db,
        domain,
        this.#owner,
        new Date(now().getTime() + INCONCLUSIVE_TTL_MS).toISOString(),
      );
      return;
    }
    const at = now();
    const ttl = this.#settings.ttl_hours * HOUR_MS;
    const expiresAt = new Date(
      at.getTime() + (result.outcome === 'complete' ? ttl : Math.min(ttl, INCONCLUSIVE_TTL_MS)),
    ).toISOString();
    const saved = await db.transaction().execute((trx) =>
      saveDiscovery(trx, {
        domain,
        owner: this.#owner,
        outcome: result.outcome,
        report: result.report,
        channels: result.channels,
        at: at.toISOString(),
        expiresAt,
      }),
    );
    log.debug(
      {
        domain,
        outcome: result.outcome,
        channels: result.channels.length,
        ms: result.report.duration_ms,
        saved,
      },
      'brand channels discovered',
    );
    if (
      saved &&
      result.channels.some((c) => c.kind === 'email' || c.kind === 'a2a') &&
      this.#deps.onDeliverable
    ) {
      await this.#deps.onDeliverable(domain).catch((err: unknown) => {
        log.error({ err, domain }, 'queueing requests for newly found channels failed');
      });
    }
  }

  async #waitForOther(domain: string, until: number): Promise<void> {
    while (Date.now() < until && !this.#stopping.signal.aborted) {
      await sleep(POLL_MS, undefined, { signal: this.#stopping.signal }).catch(() => {});
      const row = await findDiscovery(this.#deps.db, domain);
      if (!this.#leaseHeld(row)) return;
    }
  }

  #discoveryDeps(): Parameters<typeof discoverChannels>[0] {
    const { config, fetch, dns, policy, now } = this.#deps;
    const settings = this.#settings;
    return {
      reader: new PageReader({
        fetch,
        userAgent: config.scanner.user_agent,
        maxBytes: settings.max_bytes,
        requestTimeoutMs: settings.request_timeout_ms,
        maxRedirects: config.scanner.max_redirects,
        concurrency: PAGES_AT_ONCE,
        now,
      }),
      fetch,
      dns,
      policy,
      maxPages: settings.max_pages,
      maxBytes: settings.max_bytes,
      homeUrl: (host) => {
        // A local name (`localhost:PORT`, tests and self-hosting) carries its port and speaks http.
        if (isLocalDomain(host)) return `http://${host}/`;
        const port = settings.home_page_port === null ? '' : `:${settings.home_page_port}`;
        return `${settings.home_page_scheme}://${host}${port}/`;
      },
    };
  }
}

const uses: Record<RankedChannel['kind'], (c: RankedChannel) => string> = {
  webhook: () =>
    'The brand registered an endpoint with this service: requests filed with start_return_request are delivered to it, signed.',
  a2a: (c) =>
    c.source === 'registered'
      ? 'The brand registered this A2A agent with this service for return requests.'
      : `The brand's own A2A agent, with a skill for this (${c.detail.skill_id ?? 'customer service'}): send it an A2A message about the order.`,
  mcp: (c) =>
    c.source === 'registered'
      ? 'The brand registered this MCP server with this service for return requests.'
      : `The brand's MCP server offers the tool ${c.detail.tool_name ?? ''}: connect an MCP client and call it.`,
  email: (c) =>
    c.private
      ? 'The brand registered a return address with this service (not shown): start_return_request delivers there.'
      : 'Write to this role address about the order; its domain takes mail.',
  form: () => 'Open this page and send the request through its contact form.',
  phone: () => 'Call this number.',
  chat: (c) => `Open this page and start a chat (${c.detail.vendor ?? 'chat widget'}).`,
  support_page: (c) =>
    c.detail.purpose === 'returns portal'
      ? "Start the return on the brand's returns portal."
      : "The brand's help page.",
  return_policy: () => "The brand's return policy: the window and conditions to cite.",
};

function viewOf(channel: RankedChannel): BrandChannelView {
  return {
    kind: channel.kind,
    address: channel.private ? null : channel.address,
    detail: channel.detail,
    source: channel.source,
    found_by: channel.found_by,
    source_url: channel.source_url,
    found_at: channel.found_at,
    delivery_rank: channel.delivery_rank,
    failed: channel.failed,
    use: uses[channel.kind](channel),
  };
}
