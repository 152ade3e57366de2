/**
 * One crawl's shared state and its one way to make a request: the politeness limiter (p-limit, at
 * most `concurrency` requests in flight, `delay_ms` between a slot's requests), the scan's time
 * budget, the counters of `SiteFacts.crawl`, the evidence log and the progress reports. Every phase
 * of `crawler.ts` fetches through `get` (or `probe`, its form for `verify.ts`), so each request is
 * bounded, counted and recorded the same way.
 *
 * `get` follows redirects itself (`redirect: 'manual'`) with a hop cap and loop detection and
 * refuses hops that leave the site; safety of each connection is `createSafeFetch`'s.
 */
import pLimit, { type LimitFunction } from 'p-limit';
import { getDomain } from 'tldts';
import type { RequestInit, Response } from 'undici';
import type { BrowserPool } from '../../../outbound/browser-pool.ts';
import { readLimitedBody, type SafeFetch } from '../../../outbound/safe-fetch.ts';
import type { Fetched } from '../collectors/discovery.ts';
import type { PageFacts } from '../collectors/page.ts';
import { bodyPreview, EvidenceLog, keptHeaders } from '../evidence.ts';
import type { SiteFacts } from '../site-facts.ts';
import type { Probe, ProbeOptions } from '../verify.ts';

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

/** Headless Chromium for the WebMCP phase (`webmcp.ts`). */
export interface WebMcpBrowser {
  pool: BrowserPool;
  /** Hard budget of the page (`scanner.webmcp.page_budget_ms`), within what is left of the scan's. */
  page_budget_ms: number;
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
  /** Headless Chromium for the WebMCP check; absent: it is not measured (`SiteFacts.webmcp` null). */
  browser?: WebMcpBrowser;
}

export class CrawlError extends Error {
  readonly reason: 'unreachable' | 'blocked' | 'timeout';
  constructor(reason: CrawlError['reason'], message: string) {
    super(message);
    this.name = 'CrawlError';
    this.reason = reason;
  }
}

export interface FetchResult extends Fetched {
  final_url: string;
  /** The answer's headers kept as evidence (content type, Vary, Link, X-Robots-Tag ...). */
  headers: Record<string, string>;
  truncated: boolean;
  bytes: number;
}

export type FetchOutcome =
  | { ok: true; result: FetchResult }
  | { ok: false; url: string; error: string; blocked: boolean };

type GetOptions = Omit<ProbeOptions, 'accept' | 'maxBytes'>;

const MAX_ERRORS_KEPT = 20;
/** Crawl-delay of robots.txt is obeyed up to this. */
const MAX_CRAWL_DELAY_MS = 2000;

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

/** The answer as the collectors read it: at its final URL; null when there was none. */
export const asFetched = (o: FetchOutcome): Fetched | null =>
  o.ok ? { ...o.result, url: o.result.final_url } : null;

/** The answer when it was a 2xx. */
export const textOf = (o: FetchOutcome): FetchResult | null =>
  o.ok && o.result.status >= 200 && o.result.status < 300 ? o.result : null;

