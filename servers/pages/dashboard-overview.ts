/**
 * The dashboard's overview page (`/dashboard`): the owner's sites, latest scans and findings,
 * service keys and connected clients, each section with its forms.
 */
import type { Request, Response } from 'express';
import type { DashboardSession } from '../../auth/dashboard-sessions.ts';
import { listConnectedClients, listServiceKeys } from '../features/accounts/operations.ts';
import { getMyTraffic, listMyFindings, listMyScans, listMySites } from '../features/owner/operations.ts';
import type { ListMyFindingsResult } from '../features/owner/schemas.ts';
import {
  csrfField,
  DASHBOARD_PATH,
  type DashboardKit,
  type Notice,
  noticeOf,
  pct,
  when,
} from './dashboard-kit.ts';
import { type Html, html } from './html.ts';
import { severityOrder, severityTitle } from './severity.ts';

type Result<F extends (...args: never[]) => unknown> = Awaited<ReturnType<F>>;
type Sites = Result<typeof listMySites.handler>;
type Traffic = Result<typeof getMyTraffic.handler>;
type Scans = Result<typeof listMyScans.handler>;
type Keys = Result<typeof listServiceKeys.handler>;
type Clients = Result<typeof listConnectedClients.handler>;

export async function overviewPage(
  kit: DashboardKit,
  req: Request,
  res: Response,
  session: DashboardSession,
  notice?: Notice,
  status = 200,
): Promise<void> {
  const [account, sites, traffic, scans, findings, keys, clients] = await Promise.all([
    kit.services.accounts.get(session.grant.accountId),
    kit.call(listMySites, req, session, {}),
    kit.call(getMyTraffic, req, session, { days: 30, top: 5 }),
    kit.call(listMyScans, req, session, { limit: 10 }),
    kit.call(listMyFindings, req, session, { limit: 30 }),
    kit.call(listServiceKeys, req, session, {}),
    kit.call(listConnectedClients, req, session, {}),
  ]);
  const csrf = csrfField(session);
  const body = html`<h1>Your dashboard</h1>
<div class="account-bar"><p>Signed in as <strong data-testid="account-email">${account?.email ?? session.grant.accountId}</strong>.</p>
<form method="post" action="${kit.base}/sign-out" class="inline">${csrf}<button type="submit" class="secondary">Sign out</button></form></div>
${noticeOf(notice)}
${sitesSection(kit.base, csrf, sites, traffic)}
${scansSection(kit, scans, findings.findings)}
${keysSection(kit.base, csrf, keys)}
${clientsSection(kit.base, csrf, session, clients)}`;
  await kit.send(
    req,
    res,
    {
      path: DASHBOARD_PATH,
      title: 'Your dashboard',
      description: 'Your sites, traffic, scans, keys and clients.',
      body,
      markdown: overviewMarkdown(sites, scans),
    },
    status,
  );
}

function sitesSection(base: string, csrf: Html, sites: Sites, traffic: Traffic): Html {
  const totals = new Map(traffic.sites.map((s) => [s.site_id, s.totals]));
  return html`<section aria-labelledby="sites-h"><h2 id="sites-h">Your sites</h2>
${
  sites.sites.length === 0
    ? html`<p class="card">No site yet. Add one below to get its traffic pixel.</p>`
    : html`<table data-testid="sites">
<thead><tr><th scope="col">Domain</th><th scope="col">Ownership</th><th scope="col">Pixel</th><th scope="col">Last event</th><th scope="col" class="num">Events, 24 h</th><th scope="col" class="num">AI agents, 30 days</th><th scope="col" class="num">People, 30 days</th></tr></thead>
<tbody>
${sites.sites.map((s) => {
  const t = totals.get(s.site_id);
  return html`<tr><td><a href="${base}/sites/${s.site_id}">${s.domain}</a></td><td>${s.verified ? `verified (${s.verification_method})` : 'not verified'}</td><td><span class="pixel pixel-${s.pixel.status}">${s.pixel.status.replace('_', ' ')}</span></td><td>${when(s.pixel.last_event_at)}</td><td class="num">${s.pixel.events_24h.total}</td><td class="num">${t ? `${t.ai_agents} (${pct(t.ai_share)})` : '0'}</td><td class="num">${t ? `${t.human} (${pct(t.human_share)})` : '0'}</td></tr>
`;
})}</tbody></table>`
}
<form method="post" action="${base}/sites" class="card stack">${csrf}
<label for="domain">Add a site (its domain)</label>
<input id="domain" name="domain" type="text" required maxlength="253" placeholder="example.com" autocomplete="off">
<button type="submit">Add site</button>
</form>
</section>`;
}

