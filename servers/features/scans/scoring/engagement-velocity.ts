/**
 * Engagement Velocity (docs/reference/scoring.md): is AI attention growing (traffic trend, score trend).
 * Its checks in docs/reference/scoring.md order; their weights sum to 100.
 */
import { clamp01 } from './judging.ts';
import { type CheckDef, nextTools } from './model.ts';

export const engagementVelocityChecks: readonly CheckDef[] = [
  {
    id: 'ai_traffic_trend',
    component: 'engagement_velocity',
    title: 'AI traffic is growing',
    weight: 60,
    severity: 'info',
    rule: 'AI events this window against the window before: 0.5 + growth, clamped to 0..1 (flat 0.5, +50% or more 1, -50% or less 0); no data without a pixel or without the previous window',
    goal: 'Grow AI attention window over window.',
    fix: 'Keep content fresh and reachable; growth is measured window over window by the pixel.',
    spec: null,
    evidence: [],
    evaluate: ({ traffic }) => {
      if (!traffic || traffic.previous_ai_events === null) return { score: null, seen: 'no traffic history' };
      const before = traffic.previous_ai_events;
      const growth = before === 0 ? (traffic.ai_events > 0 ? 1 : 0) : (traffic.ai_events - before) / before;
      return {
        score: clamp01(0.5 + growth),
        seen: `${traffic.ai_events} AI event(s), ${before} in the window before`,
      };
    },
  },
  {
    id: 'score_trend',
    component: 'engagement_velocity',
    title: 'Signal Strength is improving',
    weight: 40,
    severity: 'info',
    rule: "this overall score (computed without this check) against the domain's previous full public scan: 0.5 + delta / 20, clamped (10 points better scores 1); no data on a first scan",
    goal: 'Improve the score scan over scan.',
    fix: 'Work through the findings and scan again.',
    spec: null,
    evidence: [],
    tools: [nextTools.requestScan],
    evaluate: () => ({ score: null, seen: 'no previous scan' }),
  },
];
