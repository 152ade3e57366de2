/**
 * The fix sheet of a scan (`GET {public_api_url}/scans/{id}/fixes.md`, MCP `get_scan_fixes`): every
 * finding as a section a person or a coding agent can work from - goal, issue, how to fix it, the
 * specification, a ready prompt, and the requests that showed it.
 */
import type { Scan } from './schemas.ts';

const severityLabel = { critical: 'Critical', warning: 'Warning', info: 'Info' } as const;

/** Markdown text inside a table cell or a heading: no line breaks, no pipes. */
const inline = (text: string) => text.replace(/\s+/g, ' ').replace(/\|/g, '\\|').trim();

export function fixSheet(scan: Scan): string {
  const lines: string[] = [`# Fix sheet: ${scan.domain}`, ''];
  const result = scan.result;
  if (!result) {
    lines.push(
      scan.status === 'failed'
        ? `The scan failed: ${scan.error ?? 'unknown error'}.`
        : `The scan is ${scan.status}; the fix sheet is ready when it is done (${scan.status_url}).`,
      '',
    );
    return lines.join('\n');
  }
  lines.push(
    `Signal Strength **${result.score}** (${result.tier.name}), scoring version ${result.scoring_version}, profile **${result.profile.id}**${result.profile.source === 'requested' ? ` (requested; detected: ${result.profile.detected})` : ''}. Scan ${scan.scan_id}, finished ${scan.finished_at ?? 'now'}.`,
    '',
  );
  if (result.next_level) {
    lines.push(
      `**Next level: ${result.next_level.tier.name}** (${result.next_level.tier.min}+, ${result.next_level.points_needed} point(s) to go). Passing these checks gets there: ${result.next_level.checks.map((c) => `\`${c.id}\` (+${c.gain})`).join(', ') || 'none of the open checks is enough on its own'}.`,
      '',
    );
  } else lines.push('Top tier reached.', '');
  if (result.findings.length === 0) {
    lines.push('Nothing to fix.', '');
    return lines.join('\n');
  }
  lines.push('| # | severity | check | issue |', '|---|---|---|---|');
  result.findings.forEach((f, i) => {
    lines.push(`| ${i + 1} | ${severityLabel[f.severity]} | \`${f.id}\` | ${inline(f.seen)} |`);
  });
  lines.push('');
  result.findings.forEach((f, i) => {
    lines.push(
      `## ${i + 1}. ${inline(f.title)} (\`${f.id}\`, ${severityLabel[f.severity].toLowerCase()})`,
      '',
    );
    if (f.goal) lines.push(`- **Goal:** ${f.goal}`);
    lines.push(`- **Issue:** ${f.seen}`);
    lines.push(`- **How to fix:** ${f.fix}`);
    if (f.spec_url) lines.push(`- **Specification:** <${f.spec_url}>`);
    if (f.evidence_url) lines.push(`- **Where:** <${f.evidence_url}>`);
    lines.push('');
    if (f.evidence.length) {
      lines.push('Evidence:', '');
      for (const r of f.evidence) {
        const headers = Object.entries(r.headers)
          .map(([k, v]) => `${k}: ${v}`)
          .join('; ');
        lines.push(
          `- \`${r.method} ${r.url}\` -> ${r.status ?? r.error ?? 'no answer'} in ${r.duration_ms} ms${r.user_agent ? ` as \`${r.user_agent.slice(0, 60)}\`` : ''}${headers ? ` (${inline(headers)})` : ''}`,
        );
      }
      lines.push('');
    }
    if (f.agent_prompt) {
      lines.push('Prompt for a coding agent:', '', '```text', f.agent_prompt, '```', '');
    }
  });
  return lines.join('\n');
}
