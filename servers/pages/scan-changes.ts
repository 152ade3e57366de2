/**
 * "What changed since the last scan" on the scan report page (`/scan/{domain}`): the diff of the
 * report's scan against the previous complete one (`GET /scans/{id}/diff`), the checks that moved
 * with what was seen and the requests behind them before and after.
 */
import type { CheckChange, ScanDiff } from '../features/scans/history-schemas.ts';
import { type Html, html } from './html.ts';

const stateText = (state: CheckChange['before']): string =>
  state === null
    ? 'absent'
    : state.score === null
      ? state.status.replace(/_/g, ' ')
      : `${state.status} (${Math.round(state.score * 100)})`;

function evidenceList(state: CheckChange['before']): Html | string {
  if (state === null || state.evidence.length === 0) return '';
  return html`<ul class="muted">${state.evidence.map(
    (e) =>
      html`<li><code>${e.method} ${e.url}</code> ${e.status === null ? (e.error ?? 'no answer') : e.status}</li>`,
  )}</ul>`;
}

function changeRow(c: CheckChange): Html {
  return html`<tr data-check="${c.id}" data-change="${c.change}"><td>${c.title}</td><td>${c.change}</td><td>${stateText(c.before)}</td><td>${stateText(c.after)}</td>
<td><details><summary>Seen and evidence</summary><p><strong>Before:</strong> ${c.before?.seen ?? 'absent'}</p>${evidenceList(c.before)}<p><strong>After:</strong> ${c.after?.seen ?? 'absent'}</p>${evidenceList(c.after)}</details></td></tr>
`;
}

/** The section for a diff, or the note that this is the domain's first complete scan. */
export function scanChangesSection(diff: ScanDiff | null, diffUrl: string): Html {
  if (diff === null) {
    return html`<section aria-labelledby="changes-h"><h2 id="changes-h">What changed since the last scan</h2>
<p data-testid="changes-summary">This is the first complete scan of the domain: nothing to compare with yet.</p></section>`;
  }
  return html`<section aria-labelledby="changes-h"><h2 id="changes-h">What changed since the last scan</h2>
<p>Against the scan of ${diff.before.finished_at.slice(0, 16).replace('T', ' ')} UTC (${diff.before.score}, ${diff.before.tier.name}), both scored by scoring version ${diff.scoring_version}: <strong data-testid="changes-summary">${diff.summary}</strong>. As JSON: <a href="${diffUrl}">GET /scans/{id}/diff</a>.</p>
${
  diff.checks.length === 0
    ? ''
    : html`<table><thead><tr><th scope="col">Check</th><th scope="col">Change</th><th scope="col">Before</th><th scope="col">After</th><th scope="col">What was seen</th></tr></thead><tbody>
${diff.checks.map(changeRow)}</tbody></table>`
}
</section>`;
}

/** The same for the Markdown form of the page. */
export function scanChangesMarkdown(diff: ScanDiff | null, escapeMd: (text: string) => string): string {
  if (diff === null) return '## What changed since the last scan\n\nThe first complete scan of the domain.\n';
  const rows = diff.checks.map(
    (c) => `- ${escapeMd(c.title)}: ${c.change}, ${stateText(c.before)} -> ${stateText(c.after)}`,
  );
  return `## What changed since the last scan\n\n${escapeMd(diff.summary)}\n\n${rows.join('\n')}\n`;
}
