/**
 * The page reader for search results: robots.txt per origin (a disallow, a missing file, a file
 * that cannot be fetched), redirects checked hop by hop against robots.txt and the address policy,
 * byte limits and content types - against real local servers.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PageReader } from '../../servers/features/scans/page-reader.ts';
import { createSafeFetch } from '../../servers/outbound/safe-fetch.ts';

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

async function serve(
  routes: Record<string, Handler>,
): Promise<{ url: string; hits: string[]; close(): Promise<void> }> {
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    hits.push(req.url ?? '/');
    const route = routes[req.url ?? '/'];
    if (route) route(req, res);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    hits,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const html =
  (body: string): Handler =>
  (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' }).end(`<html><body>${body}</body></html>`);
  };

describe('PageReader', () => {
  let polite: Awaited<ReturnType<typeof serve>>;
  let broken: Awaited<ReturnType<typeof serve>>;
  const reader = (allowPrivateNetworks = true, maxBytes = 10_000) =>
    new PageReader({
      fetch: createSafeFetch({ allowPrivateNetworks, timeoutMs: 2000, userAgent: 'agent-service-scanner/1' }),
      userAgent: 'agent-service-scanner/1.0 (+test)',
      maxBytes,
      requestTimeoutMs: 2000,
      maxRedirects: 3,
      concurrency: 2,
      now: () => new Date('2026-11-25T00:00:00Z'),
    });

  beforeAll(async () => {
    polite = await serve({
      '/robots.txt': (_req, res) =>
        res
          .writeHead(200, { 'content-type': 'text/plain' })
          .end('User-agent: agent-service-scanner\nDisallow: /secret\n\nUser-agent: *\nDisallow: /\n'),
      '/open': html('open page'),
      '/to-secret': (_req, res) => res.writeHead(302, { location: '/secret' }).end(),
      '/secret': html('secret'),
      '/image': (_req, res) => res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.alloc(10)),
      '/big': html('x'.repeat(50_000)),
      '/loop': (_req, res) => res.writeHead(302, { location: '/loop' }).end(),
    });
    broken = await serve({
      '/robots.txt': (_req, res) => res.writeHead(503).end(),
      '/page': html('page'),
    });
  });
  afterAll(async () => {
    await polite?.close();
    await broken?.close();
  });

  it('reads pages robots.txt allows to its token, and fetches robots.txt once per origin', async () => {
    const outcomes = await reader().readAll(
      [`${polite.url}/open`, `${polite.url}/secret`],
      AbortSignal.timeout(5000),
    );
    expect(outcomes[0]).toMatchObject({
      ok: true,
      page: { final_url: `${polite.url}/open`, retrieved_at: '2026-11-25T00:00:00.000Z' },
    });
    expect(outcomes[1]).toMatchObject({ ok: false, reason: 'robots' });
    expect(polite.hits.filter((h) => h === '/robots.txt')).toHaveLength(1);
    expect(polite.hits).not.toContain('/secret');
  });

  it('checks robots.txt on every redirect hop, refuses loops, non-pages, and reads at most maxBytes', async () => {
    const r = reader(true, 1000);
    const signal = AbortSignal.timeout(5000);
    expect(await r.read(`${polite.url}/to-secret`, signal)).toMatchObject({ ok: false, reason: 'robots' });
    expect(await r.read(`${polite.url}/loop`, signal)).toMatchObject({ ok: false, detail: 'redirect loop' });
    expect(await r.read(`${polite.url}/image`, signal)).toMatchObject({ ok: false, reason: 'not_text' });
    const big = await r.read(`${polite.url}/big`, signal);
    expect(big.ok && big.page.truncated && big.page.body.length).toBe(1000);
  });

  it('does not read a site whose robots.txt cannot be fetched (RFC 9309 2.3.1.4)', async () => {
    expect(await reader().read(`${broken.url}/page`, AbortSignal.timeout(5000))).toMatchObject({
      ok: false,
      reason: 'robots',
    });
    expect(broken.hits).not.toContain('/page');
  });

  it('refuses private addresses under the public address policy', async () => {
    const outcome = await reader(false).read(`${polite.url}/open`, AbortSignal.timeout(5000));
    // robots.txt itself cannot be fetched from a loopback address, so nothing is read.
    expect(outcome.ok).toBe(false);
    expect(
      await reader(false).read('http://169.254.169.254/latest/meta-data/', AbortSignal.timeout(5000)),
    ).toMatchObject({ ok: false });
  });
});
