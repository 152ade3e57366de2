/**
 * Scans: queue them durably, run them in the background, answer the public reads.
 *
 * A scan request writes a `queued` row and returns; a worker in every process claims queued rows
 * under a lease (PostgreSQL: `FOR UPDATE SKIP LOCKED`), crawls, scores, and stores the result with
 * its findings in one transaction. Progress is written to the row while the crawl runs, so any
 * process can report it. A process that dies mid-scan leaves the lease to expire and another
 * process runs the scan again (up to `scanner.max_attempts`).
 *
 * `request()` starts a scan for the free REST/MCP routes; `requestPaid()` the x402 `scan` SKU's
 * scans, once per payment, the private ones read back with a token; `freshQuickCheck()`
 * is the x402 `signal` SKU's quick check, run in the request.
 */
import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { AnonymousPrincipal, AnonymousSessions } from '../../../auth/anonymous/sessions.ts';
import type { Dialect } from '../../../db/database.ts';
import type { Database, DomainScoreRow, ScanRow } from '../../../db/schema.ts';
import type { Config } from '../../config.ts';
import { invalid, notFound, ServiceError } from '../../errors.ts';
import type { SafeFetch } from '../../outbound/safe-fetch.ts';
import type { PaidResource } from '../../payments/sign-in.ts';
import { PollingWorker } from '../../polling-worker.ts';
import { domainPolicyOf, isLocalDomain, normalizeDomain } from '../../public-address.ts';
import type { AccountPrincipal } from '../accounts/service.ts';
import { CrawlError, type CrawlLimits, type CrawlRequest, crawlSite, type SiteFacts } from './crawler.ts';
import { fixSheet } from './fix-sheet.ts';
import {
  aggregateScores,
  claimScans,
  completeScan,
  failScan,
  findActiveScan,
  findActiveScanOfSession,
  findDomainScore,
  findPaidScan,
  findScan,
  insertScan,
  latestSnapshotPeriod,
  leaderboardPage,
  listFindings,
  previousPublicScore,
  readinessHistory,
  recordPaidScan,
  recordProgress,
  type ScanOutcome,
  scanPayers,
  scansOfAccount,
  scansToRescore,
  scoringInputsOf,
  setReadTokenHash,
  snapshotRanks,
  storeRescore,
  takeSnapshots,
} from './repository.ts';
import type {
  Leaderboard,
  ReadinessIndex,
  ReadinessPoint,
  Scan,
  ScanFixes,
  ScanScore,
  ScoreBreakdown,
  Signal,
  SiteSummary,
} from './schemas.ts';
import {
  evidenceOfCheck,
  type LiveTraffic,
  type LiveTrafficProvider,
  type ProfileId,
  SCORING_VERSION,
  type ScoreHistory,
  type SignalScore,
  scoreSite,
  type Tier,
  tierOf,
  tiers,
} from './scoring.ts';

/** What a score is computed from besides the facts (`scans.scoring_inputs`). */
interface ScoringInputs {
  traffic: LiveTraffic | null;
  previous: ScoreHistory | null;
}

const RESCORE_BATCH = 20;

export interface ScansDeps {
  db: Kysely<Database>;
  dialect: Dialect;
  config: Config;
  log: Logger;
  /** SSRF-safe fetch with the scanner's address policy (`scanner.allow_private_networks`, `localSitesAllowed`). */
  fetch: SafeFetch;
  /** Live traffic of a domain with the pixel; the sites feature provides it. */
  traffic: LiveTrafficProvider;
  /** Counts scans of anonymous sessions against their quota. */
  anonymous: Pick<AnonymousSessions, 'reserveScan'>;
  now: () => Date;
}

const PROGRESS_WRITE_INTERVAL_MS = 250;
const WAIT_POLL_MS = 200;

/** The period snapshots are taken for: the UTC day. */
export const periodOf = (date: Date): string => date.toISOString().slice(0, 10);

/** Recognisable by secret scanners and people, like the service's other secrets. */
const READ_TOKEN_PREFIX = 'agsvc_scan_';
const READ_TOKEN_PATTERN = /^agsvc_scan_[A-Za-z0-9_-]{43}$/;
const digestOf = (secret: string): string => createHash('sha256').update(secret).digest('hex');

/** Whether `token` is the read token whose digest the scan row keeps (constant time over the digests). */
function holdsReadToken(row: ScanRow, token: string | null): boolean {
  if (token === null || row.read_token_hash === null || !READ_TOKEN_PATTERN.test(token)) return false;
  return timingSafeEqual(Buffer.from(digestOf(token)), Buffer.from(row.read_token_hash));
}

