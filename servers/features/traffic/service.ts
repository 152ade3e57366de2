/**
 * Agent-versus-human traffic: collection (beacon and server-side batches, through the ingestion
 * queue), and every read, served from the rollups only. Reads take an account id rather than a
 * request, so the owner-scoped MCP server can reuse them for the account its token names.
 */

import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { DatabaseHandle, Dialect } from '../../../db/database.ts';
import type { Database, SiteRow } from '../../../db/schema.ts';
import type { Config } from '../../config.ts';
import { invalid, ServiceError } from '../../errors.ts';
import { fingerprint, storedResponse } from '../../idempotency.ts';
import { isStorableInstant } from '../../input.ts';
import type { SitesService } from '../sites/service.ts';
import { aiAgentCategories, type TrafficCategory, trafficCategories } from './agents.ts';
import type { Classifier, Hit } from './classify.ts';
import {
  batchWriter,
  type DurableOutcome,
  IngestQueue,
  type PreparedEvent,
  standaloneWriter,
} from './ingest.ts';
import { networkPrefix, pagePath, urlHost } from './privacy.ts';
import { type DailyRow, rollupReads, type TrafficReads } from './rollups.ts';
import {
  type AiSearchDataInput,
  type AiSearchDataResult,
  type AiToolsInput,
  type AiToolsResult,
  type IngestEventsInput,
  type IngestEventsResult,
  type LiveTraffic,
  MAX_EVENT_AGE_DAYS,
  type PixelStatusInput,
  type PixelStatusResult,
  type SiteStatsInput,
  type SiteStatsResult,
} from './schemas.ts';

/** The stored path of a hit that named no page; real paths always start with `/`. */
export const UNKNOWN_PAGE = '(unknown)';
const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
const MAX_USER_AGENT = 512;
/** Sites looked up by the beacon are cached this long (a new site is seen within this time). */
const SITE_CACHE_MS = 30_000;
const SITE_CACHE_MAX = 50_000;
/** Headers that identify agents; the only ones a server-side event's `headers` are read for. */
const AGENT_HEADERS = ['signature-agent', 'signature-input', 'signature'] as const;
/** Headers read from a server-side event: the agent headers, and the user agent when `user_agent` is empty. */
const EVENT_HEADERS: ReadonlySet<string> = new Set([...AGENT_HEADERS, 'user-agent']);

export interface TrafficDeps {
  db: Kysely<Database>;
  dialect: Dialect;
  config: Config;
  log: Logger;
  sites: SitesService;
  classifier: Classifier;
  now: () => Date;
  /** The database's own client, for the cheapest raw-event insert on each dialect. */
  raw: DatabaseHandle['raw'];
}

export interface BeaconHit {
  site: string;
  url: string | undefined;
  ref: string | undefined;
  userAgent: string;
  ip: string;
  headers: Record<string, string | string[] | undefined>;
}

type SiteLookup = { site: SiteRow | undefined; expires: number };

export type Period = { from: string; to: string; days: number };

const emptyCounts = (): Record<TrafficCategory, number> =>
  Object.fromEntries(trafficCategories.map((c) => [c, 0])) as Record<TrafficCategory, number>;

const share = (part: number, whole: number): number =>
  whole === 0 ? 0 : Math.round((part / whole) * 10_000) / 10_000;

const isAi = (category: string): boolean => (aiAgentCategories as readonly string[]).includes(category);

export class TrafficService {
  readonly queue: IngestQueue;
  readonly #deps: TrafficDeps;
  readonly #siteCache = new Map<string, SiteLookup | Promise<SiteRow | undefined>>();

  constructor(deps: TrafficDeps) {
    this.#deps = deps;
    const { traffic } = deps.config;
    this.queue = new IngestQueue(deps.db, deps.log.child({ component: 'traffic' }), {
      write: batchWriter(deps.raw),
      standalone: standaloneWriter(deps.raw),
      queueMaxEvents: traffic.queue_max_events,
      flushMaxEvents: traffic.flush_max_events,
      writeTimeoutMs: traffic.write_timeout_ms,
    });
  }

  get classifier(): Classifier {
    return this.#deps.classifier;
  }

  // --- Collection ------------------------------------------------------------------------------

