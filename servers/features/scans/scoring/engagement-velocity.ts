/**
 * Engagement Velocity (SCORING.md): is AI attention growing (traffic trend, score trend).
 * Its checks in SCORING.md order; their weights sum to 100.
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
    goal: 'Improve the score scan over scan.',
    fix: 'Work through the findings and scan again.',
    spec: null,
    evidence: [],
    tools: [nextTools.requestScan],
    evaluate: () => ({ score: null, seen: 'no previous scan' }),
  },
];
