/**
 * The public pages of `{site_url}` (issue 14 section 2): `/leaderboard`, `/scan/{domain}`, `/souls`,
 * `/souls/{agent_id}`, `/robot-soul`, `/agent-requests`, `/docs`, and the stylesheet. Each page reads its data by
 * invoking the same operations as the JSON endpoints (`invokeOperation`: validation, output
 * contract), renders HTML in the shared layout with escaping by default, and answers Markdown
 * for `Accept: text/markdown` (negotiate.ts).
 */
import express, { type Request, type RequestHandler, type Response } from 'express';
import type { z } from 'zod';
import { requestInfo } from '../adapters/rest.ts';
import { ServiceError } from '../errors.ts';
import { getFeatured } from '../features/catalog/featured-bid/operations.ts';
import { getAgentHub } from '../features/directory/operations.ts';
import { AGENT_REQUESTS_PATH } from '../features/returns/brand-guide.ts';
import { getScanDiff } from '../features/scans/history-operations.ts';
import type { ScanDiff } from '../features/scans/history-schemas.ts';
import { getLeaderboard, getScanScore } from '../features/scans/operations.ts';
import type { ScanScore } from '../features/scans/schemas.ts';
import { getSoul, listSoulMemories, searchSouls } from '../features/souls/operations.ts';
import { type AnyOperation, CallContext, invokeOperation, type Operation } from '../operation.ts';
import type { Services } from '../services.ts';
import { agentRequestsPage } from './agent-requests.ts';
import { componentBars, scoreGauge, trafficCategories, trafficChart } from './charts.ts';
import { docsRouter } from './docs.ts';
import { html } from './html.ts';
import { layout, pageCsp, STYLESHEET_PATH, stylesheet } from './layout.ts';
import { agentHubBody, featuredBody, sendWithFeaturedBrand } from './marketplace.ts';
import type { RenderedPage } from './negotiate.ts';
import { robotSoulPage } from './robot-soul.ts';
import { scanChangesMarkdown, scanChangesSection } from './scan-changes.ts';

/** The HTML pages of section 2 with a fixed path (for the sitemap and the link crawl). */
export const publicPagePaths = [
  '/leaderboard',
  '/agenthub',
  '/featured',
  '/souls',
  '/robot-soul',
  '/agent-requests',
  '/docs',
] as const;

