/**
 * The scanner's crawler: fetches one site's public pages and machine documents, politely and safely.
 *
 * Safety comes from `createSafeFetch` (only http(s); every connection, each redirect hop included,
 * goes to an address the policy allows, checked at connect time so DNS rebinding cannot slip
 * through). On top of it this module follows redirects itself (`redirect: 'manual'`) with a hop cap
 * and loop detection and refuses hops that leave the site, reads at most `max_bytes` of any body,
 * bounds each request and the whole scan in time, checks content types, and obeys the site's
 * robots.txt for its own product token (robots-parser is given the token, never the full UA).
 * Politeness: at most `concurrency` requests in flight to the host (p-limit) and `delay_ms` between
 * a slot's requests (raised to the site's Crawl-delay for our token, capped).
 *
 * Before judging any document it asks for a made-up path under `/.well-known/`: a site that
 * answers that with 2xx (a soft 404, `collectors/soft-404.ts`) would otherwise seem to have every
 * document, and an answer the same as that one earns nothing.
 *
 * What is collected is judged by the pure collectors in `collectors/`; scoring is `scoring.ts`.
 */
import { randomBytes } from 'node:crypto';
import * as cheerio from 'cheerio';
import LinkHeader from 'http-link-header';
import pLimit from 'p-limit';
import { getDomain } from 'tldts';
import { readLimitedBody, type SafeFetch } from '../../outbound/safe-fetch.ts';
import { type AiTxt, parseAiTxt } from './collectors/ai-txt.ts';
import {
  agentDocumentPaths,
  checkA2aCard,
  checkAgentSkills,
  checkApiCatalog,
  checkAuthorizationServer,
  checkMarkdownNegotiation,
  checkMcpCard,
  checkOpenApi,
  checkProtectedResource,
  checkWebBotAuth,
  checkX402,
  type DiscoveryCheck,
  discoveryPaths,
  type Fetched,
  type MarkdownNegotiation,
  mcpCardEndpoint,
  openApiServers,
  readMcpCatalog,
  x402Requirements,
  x402Resources,
} from './collectors/discovery.ts';
import { entityClaimsOfPage, sameAsOfPage } from './collectors/entity.ts';
import { type LlmsTxt, parseLlmsTxt } from './collectors/llms-txt.ts';
import { organizationTypes, type PageFacts, parsePage } from './collectors/page.ts';
import { absentRobots, aiAgents, parseRobots, type RobotsFacts, robotsParser } from './collectors/robots.ts';
import { parseSitemap } from './collectors/sitemap.ts';
import {
  answersLikeUnknownPath,
  fingerprintOf,
  isHtmlAnswer,
  mediaType,
  type UnknownPathAnswer,
} from './collectors/soft-404.ts';
import { bodyPreview, EvidenceLog, keptHeaders, type RequestEvidence } from './evidence.ts';
import {
  type DoorAnswer,
  doorTest,
  type McpVerification,
  type OAuthChain,
  type Probe,
  type ProbeOptions,
  textOverlap,
  verifyMcp,
  verifyOAuthChain,
  wordsOf,
} from './verify.ts';

/** Largest answer of a site's MCP server read by the live check (`verifyMcp`). */
const MCP_ANSWER_MAX_BYTES = 1024 * 1024;
export interface CrawlLimits {
  max_pages: number;
  max_bytes: number;
  request_timeout_ms: number;
  scan_timeout_ms: number;
  concurrency: number;
  delay_ms: number;
  max_redirects: number;
  max_sitemaps: number;
}

export interface CrawlProgress {
  phase: 'robots' | 'documents' | 'pages' | 'done';
  done: number;
  total: number;
  message: string;
}

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

export interface CrawlRequest {
  /** A host, optionally with a port (`example.com`, `127.0.0.1:8080`). */
  domain: string;
  fetch: SafeFetch;
  userAgent: string;
  limits: CrawlLimits;
  onProgress?: (progress: CrawlProgress) => void;
  signal?: AbortSignal;
  /** Tried in order until one connects; default https then http. */
  schemes?: ('https' | 'http')[];
  /**
   * Called with every HTML page read (the home page included) while its body is at hand, for
   * callers that need more of a page than its facts (the llms-txt SKU turns it into text). Bodies
   * are not kept: a crawl holds at most `concurrency` of them at a time.
   */
  onPage?: (page: { url: string; html: string; facts: PageFacts }) => void;
}

export class CrawlError extends Error {
  readonly reason: 'unreachable' | 'blocked' | 'timeout';
  constructor(reason: CrawlError['reason'], message: string) {
    super(message);
    this.name = 'CrawlError';
    this.reason = reason;
  }
}

interface FetchResult extends Fetched {
  final_url: string;
  /** The answer's headers kept as evidence (content type, Vary, Link, X-Robots-Tag ...). */
  headers: Record<string, string>;
  truncated: boolean;
  bytes: number;
}

type FetchOutcome =
  | { ok: true; result: FetchResult }
  | { ok: false; url: string; error: string; blocked: boolean };

const MAX_CRAWL_DELAY_MS = 2000;
const MAX_ERRORS_KEPT = 20;
/** A made-up well-known name: a plain prefix, so a site's operator can tell what it is, and a random tail. */
const unknownPathPrefix = '/.well-known/agent-service-probe-';
const htmlTypes = /^(text\/html|application\/xhtml\+xml)\b/i;

