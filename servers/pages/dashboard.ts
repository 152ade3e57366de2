/**
 * The owner dashboard at `{site_url}/dashboard` (issue 14 section 2): an account's sites with their
 * pixel status and install snippets, traffic charts per site, the latest scans and their findings,
 * service keys (create, revoke) and the OAuth clients the owner approved (revoke).
 *
 * Owners sign in on the authorization server's own sign-in page (`dashboard-sign-in.ts`); the
 * session stands for the OAuth grant the sign-in ended with (`auth/dashboard-sessions.ts`). Every
 * read and write invokes the registry's operations with that grant, exactly as the owner-scoped
 * MCP server does: the owner tools read under row-level security (`db/scoped.ts`), and the account
 * is the grant's, never a value of the request. Forms are plain HTML posts carrying the session's
 * anti-forgery token; every page is `no-store` and kept out of search indexes.
 */
import express, { type Request, type RequestHandler, type Response } from 'express';
import type { z } from 'zod';
import { DASHBOARD_SESSION_TTL_MS, type DashboardSession } from '../../auth/dashboard-sessions.ts';
import { cookieOf, refusedNul } from '../../auth/form-security.ts';
import { withOwnerScope } from '../../db/scoped.ts';
import { ServiceError } from '../errors.ts';
import {
  createServiceKey,
  listConnectedClients,
  listServiceKeys,
  revokeConnectedClient,
  revokeServiceKey,
} from '../features/accounts/operations.ts';
import { getMyTraffic, listMyFindings, listMyScans, listMySites } from '../features/owner/operations.ts';
import type { ListMyFindingsResult } from '../features/owner/schemas.ts';
import { siteOrigin } from '../features/sites/domain.ts';
import { installPixel, verifySite } from '../features/sites/operations.ts';
import { VERIFICATION_NAME, VERIFICATION_PATH } from '../features/sites/service.ts';
import { installSnippets } from '../features/sites/snippets.ts';
import { type AnyOperation, invokeOperation, type Operation, type OperationContext } from '../operation.ts';
import type { Services } from '../services.ts';
import { trafficCategories, trafficChart } from './charts.ts';
import { DashboardSignIn, SESSION_COOKIE } from './dashboard-sign-in.ts';
import { type Html, html } from './html.ts';
import { layout, pageCsp } from './layout.ts';
import { sendWithFeaturedBrand } from './marketplace.ts';

export const DASHBOARD_PATH = '/dashboard';

const severityOrder = ['critical', 'warning', 'info'] as const;
const severityTitle = { critical: 'Critical', warning: 'Warnings', info: 'Notes' } as const;

type Notice = { kind: 'error' | 'done'; text: string };

const pct = (share: number) => `${Math.round(share * 1000) / 10}%`;
const when = (iso: string | null) => (iso ? `${iso.slice(0, 16).replace('T', ' ')} UTC` : 'never');

