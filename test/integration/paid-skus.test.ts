/**
 * The three SKUs built in issue 9 - signal, scan, llms-txt - once per dialect, against loopback
 * fixture sites. Payments are wired by the payment core (`invokeOperation`); here each handler is
 * called as the core calls it once a payment is verified - `op.handler(ctx, input)` with the input
 * `parseInput` produced and a real service context - so every test runs the real crawler, scorer,
 * queue and database. What a payer gets, and what they must not get, is checked from outside:
 * GET {public_api_url}/scans/{id} (read tokens), the published files re-crawled by our own scanner.
 */
import { createHash, randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApiDocument } from '../../servers/adapters/openapi.ts';
import { loadConfig } from '../../servers/config.ts';
import { ServiceError } from '../../servers/errors.ts';
import { llmsTxt } from '../../servers/features/catalog/llms-txt/operations.ts';
import { scan } from '../../servers/features/catalog/scan/operations.ts';
import { signal } from '../../servers/features/catalog/signal/operations.ts';
import { parseAiTxt } from '../../servers/features/scans/collectors/ai-txt.ts';
import { parseLlmsTxt } from '../../servers/features/scans/collectors/llms-txt.ts';
import { nextTools } from '../../servers/features/scans/scoring.ts';
import {
  type AnyOperation,
  invokeOperation,
  type OperationContext,
  parseInput,
} from '../../servers/operation.ts';
import { operations } from '../../servers/registry.ts';
import { dialects } from '../helpers/databases.ts';
import { type FixtureSite, scannerOnLoopback, startFixtureSite } from '../helpers/fixture-sites.ts';
import { freePort } from '../helpers/ports.ts';
import { waitFor } from '../helpers/receivers.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

/** What the adapters build for a request, as the payment core hands it to a paid handler. */
function contextOf(service: TestService, extra: Partial<OperationContext> = {}): OperationContext {
  return {
    services: service.services,
    operations,
    request: { id: randomUUID(), ip: '127.0.0.1', via: 'rest', headers: {} },
    log: pino({ level: 'silent' }),
    signal: new AbortController().signal,
    ...extra,
  };
}

// biome-ignore lint/suspicious/noExplicitAny: outputs are inspected structurally
type Json = any;

/** The public-address rule with local names refused, as in production. */
const publicOnly = { allowLocal: false };

/** Runs a paid operation as the payment core will once the payment is verified: parse, handle, check. */
async function run(
  op: AnyOperation,
  service: TestService,
  raw: unknown,
  extra?: Partial<OperationContext>,
): Promise<Json> {
  const output = await op.handler(
    contextOf(service, extra),
    parseInput(op, raw, service.services.domainPolicy),
  );
  const checked = op.output.safeParse(output);
  expect(checked.success, checked.error?.message).toBe(true);
  return checked.data;
}

async function failure(promise: Promise<unknown>): Promise<ServiceError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ServiceError);
  return err as ServiceError;
}

/** A loopback address where nothing listens: a site that cannot be reached. */
async function closedPort(): Promise<string> {
  return `127.0.0.1:${await freePort()}`;
}