const md = (text: string) => text.replace(/([\\`*_[\]<>|])/g, '\\$1');

const severityOrder = ['critical', 'warning', 'info'] as const;
const severityTitle = { critical: 'Critical', warning: 'Warnings', info: 'Notes' } as const;

export function publicPagesRouter(services: Services, operations: readonly AnyOperation[]): RequestHandler {
  const { config } = services;
  const site = config.site_url;
  const router = express.Router({ strict: false });
  const csp = pageCsp(config);
  const chartCsp = pageCsp(config, { svgCharts: true });

  /** Invokes an operation for a page, as the REST adapter does for its JSON endpoint. */
  async function call<I extends z.ZodType, O extends z.ZodType>(
    op: Operation<I, O>,
    req: Request,
    input: unknown,
  ): Promise<z.output<O>> {
    const controller = new AbortController();
    return invokeOperation(
      op,
      new CallContext(
        { services, operations, request: requestInfo(req, 'rest'), signal: controller.signal },
        () => req.log,
      ),
      input,
    );
  }

  const page = (
    req: Request,
    res: Response,
    p: {
      path: string;
      title: string;
      description: string;
      body: ReturnType<typeof html>;
      markdown: string;
      charts?: boolean;
    },
    status = 200,
  ) => {
    const rendered: RenderedPage = {
      html: layout({ config, path: p.path, title: p.title, description: p.description, body: p.body }),
      markdown: p.markdown,
      csp: p.charts ? chartCsp : csp,
    };
    res.status(status);
    return sendWithFeaturedBrand(services, req, res, rendered);
  };

  /** A 404 or 400 as a page (problem details stay for the JSON endpoints). */
  function problemPage(req: Request, res: Response, error: unknown, path: string): Promise<void> {
    if (!(error instanceof ServiceError) || error.status >= 500) throw error;
    const detail = error.expose ? error.message : error.title;
    return page(
      req,
      res,
      {
        path,
        title: error.title,
        description: detail,
        body: html`<h1>${error.title}</h1><p>${detail}</p><p><a href="${site}/">Back to the home page</a></p>`,
        markdown: `# ${error.title}\n\n${detail}\n`,
      },
      error.status,
    );
  }

  const wrap =
    (handler: (req: Request, res: Response) => Promise<void>): RequestHandler =>
    (req, res, next) => {
      handler(req, res).catch(next);
    };

  router.get(STYLESHEET_PATH, (_req, res) => {
    res.set('Cache-Control', 'public, max-age=3600').type('text/css; charset=utf-8').send(stylesheet);
  });

  router.get(
    '/leaderboard',
    wrap(async (req, res) => {
      const cursor = typeof req.query.cursor === 'string' ? req.query.cursor : undefined;
      let board: Awaited<ReturnType<typeof getLeaderboard.handler>>;
      try {
        board = await call(getLeaderboard, req, { limit: 50, ...(cursor ? { cursor } : {}) });
      } catch (error) {
        await problemPage(req, res, error, '/leaderboard');
        return;
      }
      const movement = (m: (typeof board.entries)[number]['movement']) =>
        m.previous_rank === null
          ? html`<span class="new">new</span>`
          : m.rank_change
            ? m.rank_change > 0
              ? html`<span class="up">▲ ${m.rank_change}</span>`
              : html`<span class="down">▼ ${-m.rank_change}</span>`
            : html`<span class="muted">=</span>`;
      const sinceLastScan = (m: (typeof board.entries)[number]['movement']) =>
        m.since_last_scan === null
          ? ''
          : html` <a class="muted" href="${m.since_last_scan.diff_url}" data-testid="since-last-scan">(${m.since_last_scan.score_change > 0 ? '+' : ''}${m.since_last_scan.score_change} since the last scan)</a>`;
      const body = html`<h1>Signal Strength leaderboard</h1>
<p>Public domains by agent-readiness score, highest first. Movement is measured since the start of the current period (${board.period}, UTC), and against each domain's previous scan. Tiers: Dark 0-24, Faint 25-49, Emerging 50-69, Strong 70-84, Beacon 85-100. The same data as JSON: <a href="${config.public_api_url}/leaderboard">${config.public_api_url}/leaderboard</a>.</p>
${
  board.spotlight.length
    ? html`<section class="card" aria-labelledby="spotlight-h"><h2 id="spotlight-h">Spotlight <span class="sponsored">Sponsored</span></h2>
<p class="muted">Paid placements, apart from the ranking, which they do not affect.</p>
<ul>${board.spotlight.map(
        (s) =>
          html`<li><a href="${s.url}" rel="sponsored">${s.business_name ?? s.domain}</a>${s.blurb ? html`: ${s.blurb}` : ''}</li>`,
      )}</ul></section>`
    : ''
}
<h2>Ranking</h2>
${
  board.entries.length === 0
    ? html`<p class="card">No public scans yet. Scan a domain with <code>POST ${config.public_api_url}/scans</code>.</p>`
    : html`<table>
<caption class="muted">Ranking for ${board.period}</caption>
<thead><tr><th scope="col" class="num">Rank</th><th scope="col">Domain</th><th scope="col" class="num">Score</th><th scope="col">Tier</th><th scope="col">Movement</th><th scope="col">Scanned</th></tr></thead>
<tbody>
${board.entries.map(
  (
    e,
  ) => html`<tr><td class="num">${e.rank}</td><td><a href="${site}/scan/${encodeURIComponent(e.domain)}">${e.domain}</a></td><td class="num">${e.score}</td><td><span class="tier tier-${e.tier}">${e.tier}</span></td><td>${movement(e.movement)}${sinceLastScan(e.movement)}</td><td>${e.scanned_at.slice(0, 10)} <span class="muted">(${e.depth})</span></td></tr>
`,
)}</tbody></table>`
}
${board.next_cursor ? html`<p><a href="${site}/leaderboard?cursor=${encodeURIComponent(board.next_cursor)}">Next page</a></p>` : ''}
<section aria-labelledby="how-h"><h2 id="how-h">How Signal Strength is measured</h2>
<p>Signal Strength is a score from 0 to 100 of how ready a website is for AI agents: whether agents may read it, whether they can find what it offers, and whether they actually come. Our crawler reads the site the way an agent does and scores five components; the overall score is their weighted sum, and a component with nothing to judge is left out and the others renormalized.</p>
<ul>
<li><strong>Technical Foundation</strong> (30%): robots.txt with rules for AI agents and a Content-Signal, a sitemap, HTTPS, Markdown on request, and the discovery documents an agent looks for - an RFC 9727 API catalog, OAuth metadata, an MCP server card, an OpenAPI description, x402 payment terms.</li>
<li><strong>Live AI Traffic</strong> (20%): from the site's own traffic pixel, the share of visits that are AI agents, how many distinct agents come, and people referred by AI assistants.</li>
<li><strong>Content Depth</strong> (20%): readable HTML pages with real text, titles, headings, descriptions, and a full llms-full.txt.</li>
<li><strong>Citation Signals</strong> (20%): a valid llms.txt, schema.org JSON-LD naming the publisher, products or FAQs, OpenGraph, canonical URLs and an ai.txt.</li>
<li><strong>Engagement Velocity</strong> (10%): whether AI traffic and the score are growing from one scan to the next.</li>
</ul>
<p>Any site can be scanned for free with <code>POST ${config.public_api_url}/scans</code> or the <code>request_scan</code> tool of the MCP server; public results appear here, ranked by score with ties broken by domain name. Each entry links to its full report with the findings and how to fix them.</p>
</section>`;
      const spotlightMd = board.spotlight.length
        ? `## Spotlight (sponsored)\n\n${board.spotlight.map((s) => `- [${md(s.business_name ?? s.domain)}](${s.url})`).join('\n')}\n\n`
        : '';
      const markdown = `# Signal Strength leaderboard\n\nPeriod: ${board.period}\n\n${spotlightMd}| Rank | Domain | Score | Tier | Rank change |\n|---|---|---|---|---|\n${board.entries
        .map(
          (e) =>
            `| ${e.rank} | [${md(e.domain)}](${site}/scan/${encodeURIComponent(e.domain)}) | ${e.score} | ${e.tier} | ${e.movement.previous_rank === null ? 'new' : (e.movement.rank_change ?? 0)} |`,
        )
        .join('\n')}\n`;
      await page(req, res, {
        path: '/leaderboard',
        title: 'Signal Strength leaderboard',
        description: 'Public domains ranked by agent-readiness (Signal Strength), with movement and tiers.',
        body,
        markdown,
      });
    }),
  );

  /** What changed since the previous complete scan; null when the scan is the domain's first. */
  async function previousChanges(req: Request, scanId: string): Promise<ScanDiff | null> {
    try {
      return await call(getScanDiff, req, { scan_id: scanId });
    } catch (error) {
      if (error instanceof ServiceError && error.code === 'no_earlier_scan') return null;
      throw error;
    }
  }

  router.get(
    '/scan/:domain',
    wrap(async (req, res) => {
      const path = `/scan/${encodeURIComponent(String(req.params.domain))}`;
      let score: ScanScore;
      try {
        score = await call(getScanScore, req, { domain: req.params.domain });
      } catch (error) {
        await problemPage(req, res, error, path);
        return;
      }
      const traffic = await publicTraffic(services, score.domain);
      const diffUrl = `${config.public_api_url}/scans/${score.scan_id}/diff`;
      const changes = await previousChanges(req, score.scan_id);
      const grouped = severityOrder
        .map((severity) => ({ severity, findings: score.findings.filter((f) => f.severity === severity) }))
        .filter((g) => g.findings.length > 0);
      const componentName = new Map(score.components.map((c) => [c.id, c.name]));
      const fixSheetUrl = `${config.public_api_url}/scans/${score.scan_id}/fixes.md`;
      const body = html`<h1>Agent-readiness report: ${score.domain}</h1>
<p>Latest public ${score.depth} scan, ${score.scanned_at.slice(0, 16).replace('T', ' ')} UTC. The same data as JSON: <a href="${config.public_api_url}/scan-score?domain=${encodeURIComponent(score.domain)}">GET /scan-score</a>.</p>
<div class="grid">
<section class="card" aria-labelledby="score-h"><h2 id="score-h">Signal Strength</h2>
${scoreGauge(score.score, score.tier.name)}
<p><strong data-testid="score">${score.score}</strong>/100, tier <span class="tier tier-${score.tier.id}" data-testid="tier">${score.tier.name}</span> (${score.tier.min}-${score.tier.max}).</p>
${score.note ? html`<p class="muted">${score.note}</p>` : ''}
<p>Scored as a <strong data-testid="profile">${score.profile.id}</strong> site${score.profile.source === 'requested' ? html` (detected: ${score.profile.detected})` : ''}, scoring version ${score.scoring_version}.</p>
${
  score.next_level
    ? html`<p data-testid="next-level">Next tier: <strong>${score.next_level.tier.name}</strong> (${score.next_level.points_needed} point(s) to go), by passing ${score.next_level.checks.map((c) => c.title).join('; ')}.</p>`
    : ''
}
</section>
<section class="card" aria-labelledby="components-h"><h2 id="components-h">The five components</h2>
${componentBars(score.components.map((c) => ({ name: c.name, score: c.score })))}
<table><thead><tr><th scope="col">Component</th><th scope="col" class="num">Weight</th><th scope="col" class="num">Score</th></tr></thead><tbody>
${score.components.map(
  (c) =>
    html`<tr data-component="${c.id}"><td>${c.name}</td><td class="num">${c.weight}</td><td class="num">${c.score === null ? 'no data' : c.score}</td></tr>
`,
)}</tbody></table>
</section>
</div>
${scanChangesSection(changes, diffUrl)}
<section aria-labelledby="findings-h"><h2 id="findings-h">Findings and fixes</h2>
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
</section>
${
  traffic
    ? html`<section aria-labelledby="traffic-h"><h2 id="traffic-h">Agents and people on ${score.domain}</h2>
<p>From the site's traffic pixel over the last ${traffic.days.length} days (the owner shares these figures): ${traffic.totals.ai_agents} AI agent events, ${traffic.totals.human} human, ${traffic.totals.other_bots} other bots.</p>
${trafficChart(traffic.days, trafficCategories)}
</section>`
    : ''
}
<section aria-labelledby="checks-h"><h2 id="checks-h">Checks behind each component</h2>
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
</section>
<p><a href="${site}/leaderboard">Back to the leaderboard</a></p>`;
      const markdown = `# Agent-readiness report: ${score.domain}\n\nSignal Strength: ${score.score}/100 (${score.tier.name}), ${score.depth} scan at ${score.scanned_at}, scored as a ${score.profile.id} site (scoring version ${score.scoring_version}). Fix sheet: ${fixSheetUrl}\n\n## Components\n\n${score.components
        .map((c) => `- ${c.name}: ${c.score === null ? 'no data' : c.score}`)
        .join('\n')}\n\n## Findings\n\n${score.findings
        .map((f) => `- **${f.severity}** (${f.component}): ${md(f.seen)} Fix: ${md(f.fix)}`)
        .join('\n')}\n\n${scanChangesMarkdown(changes, md)}`;
      await page(req, res, {
        path,
        title: `${score.domain}: Signal Strength ${score.score}`,
        description: `Agent-readiness report of ${score.domain}: ${score.score}/100, ${score.tier.name}.`,
        body,
        markdown,
        charts: true,
      });
    }),
  );

  router.get(
    '/souls',
    wrap(async (req, res) => {
      const q = typeof req.query.q === 'string' ? req.query.q : '';
      const cursor = typeof req.query.cursor === 'string' ? req.query.cursor : undefined;
      let result: Awaited<ReturnType<typeof searchSouls.handler>>;
      try {
        result = await call(searchSouls, req, {
          ...(q.trim() ? { q } : {}),
          ...(cursor ? { cursor } : {}),
        });
      } catch (error) {
        await problemPage(req, res, error, '/souls');
        return;
      }
      const next = result.next_cursor
        ? `${site}/souls?${new URLSearchParams({ ...(q ? { q } : {}), cursor: result.next_cursor })}`
        : null;
      const body = html`<h1>Soul registry</h1>
<p>Registered souls: permanent, verifiable agent identities bound to a key the agent holds. How to register one: <a href="${site}/robot-soul">the robot soul API</a>.</p>
<form class="search" method="get" action="${site}/souls" role="search">
<label for="q">Handle or name</label>
<input id="q" name="q" type="search" value="${q}" maxlength="100">
<button type="submit">Search</button>
</form>
<h2>${q ? html`Souls matching “${q}”` : 'Registered souls'}</h2>
${
  result.souls.length === 0
    ? html`<p class="card">${q ? html`No soul matches “${q}”.` : 'No soul is registered yet.'}</p>`
    : html`<ul>
${result.souls.map(
  (s) =>
    html`<li class="card"><a href="${site}/souls/${encodeURIComponent(s.agent_id)}"><strong>${s.name}</strong></a> <code>@${s.handle}</code>${s.status === 'retired' ? html` <span class="muted">(retired)</span>` : ''}<br>${s.description}<br><span class="muted">Registered ${s.created_at.slice(0, 10)}</span></li>
`,
)}</ul>`
}
${next ? html`<p><a href="${next}">More souls</a></p>` : ''}
<section aria-labelledby="about-h"><h2 id="about-h">What a soul is</h2>
<p>A soul gives an AI agent an identity that outlives any one conversation, model or host. It is bound to a key pair the agent holds: the <code>agent_id</code> is the thumbprint of the first public key, so anyone can check that a signed message comes from the soul it claims, and the identity survives key rotation because each new key is signed by the old one. Every soul has a public identity document with its profile, endpoints (MCP, A2A, web) and keys, and an append-only memory log whose entries are chained by SHA-256 digests, so readers can verify that nothing was removed or rewritten.</p>
<p>Souls can be linked to an ERC-8004 identity on chain, listed in the agent directory, and written to by anyone who pays for a memory or validation with x402. Registration takes two calls and no account; the <a href="${site}/robot-soul">robot soul documentation</a> shows a script that registers a soul against this deployment.</p>
</section>`;
      const markdown = `# Soul registry\n\n${result.souls
        .map(
          (s) =>
            `- [${md(s.name)}](${site}/souls/${encodeURIComponent(s.agent_id)}) @${s.handle}: ${md(s.description)}`,
        )
        .join('\n')}\n`;
      await page(req, res, {
        path: '/souls',
        title: 'Soul registry',
        description: 'Registered agent identities (souls), searchable by handle or name.',
        body,
        markdown,
      });
    }),
  );

  router.get(
    '/souls/:agent_id',
    wrap(async (req, res) => {
      const agentId = String(req.params.agent_id);
      const path = `/souls/${encodeURIComponent(agentId)}`;
      let soul: Awaited<ReturnType<typeof getSoul.handler>>;
      let memories: Awaited<ReturnType<typeof listSoulMemories.handler>>;
      try {
        soul = await call(getSoul, req, { agent_id: agentId });
        memories = await call(listSoulMemories, req, { agent_id: agentId });
      } catch (error) {
        await problemPage(req, res, error, path);
        return;
      }
      const p = soul.profile;
      const endpoints = Object.entries(p.endpoints).filter(([, v]) => v) as Array<[string, string]>;
      const body = html`<h1>${p.name} <code>@${soul.handle}</code></h1>
<p>${p.description}</p>
<dl class="facts">
<dt>agent_id</dt><dd><code>${soul.agent_id}</code></dd>
<dt>Status</dt><dd>${soul.status}${soul.retired_at ? ` since ${soul.retired_at.slice(0, 10)}` : ''}</dd>
<dt>Registered</dt><dd>${soul.created_at.slice(0, 10)}</dd>
<dt>Linked account</dt><dd>${soul.linked_account ? 'yes' : 'no'}</dd>
${p.operator?.name ? html`<dt>Operator</dt><dd>${p.operator.name}</dd>` : ''}
${endpoints.map(([k, v]) => html`<dt>${k.toUpperCase()} endpoint</dt><dd><code>${v}</code></dd>`)}
<dt>Memories</dt><dd>${soul.memory_counts.episodic} episodic, ${soul.memory_counts.semantic} semantic</dd>
<dt>Log head</dt><dd>${soul.head ? html`#${soul.head.sequence} <code>${soul.head.digest}</code>` : 'empty'}</dd>
<dt>Validations</dt><dd>${soul.validations.count}</dd>
<dt>Identity document</dt><dd><a href="${soul.urls.document}">${soul.urls.document}</a></dd>
<dt>ERC-8004 registration</dt><dd><a href="${soul.urls.erc8004_registration}">${soul.urls.erc8004_registration}</a></dd>
</dl>
<h2>Keys</h2>
<table><thead><tr><th scope="col">Thumbprint</th><th scope="col">Valid from</th><th scope="col">Valid until</th></tr></thead><tbody>
${soul.keys.map((k) => html`<tr><td><code>${k.thumbprint}</code></td><td>${k.valid_from.slice(0, 19)}</td><td>${k.valid_until ? k.valid_until.slice(0, 19) : 'current'}</td></tr>`)}
</tbody></table>
<h2>Memory log</h2>
${
  memories.memories.length === 0
    ? html`<p>No memories yet.</p>`
    : html`<ol>
${memories.memories.map(
  (m) =>
    html`<li value="${m.sequence}"><span class="muted">${m.recorded_at.slice(0, 19)} · ${m.layer} ${m.kind} · by ${m.writer.kind}</span><br>${m.content}</li>
`,
)}</ol>`
}
<p><a href="${site}/souls">Back to the registry</a></p>`;
      const markdown = `# ${md(p.name)} (@${soul.handle})\n\n${md(p.description)}\n\n- agent_id: ${soul.agent_id}\n- status: ${soul.status}\n- identity document: ${soul.urls.document}\n\n## Memories\n\n${memories.memories
        .map((m) => `${m.sequence}. ${md(m.content)}`)
        .join('\n')}\n`;
      await page(req, res, {
        path,
        title: `${p.name} (@${soul.handle})`,
        description: p.description.slice(0, 200),
        body,
        markdown,
      });
    }),
  );

  const robotSoul = robotSoulPage(config);
  router.get(
    '/robot-soul',
    wrap((req, res) => sendWithFeaturedBrand(services, req, res, { ...robotSoul, csp })),
  );

  const agentRequests = agentRequestsPage(config);
  router.get(
    AGENT_REQUESTS_PATH,
    wrap((req, res) => sendWithFeaturedBrand(services, req, res, { ...agentRequests, csp })),
  );

  router.get(
    '/featured',
    wrap(async (req, res) => {
      const slot = await call(getFeatured, req, {});
      await page(req, res, {
        path: '/featured',
        title: 'The Featured Brand slot',
        description: 'Who holds the Featured Brand slot, the bid history, and how to bid with x402.',
        ...featuredBody(config, slot),
      });
    }),
  );

  router.get(
    '/agenthub',
    wrap(async (req, res) => {
      const hub = await call(getAgentHub, req, {});
      await page(req, res, {
        path: '/agenthub',
        title: 'Agent hub',
        description: 'The storefront: featured and spotlight placements, top listings, categories.',
        ...agentHubBody(config, hub),
      });
    }),
  );

  router.use(docsRouter(services, operations));
  return router;
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
