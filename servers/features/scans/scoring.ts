/**
 * Signal Strength: a 0-100 score from five components (SPEC "What each SKU delivers", scan), each
 * 0-100 from weighted checks. The checks, their weights, the tiers and the no-data rule are
 * documented in SCORING.md at the repository root; this file is their only implementation and the
 * two must change together (a unit test pins the weights against SCORING.md).
 *
 * No-data rule: a check that has nothing to judge (traffic without a pixel, a trend without a
 * previous scan) scores `null`, not zero. A component whose checks are all `null` reports
 * `status: "no_data"` and `score: null`; the overall score is then the weighted mean of the
 * components that have data, weights renormalized, and `note` says which were left out.
 */

import { organizationTypes } from './collectors/page.ts';
import { aiAgents } from './collectors/robots.ts';
import type { SiteFacts } from './crawler.ts';

/**
 * Live traffic of a site that has the pixel (and server-side ingestion) installed, over the last
 * `window_days`. Supplied by the sites feature through `LiveTrafficProvider`; `null` means the site
 * has no pixel, so Live AI Traffic has no data.
 */
export interface LiveTraffic {
  window_days: number;
  /** Every recorded request or page view in the window. */
  events: number;
  /** Those made by AI agents (crawlers, AI search, user-triggered agents, browser agents). */
  ai_events: number;
  /** ai_events / events, 0..1. */
  ai_share: number;
  /** Distinct AI agents seen (product names such as `GPTBot`, `ChatGPT-User`). */
  agents_seen: string[];
  /** Human visits referred by AI assistants (chatgpt.com, perplexity.ai, claude.ai ...). */
  ai_referrals: number;
  /** The same counts over the window before, when known, for Engagement Velocity. */
  previous_ai_events: number | null;
  previous_ai_referrals: number | null;
  last_event_at: string | null;
}

export type LiveTrafficProvider = (domain: string) => Promise<LiveTraffic | null>;

/** The score of the domain's previous full scan, for Engagement Velocity. */
export interface ScoreHistory {
  score: number;
  scanned_at: string;
}

export type ComponentId =
  | 'technical_foundation'
  | 'live_ai_traffic'
  | 'content_depth'
  | 'citation_signals'
  | 'engagement_velocity';

export type Severity = 'critical' | 'warning' | 'info';

export interface Finding {
  id: string;
  component: ComponentId;
  severity: Severity;
  seen: string;
  fix: string;
  evidence_url: string | null;
}

export interface CheckResult {
  id: string;
  title: string;
  weight: number;
  /** 0..1, or null when there was nothing to judge. */
  score: number | null;
  seen: string;
}

export interface ComponentResult {
  id: ComponentId;
  name: string;
  weight: number;
  status: 'scored' | 'no_data';
  score: number | null;
  checks: CheckResult[];
}

export interface Tier {
  id: 'dark' | 'faint' | 'emerging' | 'strong' | 'beacon';
  name: string;
  min: number;
  max: number;
}

export interface SignalScore {
  score: number;
  tier: Tier;
  components: ComponentResult[];
  /** Set when components without data were left out and the weights renormalized. */
  note: string | null;
  findings: Finding[];
  recommended_next_tools: string[];
}

/** Tiers by overall score, highest first (SCORING.md "Tiers"). */
/**
 * Live traffic counts only for a verified owner's site whose pixel or server feed has sent events
 * (`TrafficService.liveTraffic`): a pixel on the pages of an unverified or silent site is no data.
 */
const NO_PIXEL_DATA = 'no pixel data (no pixel, an unverified site, or no events yet)';

export const tiers: readonly Tier[] = [
  { id: 'beacon', name: 'Beacon', min: 85, max: 100 },
  { id: 'strong', name: 'Strong', min: 70, max: 84 },
  { id: 'emerging', name: 'Emerging', min: 50, max: 69 },
  { id: 'faint', name: 'Faint', min: 25, max: 49 },
  { id: 'dark', name: 'Dark', min: 0, max: 24 },
];

export function tierOf(score: number): Tier {
  return tiers.find((t) => score >= t.min) ?? (tiers.at(-1) as Tier);
}

