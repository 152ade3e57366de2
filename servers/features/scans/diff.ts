/**
 * What changed between two scores of a domain (`GET /scans/{id}/diff`): both computed by the current
 * scoring version as one profile, so a change is a change of the site, not of the rules. A check
 * changed when its status, score or what was seen did; its evidence (the requests behind it) is
 * shown before and after but does not count, since timings differ on every scan.
 */
import type { CheckChange, ScanDiff } from './history-schemas.ts';
import type { CheckResult, ComponentResult, SignalScore } from './scoring.ts';

export interface ScoredScan {
  scan_id: string;
  finished_at: string;
  result: SignalScore;
}

type CheckState = NonNullable<CheckChange['before']>;

const stateOf = (check: CheckResult | undefined): CheckState | null =>
  check ? { status: check.status, score: check.score, seen: check.seen, evidence: check.evidence } : null;

function checksById(result: SignalScore): Map<string, { check: CheckResult; component: ComponentResult }> {
  const map = new Map<string, { check: CheckResult; component: ComponentResult }>();
  for (const component of result.components) {
    for (const check of component.checks) map.set(check.id, { check, component });
  }
  return map;
}

function changeOf(
  before: CheckResult | undefined,
  after: CheckResult | undefined,
): CheckChange['change'] | null {
  if (
    before &&
    after &&
    before.status === after.status &&
    before.score === after.score &&
    before.seen === after.seen
  )
    return null;
  const delta = (after?.score ?? 0) - (before?.score ?? 0);
  if (delta > 0) return 'improved';
  if (delta < 0) return 'regressed';
  return 'changed';
}

/** The checks that changed, the largest move of the overall score first (weight times score change). */
function changedChecks(
  before: SignalScore,
  after: SignalScore,
): { changes: CheckChange[]; unchanged: number } {
  const was = checksById(before);
  const now = checksById(after);
  const changes: (CheckChange & { move: number })[] = [];
  let unchanged = 0;
  for (const id of new Set([...now.keys(), ...was.keys()])) {
    const b = was.get(id);
    const a = now.get(id);
    const change = changeOf(b?.check, a?.check);
    if (change === null) {
      unchanged += 1;
      continue;
    }
    const side = (a ?? b) as { check: CheckResult; component: ComponentResult };
    const move = Math.abs(
      ((a?.check.score ?? 0) - (b?.check.score ?? 0)) * side.check.weight * side.component.weight,
    );
    changes.push({
      id,
      title: side.check.title,
      component: side.component.id,
      change,
      before: stateOf(b?.check),
      after: stateOf(a?.check),
      move,
    });
  }
  changes.sort((x, y) => y.move - x.move || x.id.localeCompare(y.id));
  return { changes: changes.map(({ move: _move, ...c }) => c), unchanged };
}

function componentChanges(before: SignalScore, after: SignalScore): ScanDiff['components'] {
  return after.components.map((a) => {
    const b = before.components.find((c) => c.id === a.id);
    const was = { status: b?.status ?? 'no_data', score: b?.score ?? null } as const;
    return {
      id: a.id,
      name: a.name,
      before: was,
      after: { status: a.status, score: a.score },
      score_change: was.score === null || a.score === null ? null : a.score - was.score,
    };
  });
}

function summaryOf(diff: Omit<ScanDiff, 'summary'>): string {
  const sign = diff.score_change > 0 ? '+' : '';
  const points = `${sign}${diff.score_change} point${Math.abs(diff.score_change) === 1 ? '' : 's'}`;
  const tier = diff.tier_changed ? ` (${diff.before.tier.name} -> ${diff.after.tier.name})` : '';
  const count = (kind: CheckChange['change']) => diff.checks.filter((c) => c.change === kind).length;
  const parts = [
    [count('improved'), 'improved'],
    [count('regressed'), 'regressed'],
    [count('changed'), 'changed without a score change'],
  ]
    .filter(([n]) => (n as number) > 0)
    .map(([n, what]) => `${n} check${n === 1 ? '' : 's'} ${what}`);
  return `${points}${tier}; ${parts.length > 0 ? parts.join(', ') : 'no check changed'}`;
}

export function diffScans(domain: string, before: ScoredScan, after: ScoredScan): ScanDiff {
  const { changes, unchanged } = changedChecks(before.result, after.result);
  const point = (s: ScoredScan) => ({
    scan_id: s.scan_id,
    finished_at: s.finished_at,
    score: s.result.score,
    tier: s.result.tier,
  });
  const diff = {
    domain,
    scoring_version: after.result.scoring_version,
    profile: after.result.profile.id,
    before: point(before),
    after: point(after),
    score_change: after.result.score - before.result.score,
    tier_changed: after.result.tier.id !== before.result.tier.id,
    components: componentChanges(before.result, after.result),
    checks: changes,
    unchanged_checks: unchanged,
  };
  return { ...diff, summary: summaryOf(diff) };
}
