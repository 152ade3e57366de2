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

import LinkHeader from 'http-link-header';
import { compareField } from './collectors/entity.ts';
import { organizationTypes } from './collectors/page.ts';
import { aiAgents } from './collectors/robots.ts';
import { sameSite } from './crawl/session.ts';
import { evidenceOf, type RequestEvidence } from './evidence.ts';
import type { SiteFacts } from './site-facts.ts';

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
  /** The check's title. */
  title: string;
  /** What the check is for. */
  goal: string;
  /** What was seen (the issue). */
  seen: string;
  /** How to fix it. */
  fix: string;
  /** The specification behind the check. */
  spec_url: string | null;
  /** A ready prompt for a coding agent working on the site. */
  agent_prompt: string;
  evidence_url: string | null;
  /** The requests behind the finding (up to four). */
  evidence: RequestEvidence[];
}

/**
 * pass (1), partial (between), fail (0), no_data (nothing to judge: traffic without a pixel),
 * not_applicable (the site's profile does not call for it), unable_to_check (the scan could not
 * judge it: unmeasured, or facts stored by an older scoring version).
 */
export type CheckStatus = 'pass' | 'partial' | 'fail' | 'no_data' | 'not_applicable' | 'unable_to_check';

export interface CheckResult {
  id: string;
  title: string;
  weight: number;
  /** 0..1, or null when there was nothing to judge, it does not apply, or it could not be checked. */
  score: number | null;
  status: CheckStatus;
  seen: string;
  /** The requests the judgement rests on. */
  evidence: RequestEvidence[];
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

/** Site profiles (SCORING.md "Profiles"): which checks apply. */
export type ProfileId = 'content' | 'shop' | 'api';

export interface ProfileChoice {
  id: ProfileId;
  /** The profile the scan detected from the site. */
  detected: ProfileId;
  /** detected, or requested by the caller. */
  source: 'detected' | 'requested';
  /** Why the detected profile was detected. */
  reasons: string[];
}

export interface NextLevel {
  tier: Tier;
  points_needed: number;
  /** Checks that, passed in full, would reach the tier (largest gain first). */
  checks: { id: string; title: string; component: ComponentId; gain: number }[];
}

export interface SignalScore {
  score: number;
  tier: Tier;
  scoring_version: number;
  profile: ProfileChoice;
  components: ComponentResult[];
  /** Set when components without data were left out and the weights renormalized. */
  note: string | null;
  findings: Finding[];
  recommended_next_tools: string[];
  /** The next tier and the checks that would reach it; null in the top tier. */
  next_level: NextLevel | null;
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
  /** Why a null score is null, when it is not simply "no data". */
  status?: 'no_data' | 'unable_to_check';
}

interface CheckDef {
  id: string;
  component: ComponentId;
  title: string;
  weight: number;
  severity: Severity;
  /** What the check is for, in one sentence. */
  goal: string;
  fix: string;
  /** The specification behind the check. */
  spec: string | null;
  /** Evidence topics the judgement rests on (`evidence.ts`). */
  evidence: readonly string[];
  /** Profiles the check applies to; every profile when absent. */
  applies?: readonly ProfileId[];
  /** Weightless and reported only when a document is there but broken (Web Bot Auth). */
  informational?: boolean;
  /** Tools that help when the check falls short. */
  tools?: string[];
  evaluate: (inputs: Inputs) => Evaluation;
}

/**
 * The scoring version stored with every scan (SCORING.md "Versions"). Raise it with every change
 * to a check, a weight or a rule; stored scans of an older version are re-scored from their facts.
 */
export const SCORING_VERSION = 2;

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
/** A check added with scoring version 2 judging facts an older scan did not collect. */
const notCollected: Evaluation = {
  score: null,
  status: 'unable_to_check',
  seen: 'not collected by the scan that stored these facts (an older scoring version); scan again',
};

const apiOnly: readonly ProfileId[] = ['api'];
const noindexPattern = /\b(noindex|none)\b/i;

const linkRels = new Set([
  'api-catalog',
  'service-desc',
  'service-doc',
  'describedby',
  'alternate',
  'sitemap',
  'llms-txt',
]);

/** Every check, grouped by component in SCORING.md order. Weights within a component sum to 100. */
export const checks: readonly CheckDef[] = [
  // Technical Foundation: can agents reach, read and use the site.
  {
    id: 'robots_txt',
    component: 'technical_foundation',
    title: 'robots.txt is served',
    weight: 6,
    severity: 'warning',
    goal: 'Tell crawlers and agents what they may fetch, in the one file every one of them reads first.',
    fix: 'Serve /robots.txt as text/plain with explicit groups for the crawlers you want (RFC 9309).',
    spec: 'https://www.rfc-editor.org/rfc/rfc9309',
    evidence: ['robots'],
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
    weight: 4,
    severity: 'info',
    goal: 'State per AI agent what it may fetch, so search and answer agents are not caught by rules meant for others.',
    fix: 'Add User-agent groups for AI agents (GPTBot, OAI-SearchBot, ClaudeBot, PerplexityBot, Google-Extended ...) stating what each may fetch.',
    spec: 'https://www.rfc-editor.org/rfc/rfc9309#section-2.2.1',
    evidence: ['robots'],
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
    weight: 10,
    severity: 'critical',
    goal: 'Let AI search and user-triggered agents read the site so answers can cite it.',
    fix: 'Allow AI search and user-triggered agents (OAI-SearchBot, ChatGPT-User, Claude-SearchBot, Claude-User, PerplexityBot, Perplexity-User) at / so answers can cite you; training crawlers can stay blocked.',
    spec: 'https://www.rfc-editor.org/rfc/rfc9309',
    evidence: ['robots'],
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
    id: 'door_test',
    component: 'technical_foundation',
    title: 'AI agents are served like a browser',
    weight: 8,
    severity: 'critical',
    goal: 'Serve the home page to AI search and user-triggered agents as it is served to a browser; robots.txt says what is allowed, the server must not say otherwise.',
    fix: 'Stop refusing AI agent user agents at the server, CDN or firewall (403, 401, challenge pages): allow OAI-SearchBot, ChatGPT-User, Claude-User and PerplexityBot, or verify them with Web Bot Auth instead of blocking by name.',
    spec: 'https://datatracker.ietf.org/doc/draft-meunier-web-bot-auth-architecture/',
    evidence: ['door'],
    evaluate: ({ facts }) => {
      if (!facts.verification) return notCollected;
      const door = facts.verification.door;
      if (!door)
        return { score: null, status: 'unable_to_check', seen: 'the home page could not be asked for' };
      const agents = door.filter((d) => d.class === 'search' || d.class === 'user');
      const measured = agents.filter((d) => d.verdict !== 'unmeasured');
      const blocked = door.filter((d) => d.verdict === 'blocked' && d.class !== 'browser');
      const describe = (list: typeof door) =>
        list.map((d) => `${d.visitor} (HTTP ${d.status ?? 'none'})`).join(', ');
      if (measured.length === 0)
        return {
          score: null,
          status: 'unable_to_check',
          seen: `unmeasured: ${describe(agents)} after three tries (rate limited or no answer)`,
          evidence_url: facts.home?.url ?? `${facts.origin}/`,
        };
      const served = measured.filter((d) => d.verdict === 'served').length;
      return {
        score: served / measured.length,
        seen: blocked.length
          ? `blocked: ${describe(blocked)}; browser HTTP ${door.find((d) => d.class === 'browser')?.status ?? 'none'}`
          : `served to ${measured.map((d) => d.visitor).join(', ')} as to a browser`,
        evidence_url: facts.home?.url ?? `${facts.origin}/`,
      };
    },
  },
  {
    id: 'content_signals',
    component: 'technical_foundation',
    title: 'Content-Signal preferences are declared',
    weight: 3,
    severity: 'info',
    goal: 'Say how content may be used once fetched: search, AI input, AI training.',
    fix: 'State how content may be used with a Content-Signal line in robots.txt, e.g. "Content-Signal: search=yes, ai-input=yes, ai-train=no" (contentsignals.org).',
    spec: 'https://contentsignals.org/',
    evidence: ['robots'],
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
    id: 'policy_coherence',
    component: 'technical_foundation',
    title: 'robots.txt agrees with itself and the site',
    weight: 4,
    severity: 'warning',
    goal: 'Keep what robots.txt allows consistent with its Content-Signal lines and with the documents the site publishes for agents.',
    fix: 'Do not disallow / for an agent whose group says search=yes or ai-input=yes, and never disallow /llms.txt or the sitemaps for AI search and user agents.',
    spec: 'https://contentsignals.org/',
    evidence: ['robots'],
    evaluate: ({ facts }) => {
      if (facts.policy === undefined) return notCollected;
      const p = facts.policy;
      if (!p) return { score: null, seen: 'no robots.txt: nothing to contradict' };
      const problems = [
        ...p.content_signal_conflicts,
        ...(p.llms_txt_blocked_for.length
          ? [`llms.txt disallowed for ${p.llms_txt_blocked_for.join(', ')}`]
          : []),
        ...(p.sitemap_blocked_for.length
          ? [`sitemaps disallowed for ${p.sitemap_blocked_for.join(', ')}`]
          : []),
      ];
      const score =
        1 -
        (p.content_signal_conflicts.length ? 0.4 : 0) -
        (p.llms_txt_blocked_for.length ? 0.3 : 0) -
        (p.sitemap_blocked_for.length ? 0.3 : 0);
      return {
        score: clamp01(score),
        seen: problems.length ? problems.join('; ') : 'no contradiction',
        evidence_url: facts.robots.url,
      };
    },
  },
  {
    id: 'sitemap',
    component: 'technical_foundation',
    title: 'An XML sitemap lists the pages',
    weight: 5,
    severity: 'warning',
    goal: 'List every page an agent should know about in one machine-readable place.',
    fix: 'Publish /sitemap.xml (or a sitemap index) and reference it with a Sitemap: line in robots.txt.',
    spec: 'https://www.sitemaps.org/protocol.html',
    evidence: ['sitemap'],
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
    id: 'sitemap_lastmod',
    component: 'technical_foundation',
    title: 'Sitemap entries carry lastmod',
    weight: 2,
    severity: 'info',
    goal: 'Tell agents which pages changed, so they refetch those and not the rest.',
    fix: 'Give every <url> in the sitemap a <lastmod> in W3C Datetime format (2026-11-26 or 2026-11-26T10:00:00Z).',
    spec: 'https://www.sitemaps.org/protocol.html#lastmoddef',
    evidence: ['sitemap'],
    evaluate: ({ facts }) => {
      if (facts.sitemap.urls_with_lastmod === undefined) return notCollected;
      if (facts.sitemap.urls_found === 0) return { score: null, seen: 'no sitemap URL to judge' };
      const n = facts.sitemap.urls_with_lastmod;
      return {
        score: n / facts.sitemap.urls_found,
        seen: `${n} of ${facts.sitemap.urls_found} URL(s) with a valid lastmod`,
        evidence_url: facts.sitemap.documents.find((d) => d.kind === 'urlset')?.url ?? null,
      };
    },
  },
  {
    id: 'x_robots_tag',
    component: 'technical_foundation',
    title: 'No X-Robots-Tag keeps pages out',
    weight: 3,
    severity: 'warning',
    goal: 'Do not tell indexes and answer engines, in a header nobody sees, to leave the pages out.',
    fix: 'Remove noindex / none from the X-Robots-Tag response header of public pages (often set by a CDN or framework default).',
    spec: 'https://developers.google.com/search/docs/crawling-indexing/robots-meta-tag#xrobotstag',
    evidence: ['home', 'page'],
    evaluate: ({ facts }) => {
      if (facts.pages.length === 0) return noPages;
      if (facts.pages.some((p) => p.x_robots_tag === undefined)) return notCollected;
      const tagged = facts.pages.filter((p) => p.x_robots_tag && noindexPattern.test(p.x_robots_tag));
      return {
        score: 1 - tagged.length / facts.pages.length,
        seen: tagged.length
          ? `X-Robots-Tag "${tagged[0]?.x_robots_tag}" on ${tagged.length} of ${facts.pages.length} page(s)`
          : 'no page is kept out by X-Robots-Tag',
        evidence_url: tagged[0]?.url ?? null,
      };
    },
  },
  {
    id: 'markdown_negotiation',
    component: 'technical_foundation',
    title: 'Pages are served as markdown on request',
    weight: 10,
    severity: 'warning',
    goal: 'Give agents the text of any page without the HTML around it, from the same URL.',
    fix: 'Answer requests with "Accept: text/markdown" on every page (not only the home page) with a markdown rendering of the same content (Content-Type: text/markdown), and send Vary: Accept on both representations so caches keep them apart.',
    spec: 'https://www.rfc-editor.org/rfc/rfc9110#section-12.5.5',
    evidence: ['markdown'],
    evaluate: ({ facts }) => {
      const m = facts.markdown;
      if (m.vary_accept === undefined) {
        return {
          score: m.supported ? 1 : 0,
          seen: m.supported ? 'text/markdown returned' : `Accept: text/markdown ${m.note ?? 'not honoured'}`,
          evidence_url: m.url,
        };
      }
      if (!m.supported)
        return { score: 0, seen: `Accept: text/markdown ${m.note ?? 'not honoured'}`, evidence_url: m.url };
      const other = m.other_page;
      const parts: { ok: boolean; weight: number; miss: string }[] = [
        { ok: true, weight: 0.5, miss: '' },
        ...(other
          ? [
              {
                ok: other.supported,
                weight: 0.2,
                miss: `${new URL(other.url).pathname} ${other.note ?? 'not served as markdown'}`,
              },
            ]
          : []),
        {
          ok: m.vary_accept === true && (!other?.supported || other.vary_accept === true),
          weight: 0.15,
          miss: 'no Vary: Accept on the markdown answer',
        },
        {
          ok: (m.text_overlap ?? 0) >= 0.5 && (!other?.supported || (other.text_overlap ?? 0) >= 0.5),
          weight: 0.15,
          miss: `the markdown shares ${pct(Math.min(m.text_overlap ?? 0, other?.supported ? (other.text_overlap ?? 0) : 1))} of its words with the HTML page`,
        },
      ];
      const total = parts.reduce((n, p) => n + p.weight, 0);
      const earned = parts.filter((p) => p.ok).reduce((n, p) => n + p.weight, 0);
      const misses = parts.filter((p) => !p.ok).map((p) => p.miss);
      return {
        score: earned / total,
        seen: misses.length
          ? `text/markdown returned for the home page, but ${misses.join('; ')}`
          : `text/markdown returned for the home page${other ? ` and ${new URL(other.url).pathname}` : ''}, with Vary: Accept and the same text`,
        evidence_url: m.url,
      };
    },
  },
  {
    id: 'markdown_alternate',
    component: 'technical_foundation',
    title: 'Pages link their markdown version',
    weight: 2,
    severity: 'info',
    goal: 'Let an agent that reads the HTML find the markdown version without guessing.',
    fix: 'Add <link rel="alternate" type="text/markdown" href="..."> to the head of every page.',
    spec: 'https://html.spec.whatwg.org/multipage/links.html#rel-alternate',
    evidence: ['home', 'page'],
    evaluate: ({ facts }) => pageShare(facts, (p) => !!p.markdown_alternate) ?? noPages,
  },
  {
    id: 'link_headers',
    component: 'technical_foundation',
    title: 'Link headers point at agent resources',
    weight: 3,
    severity: 'info',
    goal: 'Let an agent find the discovery documents from any response, without parsing HTML.',
    fix: 'Send a Link header (RFC 8288) on the home page naming your agent resources, e.g. Link: </.well-known/api-catalog>; rel="api-catalog", </llms.txt>; rel="describedby"; type="text/markdown".',
    spec: 'https://www.rfc-editor.org/rfc/rfc8288',
    evidence: ['home'],
    evaluate: ({ facts }) => {
      if (facts.home === undefined) return notCollected;
      const header = facts.home?.link ?? null;
      if (!header)
        return { score: 0, seen: 'no Link header on the home page', evidence_url: `${facts.origin}/` };
      let refs: { rel: string; uri: string }[] = [];
      try {
        refs = LinkHeader.parse(header).refs;
      } catch {
        return { score: 0, seen: 'the Link header does not parse (RFC 8288)', evidence_url: facts.home?.url };
      }
      const useful = refs.filter((r) => r.rel.split(/\s+/).some((rel) => linkRels.has(rel.toLowerCase())));
      return {
        score: useful.length ? 1 : refs.length ? 0.5 : 0,
        seen: useful.length
          ? `Link: ${useful.map((r) => `rel=${r.rel}`).join(', ')}`
          : `the Link header names no agent resource (${refs.map((r) => r.rel).join(', ') || 'nothing parsed'})`,
        evidence_url: facts.home?.url,
      };
    },
  },
  {
    id: 'https',
    component: 'technical_foundation',
    title: 'Served over HTTPS',
    weight: 3,
    severity: 'warning',
    goal: 'Serve agents content they can trust was not changed on the way.',
    fix: 'Serve the site over HTTPS and redirect http:// to it.',
    spec: 'https://www.rfc-editor.org/rfc/rfc9110#section-4.2.2',
    evidence: ['robots'],
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
    weight: 6,
    severity: 'info',
    goal: 'List the APIs of the site, with their descriptions and docs, at one well-known address.',
    fix: 'Publish /.well-known/api-catalog as an application/linkset+json linkset pointing at your API descriptions (service-desc) and docs.',
    spec: 'https://www.rfc-editor.org/rfc/rfc9727',
    evidence: ['api_catalog'],
    applies: apiOnly,
    evaluate: ({ facts }) => discoveryEvaluation(facts.discovery.api_catalog, 'api-catalog'),
  },
  {
    id: 'openapi',
    component: 'technical_foundation',
    title: 'OpenAPI description, and its servers answer',
    weight: 4,
    severity: 'info',
    goal: 'Describe the API so an agent can call it, and make sure the servers it names are there.',
    fix: 'Link an OpenAPI document from the api-catalog (service-desc) or a <link rel="service-desc">; its servers[] must be URLs that answer.',
    spec: 'https://spec.openapis.org/oas/v3.1.0#server-object',
    evidence: ['openapi', 'api_catalog'],
    applies: apiOnly,
    evaluate: ({ facts }) => {
      const base = discoveryEvaluation(facts.discovery.openapi, 'OpenAPI document');
      if (!facts.discovery.openapi.valid || !facts.verification) return base;
      const v = facts.verification.openapi;
      if (!v) return base;
      const down = v.servers.filter((s) => !s.ok);
      if (!v.parsed)
        return {
          ...base,
          score: 0.75,
          seen: `OpenAPI document found but could not be parsed in full${v.truncated ? ' (cut at the byte limit)' : ''}`,
        };
      if (down.length)
        return {
          ...base,
          score: 0.75,
          seen: `OpenAPI document found, but servers[] do not answer: ${down.map((s) => `${s.url} (${s.status ? `HTTP ${s.status}` : (s.note ?? 'no answer')})`).join(', ')}`,
        };
      return {
        ...base,
        seen: v.servers.length
          ? `OpenAPI document found; servers answer: ${v.servers.map((s) => s.url).join(', ')}`
          : 'OpenAPI document found',
      };
    },
  },
  {
    id: 'oauth_discovery',
    component: 'technical_foundation',
    title: 'OAuth discovery metadata',
    weight: 4,
    severity: 'info',
    goal: 'Let an agent learn how to get a token without reading documentation.',
    fix: 'If agents sign in, publish /.well-known/oauth-protected-resource (RFC 9728) and /.well-known/oauth-authorization-server (RFC 8414).',
    spec: 'https://www.rfc-editor.org/rfc/rfc9728',
    evidence: ['oauth'],
    applies: apiOnly,
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
    id: 'oauth_chain',
    component: 'technical_foundation',
    title: 'The OAuth discovery chain holds together',
    weight: 5,
    severity: 'warning',
    goal: 'Make every link of OAuth discovery agree: the resource names itself, each authorization server resolves under every layout clients use with the same issuer, and a 401 points back at the metadata.',
    fix: 'Set "resource" in each protected resource metadata document to the exact URL it describes; serve the authorization server metadata at /.well-known/oauth-authorization-server{issuer path}, at {issuer}/.well-known/oauth-authorization-server and at {issuer}/.well-known/openid-configuration, each with "issuer" equal to the issuer URL; send WWW-Authenticate: Bearer resource_metadata="..." on 401.',
    spec: 'https://www.rfc-editor.org/rfc/rfc8414#section-3.3',
    evidence: ['oauth', 'mcp'],
    applies: apiOnly,
    evaluate: ({ facts }) => {
      if (!facts.verification) return notCollected;
      const chain = facts.verification.oauth;
      if (!chain || chain.steps.length === 0)
        return { score: null, seen: 'no protected resource metadata or 401 challenge to follow' };
      const failed = chain.steps.filter((s) => !s.ok);
      return {
        score: (chain.steps.length - failed.length) / chain.steps.length,
        seen: failed.length
          ? `${failed.length} of ${chain.steps.length} link(s) broken: ${failed.map((s) => `${s.url}: ${s.note ?? s.check}`).join('; ')}`
          : `${chain.steps.length} link(s) verified across ${chain.authorization_servers.length} authorization server(s)`,
        evidence_url: failed[0]?.url ?? chain.steps[0]?.url ?? null,
      };
    },
  },
  {
    id: 'mcp_server_card',
    component: 'technical_foundation',
    title: 'MCP server card',
    weight: 6,
    severity: 'info',
    goal: 'Let an agent find the MCP server and what it is before connecting.',
    fix: 'Describe your MCP server with a server card (SEP-2127: <endpoint>/server-card, listed in /.well-known/mcp/catalog.json; or /.well-known/mcp/server-card.json) naming it and its URL.',
    spec: 'https://github.com/modelcontextprotocol/modelcontextprotocol/pull/2127',
    evidence: ['mcp'],
    applies: apiOnly,
    evaluate: ({ facts }) => discoveryEvaluation(facts.discovery.mcp_server_card, 'MCP server card'),
  },
  {
    id: 'mcp_live',
    component: 'technical_foundation',
    title: 'The MCP server answers as its card says',
    weight: 6,
    severity: 'warning',
    goal: 'Make the MCP server the card advertises answer initialize and tools/list, with the tools the card lists.',
    fix: 'Point the card at the live Streamable HTTP endpoint, keep it answering initialize and tools/list (401 with resource_metadata when it needs a token), and list on the card exactly the tools the server lists (or none).',
    spec: 'https://modelcontextprotocol.io/specification/2025-11-25/server/tools#listing-tools',
    evidence: ['mcp'],
    applies: apiOnly,
    evaluate: ({ facts }) => {
      if (!facts.verification) return notCollected;
      const v = facts.verification.mcp;
      if (!v) return { score: null, seen: 'no MCP server card on this site to verify' };
      const where = v.endpoint ?? v.card_url;
      if (v.auth_required)
        return v.resource_metadata
          ? {
              score: 1,
              seen: `${where} asks for a token (401) and names its resource metadata`,
              evidence_url: where,
            }
          : {
              score: 0.5,
              seen: `${where} answers 401 without resource_metadata in WWW-Authenticate`,
              evidence_url: where,
            };
      if (!v.initialized || !v.live_tools)
        return { score: 0, seen: `${where}: ${v.error ?? 'initialize failed'}`, evidence_url: where };
      if (v.missing_live.length || v.not_on_card.length)
        return {
          score: 0.25,
          seen: `the card and the server disagree: ${[
            v.missing_live.length ? `on the card only: ${v.missing_live.join(', ')}` : '',
            v.not_on_card.length ? `served but not on the card: ${v.not_on_card.join(', ')}` : '',
          ]
            .filter(Boolean)
            .join('; ')}`,
          evidence_url: where,
        };
      return {
        score: 1,
        seen: `initialize and tools/list answered: ${v.live_tools.length} tool(s)${v.card_tools ? ', the same as the card lists' : ''}`,
        evidence_url: where,
      };
    },
  },
  {
    id: 'a2a_agent_card',
    component: 'technical_foundation',
    title: 'A2A agent card',
    weight: 2,
    severity: 'info',
    goal: 'Let other agents discover this one and its skills (Agent2Agent protocol).',
    fix: 'Publish /.well-known/agent-card.json with name, description, url (or supportedInterfaces), version, capabilities and skills.',
    spec: 'https://a2a-protocol.org/latest/topics/agent-discovery/',
    evidence: ['a2a'],
    applies: apiOnly,
    evaluate: ({ facts }) =>
      facts.discovery.a2a_agent_card
        ? discoveryEvaluation(facts.discovery.a2a_agent_card, 'A2A agent card')
        : notCollected,
  },
  {
    id: 'agent_skills',
    component: 'technical_foundation',
    title: 'Agent Skills index',
    weight: 2,
    severity: 'info',
    goal: 'Publish the skills that teach an agent to use the site, where agents look for them.',
    fix: 'Publish /.well-known/agent-skills/index.json listing each SKILL.md with name, type, description, url and sha256.',
    spec: 'https://agentskills.io/',
    evidence: ['agent_skills'],
    applies: apiOnly,
    evaluate: ({ facts }) =>
      facts.discovery.agent_skills
        ? discoveryEvaluation(facts.discovery.agent_skills, 'Agent Skills index')
        : notCollected,
  },
  {
    id: 'web_bot_auth',
    component: 'technical_foundation',
    title: 'Web Bot Auth key directory',
    weight: 0,
    severity: 'info',
    goal: 'For sites that run agents of their own: publish the keys they sign requests with, so other sites can let them in.',
    fix: 'Serve /.well-known/http-message-signatures-directory as a JWKS (application/http-message-signatures-directory+json) of the Ed25519 keys your agents sign with.',
    spec: 'https://datatracker.ietf.org/doc/draft-meunier-webbotauth-httpsig-directory/',
    evidence: ['web_bot_auth'],
    applies: apiOnly,
    informational: true,
    evaluate: ({ facts }) =>
      facts.discovery.web_bot_auth
        ? discoveryEvaluation(facts.discovery.web_bot_auth, 'key directory')
        : notCollected,
  },
  {
    id: 'x402',
    component: 'technical_foundation',
    title: 'x402 payment discovery, and resources that ask for payment',
    weight: 2,
    severity: 'info',
    goal: 'Let agents find what they can pay for, and get a valid 402 when they ask for it unpaid.',
    fix: 'List paid resources at /.well-known/x402.json (or /.well-known/x402); each must answer an unpaid request with 402 and complete payment requirements (PAYMENT-REQUIRED).',
    spec: 'https://github.com/coinbase/x402/blob/main/specs/x402-specification.md',
    evidence: ['x402'],
    applies: ['api', 'shop'],
    evaluate: ({ facts }) => {
      const base = discoveryEvaluation(facts.discovery.x402, 'x402 document');
      const v = facts.verification?.x402;
      if (!facts.discovery.x402.valid || !v || v.resources.length === 0) return base;
      const failed = v.resources.filter((r) => r.verdict === 'failed');
      return failed.length
        ? {
            ...base,
            score: 0.5,
            seen: `x402 document found, but ${failed.map((r) => `${r.url} answered ${r.status ? `HTTP ${r.status}` : 'nothing'}${r.note ? ` (${r.note})` : ''}`).join('; ')}`,
          }
        : {
            ...base,
            seen: `x402 document found; ${v.resources.filter((r) => r.verdict === 'valid').length} of ${v.resources.length} resource(s) answered 402 with valid requirements${v.resources.some((r) => r.verdict === 'needs_input') ? ' (the others ask for input first)' : ''}`,
          };
    },
  },

  // Live AI Traffic: measured by the pixel; no pixel, no data.
  {
    id: 'ai_traffic_share',
    component: 'live_ai_traffic',
    title: 'Share of traffic from AI agents',
    weight: 35,
    severity: 'info',
    goal: 'Have AI agents actually visit: a real share of the traffic.',
    fix: 'Make pages easy for AI agents to fetch (markdown, llms.txt, no blocks on AI search agents).',
    spec: null,
    evidence: [],
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
    goal: 'Be visited by many different AI agents, not one.',
    fix: 'Allow more AI search and user-triggered agents in robots.txt.',
    spec: null,
    evidence: [],
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
    goal: 'Receive people sent by AI answers that cite the site.',
    fix: 'Earn citations in AI answers: clear facts, structured data and an llms.txt summary.',
    spec: null,
    evidence: [],
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
    goal: 'Have pages an agent can read without a browser, a login or a challenge.',
    fix: 'Make pages reachable without JavaScript, login or bot challenges, and link them from the home page or the sitemap.',
    spec: null,
    evidence: ['home', 'page'],
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
    weight: 20,
    severity: 'warning',
    goal: 'Put the substance in the HTML: text an agent can quote.',
    fix: 'Give key pages real text (300+ words): what you offer, for whom, prices, policies - rendered in the HTML.',
    spec: null,
    evidence: ['home', 'page'],
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
    weight: 10,
    severity: 'info',
    goal: 'Structure pages so an agent can find the part it needs.',
    fix: 'Give every page exactly one <h1> and structure it with <h2> sections.',
    spec: 'https://html.spec.whatwg.org/multipage/sections.html#headings-and-outlines',
    evidence: ['home', 'page'],
    evaluate: ({ facts }) => pageShare(facts, (p) => p.h1.length === 1 && p.h2_count > 0) ?? noPages,
  },
  {
    id: 'titles',
    component: 'content_depth',
    title: 'Pages have titles',
    weight: 15,
    severity: 'warning',
    goal: 'Name every page, so a citation can say what it points at.',
    fix: 'Give every page a distinct <title>.',
    spec: 'https://html.spec.whatwg.org/multipage/semantics.html#the-title-element',
    evidence: ['home', 'page'],
    evaluate: ({ facts }) => pageShare(facts, (p) => !!p.title) ?? noPages,
  },
  {
    id: 'descriptions',
    component: 'content_depth',
    title: 'Pages have meta descriptions',
    weight: 10,
    severity: 'info',
    goal: 'Summarise every page in a sentence an agent can reuse.',
    fix: 'Add a <meta name="description"> summarising each page in one or two sentences.',
    spec: 'https://html.spec.whatwg.org/multipage/semantics.html#meta-description',
    evidence: ['home', 'page'],
    evaluate: ({ facts }) => pageShare(facts, (p) => !!p.description) ?? noPages,
  },
  {
    id: 'lang',
    component: 'content_depth',
    title: 'Pages declare their language',
    weight: 5,
    severity: 'info',
    goal: 'Say what language each page is in, so agents answer in it and quote it right.',
    fix: 'Set <html lang="..."> (a BCP 47 tag such as en or pt-PT) on every page.',
    spec: 'https://html.spec.whatwg.org/multipage/dom.html#attr-lang',
    evidence: ['home', 'page'],
    evaluate: ({ facts }) => pageShare(facts, (p) => !!p.lang) ?? noPages,
  },
  {
    id: 'noindex',
    component: 'content_depth',
    title: 'Pages are not marked noindex',
    weight: 10,
    severity: 'warning',
    goal: 'Keep public pages in the indexes answer engines draw from.',
    fix: 'Remove <meta name="robots" content="noindex"> from pages you want found (keep it only on private or duplicate pages).',
    spec: 'https://developers.google.com/search/docs/crawling-indexing/robots-meta-tag',
    evidence: ['home', 'page'],
    evaluate: ({ facts }) => {
      const share = pageShare(facts, (p) => !p.noindex);
      if (!share) return noPages;
      const marked = facts.pages.filter((p) => p.noindex);
      return {
        ...share,
        seen: marked.length
          ? `noindex on ${marked.length} of ${facts.pages.length} page(s): ${marked
              .slice(0, 3)
              .map((p) => new URL(p.url).pathname)
              .join(', ')}`
          : 'no page is marked noindex',
        evidence_url: marked[0]?.url ?? null,
      };
    },
  },
  {
    id: 'llms_full_txt',
    component: 'content_depth',
    title: 'llms-full.txt carries the full text',
    weight: 15,
    severity: 'info',
    goal: 'Give agents the whole site as one markdown file.',
    fix: 'Publish /llms-full.txt with the full text of your key pages in markdown.',
    spec: 'https://llmstxt.org/',
    evidence: ['llms_full_txt'],
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
    weight: 20,
    severity: 'warning',
    goal: 'Tell agents in one short file who you are and where the key pages are.',
    fix: 'Publish /llms.txt: an H1 with your name, a > summary, and ## sections of "- [name](url): notes" links to your key pages.',
    spec: 'https://llmstxt.org/',
    evidence: ['llms_txt'],
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
    id: 'llms_txt_links',
    component: 'citation_signals',
    title: 'llms.txt links resolve, and it is served as text',
    weight: 8,
    severity: 'warning',
    goal: 'Make every link in llms.txt lead somewhere, and serve the file as text.',
    fix: 'Fix or remove llms.txt links that do not answer 2xx, and serve /llms.txt as text/plain or text/markdown.',
    spec: 'https://llmstxt.org/',
    evidence: ['llms_txt', 'llms_links'],
    tools: [nextTools.llmsTxt],
    evaluate: ({ facts }) => {
      if (!facts.verification) return notCollected;
      const v = facts.verification.llms_txt;
      if (!v) return { score: null, seen: 'no llms.txt to follow' };
      const dead = v.links.filter((l) => !l.ok);
      const share = v.links.length ? (v.links.length - dead.length) / v.links.length : 1;
      const problems = [
        ...(dead.length
          ? [
              `${dead.length} of ${v.links.length} link(s) checked do not resolve: ${dead.map((l) => `${l.url} (${l.status ? `HTTP ${l.status}` : (l.note ?? 'no answer')})`).join(', ')}`,
            ]
          : []),
        ...(v.served_as_text ? [] : [`served as ${v.content_type ?? 'no content type'}, not text`]),
      ];
      return {
        score: 0.8 * share + (v.served_as_text ? 0.2 : 0),
        seen: problems.length
          ? problems.join('; ')
          : `${v.links.length} of ${v.links_total} link(s) checked, all resolve; served as ${v.content_type}`,
        evidence_url: dead[0]?.url ?? v.url,
      };
    },
  },
  {
    id: 'json_ld',
    component: 'citation_signals',
    title: 'Pages carry schema.org JSON-LD',
    weight: 10,
    severity: 'info',
    goal: 'State the facts of each page in structured data an agent reads without guessing.',
    fix: 'Describe pages with schema.org JSON-LD (<script type="application/ld+json">).',
    spec: 'https://schema.org/docs/gs.html',
    evidence: ['home', 'page'],
    evaluate: ({ facts }) => pageShare(facts, (p) => p.json_ld_types.length > 0) ?? noPages,
  },
  {
    id: 'json_ld_valid',
    component: 'citation_signals',
    title: 'JSON-LD parses',
    weight: 5,
    severity: 'warning',
    goal: 'Make sure the structured data is read at all: one syntax error hides the whole block.',
    fix: 'Fix the <script type="application/ld+json"> blocks that are not valid JSON (trailing commas, unescaped quotes, comments).',
    spec: 'https://www.w3.org/TR/json-ld11/',
    evidence: ['home', 'page'],
    evaluate: ({ facts }) => {
      const share = pageShare(facts, (p) => p.json_ld_errors === 0);
      if (!share) return noPages;
      const broken = facts.pages.filter((p) => p.json_ld_errors > 0);
      return {
        ...share,
        seen: broken.length
          ? `JSON-LD that does not parse on ${broken.length} page(s): ${broken
              .slice(0, 3)
              .map((p) => new URL(p.url).pathname)
              .join(', ')}`
          : 'every JSON-LD block parses',
        evidence_url: broken[0]?.url ?? null,
      };
    },
  },
  {
    id: 'organization',
    component: 'citation_signals',
    title: 'The publisher is identified (Organization)',
    weight: 12,
    severity: 'warning',
    goal: 'Say who is behind the site, so answers name it right.',
    fix: 'Add an Organization (or LocalBusiness) JSON-LD node with name, url, logo and sameAs links.',
    spec: 'https://schema.org/Organization',
    evidence: ['home', 'page'],
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
    id: 'entity_consistency',
    component: 'citation_signals',
    title: 'The site names itself the same way everywhere',
    weight: 10,
    severity: 'warning',
    goal: 'Give the organisation one name and one home: JSON-LD, og:site_name and llms.txt agree, and its url and sameAs point where they should.',
    fix: 'Use the same name in the Organization JSON-LD, og:site_name and the llms.txt H1; set the Organization url to this site and sameAs to absolute https URLs of your profiles elsewhere.',
    spec: 'https://schema.org/sameAs',
    evidence: ['home', 'llms_txt'],
    tools: [nextTools.entity],
    evaluate: ({ facts }) => {
      if (facts.entity === undefined) return notCollected;
      const e = facts.entity;
      if (!e?.organization_name) return { score: null, seen: 'no Organization name to compare' };
      const results: { ok: boolean; what: string }[] = [];
      for (const [label, other] of [
        ['og:site_name', e.og_site_name],
        ['the llms.txt title', e.llms_txt_title],
      ] as const) {
        if (other)
          results.push({
            ok: compareField('name', e.organization_name, other) === 'consistent',
            what: `${label} "${other}"`,
          });
      }
      if (e.organization_url)
        results.push({
          ok:
            URL.canParse(e.organization_url) && sameSite(new URL(e.organization_url), new URL(facts.origin)),
          what: `Organization url ${e.organization_url}`,
        });
      const badSameAs = e.same_as.filter((u) => !/^https:\/\//.test(u));
      if (e.same_as.length)
        results.push({ ok: badSameAs.length === 0, what: `sameAs ${badSameAs.join(', ')} (not https)` });
      if (results.length === 0)
        return { score: null, seen: `"${e.organization_name}": nothing else names the site to compare` };
      const off = results.filter((r) => !r.ok);
      return {
        score: (results.length - off.length) / results.length,
        seen: off.length
          ? `Organization "${e.organization_name}" disagrees with ${off.map((r) => r.what).join('; ')}`
          : `"${e.organization_name}" agrees across ${results.length} source(s)`,
        evidence_url: `${facts.origin}/`,
      };
    },
  },
  {
    id: 'product_or_faq',
    component: 'citation_signals',
    title: 'Products or FAQs are structured',
    weight: 8,
    severity: 'info',
    goal: 'Make offers and answers machine-readable.',
    fix: 'Mark up offers with Product JSON-LD and common questions with FAQPage.',
    spec: 'https://schema.org/Product',
    evidence: ['home', 'page'],
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
    weight: 12,
    severity: 'info',
    goal: 'Give every page a title and image for previews and citations.',
    fix: 'Add og:title, og:description and og:image to every page.',
    spec: 'https://ogp.me/',
    evidence: ['home', 'page'],
    evaluate: ({ facts }) =>
      pageShare(facts, (p) => !!p.open_graph['og:title'] && !!p.open_graph['og:image']) ?? noPages,
  },
  {
    id: 'canonical',
    component: 'citation_signals',
    title: 'Canonical URLs',
    weight: 8,
    severity: 'info',
    goal: 'Give each page one URL, so citations point at one place.',
    fix: 'Give every page a <link rel="canonical"> so citations point at one URL.',
    spec: 'https://www.rfc-editor.org/rfc/rfc6596',
    evidence: ['home', 'page'],
    evaluate: ({ facts }) => pageShare(facts, (p) => !!p.canonical) ?? noPages,
  },
  {
    id: 'ai_txt',
    component: 'citation_signals',
    title: 'ai.txt states AI usage preferences',
    weight: 7,
    severity: 'info',
    goal: 'State which media AI may use, in the file Spawning-compatible crawlers read.',
    fix: 'Publish /ai.txt (Spawning format) saying which media may be used by AI.',
    spec: 'https://site.spawning.ai/spawning-ai-txt',
    evidence: ['ai_txt'],
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
    goal: 'Grow AI attention window over window.',
    fix: 'Keep content fresh and reachable; growth is measured window over window by the pixel.',
    spec: null,
    evidence: [],
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
    goal: 'Improve the score scan over scan.',
    fix: 'Work through the findings and scan again.',
    spec: null,
    evidence: [],
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

/** A ready prompt for a coding agent that works on the site (issue 16 section 3). */
function agentPrompt(
  origin: string,
  title: string,
  goal: string,
  seen: string,
  fix: string,
  spec: string | null,
  url: string | null,
): string {
  return [
    `You are working on the code and configuration that serve ${origin}.`,
    `An agent-readiness scan found a problem: "${title}".`,
    `Goal: ${goal}`,
    `What the scan saw: ${seen}.`,
    `What to do: ${fix}`,
    spec ? `Specification: ${spec}` : null,
    `Find where this is produced (web server, CDN, framework routes or static files), make the change, and check it by requesting ${url ?? `${origin}/`} as the scan did. Change nothing else.`,
  ]
    .filter(Boolean)
    .join('\n');
}

/**
 * Not a check (it has no weight): the documents that answered like a made-up path already earned
 * nothing. It says why, and that agents probing the site are misled the same way.
 */
function softNotFoundFinding(facts: SiteFacts): Finding | null {
  const probe = facts.unknown_path;
  if (!probe?.soft_404) return null;
  const same = probe.same_answer.map((u) => new URL(u).pathname);
  const title = 'Unknown paths answer 404';
  const goal =
    'Answer paths that do not exist with 404, so agents can tell a missing document from a real one.';
  const seen = `a made-up path answered HTTP ${probe.status} ${probe.media_type ?? 'without a content type'} instead of 404${same.length ? `; ${same.join(', ')} gave the same answer and earned no credit` : ''}`;
  const fix =
    'Answer paths that do not exist with 404 (RFC 9110 section 15.5.5), above all under /.well-known/: serve the app shell only for the routes the app has, and publish real documents at the paths agents look for.';
  const spec = 'https://www.rfc-editor.org/rfc/rfc9110#section-15.5.5';
  return {
    id: 'soft_404',
    component: 'technical_foundation',
    severity: 'warning',
    title,
    goal,
    seen,
    fix,
    spec_url: spec,
    agent_prompt: agentPrompt(facts.origin, title, goal, seen, fix, spec, probe.url),
    evidence_url: probe.url,
    evidence: evidenceOf(facts.requests, ['unknown_path']).slice(0, 4),
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

function componentScore(results: { weight: number; score: number | null }[]): number | null {
  const scored = results.filter((r) => r.score !== null && r.weight > 0);
  const weight = scored.reduce((n, r) => n + r.weight, 0);
  if (weight === 0) return null;
  return Math.round((100 * scored.reduce((n, r) => n + (r.score as number) * r.weight, 0)) / weight);
}

function overall(results: { name: string; weight: number; score: number | null }[]): {
  score: number;
  note: string | null;
} {
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

/** schema.org types that say the site sells things, and those that say it is a product with an API. */
const shopTypes = new Set(['Product', 'Offer', 'AggregateOffer', 'OnlineStore', 'Store', 'ProductGroup']);
const apiTypes = new Set(['WebAPI', 'SoftwareApplication', 'WebApplication']);

/**
 * The site's profile (SCORING.md "Profiles"): an API or SaaS product publishes machine interfaces
 * (api-catalog, OpenAPI, OAuth, an MCP server card, an A2A card, x402) or says it is software; a
 * shop marks up products or offers; everything else is a content site.
 */
export function detectProfile(facts: SiteFacts): { id: ProfileId; reasons: string[] } {
  const d = facts.discovery;
  const api = [
    d.api_catalog.valid ? 'api-catalog' : null,
    d.openapi.valid ? 'OpenAPI document' : null,
    d.oauth_protected_resource.valid ? 'OAuth protected resource metadata' : null,
    d.mcp_server_card.valid ? 'MCP server card' : null,
    d.a2a_agent_card?.valid ? 'A2A agent card' : null,
    d.x402.valid ? 'x402 document' : null,
  ].filter((r): r is string => r !== null);
  const types = new Set(facts.pages.flatMap((p) => p.json_ld_types));
  for (const t of apiTypes) if (types.has(t)) api.push(`${t} JSON-LD`);
  if (api.length) return { id: 'api', reasons: api };
  const shop = [...shopTypes].filter((t) => types.has(t)).map((t) => `${t} JSON-LD`);
  if (facts.pages.some((p) => p.open_graph['og:type'] === 'product')) shop.push('og:type product');
  if (shop.length) return { id: 'shop', reasons: shop };
  return { id: 'content', reasons: ['no machine interface and no product markup found'] };
}

/**
 * A site that refuses every AI search and user-triggered agent it was asked as (door_test 0) is
 * capped in Faint: whatever it publishes, those agents cannot read it (SCORING.md "The door cap").
 */
export const DOOR_CLOSED_CAP = 49;
const doorCheck = checks.find((k) => k.id === 'door_test') as CheckDef;

export interface ScoreOptions {
  /** Score as this profile instead of the detected one. */
  profile?: ProfileId | null;
}

const MAX_EVIDENCE_PER_CHECK = 8;

/** The requests a check's judgement rests on, from the facts' evidence. */
export function evidenceOfCheck(facts: SiteFacts, checkId: string): RequestEvidence[] {
  const check = checks.find((k) => k.id === checkId);
  return check ? evidenceOf(facts.requests, check.evidence).slice(0, MAX_EVIDENCE_PER_CHECK) : [];
}

export function scoreSite(
  facts: SiteFacts,
  traffic: LiveTraffic | null,
  previous: ScoreHistory | null = null,
  options: ScoreOptions = {},
): SignalScore {
  const inputs: Inputs = { facts, traffic, previous };
  const detected = detectProfile(facts);
  const profile: ProfileChoice = {
    id: options.profile ?? detected.id,
    detected: detected.id,
    source: options.profile && options.profile !== detected.id ? 'requested' : 'detected',
    reasons: detected.reasons,
  };
  const applies = (k: CheckDef) => !k.applies || k.applies.includes(profile.id);
  const evaluations = new Map<string, Evaluation>();
  for (const check of checks) {
    evaluations.set(
      check.id,
      applies(check)
        ? check.evaluate(inputs)
        : { score: null, seen: `does not apply to a ${profile.id} site (profile ${profile.id})` },
    );
  }
  const statusOf = (k: CheckDef, e: Evaluation): CheckStatus => {
    if (!applies(k)) return 'not_applicable';
    if (e.score === null) return e.status ?? 'no_data';
    return e.score >= 1 ? 'pass' : e.score <= 0 ? 'fail' : 'partial';
  };

  const build = (overrides: ReadonlyMap<string, number> = new Map()): ComponentResult[] =>
    components.map((c) => {
      const results = checks
        .filter((k) => k.component === c.id)
        .map((k): CheckResult => {
          const e = evaluations.get(k.id) as Evaluation;
          const score = overrides.get(k.id) ?? (e.score === null ? null : round2(e.score));
          return {
            id: k.id,
            title: k.title,
            weight: k.weight,
            score,
            status: statusOf(k, e),
            seen: e.seen,
            evidence: evidenceOfCheck(facts, k.id),
          };
        });
      const score = componentScore(results);
      return { ...c, status: score === null ? 'no_data' : 'scored', score, checks: results };
    });

  // The score trend compares with the overall score computed without it.
  const first = overall(build());
  evaluations.set('score_trend', scoreTrend(previous, first.score));
  const result = build();
  const computed = overall(result);
  const doorClosed = applies(doorCheck) && evaluations.get('door_test')?.score === 0;
  const score = doorClosed ? Math.min(computed.score, DOOR_CLOSED_CAP) : computed.score;
  const note =
    doorClosed && computed.score > DOOR_CLOSED_CAP
      ? `${computed.note ? `${computed.note} ` : ''}AI search and user agents are refused at the door, so the score is capped at ${DOOR_CLOSED_CAP} (computed ${computed.score}).`
      : computed.note;

  const findings: Finding[] = [];
  const tools = new Set<string>();
  for (const check of checks) {
    const e = evaluations.get(check.id) as Evaluation;
    if (!applies(check) || e.score === null || e.score >= 1) continue;
    if (check.informational && e.score === 0) continue;
    const severity = e.score >= 0.5 && check.severity === 'critical' ? 'warning' : check.severity;
    findings.push({
      id: check.id,
      component: check.component,
      severity,
      title: check.title,
      goal: check.goal,
      seen: e.seen,
      fix: check.fix,
      spec_url: check.spec,
      agent_prompt: agentPrompt(
        facts.origin,
        check.title,
        check.goal,
        e.seen,
        check.fix,
        check.spec,
        e.evidence_url ?? null,
      ),
      evidence_url: e.evidence_url ?? null,
      evidence: evidenceOf(facts.requests, check.evidence).slice(0, 4),
    });
    for (const tool of check.tools ?? []) tools.add(tool);
  }
  const softNotFound = softNotFoundFinding(facts);
  if (softNotFound) findings.push(softNotFound);
  const order: Record<Severity, number> = { critical: 0, warning: 1, info: 2 };
  findings.sort((a, b) => order[a.severity] - order[b.severity]);
  if (!traffic) {
    const title = 'Live AI traffic is measured';
    const goal = 'Measure the AI agents that actually visit, not only whether they could.';
    const seen = `${NO_PIXEL_DATA}: Live AI Traffic has no data and is left out of the score`;
    const fix = 'Install the pixel (POST /pixel-install) and forward server logs to measure AI agent visits.';
    findings.push({
      id: 'no_pixel',
      component: 'live_ai_traffic',
      severity: 'info',
      title,
      goal,
      seen,
      fix,
      spec_url: null,
      agent_prompt: agentPrompt(facts.origin, title, goal, seen, fix, null, null),
      evidence_url: null,
      evidence: [],
    });
    tools.add(nextTools.installPixel);
  }
  if (findings.some((f) => f.severity !== 'info')) tools.add(nextTools.requestScan);
  const tier = tierOf(score);
  return {
    score,
    tier,
    scoring_version: SCORING_VERSION,
    profile,
    components: result,
    note,
    findings,
    recommended_next_tools: [...tools],
    next_level: nextLevel(score, tier, result, build),
  };
}

/**
 * The next tier up and the fewest checks that reach it: the failing checks that count, each tried
 * at full marks, largest gain first, until the overall score reaches the tier's floor.
 */
function nextLevel(
  score: number,
  tier: Tier,
  result: ComponentResult[],
  build: (overrides: ReadonlyMap<string, number>) => ComponentResult[],
): NextLevel | null {
  const index = tiers.findIndex((t) => t.id === tier.id);
  const next = index > 0 ? tiers[index - 1] : undefined;
  if (!next) return null;
  const open = result.flatMap((c) =>
    c.checks
      .filter((k) => k.score !== null && k.score < 1 && k.weight > 0 && k.id !== 'score_trend')
      .map((k) => ({ id: k.id, title: k.title, component: c.id })),
  );
  const overrides = new Map<string, number>();
  const gainOf = (id: string) => {
    const trial = new Map(overrides).set(id, 1);
    return overall(build(trial)).score - overall(build(overrides)).score;
  };
  const chosen: NextLevel['checks'] = [];
  let current = score;
  const candidates = [...open];
  while (current < next.min && candidates.length) {
    const ranked = candidates.map((c) => ({ ...c, gain: gainOf(c.id) })).sort((a, b) => b.gain - a.gain);
    const best = ranked[0] as (typeof ranked)[number];
    candidates.splice(
      candidates.findIndex((c) => c.id === best.id),
      1,
    );
    overrides.set(best.id, 1);
    current = overall(build(overrides)).score;
    chosen.push(best);
  }
  return { tier: next, points_needed: next.min - score, checks: chosen };
}

const round2 = (n: number) => Math.round(n * 100) / 100;
