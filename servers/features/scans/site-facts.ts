/**
 * What a scan stores about a site: the facts the crawler collects (`crawler.ts`) and the scoring
 * judges (`scoring.ts`). Facts stored by an older scoring version lack the fields marked so.
 */
import type { AiTxt } from './collectors/ai-txt.ts';
import type { Ap2Declaration, CommerceManifest, MppAnswer, X402Terms } from './collectors/commerce.ts';
import type { DiscoveryCheck, MarkdownNegotiation } from './collectors/discovery.ts';
import type { LlmsTxt } from './collectors/llms-txt.ts';
import type { PageFacts } from './collectors/page.ts';
import type { RobotsFacts } from './collectors/robots.ts';
import type { UnknownPathAnswer } from './collectors/soft-404.ts';
import type { WebMcpTool } from './collectors/webmcp.ts';
import type { RequestEvidence } from './evidence.ts';
import type { DoorAnswer, McpVerification, OAuthChain } from './verify.ts';

/** One page as stored with a scan: the page facts without the link list. */
export type PageSummary = Omit<PageFacts, 'links'> & {
  status: number;
  bytes: number;
  truncated: boolean;
  /** The `X-Robots-Tag` header of the answer (absent in facts stored before scoring version 2). */
  x_robots_tag?: string | null;
};

/** The OpenAPI document found, and whether the servers it lists answer. */
export interface OpenApiVerification {
  url: string;
  /** Parsed in full (JSON or YAML) with an openapi/swagger field. */
  parsed: boolean;
  truncated: boolean;
  servers: { url: string; status: number | null; ok: boolean; note: string | null }[];
}

/** The x402 resources listed, each asked for without payment. */
export interface X402Verification {
  url: string;
  resources: {
    url: string;
    status: number | null;
    /** valid: 402 with complete requirements; needs_input: 400/422 before any price; failed: anything else. */
    verdict: 'valid' | 'needs_input' | 'failed';
    note: string | null;
  }[];
}

/** A paid resource the site lists, asked for once without payment (issue 35). */
export interface PaidResourceAnswer {
  url: string;
  /** Listed by the x402 document, or an OpenAPI operation marked with `x-payment-info` (MPP discovery). */
  source: 'x402' | 'openapi';
  status: number | null;
  x402: X402Terms;
  mpp: MppAnswer;
}

/** The agent commerce protocols the site speaks (`crawl/commerce.ts`). */
export interface CommerceFacts {
  paid: PaidResourceAnswer[];
  /** The UCP business profile at `/.well-known/ucp`. */
  ucp: CommerceManifest;
  /** The ACP discovery document at `/.well-known/acp.json` (or `/.well-known/acp`). */
  acp: CommerceManifest;
  /** AP2 as the A2A agent card declares it; null without a card. */
  ap2: Ap2Declaration | null;
}

/** llms.txt as served, and whether the links it lists resolve. */
export interface LlmsVerification {
  url: string;
  content_type: string | null;
  served_as_text: boolean;
  links_total: number;
  links: { url: string; status: number | null; ok: boolean; note: string | null }[];
}

/** robots.txt against itself and the site's own documents. */
export interface PolicyFacts {
  content_signal_conflicts: string[];
  /** User agents (`*` and AI search and user agents) that may not fetch llms.txt. */
  llms_txt_blocked_for: string[];
  sitemap_blocked_for: string[];
}

/** Who the home page and llms.txt say the site is (the entity SKU's readers, `collectors/entity.ts`). */
export interface EntityFacts {
  organization_name: string | null;
  organization_url: string | null;
  same_as: string[];
  og_site_name: string | null;
  llms_txt_title: string | null;
}

/** The home page as headless Chromium ran it, and the WebMCP tools it registered (`crawl/webmcp.ts`). */
export interface WebMcpFacts {
  url: string;
  /**
   * loaded: the load event came (or the page failed after registering tools: `note` says how);
   * time_budget: the page's budget ended first; failed: nothing to read.
   */
  outcome: 'loaded' | 'time_budget' | 'failed';
  note: string | null;
  tools: WebMcpTool[];
  /** Requests the page made that were answered through the scanner's fetcher. */
  requests: number;
  /** Requests refused: a destination the address policy forbids, up to ten. */
  blocked: string[];
}

export interface SiteFacts {
  /** Where the crawl ran (after following the home page's redirects). */
  origin: string;
  https: boolean;
  robots: RobotsFacts & { url: string };
  llms_txt: (LlmsTxt & { url: string }) | null;
  llms_full_txt: { url: string; bytes: number; truncated: boolean } | null;
  ai_txt: (AiTxt & { url: string }) | null;
  /** The answer to a made-up path under `/.well-known/`; null when it could not be fetched. */
  unknown_path: UnknownPathAnswer | null;
  sitemap: {
    /** Sitemap documents read (indexes and urlsets), with what each held. */
    documents: {
      url: string;
      kind: 'urlset' | 'index' | 'invalid' | 'unreachable';
      entries: number;
      note: string | null;
    }[];
    urls_found: number;
    /** URLs with a valid `lastmod` (absent before scoring version 2). */
    urls_with_lastmod?: number;
  };
  markdown: MarkdownNegotiation & {
    /** The markdown answer carried `Vary: Accept` (absent before scoring version 2). */
    vary_accept?: boolean | null;
    /** Share of words shared with the HTML page (0-1). */
    text_overlap?: number | null;
    /** The same asked of a page beyond the home page. */
    other_page?: {
      url: string;
      supported: boolean;
      note: string | null;
      vary_accept: boolean | null;
      text_overlap: number | null;
    } | null;
  };
  discovery: {
    api_catalog: DiscoveryCheck & { service_descs: string[]; apis: number };
    oauth_protected_resource: DiscoveryCheck;
    oauth_authorization_server: DiscoveryCheck;
    mcp_server_card: DiscoveryCheck;
    x402: DiscoveryCheck;
    openapi: DiscoveryCheck;
    a2a_agent_card?: DiscoveryCheck;
    agent_skills?: DiscoveryCheck;
    web_bot_auth?: DiscoveryCheck;
  };
  /** The home page's answer headers that checks read (absent before scoring version 2). */
  home?: { url: string; status: number; link: string | null; x_robots_tag: string | null } | null;
  /** What the documents claim, checked against the servers (absent before scoring version 2). */
  verification?: {
    mcp: McpVerification | null;
    oauth: OAuthChain | null;
    openapi: OpenApiVerification | null;
    x402: X402Verification | null;
    llms_txt: LlmsVerification | null;
    door: DoorAnswer[] | null;
  };
  /**
   * WebMCP tools of the home page; null when this deployment runs no browser
   * (`scanner.webmcp.enabled`) or the scan was a quick one; absent in facts stored before it existed.
   */
  webmcp?: WebMcpFacts | null;
  /** Agent commerce: live 402s (x402, MPP) and the UCP, ACP and AP2 manifests (absent before issue 35). */
  commerce?: CommerceFacts | null;
  policy?: PolicyFacts | null;
  entity?: EntityFacts | null;
  /** Every request the scan made, as evidence (capped per topic; absent before scoring version 2). */
  requests?: RequestEvidence[];
  pages: PageSummary[];
  crawl: {
    requests: number;
    pages_fetched: number;
    pages_failed: number;
    skipped_by_robots: number;
    skipped_not_html: number;
    bytes: number;
    /** Why the crawl ended before visiting every known page, if it did. */
    stopped: 'max_pages' | 'time_budget' | null;
    /** Up to 20 failures, for findings and debugging: URL and a short reason. */
    errors: { url: string; error: string }[];
    duration_ms: number;
  };
}