/** The latest scans, and the findings of the finished ones to fix. */
function scansSection(kit: DashboardKit, scans: Scans, findings: ListMyFindingsResult['findings']): Html {
  return html`<section aria-labelledby="scans-h"><h2 id="scans-h">Latest scans</h2>
${
  scans.scans.length === 0
    ? html`<p class="card">No scan yet. Scan a site with <code>POST ${kit.config.public_api_url}/scans</code> and your service key, or the <code>request_scan</code> tool.</p>`
    : html`<table data-testid="scans"><thead><tr><th scope="col">Domain</th><th scope="col">Status</th><th scope="col" class="num">Score</th><th scope="col">Tier</th><th scope="col" class="num">Findings</th><th scope="col">Finished</th></tr></thead><tbody>
${scans.scans.map(
  (s) =>
    html`<tr><td>${s.public ? html`<a href="${kit.site}/scan/${encodeURIComponent(s.domain)}">${s.domain}</a>` : s.domain} <span class="muted">(${s.public ? 'public' : 'private'}, ${s.depth})</span></td><td>${s.status}${s.error ? html`: <span class="muted">${s.error}</span>` : ''}</td><td class="num">${s.score ?? ''}</td><td>${s.tier ? html`<span class="tier tier-${s.tier}">${s.tier}</span>` : ''}</td><td class="num">${s.findings}</td><td>${when(s.finished_at)}</td></tr>
`,
)}</tbody></table>`
}
${findingsList(findings, 'findings-h', 'Findings to fix')}
</section>`;
}

function keysSection(base: string, csrf: Html, keys: Keys): Html {
  return html`<section aria-labelledby="keys-h"><h2 id="keys-h">Service keys</h2>
<p>Send a key as the <code>x-service-key</code> header (server-side traffic feed, site stats, brand agents). A key is shown once, when it is made.</p>
<table data-testid="keys"><thead><tr><th scope="col">Key</th><th scope="col">Label</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">State</th></tr></thead><tbody>
${keys.keys.map(
  (k) =>
    html`<tr data-key="${k.key_id}"><td><code>${k.prefix}…</code></td><td>${k.label ?? ''}</td><td>${when(k.created_at)}</td><td>${when(k.last_used_at)}</td><td>${
      k.revoked_at
        ? html`revoked ${when(k.revoked_at)}`
        : html`<form method="post" action="${base}/keys/${k.key_id}/revoke" class="inline">${csrf}<button type="submit" class="danger" aria-label="Revoke key ${k.prefix}">Revoke</button></form>`
    }</td></tr>
`,
)}</tbody></table>
<form method="post" action="${base}/keys" class="card stack">${csrf}
<label for="label">New key label (optional)</label>
<input id="label" name="label" type="text" maxlength="100" placeholder="nginx shipper" autocomplete="off">
<button type="submit">Create a key</button>
</form>
</section>`;
}

function clientsSection(base: string, csrf: Html, session: DashboardSession, clients: Clients): Html {
  return html`<section aria-labelledby="clients-h"><h2 id="clients-h">Connected clients</h2>
<p>Applications and agents you approved to read your account through the owner-scoped MCP server. Revoking one ends its access at once.</p>
${
  clients.clients.length === 0
    ? html`<p class="card">No client is connected.</p>`
    : html`<table data-testid="clients"><thead><tr><th scope="col">Client</th><th scope="col">Scopes</th><th scope="col">Approved</th><th scope="col">Lapses</th><th scope="col">Access</th></tr></thead><tbody>
${clients.clients.map(
  (c) =>
    html`<tr data-grant="${c.grant_id}"><td><strong>${c.client_name ?? 'Unnamed client'}</strong><br><code class="muted">${c.client_id}</code></td><td>${c.scopes.join(', ')}</td><td>${when(c.approved_at)}</td><td>${when(c.expires_at)}</td><td>${
      c.first_party
        ? c.grant_id === session.grant.grantId
          ? 'this dashboard (sign out to end it)'
          : 'the dashboard in another browser'
        : html`<form method="post" action="${base}/clients/${encodeURIComponent(c.grant_id)}/revoke" class="inline">${csrf}<button type="submit" class="danger" aria-label="Revoke ${c.client_name ?? c.client_id}">Revoke</button></form>`
    }</td></tr>
`,
)}</tbody></table>`
}
</section>`;
}

function overviewMarkdown(sites: Sites, scans: Scans): string {
  return `# Your dashboard\n\n## Sites\n\n${sites.sites
    .map((s) => `- ${s.domain}: pixel ${s.pixel.status}, ${s.verified ? 'verified' : 'not verified'}`)
    .join('\n')}\n\n## Latest scans\n\n${scans.scans
    .map((s) => `- ${s.domain}: ${s.status}${s.score === null ? '' : `, ${s.score}/100`}`)
    .join('\n')}\n`;
}

/** Findings by severity (the overview's and a site page's). */
export function findingsList(findings: ListMyFindingsResult['findings'], id: string, title: string): Html {
  const grouped = severityOrder
    .map((severity) => ({ severity, items: findings.filter((f) => f.severity === severity) }))
    .filter((g) => g.items.length > 0);
  return html`<h3 id="${id}">${title}</h3>
${
  grouped.length === 0
    ? html`<p>No finding stored: every check of your finished scans passed, or nothing was scanned yet.</p>`
    : grouped.map((g) => {
        const list = html`<ul data-testid="findings-${g.severity}">
${g.items.map(
  (f) =>
    html`<li class="card finding"><strong>${f.domain}</strong> <span class="muted">(${f.component}, scan of ${f.scanned_at.slice(0, 10)})</span>: ${f.seen}<br><strong>Fix:</strong> ${f.fix}</li>
`,
)}</ul>`;
        const heading = `${severityTitle[g.severity]} (${g.items.length})`;
        // Notes are many and minor: folded, open on demand (no script needed).
        return g.severity === 'info'
          ? html`<details><summary class="sev sev-info">${heading}</summary>${list}</details>`
          : html`<h4 class="sev sev-${g.severity}">${heading}</h4>${list}`;
      })
}`;
}