export function tierById(id: string): Tier {
  return tiers.find((t) => t.id === id) ?? tierOf(0);
}

export class ScansService {
  private readonly deps: ScansDeps;
  readonly worker: ScanWorker;
  /** Quick first checks running in this process, by domain (their scan id): callers join, not repeat. */
  private readonly quickChecks = new Map<string, string>();

  constructor(deps: ScansDeps) {
    this.deps = deps;
    this.worker = new ScanWorker(deps, this);
  }

  /** `domain` as the scanner accepts it, or a 400 naming the field. */
  normalize(raw: string): string {
    const result = normalizeDomain(raw, domainPolicyOf(this.deps.config));
    if (!result.ok) throw invalid([{ field: 'domain', message: result.message }]);
    return result.domain;
  }

  statusUrl(scanId: string): string {
    return `${this.deps.config.public_api_url}/scans/${scanId}`;
  }

  /**
   * Queues a scan (or joins one of the same domain and visibility already queued or running).
   * Private scans belong to an account or an anonymous session; without either a scan is public.
   * A scan of an anonymous session (and no account) counts against its quota and is attributed to
   * it, so a claim can move it to an account; it joins only the session's own running scans.
   */
  async request(
    input: { domain: string; public: boolean; profile?: ProfileId | undefined },
    account: AccountPrincipal | null,
    depth: 'full' | 'quick' = 'full',
    anonymous: AnonymousPrincipal | null = null,
  ): Promise<Scan> {
    const domain = this.normalize(input.domain);
    if (!input.public && !account && !anonymous) {
      throw invalid(
        [
          {
            field: 'public',
            message:
              'false needs an x-service-key or an anonymous session token: private scans have an owner',
          },
        ],
        'public: false needs an x-service-key or an anonymous session token',
      );
    }
    const isPublic = input.public ? 1 : 0;
    const { db, now } = this.deps;
    const profile = input.profile ?? null;
    if (!account && anonymous) return this.requestAnonymous(domain, isPublic, depth, anonymous, profile);
    const active = await findActiveScan(db, domain, isPublic, account?.id ?? null);
    if (active && active.depth === depth && active.profile === profile) return this.view(active, account);
    const id = randomUUID();
    await insertScan(db, {
      id,
      domain,
      account_id: account?.id ?? null,
      is_public: isPublic,
      depth,
      requested_at: now().toISOString(),
      profile,
    });
    this.worker.nudge();
    return this.get(id, account);
  }

  /**
   * Starts the scan a payment of the x402 `scan` SKU buys. A public scan joins one of the domain
   * already queued or running, as `request()` does; a private one is queued alone, read back with a
   * token that is returned once and stored only as a digest, so the token reads this scan alone.
   *
   * Each payment keeps the scan it bought (`paid_scans`, written in the transaction that queues
   * it). A payment released after its scan was queued (its process died while the handler waited
   * on the scan) and sent again answers that scan, queued, running or done, instead of queueing
   * another. A private scan then gets a new token: the first one was never handed out, since the
   * reply comes only after the result is stored, and a stored result is replayed, not run again.
   * When the earlier scan failed, or the authorization now pays for another scan (released by a
   * failure, then spent on another request), a new scan is started.
   */
  async requestPaid(
    input: { domain: string; public: boolean },
    account: AccountPrincipal | null,
    paymentId: string | undefined,
  ): Promise<{ scan: Scan; readToken: string | null }> {
    const domain = this.normalize(input.domain);
    const isPublic = input.public ? 1 : 0;
    const { db, now } = this.deps;
    const readToken = input.public ? null : READ_TOKEN_PREFIX + randomBytes(32).toString('base64url');
    const at = now().toISOString();
    let queued = false;
    const id = await db.transaction().execute(async (trx) => {
      const bought = paymentId === undefined ? undefined : await findPaidScan(trx, paymentId);
      if (bought && bought.domain === domain && bought.is_public === isPublic && bought.status !== 'failed') {
        if (readToken) await setReadTokenHash(trx, bought.id, digestOf(readToken));
        return bought.id;
      }
      const active = isPublic ? await findActiveScan(trx, domain, 1, null) : undefined;
      let scanId = active && active.depth === 'full' && active.profile === null ? active.id : undefined;
      if (!scanId) {
        scanId = randomUUID();
        await insertScan(trx, {
          id: scanId,
          domain,
          account_id: account?.id ?? null,
          is_public: isPublic,
          depth: 'full',
          requested_at: at,
          ...(readToken ? { read_token_hash: digestOf(readToken) } : {}),
        });
        queued = true;
      }
      if (paymentId !== undefined) await recordPaidScan(trx, paymentId, scanId, at);
      return scanId;
    });
    if (queued) this.worker.nudge();
    return { scan: await this.get(id, account, null, readToken), readToken };
  }