/** The robots.txt product token of a user agent string (`agent-service-scanner/1.0 (+url)` -> `agent-service-scanner`). */
export function productToken(userAgent: string): string {
  return (userAgent.split(/[/\s]/)[0] ?? userAgent).trim();
}

/** Same site: same host, or the same registrable domain for named hosts (`www.` and `example.com`). */
export function sameSite(a: URL, b: URL): boolean {
  if (a.host === b.host) return true;
  const da = getDomain(a.hostname);
  return da !== null && da === getDomain(b.hostname) && a.port === b.port;
}

export async function crawlSite(request: CrawlRequest): Promise<SiteFacts> {
  const { limits, userAgent } = request;
  const started = Date.now();
  const budget = AbortSignal.timeout(limits.scan_timeout_ms);
  const scanSignal = request.signal ? AbortSignal.any([request.signal, budget]) : budget;
  const token = productToken(userAgent);
  const limit = pLimit(limits.concurrency);
  let delayMs = limits.delay_ms;
  const crawl: SiteFacts['crawl'] = {
    requests: 0,
    pages_fetched: 0,
    pages_failed: 0,
    skipped_by_robots: 0,
    skipped_not_html: 0,
    bytes: 0,
    stopped: null,
    errors: [],
    duration_ms: 0,
  };
  const evidence = new EvidenceLog();
  let done = 0;
  let total = 13;
  const progress = (phase: CrawlProgress['phase'], message: string) =>
    request.onProgress?.({ phase, done, total: Math.max(total, done), message });
  const noteError = (url: string, error: string) => {
    if (crawl.errors.length < MAX_ERRORS_KEPT) crawl.errors.push({ url, error });
  };

  /** One request through the politeness limiter, redirects followed hop by hop within the site. */
  const get = (
    url: string,
    accept: string,
    maxBytes = limits.max_bytes,
    options: Omit<ProbeOptions, 'accept' | 'maxBytes'> = { topic: 'page' },
  ): Promise<FetchOutcome> =>
    limit(async () => {
      if (scanSignal.aborted) return { ok: false, url, error: 'scan time budget exhausted', blocked: false };
      try {
        return await fetchFollowing(url, accept, maxBytes, options);
      } finally {
        done++;
        if (delayMs > 0 && !scanSignal.aborted) await sleep(delayMs, scanSignal);
      }
    });

  const fetchFollowing = async (
    start: string,
    accept: string,
    maxBytes: number,
    options: Omit<ProbeOptions, 'accept' | 'maxBytes'>,
  ): Promise<FetchOutcome> => {
    const visited = new Set<string>();
    let current = new URL(start);
    const method = options.method ?? 'GET';
    for (let hop = 0; ; hop++) {
      visited.add(current.href);
      crawl.requests++;
      let response: Awaited<ReturnType<SafeFetch>>;
      const signal = AbortSignal.any([scanSignal, AbortSignal.timeout(limits.request_timeout_ms)]);
      const started = Date.now();
      const record = (
        status: number | null,
        headers: Record<string, string>,
        body: string | null,
        error: string | null,
      ) =>
        evidence.add({
          topic: options.topic,
          method,
          url: current.href,
          status,
          headers,
          body_preview: body === null ? null : bodyPreview(body),
          duration_ms: Date.now() - started,
          error,
          ...(options.userAgent ? { user_agent: options.userAgent } : {}),
        });
      try {
        response = await request.fetch(current, {
          method,
          redirect: 'manual',
          headers: { accept, ...options.headers, 'user-agent': options.userAgent ?? userAgent },
          ...(options.body !== undefined ? { body: options.body } : {}),
          signal,
        });
      } catch (err) {
        const failure = describeFailure(err, scanSignal);
        record(null, {}, null, failure.error);
        return { ok: false, url: current.href, ...failure };
      }
      const location = response.headers.get('location');
      if (response.status >= 300 && response.status < 400 && location) {
        record(response.status, keptHeaders(response.headers), null, null);
        await response.body?.cancel().catch(() => {});
        let next: URL;
        try {
          next = new URL(location, current);
        } catch {
          return { ok: false, url: current.href, error: 'redirect to an invalid URL', blocked: false };
        }
        if (visited.has(next.href))
          return { ok: false, url: current.href, error: 'redirect loop', blocked: false };
        if (hop + 1 > limits.max_redirects)
          return {
            ok: false,
            url: current.href,
            error: `more than ${limits.max_redirects} redirects`,
            blocked: false,
          };
        if (!sameSite(new URL(start), next))
          return {
            ok: false,
            url: current.href,
            error: `redirect leaves the site (${next.host})`,
            blocked: false,
          };
        current = next;
        continue;
      }
      try {
        const body = await readLimitedBody(response, maxBytes);
        crawl.bytes += body.bytes.length;
        const text = body.bytes.toString('utf8');
        const headers = keptHeaders(response.headers);
        record(response.status, headers, text, null);
        return {
          ok: true,
          result: {
            url: start,
            final_url: current.href,
            status: response.status,
            content_type: response.headers.get('content-type'),
            headers,
            body: text,
            truncated: body.truncated,
            bytes: body.bytes.length,
          },
        };
      } catch (err) {
        const failure = describeFailure(err, scanSignal);
        record(response.status, keptHeaders(response.headers), null, failure.error);
        return { ok: false, url: current.href, ...failure };
      }
    }
  };

  /** `get` as the verifications call it. */
  const probe: Probe = async (url, options) => {
    const outcome = await get(url, options.accept ?? '*/*', options.maxBytes ?? 64 * 1024, options);
    return outcome.ok ? { ok: true, ...outcome.result } : outcome;
  };

  const asFetched = (o: FetchOutcome): Fetched | null =>
    o.ok ? { ...o.result, url: o.result.final_url } : null;
  const textOf = (o: FetchOutcome): FetchResult | null =>
    o.ok && o.result.status >= 200 && o.result.status < 300 ? o.result : null;

  // 1. robots.txt decides the origin (https first) and what we may fetch.
  progress('robots', 'reading robots.txt');
  let origin = '';
  let robotsOutcome: FetchOutcome | null = null;
  const schemes = request.schemes ?? ['https', 'http'];
  for (const scheme of schemes) {
    const candidate = `${scheme}://${request.domain}`;
    const outcome = await get(`${candidate}/robots.txt`, 'text/plain, */*;q=0.1', 512 * 1024, {
      topic: 'robots',
    });
    if (outcome.ok) {
      origin = candidate;
      robotsOutcome = outcome;
      break;
    }
    if (outcome.blocked) throw new CrawlError('blocked', `${request.domain}: destination not allowed`);
    if (scanSignal.aborted) throw new CrawlError('timeout', `${request.domain}: time budget exhausted`);
    robotsOutcome = outcome;
  }
  if (!origin) {
    const reason = robotsOutcome && !robotsOutcome.ok ? robotsOutcome.error : 'no answer';
    throw new CrawlError('unreachable', `${request.domain} could not be reached (${reason})`);
  }
  const robotsUrl = `${origin}/robots.txt`;
  const robotsText = robotsOutcome ? textOf(robotsOutcome) : null;
  const robotsIsText = robotsText && !isHtmlAnswer(robotsText);
  const ownRules = robotsParser(robotsUrl, robotsIsText ? robotsText.body : '');
  const crawlDelay = ownRules.getCrawlDelay(token);
  if (crawlDelay) delayMs = Math.max(delayMs, Math.min(crawlDelay * 1000, MAX_CRAWL_DELAY_MS));
  const mayFetch = (url: string) => ownRules.isAllowed(url, token) !== false;

  // 2. Home page first: its final URL fixes the crawl origin (http -> https, apex -> www).
  progress('documents', 'reading the home page');
  const pages: PageSummary[] = [];
  const queue: string[] = [];
  const seen = new Set<string>();
  /** Words of up to two pages' text, to compare with their markdown renderings. */
  const pageWords = new Map<string, Set<string>>();
  let homeHtml: string | null = null;
  const enqueue = (url: string, base: string) => {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      return;
    }
    u.hash = '';
    if (u.origin !== base || seen.has(u.href)) return;
    if (/\.(png|jpe?g|gif|webp|svg|ico|pdf|zip|gz|mp4|mp3|woff2?|css|js|xml|txt|json|md)$/i.test(u.pathname))
      return;
    seen.add(u.href);
    queue.push(u.href);
  };
  const readPage = (r: FetchResult) => {
    crawl.pages_fetched++;
    const facts = parsePage(r.body, r.final_url);
    request.onPage?.({ url: r.final_url, html: r.body, facts });
    if (pageWords.size < 6) pageWords.set(r.final_url, wordsOf(pageText(r.body)));
    const { links, ...summary } = facts;
    pages.push({
      ...summary,
      status: r.status,
      bytes: r.bytes,
      truncated: r.truncated,
      x_robots_tag: r.headers['x-robots-tag'] ?? null,
    });
    return links;
  };

  const visitPage = async (url: string): Promise<void> => {
    if (!mayFetch(url)) {
      crawl.skipped_by_robots++;
      return;
    }
    const outcome = await get(url, 'text/html, application/xhtml+xml;q=0.9, */*;q=0.1');
    if (!outcome.ok) {
      crawl.pages_failed++;
      noteError(outcome.url, outcome.error);
      return;
    }
    const r = outcome.result;
    if (r.status < 200 || r.status >= 300) {
      crawl.pages_failed++;
      noteError(r.final_url, `HTTP ${r.status}`);
      return;
    }
    if (!htmlTypes.test(r.content_type ?? '')) {
      crawl.skipped_not_html++;
      noteError(r.final_url, `not HTML (${r.content_type ?? 'no content type'})`);
      return;
    }
    const links = readPage(r);
    for (const link of links) enqueue(link, new URL(r.final_url).origin);
    progress('pages', `read ${new URL(r.final_url).pathname}`);
  };

  const home = `${origin}/`;
  seen.add(home);
  const homeOutcome = mayFetch(home)
    ? await get(home, 'text/html;q=1, */*;q=0.1', limits.max_bytes, { topic: 'home' })
    : null;
  const homeFinal = homeOutcome?.ok ? homeOutcome.result.final_url : home;
  const crawlOrigin = new URL(homeFinal).origin;

  // 3. Site-level documents, in parallel through the same limiter.
  const at = (path: string) => `${crawlOrigin}${path}`;
  const allowedGet = (
    path: string,
    accept: string,
    topic: string,
    maxBytes?: number,
  ): Promise<FetchOutcome | null> =>
    mayFetch(at(path)) ? get(at(path), accept, maxBytes, { topic }) : Promise.resolve(null);
  const wellKnown = (path: string, topic: string) =>
    get(at(path), 'application/json, */*;q=0.1', 256 * 1024, { topic });
  const unknownPathUrl = at(`${unknownPathPrefix}${randomBytes(8).toString('hex')}`);
  const [
    probeAnswer,
    llms,
    llmsFull,
    aiTxt,
    catalog,
    prm,
    asm,
    mcpCard,
    mcpJson,
    x402,
    x402Plain,
    a2aCard,
    skills,
    botAuth,
    markdown,
  ] = await Promise.all([
    get(unknownPathUrl, 'application/json, */*;q=0.1', 256 * 1024, { topic: 'unknown_path' }),
    allowedGet('/llms.txt', 'text/plain, text/markdown, */*;q=0.1', 'llms_txt'),
    allowedGet('/llms-full.txt', 'text/plain, text/markdown, */*;q=0.1', 'llms_full_txt'),
    allowedGet('/ai.txt', 'text/plain, */*;q=0.1', 'ai_txt', 256 * 1024),
    get(at(discoveryPaths.api_catalog), 'application/linkset+json, application/json;q=0.9', 256 * 1024, {
      topic: 'api_catalog',
    }),
    wellKnown(discoveryPaths.oauth_protected_resource, 'oauth'),
    wellKnown(discoveryPaths.oauth_authorization_server, 'oauth'),
    wellKnown(discoveryPaths.mcp_server_card, 'mcp'),
    wellKnown(discoveryPaths.mcp_json, 'mcp'),
    wellKnown(discoveryPaths.x402, 'x402'),
    wellKnown(agentDocumentPaths.x402_plain, 'x402'),
    wellKnown(agentDocumentPaths.a2a_agent_card, 'a2a'),
    wellKnown(agentDocumentPaths.agent_skills, 'agent_skills'),
    get(
      at(agentDocumentPaths.web_bot_auth),
      'application/http-message-signatures-directory+json, application/json;q=0.9',
      64 * 1024,
      { topic: 'web_bot_auth' },
    ),
    mayFetch(homeFinal)
      ? get(homeFinal, 'text/markdown, text/plain;q=0.5', limits.max_bytes, { topic: 'markdown' })
      : Promise.resolve(null),
  ]);

  const unknownPath: UnknownPathAnswer | null = probeAnswer.ok
    ? {
        url: probeAnswer.result.final_url,
        ...fingerprintOf(asFetched(probeAnswer) as Fetched),
        soft_404: probeAnswer.result.status >= 200 && probeAnswer.result.status < 300,
        same_answer: [],
      }
    : null;
  if (!probeAnswer.ok) noteError(probeAnswer.url, probeAnswer.error);
  /** The answer is the site's answer to any path it lacks: noted, and never credited. */
  const likeUnknownPath = (o: FetchOutcome | null): boolean => {
    const fetched = o ? asFetched(o) : null;
    if (!fetched || !unknownPath || !answersLikeUnknownPath(fetched, unknownPath)) return false;
    if (!unknownPath.same_answer.includes(fetched.url)) unknownPath.same_answer.push(fetched.url);
    return true;
  };
  for (const o of [catalog, prm, asm, mcpCard, mcpJson, x402, x402Plain, a2aCard, skills, botAuth])
    likeUnknownPath(o);

  const robots =
    robotsIsText && !likeUnknownPath(robotsOutcome)
      ? parseRobots(robotsUrl, robotsText.body)
      : absentRobots();
  const plainText = (o: FetchOutcome | null) => {
    const r = o ? textOf(o) : null;
    return r && !isHtmlAnswer(r) && !likeUnknownPath(o) ? r : null;
  };
  const llmsText = plainText(llms);
  const llmsFullText = plainText(llmsFull);
  const aiText = plainText(aiTxt);
  const apiCatalog = checkApiCatalog(asFetched(catalog), at(discoveryPaths.api_catalog), unknownPath);
  const cardCheck = checkMcpCard(asFetched(mcpCard), at(discoveryPaths.mcp_server_card), unknownPath);
  let mcpCheck = cardCheck.present
    ? cardCheck
    : checkMcpCard(asFetched(mcpJson), at(discoveryPaths.mcp_json), unknownPath);
  /** The card the MCP verification reads: the one that earned the check. */
  let cardBody: { url: string; body: string } | null = null;
  if (mcpCheck.valid) {
    const source = cardCheck.present ? mcpCard : mcpJson;
    if (source.ok) cardBody = { url: source.result.final_url, body: source.result.body };
  }
  if (!mcpCheck.present) {
    // SEP-2127: the catalog names each card's URL; the first one on this site is read.
    const catalogOutcome = await wellKnown(discoveryPaths.mcp_catalog, 'mcp');
    likeUnknownPath(catalogOutcome);
    const mcpCatalog = readMcpCatalog(asFetched(catalogOutcome), at(discoveryPaths.mcp_catalog), unknownPath);
    if (mcpCatalog.check.present) {
      mcpCheck = mcpCatalog.check;
      const cardUrl = mcpCatalog.cards.find((u) => sameSite(new URL(u), new URL(crawlOrigin)));
      if (cardUrl && mayFetch(cardUrl)) {
        const card = await get(
          cardUrl,
          'application/mcp-server-card+json, application/json;q=0.9',
          256 * 1024,
          { topic: 'mcp' },
        );
        const listed = checkMcpCard(asFetched(card), cardUrl, unknownPath);
        if (listed.valid) {
          mcpCheck = listed;
          if (card.ok) cardBody = { url: card.result.final_url, body: card.result.body };
        }
      }
    }
  }

  // 4. Home page facts, then sitemaps, then the rest of the pages breadth first.
  let homeHeaders: Record<string, string> | null = null;
  if (homeOutcome) {
    if (homeOutcome.ok) {
      const r = homeOutcome.result;
      homeHeaders = r.headers;
      if (r.status >= 200 && r.status < 300 && htmlTypes.test(r.content_type ?? '')) {
        homeHtml = r.body;
        for (const link of readPage(r)) enqueue(link, crawlOrigin);
      } else {
        crawl.pages_failed++;
        noteError(r.final_url, r.status >= 300 ? `HTTP ${r.status}` : `not HTML (${r.content_type})`);
      }
    } else {
      crawl.pages_failed++;
      noteError(homeOutcome.url, homeOutcome.error);
    }
  } else {
    crawl.skipped_by_robots++;
  }

  const sitemap: SiteFacts['sitemap'] = { documents: [], urls_found: 0, urls_with_lastmod: 0 };
  const sitemapQueue = robots.sitemaps.length ? [...robots.sitemaps] : [at('/sitemap.xml')];
  const sitemapSeen = new Set<string>();
  const sitemapPages: string[] = [];
  while (sitemapQueue.length && sitemap.documents.length < limits.max_sitemaps && !scanSignal.aborted) {
    const url = sitemapQueue.shift() as string;
    if (sitemapSeen.has(url)) continue;
    sitemapSeen.add(url);
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      continue;
    }
    if (!sameSite(target, new URL(crawlOrigin))) {
      sitemap.documents.push({ url, kind: 'unreachable', entries: 0, note: 'on another site' });
      continue;
    }
    const outcome = await get(url, 'application/xml, text/xml;q=0.9, */*;q=0.1', limits.max_bytes, {
      topic: 'sitemap',
    });
    const r = textOf(outcome);
    if (!r) {
      sitemap.documents.push({
        url,
        kind: 'unreachable',
        entries: 0,
        note: outcome.ok ? `HTTP ${outcome.result.status}` : outcome.error,
      });
      continue;
    }
    const parsed = parseSitemap(r.body);
    if (parsed.kind === 'urlset') {
      sitemap.documents.push({
        url,
        kind: 'urlset',
        entries: parsed.urls.length,
        note: r.truncated ? 'truncated' : null,
      });
      sitemap.urls_found += parsed.urls.length;
      sitemap.urls_with_lastmod =
        (sitemap.urls_with_lastmod ?? 0) +
        parsed.urls.filter((u) => u.lastmod && validLastmod(u.lastmod)).length;
      for (const u of parsed.urls) sitemapPages.push(u.loc);
    } else if (parsed.kind === 'index') {
      sitemap.documents.push({ url, kind: 'index', entries: parsed.sitemaps.length, note: null });
      sitemapQueue.push(...parsed.sitemaps);
    } else {
      sitemap.documents.push({ url, kind: 'invalid', entries: 0, note: parsed.reason });
    }
  }
  for (const url of sitemapPages) enqueue(url, crawlOrigin);

  total = done + Math.min(queue.length, limits.max_pages - pages.length) + 1;
  while (queue.length > 0 && !scanSignal.aborted) {
    const room = limits.max_pages - (crawl.pages_fetched + crawl.pages_failed);
    if (room <= 0) {
      crawl.stopped = 'max_pages';
      break;
    }
    const wave = queue.splice(0, room);
    await Promise.all(wave.map(visitPage));
    total = done + Math.min(queue.length, Math.max(0, limits.max_pages - pages.length)) + 1;
  }

  // 5. OpenAPI: a service-desc from the catalog, a link on the pages, or the conventional paths.
  const onSite = (u: string) => {
    try {
      return sameSite(new URL(u), new URL(crawlOrigin));
    } catch {
      return false;
    }
  };
  const openapiCandidates = [
    ...apiCatalog.service_descs,
    ...linkTargets(homeHeaders?.link ?? null, 'service-desc', homeFinal),
    ...pages.flatMap((p) => p.openapi_links),
  ].filter(onSite);
  let openapi = checkOpenApi(null, at('/openapi.json'));
  let openapiBody: { url: string; body: string; truncated: boolean } | null = null;
  for (const candidate of [...new Set(openapiCandidates), at('/openapi.json'), at('/openapi.yaml')].slice(
    0,
    3,
  )) {
    if (scanSignal.aborted) break;
    const outcome = await get(
      candidate,
      'application/json, application/yaml;q=0.9, */*;q=0.1',
      limits.max_bytes,
      {
        topic: 'openapi',
      },
    );
    likeUnknownPath(outcome);
    openapi = checkOpenApi(asFetched(outcome), candidate, unknownPath);
    if (openapi.valid) {
      if (outcome.ok)
        openapiBody = {
          url: outcome.result.final_url,
          body: outcome.result.body,
          truncated: outcome.result.truncated,
        };
      break;
    }
  }

  // 6. Verify what the documents claim (issue 16 section 1), in parallel, each bounded.
  progress('documents', 'verifying what the documents claim');
  const x402Fetched = [x402, x402Plain].find(
    (o) => o.ok && checkX402(asFetched(o), o.result.final_url, unknownPath).valid,
  );
  const x402Check = checkX402(asFetched(x402), at(discoveryPaths.x402), unknownPath);
  const x402PlainCheck = checkX402(asFetched(x402Plain), at(agentDocumentPaths.x402_plain), unknownPath);
  const markdownPage = pages.find((p) => p.url !== homeFinal && p.url !== `${crawlOrigin}/`) ?? null;
  const markdownTarget = markdownPage;
  const [mcpLive, openapiServers, x402Probes, llmsLinks, door, markdownOther] = await Promise.all([
    cardBody && !scanSignal.aborted
      ? (() => {
          const { endpoint, tools } = mcpCardEndpoint(cardBody.body, cardBody.url);
          if (endpoint && !onSite(endpoint)) return Promise.resolve(null);
          return verifyMcp({
            cardUrl: cardBody.url,
            endpoint,
            cardTools: tools,
            // Each MCP request takes a slot of the limiter and counts as a request of the crawl.
            fetch: (url, init) =>
              limit(async () => {
                crawl.requests++;
                try {
                  return await request.fetch(url, init);
                } finally {
                  done++;
                }
              }),
            userAgent,
            timeoutMs: limits.request_timeout_ms,
            // A tool list with input and output schemas runs past a page's size: a server with a few
            // dozen tools answers `tools/list` with a quarter of a megabyte (ours: 262 KB).
            maxBytes: MCP_ANSWER_MAX_BYTES,
            evidence,
            signal: scanSignal,
          });
        })()
      : Promise.resolve(null),
    verifyOpenApiServers(openapiBody),
    verifyX402Resources(x402Fetched?.ok ? x402Fetched.result : null),
    verifyLlmsLinks(llmsText),
    mayFetch(homeFinal) && !scanSignal.aborted
      ? doorTest(homeFinal, probe, scanSignal)
      : Promise.resolve(null),
    markdownTarget && !scanSignal.aborted
      ? get(markdownTarget.url, 'text/markdown, text/plain;q=0.5', limits.max_bytes, { topic: 'markdown' })
      : Promise.resolve(null),
  ]);
  // The OAuth chain reads the MCP verification's 401, so it runs after it.
  const prmDocuments: { url: string; body: string }[] = [];
  if (prm.ok && textOf(prm) && !likeUnknownPath(prm))
    prmDocuments.push({ url: prm.result.final_url, body: prm.result.body });
  if (mcpLive?.endpoint) {
    const path = new URL(mcpLive.endpoint).pathname.replace(/\/$/, '');
    if (path) {
      const scoped = await get(
        at(`${discoveryPaths.oauth_protected_resource}${path}`),
        'application/json',
        64 * 1024,
        {
          topic: 'oauth',
        },
      );
      if (scoped.ok && textOf(scoped) && !likeUnknownPath(scoped))
        prmDocuments.push({ url: scoped.result.final_url, body: scoped.result.body });
    }
  }
  const chain =
    (prmDocuments.length || mcpLive?.auth_required) && !scanSignal.aborted
      ? await verifyOAuthChain({
          documents: prmDocuments,
          challenge:
            mcpLive?.auth_required && mcpLive.endpoint
              ? { url: mcpLive.endpoint, resource_metadata: mcpLive.resource_metadata }
              : null,
          probe,
        })
      : null;

  if (scanSignal.aborted && !request.signal?.aborted) crawl.stopped = 'time_budget';
  if (request.signal?.aborted) throw new CrawlError('timeout', 'scan cancelled');

  const markdownFacts = checkMarkdownNegotiation(markdown ? asFetched(markdown) : null, homeFinal);
  const markdownVary = markdown?.ok ? varyIncludesAccept(markdown.result.headers.vary) : null;
  const homeWords = pageWords.get(homeFinal) ?? null;
  const otherFacts =
    markdownTarget && markdownOther
      ? checkMarkdownNegotiation(asFetched(markdownOther), markdownTarget.url)
      : null;
  const otherWords = markdownTarget ? (pageWords.get(markdownTarget.url) ?? null) : null;
  const overlapOf = (o: FetchOutcome | null, words: Set<string> | null) =>
    o?.ok && words && o.result.status < 300 && !isHtmlAnswer(o.result)
      ? textOverlap(wordsOf(o.result.body), words)
      : null;

  const llmsFacts = llmsText
    ? { ...parseLlmsTxt(llmsText.body, llmsText.final_url), url: llmsText.final_url }
    : null;
  crawl.duration_ms = Date.now() - started;
  done = total;
  progress('done', `${crawl.pages_fetched} page(s) read`);
  return {
    origin: crawlOrigin,
    https: crawlOrigin.startsWith('https:'),
    robots: { ...robots, url: robotsUrl },
    llms_txt: llmsFacts,
    llms_full_txt: llmsFullText
      ? { url: llmsFullText.final_url, bytes: llmsFullText.bytes, truncated: llmsFullText.truncated }
      : null,
    ai_txt: aiText ? { ...parseAiTxt(aiText.body), url: aiText.final_url } : null,
    unknown_path: unknownPath,
    sitemap,
    markdown: {
      ...markdownFacts,
      vary_accept: markdownVary,
      text_overlap: overlapOf(markdown, homeWords),
      other_page: otherFacts
        ? {
            url: otherFacts.url,
            supported: otherFacts.supported,
            note: otherFacts.note,
            vary_accept: markdownOther?.ok ? varyIncludesAccept(markdownOther.result.headers.vary) : null,
            text_overlap: overlapOf(markdownOther, otherWords),
          }
        : null,
    },
    discovery: {
      api_catalog: apiCatalog,
      oauth_protected_resource: checkProtectedResource(
        asFetched(prm),
        at(discoveryPaths.oauth_protected_resource),
        unknownPath,
      ),
      oauth_authorization_server: checkAuthorizationServer(
        asFetched(asm),
        at(discoveryPaths.oauth_authorization_server),
        unknownPath,
      ),
      mcp_server_card: mcpCheck,
      x402: x402Check.valid || !x402PlainCheck.present ? x402Check : x402PlainCheck,
      openapi,
      a2a_agent_card: checkA2aCard(asFetched(a2aCard), at(agentDocumentPaths.a2a_agent_card), unknownPath),
      agent_skills: checkAgentSkills(asFetched(skills), at(agentDocumentPaths.agent_skills), unknownPath),
      web_bot_auth: checkWebBotAuth(asFetched(botAuth), at(agentDocumentPaths.web_bot_auth), unknownPath),
    },
    home: homeOutcome?.ok
      ? {
          url: homeOutcome.result.final_url,
          status: homeOutcome.result.status,
          link: homeHeaders?.link ?? null,
          x_robots_tag: homeHeaders?.['x-robots-tag'] ?? null,
        }
      : null,
    verification: {
      mcp: mcpLive,
      oauth: chain,
      openapi: openapiServers,
      x402: x402Probes,
      llms_txt: llmsLinks,
      door,
    },
    policy: policyOf(robotsIsText && robots.present ? robotsText.body : null, robotsUrl, {
      llms_txt: llmsFacts ? llmsFacts.url : at('/llms.txt'),
      sitemaps: sitemap.documents.map((d) => d.url),
    }),
    entity: homeHtml ? entityOfHome(homeHtml, homeFinal, llmsFacts) : null,
    pages,
    crawl,
    requests: evidence.requests,
  };

  async function verifyOpenApiServers(
    doc: { url: string; body: string; truncated: boolean } | null,
  ): Promise<OpenApiVerification | null> {
    if (!doc) return null;
    const { parsed, servers } = openApiServers(doc.body, doc.url);
    const checked = await Promise.all(
      servers.slice(0, 2).map(async (url) => {
        const got = await probe(url, {
          topic: 'openapi',
          accept: 'application/json, */*;q=0.5',
          maxBytes: 16 * 1024,
        });
        return {
          url,
          status: got.ok ? got.status : null,
          ok: got.ok && got.status < 500,
          note: got.ok ? null : got.error,
        };
      }),
    );
    return { url: doc.url, parsed, truncated: doc.truncated, servers: checked };
  }

  async function verifyX402Resources(doc: FetchResult | null): Promise<X402Verification | null> {
    if (!doc) return null;
    const resources = x402Resources(doc.body, doc.final_url).filter(onSite).slice(0, 3);
    const checked = await Promise.all(
      resources.map(async (url) => {
        const got = await probe(url, { topic: 'x402', accept: 'application/json', maxBytes: 32 * 1024 });
        if (!got.ok) return { url, status: null, verdict: 'failed' as const, note: got.error };
        const requirements = x402Requirements(got.status, got.headers['payment-required'] ?? null, got.body);
        // An answer that asks for input first (400, 422) says nothing about payment either way.
        const verdict = requirements.valid
          ? ('valid' as const)
          : got.status === 400 || got.status === 422
            ? ('needs_input' as const)
            : ('failed' as const);
        return { url, status: got.status, verdict, note: requirements.note };
      }),
    );
    return { url: doc.final_url, resources: checked };
  }

  async function verifyLlmsLinks(file: FetchResult | null): Promise<LlmsVerification | null> {
    if (!file) return null;
    const parsed = parseLlmsTxt(file.body, file.final_url);
    const links = [...new Set(parsed.sections.flatMap((s) => s.links.map((l) => l.url)))].filter(onSite);
    const sample = links.slice(0, LLMS_LINKS_CHECKED);
    const checked = await Promise.all(
      sample.map(async (url) => {
        if (!mayFetch(url))
          return { url, status: null, ok: false, note: 'disallowed for the scanner by robots.txt' };
        const got = await probe(url, { topic: 'llms_links', accept: '*/*', maxBytes: 16 * 1024 });
        // Resolves: the resource is there. An API endpoint listed in llms.txt may answer 400, 401
        // or 405 to a bare GET and still exist; 404, 410 and 5xx are dead links.
        const dead = !got.ok || got.status === 404 || got.status === 410 || got.status >= 500;
        return {
          url,
          status: got.ok ? got.status : null,
          ok: !dead,
          note: got.ok ? (dead ? `HTTP ${got.status}` : null) : got.error,
        };
      }),
    );
    const type = mediaType(file.content_type);
    return {
      url: file.final_url,
      content_type: type,
      served_as_text: type === 'text/plain' || type === 'text/markdown' || type === 'text/x-markdown',
      links_total: links.length,
      links: checked,
    };
  }
}

