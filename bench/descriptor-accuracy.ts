/**
 * How well the matcher reads the two statement-line corpora: per kind of line and overall, the share whose
 * right brand comes first (or, for a line naming no brand the registry should answer, nothing at medium or
 * above), the share answered with no match at all (`[]`), and the confident false matches (`high` or
 * `very_high` on a line whose brand is another one, or on a line that names no brand). Shared by
 * bench/matching.ts (printed) and test/unit/charges-coverage.test.ts (asserted).
 */
import { readFileSync } from 'node:fs';
import type { BrandMatcher } from '../servers/features/charges/matcher.ts';

export interface DescriptorCase {
  line: string;
  /** The brand's registrable domain; null when the line names no brand the answer could be. */
  domain: string | null;
  source?: string;
  /** Which kind of long-tail line it is (see the fixture's `kinds`); absent in the famous-brand corpus. */
  kind?: string;
}

export interface AccuracyRow {
  kind: string;
  lines: number;
  /** Right brand first at medium (0.7) or above, or nothing at medium for a line with domain null. */
  top1: number;
  /** Answered with no match at all. */
  empty: number;
  /** `high` / `very_high` best match that is not the line's domain (every line with domain null included). */
  confidentFalse: number;
}

export interface LineVerdict {
  kase: DescriptorCase;
  right: boolean;
  empty: boolean;
  confidentFalse: boolean;
  best: { domain: string; confidence: number; level: string } | null;
}

function readCorpus(name: CorpusName): { cases: DescriptorCase[]; kinds?: Record<string, string> } {
  return JSON.parse(readFileSync(new URL(`../test/fixtures/${name}`, import.meta.url), 'utf8'));
}

export type CorpusName = 'descriptors.json' | 'descriptors-longtail.json';

export function loadCorpus(name: CorpusName): DescriptorCase[] {
  return readCorpus(name).cases;
}

/** The kinds a corpus declares, in its own order (empty for a corpus without kinds). */
export function corpusKinds(name: CorpusName): string[] {
  return Object.keys(readCorpus(name).kinds ?? {});
}

const confident = (level: string | undefined) => level === 'high' || level === 'very_high';

const sameBrand = (match: { alternate_domains?: string[] | undefined }, domain: string | null): boolean =>
  domain !== null && (match.alternate_domains?.includes(domain) ?? false);

export function judge(matcher: BrandMatcher, kase: DescriptorCase): LineVerdict {
  const matches = matcher.lookup(kase.line).matches;
  const first = matches[0];
  const best = first ? { domain: first.domain, confidence: first.confidence, level: first.level } : null;
  // The brand's site for the line's country is its answer too (issue 32 item 6: a GB line gets
  // morrisons.co.uk, with morrisons.com among its alternate_domains).
  const same = first !== undefined && (first.domain === kase.domain || sameBrand(first, kase.domain));
  const right =
    kase.domain === null ? !matches.some((m) => m.confidence >= 0.7) : same && first.confidence >= 0.7;
  return {
    kase,
    right,
    empty: matches.length === 0,
    confidentFalse: best !== null && confident(best.level) && !same,
    best,
  };
}

function row(kind: string, verdicts: LineVerdict[]): AccuracyRow {
  return {
    kind,
    lines: verdicts.length,
    top1: verdicts.filter((v) => v.right).length,
    empty: verdicts.filter((v) => v.empty).length,
    confidentFalse: verdicts.filter((v) => v.confidentFalse).length,
  };
}

/** Rows per kind (in the given order, then any other kind in first-seen order), then `all`. */
export function accuracyByKind(matcher: BrandMatcher, cases: DescriptorCase[], order: string[] = []) {
  const verdicts = cases.map((kase) => judge(matcher, kase));
  const kinds = [...new Set([...order, ...cases.map((c) => c.kind ?? 'all')])];
  const rows =
    kinds.length > 1
      ? kinds.map((k) =>
          row(
            k,
            verdicts.filter((v) => v.kase.kind === k),
          ),
        )
      : [];
  return { rows: [...rows, row('all', verdicts)], verdicts };
}

const pct = (n: number, of: number) => (of === 0 ? '-' : `${((100 * n) / of).toFixed(1)}%`);

/** A fixed-width table: kind, lines, top-1, `[]`, confident false matches. */
export function formatAccuracy(rows: AccuracyRow[], indent = '  '): string {
  const width = Math.max(...rows.map((r) => r.kind.length), 4);
  const head = `${indent}${'kind'.padEnd(width)}  lines   top-1            []               confident false\n`;
  return (
    head +
    rows
      .map(
        (r) =>
          `${indent}${r.kind.padEnd(width)}  ${String(r.lines).padStart(5)}   ` +
          `${`${r.top1} (${pct(r.top1, r.lines)})`.padEnd(16)} ${`${r.empty} (${pct(r.empty, r.lines)})`.padEnd(16)} ` +
          `${r.confidentFalse}`,
      )
      .join('\n') +
    '\n'
  );
}