/** Component weights in the overall score (SCORING.md "Components"). */
export const components: readonly { id: ComponentId; name: string; weight: number }[] = [
  { id: 'technical_foundation', name: 'Technical Foundation', weight: 30 },
  { id: 'live_ai_traffic', name: 'Live AI Traffic', weight: 20 },
  { id: 'content_depth', name: 'Content Depth', weight: 20 },
  { id: 'citation_signals', name: 'Citation Signals', weight: 20 },
  { id: 'engagement_velocity', name: 'Engagement Velocity', weight: 10 },
];

/**
 * Operations of this service a finding points to (their tool names; a test pins each to an
 * operation of the registry). `install_pixel` is POST /pixel-install, `generate_llms_txt` the
 * llms-txt SKU (llms.txt, llms-full.txt and ai.txt), `audit_entity` the entity consistency audit
 * SKU, `request_scan` a fresh scan after fixes.
 */
export const nextTools = {
  installPixel: 'install_pixel',
  llmsTxt: 'generate_llms_txt',
  entity: 'audit_entity',
  requestScan: 'request_scan',
} as const;

interface Inputs {
  facts: SiteFacts;
  traffic: LiveTraffic | null;
  previous: ScoreHistory | null;
}

interface Evaluation {
  score: number | null;
  seen: string;
  evidence_url?: string | null;
}

interface CheckDef {
  id: string;
  component: ComponentId;
  title: string;
  weight: number;
  severity: Severity;
  fix: string;
  /** Tools that help when the check falls short. */
  tools?: string[];
  evaluate: (inputs: Inputs) => Evaluation;
}

const clamp01 = (n: number) => Math.max(0, Math.min(1, n));
const pct = (n: number) => `${Math.round(n * 100)}%`;