const LLMS_LINKS_CHECKED = 10;

/** Targets of the links with relation `rel` in a `Link` header (RFC 8288), absolute. */
function linkTargets(header: string | null, rel: string, base: string): string[] {
  if (!header) return [];
  try {
    return LinkHeader.parse(header)
      .rel(rel)
      .flatMap((ref) => (URL.canParse(ref.uri, base) ? [new URL(ref.uri, base).href] : []));
  } catch {
    return [];
  }
}

function varyIncludesAccept(vary: string | undefined): boolean {
  return !!vary && vary.split(',').some((v) => v.trim() === '*' || v.trim().toLowerCase() === 'accept');
}

/** A sitemap `lastmod` in W3C Datetime (sitemaps.org): a date, optionally with a time. */
function validLastmod(value: string): boolean {
  return /^\d{4}(-\d{2}(-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2}))?)?)?$/.test(value.trim());
}

/** The text of an HTML page as a reader sees it (scripts and styles out). */
function pageText(html: string): string {
  const $ = cheerio.load(html);
  $('script, style, noscript, template, svg, head').remove();
  return $('body').text() || $.root().text();
}

/** Does robots.txt contradict itself or the site's own documents? */
function policyOf(
  text: string | null,
  robotsUrl: string,
  documents: { llms_txt: string; sitemaps: string[] },
): PolicyFacts | null {
  if (text === null) return null;
  const rules = robotsParser(robotsUrl, text);
  const root = new URL('/', robotsUrl).href;
  const { content_signals } = parseRobots(robotsUrl, text);
  const conflicts: string[] = [];
  for (const signal of content_signals) {
    const wants = Object.entries(signal.signals)
      .filter(([, yes]) => yes)
      .map(([name]) => name);
    if (wants.length === 0) continue;
    for (const agent of signal.user_agents) {
      if (rules.isAllowed(root, agent === '*' ? 'any-agent' : agent) === false)
        conflicts.push(
          `Content-Signal ${wants.map((w) => `${w}=yes`).join(', ')} for ${agent}, but ${agent} may not fetch /`,
        );
    }
  }
  const readers = ['*', ...aiAgents.filter((a) => a.category !== 'training').map((a) => a.token)];
  const blockedFor = (url: string) =>
    readers.filter((ua) => rules.isAllowed(url, ua === '*' ? 'any-agent' : ua) === false);
  return {
    content_signal_conflicts: conflicts,
    llms_txt_blocked_for: blockedFor(documents.llms_txt),
    sitemap_blocked_for: [...new Set(documents.sitemaps.flatMap(blockedFor))],
  };
}

