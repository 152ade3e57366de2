/**
 * Live resolution: for a merchant the registry does not name confidently, find the website whose
 * home page names it, and remember the verdict.
 *
 * Candidates (`candidates.ts`) are checked through an SSRF-safe fetcher of their own (the
 * scanner's address policy; names resolved by `charges.live_resolution.dns_servers`, else
 * `outbound.dns_servers`): the domain must
 * resolve to an allowed address, its home page - at most 3 redirects, 256 KiB, HTML - must name
 * the merchant and agree with the line's city (`merchant-site.ts`). The verdict, found or not, is
 * stored in `resolved_merchants` with its evidence and served from there until it expires.
 *
 * A lookup waits for a resolution at most `time_budget_ms`, then answers `pending` while the
 * resolution goes on in the background until `deadline_ms`: a merchant whose site answers fast is
 * named on the first lookup, one that is slow costs that lookup no more than the budget, and the
 * next lookup reads the stored verdict. Concurrent lookups of one merchant share one resolution;
 * at most `max_concurrent` run per process, with a short queue, so a flood of unknown lines cannot
 * turn into a flood of outbound requests.
 */
import type { lookup as dnsLookup } from 'node:dns';
import type { Kysely } from 'kysely';
import pLimit, { type LimitFunction } from 'p-limit';
import type { Logger } from 'pino';
import { getDomain } from 'tldts';
import type { Database, ResolvedMerchantRow } from '../../../db/schema.ts';
import { type Config, liveResolutionEnabled } from '../../config.ts';
import { createSafeFetch, readLimitedBody, type SafeFetch } from '../../outbound/safe-fetch.ts';
import type { SearchProvider } from '../../outbound/search.ts';
import { withinBudget } from '../../time-budget.ts';
import { countryOfDomain } from './brand-registry.ts';
import { type Candidate, candidateDomains, isPlatform, type MerchantLine } from './candidates.ts';
import { levelOf } from './matcher.ts';
import { judgeSite, readSiteIdentity, type SiteVerdict } from './merchant-site.ts';
import { findResolvedMerchant, saveResolvedMerchant } from './repository.ts';
import type { Resolution } from './schemas.ts';

/** A home page larger than this is judged on its first 256 KiB (the head and the top of the body). */
const MAX_PAGE_BYTES = 256 * 1024;
const MAX_REDIRECTS = 3;
const SEARCH_RESULTS = 5;
/** Home pages fetched at once within one resolution. */
const CHECKS_AT_ONCE = 4;
/** Resolutions waiting for a slot, per running slot; past that a lookup answers `pending` and starts none. */
const QUEUE_PER_SLOT = 8;
/** A not_found that some candidate could not answer in time is tried again sooner. */
const INCONCLUSIVE_TTL_MS = 3_600_000;
const DAY_MS = 86_400_000;

export type CandidateOutcome =
  | 'accepted'
  // Why the merchant's site judged it another business's (`judgeSite`).
  | NonNullable<SiteVerdict['reason']>
  | 'no_address'
  | 'blocked'
  | 'not_html'
  | 'http_error'
  | 'platform'
  | 'timeout'
  | 'unreachable';

interface CandidateCheck {
  candidate: Candidate;
  outcome: CandidateOutcome;
  /** The home page read, after redirects. */
  url: string | null;
  domain: string | null;
  verdict: SiteVerdict | null;
  category: string | null;
}

interface Evidence {
  url?: string;
  signals?: SiteVerdict['signals'];
  city?: SiteVerdict['city'];
  source?: Candidate['source'];
  candidates: { domain: string; source: Candidate['source']; outcome: CandidateOutcome }[];
}

export interface MerchantResolverOptions {
  db: Kysely<Database>;
  config: Config;
  /** How candidate names are resolved (`outbound/dns-lookup.ts`). */
  lookup: typeof dnsLookup;
  search: SearchProvider | null;
  log: Logger;
  now: () => Date;
  /** Another fetcher than the one built from the configuration (tests of the address policy). */
  fetch?: SafeFetch;
}

export class MerchantResolver {
  readonly enabled: boolean;
  readonly #db: Kysely<Database>;
  readonly #settings: Config['charges']['live_resolution'];
  readonly #fetch: SafeFetch;
  readonly #ownsFetch: boolean;
  readonly #search: SearchProvider | null;
  readonly #log: Logger;
  readonly #now: () => Date;
  readonly #slots: LimitFunction;
  readonly #inflight = new Map<string, Promise<Resolution | null>>();
  readonly #stopping = new AbortController();

