/**
 * Reads single pages of any sites - search results, a brand's contact pages - as politely and
 * safely as the crawler reads one site: through the SSRF-safe fetcher (every connection, each
 * redirect hop included, checked), redirects followed hop by hop (capped, loops refused), each URL's
 * robots.txt obeyed for the scanner's product token (RFC 9309; fetched once per origin, a missing
 * one allows everything, an unreachable one - 5xx or no answer - refuses, section 2.3.1.4), bodies
 * capped, HTML and plain text only - or, read as documents, JSON, XML and plain text (an agent card,
 * an MCP catalog, a sitemap). Nothing is stored.
 */
import pLimit from 'p-limit';
import { readLimitedBody, type SafeFetch } from '../../outbound/safe-fetch.ts';
import { robotsParser } from './collectors/robots.ts';
import { isHtmlAnswer } from './collectors/soft-404.ts';
import { productToken } from './crawl/session.ts';

export interface ReadPage {
  /** The URL asked for. */
  url: string;
  /** Where the page was read, after redirects. */
  final_url: string;
  content_type: string;
  body: string;
  truncated: boolean;
  retrieved_at: string;
}

export type PageOutcome =
  | { ok: true; page: ReadPage }
  | { ok: false; url: string; reason: 'robots' | 'blocked' | 'http' | 'not_text' | 'failed'; detail: string };

export interface PageReaderOptions {
  fetch: SafeFetch;
  userAgent: string;
  maxBytes: number;
  requestTimeoutMs: number;
  maxRedirects: number;
  concurrency: number;
  now: () => Date;
}

/** What a read accepts: pages (HTML, plain text), or documents (JSON, XML, plain text). */
export type ReadKind = 'page' | 'document';

const wants: Record<ReadKind, { accept: string; types: RegExp }> = {
  page: {
    accept: 'text/html, application/xhtml+xml;q=0.9, text/plain;q=0.5',
    types: /^(text\/html|application\/xhtml\+xml|text\/plain)\b/i,
  },
  document: {
    accept: 'application/json, application/xml;q=0.9, text/xml;q=0.9, text/plain;q=0.5',
    types: /^(application\/([\w.-]+\+)?(json|xml)|text\/(xml|plain))\b/i,
  },
};
type Rules = ReturnType<typeof robotsParser> | 'unreachable';

export class PageReader {
  readonly #options: PageReaderOptions;
  readonly #token: string;
  /** robots.txt per origin, for this reader's life (one request). */
  readonly #robots = new Map<string, Promise<Rules>>();

  constructor(options: PageReaderOptions) {
    this.#options = options;
    this.#token = productToken(options.userAgent);
  }

