/**
 * `/leaderboard`: the public ranking by Signal Strength, from GET /leaderboard, with the sponsored
 * spotlight kept apart from it and how the score is measured.
 */
import type { Request, Response } from 'express';
import type { Config } from '../config.ts';
import { getLeaderboard } from '../features/scans/operations.ts';
import { type Html, html } from './html.ts';
import { md, type PageKit } from './page-kit.ts';

type Board = Awaited<ReturnType<typeof getLeaderboard.handler>>;
type Movement = Board['entries'][number]['movement'];

export async function leaderboardPage(kit: PageKit, req: Request, res: Response): Promise<void> {
  const cursor = typeof req.query.cursor === 'string' ? req.query.cursor : undefined;
  let board: Board;
  try {
    board = await kit.call(getLeaderboard, req, { limit: 50, ...(cursor ? { cursor } : {}) });
  } catch (error) {
    await kit.problemPage(req, res, error, '/leaderboard');
    return;
  }
  await kit.page(req, res, {
    path: '/leaderboard',
    title: 'Signal Strength leaderboard',
    description: 'Public domains ranked by agent-readiness (Signal Strength), with movement and tiers.',
    body: leaderboardBody(kit.config, board),
    markdown: leaderboardMarkdown(kit.site, board),
  });
}

function leaderboardBody(config: Config, board: Board): Html {
  const site = config.site_url;
  return html`<h1>Signal Strength leaderboard</h1>
<p>Public domains by agent-readiness score, highest first. Movement is measured since the start of the current period (${board.period}, UTC), and against each domain's previous scan. Tiers: Dark 0-24, Faint 25-49, Emerging 50-69, Strong 70-84, Beacon 85-100. The same data as JSON: <a href="${config.public_api_url}/leaderboard">${config.public_api_url}/leaderboard</a>.</p>
${spotlight(board)}
<h2>Ranking</h2>
${ranking(config, board)}
${board.next_cursor ? html`<p><a href="${site}/leaderboard?cursor=${encodeURIComponent(board.next_cursor)}">Next page</a></p>` : ''}
${howMeasured(config)}`;
}

/** The paid placements, shown apart from the ranking they do not affect. */
function spotlight(board: Board): Html | '' {
  return board.spotlight.length
    ? html`<section class="card" aria-labelledby="spotlight-h"><h2 id="spotlight-h">Spotlight <span class="sponsored">Sponsored</span></h2>
<p class="muted">Paid placements, apart from the ranking, which they do not affect.</p>
<ul>${board.spotlight.map(
        (s) =>
          html`<li><a href="${s.url}" rel="sponsored">${s.business_name ?? s.domain}</a>${s.blurb ? html`: ${s.blurb}` : ''}</li>`,
      )}</ul></section>`
    : '';
}

function ranking(config: Config, board: Board): Html {
  const site = config.site_url;
  return board.entries.length === 0
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
)}</tbody></table>`;
}

/** Rank movement since the start of the period. */
const movement = (m: Movement): Html =>
  m.previous_rank === null
    ? html`<span class="new">new</span>`
    : m.rank_change
      ? m.rank_change > 0
        ? html`<span class="up">▲ ${m.rank_change}</span>`
        : html`<span class="down">▼ ${-m.rank_change}</span>`
      : html`<span class="muted">=</span>`;

/** Score change against the domain's previous scan, linked to the diff. */
const sinceLastScan = (m: Movement): Html | '' =>
  m.since_last_scan === null
    ? ''
    : html` <a class="muted" href="${m.since_last_scan.diff_url}" data-testid="since-last-scan">(${m.since_last_scan.score_change > 0 ? '+' : ''}${m.since_last_scan.score_change} since the last scan)</a>`;

function howMeasured(config: Config): Html {
  return html`<section aria-labelledby="how-h"><h2 id="how-h">How Signal Strength is measured</h2>
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
}

function leaderboardMarkdown(site: string, board: Board): string {
  const spotlightMd = board.spotlight.length
    ? `## Spotlight (sponsored)\n\n${board.spotlight.map((s) => `- [${md(s.business_name ?? s.domain)}](${s.url})`).join('\n')}\n\n`
    : '';
  return `# Signal Strength leaderboard\n\nPeriod: ${board.period}\n\n${spotlightMd}| Rank | Domain | Score | Tier | Rank change |\n|---|---|---|---|---|\n${board.entries
    .map(
      (e) =>
        `| ${e.rank} | [${md(e.domain)}](${site}/scan/${encodeURIComponent(e.domain)}) | ${e.score} | ${e.tier} | ${e.movement.previous_rank === null ? 'new' : (e.movement.rank_change ?? 0)} |`,
    )
    .join('\n')}\n`;
}
