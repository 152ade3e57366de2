/**
 * The gate's verdict on a done scan and how it is reported: JSON for programs, Markdown for people
 * (a CI job summary), with the scanner's own fix sheet (`fix-sheet.ts`) when the gate fails, so
 * the job that failed says what to change.
 */
import { fixSheet } from '../servers/features/scans/fix-sheet.ts';
import type { Scan, ScoreBreakdown } from '../servers/features/scans/schemas.ts';
import { CliFailure, type OutputFormat, type ScanOptions } from './options.ts';

type CheckStatus = ScoreBreakdown['components'][number]['checks'][number]['status'];

export interface RequiredCheck {
  id: string;
  title: string;
  status: CheckStatus;
  passed: boolean;
}

export interface Verdict {
  passed: boolean;
  min_score: number;
  required: RequiredCheck[];
  /** Why the gate failed, one line each; empty when it passed. */
  reasons: string[];
}

/** A scan whose result is in: what the gate reads. */
export type DoneScan = Scan & { result: ScoreBreakdown };

/**
 * Passes when the score reaches `--min-score` and every `--require`d check passes in full: a
 * partial, failing, unmeasured or not applicable check does not, since the gate was asked to hold
 * it. A required id the scan does not know is a usage error (a typo must not pass a gate).
 */
export function judge(result: ScoreBreakdown, options: Pick<ScanOptions, 'minScore' | 'required'>): Verdict {
  const checks = new Map(result.components.flatMap((c) => c.checks).map((k) => [k.id, k]));
  const unknown = options.required.filter((id) => !checks.has(id));
  if (unknown.length)
    throw new CliFailure(
      2,
      `--require: no check ${unknown.map((id) => `"${id}"`).join(', ')} in scoring version ${result.scoring_version}; ` +
        `the checks are ${[...checks.keys()].join(', ')}`,
    );
  const required = options.required.map((id): RequiredCheck => {
    const k = checks.get(id) as NonNullable<ReturnType<typeof checks.get>>;
    return { id, title: k.title, status: k.status, passed: k.status === 'pass' };
  });
  const reasons: string[] = [];
  if (result.score < options.minScore)
    reasons.push(`score ${result.score} is below the minimum ${options.minScore}`);
  for (const k of required.filter((r) => !r.passed))
    reasons.push(`required check ${k.id} (${k.title}) is ${k.status.replace(/_/g, ' ')}, not pass`);
  return { passed: reasons.length === 0, min_score: options.minScore, required, reasons };
}

export interface Report {
  scan: DoneScan;
  verdict: Verdict;
  /** `api` with the service's URL, or `local` (the scanner in this process). */
  source: { kind: 'api'; api: string } | { kind: 'local' };
}

export function render(report: Report, format: OutputFormat): string {
  return format === 'json' ? `${JSON.stringify(jsonOf(report), null, 2)}\n` : markdownOf(report);
}

function jsonOf({ scan, verdict, source }: Report) {
  const { result } = scan;
  return {
    passed: verdict.passed,
    domain: scan.domain,
    score: result.score,
    tier: result.tier.id,
    profile: result.profile.id,
    scoring_version: result.scoring_version,
    gate: verdict,
    source: source.kind,
    ...(source.kind === 'api' ? { api: source.api, scan_id: scan.scan_id, status_url: scan.status_url } : {}),
    scan,
  };
}

const statusMark: Record<CheckStatus, string> = {
  pass: 'pass',
  partial: 'partial',
  fail: '**fail**',
  no_data: 'no data',
  not_applicable: 'not applicable',
  unable_to_check: 'unable to check',
};

function markdownOf({ scan, verdict, source }: Report): string {
  const { result } = scan;
  const where =
    source.kind === 'api'
      ? `scanned by ${source.api} ([scan ${scan.scan_id}](${scan.status_url}))`
      : 'scanned in process (--local)';
  const lines = [
    `## Signal Strength gate: ${verdict.passed ? 'passed' : 'failed'} for ${scan.domain}`,
    '',
    `Score **${result.score}** (${result.tier.name}), minimum ${verdict.min_score}; profile ${result.profile.id}, scoring version ${result.scoring_version}; ${where}.`,
    '',
  ];
  if (!verdict.passed) lines.push(...verdict.reasons.map((r) => `- ${r}`), '');
  if (verdict.required.length) {
    lines.push('| required check | status |', '|---|---|');
    for (const k of verdict.required) lines.push(`| \`${k.id}\` ${k.title} | ${statusMark[k.status]} |`);
    lines.push('');
  }
  lines.push('| component | score |', '|---|---|');
  for (const c of result.components) lines.push(`| ${c.name} | ${c.score ?? 'no data'} |`);
  lines.push('');
  if (result.note) lines.push(result.note, '');
  // The fix sheet's own title would repeat the heading above; its sections follow as they are.
  if (!verdict.passed) lines.push(fixSheet(scan).replace(/^# .*\n\n/, ''));
  return `${lines.join('\n').trimEnd()}\n`;
}
