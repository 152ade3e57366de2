/** Shared pieces of the checks' judgements, used by more than one component. */
import type { SiteFacts } from '../site-facts.ts';
import type { Evaluation, ProfileId } from './model.ts';

export const clamp01 = (n: number) => Math.max(0, Math.min(1, n));
export const pct = (n: number) => `${Math.round(n * 100)}%`;

export function pageShare(
  facts: SiteFacts,
  predicate: (p: SiteFacts['pages'][number]) => boolean,
): Evaluation | null {
  if (facts.pages.length === 0) return null;
  const n = facts.pages.filter(predicate).length;
  return { score: n / facts.pages.length, seen: `${n} of ${facts.pages.length} page(s)` };
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

export const noPages: Evaluation = { score: 0, seen: 'no HTML page could be read' };
/** A check added with scoring version 2 judging facts an older scan did not collect. */
export const notCollected: Evaluation = {
  score: null,
  status: 'unable_to_check',
  seen: 'not collected by the scan that stored these facts (an older scoring version); scan again',
};

export const apiOnly: readonly ProfileId[] = ['api'];
