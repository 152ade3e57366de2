/**
 * The scan service's reads: a scan as its viewer may see it (owner, anonymous session, read token
 * or paying wallet; 404 for anyone else), its fix sheet, a domain's latest public score, the
 * leaderboard with its movement since the period's snapshot, and the readiness index. A result an
 * older scoring version stored, or one asked for as another profile, is computed now from the
 * stored facts (`scores.ts`); reads never store it.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import type { AnonymousPrincipal } from '../../../auth/anonymous/sessions.ts';
import type { DomainScoreRow, ScanRow } from '../../../db/schema.ts';
import { invalid, notFound } from '../../errors.ts';
import { cursorCodec } from '../../pagination.ts';
import type { PaidResource } from '../../payments/sign-in.ts';
import { domainPolicyOf, normalizeDomain } from '../../public-address.ts';
import type { AccountPrincipal } from '../accounts/service.ts';
import type { ScansDeps } from './deps.ts';
import { fixSheet } from './fix-sheet.ts';
import {
  aggregateScores,
  findDomainScore,
  findScan,
  latestSnapshotPeriod,
  leaderboardPage,
  listFindings,
  readinessHistory,
  scanPayers,
  scansOfAccount,
  scoringInputsOf,
  snapshotRanks,
} from './repository.ts';
import type {
  Leaderboard,
  LeaderboardEntry,
  ReadinessIndex,
  ReadinessPoint,
  Scan,
  ScanFixes,
  ScanScore,
  ScoreBreakdown,
  Signal,
  SiteSummary,
} from './schemas.ts';
import { periodOf, rescore, type StoredInputs, tierById } from './scores.ts';
import { evidenceOfCheck, type ProfileId, SCORING_VERSION, type SignalScore, type Tier } from './scoring.ts';
import type { SiteFacts } from './site-facts.ts';

/** Recognisable by secret scanners and people, like the service's other secrets. */
export const READ_TOKEN_PREFIX = 'agsvc_scan_';
const READ_TOKEN_PATTERN = /^agsvc_scan_[A-Za-z0-9_-]{43}$/;
export const digestOf = (secret: string): string => createHash('sha256').update(secret).digest('hex');

/** Whether `token` is the read token whose digest the scan row keeps (constant time over the digests). */
function holdsReadToken(row: ScanRow, token: string | null): boolean {
  if (token === null || row.read_token_hash === null || !READ_TOKEN_PATTERN.test(token)) return false;
  return timingSafeEqual(Buffer.from(digestOf(token)), Buffer.from(row.read_token_hash));
}

/**
 * The leaderboard's position: score, domain and the rank of the last entry shown (`[score, domain,
 * rank]`, as before the codec was shared). PostgreSQL refuses a fractional score for the integer
 * column and NUL in the domain, so neither passes.
 */
const leaderboardCursor = cursorCodec(
  z.tuple([
    z.int(),
    z
      .string()
      .max(253)
      .refine((d) => !d.includes('\u0000')),
    z.int().min(0),
  ]),
);

export class ScanReads {
  private readonly deps: ScansDeps;

  constructor(deps: ScansDeps) {
    this.deps = deps;
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
   * Throws 404 unless `account`, `anonymous`, the holder of `readToken` or the wallet `payer` that
   * paid for it may see the scan; returns whether the read token is what lets the caller see it.
   */
  async assertVisible(
    row: ScanRow,
    account: AccountPrincipal | null,
    anonymous: AnonymousPrincipal | null = null,
    readToken: string | null = null,
    payer: string | null = null,
  ): Promise<boolean> {
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
    return tokenHolder;
  }
  async view(
    row: ScanRow,
    account: AccountPrincipal | null,
    anonymous: AnonymousPrincipal | null = null,
    readToken: string | null = null,
    profile: ProfileId | null = null,
    payer: string | null = null,
  ): Promise<Scan> {
    const tokenHolder = await this.assertVisible(row, account, anonymous, readToken, payer);
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
      const { result } = await rescore(this.deps, row, profile);
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
  async signalOf(domain: string, row: DomainScoreRow, profile: ProfileId | null): Promise<Signal> {
    let score = row.score;
    let tier = tierById(row.tier);
    let version = row.scoring_version ?? 1;
    let used: ProfileId | null = null;
    if (profile !== null || version !== SCORING_VERSION) {
      // Another profile, or a score an older version stored: computed now from the stored facts.
      const scan = await findScan(this.deps.db, row.scan_id);
      if (scan?.facts) {
        const { result } = await rescore(this.deps, scan, profile);
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
  emptySignal(domain: string, status: Signal['status']): Signal {
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
  async leaderboard(limit: number, cursor: string | undefined): Promise<Leaderboard> {
    const { db, now } = this.deps;
    const decoded = leaderboardCursor.decode(cursor);
    const after = decoded && { score: decoded[0], domain: decoded[1], rank: decoded[2] };
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
          since_last_scan: this.sinceLastScan(r),
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
          ? leaderboardCursor.encode([last.score, last.domain, firstRank + page.length - 1])
          : null,
    };
  }
  /** An entry's movement against the full scan it showed before (`domain_scores.previous_scan_id`). */
  private sinceLastScan(entry: {
    scan_id: string;
    score: number;
    previous_scan_id: string | null;
    previous_score: number | null;
  }): LeaderboardEntry['movement']['since_last_scan'] {
    if (entry.previous_scan_id === null || entry.previous_score === null) return null;
    return {
      previous_scan_id: entry.previous_scan_id,
      previous_score: entry.previous_score,
      score_change: entry.score - entry.previous_score,
      diff_url: `${this.statusUrl(entry.scan_id)}/diff`,
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
