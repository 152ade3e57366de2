/**
 * Web search, behind one interface that every feature needing it shares (live merchant
 * resolution; the research SKUs). The provider is configured by the operator
 * (`research.search.*`), so it is called with an ordinary fetch - it may well live on a private
 * network beside the service - while the URLs it returns are third-party input: callers fetch them
 * only through the SSRF-safe fetcher.
 */
import { fetch } from 'undici';
import { z } from 'zod';
import type { Config } from '../config.ts';
import { readLimitedBody } from './safe-fetch.ts';

export interface SearchResult {
  url: string;
  title: string;
  snippet: string;
}

export interface SearchOptions {
  /** At most this many results, best first. */
  limit: number;
  signal?: AbortSignal;
}

export interface SearchProvider {
  /** For logs and evidence (`searxng`). */
  readonly name: string;
  search(query: string, options: SearchOptions): Promise<SearchResult[]>;
}

/** The provider answered, but not with results (an HTTP error, a body that is not its JSON). */
export class SearchProviderError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SearchProviderError';
  }
}

/** A SearXNG answer is far smaller; anything past this is not read. */
const MAX_ANSWER_BYTES = 2 * 1024 * 1024;

/** The part of SearXNG's `format=json` answer used here (docs.searxng.org/dev/search_api.html). */
const SearxngAnswer = z.object({
  results: z.array(
    z.object({
      url: z.string(),
      title: z.string().optional().catch(undefined),
      content: z.string().optional().catch(undefined),
    }),
  ),
});

export interface SearxngOptions {
  /** The instance's base URL; `/search` is appended. */
  url: string;
  timeoutMs: number;
  userAgent: string;
}

/**
 * SearXNG's search API: `GET {url}/search?q=...&format=json`. The instance must list `json` in
 * `search.formats` of its settings.yml; otherwise it answers 403.
 */
export class SearxngSearch implements SearchProvider {
  readonly name = 'searxng';
  readonly #endpoint: URL;
  readonly #timeoutMs: number;
  readonly #userAgent: string;

  constructor(options: SearxngOptions) {
    this.#endpoint = new URL('search', options.url.endsWith('/') ? options.url : `${options.url}/`);
    this.#timeoutMs = options.timeoutMs;
    this.#userAgent = options.userAgent;
  }

  async search(query: string, options: SearchOptions): Promise<SearchResult[]> {
    const url = new URL(this.#endpoint);
    url.searchParams.set('q', query);
    url.searchParams.set('format', 'json');
    const timeout = AbortSignal.timeout(this.#timeoutMs);
    const response = await fetch(url, {
      headers: { accept: 'application/json', 'user-agent': this.#userAgent },
      signal: options.signal ? AbortSignal.any([options.signal, timeout]) : timeout,
    });
    if (!response.ok) {
      await response.body?.cancel().catch(() => {});
      const hint =
        response.status === 403 ? ' (is "json" listed in search.formats of its settings.yml?)' : '';
      throw new SearchProviderError(`SearXNG answered ${response.status}${hint}`);
    }
    const { bytes, truncated } = await readLimitedBody(response, MAX_ANSWER_BYTES);
    if (truncated) throw new SearchProviderError('SearXNG answer is larger than 2 MiB');
    let parsed: z.infer<typeof SearxngAnswer>;
    try {
      parsed = SearxngAnswer.parse(JSON.parse(bytes.toString('utf8')));
    } catch (err) {
      throw new SearchProviderError('SearXNG answer is not its JSON format', { cause: err });
    }
    const seen = new Set<string>();
    const results: SearchResult[] = [];
    for (const item of parsed.results) {
      if (results.length >= options.limit) break;
      if (!/^https?:\/\//i.test(item.url) || seen.has(item.url)) continue;
      seen.add(item.url);
      results.push({ url: item.url, title: item.title ?? '', snippet: item.content ?? '' });
    }
    return results;
  }
}

/** The configured provider, or null when none is (features then work without search). */
export function searchProviderOf(config: Config): SearchProvider | null {
  const { searxng_url: url, timeout_ms: timeoutMs } = config.research.search;
  return url ? new SearxngSearch({ url, timeoutMs, userAgent: config.outbound.user_agent }) : null;
}