describe('paid SKU inputs (parseInput, as every adapter validates them before any payment)', () => {
  it('reads public from JSON booleans and from the query texts true and false only', () => {
    expect(parseInput(scan, { domain: 'example.com' }, publicOnly)).toEqual({
      domain: 'example.com',
      public: true,
    });
    expect(parseInput(scan, { domain: 'example.com', public: 'false' }, publicOnly).public).toBe(false);
    expect(parseInput(scan, { domain: 'example.com', public: 'true' }, publicOnly).public).toBe(true);
    expect(parseInput(scan, { domain: 'example.com', public: false }, publicOnly).public).toBe(false);
    // A lenient coercion would read any non-empty text, "false" and "no" included, as true.
    for (const bad of ['no', '0', '1', 'FALSE', '', 1, null]) {
      const err = (() => {
        try {
          parseInput(scan, { domain: 'example.com', public: bad }, publicOnly);
        } catch (e) {
          return e as ServiceError;
        }
      })();
      expect(err?.code, String(bad)).toBe('validation_failed');
      expect(err?.errors?.map((e) => e.field)).toEqual(['public']);
    }
  });

  it('requires domain, refuses unknown fields and NUL, for each of the three', () => {
    for (const op of [signal, scan, llmsTxt]) {
      const refusal = (raw: unknown) => {
        try {
          parseInput(op, raw, publicOnly);
        } catch (e) {
          return e as ServiceError;
        }
        throw new Error(`${op.name} accepted ${JSON.stringify(raw)}`);
      };
      expect(refusal({}).errors, op.name).toEqual([{ field: 'domain', message: 'is required' }]);
      expect(refusal({ domain: 'example.com', price: 0 }).errors?.[0]?.field, op.name).toBe('price');
      expect(refusal({ domain: 'exa\u0000mple.com' }).errors?.[0]?.field, op.name).toBe('domain');
      expect(refusal({ domain: 'x'.repeat(301) }).errors?.[0]?.field, op.name).toBe('domain');
    }
  });

  it('declares the exact SPEC prices, paths and inputs, and is available', () => {
    const spec = [
      { op: signal, id: 'signal', usdc: 0.1, inputs: ['domain'] },
      { op: scan, id: 'scan', usdc: 0.1, inputs: ['domain', 'public'] },
      { op: llmsTxt, id: 'llms-txt', usdc: 1, inputs: ['domain'] },
    ];
    for (const { op, id, usdc, inputs } of spec) {
      expect(operations).toContain(op);
      expect(op.access).toBe('paid');
      expect(op.sku).toMatchObject({ id, usdc });
      expect(op.sku?.amount).toBeUndefined();
      expect(op.sku?.unavailable?.(undefined as never)).toBeNull();
      expect(op.http).toMatchObject({
        surface: 'site',
        method: 'POST',
        path: `/api/public/x402/${id}`,
        input: 'body',
      });
      expect(op.mcp).toEqual(['public']);
      expect(Object.keys((op.input as unknown as { shape: object }).shape)).toEqual(inputs);
    }
    // The scan's 202 is documented with the same body as its 200; the others answer 200 only.
    const doc = openApiDocument('site', operations, loadConfig({ env: {} }));
    // biome-ignore lint/suspicious/noExplicitAny: the document is walked structurally
    const post = (id: string): any => (doc.paths as any)[`/api/public/x402/${id}`].post;
    expect(post('scan').responses['202'].content).toEqual(post('scan').responses['200'].content);
    expect(post('scan').responses['202'].description).toMatch(/status_url/);
    expect(post('signal').responses['202']).toBeUndefined();
    expect(post('llms-txt').responses['422'].description).toContain('site_unreachable');
    // Findings recommend the llms-txt SKU by this tool name (docs/reference/scoring.md "Recommended next tools").
    expect(llmsTxt.toolName).toBe(nextTools.llmsTxt);
  });
});