/** What the home page and llms.txt say the organisation is called, and where it lives. */
function entityOfHome(
  html: string,
  url: string,
  llms: { title: string | null; summary: string | null; url: string } | null,
): EntityFacts {
  const claims = entityClaimsOfPage(html, url, { home: true, about: false });
  const first = (source: string) =>
    claims.find((c) => c.field === 'name' && c.source === source)?.value ?? null;
  return {
    organization_name: first('json_ld'),
    organization_url: organizationUrlOf(html, url),
    same_as: sameAsOfPage(html),
    og_site_name: first('og_site_name'),
    llms_txt_title: llms?.title ?? null,
  };
}

/** `url` of the first organisation JSON-LD node on the page. */
function organizationUrlOf(html: string, base: string): string | null {
  const $ = cheerio.load(html);
  let found: string | null = null;
  $('script[type="application/ld+json"]').each((_, el) => {
    if (found) return;
    try {
      const stack: unknown[] = [JSON.parse($(el).text())];
      while (stack.length && !found) {
        const node = stack.pop();
        if (Array.isArray(node)) stack.push(...node);
        else if (node && typeof node === 'object') {
          const record = node as Record<string, unknown>;
          const types = [record['@type']].flat().filter((t): t is string => typeof t === 'string');
          if (
            types.some((t) => organizationTypes.has(t.replace(/^https?:\/\/schema\.org\//, ''))) &&
            typeof record.url === 'string'
          )
            found = URL.canParse(record.url, base) ? new URL(record.url, base).href : record.url;
          for (const value of Object.values(record))
            if (value && typeof value === 'object') stack.push(value);
        }
      }
    } catch {
      // not JSON: the json_ld_valid check reports it
    }
  });
  return found;
}

function describeFailure(err: unknown, scanSignal: AbortSignal): { error: string; blocked: boolean } {
  const e = err as Error & { cause?: Error & { code?: string } };
  const blocked = e.name === 'BlockedDestinationError' || e.cause?.name === 'BlockedDestinationError';
  if (blocked) return { error: 'destination not allowed', blocked: true };
  if (scanSignal.aborted) return { error: 'scan time budget exhausted', blocked: false };
  // Our per-request bound, or one of the HTTP client's own (headers, body, connect) that came first.
  if (
    e.name === 'TimeoutError' ||
    e.name === 'AbortError' ||
    e.cause?.name === 'TimeoutError' ||
    /^UND_ERR_(HEADERS|BODY|CONNECT)_TIMEOUT$/.test(e.cause?.code ?? '')
  )
    return { error: 'timed out', blocked: false };
  return { error: e.cause?.code ?? e.cause?.message ?? e.message ?? 'network error', blocked: false };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