  /** Reads every URL (at most `concurrency` at a time), in the order given. */
  async readAll(urls: readonly string[], signal: AbortSignal): Promise<PageOutcome[]> {
    const limit = pLimit(this.#options.concurrency);
    return Promise.all(urls.map((url) => limit(() => this.read(url, signal))));
  }

  async read(start: string, signal: AbortSignal, kind: ReadKind = 'page'): Promise<PageOutcome> {
    const want = wants[kind];
    const visited = new Set<string>();
    let current: URL;
    try {
      current = new URL(start);
    } catch {
      return { ok: false, url: start, reason: 'failed', detail: 'not a URL' };
    }
    for (let hop = 0; ; hop++) {
      if (current.protocol !== 'http:' && current.protocol !== 'https:') {
        return { ok: false, url: current.href, reason: 'blocked', detail: 'not an http(s) URL' };
      }
      if (!(await this.#allowed(current, signal))) {
        return { ok: false, url: current.href, reason: 'robots', detail: 'robots.txt disallows it' };
      }
      visited.add(current.href);
      let response: Awaited<ReturnType<SafeFetch>>;
      try {
        response = await this.#options.fetch(current, {
          redirect: 'manual',
          headers: {
            accept: want.accept,
            'user-agent': this.#options.userAgent,
          },
          signal: AbortSignal.any([signal, AbortSignal.timeout(this.#options.requestTimeoutMs)]),
        });
      } catch (err) {
        return { ok: false, url: current.href, ...failureOf(err) };
      }
      const location = response.headers.get('location');
      if (response.status >= 300 && response.status < 400 && location) {
        await response.body?.cancel().catch(() => {});
        let next: URL;
        try {
          next = new URL(location, current);
        } catch {
          return { ok: false, url: current.href, reason: 'failed', detail: 'redirect to an invalid URL' };
        }
        if (visited.has(next.href))
          return { ok: false, url: current.href, reason: 'failed', detail: 'redirect loop' };
        if (hop + 1 > this.#options.maxRedirects) {
          return { ok: false, url: current.href, reason: 'failed', detail: 'too many redirects' };
        }
        current = next;
        continue;
      }
      if (response.status < 200 || response.status >= 300) {
        await response.body?.cancel().catch(() => {});
        return { ok: false, url: current.href, reason: 'http', detail: `HTTP ${response.status}` };
      }
      const type = response.headers.get('content-type') ?? '';
      if (!want.types.test(type)) {
        await response.body?.cancel().catch(() => {});
        return {
          ok: false,
          url: current.href,
          reason: 'not_text',
          detail: `not a ${kind} (${type || 'no type'})`,
        };
      }
      try {
        const body = await readLimitedBody(response, this.#options.maxBytes);
        return {
          ok: true,
          page: {
            url: start,
            final_url: current.href,
            content_type: type,
            body: body.bytes.toString('utf8'),
            truncated: body.truncated,
            retrieved_at: this.#options.now().toISOString(),
          },
        };
      } catch (err) {
        return { ok: false, url: current.href, ...failureOf(err) };
      }
    }
  }

  /** The sitemaps the origin's robots.txt names (`Sitemap:` lines), absolute. */
  async sitemaps(origin: string, signal: AbortSignal): Promise<string[]> {
    const rules = await this.#rulesOf(origin, signal);
    return rules === 'unreachable' ? [] : rules.getSitemaps();
  }

  async #allowed(url: URL, signal: AbortSignal): Promise<boolean> {
    const rules = await this.#rulesOf(url.origin, signal);
    return rules !== 'unreachable' && rules.isAllowed(url.href, this.#token) !== false;
  }

  #rulesOf(origin: string, signal: AbortSignal): Promise<Rules> {
    let rules = this.#robots.get(origin);
    if (!rules) {
      rules = this.#fetchRobots(origin, signal);
      this.#robots.set(origin, rules);
    }
    return rules;
  }

  async #fetchRobots(origin: string, signal: AbortSignal): Promise<Rules> {
    const robotsUrl = `${origin}/robots.txt`;
    try {
      const response = await this.#options.fetch(robotsUrl, {
        headers: { accept: 'text/plain', 'user-agent': this.#options.userAgent },
        signal: AbortSignal.any([signal, AbortSignal.timeout(this.#options.requestTimeoutMs)]),
      });
      const { bytes } = await readLimitedBody(response, 512 * 1024);
      // RFC 9309 2.3.1.3: a 4xx means no rules; 2.3.1.4: a 5xx means "assume complete disallow".
      if (response.status >= 500) return 'unreachable';
      if (response.status >= 400) return robotsParser(robotsUrl, '');
      const fetched = { content_type: response.headers.get('content-type'), body: bytes.toString('utf8') };
      return robotsParser(robotsUrl, isHtmlAnswer(fetched) ? '' : fetched.body);
    } catch {
      return 'unreachable';
    }
  }
}

function failureOf(err: unknown): { reason: 'blocked' | 'failed'; detail: string } {
  const e = err as Error & { cause?: Error & { code?: string } };
  if (e.name === 'BlockedDestinationError' || e.cause?.name === 'BlockedDestinationError') {
    return { reason: 'blocked', detail: 'destination not allowed' };
  }
  if (e.name === 'TimeoutError' || e.name === 'AbortError' || e.cause?.name === 'TimeoutError') {
    return { reason: 'failed', detail: 'timed out' };
  }
  return { reason: 'failed', detail: e.cause?.code ?? e.cause?.message ?? e.message ?? 'network error' };
}
