/**
 * Running a scan: crawl the domain with the limits of its depth, score what was found, and store
 * the result with its findings in one transaction, writing progress to the row while the crawl
 * runs so any process can report it. The worker runs claimed scans through it; quick checks run in
 * the request. `crawlOnly` is the same crawl storing nothing, for SKUs that build from the pages.
 */
import type { ScanRow } from '../../../db/schema.ts';
import { ServiceError } from '../../errors.ts';
import { isLocalDomain } from '../../public-address.ts';
import { CrawlError, type CrawlLimits, type CrawlProgress, type CrawlRequest, crawlSite } from './crawler.ts';
import type { ScansDeps } from './deps.ts';
import {
  completeScan,
  failScan,
  previousPublicScore,
  recordProgress,
  type ScanOutcome,
} from './repository.ts';
import { historyOf, type ScoringInputs, storedScore } from './scores.ts';
import { type ProfileId, scoreSite } from './scoring.ts';
import type { SiteFacts } from './site-facts.ts';

const PROGRESS_WRITE_INTERVAL_MS = 250;

/** The crawl limits of a scan of this depth (`scanner.*`; a quick check reads less). */
export function limitsFor(deps: Pick<ScansDeps, 'config'>, depth: 'full' | 'quick'): CrawlLimits {
  const s = deps.config.scanner;
  return {
    max_pages: depth === 'quick' ? s.quick_max_pages : s.max_pages,
    max_bytes: s.max_bytes,
    request_timeout_ms: s.request_timeout_ms,
    scan_timeout_ms: depth === 'quick' ? Math.min(s.scan_timeout_ms, 20_000) : s.scan_timeout_ms,
    concurrency: s.concurrency,
    delay_ms: s.delay_ms,
    max_redirects: s.max_redirects,
    max_sitemaps: depth === 'quick' ? 1 : s.max_sitemaps,
  };
}

/** Full scans open the home page in the browser when the deployment runs one; quick checks never do. */
function browserFor(deps: ScansDeps, depth: 'full' | 'quick'): Pick<CrawlRequest, 'browser'> {
  if (!deps.browser || depth !== 'full') return {};
  return { browser: { pool: deps.browser, page_budget_ms: deps.config.scanner.webmcp.page_budget_ms } };
}

/** Local sites serve plain http; public ones are tried over https first. */
export const schemesOf = (domain: string): CrawlRequest['schemes'] =>
  isLocalDomain(domain) ? ['http'] : ['https', 'http'];

/**
 * Crawls a domain as a full scan would (same limits, same SSRF-safe fetch, same robots.txt
 * obedience) and stores nothing: for SKUs that build something from the pages (llms-txt).
 * A site that cannot be crawled is a `site_unreachable` error.
 */
export async function crawlOnly(
  deps: ScansDeps,
  domain: string,
  observe: Pick<CrawlRequest, 'onPage' | 'onProgress'>,
  signal: AbortSignal,
  /** Tighter limits than a full scan's (the entity audit reads fewer pages). */
  limits: Partial<Pick<CrawlLimits, 'max_pages' | 'scan_timeout_ms'>> = {},
): Promise<SiteFacts> {
  const full = limitsFor(deps, 'full');
  try {
    return await crawlSite({
      domain,
      fetch: deps.fetch,
      userAgent: deps.config.scanner.user_agent,
      limits: {
        ...full,
        max_pages: Math.min(full.max_pages, limits.max_pages ?? full.max_pages),
        scan_timeout_ms: Math.min(full.scan_timeout_ms, limits.scan_timeout_ms ?? full.scan_timeout_ms),
      },
      signal,
      schemes: schemesOf(domain),
      ...observe,
    });
  } catch (err) {
    if (err instanceof CrawlError) throw new ServiceError('site_unreachable', { detail: err.message });
    throw err;
  }
}

