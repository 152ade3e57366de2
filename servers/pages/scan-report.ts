/**
 * `/scan/{domain}`: a domain's latest public scan report, from GET /scan-score, in its sections
 * (score, components, changes since the previous scan, findings, the site's traffic where its owner
 * shares it, and the checks behind each component).
 */
import type { Request, Response } from 'express';
import type { Config } from '../config.ts';
import { ServiceError } from '../errors.ts';
import { getScanDiff } from '../features/scans/history-operations.ts';
import type { ScanDiff } from '../features/scans/history-schemas.ts';
import { getScanScore } from '../features/scans/operations.ts';
import type { ScanScore } from '../features/scans/schemas.ts';
import type { Services } from '../services.ts';
import { componentBars, scoreGauge, trafficCategories, trafficChart } from './charts.ts';
import { type Html, html } from './html.ts';
import { md, type PageKit } from './page-kit.ts';
import { scanChangesMarkdown, scanChangesSection } from './scan-changes.ts';
import { severityOrder, severityTitle } from './severity.ts';

type PublicTraffic = NonNullable<Awaited<ReturnType<typeof publicTraffic>>>;

export async function scanReportPage(kit: PageKit, req: Request, res: Response): Promise<void> {
  const path = `/scan/${encodeURIComponent(String(req.params.domain))}`;
  let score: ScanScore;
  try {
    score = await kit.call(getScanScore, req, { domain: req.params.domain });
  } catch (error) {
    await kit.problemPage(req, res, error, path);
    return;
  }
  const traffic = await publicTraffic(kit.services, score.domain);
  const changes = await previousChanges(kit, req, score.scan_id);
  const fixSheetUrl = `${kit.config.public_api_url}/scans/${score.scan_id}/fixes.md`;
  await kit.page(req, res, {
    path,
    title: `${score.domain}: Signal Strength ${score.score}`,
    description: `Agent-readiness report of ${score.domain}: ${score.score}/100, ${score.tier.name}.`,
    body: reportBody(kit.config, score, changes, traffic),
    markdown: reportMarkdown(score, changes, fixSheetUrl),
    charts: true,
  });
}

/** What changed since the previous complete scan; null when the scan is the domain's first. */
async function previousChanges(kit: PageKit, req: Request, scanId: string): Promise<ScanDiff | null> {
  try {
    return await kit.call(getScanDiff, req, { scan_id: scanId });
  } catch (error) {
    if (error instanceof ServiceError && error.code === 'no_earlier_scan') return null;
    throw error;
  }
}

function reportBody(
  config: Config,
  score: ScanScore,
  changes: ScanDiff | null,
  traffic: PublicTraffic | null,
): Html {
  const diffUrl = `${config.public_api_url}/scans/${score.scan_id}/diff`;
  const fixSheetUrl = `${config.public_api_url}/scans/${score.scan_id}/fixes.md`;
  return html`<h1>Agent-readiness report: ${score.domain}</h1>
<p>Latest public ${score.depth} scan, ${score.scanned_at.slice(0, 16).replace('T', ' ')} UTC. The same data as JSON: <a href="${config.public_api_url}/scan-score?domain=${encodeURIComponent(score.domain)}">GET /scan-score</a>.</p>
<div class="grid">
${scoreCard(score)}
${componentsCard(score)}
</div>
${scanChangesSection(changes, diffUrl)}
${findingsSection(score, fixSheetUrl)}
${traffic ? trafficSection(score.domain, traffic) : ''}
${checksSection(score)}
<p><a href="${config.site_url}/leaderboard">Back to the leaderboard</a></p>`;
}

function scoreCard(score: ScanScore): Html {
  return html`<section class="card" aria-labelledby="score-h"><h2 id="score-h">Signal Strength</h2>
${scoreGauge(score.score, score.tier.name)}
<p><strong data-testid="score">${score.score}</strong>/100, tier <span class="tier tier-${score.tier.id}" data-testid="tier">${score.tier.name}</span> (${score.tier.min}-${score.tier.max}).</p>
${score.note ? html`<p class="muted">${score.note}</p>` : ''}
<p>Scored as a <strong data-testid="profile">${score.profile.id}</strong> site${score.profile.source === 'requested' ? html` (detected: ${score.profile.detected})` : ''}, scoring version ${score.scoring_version}.</p>
${
  score.next_level
    ? html`<p data-testid="next-level">Next tier: <strong>${score.next_level.tier.name}</strong> (${score.next_level.points_needed} point(s) to go), by passing ${score.next_level.checks.map((c) => c.title).join('; ')}.</p>`
    : ''
}
</section>`;
}

