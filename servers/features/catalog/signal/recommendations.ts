/**
 * The signal SKU's recommendations: the findings whose fix can add the most to the overall score.
 *
 * A check's share of the overall score is its component's weight among the components that have
 * data, times its own weight among its component's checks that have data (docs/reference/scoring.md "How a score
 * is made": no-data components and checks are left out and the rest renormalized). What a fix can
 * add is that share times what the check fell short of 1.
 */
import type { Finding, ScoreBreakdown } from '../../scans/schemas.ts';

export interface Recommendation extends Finding {
  /** Overall points the fix can add at most (before rounding); null for findings that are no check. */
  points: number | null;
}

const severityRank = { critical: 0, warning: 1, info: 2 } as const;

export function pointsAvailable(
  breakdown: Pick<ScoreBreakdown, 'components'>,
  finding: Finding,
): number | null {
  const scored = breakdown.components.filter((c) => c.status === 'scored');
  const component = scored.find((c) => c.id === finding.component);
  const check = component?.checks.find((c) => c.id === finding.id);
  if (!component || !check || check.score === null) return null;
  const componentWeights = scored.reduce((sum, c) => sum + c.weight, 0);
  const checkWeights = component.checks.reduce((sum, c) => sum + (c.score === null ? 0 : c.weight), 0);
  if (componentWeights === 0 || checkWeights === 0) return null;
  const points =
    (component.weight / componentWeights) * (check.weight / checkWeights) * (1 - check.score) * 100;
  return Math.round(points * 10) / 10;
}

/**
 * The `limit` findings worth fixing first: most points first, then by severity; findings that are
 * no check (no_pixel, soft_404) after those that are, in the scan's order.
 */
export function topRecommendations(
  breakdown: Pick<ScoreBreakdown, 'components' | 'findings'>,
  limit: number,
): Recommendation[] {
  return breakdown.findings
    .map((finding, order) => ({ ...finding, points: pointsAvailable(breakdown, finding), order }))
    .sort(
      (a, b) =>
        (b.points ?? -1) - (a.points ?? -1) ||
        severityRank[a.severity] - severityRank[b.severity] ||
        a.order - b.order,
    )
    .slice(0, limit)
    .map(({ order: _order, ...recommendation }) => recommendation);
}