function pageShare(
  facts: SiteFacts,
  predicate: (p: SiteFacts['pages'][number]) => boolean,
): Evaluation | null {
  if (facts.pages.length === 0) return null;
  const n = facts.pages.filter(predicate).length;
  return { score: n / facts.pages.length, seen: `${n} of ${facts.pages.length} page(s)` };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

const noPages: Evaluation = { score: 0, seen: 'no HTML page could be read' };

/** Every check, grouped by component in SCORING.md order. Weights within a component sum to 100. */
export const checks: readonly CheckDef[] = [
  // Technical Foundation: can agents reach, read and use the site.
  {
    id: 'robots_txt',
    component: 'technical_foundation',
    title: 'robots.txt is served',
    weight: 10,
    severity: 'warning',
    fix: 'Serve /robots.txt as text/plain with explicit groups for the crawlers you want (RFC 9309).',
    evaluate: ({ facts }) => ({
      score: facts.robots.present ? 1 : 0,
      seen: facts.robots.present ? 'robots.txt found' : 'no robots.txt',
      evidence_url: facts.robots.url,
    }),
  },
  {
    id: 'robots_ai_rules',
    component: 'technical_foundation',
    title: 'robots.txt names AI agents',
    weight: 10,
    severity: 'info',
    fix: 'Add User-agent groups for AI agents (GPTBot, OAI-SearchBot, ClaudeBot, PerplexityBot, Google-Extended ...) stating what each may fetch.',
    evaluate: ({ facts }) => {
      const named = facts.robots.agents.filter((a) => a.named).map((a) => a.token);
      return {
        score: clamp01(named.length / 4),
        seen: named.length ? `groups for ${named.join(', ')}` : 'no group names an AI agent',
        evidence_url: facts.robots.url,
      };
    },
  },
  {
    id: 'ai_search_access',
    component: 'technical_foundation',
    title: 'AI search and user-triggered agents may fetch the site',
    weight: 15,
    severity: 'critical',
    fix: 'Allow AI search and user-triggered agents (OAI-SearchBot, ChatGPT-User, Claude-SearchBot, Claude-User, PerplexityBot, Perplexity-User) at / so answers can cite you; training crawlers can stay blocked.',
    evaluate: ({ facts }) => {
      const relevant = facts.robots.agents.filter(
        (a) => aiAgents.find((d) => d.token === a.token)?.category !== 'training',
      );
      const blocked = relevant.filter((a) => !a.allowed_root).map((a) => a.token);
      return {
        score: relevant.length ? (relevant.length - blocked.length) / relevant.length : 1,
        seen: blocked.length
          ? `blocked at /: ${blocked.join(', ')}`
          : 'all AI search and user agents allowed at /',
        evidence_url: facts.robots.url,
      };
    },
  },
  {
    id: 'content_signals',
    component: 'technical_foundation',
    title: 'Content-Signal preferences are declared',
    weight: 5,
    severity: 'info',
    fix: 'State how content may be used with a Content-Signal line in robots.txt, e.g. "Content-Signal: search=yes, ai-input=yes, ai-train=no" (contentsignals.org).',
    evaluate: ({ facts }) => {
      const n = facts.robots.content_signals.length;
      return {
        score: n > 0 ? 1 : 0,
        seen: n
          ? `Content-Signal: ${facts.robots.content_signals.map((c) => c.raw).join(' | ')}`
          : 'no Content-Signal line',
        evidence_url: facts.robots.url,
      };
    },
  },
  {
    id: 'sitemap',
    component: 'technical_foundation',
    title: 'An XML sitemap lists the pages',
    weight: 10,
    severity: 'warning',
    fix: 'Publish /sitemap.xml (or a sitemap index) and reference it with a Sitemap: line in robots.txt.',
    evaluate: ({ facts }) => ({
      score:
        facts.sitemap.urls_found > 0 ? 1 : facts.sitemap.documents.some((d) => d.kind === 'index') ? 0.5 : 0,
      seen: facts.sitemap.urls_found
        ? `${facts.sitemap.urls_found} URL(s) in ${facts.sitemap.documents.length} sitemap document(s)`
        : (facts.sitemap.documents[0]?.note ?? 'no sitemap'),
      evidence_url: facts.sitemap.documents[0]?.url ?? null,
    }),
  },
  {
    id: 'markdown_negotiation',
    component: 'technical_foundation',
    title: 'Pages are served as markdown on request',
    weight: 15,
    severity: 'warning',
    fix: 'Answer requests with "Accept: text/markdown" with a markdown rendering of the page (Content-Type: text/markdown), and send Vary: Accept.',
    evaluate: ({ facts }) => ({
      score: facts.markdown.supported ? 1 : 0,
      seen: facts.markdown.supported
        ? 'text/markdown returned'
        : `Accept: text/markdown ${facts.markdown.note ?? 'not honoured'}`,
      evidence_url: facts.markdown.url,
    }),
  },
  {
    id: 'https',
    component: 'technical_foundation',
    title: 'Served over HTTPS',
    weight: 5,
    severity: 'warning',
    fix: 'Serve the site over HTTPS and redirect http:// to it.',
    evaluate: ({ facts }) => ({
      score: facts.https ? 1 : 0,
      seen: facts.https ? 'https' : 'served over plain http',
      evidence_url: `${facts.origin}/`,
    }),
  },
  {
    id: 'api_catalog',
    component: 'technical_foundation',
    title: 'API catalog (RFC 9727)',
    weight: 10,
    severity: 'info',
    fix: 'Publish /.well-known/api-catalog as an application/linkset+json linkset pointing at your API descriptions (service-desc) and docs.',
    evaluate: ({ facts }) => discoveryEvaluation(facts.discovery.api_catalog, 'api-catalog'),
  },
  {
    id: 'oauth_discovery',
    component: 'technical_foundation',
    title: 'OAuth discovery metadata',
    weight: 5,
    severity: 'info',
    fix: 'If agents sign in, publish /.well-known/oauth-protected-resource (RFC 9728) and /.well-known/oauth-authorization-server (RFC 8414).',
    evaluate: ({ facts }) => {
      const prm = facts.discovery.oauth_protected_resource;
      const asm = facts.discovery.oauth_authorization_server;
      const score = (prm.valid ? 0.5 : 0) + (asm.valid ? 0.5 : 0);
      return {
        score,
        seen: `protected resource metadata ${prm.valid ? 'valid' : (prm.note ?? 'missing')}; authorization server metadata ${asm.valid ? 'valid' : (asm.note ?? 'missing')}`,
        evidence_url: prm.url,
      };
    },
  },
  {
    id: 'mcp_server_card',
    component: 'technical_foundation',
    title: 'MCP server card',
    weight: 10,
    severity: 'info',
    fix: 'Describe your MCP server at /.well-known/mcp/server-card.json (or /.well-known/mcp.json) with its name and URL.',
    evaluate: ({ facts }) => discoveryEvaluation(facts.discovery.mcp_server_card, 'MCP server card'),
  },
  {
    id: 'openapi',
    component: 'technical_foundation',
    title: 'OpenAPI description',
    weight: 3,
    severity: 'info',
    fix: 'Link an OpenAPI document from the api-catalog (service-desc) or a <link rel="service-desc">.',
    evaluate: ({ facts }) => discoveryEvaluation(facts.discovery.openapi, 'OpenAPI document'),
  },
  {
    id: 'x402',
    component: 'technical_foundation',
    title: 'x402 payment discovery',
    weight: 2,
    severity: 'info',
    fix: 'If agents can pay for resources, list them at /.well-known/x402.json.',
    evaluate: ({ facts }) => discoveryEvaluation(facts.discovery.x402, 'x402 document'),
  },

  // Live AI Traffic: measured by the pixel; no pixel, no data.
  {
    id: 'ai_traffic_share',
    component: 'live_ai_traffic',
    title: 'Share of traffic from AI agents',
    weight: 35,
    severity: 'info',
    fix: 'Make pages easy for AI agents to fetch (markdown, llms.txt, no blocks on AI search agents).',
    tools: [nextTools.installPixel],
    evaluate: ({ traffic }) =>
      traffic
        ? {
            score: clamp01(traffic.ai_share / 0.1),
            seen: `${pct(traffic.ai_share)} of ${traffic.events} event(s) in ${traffic.window_days} days`,
          }
        : { score: null, seen: NO_PIXEL_DATA },
  },
  {
    id: 'ai_agents_seen',
    component: 'live_ai_traffic',
    title: 'Distinct AI agents visiting',
    weight: 30,
    severity: 'info',
    fix: 'Allow more AI search and user-triggered agents in robots.txt.',
    evaluate: ({ traffic }) =>
      traffic
        ? {
            score: clamp01(traffic.agents_seen.length / 6),
            seen: traffic.agents_seen.length ? `seen: ${traffic.agents_seen.join(', ')}` : 'no AI agent seen',
          }
        : { score: null, seen: NO_PIXEL_DATA },
  },
  {
    id: 'ai_referrals',
    component: 'live_ai_traffic',
    title: 'Visits referred by AI assistants',
    weight: 35,
    severity: 'info',
    fix: 'Earn citations in AI answers: clear facts, structured data and an llms.txt summary.',
    evaluate: ({ traffic }) =>
      traffic
        ? {
            score: clamp01(Math.log10(1 + traffic.ai_referrals) / 3),
            seen: `${traffic.ai_referrals} referral(s) from AI assistants in ${traffic.window_days} days`,
          }
        : { score: null, seen: NO_PIXEL_DATA },
  },

  // Content Depth: is there substance an agent can read.
  {
    id: 'pages_readable',
    component: 'content_depth',
    title: 'HTML pages could be read',
    weight: 15,
    severity: 'critical',
    fix: 'Make pages reachable without JavaScript, login or bot challenges, and link them from the home page or the sitemap.',
    evaluate: ({ facts }) => ({
      score: clamp01(facts.pages.length / 5),
      seen: `${facts.pages.length} page(s) read, ${facts.crawl.pages_failed} failed, ${facts.crawl.skipped_by_robots} skipped by robots.txt`,
      evidence_url: `${facts.origin}/`,
    }),
  },
  {
    id: 'word_count',
    component: 'content_depth',
    title: 'Pages carry substantial text',
    weight: 25,
    severity: 'warning',
    fix: 'Give key pages real text (300+ words): what you offer, for whom, prices, policies - rendered in the HTML.',
    evaluate: ({ facts }) => {
      if (facts.pages.length === 0) return noPages;
      const m = median(facts.pages.map((p) => p.word_count));
      return {
        score: clamp01(m / 300),
        seen: `median ${Math.round(m)} words per page`,
        evidence_url: facts.pages[0]?.url,
      };
    },
  },
  {
    id: 'headings',
    component: 'content_depth',
    title: 'Pages have one H1 and section headings',
    weight: 15,
    severity: 'info',
    fix: 'Give every page exactly one <h1> and structure it with <h2> sections.',
    evaluate: ({ facts }) => pageShare(facts, (p) => p.h1.length === 1 && p.h2_count > 0) ?? noPages,
  },
  {
    id: 'titles',
    component: 'content_depth',
    title: 'Pages have titles',
    weight: 15,
    severity: 'warning',
    fix: 'Give every page a distinct <title>.',
    evaluate: ({ facts }) => pageShare(facts, (p) => !!p.title) ?? noPages,
  },
  {
    id: 'descriptions',
    component: 'content_depth',
    title: 'Pages have meta descriptions',
    weight: 15,
    severity: 'info',
    fix: 'Add a <meta name="description"> summarising each page in one or two sentences.',
    evaluate: ({ facts }) => pageShare(facts, (p) => !!p.description) ?? noPages,
  },
  {
    id: 'llms_full_txt',
    component: 'content_depth',
    title: 'llms-full.txt carries the full text',
    weight: 15,
    severity: 'info',
    fix: 'Publish /llms-full.txt with the full text of your key pages in markdown.',
    tools: [nextTools.llmsTxt],
    evaluate: ({ facts }) => ({
      score: facts.llms_full_txt ? 1 : 0,
      seen: facts.llms_full_txt ? `${facts.llms_full_txt.bytes} bytes` : 'no llms-full.txt',
      evidence_url: facts.llms_full_txt?.url ?? `${facts.origin}/llms-full.txt`,
    }),
  },

  // Citation Signals: can an AI answer name and cite the site correctly.
  {
    id: 'llms_txt',
    component: 'citation_signals',
    title: 'llms.txt per llmstxt.org',
    weight: 25,
    severity: 'warning',
    fix: 'Publish /llms.txt: an H1 with your name, a > summary, and ## sections of "- [name](url): notes" links to your key pages.',
    tools: [nextTools.llmsTxt],
    evaluate: ({ facts }) => {
      const l = facts.llms_txt;
      if (!l) return { score: 0, seen: 'no llms.txt', evidence_url: `${facts.origin}/llms.txt` };
      const score = l.valid ? (l.summary ? 1 : 0.8) : 0.4;
      const seen = l.valid
        ? `"${l.title}", ${l.sections.length} section(s), ${l.link_count} link(s)${l.summary ? '' : ', no summary'}`
        : `llms.txt does not follow the format: ${l.problems.join('; ')}`;
      return { score, seen, evidence_url: l.url };
    },
  },
  {
    id: 'json_ld',
    component: 'citation_signals',
    title: 'Pages carry schema.org JSON-LD',
    weight: 15,
    severity: 'info',
    fix: 'Describe pages with schema.org JSON-LD (<script type="application/ld+json">).',
    evaluate: ({ facts }) => pageShare(facts, (p) => p.json_ld_types.length > 0) ?? noPages,
  },
  {
    id: 'organization',
    component: 'citation_signals',
    title: 'The publisher is identified (Organization)',
    weight: 15,
    severity: 'warning',
    fix: 'Add an Organization (or LocalBusiness) JSON-LD node with name, url, logo and sameAs links.',
    tools: [nextTools.entity],
    evaluate: ({ facts }) => {
      const page = facts.pages.find((p) => p.json_ld_types.some((t) => organizationTypes.has(t)));
      return {
        score: page ? 1 : 0,
        seen: page ? `Organization on ${page.url}` : 'no Organization JSON-LD',
        evidence_url: page?.url ?? `${facts.origin}/`,
      };
    },
  },
  {
    id: 'product_or_faq',
    component: 'citation_signals',
    title: 'Products or FAQs are structured',
    weight: 10,
    severity: 'info',
    fix: 'Mark up offers with Product JSON-LD and common questions with FAQPage.',
    evaluate: ({ facts }) => {
      const kinds = new Set(facts.pages.flatMap((p) => p.json_ld_types));
      const found = ['Product', 'FAQPage', 'Service', 'SoftwareApplication'].filter((t) => kinds.has(t));
      return {
        score: found.length ? 1 : 0,
        seen: found.length ? `found ${found.join(', ')}` : 'no Product or FAQPage',
      };
    },
  },
  {
    id: 'open_graph',
    component: 'citation_signals',
    title: 'OpenGraph title and image',
    weight: 15,
    severity: 'info',
    fix: 'Add og:title, og:description and og:image to every page.',
    evaluate: ({ facts }) =>
      pageShare(facts, (p) => !!p.open_graph['og:title'] && !!p.open_graph['og:image']) ?? noPages,
  },
  {
    id: 'canonical',
    component: 'citation_signals',
    title: 'Canonical URLs',
    weight: 10,
    severity: 'info',
    fix: 'Give every page a <link rel="canonical"> so citations point at one URL.',
    evaluate: ({ facts }) => pageShare(facts, (p) => !!p.canonical) ?? noPages,
  },
  {
    id: 'ai_txt',
    component: 'citation_signals',
    title: 'ai.txt states AI usage preferences',
    weight: 10,
    severity: 'info',
    fix: 'Publish /ai.txt (Spawning format) saying which media may be used by AI.',
    tools: [nextTools.llmsTxt],
    evaluate: ({ facts }) => ({
      score: facts.ai_txt ? 1 : 0,
      seen: facts.ai_txt ? `${facts.ai_txt.groups.length} group(s)` : 'no ai.txt',
      evidence_url: facts.ai_txt?.url ?? `${facts.origin}/ai.txt`,
    }),
  },

  // Engagement Velocity: is AI attention growing (traffic trend, score trend).
  {
    id: 'ai_traffic_trend',
    component: 'engagement_velocity',
    title: 'AI traffic is growing',
    weight: 60,
    severity: 'info',
    fix: 'Keep content fresh and reachable; growth is measured window over window by the pixel.',
    evaluate: ({ traffic }) => {
      if (!traffic || traffic.previous_ai_events === null) return { score: null, seen: 'no traffic history' };
      const before = traffic.previous_ai_events;
      const growth = before === 0 ? (traffic.ai_events > 0 ? 1 : 0) : (traffic.ai_events - before) / before;
      return {
        score: clamp01(0.5 + growth),
        seen: `${traffic.ai_events} AI event(s), ${before} in the window before`,
      };
    },
  },
  {
    id: 'score_trend',
    component: 'engagement_velocity',
    title: 'Signal Strength is improving',
    weight: 40,
    severity: 'info',
    fix: 'Work through the findings and scan again.',
    tools: [nextTools.requestScan],
    evaluate: () => ({ score: null, seen: 'no previous scan' }),
  },
];

function discoveryEvaluation(
  check: { present: boolean; valid: boolean; url: string; note: string | null },
  what: string,
): Evaluation {
  return {
    score: check.valid ? 1 : check.present ? 0.5 : 0,
    seen: check.valid
      ? `${what} found`
      : check.present
        ? `${what} found but ${check.note ?? 'invalid'}`
        : `no ${what}${check.note && check.note !== 'not fetched' ? ` (${check.note})` : ''}`,
    evidence_url: check.url,
  };
}

/**
 * Not a check (it has no weight): the documents that answered like a made-up path already earned
 * nothing. It says why, and that agents probing the site are misled the same way.
 */
function softNotFoundFinding(facts: SiteFacts): Finding | null {
  const probe = facts.unknown_path;
  if (!probe?.soft_404) return null;
  const same = probe.same_answer.map((u) => new URL(u).pathname);
  return {
    id: 'soft_404',
    component: 'technical_foundation',
    severity: 'warning',
    seen: `a made-up path answered HTTP ${probe.status} ${probe.media_type ?? 'without a content type'} instead of 404${same.length ? `; ${same.join(', ')} gave the same answer and earned no credit` : ''}`,
    fix: 'Answer paths that do not exist with 404 (RFC 9110 section 15.5.5), above all under /.well-known/: serve the app shell only for the routes the app has, and publish real documents at the paths agents look for.',
    evidence_url: probe.url,
  };
}

/** Score trend needs the previous overall score, which depends on this scan's own score: done last. */
function scoreTrend(previous: ScoreHistory | null, current: number): Evaluation {
  if (!previous) return { score: null, seen: 'no previous scan' };
  const delta = current - previous.score;
  return {
    score: clamp01(0.5 + delta / 20),
    seen: `${previous.score} at ${previous.scanned_at}, ${current} now`,
  };
}

function componentScore(results: CheckResult[]): number | null {
  const scored = results.filter((r) => r.score !== null);
  const weight = scored.reduce((n, r) => n + r.weight, 0);
  if (weight === 0) return null;
  return Math.round((100 * scored.reduce((n, r) => n + (r.score as number) * r.weight, 0)) / weight);
}

function overall(results: ComponentResult[]): { score: number; note: string | null } {
  const withData = results.filter((c) => c.score !== null);
  const weight = withData.reduce((n, c) => n + c.weight, 0);
  const score =
    weight === 0 ? 0 : Math.round(withData.reduce((n, c) => n + (c.score as number) * c.weight, 0) / weight);
  const left = results.filter((c) => c.score === null);
  const note = left.length
    ? `${left.map((c) => c.name).join(' and ')} had no data and ${left.length > 1 ? 'were' : 'was'} left out; the other components' weights were renormalized to ${weight}.`
    : null;
  return { score, note };
}

export function scoreSite(
  facts: SiteFacts,
  traffic: LiveTraffic | null,
  previous: ScoreHistory | null = null,
): SignalScore {
  const inputs: Inputs = { facts, traffic, previous };
  const evaluations = new Map<string, Evaluation>();
  for (const check of checks) evaluations.set(check.id, check.evaluate(inputs));

  const build = (): ComponentResult[] =>
    components.map((c) => {
      const results = checks
        .filter((k) => k.component === c.id)
        .map((k) => {
          const e = evaluations.get(k.id) as Evaluation;
          return {
            id: k.id,
            title: k.title,
            weight: k.weight,
            score: e.score === null ? null : round2(e.score),
            seen: e.seen,
          };
        });
      const score = componentScore(results);
      return { ...c, status: score === null ? 'no_data' : 'scored', score, checks: results };
    });

  // The score trend compares with the overall score computed without it.
  const first = overall(build());
  evaluations.set('score_trend', scoreTrend(previous, first.score));
  const result = build();
  const { score, note } = overall(result);

  const findings: Finding[] = [];
  const tools = new Set<string>();
  for (const check of checks) {
    const e = evaluations.get(check.id) as Evaluation;
    if (e.score === null || e.score >= 1) continue;
    findings.push({
      id: check.id,
      component: check.component,
      severity: e.score >= 0.5 && check.severity === 'critical' ? 'warning' : check.severity,
      seen: e.seen,
      fix: check.fix,
      evidence_url: e.evidence_url ?? null,
    });
    for (const tool of check.tools ?? []) tools.add(tool);
  }
  const softNotFound = softNotFoundFinding(facts);
  if (softNotFound) findings.push(softNotFound);
  const order: Record<Severity, number> = { critical: 0, warning: 1, info: 2 };
  findings.sort((a, b) => order[a.severity] - order[b.severity]);
  if (!traffic) {
    findings.push({
      id: 'no_pixel',
      component: 'live_ai_traffic',
      severity: 'info',
      seen: `${NO_PIXEL_DATA}: Live AI Traffic has no data and is left out of the score`,
      fix: 'Install the pixel (POST /pixel-install) and forward server logs to measure AI agent visits.',
      evidence_url: null,
    });
    tools.add(nextTools.installPixel);
  }
  if (findings.some((f) => f.severity !== 'info')) tools.add(nextTools.requestScan);
  return {
    score,
    tier: tierOf(score),
    components: result,
    note,
    findings,
    recommended_next_tools: [...tools],
  };
}

const round2 = (n: number) => Math.round(n * 100) / 100;
