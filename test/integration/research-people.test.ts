/**
 * The people-search SKU bought as a customer buys it (the stock `@x402/fetch` client, and the MCP SDK
 * client through the real payment core), against a SearXNG-compatible server (and the same answers in
 * the Brave Search API's wire format), result pages on a loopback fixture site about two different
 * people named Jane Doe, and an OpenAI-compatible server writing the summary. Same-name people are
 * kept apart, every fact cites a page that was fetched, robots.txt is obeyed, and a search provider
 * that does not answer in time is a clear error with nothing charged.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { decodePaymentResponseHeader } from '@x402/core/http';
import type { PaymentRequired } from '@x402/core/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/databases.ts';
import { type FixtureSite, startFixtureSite } from '../helpers/fixture-sites.ts';
import { startLlmServer, type TestLlmServer } from '../helpers/llm-server.ts';
import { startSearchServer, type TestSearchServer } from '../helpers/search-server.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { newAccount, payingFetch, stockClient } from '../helpers/x402-payer.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are checked structurally
type Json = Record<string, any>;

describe.each(dialects)('people-search dossier (%s)', (dialect) => {
  let searxngOnly: TestService;
  let braveAndModel: TestService;
  let site: FixtureSite;
  let search: TestSearchServer;
  let llm: TestLlmServer;
  const payTo = newAccount().address;
  const page = (path: string) => `${site.url}${path}`;

  beforeAll(async () => {
    [site, search, llm] = await Promise.all([
      startFixtureSite('people'),
      startSearchServer(),
      startLlmServer(),
    ]);
    const all = [
      page('/team/jane-doe'),
      page('/faculty/jane-doe'),
      page('/private/jane-doe'),
      page('/news/acme-robotics-cto'),
      page('/unrelated'),
      page('/papers/kelp-2015'),
    ];
    const hits = (urls: string[]) =>
      urls.map((url) => ({ url, title: 'Jane Doe', content: 'Jane Doe result' }));
    search.results.set('"Jane Doe"', hits(all));
    search.results.set('"Jane Doe" profile', hits([page('/team/jane-doe'), page('/faculty/jane-doe')]));
    search.results.set(
      '"Jane Doe" robotics',
      hits([page('/news/acme-robotics-cto'), page('/team/jane-doe')]),
    );
    search.results.set('"Jane Doe" Portland', hits([page('/team/jane-doe')]));
    llm.answers.set('summarizer-1', (request) => {
      const notes = request.messages.at(-1)?.content ?? '';
      const acme = notes.includes('Acme Robotics');
      return JSON.stringify({
        summary: acme
          ? 'Jane Doe is most likely the Chief Technology Officer of Acme Robotics in Portland [s1]; another Jane Doe is a marine biologist.'
          : 'No match.',
      });
    });
    const common = {
      'payments.pay_to': payTo,
      'scanner.allow_private_networks': true,
      'research.search.timeout_ms': 1000,
    };
    searxngOnly = await startTestService(dialect, { ...common, 'research.search.searxng_url': search.url });
    braveAndModel = await startTestService(
      dialect,
      {
        ...common,
        'research.search.brave': { url: `${search.url}/res/v1`, api_key_env: 'TEST_PEOPLE_BRAVE_KEY' },
        'research.llm.providers': [
          { name: 'summarizer', base_url: llm.url, model: 'summarizer-1', api_key_env: null },
        ],
        'research.llm.timeout_ms': 1000,
      },
      { env: { TEST_PEOPLE_BRAVE_KEY: search.braveToken } },
    );
  });
  afterAll(async () => {
    await searxngOnly?.close();
    await braveAndModel?.close();
    await Promise.all([site?.close(), search?.close(), llm?.close()]);
  });

  const skuUrl = (service: TestService) => `${service.config.site_url}/api/public/x402/people-search`;
  const ledger = (service: TestService) => service.db.handle.db.selectFrom('payments').selectAll().execute();

  /** Every id a fact, event, affiliation or candidate cites is a source, and every source was fetched. */
  function expectEveryCitationFetched(body: Json) {
    const sources = new Map((body.sources as Json[]).map((s) => [s.id, s.url as string]));
    const fetched = new Set(site.requests.map((r) => `${site.url}${r.path}`));
    for (const source of sources.values()) expect(fetched.has(source), source).toBe(true);
    const cited = [...body.key_facts, ...body.timeline, ...body.affiliations, ...body.candidates] as Json[];
    expect(cited.length).toBeGreaterThan(0);
    for (const item of cited) {
      expect(item.source_ids.length, JSON.stringify(item)).toBeGreaterThan(0);
      for (const id of item.source_ids) expect(sources.has(id), id).toBe(true);
    }
  }

  it('keeps two people with the same name apart, cites only fetched pages and obeys robots.txt (@x402/fetch)', async () => {
    const payer = newAccount();
    const res = await payingFetch(payer)(skuUrl(searxngOnly), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Jane Doe' }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Json;

    expect(body.candidates).toHaveLength(2);
    const sourceUrl = new Map((body.sources as Json[]).map((s) => [s.id, s.url]));
    const pathsOf = (c: Json) =>
      (c.source_ids as string[]).map((id) => new URL(sourceUrl.get(id)).pathname).sort();
    const robotics = (body.candidates as Json[]).find((c) => /Acme Robotics/.test(c.description)) as Json;
    const biology = (body.candidates as Json[]).find((c) => /Coastal University/.test(c.description)) as Json;
    expect(pathsOf(robotics)).toEqual(['/news/acme-robotics-cto', '/team/jane-doe']);
    expect(robotics.location).toMatch(/^Portland/);
    expect(pathsOf(biology)).toEqual(['/faculty/jane-doe', '/papers/kelp-2015']);
    expect(biology.location).toMatch(/^Halifax/);
    // Neither candidate's facts are the other's.
    const factsOf = (c: Json) =>
      (body.key_facts as Json[]).filter((f) => f.candidate_id === c.id).map((f) => f.fact);
    expect(factsOf(robotics).join(' ')).not.toMatch(/Marine|Coastal|Halifax/);
    expect(factsOf(biology).join(' ')).not.toMatch(/Acme|Portland/);

    expectEveryCitationFetched(body);
    expect(site.requests.some((r) => r.path === '/private/jane-doe')).toBe(false);
    expect(body.pages.skipped_by_robots).toEqual([page('/private/jane-doe')]);
    expect((body.sources as Json[]).map((s) => s.url)).not.toContain(page('/unrelated'));
    expect(body.pages).toMatchObject({ read: 5, about_person: 4, failed: 0 });

    expect(body.timeline).toContainEqual(
      expect.objectContaining({ date: '2019-03-04', candidate_id: robotics.id }),
    );
    expect((body.timeline as Json[]).map((t) => t.date)).toEqual(
      [...(body.timeline as Json[]).map((t) => t.date)].sort(),
    );
    expect(body.affiliations).toContainEqual(
      expect.objectContaining({
        organization: 'Acme Robotics',
        role: 'Chief Technology Officer',
        period: 'since 2019',
        candidate_id: robotics.id,
      }),
    );
    expect(body.digital_footprint).toContainEqual(
      expect.objectContaining({
        kind: 'profile',
        url: 'https://github.com/janedoe-robotics',
        candidate_id: robotics.id,
      }),
    );
    expect(body.digital_footprint).toContainEqual(
      expect.objectContaining({
        kind: 'publication',
        url: page('/papers/kelp-2015'),
        candidate_id: biology.id,
      }),
    );
    expect(body.summary_source).toBe('extractive');
    expect(body.summary).toMatch(/2 different people named Jane Doe/);
    expect(body.next_steps.join(' ')).toMatch(/2 people share this name/);
    expect(body.next_steps.join(' ')).toMatch(/robots\.txt/);
    expect(body.disclaimer).toMatch(/not a consumer report or a background check/);
    expect(body.disclaimer).toMatch(/employment, credit, housing or insurance/);

    // Several formulations were searched.
    const asked = search.requests.filter((r) => r.path === '/search').map((r) => r.query.get('q'));
    expect(asked).toEqual(expect.arrayContaining(['"Jane Doe"', '"Jane Doe" profile']));
    expect(body.searches).toEqual([
      { query: '"Jane Doe"', results: 6 },
      { query: '"Jane Doe" profile', results: 2 },
    ]);

    const receipt = decodePaymentResponseHeader(res.headers.get('payment-response') as string) as Json;
    expect((await ledger(searxngOnly)).find((p) => p.id === receipt.id)).toMatchObject({
      sku: 'people-search',
      amount: 10000,
      status: 'authorized',
    });
  });

  it('ranks the candidate the context and location point at first, with a model-written summary (MCP, Brave)', async () => {
    const client = new Client({ name: 'people-buyer', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(braveAndModel.config.mcp_url)));
    try {
      const args = { name: 'Jane Doe', context: 'robotics', location: 'Portland' };
      const unpaid = await client.callTool({ name: 'research_person', arguments: args });
      expect(unpaid.isError).toBe(true);
      const required = unpaid.structuredContent as Json;
      expect(required).toMatchObject({ x402Version: 2, accepts: [{ amount: '10000', payTo }] });
      const before = search.requests.length;
      const payload = await stockClient(newAccount()).createPaymentPayload(
        required as unknown as PaymentRequired,
      );
      const paid = await client.callTool({
        name: 'research_person',
        arguments: args,
        _meta: { 'x402/payment': payload },
      });
      expect(paid.isError).toBeFalsy();
      const body = paid.structuredContent as Json;
      const [first, second] = body.candidates as Json[];
      expect(first?.description).toMatch(/Acme Robotics/);
      expect(first?.confidence).toBeGreaterThan(second?.confidence ?? 0);
      expect(body.summary_source).toBe('llm:summarizer');
      expect(body.summary).toMatch(/Chief Technology Officer of Acme Robotics/);
      expect(body.disclaimer).toMatch(/not a consumer report/);
      expectEveryCitationFetched(body);
      // The searches went to the Brave Search API with the key from the environment.
      const brave = search.requests.slice(before).filter((r) => r.path === '/res/v1/web/search');
      expect(brave.map((r) => r.query.get('q'))).toEqual(
        expect.arrayContaining([
          '"Jane Doe" robotics',
          '"Jane Doe" Portland',
          '"Jane Doe" robotics Portland',
        ]),
      );
      expect(brave.every((r) => r.token === search.braveToken)).toBe(true);
      const receipt = (paid._meta as Json)['x402/payment-response'] as Json;
      expect(receipt).toMatchObject({ success: true });

      // Not stored past delivery: the ledger keeps the receipt, not the dossier, and the same
      // payment sent again cannot fetch it a second time.
      const row = (await ledger(braveAndModel)).find((p) => p.id === receipt.id);
      expect(row).toMatchObject({ sku: 'people-search', status: 'authorized', result: null });
      const replay = await client.callTool({
        name: 'research_person',
        arguments: args,
        _meta: { 'x402/payment': payload },
      });
      expect(replay.isError).toBe(true);
      expect(JSON.stringify(replay.structuredContent ?? replay.content)).toMatch(/payment_already_used/);
      expect(JSON.stringify(replay)).not.toMatch(/Acme Robotics/);
    } finally {
      await client.close();
    }
  });

  it('falls back to the extractive summary when the summary model does not answer in time, and still delivers', async () => {
    llm.delayMs = 2500;
    try {
      const res = await payingFetch(newAccount())(skuUrl(braveAndModel), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Jane Doe', location: 'Halifax' }),
      });
      expect(res.status).toBe(200);
      const body = (await res.json()) as Json;
      expect(body.summary_source).toBe('extractive');
      expect(body.summary).toMatch(/summarizer did not answer: summarizer: no answer within 1000 ms/);
      expect((body.candidates as Json[])[0]?.description).toMatch(/Coastal University/);
      expectEveryCitationFetched(body);
    } finally {
      llm.delayMs = 0;
    }
  });

  it('lists its providers in the live catalog', async () => {
    const res = await fetch(`${searxngOnly.config.functions_url}/catalog`);
    const entry = ((await res.json()) as Json).skus.find((s: Json) => s.sku === 'people-search');
    expect(entry).toMatchObject({
      available: true,
      providers: [
        { kind: 'search', name: 'searxng', configured: true },
        {
          kind: 'search',
          name: 'brave',
          configured: false,
          reason: expect.stringContaining('BRAVE_SEARCH_API_KEY'),
        },
      ],
    });
  });

  it('answers provider_unavailable when the search provider does not answer in time, and charges nothing', async () => {
    search.delayMs = 3000;
    try {
      const payer = newAccount();
      const res = await payingFetch(payer)(skuUrl(searxngOnly), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Jane Doe', location: 'Halifax' }),
      });
      expect(res.status).toBe(502);
      const problem = (await res.json()) as Json;
      expect(problem).toMatchObject({
        code: 'provider_unavailable',
        detail: 'Search provider searxng: no answer within 1000 ms; nothing was charged',
      });
      expect(res.headers.get('payment-response')).toBeNull();
      const rows = (await ledger(searxngOnly)).filter((p) => p.payer === payer.address.toLowerCase());
      expect(rows.map((r) => r.status)).toEqual(['released']);
    } finally {
      search.delayMs = 0;
    }
  });
});