  private async requestAnonymous(
    domain: string,
    isPublic: number,
    depth: 'full' | 'quick',
    anonymous: AnonymousPrincipal,
    profile: ProfileId | null,
  ): Promise<Scan> {
    const { db, now } = this.deps;
    const active = await findActiveScanOfSession(db, domain, isPublic, anonymous.sessionId);
    if (active && active.depth === depth && active.profile === profile)
      return this.view(active, null, anonymous);
    const id = randomUUID();
    await db.transaction().execute(async (trx) => {
      await this.deps.anonymous.reserveScan(trx, anonymous);
      await insertScan(trx, {
        id,
        domain,
        account_id: null,
        anonymous_session_id: anonymous.sessionId,
        is_public: isPublic,
        depth,
        requested_at: now().toISOString(),
        profile,
      });
    });
    this.worker.nudge();
    return this.get(id, null, anonymous);
  }

  /**
   * A scan as `account`, `anonymous`, the holder of `readToken` or the wallet `payer` that paid for
   * it (signed in with x402 sign-in-with-x) may see it; 404 when none may.
   */
  async get(
    scanId: string,
    account: AccountPrincipal | null,
    anonymous: AnonymousPrincipal | null = null,
    readToken: string | null = null,
    /** Score as this profile instead of the one the scan was requested with. */
    profile: ProfileId | null = null,
    payer: string | null = null,
  ): Promise<Scan> {
    const row = await findScan(this.deps.db, scanId);
    if (!row) throw notFound(`No scan ${scanId}`);
    return this.view(row, account, anonymous, readToken, profile, payer);
  }

  /**
   * A private scan bought with the `scan` SKU, as x402 sign-in-with-x reads it: its status URL and
   * the wallets whose payment for it was delivered; undefined for any other scan.
   */
  async paidResource(scanId: string): Promise<PaidResource | undefined> {
    const row = await findScan(this.deps.db, scanId);
    if (!row || row.is_public === 1) return undefined;
    const payers = await scanPayers(this.deps.db, scanId);
    if (payers.length === 0) return undefined;
    return { url: this.statusUrl(scanId), description: `the private scan ${scanId}`, payers };
  }

  /** The fix sheet of a done scan (`GET /scans/{id}/fixes.md`), for whoever may read the scan. */
  async fixes(
    scanId: string,
    viewer: {
      account: AccountPrincipal | null;
      anonymous: AnonymousPrincipal | null;
      readToken: string | null;
      payer?: string | null;
    },
    profile: ProfileId | null = null,
  ): Promise<ScanFixes> {
    const scan = await this.get(
      scanId,
      viewer.account,
      viewer.anonymous,
      viewer.readToken,
      profile,
      viewer.payer ?? null,
    );
    return {
      scan_id: scan.scan_id,
      domain: scan.domain,
      score: scan.result?.score ?? null,
      findings: scan.result?.findings.length ?? 0,
      markdown: fixSheet(scan),
    };
  }

  /**
   * Waits until the scan finishes, calling `onProgress` whenever the stored progress moves. Reads
   * the row, so it works whichever process runs the scan.
   */
  async wait(
    scanId: string,
    account: AccountPrincipal | null,
    onProgress: (scan: Scan) => Promise<void> | void,
    signal: AbortSignal,
    anonymous: AnonymousPrincipal | null = null,
  ): Promise<Scan> {
    return this.waitUntil(scanId, { account, anonymous }, Number.POSITIVE_INFINITY, onProgress, signal);
  }

  /**
   * Like `wait`, but gives up at `deadline` (epoch ms) and returns the scan as it stands then
   * (queued or running): callers that promise an answer within a time answer 202 with it.
   */
  async waitUntil(
    scanId: string,
    viewer: {
      account: AccountPrincipal | null;
      anonymous?: AnonymousPrincipal | null;
      readToken?: string | null;
    },
    deadline: number,
    onProgress: (scan: Scan) => Promise<void> | void,
    signal: AbortSignal,
  ): Promise<Scan> {
    let last = '';
    for (;;) {
      const scan = await this.get(scanId, viewer.account, viewer.anonymous ?? null, viewer.readToken ?? null);
      const mark = `${scan.status}:${scan.progress.done}:${scan.progress.total}`;
      if (mark !== last) {
        last = mark;
        await onProgress(scan);
      }
      if (scan.status === 'done' || scan.status === 'failed') return scan;
      if (signal.aborted) throw new ServiceError('service_unavailable', { detail: 'request cancelled' });
      const left = deadline - Date.now();
      if (left <= 0) return scan;
      await new Promise((resolve) => setTimeout(resolve, Math.min(WAIT_POLL_MS, left)));
    }
  }

