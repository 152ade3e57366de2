/**
 * Scan history, diffs and batch scans (issue 35 items 2-3) through the public API, the public MCP
 * server and the pages, once per dialect, against local fixture sites: the diff of two scans of a
 * site that changed between them, the history bound, a batch of 20 domains, and the 4xx answers.
 */
import { createHash, randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest, migrateUpTo, migrationNames } from '../../db/migrate.ts';
import { createTestDatabase, dialects } from '../helpers/databases.ts';
import {
  type FixtureSite,
  type HeldSite,
  scannerOnLoopback,
  startFixtureSite,
  startHeldSite,
} from '../helpers/fixture-sites.ts';
import { authorizeInBrowser } from '../helpers/oauth.ts';
import { waitFor } from '../helpers/receivers.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

const KEEP = 3;
const json = { 'content-type': 'application/json' };

describe.each(dialects)('scan history, diffs and batches (%s)', (dialect) => {
  let service: TestService;
  let api: string;
  let changing: FixtureSite;
  let client: Client;
  let key: string;

  beforeAll(async () => {
    changing = await startFixtureSite('bare');
    service = await startTestService(dialect, {
      'rate_limits.unauthenticated_writes.points': 1000,
      'rate_limits.scan_batch_domains.points': 25,
      ...scannerOnLoopback,
      'scanner.workers': 4,
      'scanner.history_per_domain': KEEP,
    });
    api = service.config.public_api_url;
    client = new Client({ name: 'scan-history-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(service.config.mcp_url)));
    key = await accountKey(`history-${dialect}@example.com`);
  });
  afterAll(async () => {
    await client?.close();
    await service?.close();
    await changing?.close();
  });

  async function accountKey(email: string): Promise<string> {
    const res = await fetch(`${api}/account`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ email }),
    });
    expect(res.status).toBe(201);
    return (await res.json()).key.service_key;
  }

  async function scanToEnd(domain: string) {
    const res = await fetch(`${api}/scans`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ domain }),
    });
    expect(res.status).toBe(202);
    const accepted = await res.json();
    let scan = accepted;
    await waitFor(async () => {
      scan = await (await fetch(accepted.status_url)).json();
      return scan.status === 'done' || scan.status === 'failed';
    }, 25_000);
    expect(scan.status).toBe('done');
    return scan;
  }

  let first: { scan_id: string; result: { score: number } };
  let second: { scan_id: string; result: { score: number } };

  it('diffs two scans of a site that changed between them: checks, evidence, score and tier before and after', async () => {
    first = await scanToEnd(changing.domain);
    // The site owner publishes an llms.txt and AI rules in robots.txt before the next scan.
    changing.publish(
      '/llms.txt',
      'text/plain; charset=utf-8',
      `# Corner Shop\n\n> Groceries near you.\n\n## Pages\n\n- [Home](${changing.url}/): the shop\n`,
    );
    changing.publish(
      '/robots.txt',
      'text/plain',
      'User-agent: GPTBot\nAllow: /\n\nUser-agent: *\nAllow: /\nContent-Signal: search=yes, ai-input=yes, ai-train=no\n',
    );
    second = await scanToEnd(changing.domain);

    const res = await fetch(`${api}/scans/${second.scan_id}/diff`);
    expect(res.status).toBe(200);
    const diff = await res.json();
    expect(diff).toMatchObject({
      domain: changing.domain,
      before: { scan_id: first.scan_id, score: first.result.score },
      after: { scan_id: second.scan_id, score: second.result.score },
      score_change: second.result.score - first.result.score,
    });
    expect(diff.score_change).toBeGreaterThan(0);
    const llms = diff.checks.find((c: { id: string }) => c.id === 'llms_txt');
    expect(llms).toMatchObject({ component: 'citation_signals', change: 'improved' });
    expect(llms.before.status).not.toBe('pass');
    expect(llms.after.status).toBe('pass');
    expect(llms.before.seen).not.toBe(llms.after.seen);
    expect(llms.before.evidence.some((e: { status: number }) => e.status === 404)).toBe(true);
    expect(
      llms.after.evidence.some(
        (e: { url: string; status: number }) => e.url.endsWith('/llms.txt') && e.status === 200,
      ),
    ).toBe(true);
    expect(diff.components.map((c: { id: string }) => c.id)).toContain('citation_signals');
    expect(diff.unchanged_checks).toBeGreaterThan(0);
    expect(diff.summary).toMatch(/^\+\d+ points?/);

    // against named explicitly answers the same; the public MCP tool carries the same payload.
    const named = await (await fetch(`${api}/scans/${second.scan_id}/diff?against=${first.scan_id}`)).json();
    expect(named).toEqual(diff);
    const tool = await client.callTool({ name: 'get_scan_diff', arguments: { scan_id: second.scan_id } });
    expect(tool.isError).toBeFalsy();
    expect(tool.structuredContent).toEqual(diff);
  });

  it('the scan report page shows what changed, the leaderboard movement since the last scan', async () => {
    const page = await fetch(`${service.config.site_url}/scan/${encodeURIComponent(changing.domain)}`);
    expect(page.status).toBe(200);
    const body = await page.text();
    expect(body).toContain('What changed since the last scan');
    expect(body).toMatch(/data-check="llms_txt" data-change="improved"/);

    const board = await (await fetch(`${api}/leaderboard`)).json();
    const entry = board.entries.find((e: { domain: string }) => e.domain === changing.domain);
    expect(entry.movement.since_last_scan).toEqual({
      previous_scan_id: first.scan_id,
      previous_score: first.result.score,
      score_change: second.result.score - first.result.score,
      diff_url: `${api}/scans/${second.scan_id}/diff`,
    });
  });

  it('re-scores the previous scan the leaderboard compares with when the scoring version moves', async () => {
    const { db } = service.services;
    // As if an older scoring version had stored the earlier scan (with another score).
    await db
      .updateTable('scans')
      .set({ scoring_version: 1, score: 0 })
      .where('id', '=', first.scan_id)
      .execute();
    await db
      .updateTable('domain_scores')
      .set({ previous_score: 0 })
      .where('domain', '=', changing.domain)
      .execute();
    await waitFor(async () => {
      const row = await db
        .selectFrom('domain_scores')
        .select('previous_score')
        .where('domain', '=', changing.domain)
        .executeTakeFirstOrThrow();
      return row.previous_score === first.result.score;
    }, 10_000);
  });

  it('refuses diffs it cannot answer with a 4xx naming the field or the reason', async () => {
    const noEarlier = await fetch(`${api}/scans/${first.scan_id}/diff`);
    expect(noEarlier.status).toBe(404);
    expect((await noEarlier.json()).code).toBe('no_earlier_scan');

    const self = await fetch(`${api}/scans/${second.scan_id}/diff?against=${second.scan_id}`);
    expect(self.status).toBe(400);
    expect((await self.json()).errors).toEqual([expect.objectContaining({ field: 'against' })]);

    const unknown = await fetch(`${api}/scans/${second.scan_id}/diff?against=${crypto.randomUUID()}`);
    expect(unknown.status).toBe(404);

    const badId = await fetch(`${api}/scans/not-a-uuid/diff`);
    expect(badId.status).toBe(400);
    expect((await badId.json()).errors).toEqual([expect.objectContaining({ field: 'scan_id' })]);

    const other = await startFixtureSite('bare');
    try {
      const elsewhere = await scanToEnd(other.domain);
      const mixed = await fetch(`${api}/scans/${second.scan_id}/diff?against=${elsewhere.scan_id}`);
      expect(mixed.status).toBe(400);
      expect((await mixed.json()).errors).toEqual([expect.objectContaining({ field: 'against' })]);
    } finally {
      await other.close();
    }

    const held: HeldSite = await startHeldSite();
    try {
      const res = await fetch(`${api}/scans`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ domain: held.domain }),
      });
      const pending = await res.json();
      const notDone = await fetch(`${api}/scans/${pending.scan_id}/diff`);
      expect(notDone.status).toBe(409);
      expect((await notDone.json()).code).toBe('scan_not_complete');
    } finally {
      held.release();
      await held.close();
    }
  });

  it('keeps every scan as history, bounded per domain by the worker, listed newest first a page at a time', async () => {
    for (let i = 0; i < 3; i++) await scanToEnd(changing.domain);
    // Five finished scans of the domain; the worker keeps the newest three.
    const finished = () =>
      service.services.db
        .selectFrom('scans')
        .select('id')
        .where('domain', '=', changing.domain)
        .where('status', 'in', ['done', 'failed'])
        .execute();
    await waitFor(async () => (await finished()).length === KEEP, 10_000);
    const shown = await service.services.db
      .selectFrom('domain_scores')
      .select('scan_id')
      .where('domain', '=', changing.domain)
      .executeTakeFirstOrThrow();
    expect((await finished()).map((r) => r.id)).toContain(shown.scan_id);

    const all = await (await fetch(`${api}/scans?domain=${changing.domain}`)).json();
    expect(all.kept_per_domain).toBe(KEEP);
    expect(all.scans).toHaveLength(KEEP);
    expect(all.scans[0]).toMatchObject({ scan_id: shown.scan_id, status: 'done', depth: 'full' });
    expect(all.scans[0].diff_url).toBe(`${api}/scans/${shown.scan_id}/diff`);
    const stamps = all.scans.map((s: { requested_at: string }) => s.requested_at);
    expect([...stamps].sort().reverse()).toEqual(stamps);

    const one = await (await fetch(`${api}/scans?domain=${changing.domain}&limit=1`)).json();
    expect(one.scans).toEqual([all.scans[0]]);
    const next = await (
      await fetch(`${api}/scans?domain=${changing.domain}&limit=1&cursor=${one.next_cursor}`)
    ).json();
    expect(next.scans).toEqual([all.scans[1]]);

    const mcp = await client.callTool({ name: 'list_scans', arguments: { domain: changing.domain } });
    expect(mcp.structuredContent).toEqual(all);

    for (const [query, field] of [
      ['', 'domain'],
      ['domain=10.0.0.1', 'domain'],
      [`domain=${changing.domain}&cursor=nonsense`, 'cursor'],
      [`domain=${changing.domain}&limit=0`, 'limit'],
    ] as const) {
      const bad = await fetch(`${api}/scans?${query}`);
      expect(bad.status, query).toBe(400);
      expect((await bad.json()).errors, query).toEqual([expect.objectContaining({ field })]);
    }
  });

  it('scans a batch of 20 fixture domains: durable before the 202, progress per domain until complete', async () => {
    const sites = await Promise.all(Array.from({ length: 20 }, () => startFixtureSite('bare')));
    try {
      const domains = sites.map((s) => s.domain);
      const res = await fetch(`${api}/scans/batch`, {
        method: 'POST',
        headers: { ...json, 'x-service-key': key },
        body: JSON.stringify({ domains }),
      });
      expect(res.status).toBe(202);
      const accepted = await res.json();
      expect(accepted.items.map((i: { domain: string }) => i.domain)).toEqual(domains);
      expect(accepted.status_url).toBe(`${api}/scans/batch/${accepted.batch_id}`);
      // Stored before the answer: the batch, an item per domain, a scan per item.
      const items = await service.services.db
        .selectFrom('scan_batch_items')
        .innerJoin('scans', 'scans.id', 'scan_batch_items.scan_id')
        .select(['scans.domain'])
        .where('batch_id', '=', accepted.batch_id)
        .execute();
      expect(items.map((i) => i.domain).sort()).toEqual([...domains].sort());

      let batch = accepted;
      await waitFor(async () => {
        batch = await (await fetch(accepted.status_url, { headers: { 'x-service-key': key } })).json();
        return batch.complete;
      }, 60_000);
      expect(batch.counts).toEqual({ queued: 0, running: 0, done: 20, failed: 0, pruned: 0 });
      for (const item of batch.items) {
        expect(item.score).toBeTypeOf('number');
        expect(item.tier).toBe('dark');
        const scan = await (await fetch(item.status_url)).json();
        expect(scan.result.score).toBe(item.score);
      }

      // Another account does not see the batch; without a key nothing is queued.
      const stranger = await accountKey(`stranger-${dialect}@example.com`);
      const hidden = await fetch(accepted.status_url, { headers: { 'x-service-key': stranger } });
      expect(hidden.status).toBe(404);
      expect((await fetch(accepted.status_url)).status).toBe(401);
      const anonymous = await fetch(`${api}/scans/batch`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ domains: [domains[0]] }),
      });
      expect(anonymous.status).toBe(401);

      // The account spent 20 of its 25 domains this window: a batch of 10 more is refused whole.
      const over = await fetch(`${api}/scans/batch`, {
        method: 'POST',
        headers: { ...json, 'x-service-key': key },
        body: JSON.stringify({ domains: domains.slice(0, 10) }),
      });
      expect(over.status).toBe(429);
      expect(over.headers.get('retry-after')).toMatch(/^\d+$/);
    } finally {
      await Promise.all(sites.map((s) => s.close()));
    }
  });

  it('refuses a bad batch with a 400 naming the field, before counting it', async () => {
    const fresh = await accountKey(`batch-bad-${dialect}@example.com`);
    const send = (body: unknown) =>
      fetch(`${api}/scans/batch`, {
        method: 'POST',
        headers: { ...json, 'x-service-key': fresh },
        body: JSON.stringify(body),
      });
    const cases: [unknown, string][] = [
      [{ domains: [] }, 'domains'],
      [{ domains: Array.from({ length: 101 }, (_, i) => `site${i}.example.com`) }, 'domains'],
      [{ domains: ['example.com', '10.0.0.1'] }, 'domains.1'],
      [{ domains: ['example.com', 'metadata.internal'] }, 'domains.1'],
      [{ domains: ['example.com', 'https://EXAMPLE.com/page'] }, 'domains.1'],
      [{ domains: ['example.com'], profile: 'casino' }, 'profile'],
      [{ domains: ['example.com'], extra: 1 }, 'extra'],
    ];
    for (const [body, field] of cases) {
      const res = await send(body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect((await res.json()).errors, field).toEqual(
        expect.arrayContaining([expect.objectContaining({ field })]),
      );
    }
    const count = await service.services.db
      .selectFrom('scan_batches')
      .innerJoin('accounts', 'accounts.id', 'scan_batches.account_id')
      .select('scan_batches.id')
      .where('accounts.email', '=', `batch-bad-${dialect}@example.com`)
      .execute();
    expect(count).toEqual([]);
    const badId = await fetch(`${api}/scans/batch/nope`, { headers: { 'x-service-key': fresh } });
    expect(badId.status).toBe(400);
  });

  /** An access token for the owner MCP server, approved by `owner` through the code flow with PKCE. */
  async function ownerToken(owner: { email: string; password: string }): Promise<string> {
    const metadata = await (
      await fetch(`${service.config.auth_url}/.well-known/openid-configuration`)
    ).json();
    const redirectUri = 'http://127.0.0.1:9/callback';
    const resource = `${service.config.mcp_url}/auth`;
    const registered = await (
      await fetch(metadata.registration_endpoint, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({
          client_name: 'scan history test',
          redirect_uris: [redirectUri],
          token_endpoint_auth_method: 'none',
          grant_types: ['authorization_code'],
        }),
      })
    ).json();
    const verifier = randomBytes(32).toString('base64url');
    const url = new URL(metadata.authorization_endpoint);
    url.search = new URLSearchParams({
      client_id: registered.client_id,
      redirect_uri: redirectUri,
      response_type: 'code',
      scope: 'agent-service',
      state: 'state',
      resource,
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    }).toString();
    const flow = await authorizeInBrowser(url.href, owner);
    const tokens = await (
      await fetch(metadata.token_endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code: flow.redirect.searchParams.get('code') as string,
          redirect_uri: redirectUri,
          client_id: registered.client_id,
          code_verifier: verifier,
          resource,
        }),
      })
    ).json();
    return tokens.access_token;
  }

  it('starts and follows a private batch over the owner MCP server, for the token account only', async () => {
    const owner = { email: `batch-owner-${dialect}@example.com`, password: 'correct horse battery staple' };
    const ownerKey = (await service.services.accounts.create(owner)).key.service_key;
    const token = await ownerToken(owner);
    const ownerMcp = new Client({ name: 'scan-history-owner', version: '1.0.0' });
    await ownerMcp.connect(
      new StreamableHTTPClientTransport(new URL(`${service.config.mcp_url}/auth`), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    const sites = await Promise.all([1, 2, 3].map(() => startFixtureSite('bare')));
    try {
      const started = await ownerMcp.callTool({
        name: 'start_my_scan_batch',
        arguments: { domains: sites.map((s) => s.domain), public: false },
      });
      expect(started.isError).toBeFalsy();
      const batch = started.structuredContent as { batch_id: string; public: boolean; items: unknown[] };
      expect(batch).toMatchObject({ public: false });
      expect(batch.items).toHaveLength(3);
      let progress = batch as unknown as { complete: boolean; items: { scan_id: string; score: number }[] };
      await waitFor(async () => {
        const read = await ownerMcp.callTool({
          name: 'get_my_scan_batch',
          arguments: { batch_id: batch.batch_id },
        });
        progress = read.structuredContent as typeof progress;
        return progress.complete;
      }, 30_000);
      // The same batch over REST with the account's key; its private scans are hidden from others.
      const rest = await (
        await fetch(`${api}/scans/batch/${batch.batch_id}`, { headers: { 'x-service-key': ownerKey } })
      ).json();
      expect(rest).toEqual(progress);
      const scanId = progress.items[0]?.scan_id as string;
      expect((await fetch(`${api}/scans/${scanId}`)).status).toBe(404);
      // The domain's history shows the private scan to its account alone.
      const domain = sites[0]?.domain as string;
      const publicHistory = await (await fetch(`${api}/scans?domain=${domain}`)).json();
      expect(publicHistory.scans).toEqual([]);
      const ownHistory = await (
        await fetch(`${api}/scans?domain=${domain}`, { headers: { 'x-service-key': ownerKey } })
      ).json();
      expect(ownHistory.scans).toEqual([
        expect.objectContaining({ scan_id: scanId, public: false, status: 'done' }),
      ]);
      expect((await fetch(`${api}/scans/${scanId}`, { headers: { 'x-service-key': ownerKey } })).status).toBe(
        200,
      );
      const stranger = await ownerMcp.callTool({
        name: 'get_my_scan_batch',
        arguments: { batch_id: crypto.randomUUID() },
      });
      expect(stranger.isError).toBe(true);
    } finally {
      await ownerMcp.close();
      await Promise.all(sites.map((s) => s.close()));
    }
  });

  it("fills each leaderboard entry's previous scan for the domains scanned before the migration", async () => {
    const earlier = await createTestDatabase(dialect, { migrate: false });
    try {
      const db = earlier.handle.db;
      const names = await migrationNames();
      const mine = names.indexOf('2026-11-30T0400Z_scan_history_batches');
      await migrateUpTo(db, names[mine - 1] as string);
      const ids = Array.from({ length: 4 }, () => crypto.randomUUID());
      const scan = (id: string, domain: string, at: string, score: number, depth = 'full') => ({
        id,
        domain,
        is_public: 1,
        depth,
        status: 'done',
        requested_at: at,
        finished_at: at,
        score,
        tier: 'dark',
      });
      await db
        .insertInto('scans')
        .values([
          scan(ids[0] as string, 'a.example', '2026-11-01T00:00:00.000Z', 10),
          scan(ids[1] as string, 'a.example', '2026-11-02T00:00:00.000Z', 20),
          scan(ids[2] as string, 'a.example', '2026-11-03T00:00:00.000Z', 30),
          scan(ids[3] as string, 'b.example', '2026-11-03T00:00:00.000Z', 5),
        ] as never)
        .execute();
      const shown = (domain: string, scanId: string, score: number) => ({
        domain,
        scan_id: scanId,
        depth: 'full',
        score,
        tier: 'dark',
        scanned_at: '2026-11-03T00:00:00.000Z',
        has_llms_txt: 0,
        has_robots_ai_rules: 0,
        has_api_catalog: 0,
        has_mcp: 0,
        has_markdown: 0,
      });
      await db
        .insertInto('domain_scores')
        .values([shown('a.example', ids[2] as string, 30), shown('b.example', ids[3] as string, 5)] as never)
        .execute();
      await migrateToLatest(db);
      const rows = await db
        .selectFrom('domain_scores')
        .select(['domain', 'previous_scan_id', 'previous_score'])
        .orderBy('domain')
        .execute();
      expect(rows).toEqual([
        { domain: 'a.example', previous_scan_id: ids[1], previous_score: 20 },
        { domain: 'b.example', previous_scan_id: null, previous_score: null },
      ]);
    } finally {
      await earlier.drop();
    }
  });
});
