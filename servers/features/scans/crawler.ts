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
import pLimit from 'p-limit';
import { getDomain } from 'tldts';
import { readLimitedBody, type SafeFetch } from '../../outbound/safe-fetch.ts';
import { type AiTxt, parseAiTxt } from './collectors/ai-txt.ts';
import {
  checkApiCatalog,
  checkAuthorizationServer,
  checkMarkdownNegotiation,
  checkMcpCard,
  checkOpenApi,
  checkProtectedResource,
  checkX402,
  type DiscoveryCheck,
  discoveryPaths,
  type Fetched,
  type MarkdownNegotiation,
  readMcpCatalog,
} from './collectors/discovery.ts';
import { type LlmsTxt, parseLlmsTxt } from './collectors/llms-txt.ts';
import { type PageFacts, parsePage } from './collectors/page.ts';
import { absentRobots, parseRobots, type RobotsFacts, robotsParser } from './collectors/robots.ts';
import { parseSitemap } from './collectors/sitemap.ts';
import {
  answersLikeUnknownPath,
  fingerprintOf,
  isHtmlAnswer,
  type UnknownPathAnswer,
} from './collectors/soft-404.ts';

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
export type PageSummary = Omit<PageFacts, 'links'> & { status: number; bytes: number; truncated: boolean };

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
  };
  markdown: MarkdownNegotiation;
  discovery: {
    api_catalog: DiscoveryCheck & { service_descs: string[]; apis: number };
    oauth_protected_resource: DiscoveryCheck;
    oauth_authorization_server: DiscoveryCheck;
    mcp_server_card: DiscoveryCheck;
    x402: DiscoveryCheck;
    openapi: DiscoveryCheck;
  };
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
  let done = 0;
  let total = 13;
  const progress = (phase: CrawlProgress['phase'], message: string) =>
    request.onProgress?.({ phase, done, total: Math.max(total, done), message });
  const noteError = (url: string, error: string) => {
    if (crawl.errors.length < MAX_ERRORS_KEPT) crawl.errors.push({ url, error });
  };

  /** One request through the politeness limiter, redirects followed hop by hop within the site. */
  const get = (url: string, accept: string, maxBytes = limits.max_bytes): Promise<FetchOutcome> =>
    limit(async () => {
      if (scanSignal.aborted) return { ok: false, url, error: 'scan time budget exhausted', blocked: false };
      try {
        return await fetchFollowing(url, accept, maxBytes);
      } finally {
        done++;
        if (delayMs > 0 && !scanSignal.aborted) await sleep(delayMs, scanSignal);
      }
    });

  const fetchFollowing = async (start: string, accept: string, maxBytes: number): Promise<FetchOutcome> => {
    const visited = new Set<string>();
    let current = new URL(start);
    for (let hop = 0; ; hop++) {
      visited.add(current.href);
      crawl.requests++;
      let response: Awaited<ReturnType<SafeFetch>>;
      const signal = AbortSignal.any([scanSignal, AbortSignal.timeout(limits.request_timeout_ms)]);
      try {
        response = await request.fetch(current, {
          redirect: 'manual',
          headers: { accept, 'user-agent': userAgent },
          signal,
        });
      } catch (err) {
        return { ok: false, url: current.href, ...describeFailure(err, scanSignal) };
      }
      const location = response.headers.get('location');
      if (response.status >= 300 && response.status < 400 && location) {
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
        return {
          ok: true,
          result: {
            url: start,
            final_url: current.href,
            status: response.status,
            content_type: response.headers.get('content-type'),
            body: body.bytes.toString('utf8'),
            truncated: body.truncated,
            bytes: body.bytes.length,
          },
        };
      } catch (err) {
        return { ok: false, url: current.href, ...describeFailure(err, scanSignal) };
      }
    }
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
    const outcome = await get(`${candidate}/robots.txt`, 'text/plain, */*;q=0.1', 512 * 1024);
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
  const enqueue = (url: string, base: string) => {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      return;
    }
    u.hash = '';
    if (u.origin !== base || seen.has(u.href)) return;
    if (/\.(png|jpe?g|gif|webp|svg|ico|pdf|zip|gz|mp4|mp3|woff2?|css|js|xml|txt|json)$/i.test(u.pathname))
      return;
    seen.add(u.href);
    queue.push(u.href);
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
    crawl.pages_fetched++;
    const facts = parsePage(r.body, r.final_url);
    request.onPage?.({ url: r.final_url, html: r.body, facts });
    const { links, ...summary } = facts;
    pages.push({ ...summary, status: r.status, bytes: r.bytes, truncated: r.truncated });
    for (const link of links) enqueue(link, new URL(r.final_url).origin);
    progress('pages', `read ${new URL(r.final_url).pathname}`);
  };

  const home = `${origin}/`;
  seen.add(home);
  const homeOutcome = mayFetch(home) ? await get(home, 'text/html;q=1, */*;q=0.1') : null;
  const homeFinal = homeOutcome?.ok ? homeOutcome.result.final_url : home;
  const crawlOrigin = new URL(homeFinal).origin;

  // 3. Site-level documents, in parallel through the same limiter.
  const at = (path: string) => `${crawlOrigin}${path}`;
  const allowedGet = (path: string, accept: string, maxBytes?: number): Promise<FetchOutcome | null> =>
    mayFetch(at(path)) ? get(at(path), accept, maxBytes) : Promise.resolve(null);
  const wellKnown = (path: string) => get(at(path), 'application/json, */*;q=0.1', 256 * 1024);
  const unknownPathUrl = at(`${unknownPathPrefix}${randomBytes(8).toString('hex')}`);
  const [probe, llms, llmsFull, aiTxt, catalog, prm, asm, mcpCard, mcpJson, x402, markdown] =
    await Promise.all([
      get(unknownPathUrl, 'application/json, */*;q=0.1', 256 * 1024),
      allowedGet('/llms.txt', 'text/plain, text/markdown, */*;q=0.1'),
      allowedGet('/llms-full.txt', 'text/plain, text/markdown, */*;q=0.1'),
      allowedGet('/ai.txt', 'text/plain, */*;q=0.1', 256 * 1024),
      get(at(discoveryPaths.api_catalog), 'application/linkset+json, application/json;q=0.9', 256 * 1024),
      wellKnown(discoveryPaths.oauth_protected_resource),
      wellKnown(discoveryPaths.oauth_authorization_server),
      wellKnown(discoveryPaths.mcp_server_card),
      wellKnown(discoveryPaths.mcp_json),
      wellKnown(discoveryPaths.x402),
      mayFetch(homeFinal) ? get(homeFinal, 'text/markdown, text/plain;q=0.5') : Promise.resolve(null),
    ]);

  const unknownPath: UnknownPathAnswer | null = probe.ok
    ? {
        url: probe.result.final_url,
        ...fingerprintOf(asFetched(probe) as Fetched),
        soft_404: probe.result.status >= 200 && probe.result.status < 300,
        same_answer: [],
      }
    : null;
  if (!probe.ok) noteError(probe.url, probe.error);
  /** The answer is the site's answer to any path it lacks: noted, and never credited. */
  const likeUnknownPath = (o: FetchOutcome | null): boolean => {
    const fetched = o ? asFetched(o) : null;
    if (!fetched || !unknownPath || !answersLikeUnknownPath(fetched, unknownPath)) return false;
    if (!unknownPath.same_answer.includes(fetched.url)) unknownPath.same_answer.push(fetched.url);
    return true;
  };
  for (const o of [catalog, prm, asm, mcpCard, mcpJson, x402]) likeUnknownPath(o);

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
  if (!mcpCheck.present) {
    // SEP-2127: the catalog names each card's URL; the first one on this site is read.
    const catalogOutcome = await wellKnown(discoveryPaths.mcp_catalog);
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
        );
        const listed = checkMcpCard(asFetched(card), cardUrl, unknownPath);
        if (listed.valid) mcpCheck = listed;
      }
    }
  }

  // 4. Home page facts, then sitemaps, then the rest of the pages breadth first.
  if (homeOutcome) {
    if (homeOutcome.ok) {
      const r = homeOutcome.result;
      if (r.status >= 200 && r.status < 300 && htmlTypes.test(r.content_type ?? '')) {
        crawl.pages_fetched++;
        const facts = parsePage(r.body, r.final_url);
        request.onPage?.({ url: r.final_url, html: r.body, facts });
        const { links, ...summary } = facts;
        pages.push({ ...summary, status: r.status, bytes: r.bytes, truncated: r.truncated });
        for (const link of links) enqueue(link, crawlOrigin);
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

  const sitemap: SiteFacts['sitemap'] = { documents: [], urls_found: 0 };
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
    const outcome = await get(url, 'application/xml, text/xml;q=0.9, */*;q=0.1');
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
  if (scanSignal.aborted && !request.signal?.aborted) crawl.stopped = 'time_budget';
  if (request.signal?.aborted) throw new CrawlError('timeout', 'scan cancelled');

  // 5. OpenAPI: a service-desc from the catalog, a link on the pages, or the conventional paths.
  const openapiCandidates = [...apiCatalog.service_descs, ...pages.flatMap((p) => p.openapi_links)].filter(
    (u) => {
      try {
        return sameSite(new URL(u), new URL(crawlOrigin));
      } catch {
        return false;
      }
    },
  );
  let openapi = checkOpenApi(null, at('/openapi.json'));
  for (const candidate of [...new Set(openapiCandidates), at('/openapi.json'), at('/openapi.yaml')].slice(
    0,
    3,
  )) {
    if (scanSignal.aborted) break;
    const outcome = await get(candidate, 'application/json, application/yaml;q=0.9, */*;q=0.1');
    likeUnknownPath(outcome);
    openapi = checkOpenApi(asFetched(outcome), candidate, unknownPath);
    if (openapi.valid) break;
  }

  crawl.duration_ms = Date.now() - started;
  done = total;
  progress('done', `${crawl.pages_fetched} page(s) read`);
  return {
    origin: crawlOrigin,
    https: crawlOrigin.startsWith('https:'),
    robots: { ...robots, url: robotsUrl },
    llms_txt: llmsText
      ? { ...parseLlmsTxt(llmsText.body, llmsText.final_url), url: llmsText.final_url }
      : null,
    llms_full_txt: llmsFullText
      ? { url: llmsFullText.final_url, bytes: llmsFullText.bytes, truncated: llmsFullText.truncated }
      : null,
    ai_txt: aiText ? { ...parseAiTxt(aiText.body), url: aiText.final_url } : null,
    unknown_path: unknownPath,
    sitemap,
    markdown: checkMarkdownNegotiation(markdown ? asFetched(markdown) : null, homeFinal),
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
      x402: checkX402(asFetched(x402), at(discoveryPaths.x402), unknownPath),
      openapi,
    },
    pages,
    crawl,
  };
}

function describeFailure(err: unknown, scanSignal: AbortSignal): { error: string; blocked: boolean } {
  const e = err as Error & { cause?: Error & { code?: string } };
  const blocked = e.name === 'BlockedDestinationError' || e.cause?.name === 'BlockedDestinationError';
  if (blocked) return { error: 'destination not allowed', blocked: true };
  if (scanSignal.aborted) return { error: 'scan time budget exhausted', blocked: false };
  if (e.name === 'TimeoutError' || e.name === 'AbortError' || e.cause?.name === 'TimeoutError')
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
