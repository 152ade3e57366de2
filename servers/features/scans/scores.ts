/**
 * Scores as scans store them and read them back: the inputs a score was computed from besides the
 * facts, the stored form of a result, and the re-scoring of scans an older scoring version stored
 * (on read, and by the scan worker until none is left).
 */
import type { ScanRow } from '../../../db/schema.ts';
import type { ScansDeps } from './deps.ts';
import { previousPublicScore, type ScanOutcome, scansToRescore, storeRescore } from './repository.ts';
import {
  type LiveTraffic,
  type ProfileId,
  SCORING_VERSION,
  type ScoreHistory,
  type SignalScore,
  scoreSite,
  type Tier,
  tierOf,
  tiers,
} from './scoring.ts';
import type { SiteFacts } from './site-facts.ts';

/** What a score is computed from besides the facts (`scans.scoring_inputs`). */
export interface ScoringInputs {
  traffic: LiveTraffic | null;
  previous: ScoreHistory | null;
}

/** `scans.scoring_inputs` as stored: the inputs, and the parts of the result that have no column. */
export interface StoredInputs extends ScoringInputs {
  profile: SignalScore['profile'];
  next_level: SignalScore['next_level'];
}

const RESCORE_BATCH = 20;

/** The period snapshots are taken for: the UTC day. */
export const periodOf = (date: Date): string => date.toISOString().slice(0, 10);

export function tierById(id: string): Tier {
  return tiers.find((t) => t.id === id) ?? tierOf(0);
}

/** The previous full scan's score as Engagement Velocity reads it. */
export function historyOf(
  previous: { score: number | null; finished_at: string | null } | undefined,
): ScoreHistory | null {
  return previous?.score != null && previous.finished_at
    ? { score: previous.score, scanned_at: previous.finished_at }
    : null;
}

/** A score as the repository stores it. */
export function storedScore(
  result: SignalScore,
  inputs: ScoringInputs,
): Omit<ScanOutcome, 'facts' | 'adoption'> {
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

/**
 * The score of a stored scan computed now by this scoring version, from its facts and the inputs
 * it was scored with (scans stored before versions were kept have none: their live traffic is
 * read now, their previous score looked up).
 */
export async function rescore(
  deps: ScansDeps,
  row: ScanRow,
  profile: ProfileId | null,
): Promise<{ result: SignalScore; inputs: ScoringInputs }> {
  const facts = JSON.parse(row.facts as string) as SiteFacts;
  let inputs = row.scoring_inputs ? (JSON.parse(row.scoring_inputs) as ScoringInputs) : null;
  if (!inputs) {
    const [traffic, previous] = await Promise.all([
      deps.traffic(row.domain).catch(() => null),
      row.depth === 'full' && row.finished_at
        ? previousPublicScore(deps.db, row.domain, row.finished_at)
        : Promise.resolve(undefined),
    ]);
    inputs = { traffic, previous: historyOf(previous) };
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
export async function rescoreStale(deps: ScansDeps, limit = RESCORE_BATCH): Promise<number> {
  const rows = await scansToRescore(deps.db, SCORING_VERSION, limit);
  for (const row of rows) {
    const { result, inputs } = await rescore(deps, row, null);
    await deps.db.transaction().execute((trx) => storeRescore(trx, row.id, storedScore(result, inputs)));
  }
  return rows.length;
}