/** Crawls and scores a claimed scan, storing the outcome. `owner` null: run inline, no lease. */
export async function runScan(
  deps: ScansDeps,
  scan: ScanRow,
  owner: string | null,
  signal?: AbortSignal,
): Promise<void> {
  const { db, config, log, now, fetch } = deps;
  const progress = progressWriter(deps, scan, owner);
  let facts: SiteFacts;
  try {
    facts = await crawlSite({
      domain: scan.domain,
      fetch,
      userAgent: config.scanner.user_agent,
      limits: limitsFor(deps, scan.depth),
      ...(signal ? { signal } : {}),
      schemes: schemesOf(scan.domain),
      onProgress: progress.write,
      ...browserFor(deps, scan.depth),
    });
  } catch (err) {
    await progress.written();
    // Shutting down: leave the scan leased; after the lease another process runs it again.
    if (signal?.aborted && owner !== null) return;
    const message =
      err instanceof CrawlError ? err.message : 'The scan failed unexpectedly; it can be requested again';
    if (!(err instanceof CrawlError)) log.error({ err, scan_id: scan.id }, 'scan crashed');
    await failScan(db, scan.id, owner, message, now().toISOString());
    return;
  }
  await progress.written();
  await scoreAndStore(deps, scan, owner, facts);
}

/**
 * Writes crawl progress to the scan's row, at most every PROGRESS_WRITE_INTERVAL_MS and always the
 * last report, one write at a time; a leased scan extends its lease with each write.
 */
function progressWriter(deps: ScansDeps, scan: ScanRow, owner: string | null) {
  const { db, log, now, config } = deps;
  let lastWrite = 0;
  let writing: Promise<void> = Promise.resolve();
  const leaseUntil = () => new Date(now().getTime() + config.scanner.lease_ms).toISOString();
  const store = (p: CrawlProgress): Promise<void> =>
    owner !== null
      ? recordProgress(db, scan.id, owner, p, leaseUntil())
      : db
          .updateTable('scans')
          .set({
            phase: p.phase,
            progress_done: p.done,
            progress_total: p.total,
            progress_message: p.message,
          })
          .where('id', '=', scan.id)
          .execute()
          .then(() => {});
  return {
    write: (p: CrawlProgress) => {
      const t = Date.now();
      if (p.phase !== 'done' && t - lastWrite < PROGRESS_WRITE_INTERVAL_MS) return;
      lastWrite = t;
      writing = writing
        .then(() => store(p))
        .catch((err) => log.warn({ err, scan_id: scan.id }, 'could not record scan progress'));
    },
    written: () => writing,
  };
}

async function scoreAndStore(deps: ScansDeps, scan: ScanRow, owner: string | null, facts: SiteFacts) {
  const { db, log, now } = deps;
  const at = now().toISOString();
  const [traffic, previous] = await Promise.all([
    deps.traffic(scan.domain).catch((err) => {
      log.warn({ err, domain: scan.domain }, 'live traffic unavailable; scoring without it');
      return null;
    }),
    scan.depth === 'full' ? previousPublicScore(db, scan.domain, at) : Promise.resolve(undefined),
  ]);
  const inputs: ScoringInputs = { traffic, previous: historyOf(previous) };
  const result = scoreSite(facts, inputs.traffic, inputs.previous, {
    profile: (scan.profile as ProfileId | null) ?? null,
  });
  const outcome: ScanOutcome = {
    ...storedScore(result, inputs),
    facts: JSON.stringify(facts),
    adoption: {
      has_llms_txt: facts.llms_txt?.valid ? 1 : 0,
      has_robots_ai_rules: facts.robots.agents.some((a) => a.named) ? 1 : 0,
      has_api_catalog: facts.discovery.api_catalog.valid ? 1 : 0,
      has_mcp: facts.discovery.mcp_server_card.valid ? 1 : 0,
      has_markdown: facts.markdown.supported ? 1 : 0,
    },
  };
  const stored = await db.transaction().execute((trx) => completeScan(trx, scan, owner, outcome, at));
  if (!stored) log.warn({ scan_id: scan.id }, 'scan lease lost before its result was stored');
}
