/**
 * A site's dashboard page (`/dashboard/sites/{site_id}`): its ownership and how to prove it, its
 * agent and human traffic, the pixel's install snippets, and its findings.
 */
import type { Request, Response } from 'express';
import type { DashboardSession } from '../../auth/dashboard-sessions.ts';
import { ServiceError } from '../errors.ts';
import { getMyTraffic, listMyFindings, listMySites } from '../features/owner/operations.ts';
import { siteOrigin } from '../features/sites/domain.ts';
import { VERIFICATION_NAME, VERIFICATION_PATH } from '../features/sites/service.ts';
import { installSnippets } from '../features/sites/snippets.ts';
import { trafficCategories, trafficChart } from './charts.ts';
import {
  csrfField,
  DASHBOARD_PATH,
  type DashboardKit,
  type Notice,
  noticeOf,
  pct,
  when,
} from './dashboard-kit.ts';
import { findingsList } from './dashboard-overview.ts';
import { type Html, html } from './html.ts';

/** The columns of the owner's `sites` row the page shows beyond the operations' answers. */
export type SiteRow = { id: string; domain: string; verification_token: string };

type SiteInfo = Awaited<ReturnType<typeof listMySites.handler>>['sites'][number];
type Traffic = Awaited<ReturnType<typeof getMyTraffic.handler>>;
type SiteStats = Traffic['sites'][number];

export async function sitePage(
  kit: DashboardKit,
  req: Request,
  res: Response,
  session: DashboardSession,
  row: SiteRow,
  notice?: Notice,
  status = 200,
): Promise<void> {
  const [sites, traffic, findings] = await Promise.all([
    kit.call(listMySites, req, session, {}),
    kit.call(getMyTraffic, req, session, { site_id: row.id, days: 30, top: 5 }),
    kit.call(listMyFindings, req, session, { site_id: row.id, limit: 50 }),
  ]);
  const info = sites.sites.find((s) => s.site_id === row.id);
  const stats = traffic.sites[0];
  if (!info || !stats) throw new ServiceError('internal_error', { cause: new Error('site vanished') });
  const body = html`<h1>${info.domain}</h1>
<p><a href="${kit.base}">Back to your dashboard</a></p>
${noticeOf(notice)}
<dl class="facts">
<dt>Site id</dt><dd><code>${info.site_id}</code></dd>
<dt>Ownership</dt><dd data-testid="ownership">${info.verified ? `verified by ${info.verification_method} on ${info.verified_at?.slice(0, 10)}` : 'not verified'}</dd>
<dt>Pixel</dt><dd data-testid="pixel-status">${info.pixel.status.replace('_', ' ')}; last event ${when(info.pixel.last_event_at)}; ${info.pixel.events_total.total} events since installation</dd>
<dt>Named in network data</dt><dd>${info.share_network ? 'yes' : 'no'}</dd>
</dl>
${info.verified ? '' : verifySection(kit.base, csrfField(session), info, row)}
${trafficSection(traffic.period.days, stats)}
${installSection(kit, row.id)}
${findingsList(findings.findings, 'site-findings-h', `Findings for ${info.domain}`)}`;
  await kit.send(
    req,
    res,
    {
      path: DASHBOARD_PATH,
      title: `${info.domain} - your site`,
      description: `Pixel, traffic and findings of ${info.domain}.`,
      body,
      markdown: `# ${info.domain}\n\n- pixel: ${info.pixel.status}\n- events (30 days): ${stats.totals.events}, AI agents ${stats.totals.ai_agents}, people ${stats.totals.human}\n`,
    },
    status,
  );
}

/** How to prove ownership (a file or a DNS record), and the form that checks it. */
function verifySection(base: string, csrf: Html, info: SiteInfo, row: SiteRow): Html {
  return html`<section class="card" aria-labelledby="verify-h"><h2 id="verify-h">Prove you own ${info.domain}</h2>
<p>Either serve <code>${siteOrigin(info.domain)}${VERIFICATION_PATH}</code> with the content <code>${row.verification_token}</code>, or add a DNS TXT record on <code>${info.domain}</code> with the value <code>${VERIFICATION_NAME}=${row.verification_token}</code>. Then:</p>
<form method="post" action="${base}/sites/${info.site_id}/verify" class="inline">${csrf}<button type="submit">Check ownership now</button></form>
</section>`;
}

function trafficSection(days: number, stats: SiteStats): Html {
  return html`<section aria-labelledby="traffic-h"><h2 id="traffic-h">Agents and people, last ${days} days</h2>
<p data-testid="traffic-totals">${stats.totals.events} events: ${stats.totals.ai_agents} from AI agents (${pct(stats.totals.ai_share)}), ${stats.totals.human} from people (${pct(stats.totals.human_share)}), ${stats.totals.other_bots} from other bots; ${stats.ai_referrals.events} people referred by AI assistants.</p>
${stats.totals.events > 0 ? trafficChart(stats.by_day, trafficCategories) : html`<p class="card">No traffic in this period yet: install the pixel below.</p>`}
${
  stats.by_agent.length > 0
    ? html`<table><caption class="muted">Agents and bots seen</caption><thead><tr><th scope="col">Agent</th><th scope="col">Operator</th><th scope="col">Category</th><th scope="col" class="num">Events</th></tr></thead><tbody>
${stats.by_agent
  .slice(0, 15)
  .map(
    (a) =>
      html`<tr><td>${a.agent}</td><td>${a.operator ?? ''}</td><td>${a.category}</td><td class="num">${a.events}</td></tr>`,
  )}</tbody></table>`
    : ''
}
</section>`;
}

function installSection(kit: DashboardKit, siteId: string): Html {
  const snippets = installSnippets(kit.config.public_api_url, siteId);
  return html`<section aria-labelledby="install-h"><h2 id="install-h">Install the pixel</h2>
<p>The browser beacon sees people and browser agents; only the server-side feed sees AI crawlers, which run no scripts. Use both.</p>
<h3>In every page</h3>
<pre><code>${snippets.script}
${snippets.noscript}</code></pre>
<h3>Server-side feed (Express)</h3>
<pre><code>${snippets.express}</code></pre>
<h3>Server-side feed (nginx)</h3>
<pre><code>${snippets.nginx}</code></pre>
</section>`;
}