function componentsCard(score: ScanScore): Html {
  return html`<section class="card" aria-labelledby="components-h"><h2 id="components-h">The five components</h2>
${componentBars(score.components.map((c) => ({ name: c.name, score: c.score })))}
<table><thead><tr><th scope="col">Component</th><th scope="col" class="num">Weight</th><th scope="col" class="num">Score</th></tr></thead><tbody>
${score.components.map(
  (c) =>
    html`<tr data-component="${c.id}"><td>${c.name}</td><td class="num">${c.weight}</td><td class="num">${c.score === null ? 'no data' : c.score}</td></tr>
`,
)}</tbody></table>
</section>`;
}

/** The findings by severity, each with its fix; the fix sheet has the rest. */
function findingsSection(score: ScanScore, fixSheetUrl: string): Html {
  const grouped = severityOrder
    .map((severity) => ({ severity, findings: score.findings.filter((f) => f.severity === severity) }))
    .filter((g) => g.findings.length > 0);
  const componentName = new Map(score.components.map((c) => [c.id, c.name]));
  return html`<section aria-labelledby="findings-h"><h2 id="findings-h">Findings and fixes</h2>
<p>The <a href="${fixSheetUrl}">fix sheet</a> has every finding with its specification, the requests that showed it and a prompt for a coding agent.</p>
${
  grouped.length === 0
    ? html`<p>Nothing to fix: every check passed.</p>`
    : grouped.map(
        (g) => html`<h3 class="sev sev-${g.severity}">${severityTitle[g.severity]} (${g.findings.length})</h3>
<ul>
${g.findings.map(
  (
    f,
  ) => html`<li class="card finding"><strong>${componentName.get(f.component) ?? f.component}</strong>: ${f.seen}<br><strong>Fix:</strong> ${f.fix}${
    f.evidence_url ? html`<br><span class="muted">Evidence: <code>${f.evidence_url}</code></span>` : ''
  }</li>
`,
)}</ul>`,
      )
}
</section>`;
}

function trafficSection(domain: string, traffic: PublicTraffic): Html {
  return html`<section aria-labelledby="traffic-h"><h2 id="traffic-h">Agents and people on ${domain}</h2>
<p>From the site's traffic pixel over the last ${traffic.days.length} days (the owner shares these figures): ${traffic.totals.ai_agents} AI agent events, ${traffic.totals.human} human, ${traffic.totals.other_bots} other bots.</p>
${trafficChart(traffic.days, trafficCategories)}
</section>`;
}

function checksSection(score: ScanScore): Html {
  return html`<section aria-labelledby="checks-h"><h2 id="checks-h">Checks behind each component</h2>
${score.components.map(
  (
    c,
  ) => html`<h3>${c.name}</h3><table><thead><tr><th scope="col">Check</th><th scope="col" class="num">Weight</th><th scope="col" class="num">Score</th><th scope="col">Seen</th></tr></thead><tbody>
${c.checks.map(
  (k) =>
    html`<tr><td>${k.title}</td><td class="num">${k.weight}</td><td class="num">${k.score === null ? k.status.replace(/_/g, ' ') : Math.round(k.score * 100)}</td><td>${k.seen}</td></tr>
`,
)}</tbody></table>`,
)}
</section>`;
}

function reportMarkdown(score: ScanScore, changes: ScanDiff | null, fixSheetUrl: string): string {
  return `# Agent-readiness report: ${score.domain}\n\nSignal Strength: ${score.score}/100 (${score.tier.name}), ${score.depth} scan at ${score.scanned_at}, scored as a ${score.profile.id} site (scoring version ${score.scoring_version}). Fix sheet: ${fixSheetUrl}\n\n## Components\n\n${score.components
    .map((c) => `- ${c.name}: ${c.score === null ? 'no data' : c.score}`)
    .join('\n')}\n\n## Findings\n\n${score.findings
    .map((f) => `- **${f.severity}** (${f.component}): ${md(f.seen)} Fix: ${md(f.fix)}`)
    .join('\n')}\n\n${scanChangesMarkdown(changes, md)}`;
}

/**
 * A site's traffic for its public report, only where the owner opted in to name it (the same rule
 * as GET /ai-search-data's opted_in_sites: `share_network` and a verified domain), read through
 * the traffic service of GET /site-stats for the owner's account.
 */
async function publicTraffic(services: Services, domain: string) {
  const row = await services.db
    .selectFrom('sites')
    .select(['id', 'account_id'])
    .where('domain', '=', domain)
    .where('share_network', '=', 1)
    .where('verified_at', 'is not', null)
    .executeTakeFirst();
  if (!row) return null;
  const stats = await services.traffic.siteStats(row.account_id, { site_id: row.id, days: 30 });
  const site = stats.sites[0];
  if (!site || site.totals.events === 0) return null;
  return { totals: site.totals, days: site.by_day };
}
