/**
 * A SearXNG-compatible search server on loopback: `GET /search?q=...&format=json` answers SearXNG's
 * JSON shape (`query`, `number_of_results`, `results[]` with `url`, `title`, `content`, `engine`...)
 * from a table of results per query; like a SearXNG whose settings.yml does not enable a format,
 * it answers 403 to any other `format`. Every request is recorded.
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
  requests: { path: string; query: URLSearchParams }[];
  /** Answers every request with this status and body from now on (null: normal answers). */
  fail: { status: number; body: string } | null;
  close(): Promise<void>;
}

export async function startSearchServer(): Promise<TestSearchServer> {
  const state: Pick<TestSearchServer, 'results' | 'requests' | 'fail'> = {
    results: new Map(),
    requests: [],
    fail: null,
  };
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://search.local');
    state.requests.push({ path: url.pathname, query: url.searchParams });
    if (state.fail) {
      res.writeHead(state.fail.status, { 'content-type': 'application/json' }).end(state.fail.body);
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
  });
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