export class CrawlSession {
  readonly request: CrawlRequest;
  readonly limits: CrawlLimits;
  readonly userAgent: string;
  /** Our product token, the name robots.txt rules are read for. */
  readonly token: string;
  readonly started = Date.now();
  /** The caller's signal and the scan's time budget, whichever ends first. */
  readonly signal: AbortSignal;
  readonly stats: SiteFacts['crawl'] = {
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
  readonly evidence = new EvidenceLog();
  /** Requests done and expected, for progress reports. */
  done = 0;
  total = 13;
  private readonly limit: LimitFunction;
  private delayMs: number;

  constructor(request: CrawlRequest) {
    this.request = request;
    this.limits = request.limits;
    this.userAgent = request.userAgent;
    this.token = productToken(request.userAgent);
    const budget = AbortSignal.timeout(this.limits.scan_timeout_ms);
    this.signal = request.signal ? AbortSignal.any([request.signal, budget]) : budget;
    this.limit = pLimit(this.limits.concurrency);
    this.delayMs = this.limits.delay_ms;
  }

  /** The caller cancelled the scan (not the time budget). */
  get cancelled(): boolean {
    return this.request.signal?.aborted ?? false;
  }

  progress(phase: CrawlProgress['phase'], message: string): void {
    this.request.onProgress?.({ phase, done: this.done, total: Math.max(this.total, this.done), message });
  }

  noteError(url: string, error: string): void {
    if (this.stats.errors.length < MAX_ERRORS_KEPT) this.stats.errors.push({ url, error });
  }

  /** robots.txt's Crawl-delay for our token (seconds), capped. */
  slowDownTo(crawlDelaySeconds: number): void {
    this.delayMs = Math.max(this.delayMs, Math.min(crawlDelaySeconds * 1000, MAX_CRAWL_DELAY_MS));
  }

  /** One request through the politeness limiter, redirects followed hop by hop within the site. */
  get(
    url: string,
    accept: string,
    maxBytes = this.limits.max_bytes,
    options: GetOptions = { topic: 'page' },
  ): Promise<FetchOutcome> {
    return this.limit(async () => {
      if (this.signal.aborted) return { ok: false, url, error: 'scan time budget exhausted', blocked: false };
      try {
        return await this.fetchFollowing(url, accept, maxBytes, options);
      } finally {
        this.done++;
        if (this.delayMs > 0 && !this.signal.aborted) await sleep(this.delayMs, this.signal);
      }
    });
  }

  /** `get` as the verifications call it. */
  readonly probe: Probe = async (url, options) => {
    const outcome = await this.get(url, options.accept ?? '*/*', options.maxBytes ?? 64 * 1024, options);
    return outcome.ok ? { ok: true, ...outcome.result } : outcome;
  };

  /** The fetch the MCP verification speaks through: a slot of the limiter and a request of the crawl. */
  readonly limitedFetch = (url: string, init: RequestInit): Promise<Response> =>
    this.limit(async () => {
      this.stats.requests++;
      try {
        return await this.request.fetch(url, init);
      } finally {
        this.done++;
      }
    });

  private async fetchFollowing(
    start: string,
    accept: string,
    maxBytes: number,
    options: GetOptions,
  ): Promise<FetchOutcome> {
    const visited = new Set<string>();
    let current = new URL(start);
    for (let hop = 0; ; hop++) {
      visited.add(current.href);
      this.stats.requests++;
      const record = this.recorder(current.href, options);
      let response: Awaited<ReturnType<SafeFetch>>;
      try {
        response = await this.request.fetch(current, {
          method: options.method ?? 'GET',
          redirect: 'manual',
          headers: { accept, ...options.headers, 'user-agent': options.userAgent ?? this.userAgent },
          ...(options.body !== undefined ? { body: options.body } : {}),
          signal: AbortSignal.any([this.signal, AbortSignal.timeout(this.limits.request_timeout_ms)]),
        });
      } catch (err) {
        const failure = describeFailure(err, this.signal);
        record(null, {}, null, failure.error);
        return { ok: false, url: current.href, ...failure };
      }
      const location = response.headers.get('location');
      if (response.status >= 300 && response.status < 400 && location) {
        record(response.status, keptHeaders(response.headers), null, null);
        await response.body?.cancel().catch(() => {});
        const next = this.nextHop(start, current, location, hop, visited);
        if (!(next instanceof URL)) return next;
        current = next;
        continue;
      }
      return this.readAnswer(start, current, response, maxBytes, record);
    }
  }

  /** Where a redirect leads, or why it is not followed. */
  private nextHop(
    start: string,
    current: URL,
    location: string,
    hop: number,
    visited: Set<string>,
  ): URL | FetchOutcome {
    const refused = (error: string): FetchOutcome => ({
      ok: false,
      url: current.href,
      error,
      blocked: false,
    });
    let next: URL;
    try {
      next = new URL(location, current);
    } catch {
      return refused('redirect to an invalid URL');
    }
    if (visited.has(next.href)) return refused('redirect loop');
    if (hop + 1 > this.limits.max_redirects)
      return refused(`more than ${this.limits.max_redirects} redirects`);
    if (!sameSite(new URL(start), next)) return refused(`redirect leaves the site (${next.host})`);
    return next;
  }

  private async readAnswer(
    start: string,
    current: URL,
    response: Awaited<ReturnType<SafeFetch>>,
    maxBytes: number,
    record: ReturnType<CrawlSession['recorder']>,
  ): Promise<FetchOutcome> {
    try {
      const body = await readLimitedBody(response, maxBytes);
      this.stats.bytes += body.bytes.length;
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
      const failure = describeFailure(err, this.signal);
      record(response.status, keptHeaders(response.headers), null, failure.error);
      return { ok: false, url: current.href, ...failure };
    }
  }

  /** Records one hop as evidence, timed from now. */
  private recorder(url: string, options: GetOptions) {
    const started = Date.now();
    return (
      status: number | null,
      headers: Record<string, string>,
      body: string | null,
      error: string | null,
    ) =>
      this.evidence.add({
        topic: options.topic,
        method: options.method ?? 'GET',
        url,
        status,
        headers,
        body_preview: body === null ? null : bodyPreview(body),
        duration_ms: Date.now() - started,
        error,
        ...(options.userAgent ? { user_agent: options.userAgent } : {}),
      });
  }
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
