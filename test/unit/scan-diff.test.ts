/**
 * The diff of two scores (`diffScans`), on the facts the golden fixtures recorded: a bare site
 * against a well-prepared one, a score against itself, and a check whose finding changed while
 * its score did not.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../servers/config.ts';
import { diffScans, type ScoredScan } from '../../servers/features/scans/diff.ts';
import { type SignalScore, scoreSite } from '../../servers/features/scans/scoring.ts';
import type { SiteFacts } from '../../servers/features/scans/site-facts.ts';

const factsOf = (kind: string): SiteFacts =>
  JSON.parse(readFileSync(path.join(projectRoot, 'test/fixtures/scan-golden', `${kind}.json`), 'utf8')).facts;

const scored = (id: string, result: SignalScore): ScoredScan => ({
  scan_id: id,
  finished_at: '2026-11-30T04:00:00.000Z',
  result,
});

const ids = ['00000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-000000000002'] as const;

describe('diffScans', () => {
  it('lists every check that moved between a bare site and a well-prepared one, largest move first', () => {
    const before = scoreSite(factsOf('bare'), null, null, { profile: 'content' });
    const after = scoreSite(factsOf('wellPrepared'), null, null, { profile: 'content' });
    const diff = diffScans('example.com', scored(ids[0], before), scored(ids[1], after));
    expect(diff.score_change).toBe(after.score - before.score);
    expect(diff.tier_changed).toBe(before.tier.id !== after.tier.id);
    expect(diff.profile).toBe('content');
    const total = after.components.reduce((n, c) => n + c.checks.length, 0);
    expect(diff.checks.length + diff.unchanged_checks).toBe(total);
    expect(diff.checks.length).toBeGreaterThan(0);
    for (const change of diff.checks) {
      const { before: b, after: a } = change;
      expect(
        b === null || a === null || b.status !== a.status || b.score !== a.score || b.seen !== a.seen,
      ).toBe(true);
      const delta = (a?.score ?? 0) - (b?.score ?? 0);
      expect(change.change).toBe(delta > 0 ? 'improved' : delta < 0 ? 'regressed' : 'changed');
    }
    expect(diff.checks.find((c) => c.id === 'llms_txt')).toMatchObject({ change: 'improved' });
    expect(diff.summary).toMatch(/^\+\d+ points/);
  });

  it('finds nothing changed between a score and itself', () => {
    const result = scoreSite(factsOf('blog'), null, null);
    const diff = diffScans('example.com', scored(ids[0], result), scored(ids[1], result));
    expect(diff.checks).toEqual([]);
    expect(diff.score_change).toBe(0);
    expect(diff.components.every((c) => c.score_change === 0 || c.score_change === null)).toBe(true);
    expect(diff.summary).toBe('0 points; no check changed');
  });

  it('reports a check whose finding changed at the same score as changed, not improved', () => {
    const before = scoreSite(factsOf('bare'), null, null);
    const after: SignalScore = structuredClone(before);
    const check = after.components[0]?.checks[0];
    if (!check) throw new Error('no check to change');
    check.seen = `${check.seen} (seen again)`;
    const diff = diffScans('example.com', scored(ids[0], before), scored(ids[1], after));
    expect(diff.checks).toEqual([
      expect.objectContaining({
        id: check.id,
        change: 'changed',
        after: expect.objectContaining({ seen: check.seen }),
      }),
    ]);
    expect(diff.summary).toBe('0 points; 1 check changed without a score change');
  });
});
