/**
 * A SearXNG-compatible search server on loopback: `GET /search?q=...&format=json` answers SearXNG's
 * JSON shape (`query`, `number_of_results`, `results[]` with `url`, `title`, `content`, `engine`...)
 * from a table of results per query; like a SearXNG whose settings.yml does not enable a format,
 * it answers 403 to any other `format`. It also speaks the Brave Search API's wire format at
 * `GET /res/v1/web/search?q=...&count=N` (key in `X-Subscription-Token`, 401 without the expected
 * one; results in `web.results[]` with `title`, `url`, `description` holding `<strong>` marks).
 * Every request is recorded.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SearchHit {
  url: string;
  title: string;
  content?: string;
}

export interface TestSearchServer {
  /** Base URL, for `research.search.searxng_url`. */
  url: string;
  /** Results per exact query text; unknown queries get no results. */
  results: Map<string, SearchHit[]>;
  requests: { path: string; query: URLSearchParams; token: string | undefined }[];
  /** Answers every request with this status and body from now on (null: normal answers). */
  fail: { status: number; body: string } | null;
  /** Holds every answer this long (a provider that does not answer in time). */
  delayMs: number;
  /** The Brave subscription token accepted at `/res/v1/web/search`. */
  braveToken: string;
  close(): Promise<void>;
}

export async function startSearchServer(): Promise<TestSearchServer> {
  const state: Pick<TestSearchServer, 'results' | 'requests' | 'fail' | 'delayMs' | 'braveToken'> = {
    results: new Map(),
    requests: [],
    fail: null,
    delayMs: 0,
    braveToken: 'test-brave-token',
  };
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://search.local');
    const token = req.headers['x-subscription-token'];
    state.requests.push({
      path: url.pathname,
      query: url.searchParams,
      token: typeof token === 'string' ? token : undefined,
    });
    if (state.delayMs > 0) {
      const timer = setTimeout(() => answer(req, res, url), state.delayMs);
      res.on('close', () => clearTimeout(timer));
      return;
    }
    answer(req, res, url);
  });
  const answer = (req: http.IncomingMessage, res: http.ServerResponse, url: URL) => {
    if (state.fail) {
      res.writeHead(state.fail.status, { 'content-type': 'application/json' }).end(state.fail.body);
      return;
    }
    if (url.pathname === '/res/v1/web/search') {
      if (req.headers['x-subscription-token'] !== state.braveToken) {
        res.writeHead(401, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            type: 'ErrorResponse',
            error: { code: 'SUBSCRIPTION_TOKEN_INVALID', status: 401 },
          }),
        );
        return;
      }
      const q = url.searchParams.get('q') ?? '';
      const count = Number(url.searchParams.get('count') ?? 20);
      const hits = (state.results.get(q) ?? []).slice(0, count);
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          type: 'search',
          query: { original: q, more_results_available: false },
          mixed: { type: 'mixed', main: hits.map((_, index) => ({ type: 'web', index, all: false })) },
          web: {
            type: 'search',
            family_friendly: true,
            results: hits.map((hit) => ({
              type: 'search_result',
              title: hit.title,
              url: hit.url,
              is_source_local: false,
              description: (hit.content ?? '').replace(/(\w{5,})/, '<strong>$1</strong>'),
              profile: { name: new URL(hit.url).hostname, url: hit.url },
              meta_url: { scheme: 'https', netloc: new URL(hit.url).host, path: new URL(hit.url).pathname },
            })),
          },
        }),
      );
      return;
    }
    if (url.pathname !== '/search') {
      res.writeHead(404).end();
      return;
    }
    if (url.searchParams.get('format') !== 'json') {
      res.writeHead(403, { 'content-type': 'text/html' }).end('<h1>403 Forbidden</h1>');
      return;
    }
    const q = url.searchParams.get('q') ?? '';
    const hits = state.results.get(q) ?? [];
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        query: q,
        number_of_results: hits.length,
        results: hits.map((hit, i) => ({
          url: hit.url,
          title: hit.title,
          content: hit.content ?? '',
          engine: 'duckduckgo',
          parsed_url: new URL(hit.url).href.split('/'),
          template: 'default.html',
          engines: ['duckduckgo'],
          positions: [i + 1],
          score: 1 / (i + 1),
          category: 'general',
        })),
        answers: [],
        corrections: [],
        infoboxes: [],
        suggestions: [],
        unresponsive_engines: [],
      }),
    );
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(state, {
    url: `http://127.0.0.1:${port}`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
}
