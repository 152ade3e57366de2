/**
 * The signal SKU's recommendations: what a fix is worth in overall points follows docs/reference/scoring.md's
 * renormalization (no-data components and checks left out), and the list is the most valuable first.
 */
import { describe, expect, it } from 'vitest';
import {
  pointsAvailable,
  topRecommendations,
} from '../../servers/features/catalog/signal/recommendations.ts';
import type { Finding, ScoreBreakdown } from '../../servers/features/scans/schemas.ts';

type Components = ScoreBreakdown['components'];
const check = (id: string, weight: number, score: number | null) => ({
  id,
  title: id,
  weight,
  score,
  status: score === null ? ('no_data' as const) : score >= 1 ? ('pass' as const) : ('fail' as const),
  seen: '',
  evidence: [],
});
const finding = (id: string, component: Finding['component'], severity: Finding['severity']): Finding => ({
  id,
  component,
  severity,
  title: id,
  goal: `goal of ${id}`,
  seen: `${id} seen`,
  fix: `fix ${id}`,
  spec_url: null,
  agent_prompt: `prompt for ${id}`,
  evidence_url: null,
  evidence: [],
});

const components: Components = [
  {
    id: 'technical_foundation',
    name: 'Technical Foundation',
    weight: 30,
    status: 'scored',
    score: 50,
    checks: [
      check('robots_txt', 10, 0),
      check('https', 5, 1),
      check('x402', 2, 0.5),
      check('openapi', 83, null),
    ],
  },
  { id: 'live_ai_traffic', name: 'Live AI Traffic', weight: 20, status: 'no_data', score: null, checks: [] },
  {
    id: 'citation_signals',
    name: 'Citation Signals',
    weight: 20,
    status: 'scored',
    score: 0,
    checks: [check('llms_txt', 25, 0), check('ai_txt', 10, 0.4)],
  },
  {
    id: 'engagement_velocity',
    name: 'Engagement Velocity',
    weight: 10,
    status: 'no_data',
    score: null,
    checks: [],
  },
];

describe('signal recommendations', () => {
  it("counts a fix's overall points with no-data components and checks left out", () => {
    // Technical Foundation: 30 of the 50 weight with data; robots_txt: 10 of the 17 check weight with data.
    expect(pointsAvailable({ components }, finding('robots_txt', 'technical_foundation', 'warning'))).toBe(
      Math.round((30 / 50) * (10 / 17) * 100 * 10) / 10,
    );
    expect(pointsAvailable({ components }, finding('x402', 'technical_foundation', 'info'))).toBe(
      Math.round((30 / 50) * (2 / 17) * 0.5 * 100 * 10) / 10,
    );
    expect(pointsAvailable({ components }, finding('ai_txt', 'citation_signals', 'info'))).toBe(
      Math.round((20 / 50) * (10 / 35) * 0.6 * 100 * 10) / 10,
    );
    // Findings that are no scored check are worth no known number of points.
    expect(pointsAvailable({ components }, finding('no_pixel', 'live_ai_traffic', 'info'))).toBeNull();
    expect(
      pointsAvailable({ components }, finding('soft_404', 'technical_foundation', 'warning')),
    ).toBeNull();
  });

  it('puts the fixes worth the most points first, severity breaking ties, non-checks last', () => {
    const findings = [
      finding('no_pixel', 'live_ai_traffic', 'info'),
      finding('x402', 'technical_foundation', 'info'),
      finding('soft_404', 'technical_foundation', 'warning'),
      finding('ai_txt', 'citation_signals', 'info'),
      finding('robots_txt', 'technical_foundation', 'warning'),
      finding('llms_txt', 'citation_signals', 'warning'),
    ];
    const top = topRecommendations({ components, findings }, 10);
    expect(top.map((r) => r.id)).toEqual([
      'robots_txt',
      'llms_txt',
      'ai_txt',
      'x402',
      'soft_404',
      'no_pixel',
    ]);
    expect(top[0]).toMatchObject({ fix: 'fix robots_txt', seen: 'robots_txt seen', severity: 'warning' });
    expect(topRecommendations({ components, findings }, 2).map((r) => r.id)).toEqual([
      'robots_txt',
      'llms_txt',
    ]);
    expect(top.every((r) => !('order' in r))).toBe(true);
  });
});