export function dashboardRouter(services: Services, operations: readonly AnyOperation[]): RequestHandler {
  const { config } = services;
  const site = config.site_url;
  const base = `${site}${DASHBOARD_PATH}`;
  const sessions = services.dashboardSessions;
  const signIn = new DashboardSignIn(services);
  const csp = pageCsp(config, { svgCharts: true });
  const router = express.Router();
  const form = express.urlencoded({ extended: false, limit: '8kb' });

  /** The operation context of a signed-in owner: the account and grant of the session, nothing from the request. */
  function ownerContext(req: Request, session: DashboardSession): OperationContext {
    return {
      services,
      operations,
      request: {
        id: String(req.id),
        ip: req.ip ?? 'unknown',
        via: 'rest',
        headers: { 'user-agent': req.get('user-agent') },
      },
      log: req.log,
      signal: new AbortController().signal,
      account: { id: session.grant.accountId, keyId: null },
      grant: session.grant,
    };
  }

  const call = <I extends z.ZodType, O extends z.ZodType>(
    op: Operation<I, O>,
    req: Request,
    session: DashboardSession,
    input: unknown,
  ): Promise<z.output<O>> => invokeOperation(op, ownerContext(req, session), input);

  function send(
    req: Request,
    res: Response,
    p: { path: string; title: string; description: string; body: Html; markdown: string },
    status = 200,
  ): Promise<void> {
    res.status(status).set({
      'Cache-Control': 'no-store',
      'X-Robots-Tag': 'noindex, nofollow',
      'X-Frame-Options': 'DENY',
    });
    res.vary('Cookie');
    return sendWithFeaturedBrand(services, req, res, {
      html: layout({
        config,
        path: DASHBOARD_PATH,
        title: p.title,
        description: p.description,
        body: p.body,
      }),
      markdown: p.markdown,
      csp,
    });
  }

  const wrap =
    (handler: (req: Request, res: Response) => Promise<void>): RequestHandler =>
    (req, res, next) => {
      handler(req, res).catch(next);
    };

  /** A page's session; without one, the sign-in page (or, for a deeper page, sign-in and back). */
  async function sessionOrSignIn(req: Request, res: Response): Promise<DashboardSession | null> {
    const session = await sessions.find(cookieOf(req, SESSION_COOKIE));
    if (session) return session;
    if (cookieOf(req, SESSION_COOKIE) !== undefined) signIn.clearSessionCookie(res);
    if (req.path === '/' || req.path === '') {
      await send(req, res, signedOutPage());
      return null;
    }
    await signIn.start(res, `${DASHBOARD_PATH}${req.path}`);
    return null;
  }

  /** A form's session and anti-forgery check; answers 403 itself when either fails. */
  async function formSession(req: Request, res: Response): Promise<DashboardSession | null> {
    const session = await sessions.find(cookieOf(req, SESSION_COOKIE));
    const body = (req.body ?? {}) as Record<string, unknown>;
    if (!session || !sessions.csrfValid(session, body.csrf)) {
      await send(
        req,
        res,
        {
          path: DASHBOARD_PATH,
          title: 'Request refused',
          description: 'The form was not sent from your dashboard.',
          body: html`<h1>Request refused</h1><p role="alert">${
            session
              ? 'This form was not sent from your dashboard page.'
              : 'Your dashboard session has ended. Sign in again.'
          }</p><p><a href="${base}">Back to the dashboard</a></p>`,
          markdown: '# Request refused\n',
        },
        403,
      );
      return null;
    }
    if (refusedNul(res, body)) return null;
    return session;
  }

  function signedOutPage() {
    return {
      path: DASHBOARD_PATH,
      title: 'Owner dashboard',
      description:
        'Sign in to see your sites, their agent and human traffic, scans, keys and connected clients.',
      body: html`<h1>Owner dashboard</h1>
<p>Site owners see here their own sites and pixel status, agent-versus-human traffic per site, the latest scans with their findings, their service keys, and the AI clients they connected to their account.</p>
<p><a class="button" href="${base}/sign-in">Sign in</a></p>
<section class="card" aria-labelledby="new-h"><h2 id="new-h">No account yet?</h2>
<p>Create one with a password, then sign in here:</p>
<pre><code>curl -X POST ${config.public_api_url}/account -H 'content-type: application/json' \\
  -d '{"email":"you@example.com","password":"a long passphrase"}'</code></pre>
<p>Or register your first site and get its traffic pixel at once with <code>POST ${config.public_api_url}/pixel-install</code> (see the <a href="${site}/docs">API reference</a>).</p>
</section>`,
      markdown: `# Owner dashboard\n\nSign in at ${base}/sign-in to see your sites, traffic, scans, keys and connected clients.\n`,
    };
  }

  router.get(
    '/sign-in',
    wrap(async (req, res) => {
      const returnTo = typeof req.query.return_to === 'string' ? req.query.return_to : DASHBOARD_PATH;
      // Only a dashboard path: the sign-in must never send the owner anywhere else (open redirect).
      const safe = /^\/dashboard(\/[\w-]+)*$/.test(returnTo) ? returnTo : DASHBOARD_PATH;
      await signIn.start(res, safe);
    }),
  );

  router.get(
    '/callback',
    wrap(async (req, res) => {
      const result = await signIn.finish(req, res);
      if (!result.ok) {
        await send(
          req,
          res,
          {
            path: DASHBOARD_PATH,
            title: 'Sign-in failed',
            description: result.message,
            body: html`<h1>Sign-in failed</h1><p role="alert">${result.message}</p><p><a href="${base}/sign-in">Sign in again</a></p>`,
            markdown: `# Sign-in failed\n\n${result.message}\n`,
          },
          result.status,
        );
        return;
      }
      const { cookie } = await sessions.create(result.grant);
      signIn.setSessionCookie(res, cookie, DASHBOARD_SESSION_TTL_MS);
      res.set('Cache-Control', 'no-store').redirect(303, `${site}${result.returnTo}`);
    }),
  );

  router.post(
    '/sign-out',
    form,
    wrap(async (req, res) => {
      const session = await formSession(req, res);
      if (!session) return;
      await sessions.end(session);
      signIn.clearSessionCookie(res);
      await send(req, res, {
        path: DASHBOARD_PATH,
        title: 'Signed out of the dashboard',
        description: 'You are signed out of the dashboard.',
        body: html`<h1>Signed out of the dashboard</h1>
<p>Your dashboard session has ended. You may still be signed in at the authorization server, which lets the dashboard sign you in again without your password; to end that too, <a href="${config.auth_url}/logout">sign out of your account</a>.</p>
<p><a href="${base}">Back to the dashboard</a></p>`,
        markdown: '# Signed out of the dashboard\n',
      });
    }),
  );

  async function overview(
    req: Request,
    res: Response,
    session: DashboardSession,
    notice?: Notice,
    status = 200,
  ) {
    const [account, sites, traffic, scans, findings, keys, clients] = await Promise.all([
      services.accounts.get(session.grant.accountId),
      call(listMySites, req, session, {}),
      call(getMyTraffic, req, session, { days: 30, top: 5 }),
      call(listMyScans, req, session, { limit: 10 }),
      call(listMyFindings, req, session, { limit: 30 }),
      call(listServiceKeys, req, session, {}),
      call(listConnectedClients, req, session, {}),
    ]);
    const totals = new Map(traffic.sites.map((s) => [s.site_id, s.totals]));
    const csrf = html`<input type="hidden" name="csrf" value="${session.csrf}">`;
    const body = html`<h1>Your dashboard</h1>
<div class="account-bar"><p>Signed in as <strong data-testid="account-email">${account?.email ?? session.grant.accountId}</strong>.</p>
<form method="post" action="${base}/sign-out" class="inline">${csrf}<button type="submit" class="secondary">Sign out</button></form></div>
${noticeOf(notice)}
<section aria-labelledby="sites-h"><h2 id="sites-h">Your sites</h2>
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
</section>
<section aria-labelledby="scans-h"><h2 id="scans-h">Latest scans</h2>
${
  scans.scans.length === 0
    ? html`<p class="card">No scan yet. Scan a site with <code>POST ${config.public_api_url}/scans</code> and your service key, or the <code>request_scan</code> tool.</p>`
    : html`<table data-testid="scans"><thead><tr><th scope="col">Domain</th><th scope="col">Status</th><th scope="col" class="num">Score</th><th scope="col">Tier</th><th scope="col" class="num">Findings</th><th scope="col">Finished</th></tr></thead><tbody>
${scans.scans.map(
  (s) =>
    html`<tr><td>${s.public ? html`<a href="${site}/scan/${encodeURIComponent(s.domain)}">${s.domain}</a>` : s.domain} <span class="muted">(${s.public ? 'public' : 'private'}, ${s.depth})</span></td><td>${s.status}${s.error ? html`: <span class="muted">${s.error}</span>` : ''}</td><td class="num">${s.score ?? ''}</td><td>${s.tier ? html`<span class="tier tier-${s.tier}">${s.tier}</span>` : ''}</td><td class="num">${s.findings}</td><td>${when(s.finished_at)}</td></tr>
`,
)}</tbody></table>`
}
${findingsList(findings.findings, 'findings-h', 'Findings to fix')}
</section>
<section aria-labelledby="keys-h"><h2 id="keys-h">Service keys</h2>
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
</section>
<section aria-labelledby="clients-h"><h2 id="clients-h">Connected clients</h2>
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
    const markdown = `# Your dashboard\n\n## Sites\n\n${sites.sites
      .map((s) => `- ${s.domain}: pixel ${s.pixel.status}, ${s.verified ? 'verified' : 'not verified'}`)
      .join('\n')}\n\n## Latest scans\n\n${scans.scans
      .map((s) => `- ${s.domain}: ${s.status}${s.score === null ? '' : `, ${s.score}/100`}`)
      .join('\n')}\n`;
    await send(
      req,
      res,
      {
        path: DASHBOARD_PATH,
        title: 'Your dashboard',
        description: 'Your sites, traffic, scans, keys and clients.',
        body,
        markdown,
      },
      status,
    );
  }

  function noticeOf(notice: Notice | undefined): Html {
    if (!notice) return html``;
    return html`<p class="notice notice-${notice.kind}" role="${notice.kind === 'error' ? 'alert' : 'status'}">${notice.text}</p>`;
  }

  function findingsList(findings: ListMyFindingsResult['findings'], id: string, title: string): Html {
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

  /** An operation's refusal shown on the overview, or rethrown when it is not the owner's to fix. */
  async function refusal(
    req: Request,
    res: Response,
    session: DashboardSession,
    err: unknown,
  ): Promise<void> {
    if (!(err instanceof ServiceError) || err.status >= 500) throw err;
    await overview(req, res, session, { kind: 'error', text: err.publicDetail }, err.status);
  }

  router.get(
    '/',
    wrap(async (req, res) => {
      const session = await sessionOrSignIn(req, res);
      if (session) await overview(req, res, session);
    }),
  );

  router.get(
    '/sites/:site_id',
    wrap(async (req, res) => {
      const session = await sessionOrSignIn(req, res);
      if (!session) return;
      const siteId = String(req.params.site_id);
      const row = /^[0-9a-f-]{36}$/i.test(siteId)
        ? await withOwnerScope(services, session.grant.accountId, (scope) =>
            scope.sites().selectAll('sites').where('sites.id', '=', siteId).executeTakeFirst(),
          )
        : undefined;
      if (!row) {
        await send(
          req,
          res,
          {
            path: DASHBOARD_PATH,
            title: 'No such site',
            description: 'This site is not one of yours.',
            body: html`<h1>No such site</h1><p>Your account has no site with this id.</p><p><a href="${base}">Back to your dashboard</a></p>`,
            markdown: '# No such site\n',
          },
          404,
        );
        return;
      }
      await sitePage(req, res, session, row);
    }),
  );

  async function sitePage(
    req: Request,
    res: Response,
    session: DashboardSession,
    row: { id: string; domain: string; verification_token: string },
    notice?: Notice,
    status = 200,
  ) {
    const [sites, traffic, findings] = await Promise.all([
      call(listMySites, req, session, {}),
      call(getMyTraffic, req, session, { site_id: row.id, days: 30, top: 5 }),
      call(listMyFindings, req, session, { site_id: row.id, limit: 50 }),
    ]);
    const info = sites.sites.find((s) => s.site_id === row.id);
    const stats = traffic.sites[0];
    if (!info || !stats) throw new ServiceError('internal_error', { cause: new Error('site vanished') });
    const snippets = installSnippets(config.public_api_url, row.id);
    const csrf = html`<input type="hidden" name="csrf" value="${session.csrf}">`;
    const body = html`<h1>${info.domain}</h1>