  /**
   * The latest public score. A domain never scanned gets a quick check now (home page and site-level
   * documents), run inline; the caller has already been rate limited for it.
   */
  async signal(
    rawDomain: string,
    allowQuickCheck: () => Promise<void>,
    signal: AbortSignal,
    profile: ProfileId | null = null,
  ): Promise<Signal> {
    const domain = this.normalize(rawDomain);
    const { db } = this.deps;
    const latest = await findDomainScore(db, domain);
    if (latest) return this.signalOf(domain, latest, profile);
    const scanning = (scanId: string): Signal => ({
      ...this.emptySignal(domain, 'scanning'),
      scan_id: scanId,
      detail: 'A first scan is running; ask again shortly',
    });
    const active = this.quickChecks.get(domain) ?? (await findActiveScan(db, domain, 1, null))?.id;
    if (active) return scanning(active);
    // Looked up again after the await above and claimed before the next one, so of the calls
    // arriving together in this process exactly one runs the check.
    const joined = this.quickChecks.get(domain);
    if (joined) return scanning(joined);
    const id = randomUUID();
    this.quickChecks.set(domain, id);
    try {
      await allowQuickCheck();
      return await this.quickCheck(domain, id, signal, profile);
    } finally {
      this.quickChecks.delete(domain);
    }
  }

  private async quickCheck(
    domain: string,
    id: string,
    signal: AbortSignal,
    profile: ProfileId | null,
  ): Promise<Signal> {
    const { db } = this.deps;
    await this.runQuickScan(domain, id, signal);
    const scored = await findDomainScore(db, domain);
    if (scored) return this.signalOf(domain, scored, profile);
    const failed = await findScan(db, id);
    return {
      ...this.emptySignal(domain, 'unreachable'),
      scan_id: id,
      detail: failed?.error ?? 'The site could not be scanned',
    };
  }

  /** Crawls and scores a public quick scan inline, in this request; returns the stored row. */
  private async runQuickScan(domain: string, id: string, signal: AbortSignal): Promise<ScanRow> {
    const { db, now, config } = this.deps;
    const at = now();
    // Inserted running, under a lease of this request: a queued row would also be claimed by a
    // background worker and crawled twice.
    await insertScan(
      db,
      { id, domain, account_id: null, is_public: 1, depth: 'quick', requested_at: at.toISOString() },
      {
        owner: `quick:${this.worker.owner}`,
        leaseUntil: new Date(at.getTime() + config.scanner.lease_ms).toISOString(),
      },
    );
    await this.execute((await findScan(db, id)) as ScanRow, null, signal);
    return (await findScan(db, id)) as ScanRow;
  }

  /**
   * A fresh quick check of the domain now, whatever score is stored (the x402 `signal` SKU): run in
   * this request, stored as a public scan of depth `quick` (which never replaces a full scan's score).
   * A site that cannot be crawled is a `site_unreachable` error, so nothing is sold for it.
   */
  async freshQuickCheck(rawDomain: string, signal: AbortSignal): Promise<Scan> {
    const domain = this.normalize(rawDomain);
    const row = await this.runQuickScan(domain, randomUUID(), signal);
    if (row.status !== 'done') {
      throw new ServiceError('site_unreachable', { detail: row.error ?? `${domain} could not be scanned` });
    }
    return this.view(row, null);
  }

  async scanScore(rawDomain: string, profile: ProfileId | null = null): Promise<ScanScore> {
    const domain = this.normalize(rawDomain);
    const latest = await findDomainScore(this.deps.db, domain);
    if (!latest) throw notFound(`No public scan of ${domain} yet: request one with POST /scans`);
    const row = await findScan(this.deps.db, latest.scan_id);
    if (!row) throw notFound(`No public scan of ${domain} yet`);
    const breakdown = await this.breakdown(row, profile);
    if (!breakdown) throw notFound(`No public scan of ${domain} yet`);
    return { domain, scan_id: row.id, depth: row.depth, scanned_at: latest.scanned_at, ...breakdown };
  }

