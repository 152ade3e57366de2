/**
 * Live AI Traffic (docs/reference/scoring.md): measured by the pixel; no pixel, no data.
 * Its checks in docs/reference/scoring.md order; their weights sum to 100.
 */
import { clamp01, pct } from './judging.ts';
import { type CheckDef, NO_PIXEL_DATA, nextTools } from './model.ts';

export const liveAiTrafficChecks: readonly CheckDef[] = [
  {
    id: 'ai_traffic_share',
    component: 'live_ai_traffic',
    title: 'Share of traffic from AI agents',
    weight: 35,
    severity: 'info',
    rule: 'AI agent events / all events, 10% or more scores 1 (linear below)',
    goal: 'Have AI agents actually visit: a real share of the traffic.',
    fix: 'Make pages easy for AI agents to fetch (markdown, llms.txt, no blocks on AI search agents).',
    spec: null,
    evidence: [],
    tools: [nextTools.installPixel],
    evaluate: ({ traffic }) =>
      traffic
        ? {
            score: clamp01(traffic.ai_share / 0.1),
            seen: `${pct(traffic.ai_share)} of ${traffic.events} event(s) in ${traffic.window_days} days`,
          }
        : { score: null, seen: NO_PIXEL_DATA },
  },
  {
    id: 'ai_agents_seen',
    component: 'live_ai_traffic',
    title: 'Distinct AI agents visiting',
    weight: 30,
    severity: 'info',
    rule: 'distinct AI agents seen / 6, at most 1',
    goal: 'Be visited by many different AI agents, not one.',
    fix: 'Allow more AI search and user-triggered agents in robots.txt.',
    spec: null,
    evidence: [],
    evaluate: ({ traffic }) =>
      traffic
        ? {
            score: clamp01(traffic.agents_seen.length / 6),
            seen: traffic.agents_seen.length ? `seen: ${traffic.agents_seen.join(', ')}` : 'no AI agent seen',
          }
        : { score: null, seen: NO_PIXEL_DATA },
  },
  {
    id: 'ai_referrals',
    component: 'live_ai_traffic',
    title: 'Visits referred by AI assistants',
    weight: 35,
    severity: 'info',
    rule: 'human visits referred by AI assistants: log10(1 + n) / 3, so 999 or more scores 1',
    goal: 'Receive people sent by AI answers that cite the site.',
    fix: 'Earn citations in AI answers: clear facts, structured data and an llms.txt summary.',
    spec: null,
    evidence: [],
    evaluate: ({ traffic }) =>
      traffic
        ? {
            score: clamp01(Math.log10(1 + traffic.ai_referrals) / 3),
            seen: `${traffic.ai_referrals} referral(s) from AI assistants in ${traffic.window_days} days`,
          }
        : { score: null, seen: NO_PIXEL_DATA },
  },
];