<p><a href="${base}">Back to your dashboard</a></p>
${noticeOf(notice)}
<dl class="facts">
<dt>Site id</dt><dd><code>${info.site_id}</code></dd>
<dt>Ownership</dt><dd data-testid="ownership">${info.verified ? `verified by ${info.verification_method} on ${info.verified_at?.slice(0, 10)}` : 'not verified'}</dd>
<dt>Pixel</dt><dd data-testid="pixel-status">${info.pixel.status.replace('_', ' ')}; last event ${when(info.pixel.last_event_at)}; ${info.pixel.events_total.total} events since installation</dd>
<dt>Named in network data</dt><dd>${info.share_network ? 'yes' : 'no'}</dd>
</dl>
${
  info.verified
    ? ''
    : html`<section class="card" aria-labelledby="verify-h"><h2 id="verify-h">Prove you own ${info.domain}</h2>
<p>Either serve <code>${siteOrigin(info.domain)}${VERIFICATION_PATH}</code> with the content <code>${row.verification_token}</code>, or add a DNS TXT record on <code>${info.domain}</code> with the value <code>${VERIFICATION_NAME}=${row.verification_token}</code>. Then:</p>
<form method="post" action="${base}/sites/${info.site_id}/verify" class="inline">${csrf}<button type="submit">Check ownership now</button></form>
</section>`
}
<section aria-labelledby="traffic-h"><h2 id="traffic-h">Agents and people, last ${traffic.period.days} days</h2>
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
</section>
<section aria-labelledby="install-h"><h2 id="install-h">Install the pixel</h2>
<p>The browser beacon sees people and browser agents; only the server-side feed sees AI crawlers, which run no scripts. Use both.</p>
<h3>In every page</h3>
<pre><code>${snippets.script}
${snippets.noscript}</code></pre>
<h3>Server-side feed (Express)</h3>
<pre><code>${snippets.express}</code></pre>
<h3>Server-side feed (nginx)</h3>
<pre><code>${snippets.nginx}</code></pre>
</section>
${findingsList(findings.findings, 'site-findings-h', `Findings for ${info.domain}`)}`;
    await send(
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

  router.post(
    '/sites',
    form,
    wrap(async (req, res) => {
      const session = await formSession(req, res);
      if (!session) return;
      try {
        const site = await call(installPixel, req, session, {
          domain: (req.body as Record<string, unknown>).domain,
        });
        res.redirect(303, `${base}/sites/${site.site_id}`);
      } catch (err) {
        await refusal(req, res, session, err);
      }
    }),
  );

  router.post(
    '/sites/:site_id/verify',
    form,
    wrap(async (req, res) => {
      const session = await formSession(req, res);
      if (!session) return;
      try {
        const result = await call(verifySite, req, session, { site_id: req.params.site_id });
        const row = await withOwnerScope(services, session.grant.accountId, (scope) =>
          scope.sites().selectAll('sites').where('sites.id', '=', result.site_id).executeTakeFirstOrThrow(),
        );
        const text = result.verified
          ? `${result.domain} is verified.`
          : `Not verified yet: ${result.checks.map((c) => `${c.method}: ${c.detail}`).join('; ')}`;
        await sitePage(req, res, session, row, { kind: result.verified ? 'done' : 'error', text });
      } catch (err) {
        await refusal(req, res, session, err);
      }
    }),
  );

  router.post(
    '/keys',
    form,
    wrap(async (req, res) => {
      const session = await formSession(req, res);
      if (!session) return;
      const label = String((req.body as Record<string, unknown>).label ?? '').trim();
      let key: Awaited<ReturnType<typeof createServiceKey.handler>>;
      try {
        key = await call(createServiceKey, req, session, label ? { label } : {});
      } catch (err) {
        await refusal(req, res, session, err);
        return;
      }
      await send(req, res, {
        path: DASHBOARD_PATH,
        title: 'Your new service key',
        description: 'A new service key, shown once.',
        body: html`<h1>Your new service key</h1>
