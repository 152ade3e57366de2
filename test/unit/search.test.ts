/**
 * The SearXNG implementation of the search provider against a SearXNG-compatible JSON server on
 * loopback: what it asks, what it keeps of the answer, and how a misconfigured or broken instance
 * fails (an error the caller can log, never results made up).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../servers/config.ts';
import {
  BraveSearch,
  FallbackSearch,
  SearchProviderError,
  SearxngSearch,
  searchProviderOf,
  searchProviderStatus,
} from '../../servers/outbound/search.ts';
import { startSearchServer, type TestSearchServer } from '../helpers/search-server.ts';

describe('SearXNG search provider', () => {
  let server: TestSearchServer;
  let search: SearxngSearch;

  beforeAll(async () => {
    server = await startSearchServer();
    search = new SearxngSearch({ url: `${server.url}/`, timeoutMs: 5000, userAgent: 'test-agent/1.0' });
  });
  afterAll(() => server?.close());

  it('asks GET /search with q and format=json and returns url, title and snippet, best first, at most limit', async () => {
    server.results.set('halcyon roasters oakland', [
      { url: 'https://halcyonroasters.com/', title: 'Halcyon Roasters', content: 'Coffee in Oakland' },
      { url: 'https://www.yelp.com/biz/halcyon-roasters-oakland', title: 'Halcyon Roasters - Yelp' },
      { url: 'https://halcyonroasters.com/', title: 'duplicate' },
      { url: 'ftp://files.example.com/menu.pdf', title: 'not http' },
      { url: 'https://instagram.com/halcyon', title: 'Instagram' },
    ]);
    const before = server.requests.length;
    const results = await search.search('halcyon roasters oakland', { limit: 2 });
    expect(results).toEqual([
      { url: 'https://halcyonroasters.com/', title: 'Halcyon Roasters', snippet: 'Coffee in Oakland' },
      {
        url: 'https://www.yelp.com/biz/halcyon-roasters-oakland',
        title: 'Halcyon Roasters - Yelp',
        snippet: '',
      },
    ]);
    const request = server.requests[before];
    expect(request?.path).toBe('/search');
    expect(request?.query.get('q')).toBe('halcyon roasters oakland');
    expect(request?.query.get('format')).toBe('json');
  });

  it('returns no results for a query the engine has nothing for', async () => {
    expect(await search.search('zzz nothing here', { limit: 5 })).toEqual([]);
  });

  it('fails with a hint when the instance does not enable the json format (403), and on a broken answer', async () => {
    server.fail = { status: 403, body: '<h1>403 Forbidden</h1>' };
    await expect(search.search('anything', { limit: 5 })).rejects.toThrow(/403.*search\.formats/);
    server.fail = { status: 200, body: '{"results": "not a list"}' };
    await expect(search.search('anything', { limit: 5 })).rejects.toBeInstanceOf(SearchProviderError);
    server.fail = { status: 200, body: '<html>not json</html>' };
    await expect(search.search('anything', { limit: 5 })).rejects.toBeInstanceOf(SearchProviderError);
    server.fail = { status: 502, body: 'bad gateway' };
    await expect(search.search('anything', { limit: 5 })).rejects.toThrow(/502/);
    server.fail = null;
  });

  it('gives up when the caller aborts', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(search.search('anything', { limit: 5, signal: controller.signal })).rejects.toThrow();
  });

  it('is configured by research.search.searxng_url (SEARXNG_URL), and absent without it', () => {
    expect(searchProviderOf(loadConfig({ env: {} }), {})).toBeNull();
    const provider = searchProviderOf(loadConfig({ env: { SEARXNG_URL: server.url } }), {});
    expect(provider?.name).toBe('searxng');
  });
});

describe('Brave Search API provider', () => {
  let server: TestSearchServer;
  const braveOf = (apiKey: string) =>
    new BraveSearch({ url: `${server.url}/res/v1`, apiKey, timeoutMs: 5000, userAgent: 'test-agent/1.0' });

  beforeAll(async () => {
    server = await startSearchServer();
  });
  afterAll(() => server?.close());

  it('asks GET /res/v1/web/search with q, count and the key in X-Subscription-Token; strips highlight marks', async () => {
    server.results.set('jane doe', [
      { url: 'https://example.org/jane', title: 'Jane Doe', content: 'Engineer at Acme' },
      { url: 'https://example.org/jane', title: 'duplicate' },
      { url: 'https://example.net/j', title: 'Jane', content: 'Another' },
    ]);
    const before = server.requests.length;
    const results = await braveOf(server.braveToken).search('jane doe', { limit: 5 });
    expect(results).toEqual([
      { url: 'https://example.org/jane', title: 'Jane Doe', snippet: 'Engineer at Acme' },
      { url: 'https://example.net/j', title: 'Jane', snippet: 'Another' },
    ]);
    const request = server.requests[before];
    expect(request?.path).toBe('/res/v1/web/search');
    expect(request?.query.get('q')).toBe('jane doe');
    expect(request?.query.get('count')).toBe('5');
    expect(request?.token).toBe(server.braveToken);
  });

  it('fails with a hint on a wrong key (401)', async () => {
    await expect(braveOf('wrong').search('jane doe', { limit: 5 })).rejects.toThrow(
      /401.*subscription token/,
    );
  });

  it('is configured only when the environment variable named by api_key_env holds a key', () => {
    const config = loadConfig({
      env: {},
      overrides: { 'research.search.brave': { url: `${server.url}/res/v1`, api_key_env: 'TEST_BRAVE_KEY' } },
    });
    expect(searchProviderOf(config, {})).toBeNull();
    expect(searchProviderStatus(config, {}).find((p) => p.name === 'brave')).toMatchObject({
      configured: false,
      reason: expect.stringContaining('TEST_BRAVE_KEY'),
    });
    expect(searchProviderOf(config, { TEST_BRAVE_KEY: 'k' })?.name).toBe('brave');
    const both = loadConfig({
      env: { SEARXNG_URL: server.url },
      overrides: { 'research.search.brave': { url: `${server.url}/res/v1`, api_key_env: 'TEST_BRAVE_KEY' } },
    });
    expect(searchProviderOf(both, { TEST_BRAVE_KEY: 'k' })?.name).toBe('searxng+brave');
  });

  it('falls back to the next provider when the first fails, and fails when all do', async () => {
    server.results.set('fallback query', [{ url: 'https://example.org/f', title: 'F' }]);
    const broken = new SearxngSearch({ url: 'http://127.0.0.1:9/', timeoutMs: 2000, userAgent: 'x/1' });
    const chain = new FallbackSearch([broken, braveOf(server.braveToken)]);
    expect((await chain.search('fallback query', { limit: 3 })).map((r) => r.url)).toEqual([
      'https://example.org/f',
    ]);
    await expect(new FallbackSearch([broken, braveOf('wrong')]).search('x', { limit: 3 })).rejects.toThrow(
      /401/,
    );
  });
});