  async leaderboard(limit: number, cursor: string | undefined): Promise<Leaderboard> {
    const { db, now } = this.deps;
    const after = cursor ? decodeCursor(cursor) : null;
    const rows = await leaderboardPage(db, after, limit + 1);
    const page = rows.slice(0, limit);
    const period = periodOf(now());
    const snapshot = await latestSnapshotPeriod(db, period);
    const previous = snapshot
      ? new Map(
          (
            await snapshotRanks(
              db,
              snapshot,
              page.map((r) => r.domain),
            )
          ).map((r) => [r.domain, r]),
        )
      : new Map<string, { rank: number; score: number }>();
    const firstRank = (after?.rank ?? 0) + 1;
    const entries = page.map((r, i) => {
      const rank = firstRank + i;
      const before = previous.get(r.domain);
      return {
        rank,
        domain: r.domain,
        score: r.score,
        tier: r.tier as Tier['id'],
        depth: r.depth,
        scanned_at: r.scanned_at,
        scoring_version: r.scoring_version ?? 1,
        movement: {
          previous_rank: before?.rank ?? null,
          rank_change: before ? before.rank - rank : null,
          score_change: before ? r.score - before.score : null,
        },
      };
    });
    const last = page.at(-1);
    return {
      period,
      scoring_version: SCORING_VERSION,
      entries,
      next_cursor:
        rows.length > limit && last
          ? encodeCursor({ score: last.score, domain: last.domain, rank: firstRank + page.length - 1 })
          : null,
    };
  }

  async readinessIndex(): Promise<ReadinessIndex> {
    const { db, now } = this.deps;
    const [current, history] = await Promise.all([aggregateScores(db), readinessHistory(db, 90)]);
    return {
      current: { period: periodOf(now()), ...current },
      history: history.map((h): ReadinessPoint => {
        const { average_score = null, ...adoption } = JSON.parse(h.adoption) as ReadinessPoint['adoption'] & {
          average_score?: number | null;
        };
        return {
          period: h.period,
          domains: h.domains,
          average_score,
          tiers: JSON.parse(h.tiers) as Record<string, number>,
          adoption,
        };
      }),
    };
  }

  /** An account's own scans, newest first (the owner-scoped MCP server reads these). */
  async scansOf(accountId: string, limit = 50): Promise<Scan[]> {
    const rows = await scansOfAccount(this.deps.db, accountId, limit);
    return Promise.all(rows.map((r) => this.view(r, { id: accountId, keyId: null })));
  }

  /** Takes the period's snapshots if no process has yet. */
  snapshotIfDue(): Promise<boolean> {
    const at = this.deps.now();
    return takeSnapshots(this.deps.db, periodOf(at), at.toISOString());
  }