<p role="status">Copy it now: it is shown only once. Only its digest is kept.</p>
<p class="card"><code data-testid="new-key">${key.service_key}</code></p>
<p>Label: ${key.label ?? 'none'}. Send it as the <code>x-service-key</code> header.</p>
<p><a href="${base}">Back to your dashboard</a></p>`,
        markdown: '# Your new service key\n\nShown once in the HTML page.\n',
      });
    }),
  );

  router.post(
    '/keys/:key_id/revoke',
    form,
    wrap(async (req, res) => {
      const session = await formSession(req, res);
      if (!session) return;
      try {
        await call(revokeServiceKey, req, session, { key_id: req.params.key_id });
        res.redirect(303, `${base}#keys-h`);
      } catch (err) {
        await refusal(req, res, session, err);
      }
    }),
  );

  router.post(
    '/clients/:grant_id/revoke',
    form,
    wrap(async (req, res) => {
      const session = await formSession(req, res);
      if (!session) return;
      if (req.params.grant_id === session.grant.grantId) {
        await overview(
          req,
          res,
          session,
          { kind: 'error', text: 'Sign out to end this dashboard session.' },
          400,
        );
        return;
      }
      try {
        await call(revokeConnectedClient, req, session, { grant_id: req.params.grant_id });
        res.redirect(303, `${base}#clients-h`);
      } catch (err) {
        await refusal(req, res, session, err);
      }
    }),
  );

  const outer = express.Router();
  outer.use(DASHBOARD_PATH, router);
  return outer;
}
