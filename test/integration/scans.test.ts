/**
 * Scans through the public endpoints against local fixture sites, once per dialect: REST (202 and
 * polling), MCP (the SDK client waits and receives progress notifications), the reads built on
 * stored scores, private scans per account, and the hostile cases.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCORING_VERSION } from '../../servers/features/scans/scoring/model.ts';
import { doorVisitors } from '../../servers/features/scans/verify.ts';
import { dialects } from '../helpers/databases.ts';
import { type FixtureSite, scannerOnLoopback, startFixtureSite } from '../helpers/fixture-sites.ts';
import { waitFor } from '../helpers/receivers.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

describe.each(dialects)('scans and Signal Strength (%s)', (dialect) => {
  let service: TestService;
  let api: string;
  let well: FixtureSite;
  let bare: FixtureSite;
  let hostile: FixtureSite;
  let client: Client;

  beforeAll(async () => {
    [well, bare, hostile] = await Promise.all([
      startFixtureSite('wellPrepared'),
      startFixtureSite('bare'),
      startFixtureSite('hostile'),
    ]);
    service = await startTestService(dialect, {
      'rate_limits.unauthenticated_writes.points': 1000,
      ...scannerOnLoopback,
    });
    api = service.config.public_api_url;
    client = new Client({ name: 'scan-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(service.config.mcp_url)));
  });
  afterAll(async () => {
    await client?.close();
    await service?.close();
    await Promise.all([well, bare, hostile].map((s) => s?.close()));
  });

  const post = (body: unknown, key?: string) =>
    fetch(`${api}/scans`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(key ? { 'x-service-key': key } : {}) },
      body: JSON.stringify(body),
    });

  async function scanToEnd(domain: string, key?: string) {
    const res = await post({ domain }, key);
    expect(res.status).toBe(202);
    const accepted = await res.json();
    let scan = accepted;
    await waitFor(async () => {
      scan = await (
        await fetch(accepted.status_url, { headers: key ? { 'x-service-key': key } : {} })
      ).json();
      return scan.status === 'done' || scan.status === 'failed';
    }, 25_000);
    return { accepted, scan };
  }

  it('POST /scans answers 202 with a status URL; the background scan of a well-prepared site scores Beacon', async () => {
    const { accepted, scan } = await scanToEnd(well.domain);
    expect(accepted).toMatchObject({ domain: well.domain, public: true, depth: 'full' });
    expect(['queued', 'running', 'done']).toContain(accepted.status);
    expect(accepted.status_url).toBe(`${api}/scans/${accepted.scan_id}`);
    expect(scan.status).toBe('done');
    expect(scan.result.tier.id).toBe('beacon');
    expect(scan.result.components.map((c: { id: string }) => c.id)).toEqual([
      'technical_foundation',
      'live_ai_traffic',
      'content_depth',
      'citation_signals',
      'engagement_velocity',
    ]);
    expect(scan.result.components[1]).toMatchObject({ status: 'no_data', score: null });
    expect(scan.result.note).toMatch(/renormalized/);
    expect(scan.result.site).toMatchObject({
      markdown_negotiation: true,
      llms_txt: { present: true, valid: true },
      discovery: { api_catalog: true, mcp_server_card: true, x402: true },
    });
    expect(scan.result.recommended_next_tools).toContain('install_pixel');
    expect(scan.progress.done).toBeGreaterThan(5);
    // Our crawler never fetched what robots.txt disallows for its token.
    expect(well.requests.some((r) => r.path.startsWith('/private/'))).toBe(false);
  });

  it('GET /scan-score, /signal, /leaderboard and /readiness-index read the stored result', async () => {
    const score = await (await fetch(`${api}/scan-score?domain=${well.domain}`)).json();
    expect(score).toMatchObject({ domain: well.domain, depth: 'full' });
    expect(score.findings.every((f: { evidence_url: unknown }) => 'evidence_url' in f)).toBe(true);

    const signal = await (await fetch(`${api}/signal?domain=${well.domain}`)).json();
    expect(signal).toMatchObject({
      status: 'scored',
      score: score.score,
      depth: 'full',
      scan_id: score.scan_id,
    });
    expect(signal.age_seconds).toBeGreaterThanOrEqual(0);
    expect(signal.tier.id).toBe('beacon');

    await scanToEnd(bare.domain);
    const board = await (await fetch(`${api}/leaderboard?limit=1`)).json();
    expect(board.entries).toEqual([
      expect.objectContaining({ rank: 1, domain: well.domain, tier: 'beacon' }),
    ]);
    expect(board.next_cursor).toBeTypeOf('string');
    const next = await (await fetch(`${api}/leaderboard?limit=1&cursor=${board.next_cursor}`)).json();
    expect(next.entries[0]).toMatchObject({ rank: 2, domain: bare.domain, tier: 'dark' });
    const bad = await fetch(`${api}/leaderboard?cursor=nonsense`);
    expect(bad.status).toBe(400);

    const index = await (await fetch(`${api}/readiness-index`)).json();
    expect(index.current.domains).toBe(2);
    expect(index.current.adoption.llms_txt).toBe(0.5);
    expect(index.current.tiers).toMatchObject({ beacon: 1, dark: 1 });
  });

  it('GET /signal of a never-scanned domain runs a quick check and stores it', async () => {
    const site = await startFixtureSite('wellPrepared');
    try {
      // Callers arriving together share one quick check: the others hear that it is running.
      const answers = await Promise.all(
        [1, 2, 3].map(async () => {
          const res = await fetch(`${api}/signal?domain=${site.domain}`);
          expect(res.status).toBe(200);
          return res.json();
        }),
      );
      const signal = answers.find((a) => a.status === 'scored');
      expect(signal).toBeDefined();
      for (const other of answers) {
        expect(['scored', 'scanning']).toContain(other.status);
        expect(other.scan_id).toBe(signal.scan_id);
      }
      const rows = await service.services.db
        .selectFrom('scans')
        .select('id')
        .where('domain', '=', site.domain)
        .execute();
      expect(rows).toHaveLength(1);
      expect(signal).toMatchObject({ status: 'scored', depth: 'quick' });
      expect(signal.score).toBeGreaterThan(50);
      // The door test asks for the home page as a browser and as AI agents: not crawled pages.
      const door = new Set(doorVisitors.map((v) => v.userAgent));
      const htmlPages = site.requests.filter(
        (r) => r.accept?.startsWith('text/html') && !door.has(r.userAgent ?? ''),
      ).length;
      expect(htmlPages).toBeLessThanOrEqual(service.config.scanner.quick_max_pages);
      const again = await (await fetch(`${api}/signal?domain=${site.domain}`)).json();
      expect(again.scan_id).toBe(signal.scan_id);
    } finally {
      await site.close();
    }
  });

  it('request_scan over MCP waits for the result and sends progress notifications', async () => {
    const progress: { progress: number; total?: number }[] = [];
    const result = await client.callTool(
      { name: 'request_scan', arguments: { domain: bare.domain } },
      undefined,
      { onprogress: (p) => progress.push(p), timeout: 30_000 },
    );
    expect(result.isError).toBeFalsy();
    const scan = result.structuredContent as { status: string; result: { tier: { id: string } } };
    expect(scan.status).toBe('done');
    // bare was scanned before: a flat score trend (0.5) now counts, which can lift it into Faint.
    expect(['dark', 'faint']).toContain(scan.result.tier.id);
    expect(progress.length).toBeGreaterThan(0);
    const reading = await client.callTool({ name: 'get_signal', arguments: { domain: bare.domain } });
    expect(reading.structuredContent).toMatchObject({ status: 'scored', domain: bare.domain });
  });

  it("scores Live AI Traffic from the pixel of the domain's verified owner", async () => {
    const json = { 'content-type': 'application/json' };
    const account = await (
      await fetch(`${api}/account`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ email: `live-${dialect}@example.com` }),
      })
    ).json();
    const key = account.key.service_key;
    const site = await (
      await fetch(`${api}/pixel-install`, {
        method: 'POST',
        headers: { ...json, 'x-service-key': key },
        body: JSON.stringify({ domain: bare.domain }),
      })
    ).json();
    const gptbot =
      'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.1; +https://openai.com/gptbot)';
    const chrome =
      'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
    const events = Array.from({ length: 20 }, (_, i) => ({
      ts: new Date().toISOString(),
      url: `http://${bare.domain}/page-${i}`,
      user_agent: i % 2 ? gptbot : chrome,
    }));
    const ingested = await fetch(`${api}/events`, {
      method: 'POST',
      headers: { ...json, 'x-service-key': key },
      body: JSON.stringify({ site_id: site.site_id, events }),
    });
    expect(ingested.status).toBe(200);

    // Unverified: traffic anyone could have sent does not count.
    const before = (await scanToEnd(bare.domain)).scan;
    const liveOf = (scan: {
      result: { components: { id: string; status: string; score: number | null }[] };
    }) => scan.result.components.find((c) => c.id === 'live_ai_traffic');
    expect(liveOf(before)).toMatchObject({ status: 'no_data', score: null });

    // The ownership proofs are tested in accounts-sites.test.ts; here the site is marked verified.
    await service.services.db
      .updateTable('sites')
      .set({ verified_at: new Date().toISOString(), verification_method: 'http' })
      .where('id', '=', site.site_id)
      .execute();
    const after = (await scanToEnd(bare.domain)).scan;
    expect(liveOf(after)?.status).toBe('scored');
    expect(liveOf(after)?.score).toBeGreaterThan(0);
  });

  it('scans a hostile site without harm and reports what it met', async () => {
    const { scan } = await scanToEnd(hostile.domain);
    expect(scan.status).toBe('done');
    expect(scan.result.site.pages_read).toBeGreaterThanOrEqual(2);
    const failed = scan.result.findings.find((f: { id: string }) => f.id === 'pages_readable');
    expect(failed.seen).toMatch(/failed/);
  });

  it('stores private scans for the account that asked, and hides them from everyone else', async () => {
    const account = await (
      await fetch(`${api}/account`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          email: `scan-owner-${Date.now()}@example.com`,
          password: 'correct horse battery',
        }),
      })
    ).json();
    const key = account.key.service_key as string;
    const site = await startFixtureSite('bare');
    try {
      const res = await post({ domain: site.domain, public: false }, key);
      expect(res.status).toBe(202);
      const accepted = await res.json();
      expect(accepted.public).toBe(false);
      await waitFor(async () => {
        const s = await (await fetch(accepted.status_url, { headers: { 'x-service-key': key } })).json();
        return s.status === 'done';
      }, 20_000);
      expect((await fetch(accepted.status_url)).status).toBe(404);
      expect((await fetch(`${api}/scan-score?domain=${site.domain}`)).status).toBe(404);
      const own = await service.services.scans.reads.scansOf(account.account_id);
      expect(own.map((s) => s.scan_id)).toContain(accepted.scan_id);
      const row = await service.database.db
        .selectFrom('scans')
        .select(['account_id', 'is_public'])
        .where('id', '=', accepted.scan_id)
        .executeTakeFirstOrThrow();
      expect(row).toEqual({ account_id: account.account_id, is_public: 0 });
      const anonymous = await post({ domain: site.domain, public: false });
      expect(anonymous.status).toBe(400);
      expect((await anonymous.json()).errors[0].field).toBe('public');
    } finally {
      await site.close();
    }
  });

  it('gives a site answering every path with the same 200 HTML no credit for documents it does not have (soft 404)', async () => {
    const [spa, real] = await Promise.all([startFixtureSite('spa'), startFixtureSite('spaWithDocuments')]);
    try {
      const [shell, documents] = await Promise.all([scanToEnd(spa.domain), scanToEnd(real.domain)]);
      type Result = {
        score: number;
        components: { id: string; checks: { id: string; score: number | null }[] }[];
        findings: { id: string; severity: string; seen: string; evidence_url: string | null }[];
        site: { discovery: Record<string, boolean> };
      };
      const technical = (result: Result) =>
        Object.fromEntries(
          (result.components.find((c) => c.id === 'technical_foundation')?.checks ?? []).map((k) => [
            k.id,
            k.score,
          ]),
        );
      expect(shell.scan.status).toBe('done');
      const attack = shell.scan.result as Result;
      // A shell with no machine interface is a content site: the API checks do not apply to it.
      expect(technical(attack)).toMatchObject({
        api_catalog: null,
        mcp_server_card: null,
        openapi: null,
        x402: null,
      });
      const asApi = (await (await fetch(`${api}/scans/${shell.scan.scan_id}?profile=api`)).json()) as {
        result: Result;
      };
      expect(technical(asApi.result)).toMatchObject({
        api_catalog: 0,
        mcp_server_card: 0,
        openapi: 0,
        x402: 0,
      });
      expect(Object.values(attack.site.discovery).every((valid) => valid === false)).toBe(true);
      const finding = attack.findings.find((f) => f.id === 'soft_404');
      expect(finding).toMatchObject({ severity: 'warning' });
      expect(finding?.evidence_url).toContain(`${spa.url}/.well-known/agent-service-probe-`);
      expect(spa.requests.filter((r) => r.path.startsWith('/.well-known/agent-service-probe-'))).toHaveLength(
        1,
      );

      // The same app shell for unknown paths, real documents at the real paths: those keep their credit.
      expect(documents.scan.status).toBe('done');
      const honest = documents.scan.result as Result;
      expect(technical(honest)).toMatchObject({ api_catalog: 1, mcp_server_card: 1, openapi: 1, x402: 0.5 });
      expect(honest.site.discovery).toMatchObject({
        api_catalog: true,
        mcp_server_card: true,
        openapi: true,
      });
      expect(honest.score).toBeGreaterThan(attack.score);

      const stored = await (await fetch(`${api}/scan-score?domain=${spa.domain}`)).json();
      expect(stored.score).toBe(attack.score);
    } finally {
      await Promise.all([spa.close(), real.close()]);
    }
  });

  it('serves the fix sheet as markdown over REST and as an MCP tool, and scores another profile on request', async () => {
    const blog = await startFixtureSite('blogNoVary');
    try {
      const { scan } = await scanToEnd(blog.domain);
      expect(scan.result).toMatchObject({
        scoring_version: SCORING_VERSION,
        profile: { id: 'content', source: 'detected' },
      });
      const check = scan.result.components[0].checks.find((k: { id: string }) => k.id === 'mcp_live');
      expect(check).toMatchObject({ status: 'not_applicable', score: null });
      const finding = scan.result.findings.find((f: { id: string }) => f.id === 'markdown_negotiation');
      expect(finding.seen).toMatch(/no Vary: Accept/);
      expect(finding.agent_prompt).toContain('Vary: Accept');
      expect(finding.evidence.length).toBeGreaterThan(0);
      // Every check shows the requests behind it; they are stored once, with the facts.
      const robots = scan.result.components[0].checks.find((k: { id: string }) => k.id === 'robots_txt');
      expect(robots.evidence[0]).toMatchObject({ topic: 'robots', method: 'GET', status: 200 });
      const stored = await service.services.db
        .selectFrom('scans')
        .select('components')
        .where('id', '=', scan.scan_id)
        .executeTakeFirstOrThrow();
      expect(stored.components).not.toContain('body_preview');

      const res = await fetch(`${api}/scans/${scan.scan_id}/fixes.md`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/markdown/);
      const sheet = await res.text();
      expect(sheet).toMatch(new RegExp(`^# Fix sheet: ${blog.domain.replace('.', '\\.')}`));
      expect(sheet).toContain('`markdown_negotiation`');
      expect(sheet).toContain('Prompt for a coding agent:');
      expect((await fetch(`${api}/scans/00000000-0000-4000-8000-000000000000/fixes.md`)).status).toBe(404);

      const tool = await client.callTool({ name: 'get_scan_fixes', arguments: { scan_id: scan.scan_id } });
      expect(tool.isError).toBeFalsy();
      expect((tool.structuredContent as { markdown: string }).markdown).toBe(sheet);

      // The same stored facts, scored as an API product: the API checks apply and fail.
      const asApi = await (await fetch(`${api}/scans/${scan.scan_id}?profile=api`)).json();
      expect(asApi.result.profile).toMatchObject({ id: 'api', detected: 'content', source: 'requested' });
      expect(asApi.result.score).toBeLessThan(scan.result.score);
      const signal = await (await fetch(`${api}/signal?domain=${blog.domain}&profile=api`)).json();
      expect(signal).toMatchObject({
        score: asApi.result.score,
        profile: 'api',
        scoring_version: SCORING_VERSION,
      });
      expect((await fetch(`${api}/signal?domain=${blog.domain}&profile=forum`)).status).toBe(400);
    } finally {
      await blog.close();
    }
  });

  it('verifies an API product whose MCP server is protected by our own authorization server', async () => {
    const product = await startFixtureSite('apiProduct', { authorizationServer: service.config.auth_url });
    try {
      const { scan } = await scanToEnd(product.domain);
      const checks = new Map<string, { score: number | null; seen: string }>(
        scan.result.components[0].checks.map((k: { id: string; score: number | null; seen: string }) => [
          k.id,
          k,
        ]),
      );
      // Our authorization server answers under RFC 8414 (both layouts) and OpenID discovery with one issuer.
      expect(checks.get('oauth_chain'), checks.get('oauth_chain')?.seen).toMatchObject({ score: 1 });
      expect(checks.get('oauth_chain')?.seen).toMatch(/verified across 1 authorization server/);
      expect(checks.get('mcp_live')?.seen).toMatch(/asks for a token \(401\)/);
      expect(scan.result.profile.id).toBe('api');
      // The peer is a real MCP server: with a token it lists its tools (the scanner never has one).
      const peer = new Client({ name: 'peer-check', version: '1.0.0' });
      await peer.connect(
        new StreamableHTTPClientTransport(new URL(`${product.url}/mcp`), {
          requestInit: { headers: { authorization: 'Bearer test-token' } },
        }),
      );
      expect((await peer.listTools()).tools.map((t) => t.name)).toEqual(['list_widgets', 'get_widget']);
      await peer.close();
    } finally {
      await product.close();
    }
  });

  it('re-scores a scan stored by an older scoring version on read and by the worker', async () => {
    const { scan } = await scanToEnd(bare.domain);
    const db = service.services.db;
    await db
      .updateTable('scans')
      .set({ scoring_version: null, scoring_inputs: null, score: 3 })
      .where('id', '=', scan.scan_id)
      .execute();
    await db
      .updateTable('domain_scores')
      .set({ scoring_version: null, score: 3 })
      .where('scan_id', '=', scan.scan_id)
      .execute();
    // On read: the current version's score, computed from the stored facts.
    const read = await (await fetch(`${api}/scans/${scan.scan_id}`)).json();
    expect(read.result).toMatchObject({ score: scan.result.score, scoring_version: SCORING_VERSION });
    // By the worker: stored, and the leaderboard shows it.
    await waitFor(async () => {
      const row = await db
        .selectFrom('domain_scores')
        .selectAll()
        .where('domain', '=', bare.domain)
        .executeTakeFirst();
      return row?.scoring_version === SCORING_VERSION && row.score === scan.result.score;
    }, 10_000);
    const board = await (await fetch(`${api}/leaderboard?limit=100`)).json();
    expect(board.scoring_version).toBe(SCORING_VERSION);
    expect(
      board.entries.every((e: { scoring_version: number }) => e.scoring_version === SCORING_VERSION),
    ).toBe(true);
  });

  it('refuses domains outside the policy and unknown scans', async () => {
    for (const domain of ['', 'not a domain', 'http://[::1', '10.0.0.1']) {
      const res = await post({ domain });
      expect(res.status, domain).toBe(400);
    }
    expect((await fetch(`${api}/scans/00000000-0000-4000-8000-000000000000`)).status).toBe(404);
    expect((await fetch(`${api}/scans/not-a-uuid`)).status).toBe(400);
    expect((await fetch(`${api}/scan-score?domain=never-scanned-site.com`)).status).toBe(404);
  });
});

describe.each(dialects)('scanner with private networks off (%s)', (dialect) => {
  let service: TestService;
  let site: FixtureSite;

  beforeAll(async () => {
    site = await startFixtureSite('bare');
    service = await startTestService(dialect, {
      'scanner.allow_private_networks': false,
      'scanner.allow_local_sites': false,
    });
  });
  afterAll(async () => {
    await service?.close();
    await site?.close();
  });

  it('does not accept loopback domains at all', async () => {
    const res = await fetch(`${service.config.public_api_url}/signal?domain=${site.domain}`);
    expect(res.status).toBe(400);
    expect(site.requests).toEqual([]);
  });
});
