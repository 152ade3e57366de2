/**
 * A domain's scan history and what changed between two of its scans (issue 35 item 2). Every scan
 * is kept, up to `scanner.history_per_domain` finished ones per domain (the worker prunes older
 * ones, `pruneHistory`). Scores are read as the current scoring version computes them: a scan an
 * older version stored is re-scored from its facts on read, as the other reads do (`scores.ts`).
 */
import { z } from 'zod';
import type { AnonymousPrincipal } from '../../../auth/anonymous/sessions.ts';
import type { ScanRow } from '../../../db/schema.ts';
import { invalid, notFound, ServiceError } from '../../errors.ts';
import { dateTime } from '../../input.ts';
import { cursorCodec } from '../../pagination.ts';
import type { AccountPrincipal } from '../accounts/service.ts';
import type { ScansDeps } from './deps.ts';
import { diffScans, type ScoredScan } from './diff.ts';
import { domainScansPage, previousCompleteScan, type ScanHead } from './history-repository.ts';
import type { HistoryEntry, ScanDiff, ScanDiffInput, ScanHistory } from './history-schemas.ts';
import type { ScanReads } from './reads.ts';
import { findScan } from './repository.ts';
import { rescore } from './scores.ts';
import { type ProfileId, SCORING_VERSION, type Tier } from './scoring.ts';

const DEFAULT_PAGE = 20;

/** A history page's position: the last entry's request time and id. */
const historyCursor = cursorCodec(z.tuple([dateTime(), z.uuid()]));

/** Who reads: the same principals `ScanReads.view` accepts. */
export interface ScanViewer {
  account: AccountPrincipal | null;
  anonymous: AnonymousPrincipal | null;
  readToken: string | null;
  payer: string | null;
}

export class ScanHistoryReads {
  private readonly deps: ScansDeps;
  private readonly reads: ScanReads;

  constructor(deps: ScansDeps, reads: ScanReads) {
    this.deps = deps;
    this.reads = reads;
  }

  /**
   * The public scans of a domain, and the private ones of `account` when given, newest request
   * first, a page at a time.
   */
  async list(
    rawDomain: string,
    account: AccountPrincipal | null,
    limit: number | undefined,
    cursor: string | undefined,
  ): Promise<ScanHistory> {
    const domain = this.reads.normalize(rawDomain);
    const decoded = historyCursor.decode(cursor);
    const size = limit ?? DEFAULT_PAGE;
    const rows = await domainScansPage(
      this.deps.db,
      domain,
      account?.id ?? null,
      decoded && { at: decoded[0], id: decoded[1] },
      size + 1,
    );
    const page = rows.slice(0, size);
    const last = page.at(-1);
    return {
      domain,
      scans: await Promise.all(page.map((row) => this.entryOf(row))),
      kept_per_domain: this.deps.config.scanner.history_per_domain,
      next_cursor: rows.length > size && last ? historyCursor.encode([last.requested_at, last.id]) : null,
    };
  }

  private async entryOf(row: ScanHead): Promise<HistoryEntry> {
    const current = await this.currentScore(row);
    const done = row.status === 'done';
    return {
      scan_id: row.id,
      public: row.is_public === 1,
      status: row.status,
      depth: row.depth,
      requested_at: row.requested_at,
      finished_at: row.finished_at,
      score: current?.score ?? null,
      tier: current?.tier ?? null,
      error: row.error,
      status_url: this.reads.statusUrl(row.id),
      diff_url: done ? `${this.reads.statusUrl(row.id)}/diff` : null,
    };
  }

  /**
   * A done scan's score and tier by the current scoring version: as stored when that version stored
   * it, computed from its facts otherwise; null for a scan that is not done.
   */
  async currentScore(
    row: Pick<ScanRow, 'id' | 'status' | 'score' | 'tier' | 'scoring_version'>,
  ): Promise<{ score: number; tier: Tier['id'] } | null> {
    if (row.status !== 'done' || row.score === null) return null;
    if (row.scoring_version === SCORING_VERSION) return { score: row.score, tier: row.tier as Tier['id'] };
    const full = await findScan(this.deps.db, row.id);
    if (!full?.facts) return { score: row.score, tier: row.tier as Tier['id'] };
    const { result } = await rescore(this.deps, full, null);
    return { score: result.score, tier: result.tier.id };
  }

  /**
   * What changed between `scan_id` and `against` (default: the previous complete scan of the same
   * domain and depth the viewer may see), both scored now by the current version as one profile.
   */
  async diff(input: ScanDiffInput, viewer: ScanViewer): Promise<ScanDiff> {
    const { db } = this.deps;
    const after = await findScan(db, input.scan_id);
    if (!after) throw notFound(`No scan ${input.scan_id}`);
    await this.reads.assertVisible(after, viewer.account, viewer.anonymous, viewer.readToken, viewer.payer);
    requireComplete(after, 'scan_id');
    const before = await this.againstOf(after, input.against, viewer);
    const scoredAfter = await this.scored(after, input.profile ?? (after.profile as ProfileId | null));
    const scoredBefore = await this.scored(before, scoredAfter.result.profile.id);
    return diffScans(after.domain, scoredBefore, scoredAfter);
  }

  private async againstOf(after: ScanRow, against: string | undefined, viewer: ScanViewer): Promise<ScanRow> {
    const { db } = this.deps;
    if (against === undefined) {
      const previous = await previousCompleteScan(db, after, {
        accountId: viewer.account?.id ?? null,
        sessionId: viewer.anonymous?.sessionId ?? null,
      });
      if (!previous) {
        throw new ServiceError('no_earlier_scan', {
          detail: `No complete ${after.depth} scan of ${after.domain} before ${after.id} to compare with`,
        });
      }
      return previous;
    }
    if (against === after.id)
      throw invalid([{ field: 'against', message: 'must be another scan than scan_id' }]);
    const row = await findScan(db, against);
    if (!row) throw notFound(`No scan ${against}`);
    // The read token stands for scan_id alone; the scan compared with is read as the caller is.
    await this.reads.assertVisible(row, viewer.account, viewer.anonymous, null, viewer.payer);
    if (row.domain !== after.domain) {
      throw invalid([{ field: 'against', message: `is a scan of ${row.domain}, not of ${after.domain}` }]);
    }
    requireComplete(row, 'against');
    return row;
  }

  private async scored(row: ScanRow, profile: ProfileId | null): Promise<ScoredScan> {
    const { result } = await rescore(this.deps, row, profile);
    return { scan_id: row.id, finished_at: row.finished_at as string, result };
  }
}

function requireComplete(row: ScanRow, field: 'scan_id' | 'against'): void {
  if (row.status === 'done' && row.facts) return;
  throw new ServiceError('scan_not_complete', {
    detail:
      row.status === 'failed'
        ? `${field}: the scan ${row.id} failed; only complete scans are compared`
        : `${field}: the scan ${row.id} is still ${row.status}; ask again once it is done`,
  });
}
