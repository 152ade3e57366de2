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
    return keepResults(
      parsed.results.map((item) => ({ url: item.url, title: item.title ?? '', snippet: item.content ?? '' })),
      options.limit,
    );
  }
}

/** The part of the Brave Search API web answer used here (api-dashboard.search.brave.com, Web search). */
const BraveAnswer = z.object({
  web: z
    .object({
      results: z.array(
        z.object({
          url: z.string(),
          title: z.string().optional().catch(undefined),
          description: z.string().optional().catch(undefined),
        }),
      ),
    })
    .optional(),
});

export interface BraveOptions {
  /** The API base, `https://api.search.brave.com/res/v1`; `/web/search` is appended. */
  url: string;
  /** The subscription token, read from the environment variable the configuration names. */
  apiKey: string;
  timeoutMs: number;
  userAgent: string;
}

/** Brave answers at most 20 results per request (`count`, default 20). */
const BRAVE_MAX_COUNT = 20;

/**
 * The Brave Search API, a commercial web search with its own index:
 * `GET {url}/web/search?q=...&count=N` with the key in `X-Subscription-Token`; results are in
 * `web.results[]` (`url`, `title`, `description` - which may hold `<strong>` highlights).
 */
export class BraveSearch implements SearchProvider {
  readonly name = 'brave';
  readonly #endpoint: URL;
  readonly #apiKey: string;
  readonly #timeoutMs: number;
  readonly #userAgent: string;

  constructor(options: BraveOptions) {
    this.#endpoint = new URL('web/search', options.url.endsWith('/') ? options.url : `${options.url}/`);
    this.#apiKey = options.apiKey;
    this.#timeoutMs = options.timeoutMs;
    this.#userAgent = options.userAgent;
  }

  async search(query: string, options: SearchOptions): Promise<SearchResult[]> {
    const url = new URL(this.#endpoint);
    url.searchParams.set('q', query);
    url.searchParams.set('count', String(Math.min(Math.max(options.limit, 1), BRAVE_MAX_COUNT)));
    const timeout = AbortSignal.timeout(this.#timeoutMs);
    const response = await fetch(url, {
      headers: {
        accept: 'application/json',
        'user-agent': this.#userAgent,
        'x-subscription-token': this.#apiKey,
      },
      signal: options.signal ? AbortSignal.any([options.signal, timeout]) : timeout,
    });
    if (!response.ok) {
      await response.body?.cancel().catch(() => {});
      const hint =
        response.status === 401 || response.status === 403
          ? ' (is the subscription token in the configured environment variable valid?)'
          : response.status === 429
            ? ' (rate limit or quota of the plan reached)'
            : '';
      throw new SearchProviderError(`Brave Search answered ${response.status}${hint}`);
    }
    const { bytes, truncated } = await readLimitedBody(response, MAX_ANSWER_BYTES);
    if (truncated) throw new SearchProviderError('Brave Search answer is larger than 2 MiB');
    let parsed: z.infer<typeof BraveAnswer>;
    try {
      parsed = BraveAnswer.parse(JSON.parse(bytes.toString('utf8')));
    } catch (err) {
      throw new SearchProviderError('Brave Search answer is not its JSON format', { cause: err });
    }
    return keepResults(
      (parsed.web?.results ?? []).map((item) => ({
        url: item.url,
        title: stripTags(item.title ?? ''),
        snippet: stripTags(item.description ?? ''),
      })),
      options.limit,
    );
  }
}

/** Brave marks the query's words in snippets with `<strong>`; results are plain text here. */
const stripTags = (text: string): string =>
  text
    .replace(/<[^>]*>/g, '')
    .replace(/&(amp|lt|gt|quot|#39);/g, (_, e: string) =>
      e === 'amp' ? '&' : e === 'lt' ? '<' : e === 'gt' ? '>' : e === 'quot' ? '"' : "'",
    );

/** http(s) results only, each URL once, at most `limit`. */
function keepResults(items: SearchResult[], limit: number): SearchResult[] {
  const seen = new Set<string>();
  const results: SearchResult[] = [];
  for (const item of items) {
    if (results.length >= limit) break;
    if (!/^https?:\/\//i.test(item.url) || seen.has(item.url)) continue;
    seen.add(item.url);
    results.push(item);
  }
  return results;
}

/**
 * Several providers as one: each query goes to the first; when it fails (an error, a timeout),
 * to the next. The last failure is what the caller sees when every provider fails.
 */
export class FallbackSearch implements SearchProvider {
  readonly name: string;
  readonly #providers: readonly SearchProvider[];

  constructor(providers: readonly SearchProvider[]) {
    if (providers.length === 0) throw new Error('FallbackSearch needs at least one provider');
    this.#providers = providers;
    this.name = providers.map((p) => p.name).join('+');
  }

  async search(query: string, options: SearchOptions): Promise<SearchResult[]> {
    let failure: unknown;
    for (const provider of this.#providers) {
      if (options.signal?.aborted) break;
      try {
        return await provider.search(query, options);
      } catch (err) {
        failure = err;
      }
    }
    throw failure ?? new SearchProviderError('search aborted');
  }
}

/** What the configuration asks for, provider by provider: configured or why not (the live catalog says). */
export interface ProviderStatus {
  kind: 'search' | 'llm';
  name: string;
  configured: boolean;
  /** Why not, when `configured` is false. */
  reason?: string;
}

/** Each search provider the configuration can name, with whether it is usable (its key present). */
export function searchProviderStatus(config: Config, env: NodeJS.ProcessEnv = process.env): ProviderStatus[] {
  const { searxng_url: url, brave } = config.research.search;
  return [
    url
      ? { kind: 'search', name: 'searxng', configured: true }
      : {
          kind: 'search',
          name: 'searxng',
          configured: false,
          reason: 'research.search.searxng_url (SEARXNG_URL) is not set',
        },
    brave.api_key_env && env[brave.api_key_env]?.trim()
      ? { kind: 'search', name: 'brave', configured: true }
      : {
          kind: 'search',
          name: 'brave',
          configured: false,
          reason: brave.api_key_env
            ? `the environment variable ${brave.api_key_env} (research.search.brave.api_key_env) is not set`
            : 'research.search.brave.api_key_env is null',
        },
  ];
}

/**
 * The configured providers as one (SearXNG first, then Brave Search, each the other's fallback),
 * or null when none is (features then work without search, or are unavailable). Keys come from the
 * environment only: the configuration names the variable.
 */
export function searchProviderOf(
  config: Config,
  env: NodeJS.ProcessEnv = process.env,
): SearchProvider | null {
  const { searxng_url: url, timeout_ms: timeoutMs, brave } = config.research.search;
  const userAgent = config.outbound.user_agent;
  const providers: SearchProvider[] = [];
  if (url) providers.push(new SearxngSearch({ url, timeoutMs, userAgent }));
  const apiKey = brave.api_key_env ? env[brave.api_key_env]?.trim() : undefined;
  if (apiKey) providers.push(new BraveSearch({ url: brave.url, apiKey, timeoutMs, userAgent }));
  if (providers.length === 0) return null;
  return providers.length === 1 ? (providers[0] as SearchProvider) : new FallbackSearch(providers);
}