  /**
   * One beacon hit, resolved once the transaction holding it committed (rejected with 503 when it
   * could not be written in time). A page that is not on the site's domain (someone else's page
   * carrying a copied snippet, or a `url` that is no absolute URL) is refused with a 400 naming where
   * it came from: a hit is either counted or refused, never acknowledged and dropped.
   */
  async collectBeacon(hit: BeaconHit): Promise<void> {
    const site = await this.#cachedSite(hit.site);
    if (!site) throw new ServiceError('not_found', { detail: `No site ${hit.site}` });
    await this.#recordBeacon(site, hit);
  }

  /**
   * The beacon for the fast path in front of the HTTP framework: undefined when the site is not in
   * the cache yet (the caller then takes the ordinary path, which loads it). Throws at once, like
   * `collectBeacon`, for a page off the site or when ingestion is over capacity; the promise settles
   * like `collectBeacon`'s.
   */
  collectBeaconIfCached(hit: BeaconHit): Promise<DurableOutcome> | undefined {
    const cached = this.#siteCache.get(hit.site);
    if (!cached || cached instanceof Promise || cached.expires <= Date.now() || !cached.site)
      return undefined;
    return this.#recordBeacon(cached.site, hit);
  }

  /**
   * A hit that names no page at all (no `url`, no Referer: a `<noscript>` image under
   * `Referrer-Policy: no-referrer`) is still a visit to the site: it is counted with the page
   * unknown, never acknowledged and dropped.
   */
  #recordBeacon(site: SiteRow, hit: BeaconHit): Promise<DurableOutcome> {
    const url = hit.url || firstHeader(hit.headers.referer) || undefined;
    if (url !== undefined && !onSite(url, site.domain)) {
      const field = hit.url ? 'url' : 'Referer';
      throw invalid([{ field, message: `is not an absolute URL of a page on ${site.domain}` }]);
    }
    const headers: Record<string, string | undefined> = {};
    for (const name of AGENT_HEADERS) headers[name] = firstHeader(hit.headers[name]);
    const at = this.#deps.now().toISOString();
    return this.queue.enqueue(
      [
        this.#prepare(site.id, 'beacon', at, at, {
          userAgent: hit.userAgent,
          referrer: hit.ref,
          url,
          headers,
          ip: hit.ip,
          status: null,
        }),
      ],
      undefined,
      'commit',
    );
  }

  /**
   * A server-side batch for a site of the account; answered after it is durable. With an
   * `Idempotency-Key` (the account's own: keys of two accounts never meet), the key is recorded in
   * the transaction that writes the events, so a batch sent again - after an answer that was lost,
   * or a 503 whose write had committed all the same - gets the first answer and is not stored twice.
   */
  async ingestBatch(
    accountId: string,
    input: IngestEventsInput,
    idempotencyKey?: string,
  ): Promise<IngestEventsResult> {
    const site = await this.#deps.sites.getOwned(accountId, input.site_id);
    const keyed =
      idempotencyKey === undefined
        ? undefined
        : { operation: `ingestEvents:${accountId}`, key: idempotencyKey, print: fingerprint(input) };
    if (keyed) {
      const earlier = await storedResponse<IngestEventsResult>(
        this.#deps.db,
        keyed.operation,
        keyed.key,
        keyed.print,
      );
      if (earlier) return earlier;
    }
    const now = this.#deps.now();
    const received = now.toISOString();
    const oldest = now.getTime() - MAX_EVENT_AGE_DAYS * DAY_MS;
    const newest = now.getTime() + DAY_MS;
    const problems: { field: string; message: string }[] = [];
    const prepared = input.events.map((event, i) => {
      const ms = typeof event.ts === 'number' ? event.ts : Date.parse(event.ts);
      if (!(ms >= oldest && ms <= newest)) {
        problems.push({
          field: `events.${i}.ts`,
          message: `must be within the last ${MAX_EVENT_AGE_DAYS} days`,
        });
      }
      const headers = eventHeaders(event.headers);
      const userAgent =
        event.user_agent && event.user_agent !== '-' ? event.user_agent : headers['user-agent'];
      return this.#prepare(site.id, 'server', new Date(ms).toISOString(), received, {
        userAgent: userAgent ?? '',
        referrer: event.referrer === '-' ? undefined : event.referrer,
        url: event.url,
        headers,
        ip: event.ip,
        status: event.status ?? null,
      });
    });
    if (problems.length > 0) throw invalid(problems.slice(0, 20));
    const byCategory = emptyCounts();
    for (const e of prepared) byCategory[e.category as TrafficCategory]++;
    const result: IngestEventsResult = {
      site_id: site.id,
      accepted: prepared.length,
      by_category: byCategory,
    };
    if (!keyed) {
      await this.queue.enqueue(prepared);
      return result;
    }
    const { operation, key, print } = keyed;
    const outcome = await this.queue.enqueue(prepared, {
      operation,
      key,
      fingerprint: print,
      response: JSON.stringify(result),
    });
    if (outcome === 'written') return result;
    // A concurrent request with the same key committed first: its answer is this one's.
    const winner = await storedResponse<IngestEventsResult>(this.#deps.db, operation, key, print);
    if (!winner) throw new ServiceError('idempotency_in_progress');
    return winner;
  }

  #prepare(
    siteId: string,
    source: 'beacon' | 'server',
    occurredAt: string,
    receivedAt: string,
    hit: Hit & { ip: string | undefined; status: number | null },
  ): PreparedEvent {
    const verdict = this.#deps.classifier.classify(hit);
    return {
      site_id: siteId,
      occurred_at: occurredAt,
      received_at: receivedAt,
      source,
      category: verdict.category,
      agent: verdict.agent,
      operator: verdict.operator,
      path: hit.url ? pagePath(hit.url) : UNKNOWN_PAGE,
      referrer_host: urlHost(hit.referrer),
      status: hit.status,
      ip_prefix: networkPrefix(hit.ip),
      user_agent:
        hit.userAgent.length > MAX_USER_AGENT ? hit.userAgent.slice(0, MAX_USER_AGENT) : hit.userAgent,
    };
  }

  /** The beacon's site lookup: cached (also misses), concurrent lookups of one id coalesced. */
  async #cachedSite(siteId: string): Promise<SiteRow | undefined> {
    const cached = this.#siteCache.get(siteId);
    if (cached instanceof Promise) return cached;
    if (cached && cached.expires > Date.now()) return cached.site;
    if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(siteId)) return undefined;
    const lookup = this.#deps.sites.get(siteId.toLowerCase()).then(
      (site) => {
        if (this.#siteCache.size >= SITE_CACHE_MAX) this.#siteCache.clear();
        this.#siteCache.set(siteId, { site, expires: Date.now() + SITE_CACHE_MS });
        return site;
      },
      (err: unknown) => {
        this.#siteCache.delete(siteId);
        throw err;
      },
    );
    this.#siteCache.set(siteId, lookup);
    return lookup;
  }

  // --- Reads -----------------------------------------------------------------------------------

  /** Install status of the account's sites (GET /pixel). */
  async pixelStatus(accountId: string, input: PixelStatusInput): Promise<PixelStatusResult> {
    const sites = input.site_id
      ? [await this.#deps.sites.getOwned(accountId, input.site_id)]
      : await this.#deps.sites.listForAccount(accountId);
    return pixelStatusOf(rollupReads(this.#deps.db), sites, this.#deps.now());
  }

  /** Per-site statistics for a period (GET /site-stats). */
  async siteStats(accountId: string, input: SiteStatsInput): Promise<SiteStatsResult> {
    const period = periodOf(input, this.#deps.now());
    const sites = input.site_id
      ? [await this.#deps.sites.getOwned(accountId, input.site_id)]
      : await this.#deps.sites.listForAccount(accountId);
    return siteStatsOf(rollupReads(this.#deps.db), sites, period, input.top ?? 10);
  }

  /** Network-wide aggregates (GET /ai-search-data); per-site figures only for opted-in sites. */
  async networkStats(input: AiSearchDataInput): Promise<AiSearchDataResult> {
    const period = periodOf(input, this.#deps.now());
    const { db, config } = this.#deps;
    const [contributing, daily, optedIn] = await Promise.all([
      // Sites with traffic in the period, from the per-site first/last event (one row per source).
      db
        .selectFrom('traffic_site_sources')
        .select((eb) => eb.fn.count<number>('site_id').distinct().as('sites'))
        .where('first_event_at', '<=', `${period.to}T23:59:59.999Z`)
        .where('last_event_at', '>=', `${period.from}T00:00:00.000Z`)
        .executeTakeFirst(),
      db
        .selectFrom('traffic_network_daily')
        .select(['day', 'category', 'agent', 'operator', 'events'])
        .where('day', '>=', period.from)
        .where('day', '<=', period.to)
        .execute(),
      db
        .selectFrom('traffic_daily')
        .innerJoin('sites', 'sites.id', 'traffic_daily.site_id')
        .select([
          'sites.domain',
          'traffic_daily.category',
          (eb) => eb.fn.sum<number>('traffic_daily.events').as('events'),
        ])
        .where('sites.share_network', '=', 1)
        // A name is published only for its proven owner's opt-in: anyone can register any domain.
        .where('sites.verified_at', 'is not', null)
        .where('traffic_daily.day', '>=', period.from)
        .where('traffic_daily.day', '<=', period.to)
        .groupBy(['sites.domain', 'traffic_daily.category'])
        .execute(),
    ]);
    const sites = Number(contributing?.sites ?? 0);
    const minSites = config.traffic.network_min_sites;
    const summary = summarize(sites >= minSites ? daily : [], period);
    const byAgent = input.category
      ? summary.by_agent.filter((a) => a.category === input.category)
      : summary.by_agent;
    const perSite = new Map<string, { events: number; ai: number }>();
    for (const row of optedIn) {
      const entry = perSite.get(row.domain) ?? { events: 0, ai: 0 };
      entry.events += Number(row.events);
      if (isAi(row.category)) entry.ai += Number(row.events);
      perSite.set(row.domain, entry);
    }
    return {
      period,
      ...summary,
      by_agent: byAgent,
      opted_in_sites: [...perSite.entries()]
        .map(([domain, e]) => ({ domain, events: e.events, ai_share: share(e.ai, e.events) }))
        .sort((a, b) => b.events - a.events)
        .slice(0, 100),
      note:
        sites >= minSites
          ? 'Sums over every site in the network that sends traffic. No per-site figures except for sites whose ' +
            'owners opted in (opted_in_sites).'
          : `Fewer than ${minSites} sites sent traffic in this period, so network figures are withheld: they ` +
            'would describe a single site. opted_in_sites still lists sites whose owners chose to be named.',
    };
  }

  /** The agent directory with how many sites saw each agent (GET /ai-tools). */
  async aiTools(input: AiToolsInput): Promise<AiToolsResult> {
    const { directory } = this.#deps.classifier;
    const seen = await this.#deps.db
      .selectFrom('traffic_agent_sites')
      .select(['agent', (eb) => eb.fn.countAll<number>().as('sites')])
      .groupBy('agent')
      .execute();
    const sitesSeen = new Map(seen.map((r) => [r.agent, Number(r.sites)]));
    const q = input.q?.toLowerCase();
    const agents = directory.agents
      .filter((a) => !input.category || a.category === input.category)
      .filter((a) => !q || a.name.toLowerCase().includes(q) || (a.operator ?? '').toLowerCase().includes(q))
      .map((a) => ({
        name: a.name,
        operator: a.operator,
        category: a.category,
        category_source: a.categorySource,
        robots_token: a.robotsToken,
        respects_robots_txt: a.respectsRobotsTxt,
        purpose: a.purpose,
        sites_seen: sitesSeen.get(a.name) ?? 0,
      }))
      .sort((a, b) => b.sites_seen - a.sites_seen || a.name.localeCompare(b.name));
    const { name, url, license, retrieved } = directory.source;
    return { agents, total: agents.length, source: { name, url, license, retrieved } };
  }

  /**
   * 30-day live traffic of a domain for the site scanner, or null when no site registered with
   * that domain has received any event. When several accounts registered the domain, the site
   * with the most recent event is used.
   */
  async liveTraffic(domain: string): Promise<LiveTraffic | null> {
    const { db, now } = this.#deps;
    const host = domain.trim().toLowerCase().replace(/\.$/, '');
    const candidates = await db
      .selectFrom('sites')
      .innerJoin('traffic_site_sources', 'traffic_site_sources.site_id', 'sites.id')
      .select([
        'sites.id',
        'sites.domain',
        (eb) => eb.fn.min('traffic_site_sources.first_event_at').as('first_event_at'),
        (eb) => eb.fn.max('traffic_site_sources.last_event_at').as('last_event_at'),
      ])
      .where('sites.domain', 'in', [host, `www.${host}`, host.replace(/^www\./, '')])
      // Only proven owners' traffic counts towards a public score: anyone can register a domain.
      .where('sites.verified_at', 'is not', null)
      .groupBy(['sites.id', 'sites.domain'])
      .execute();
    const best = candidates.sort((a, b) => (String(a.last_event_at) < String(b.last_event_at) ? 1 : -1))[0];
    if (!best) return null;
    const to = now().toISOString().slice(0, 10);
    const period = { from: addDays(to, -29), to, days: 30 };
    const previousFrom = addDays(period.from, -30);
    const rows = await db
      .selectFrom('traffic_daily')
      .select(['day', 'category', 'agent', 'operator', 'events'])
      .where('site_id', '=', best.id)
      .where('day', '>=', previousFrom)
      .where('day', '<=', period.to)
      .execute();
    const daily = rows.filter((row) => row.day >= period.from);
    const summary = summarize(daily, period);
    // The 30 days before, for Engagement Velocity: unknown (null) unless collection started by then.
    const coversPrevious =
      best.first_event_at !== null && String(best.first_event_at).slice(0, 10) <= previousFrom;
    let previousAi = 0;
    let previousReferrals = 0;
    for (const row of rows) {
      if (row.day >= period.from) continue;
      if (row.category === 'ai_referred') previousReferrals += Number(row.events);
      else if (isAi(row.category as TrafficCategory)) previousAi += Number(row.events);
    }
    const byCategory = emptyCounts();
    for (const c of summary.by_category) byCategory[c.category] = c.events;
    return {
      domain: best.domain,
      site_id: best.id,
      events_30d: summary.totals.events,
      ai_events_30d: summary.totals.ai_agents,
      ai_share: summary.totals.ai_share,
      by_category: byCategory,
      agents_seen: summary.by_agent.filter((a) => isAi(a.category)).map((a) => a.agent),
      ai_referrals_30d: byCategory.ai_referred,
      previous_ai_events_30d: coversPrevious ? previousAi : null,
      previous_ai_referrals_30d: coversPrevious ? previousReferrals : null,
      first_event_at: best.first_event_at === null ? null : String(best.first_event_at),
      last_event_at: best.last_event_at === null ? null : String(best.last_event_at),
      daily: summary.by_day.map((d) => ({
        day: d.day,
        events: d.events,
        ai_events: aiAgentCategories.reduce((n, c) => n + (d.by_category[c] ?? 0), 0),
      })),
    };
  }

  // --- Lifecycle -------------------------------------------------------------------------------

  /**
   * Deletes raw events past `raw_retention_days` and rollups past `rollup_retention_days`, in
   * bounded chunks so a large backlog never holds a long lock.
   */
  async sweep(): Promise<{ events: number }> {
    const { db, config, now } = this.#deps;
    const rawCutoff = new Date(now().getTime() - config.traffic.raw_retention_days * DAY_MS).toISOString();
    let events = 0;
    for (;;) {
      const result = await db
        .deleteFrom('traffic_events')
        .where('id', 'in', (eb) =>
          eb.selectFrom('traffic_events').select('id').where('occurred_at', '<', rawCutoff).limit(10_000),
        )
        .executeTakeFirst();
      const n = Number(result.numDeletedRows);
      events += n;
      if (n < 10_000) break;
    }
    const rollupCutoff = new Date(now().getTime() - config.traffic.rollup_retention_days * DAY_MS);
    const day = rollupCutoff.toISOString().slice(0, 10);
    await db.deleteFrom('traffic_daily').where('day', '<', day).execute();
    await db.deleteFrom('traffic_pages_daily').where('day', '<', day).execute();
    await db.deleteFrom('traffic_network_daily').where('day', '<', day).execute();
    await db
      .deleteFrom('traffic_agent_sites')
      .where('last_seen_at', '<', rollupCutoff.toISOString())
      .execute();
    const hour = new Date(now().getTime() - 7 * DAY_MS).toISOString().slice(0, 13);
    await db.deleteFrom('traffic_hourly').where('hour', '<', hour).execute();
    return { events };
  }

  /** Stops taking events and writes those taken (called before the database closes). */
  async drain(): Promise<void> {
    await this.queue.close();
  }
}

/**
 * Install status of sites read through `reads` (GET /pixel; the owner tools pass reads scoped to
 * the account, so both answer with the same figures).
 */
export async function pixelStatusOf(
  reads: TrafficReads,
  sites: SiteRow[],
  now: Date,
): Promise<PixelStatusResult> {
  if (sites.length === 0) return { sites: [] };
  const ids = sites.map((s) => s.id);
  const since = new Date(now.getTime() - 23 * HOUR_MS).toISOString().slice(0, 13);
  const [sources, hourly] = await Promise.all([reads.sources(ids), reads.hourlySince(ids, since)]);
  return {
    sites: sites.map((site) => {
      const own = sources.filter((s) => s.site_id === site.id);
      const recent = hourly.filter((h) => h.site_id === site.id);
      const count = (rows: { source: string; events: number | string }[], source: string) =>
        Number(rows.find((r) => r.source === source)?.events ?? 0);
      const first = own.map((s) => s.first_event_at).sort()[0] ?? null;
      const last =
        own
          .map((s) => s.last_event_at)
          .sort()
          .at(-1) ?? null;
      const recentBeacon = count(recent, 'beacon');
      const recentServer = count(recent, 'server');
      const totalBeacon = count(own, 'beacon');
      const totalServer = count(own, 'server');
      return {
        site_id: site.id,
        domain: site.domain,
        verified: site.verified_at !== null,
        status: !last ? 'not_installed' : recentBeacon + recentServer > 0 ? 'receiving' : 'idle',
        first_event_at: first,
        last_event_at: last,
        events_24h: { total: recentBeacon + recentServer, beacon: recentBeacon, server: recentServer },
        events_total: { total: totalBeacon + totalServer, beacon: totalBeacon, server: totalServer },
      };
    }),
  };
}

/** Per-site statistics over a period, read through `reads` (GET /site-stats and the owner tools). */
export async function siteStatsOf(
  reads: TrafficReads,
  sites: SiteRow[],
  period: Period,
  top: number,
): Promise<SiteStatsResult> {
  return { period, sites: await Promise.all(sites.map((site) => statsFor(reads, site, period, top))) };
}

async function statsFor(
  reads: TrafficReads,
  site: SiteRow,
  period: Period,
  top: number,
): Promise<SiteStatsResult['sites'][number]> {
  const [daily, pages] = await Promise.all([
    reads.daily(site.id, period.from, period.to),
    reads.pages(site.id, period.from, period.to),
  ]);
  const summary = summarize(daily, period);
  const topPages = Object.fromEntries(trafficCategories.map((c) => [c, []])) as unknown as Record<
    TrafficCategory,
    { path: string; events: number }[]
  >;
  for (const row of pages)
    topPages[row.category as TrafficCategory]?.push({ path: row.path, events: Number(row.events) });
  for (const list of Object.values(topPages)) {
    list.sort((a, b) => b.events - a.events || (a.path < b.path ? -1 : 1));
    list.splice(top);
  }
  const referrals = new Map<string, { source: string; operator: string | null; events: number }>();
  for (const row of daily) {
    if (row.category !== 'ai_referred') continue;
    const found = referrals.get(row.agent);
    if (found) found.events += Number(row.events);
    else referrals.set(row.agent, { source: row.agent, operator: row.operator, events: Number(row.events) });
  }
  const bySource = [...referrals.values()].sort((a, b) => b.events - a.events);
  return {
    site_id: site.id,
    domain: site.domain,
    ...summary,
    top_pages: topPages,
    ai_referrals: { events: bySource.reduce((n, r) => n + r.events, 0), by_source: bySource },
  };
}

/** The period of a read: `to` defaults to today (UTC), `from` to `days` (default 30) before it. */
export function periodOf(
  input: { from?: string | undefined; to?: string | undefined; days?: number | undefined },
  now: Date,
): Period {
  const to = input.to ?? now.toISOString().slice(0, 10);
  const from = input.from ?? addDays(to, -((input.days ?? 30) - 1));
  if (!isStorableInstant(Date.parse(from))) {
    throw invalid([{ field: 'days', message: 'the period must not start before 0001-01-01' }]);
  }
  const days = Math.round((Date.parse(to) - Date.parse(from)) / DAY_MS) + 1;
  if (days < 1) throw invalid([{ field: 'from', message: 'must not be after to' }]);
  if (days > 400) throw invalid([{ field: 'from', message: 'the period must be at most 400 days' }]);
  return { from, to, days };
}

/** Totals, shares, per agent and per day of rollup rows over a period. */
function summarize(rows: DailyRow[], period: Period) {
  const byCategory = emptyCounts();
  const agents = new Map<
    string,
    { agent: string; operator: string | null; category: TrafficCategory; events: number }
  >();
  const days = new Map<string, Record<TrafficCategory, number>>();
  for (let i = 0; i < period.days; i++) days.set(addDays(period.from, i), emptyCounts());
  let total = 0;
  for (const row of rows) {
    const events = Number(row.events);
    const category = row.category as TrafficCategory;
    total += events;
    byCategory[category] += events;
    const day = days.get(row.day);
    if (day) day[category] += events;
    if (row.agent && category !== 'ai_referred') {
      const key = `${category}|${row.agent}`;
      const found = agents.get(key);
      if (found) found.events += events;
      else agents.set(key, { agent: row.agent, operator: row.operator, category, events });
    }
  }
  const ai = aiAgentCategories.reduce((n, c) => n + byCategory[c], 0);
  const human = byCategory.human + byCategory.ai_referred;
  return {
    totals: {
      events: total,
      human,
      ai_agents: ai,
      other_bots: byCategory.other_bot,
      ai_share: share(ai, total),
      human_share: share(human, total),
    },
    by_category: trafficCategories.map((category) => ({
      category,
      events: byCategory[category],
      share: share(byCategory[category], total),
    })),
    by_agent: [...agents.values()]
      .sort((a, b) => b.events - a.events || a.agent.localeCompare(b.agent))
      .map((a) => ({ ...a, share: share(a.events, total) })),
    by_day: [...days.entries()].map(([day, counts]) => {
      const events = Object.values(counts).reduce((n, v) => n + v, 0);
      const aiEvents = aiAgentCategories.reduce((n, c) => n + counts[c], 0);
      return { day, events, ai_share: share(aiEvents, events), by_category: counts };
    }),
  };
}

function addDays(day: string, n: number): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + n * DAY_MS).toISOString().slice(0, 10);
}

/**
 * The headers of a server-side event that are read, by lower-case name: field names are
 * case-insensitive (RFC 9110, section 5.1) and log shippers keep the case they received, so
 * `Signature-Agent` must count as `signature-agent`. A name sent twice in different cases is one
 * field, its values joined with ", " (section 5.3). nginx logs "" or "-" for an absent header.
 */
function eventHeaders(raw: Record<string, string> | undefined): Record<string, string | undefined> {
  const headers: Record<string, string | undefined> = {};
  if (!raw) return headers;
  for (const [name, value] of Object.entries(raw)) {
    const key = name.trim().toLowerCase();
    if (!EVENT_HEADERS.has(key) || !value || value === '-') continue;
    const seen = headers[key];
    headers[key] = seen === undefined ? value : `${seen}, ${value}`;
  }
  return headers;
}

function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** Whether a page URL is on the site's domain (or a subdomain; `www.` ignored on both sides). */
export function onSite(url: string, domain: string): boolean {
  let page: URL;
  try {
    page = new URL(url);
  } catch {
    return false;
  }
  const strip = (h: string) => h.toLowerCase().replace(/^www\./, '');
  const site = strip(domain);
  const host = strip(domain.includes(':') ? page.host : page.hostname);
  return host === site || host.endsWith(`.${site}`);
}