  constructor(options: MerchantResolverOptions) {
    const settings = options.config.charges.live_resolution;
    this.enabled = liveResolutionEnabled(options.config);
    this.#db = options.db;
    this.#settings = settings;
    this.#search = options.search;
    this.#log = options.log;
    this.#now = options.now;
    this.#slots = pLimit(settings.max_concurrent);
    this.#ownsFetch = options.fetch === undefined;
    this.#fetch =
      options.fetch ??
      createSafeFetch({
        allowPrivateNetworks: options.config.scanner.allow_private_networks,
        timeoutMs: settings.deadline_ms,
        userAgent: options.config.outbound.user_agent,
        lookup: options.lookup,
      });
  }

  /**
   * The stored verdict for this merchant, else a resolution waited for at most the time budget.
   * Off, it answers `off` without reading the table: nothing live happens on such a deployment.
   */
  async resolve(merchant: MerchantLine): Promise<Resolution> {
    if (!this.enabled) return { status: 'off' };
    const nameKey = merchant.nameTokens.join('');
    const cityKey = merchant.cityTokens.join('');
    const stored = await findResolvedMerchant(this.#db, nameKey, cityKey, this.#now().toISOString());
    if (stored) return resolutionOf(stored);

    const id = `${nameKey}\u0000${cityKey}`;
    let running = this.#inflight.get(id);
    if (!running) {
      if (
        this.#stopping.signal.aborted ||
        this.#slots.pendingCount >= this.#settings.max_concurrent * QUEUE_PER_SLOT
      ) {
        return this.#pending();
      }
      running = this.#slots(() => this.#storedOrResolve(merchant, nameKey, cityKey))
        .catch((err: unknown) => {
          this.#log.error({ err }, 'merchant resolution failed');
          return null;
        })
        .finally(() => this.#inflight.delete(id));
      this.#inflight.set(id, running);
    }
    return (await withinBudget(running, this.#settings.time_budget_ms)) ?? this.#pending();
  }

  /** Stops background resolutions (their fetches are cut) and waits for them. */
  async stop(): Promise<void> {
    this.#stopping.abort();
    this.#slots.clearQueue();
    await Promise.allSettled([...this.#inflight.values()]);
    if (this.#ownsFetch) await this.#fetch.close();
  }

  #pending(): Resolution {
    return { status: 'pending', retry_after_s: Math.ceil(this.#settings.deadline_ms / 1000) };
  }

  /**
   * The verdict stored since this lookup read the table, else a resolution now. A lookup whose read
   * was still on its way while another lookup's resolution stored its verdict and left the in-flight
   * map finds neither: this second read, once it holds the only in-flight entry, sees that verdict
   * (stored before the entry left) instead of fetching the merchant's site again.
   */
  async #storedOrResolve(
    merchant: MerchantLine,
    nameKey: string,
    cityKey: string,
  ): Promise<Resolution | null> {
    const stored = await findResolvedMerchant(this.#db, nameKey, cityKey, this.#now().toISOString());
    if (stored) return resolutionOf(stored);
    return this.#resolveNow(merchant, nameKey, cityKey);
  }

  /** Checks the candidates and stores the verdict; null when stopped before it could conclude. */
  async #resolveNow(merchant: MerchantLine, nameKey: string, cityKey: string): Promise<Resolution | null> {
    if (this.#stopping.signal.aborted) return null;
    const signal = AbortSignal.any([this.#stopping.signal, AbortSignal.timeout(this.#settings.deadline_ms)]);
    const started = Date.now();
    const searchUrls = await this.#searchFor(merchant, signal);
    const candidates = candidateDomains(merchant, searchUrls, this.#settings.max_candidates);
    const checks = pLimit(CHECKS_AT_ONCE);
    const results = await Promise.all(candidates.map((c) => checks(() => this.#check(c, merchant, signal))));
    if (this.#stopping.signal.aborted) return null;

    // A site that confirms the line's city wins over one that cannot say, which wins over one that
    // does not mention it (a same-name business elsewhere), whatever else adds to its confidence;
    // then one in the line's state, then its country; then confidence, then the order the candidates
    // came in.
    const cityRank = { agrees: 0, unknown: 1, absent: 2 } as const;
    const agrees = (v: 'agrees' | 'unknown') => (v === 'agrees' ? 0 : 1);
    const accepted = results
      .map((r, index) => ({ r, index, v: r.verdict as SiteVerdict }))
      .filter(({ r }) => r.outcome === 'accepted' && r.verdict && r.domain)
      .sort(
        (a, b) =>
          cityRank[a.v.city] - cityRank[b.v.city] ||
          agrees(a.v.region) - agrees(b.v.region) ||
          agrees(a.v.country) - agrees(b.v.country) ||
          b.v.confidence - a.v.confidence ||
          a.index - b.index,
      );
    const best = accepted[0]?.r;
    const checkedAt = this.#now();
    const evidence: Evidence = {
      candidates: results.map((r) => ({
        domain: r.candidate.domain,
        source: r.candidate.source,
        outcome: r.outcome,
      })),
    };
    let row: Parameters<typeof saveResolvedMerchant>[1];
    if (best?.verdict && best.domain && best.url) {
      evidence.url = best.url;
      evidence.signals = best.verdict.signals;
      evidence.city = best.verdict.city;
      evidence.source = best.candidate.source;
      row = {
        name_key: nameKey,
        city_key: cityKey,
        status: 'resolved',
        domain: best.domain,
        name: best.verdict.name,
        category: best.category ?? 'other',
        confidence: best.verdict.confidence,
        evidence: JSON.stringify(evidence),
        checked_at: checkedAt.toISOString(),
        expires_at: new Date(checkedAt.getTime() + this.#settings.resolved_ttl_days * DAY_MS).toISOString(),
      };
    } else {
      const inconclusive = results.some((r) => r.outcome === 'timeout' || r.outcome === 'unreachable');
      const ttl = this.#settings.not_found_ttl_days * DAY_MS;
      row = {
        name_key: nameKey,
        city_key: cityKey,
        status: 'not_found',
        domain: null,
        name: null,
        category: null,
        confidence: null,
        evidence: JSON.stringify(evidence),
        checked_at: checkedAt.toISOString(),
        expires_at: new Date(
          checkedAt.getTime() + (inconclusive ? Math.min(ttl, INCONCLUSIVE_TTL_MS) : ttl),
        ).toISOString(),
      };
    }
    await saveResolvedMerchant(this.#db, row);
    this.#log.debug(
      {
        name_key: nameKey,
        status: row.status,
        domain: row.domain,
        candidates: results.length,
        ms: Date.now() - started,
      },
      'merchant resolved',
    );
    return resolutionOf(row);
  }

  async #searchFor(merchant: MerchantLine, signal: AbortSignal): Promise<string[]> {
    if (!this.#search) return [];
    const query = [...merchant.nameTokens, ...merchant.cityTokens].join(' ').toLowerCase();
    try {
      const results = await this.#search.search(query, { limit: SEARCH_RESULTS, signal });
      return results.map((r) => r.url);
    } catch (err) {
      this.#log.warn({ err, provider: this.#search.name }, 'search for merchant resolution failed');
      return [];
    }
  }

  #homePage(host: string): string {
    const { home_page_scheme: scheme, home_page_port: port } = this.#settings;
    return `${scheme}://${host}${port === null ? '' : `:${port}`}/`;
  }

  async #check(candidate: Candidate, merchant: MerchantLine, signal: AbortSignal): Promise<CandidateCheck> {
    let check = await this.#checkHost(candidate, candidate.domain, merchant, signal);
    // A domain found on the line or by search exists; some only answer on www.
    if (check.outcome === 'no_address' && candidate.source !== 'name') {
      check = await this.#checkHost(candidate, `www.${candidate.domain}`, merchant, signal);
    }
    return check;
  }

  async #checkHost(
    candidate: Candidate,
    host: string,
    merchant: MerchantLine,
    signal: AbortSignal,
  ): Promise<CandidateCheck> {
    const result = (outcome: CandidateOutcome, extra: Partial<CandidateCheck> = {}): CandidateCheck => ({
      candidate,
      outcome,
      url: null,
      domain: null,
      verdict: null,
      category: null,
      ...extra,
    });
    const home = await this.#fetchPage(new URL(this.#homePage(host)), signal, (url) =>
      isPlatform(getDomain(url.hostname) ?? url.hostname),
    );
    if ('outcome' in home) return result(home.outcome, { url: home.url.href });
    const domain = getDomain(home.url.hostname) ?? home.url.hostname;
    if (home.platform) return result('platform', { url: home.url.href, domain });
    let identity = readSiteIdentity(home.html);
    const judge = () =>
      judgeSite(merchant, identity, {
        websiteHint: candidate.source === 'website_hint',
        // The site the line printed is the merchant's own on whatever country domain it is.
        domainCountry: candidate.source === 'website_hint' ? null : countryOfDomain(domain),
        domainLabel: domain.split('.')[0] ?? null,
      });
    let verdict = judge();
    // A home page that does not say the merchant's name may say it on its about page (the company
    // behind the brand, its legal name): one more page of the same site, read the same way.
    if (verdict.reason === 'name_absent' && identity.aboutPath) {
      const about = await this.#fetchPage(
        new URL(identity.aboutPath, home.url),
        signal,
        (url) => (getDomain(url.hostname) ?? url.hostname) !== domain,
      );
      if (!('outcome' in about) && !about.platform) {
        const page = readSiteIdentity(about.html);
        identity = {
          ...identity,
          names: [...identity.names, ...page.names.map((n) => ({ ...n, signal: 'organization' as const }))],
          localities: [...identity.localities, ...page.localities],
          countries: [...new Set([...identity.countries, ...page.countries])],
          regions: [...identity.regions, ...page.regions],
          text: `${identity.text}${page.text}`,
        };
        verdict = judge();
      }
    }
    return result(verdict.accepted ? 'accepted' : (verdict.reason ?? 'name_absent'), {
      url: home.url.href,
      domain,
      verdict,
      category: identity.category,
    });
  }

  /**
   * An HTML page through the safe fetcher, redirects followed hop by hop (at most 3), its first
   * 256 KiB; `stop(url)` ends the walk at a page not worth reading (a platform, another site).
   */
  async #fetchPage(
    start: URL,
    signal: AbortSignal,
    stop: (url: URL) => boolean,
  ): Promise<{ url: URL; html: string; platform: boolean } | { url: URL; outcome: CandidateOutcome }> {
    let url = start;
    try {
      for (let hop = 0; ; hop++) {
        const response = await this.#fetch(url, {
          redirect: 'manual',
          headers: { accept: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.1' },
          signal,
        });
        const location = response.headers.get('location');
        const done = (outcome: CandidateOutcome) => {
          void response.body?.cancel().catch(() => {});
          return { url, outcome };
        };
        if (response.status >= 300 && response.status < 400 && location) {
          if (hop >= MAX_REDIRECTS) return done('http_error');
          const next = new URL(location, url);
          if (next.protocol !== 'http:' && next.protocol !== 'https:') return done('http_error');
          await response.body?.cancel().catch(() => {});
          url = next;
          continue;
        }
        if (!response.ok) return done('http_error');
        if (!/html/i.test(response.headers.get('content-type') ?? '')) return done('not_html');
        if (stop(url)) {
          await response.body?.cancel().catch(() => {});
          return { url, html: '', platform: true };
        }
        const { bytes } = await readLimitedBody(response, MAX_PAGE_BYTES);
        return { url, html: bytes.toString('utf8'), platform: false };
      }
    } catch (err) {
      return { url, outcome: failureOf(err, signal) };
    }
  }
}

function failureOf(err: unknown, signal: AbortSignal): CandidateOutcome {
  if (signal.aborted) return 'timeout';
  const cause = (err as { cause?: { name?: string; code?: string } }).cause;
  if (cause?.name === 'BlockedDestinationError' || (err as Error).name === 'BlockedDestinationError')
    return 'blocked';
  const code = cause?.code ?? (err as NodeJS.ErrnoException).code;
  if (code === 'ENOTFOUND' || code === 'ENODATA' || code === 'ESERVFAIL' || code === 'ENONAME')
    return 'no_address';
  if ((err as Error).name === 'TimeoutError' || code === 'UND_ERR_CONNECT_TIMEOUT') return 'timeout';
  return 'unreachable';
}

function resolutionOf(row: Pick<ResolvedMerchantRow, keyof ResolvedMerchantRow>): Resolution {
  const evidence = JSON.parse(row.evidence) as Evidence;
  if (row.status === 'resolved' && row.domain && row.name && row.confidence !== null) {
    return {
      status: 'resolved',
      domain: row.domain,
      name: row.name,
      category: row.category ?? 'other',
      confidence: row.confidence,
      level: levelOf(row.confidence),
      checked_at: row.checked_at,
      evidence: {
        url: evidence.url ?? '',
        signals: evidence.signals ?? [],
        city: evidence.city ?? 'unknown',
        source: evidence.source ?? 'name',
      },
    };
  }
  return { status: 'not_found', checked_at: row.checked_at, candidates_checked: evidence.candidates.length };
}