  /** The crawl limits of a scan of this depth (`scanner.*`; a quick check reads less). */
  private limitsFor(depth: 'full' | 'quick'): CrawlLimits {
    const s = this.deps.config.scanner;
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

  /**
   * Crawls a domain as a full scan would (same limits, same SSRF-safe fetch, same robots.txt
   * obedience) and stores nothing: for SKUs that build something from the pages (llms-txt).
   * A site that cannot be crawled is a `site_unreachable` error.
   */
  async crawl(
    rawDomain: string,
    observe: Pick<CrawlRequest, 'onPage' | 'onProgress'>,
    signal: AbortSignal,
    /** Tighter limits than a full scan's (the entity audit reads fewer pages). */
    limits: Partial<Pick<CrawlLimits, 'max_pages' | 'scan_timeout_ms'>> = {},
  ): Promise<SiteFacts> {
    const domain = this.normalize(rawDomain);
    const full = this.limitsFor('full');
    try {
      return await crawlSite({
        domain,
        fetch: this.deps.fetch,
        userAgent: this.deps.config.scanner.user_agent,
        limits: {
          ...full,
          max_pages: Math.min(full.max_pages, limits.max_pages ?? full.max_pages),
          scan_timeout_ms: Math.min(full.scan_timeout_ms, limits.scan_timeout_ms ?? full.scan_timeout_ms),
        },
        signal,
        schemes: isLocalDomain(domain) ? ['http'] : ['https', 'http'],
        ...observe,
      });
    } catch (err) {
      if (err instanceof CrawlError) throw new ServiceError('site_unreachable', { detail: err.message });
      throw err;
    }
  }

  /** Crawls and scores a claimed scan, storing the outcome. `owner` null: run inline, no lease. */
  async execute(scan: ScanRow, owner: string | null, signal?: AbortSignal): Promise<void> {
    const { db, config, log, now, fetch } = this.deps;
    const s = config.scanner;
    const limits = this.limitsFor(scan.depth);
    let lastWrite = 0;
    let writing: Promise<void> = Promise.resolve();
    const leaseUntil = () => new Date(now().getTime() + s.lease_ms).toISOString();
    let facts: SiteFacts;
    try {
      facts = await crawlSite({
        domain: scan.domain,
        fetch,
        userAgent: s.user_agent,
        limits,
        ...(signal ? { signal } : {}),
        schemes: isLocalDomain(scan.domain) ? ['http'] : ['https', 'http'],
        onProgress: (p) => {
          const t = Date.now();
          if (p.phase !== 'done' && t - lastWrite < PROGRESS_WRITE_INTERVAL_MS) return;
          lastWrite = t;
          writing = writing
            .then(() =>
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
                    .then(() => {}),
            )
            .catch((err) => log.warn({ err, scan_id: scan.id }, 'could not record scan progress'));
        },
      });
    } catch (err) {
      await writing;
      // Shutting down: leave the scan leased; after the lease another process runs it again.
      if (signal?.aborted && owner !== null) return;
      const message =
        err instanceof CrawlError ? err.message : 'The scan failed unexpectedly; it can be requested again';
      if (!(err instanceof CrawlError)) log.error({ err, scan_id: scan.id }, 'scan crashed');
      await failScan(db, scan.id, owner, message, now().toISOString());
      return;
    }
    await writing;
    const at = now().toISOString();
    const [traffic, previous] = await Promise.all([
      this.deps.traffic(scan.domain).catch((err) => {
        log.warn({ err, domain: scan.domain }, 'live traffic unavailable; scoring without it');
        return null;
      }),
      scan.depth === 'full' ? previousPublicScore(db, scan.domain, at) : Promise.resolve(undefined),
    ]);
    const inputs: ScoringInputs = {
      traffic,
      previous:
        previous?.score != null && previous.finished_at
          ? { score: previous.score, scanned_at: previous.finished_at }
          : null,
    };
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

  private emptySignal(domain: string, status: Signal['status']): Signal {
    return {
      domain,
      status,
      score: null,
      tier: null,
      depth: null,
      scanned_at: null,
      age_seconds: null,
      scan_id: null,
      breakdown_url: null,
      detail: null,
      scoring_version: null,
      profile: null,
    };
  }

  private async signalOf(domain: string, row: DomainScoreRow, profile: ProfileId | null): Promise<Signal> {
    let score = row.score;
    let tier = tierById(row.tier);
    let version = row.scoring_version ?? 1;
    let used: ProfileId | null = null;
    if (profile !== null || version !== SCORING_VERSION) {
      // Another profile, or a score an older version stored: computed now from the stored facts.
      const scan = await findScan(this.deps.db, row.scan_id);
      if (scan?.facts) {
        const { result } = await this.scoreOf(scan, profile);
        score = result.score;
        tier = result.tier;
        version = result.scoring_version;
        used = result.profile.id;
      }
    } else {
      const inputs = await scoringInputsOf(this.deps.db, row.scan_id);
      used = (JSON.parse(inputs ?? 'null') as Partial<StoredInputs> | null)?.profile?.id ?? null;
    }
    return {
      domain,
      status: 'scored',
      score,
      tier,
      depth: row.depth,
      scanned_at: row.scanned_at,
      age_seconds: Math.max(0, Math.floor((this.deps.now().getTime() - Date.parse(row.scanned_at)) / 1000)),
      scan_id: row.scan_id,
      breakdown_url: `${this.deps.config.public_api_url}/scan-score?domain=${encodeURIComponent(domain)}`,
      detail: null,
      scoring_version: version,
      profile: used,
    };
  }

  /**
   * The score of a stored scan computed now by this scoring version, from its facts and the inputs
   * it was scored with (scans stored before versions were kept have none: their live traffic is
   * read now, their previous score looked up).
   */
  private async scoreOf(
    row: ScanRow,
    profile: ProfileId | null,
  ): Promise<{ result: SignalScore; inputs: ScoringInputs }> {
    const facts = JSON.parse(row.facts as string) as SiteFacts;
    let inputs = row.scoring_inputs ? (JSON.parse(row.scoring_inputs) as ScoringInputs) : null;
    if (!inputs) {
      const [traffic, previous] = await Promise.all([
        this.deps.traffic(row.domain).catch(() => null),
        row.depth === 'full' && row.finished_at
          ? previousPublicScore(this.deps.db, row.domain, row.finished_at)
          : Promise.resolve(undefined),
      ]);
      inputs = {
        traffic,
        previous:
          previous?.score != null && previous.finished_at
            ? { score: previous.score, scanned_at: previous.finished_at }
            : null,
      };
    }
    const result = scoreSite(facts, inputs.traffic, inputs.previous, {
      profile: profile ?? (row.profile as ProfileId | null) ?? null,
    });
    return { result, inputs };
  }

  /**
   * Re-scores up to `limit` stored scans that an older scoring version scored, storing the new
   * score (and the domain's leaderboard row). The scan worker runs it on every tick until none is
   * left, so the leaderboard and readiness index hold one version; returns how many it re-scored.
   */
  async rescoreStale(limit = RESCORE_BATCH): Promise<number> {
    const rows = await scansToRescore(this.deps.db, SCORING_VERSION, limit);
    for (const row of rows) {
      const { result, inputs } = await this.scoreOf(row, null);
      await this.deps.db
        .transaction()
        .execute((trx) => storeRescore(trx, row.id, storedScore(result, inputs)));
    }
    return rows.length;
  }

  private async view(
    row: ScanRow,
    account: AccountPrincipal | null,
    anonymous: AnonymousPrincipal | null = null,
    readToken: string | null = null,
    profile: ProfileId | null = null,
    payer: string | null = null,
  ): Promise<Scan> {
    const ownedByAccount = account !== null && account.id === row.account_id;
    const ownedBySession =
      anonymous !== null && row.account_id === null && row.anonymous_session_id === anonymous.sessionId;
    const tokenHolder = row.is_public === 0 && holdsReadToken(row, readToken);
    const paidBy =
      row.is_public === 0 &&
      !ownedByAccount &&
      !ownedBySession &&
      !tokenHolder &&
      payer !== null &&
      (await scanPayers(this.deps.db, row.id)).includes(payer.toLowerCase());
    if (row.is_public === 0 && !ownedByAccount && !ownedBySession && !tokenHolder && !paidBy) {
      throw notFound(`No scan ${row.id}`);
    }
    return {
      scan_id: row.id,
      domain: row.domain,
      public: row.is_public === 1,
      depth: row.depth,
      status: row.status,
      progress: {
        phase: row.phase,
        done: row.progress_done,
        total: Math.max(row.progress_total, row.progress_done),
        message: row.progress_message,
      },
      requested_at: row.requested_at,
      started_at: row.started_at,
      finished_at: row.finished_at,
      error: row.error,
      // A token holder's link keeps the token, so following it reads the scan again.
      status_url: tokenHolder
        ? `${this.statusUrl(row.id)}?token=${encodeURIComponent(readToken as string)}`
        : this.statusUrl(row.id),
      result: row.status === 'done' ? await this.breakdown(row, profile) : null,
    };
  }

  /**
   * The stored result, or - when an older scoring version stored it, or another profile is asked
   * for - the result this version computes from the stored facts (never stored here: the re-scoring
   * job stores it).
   */
  private async breakdown(row: ScanRow, profile: ProfileId | null = null): Promise<ScoreBreakdown | null> {
    if (row.status !== 'done' || row.score === null || !row.facts) return null;
    const facts = JSON.parse(row.facts) as SiteFacts;
    if (row.scoring_version !== SCORING_VERSION || (profile !== null && profile !== row.profile)) {
      const { result } = await this.scoreOf(row, profile);
      return { ...result, site: summarize(facts) };
    }
    const stored = JSON.parse(row.scoring_inputs ?? '{}') as Partial<StoredInputs>;
    return {
      score: row.score,
      tier: tierById(row.tier ?? 'dark'),
      scoring_version: row.scoring_version,
      profile: stored.profile as SignalScore['profile'],
      next_level: stored.next_level ?? null,
      note: row.note,
      // Stored without their evidence, which the facts hold once (storedScore).
      components: (JSON.parse(row.components ?? '[]') as ScoreBreakdown['components']).map((c) => ({
        ...c,
        checks: c.checks.map((k) => ({ ...k, evidence: evidenceOfCheck(facts, k.id) })),
      })),
      findings: await listFindings(this.deps.db, row.id),
      recommended_next_tools: JSON.parse(row.recommended_next_tools ?? '[]') as string[],
      site: summarize(facts),
    };
  }
}

/** `scans.scoring_inputs` as stored: the inputs, and the parts of the result that have no column. */
interface StoredInputs extends ScoringInputs {
  profile: SignalScore['profile'];
  next_level: SignalScore['next_level'];
}

/** A score as the repository stores it. */
function storedScore(result: SignalScore, inputs: ScoringInputs): Omit<ScanOutcome, 'facts' | 'adoption'> {
  const stored: StoredInputs = { ...inputs, profile: result.profile, next_level: result.next_level };
  return {
    score: result.score,
    tier: result.tier.id,
    note: result.note,
    // A check's evidence is a selection of the facts' requests: stored once, with the facts.
    components: JSON.stringify(
      result.components.map((c) => ({ ...c, checks: c.checks.map((k) => ({ ...k, evidence: [] })) })),
    ),
    recommended_next_tools: JSON.stringify(result.recommended_next_tools),
    scoring_version: result.scoring_version,
    scoring_inputs: JSON.stringify(stored),
    findings: result.findings,
  };
}

export function summarize(facts: SiteFacts): SiteSummary {
  return {
    origin: facts.origin,
    https: facts.https,
    pages_read: facts.pages.length,
    robots_txt: {
      present: facts.robots.present,
      ai_agents: facts.robots.agents.map(({ token, named, allowed_root }) => ({
        token,
        named,
        allowed_root,
      })),
      content_signals: facts.robots.content_signals.map((c) => c.raw),
    },
    llms_txt: {
      present: facts.llms_txt !== null,
      valid: facts.llms_txt?.valid ?? false,
      title: facts.llms_txt?.title ?? null,
      links: facts.llms_txt?.link_count ?? 0,
    },
    llms_full_txt: facts.llms_full_txt !== null,
    ai_txt: facts.ai_txt !== null,
    sitemap_urls: facts.sitemap.urls_found,
    markdown_negotiation: facts.markdown.supported,
    json_ld_types: [...new Set(facts.pages.flatMap((p) => p.json_ld_types))].sort(),
    discovery: {
      api_catalog: facts.discovery.api_catalog.valid,
      oauth_protected_resource: facts.discovery.oauth_protected_resource.valid,
      oauth_authorization_server: facts.discovery.oauth_authorization_server.valid,
      mcp_server_card: facts.discovery.mcp_server_card.valid,
      openapi: facts.discovery.openapi.valid,
      x402: facts.discovery.x402.valid,
    },
  };
}

interface Cursor {
  score: number;
  domain: string;
  rank: number;
}

function encodeCursor(c: Cursor): string {
  return Buffer.from(JSON.stringify([c.score, c.domain, c.rank])).toString('base64url');
}

function decodeCursor(raw: string): Cursor {
  try {
    const [score, domain, rank] = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as unknown[];
    // Decoded from client text: it reaches a query as is, so only what encodeCursor writes passes
    // (PostgreSQL refuses a fractional score for the integer column and NUL in the domain).
    if (
      Number.isSafeInteger(score) &&
      typeof domain === 'string' &&
      domain.length <= 253 &&
      !domain.includes('\u0000') &&
      Number.isSafeInteger(rank) &&
      (rank as number) >= 0
    )
      return { score: score as number, domain, rank: rank as number };
  } catch {
    // reported below
  }
  throw invalid([{ field: 'cursor', message: 'is not a cursor returned by this endpoint' }]);
}

/** Runs queued scans in the background, `scanner.workers` at a time, and takes period snapshots. */
export class ScanWorker extends PollingWorker {
  private readonly inFlight = new Set<Promise<void>>();
  private readonly abort = new AbortController();
  private readonly deps: ScansDeps;
  private readonly service: ScansService;
  private lastSnapshotPeriod = '';
  protected readonly name = 'scan';

  constructor(deps: ScansDeps, service: ScansService) {
    super();
    this.deps = deps;
    this.service = service;
  }

  protected get pollIntervalMs(): number {
    return this.deps.config.scanner.poll_interval_ms;
  }

  protected get log(): Logger {
    return this.deps.log;
  }

  /** Stops claiming, cancels scans in flight (their lease expires and another process retries). */
  override async stop(): Promise<void> {
    this.abort.abort();
    await super.stop();
    await Promise.allSettled(this.inFlight);
  }

  private async snapshot(): Promise<void> {
    const period = periodOf(this.deps.now());
    if (period === this.lastSnapshotPeriod) return;
    await this.service.snapshotIfDue();
    this.lastSnapshotPeriod = period;
  }

  /** Takes the period snapshot when due, then claims as many scans as there are free slots. */
  async tick(): Promise<number> {
    // Stored scans of an older scoring version first, so snapshots never mix versions.
    await this.service.rescoreStale();
    await this.snapshot();
    const { db, dialect, config, now, log } = this.deps;
    const free = config.scanner.workers - this.inFlight.size;
    if (free <= 0) return 0;
    const at = now();
    const claimed = await claimScans(
      db,
      dialect,
      this.owner,
      at.toISOString(),
      new Date(at.getTime() + config.scanner.lease_ms).toISOString(),
      free,
    );
    for (const scan of claimed) {
      const job = (async () => {
        if (scan.attempts > config.scanner.max_attempts) {
          await failScan(
            db,
            scan.id,
            this.owner,
            'The scan was interrupted too many times',
            now().toISOString(),
          );
          return;
        }
        await this.service.execute(scan, this.owner, this.abort.signal);
      })()
        .catch((err) => log.error({ err, scan_id: scan.id }, 'scan failed to run'))
        .finally(() => {
          this.inFlight.delete(job);
          this.nudge();
        });
      this.inFlight.add(job);
    }
    return claimed.length;
  }
}