describe.each(dialects)('paid SKUs against fixture sites (%s)', (dialect) => {
  let service: TestService;
  let well: FixtureSite;
  let bare: FixtureSite;
  let unreachable: string;

  beforeAll(async () => {
    [well, bare] = await Promise.all([startFixtureSite('wellPrepared'), startFixtureSite('bare')]);
    unreachable = await closedPort();
    service = await startTestService(dialect, scannerOnLoopback);
  });
  afterAll(async () => {
    await service?.close();
    await Promise.all([well, bare].map((s) => s?.close()));
  });

  describe('signal', () => {
    it('checks the site now, even when a score is stored, and returns score, tier, components and the top fixes', async () => {
      const first = await run(signal, service, { domain: well.domain });
      const robotsReads = well.requests.filter((r) => r.path === '/robots.txt').length;
      const second = await run(signal, service, { domain: `http://${well.domain}/somewhere` });
      // A fresh crawl each time, not the stored score: the site was read again, a new scan stored.
      expect(well.requests.filter((r) => r.path === '/robots.txt').length).toBeGreaterThan(robotsReads);
      expect(second.scan_id).not.toBe(first.scan_id);
      expect(second).toMatchObject({ domain: well.domain, depth: 'quick', tier: { id: 'beacon' } });
      expect(second.score).toBeGreaterThanOrEqual(85);
      expect(second.components.map((c: { id: string }) => c.id)).toEqual([
        'technical_foundation',
        'live_ai_traffic',
        'content_depth',
        'citation_signals',
        'engagement_velocity',
      ]);
      expect(second.components[1]).toMatchObject({ status: 'no_data', score: null });
      expect(second.components[0]).not.toHaveProperty('checks');
      expect(second.pages_read).toBeGreaterThan(0);
      expect(second.pages_read).toBeLessThanOrEqual(service.config.scanner.quick_max_pages);
      expect(second.scan_url).toBe(`${service.config.public_api_url}/scans/${second.scan_id}`);

      // The stored scan is public and holds every check and finding behind the summary.
      const stored = await (await fetch(second.scan_url)).json();
      expect(stored).toMatchObject({ status: 'done', depth: 'quick', public: true });
      expect(stored.result.score).toBe(second.score);
    });

    it('recommends first the fixes worth the most points, each with what was seen and how to fix it', async () => {
      const check = await run(signal, service, { domain: bare.domain });
      expect(check.tier.id).toBe('dark');
      expect(check.recommendations.length).toBe(5);
      const points = check.recommendations.map((r: { points: number | null }) => r.points ?? -1);
      expect(points).toEqual([...points].sort((a, b) => b - a));
      for (const r of check.recommendations) {
        expect(r.fix.length).toBeGreaterThan(10);
        expect(r.seen.length).toBeGreaterThan(0);
      }
      // Every finding the scan holds is worth no more than the least of those recommended.
      const stored = await (await fetch(check.scan_url)).json();
      const ids = new Set(check.recommendations.map((r: { id: string }) => r.id));
      expect(stored.result.findings.length).toBeGreaterThan(5);
      const ranked = check.recommendations.at(-1).points;
      for (const finding of stored.result.findings.filter((f: { id: string }) => !ids.has(f.id))) {
        const component = stored.result.components.find((c: { id: string }) => c.id === finding.component);
        const checkOf = component.checks.find((c: { id: string }) => c.id === finding.id);
        if (!checkOf || component.status !== 'scored') continue;
        const weights = stored.result.components
          .filter((c: { status: string }) => c.status === 'scored')
          .reduce((n: number, c: { weight: number }) => n + c.weight, 0);
        const checkWeights = component.checks
          .filter((c: { score: number | null }) => c.score !== null)
          .reduce((n: number, c: { weight: number }) => n + c.weight, 0);
        const worth =
          (component.weight / weights) * (checkOf.weight / checkWeights) * (1 - checkOf.score) * 100;
        expect(worth, finding.id).toBeLessThanOrEqual(ranked + 0.05);
      }
      expect(check.recommended_next_tools).toContain('generate_llms_txt');
    });

    it('never replaces the score of a full scan with a quick one', async () => {
      const full = await run(scan, service, { domain: well.domain });
      expect(full.status).toBe('done');
      await run(signal, service, { domain: well.domain });
      const score = await (
        await fetch(`${service.config.public_api_url}/scan-score?domain=${well.domain}`)
      ).json();
      expect(score).toMatchObject({ scan_id: full.scan_id, depth: 'full' });
    });

    it('answers site_unreachable for a site that cannot be reached, so nothing is sold for it', async () => {
      const err = await failure(run(signal, service, { domain: unreachable }));
      expect(err.code).toBe('site_unreachable');
      expect(err.status).toBe(422);
      expect(err.message).toContain(unreachable);
    });
  });

  describe('scan', () => {
    it('answers the full breakdown when the scan finishes within the wait (HTTP 200)', async () => {
      const progress: number[] = [];
      const result = await run(
        scan,
        service,
        { domain: bare.domain },
        { reportProgress: async (done) => void progress.push(done) },
      );
      expect(result).toMatchObject({ domain: bare.domain, public: true, depth: 'full', status: 'done' });
      expect(scan.http?.status?.(result)).toBe(200);
      expect(result.read_token).toBeNull();
      expect(result.result.components).toHaveLength(5);
      expect(result.result.tier.id).toBe('dark');
      expect(result.result.findings.every((f: { fix: string }) => f.fix.length > 0)).toBe(true);
      expect(result.result.recommended_next_tools).toEqual(
        expect.arrayContaining(['generate_llms_txt', 'request_scan']),
      );
      expect(progress.length).toBeGreaterThan(0);
    });

    it('keeps a private scan to whoever holds its read token, and to no one else', async () => {
      const bought = await run(scan, service, { domain: well.domain, public: 'false' });
      expect(bought).toMatchObject({ public: false, status: 'done' });
      expect(bought.read_token).toMatch(/^agsvc_scan_[A-Za-z0-9_-]{43}$/);
      const api = service.config.public_api_url;
      expect(bought.status_url).toBe(`${api}/scans/${bought.scan_id}?token=${bought.read_token}`);

      const read = await fetch(bought.status_url);
      expect(read.status).toBe(200);
      expect((await read.json()).result.score).toBe(bought.result.score);

      // Without the token, with a wrong one, or with another private scan's token: no such scan.
      const other = await run(scan, service, { domain: bare.domain, public: false });
      const wrong = `agsvc_scan_${'A'.repeat(43)}`;
      for (const token of [
        undefined,
        wrong,
        other.read_token,
        bought.read_token.slice(0, -1),
        `${bought.read_token}x`,
      ]) {
        const url = `${api}/scans/${bought.scan_id}${token === undefined ? '' : `?token=${encodeURIComponent(token)}`}`;
        const res = await fetch(url);
        expect(res.status, String(token)).toBe(404);
        expect((await res.json()).code).toBe('not_found');
      }
      // A token reads its own scan only; on a public scan it changes nothing.
      expect((await fetch(`${api}/scans/${other.scan_id}?token=${bought.read_token}`)).status).toBe(404);

      // Only the digest is stored.
      const row = await service.services.db
        .selectFrom('scans')
        .select(['read_token_hash', 'account_id', 'anonymous_session_id'])
        .where('id', '=', bought.scan_id)
        .executeTakeFirstOrThrow();
      expect(row.read_token_hash).toBe(createHash('sha256').update(bought.read_token).digest('hex'));
      expect(row).toMatchObject({ account_id: null, anonymous_session_id: null });

      // Private results stay off the public reads.
      const score = await (await fetch(`${api}/scan-score?domain=${well.domain}`)).json();
      expect(score.scan_id).not.toBe(bought.scan_id);

      // The MCP tool get_scan takes the token too.
      const client = new Client({ name: 'paid-scan-test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(service.config.mcp_url)));
      try {
        const viaMcp = (await client.callTool({
          name: 'get_scan',
          arguments: { scan_id: bought.scan_id, token: bought.read_token },
        })) as { isError?: boolean; structuredContent?: { result: { score: number } } };
        expect(viaMcp.isError).toBeFalsy();
        expect(viaMcp.structuredContent?.result.score).toBe(bought.result.score);
        const refused = (await client.callTool({
          name: 'get_scan',
          arguments: { scan_id: bought.scan_id },
        })) as { isError?: boolean };
        expect(refused.isError).toBe(true);
      } finally {
        await client.close();
      }
    });

    it('lets an account that pays read its private scan with its key as well as with the token', async () => {
      const owner = await service.services.accounts.create({
        email: `payer-${randomUUID()}@example.com`,
        password: 'correct horse battery staple',
      });
      const principal = await service.services.accounts.authenticate(owner.key.service_key);
      const bought = await run(
        scan,
        service,
        { domain: bare.domain, public: false },
        { account: principal ?? undefined },
      );
      const api = service.config.public_api_url;
      const byKey = await fetch(`${api}/scans/${bought.scan_id}`, {
        headers: { 'x-service-key': owner.key.service_key },
      });
      expect(byKey.status).toBe(200);
      expect((await fetch(bought.status_url)).status).toBe(200);
    });

    it('answers site_unreachable when the scan fails within the wait', async () => {
      const err = await failure(run(scan, service, { domain: unreachable }));
      expect(err.code).toBe('site_unreachable');
    });
  });

  describe('llms-txt', () => {
    it('generates files our own scanner accepts: every llms.txt and ai.txt check passes once they are published', async () => {
      for (const site of [well, bare]) {
        const generated = await run(llmsTxt, service, { domain: site.domain });
        const { llms_txt, llms_full_txt, ai_txt } = generated.files;

        const llms = parseLlmsTxt(llms_txt.content, site.url);
        expect(llms, llms_txt.content).toMatchObject({ valid: true, problems: [] });
        expect(llms.title).toBe(generated.site_name);
        expect(llms.summary).toBe(generated.summary);
        expect(llms.link_count).toBeGreaterThan(0);
        const ai = parseAiTxt(ai_txt.content);
        expect(ai.unknown_lines).toBe(0);
        expect(ai.groups).toEqual([expect.objectContaining({ user_agents: ['*'] })]);
        expect(llms_full_txt.content).toContain(`Source: ${site.url}/`);

        for (const f of [llms_txt, llms_full_txt, ai_txt]) {
          expect(f.url).toBe(`${site.url}${f.path}`);
          expect(f.bytes).toBe(Buffer.byteLength(f.content));
          site.publish(f.path, f.media_type, f.content);
        }
        // The site as its owner publishes the files, read by a real scan with our collectors.
        const check = await run(signal, service, { domain: site.domain });
        const stored = await (await fetch(check.scan_url)).json();
        const checks = new Map<string, number | null>(
          stored.result.components.flatMap((c: { checks: { id: string; score: number | null }[] }) =>
            c.checks.map((k) => [k.id, k.score]),
          ),
        );
        expect(
          {
            llms_txt: checks.get('llms_txt'),
            llms_full_txt: checks.get('llms_full_txt'),
            ai_txt: checks.get('ai_txt'),
          },
          site.domain,
        ).toEqual({ llms_txt: 1, llms_full_txt: 1, ai_txt: 1 });
        expect(stored.result.site.llms_txt).toMatchObject({
          present: true,
          valid: true,
          title: generated.site_name,
        });
      }
    });

    it('builds llms.txt from the pages: names, descriptions, sections, robots.txt and off-site links respected', async () => {
      const site = await startFixtureSite('wellPrepared');
      try {
        const generated = await run(llmsTxt, service, { domain: site.domain });
        expect(generated.site_name).toBe('Example Widgets');
        expect(generated.summary).toBe('Example Widgets - what Example Widgets offers to people and agents.');
        const bySection = Object.fromEntries(
          ['Docs', 'Products', 'About', 'Pages'].map((s) => [
            s,
            generated.links
              .filter((l: { section: string }) => l.section === s)
              .map((l: { url: string }) => l.url),
          ]),
        );
        expect(bySection).toEqual({
          Docs: expect.arrayContaining([`${site.url}/faq`, `${site.url}/docs`]),
          Products: [`${site.url}/products/widget`],
          About: [`${site.url}/about`],
          Pages: [`${site.url}/`],
        });
        const about = generated.links.find((l: { url: string }) => l.url === `${site.url}/about`);
        expect(about).toMatchObject({
          name: 'About Example Widgets',
          notes: 'About Example Widgets - what Example Widgets offers to people and agents.',
          in_full_text: true,
        });
        // robots.txt keeps /private/ from our crawler: never read, never listed.
        expect(site.requests.some((r) => r.path.startsWith('/private/'))).toBe(false);
        expect(generated.files.llms_txt.content).not.toContain('/private/');
        expect(generated.files.llms_txt.content).not.toContain('elsewhere.example');
        expect(generated.crawl.skipped_by_robots).toBeGreaterThan(0);
        // The page text, without scripts, styles or navigation, under each page's title.
        const full = generated.files.llms_full_txt.content as string;
        expect(full).toContain(`# The Widget\n\nSource: ${site.url}/products/widget\n\n## Overview`);
        expect(full).not.toContain('window.x');
        expect(full).not.toContain('font-family');
        // The site already serves all three; its robots.txt says ai-train=no, so ai.txt disallows training.
        expect(generated.site_already_serves).toEqual({ llms_txt: true, llms_full_txt: true, ai_txt: true });
        expect(generated.training_policy).toEqual({
          training: 'disallowed',
          reason: 'robots.txt says Content-Signal: ai-train=no',
        });
        expect(parseAiTxt(generated.files.ai_txt.content).disallows_all).toBe(true);
        expect(generated.files.ai_txt.content).toMatch(/Spawning/);
      } finally {
        await site.close();
      }
    });

    it('answers site_unreachable for a site that cannot be reached or has no page to read', async () => {
      const err = await failure(run(llmsTxt, service, { domain: unreachable }));
      expect(err.code).toBe('site_unreachable');
      const empty = await startFixtureSite('catchAllJson');
      try {
        const none = await failure(run(llmsTxt, service, { domain: empty.domain }));
        expect(none.code).toBe('site_unreachable');
        expect(none.message).toMatch(/No HTML page/);
      } finally {
        await empty.close();
      }
    });
  });

  it('refuses a bad input with validation_failed naming the field before any payment (invokeOperation)', async () => {
    const cases: [AnyOperation, unknown, string][] = [
      [signal, {}, 'domain'],
      [scan, { domain: well.domain, public: 'maybe' }, 'public'],
      [llmsTxt, { domain: 'exa\u0000mple.com' }, 'domain'],
    ];
    for (const [op, raw, field] of cases) {
      const err = await failure(invokeOperation(op, contextOf(service), raw));
      expect(err.code, op.name).toBe('validation_failed');
      expect(err.errors?.[0]?.field, op.name).toBe(field);
    }
  });
});

describe.each(dialects)('paid routes before any payment (%s)', (dialect) => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService(dialect, scannerOnLoopback, { background: false });
  });
  afterAll(() => service?.close());

  it('answers a bad input at the x402 path with 400 naming the field: nobody is asked to pay for it', async () => {
    const cases: [string, Record<string, unknown>, string][] = [
      ['signal', {}, 'domain'],
      ['scan', { domain: 'example.com', public: 'maybe' }, 'public'],
      ['llms-txt', { domain: 'example.com', pages: 3 }, 'pages'],
    ];
    for (const [id, body, field] of cases) {
      const res = await fetch(`${service.config.site_url}/api/public/x402/${id}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(res.status, id).toBe(400);
      const problem = await res.json();
      expect(problem.code, id).toBe('validation_failed');
      expect(
        problem.errors.map((e: { field: string }) => e.field),
        id,
      ).toEqual([field]);
    }
  });
});

describe.each(dialects)('paid scan longer than the wait (%s)', (dialect) => {
  let service: TestService;
  let site: FixtureSite;

  beforeAll(async () => {
    site = await startFixtureSite('wellPrepared');
    // No background worker: the scan stays queued past the wait, whatever the machine's speed.
    service = await startTestService(
      dialect,
      { ...scannerOnLoopback, 'payments.sync_wait_seconds': 0 },
      { background: false },
    );
  });
  afterAll(async () => {
    await service?.close();
    await site?.close();
  });

  it('answers 202 with the queued scan and its status_url, which later holds the result', async () => {
    const accepted = await run(scan, service, { domain: site.domain, public: false });
    expect(accepted).toMatchObject({ status: 'queued', result: null, public: false });
    expect(scan.http?.status?.(accepted)).toBe(202);
    expect(accepted.read_token).toMatch(/^agsvc_scan_/);

    // Durably queued: a worker (any process) picks it up and the payer reads it with the token.
    service.services.scans.worker.start();
    let done: { status: string; result: { score: number } | null } = { status: 'queued', result: null };
    await waitFor(async () => {
      done = await (await fetch(accepted.status_url)).json();
      return done.status === 'done';
    }, 25_000);
    expect(done.result?.score).toBeGreaterThanOrEqual(85);
  });
});
