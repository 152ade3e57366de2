/**
 * Discovery documents on {site_url} (issue 14 section 1): each is pinned against the registry it
 * is projected from - the registry plus a test SKU, so an operation added later appears in every
 * document without an edit - and, once per dialect, our own scanner scans our own deployment (its
 * own pixel on its pages) over loopback and must score it 90 or more, in the top tier.
 */
import { createHash } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { apis, operationUrl } from '../../servers/adapters/api-catalog.ts';
import { PAID_GET_SUFFIX } from '../../servers/adapters/openapi.ts';
import { parseLlmsTxt } from '../../servers/features/scans/collectors/llms-txt.ts';
import { aiAgents, parseRobots, robotsParser } from '../../servers/features/scans/collectors/robots.ts';
import { tiers } from '../../servers/features/scans/scoring.ts';
import { createTestDatabase, dialects } from '../helpers/databases.ts';
import { scannerOnLoopback } from '../helpers/fixture-sites.ts';
import { TEST_SKU, withTestSku } from '../helpers/paid-operations.ts';
import { waitFor } from '../helpers/receivers.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

// biome-ignore lint/suspicious/noExplicitAny: documents are walked structurally
type Json = Record<string, any>;

const operations = withTestSku();

describe('discovery documents, pinned against the registry', () => {
  let service: TestService;
  let site: string;
  const get = (path: string, headers: Record<string, string> = {}) => fetch(`${site}${path}`, { headers });

  beforeAll(async () => {
    service = await startTestService(
      'sqlite',
      { 'payments.pay_to': '0x209693Bc6afc0C5328bA36FaF03C514EF312287C' },
      { operations },
    );
    site = service.config.site_url;
  });
  afterAll(() => service?.close());

  it('llms.txt follows llmstxt.org and names every operation with its URL, and every SKU with its price', async () => {
    const res = await get('/llms.txt');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/markdown/);
    const text = await res.text();
    const parsed = parseLlmsTxt(text, site);
    expect(parsed.problems).toEqual([]);
    expect(parsed.valid).toBe(true);
    expect(parsed.summary).toBeTruthy();
    const links = parsed.sections.flatMap((s) => s.links);
    for (const op of operations) {
      const url = operationUrl(op, service.config) ?? `${service.config.mcp_url}/auth`;
      const link = links.find((l) => l.name === op.title && decodeURI(l.url) === url);
      expect(link, op.name).toBeDefined();
      if (op.sku) expect(link?.notes, op.name).toContain(`$${op.sku.usdc.toFixed(2)} USDC`);
      if (op.mcp?.length) expect(link?.notes, op.name).toContain(`\`${op.toolName}\``);
    }
    expect(links.some((l) => l.url.includes(TEST_SKU))).toBe(true);
    expect(text).toContain(`"url":"${service.config.mcp_url}"`);
    // How brands receive agent requests: the page, and one line per route a brand can publish.
    const brands = parsed.sections.find((s) => s.name === 'Brands: receiving agent requests');
    expect(brands?.links.map((l) => l.url)).toEqual([
      `${site}/agent-requests`,
      `${site}/agent-requests#brand-agent`,
      `${site}/agent-requests#a2a`,
      `${site}/agent-requests#email`,
    ]);
    const page = await get('/agent-requests', { accept: 'text/markdown' });
    expect(page.status).toBe(200);
    const markdown = await page.text();
    for (const event of [
      '"type": "return_request.created"',
      '"contextId"',
      '"contactType": "customer service"',
    ])
      expect(markdown).toContain(event);
  });

  it('llms-full.txt carries every operation’s whole description and arguments', async () => {
    const text = await (await get('/llms-full.txt')).text();
    for (const op of operations) {
      expect(text, op.name).toContain(op.description);
      expect(text, op.name).toContain(`### ${op.title}`);
    }
  });

  it('the api-catalog is an RFC 9727 linkset: one entry per API with service-desc, service-doc and status that resolve', async () => {
    for (const method of ['GET', 'HEAD']) {
      const res = await fetch(`${site}/.well-known/api-catalog`, { method });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/linkset\+json/);
      expect(res.headers.get('link')).toBe(`<${site}/.well-known/api-catalog>; rel="api-catalog"`);
    }
    const home = await get('/');
    expect(home.headers.get('link')).toContain('rel="api-catalog"');
    const { linkset } = (await (await get('/.well-known/api-catalog')).json()) as { linkset: Json[] };
    const expected = apis(operations, service.config);
    expect(expected.map((a) => a.id)).toEqual(
      expect.arrayContaining([
        'customer-service-agent',
        'public-api',
        'paid-skus',
        'mcp-public',
        'mcp-owner',
      ]),
    );
    const entries = linkset.slice(1);
    expect(linkset[0]?.item.map((i: Json) => i.href)).toEqual(expected.map((a) => a.url));
    expect(entries.map((e) => e.anchor)).toEqual(expected.map((a) => a.url));
    for (const entry of entries) {
      for (const rel of ['service-desc', 'service-doc', 'status']) {
        expect(entry[rel]?.length, `${entry.anchor} ${rel}`).toBeGreaterThan(0);
        for (const target of entry[rel]) {
          const res = await fetch(target.href.replace(/#.*$/, ''));
          expect(res.status, target.href).toBe(200);
        }
      }
    }
  });

  it('one OpenAPI 3.1.0 document for the whole site, valid, with every REST operation, the same in YAML', async () => {
    const doc = (await (await get('/openapi.json')).json()) as Json;
    const result = await new Validator().validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(doc.openapi).toBe('3.1.0');
    const ids = Object.values(doc.paths as Json).flatMap((item) =>
      Object.values(item as Json).map((e) => (e as Json).operationId),
    );
    const expected = operations
      .filter((op) => op.http)
      .flatMap((op) => (op.sku ? [op.name, `${op.name}${PAID_GET_SUFFIX}`] : [op.name]));
    expect(ids.sort()).toEqual(expected.sort());
    expect(doc.paths['/cs/agent']?.get.operationId).toBe('lookupCardCharge');
    // The requester's side of a return request, generated from its schemas.
    expect(doc.paths['/cs/return/cancel']?.post.operationId).toBe('cancelReturnRequest');
    expect(doc.paths['/cs/return/message']?.post.operationId).toBe('sendReturnMessage');
    const started = JSON.stringify(doc.paths['/cs/return'].post.responses['200']);
    const status = JSON.stringify(doc.paths['/cs/status'].get.responses['200']);
    for (const field of ['request_token', 'callback_secret']) expect(started).toContain(field);
    for (const field of ['thread', 'kit', 'card_dispute']) expect(status).toContain(field);
    expect(parseYaml(await (await get('/openapi.yaml')).text())).toEqual(doc);
  });

  it('serves an SEP-2127 server card per MCP server, listed in the MCP catalog, that a client connects with', async () => {
    const catalog = (await (await get('/.well-known/mcp/catalog.json')).json()) as Json;
    expect(catalog.entries.map((e: Json) => e.url)).toEqual([
      `${service.config.mcp_url}/server-card`,
      `${service.config.mcp_url}/auth/server-card`,
    ]);
    for (const entry of catalog.entries) {
      const res = await fetch(entry.url);
      expect(res.headers.get('content-type')).toMatch(/^application\/mcp-server-card\+json/);
      const card = (await res.json()) as Json;
      expect(card.$schema).toBe('https://static.modelcontextprotocol.io/schemas/v2/server-card.schema.json');
      expect(card.name).toMatch(/^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/);
      expect(card.description.length).toBeLessThanOrEqual(100);
    }
    const card = (await (await get('/.well-known/mcp/server-card.json')).json()) as Json;
    const client = new Client({ name: 'card-reader', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(card.remotes[0].url)));
    const { tools } = await client.listTools();
    await client.close();
    expect(tools.length).toBe(card._meta['org.agent-service/tools']);
    expect(tools.length).toBe(operations.filter((op) => op.mcp?.includes('public')).length);
    const owner = (await (await fetch(`${service.config.mcp_url}/auth/server-card`)).json()) as Json;
    expect(owner._meta['org.agent-service/tools']).toBe(
      operations.filter((op) => op.mcp?.includes('owner')).length,
    );
  });

  it('robots.txt names AI agents, lets AI search and user agents read /, and carries a Content-Signal line', async () => {
    const text = await (await get('/robots.txt')).text();
    const robots = parseRobots(`${site}/robots.txt`, text);
    for (const agent of aiAgents) expect(text).toContain(`User-agent: ${agent.token}`);
    expect(text).toMatch(/^Content-Signal: search=yes, ai-input=yes, ai-train=yes$/m);
    expect(robots.present).toBe(true);
    expect(robots.content_signals.length).toBeGreaterThan(0);
    const rules = robotsParser(`${site}/robots.txt`, text);
    for (const agent of aiAgents) {
      expect(rules.isAllowed(`${site}/`, agent.token), agent.token).toBe(true);
      expect(rules.isAllowed(`${site}/llms.txt`, agent.token), agent.token).toBe(true);
      expect(rules.isAllowed(`${service.config.mcp_url}/server-card`, agent.token), agent.token).toBe(true);
      expect(rules.isAllowed(service.config.mcp_url, agent.token), agent.token).toBe(false);
      expect(rules.isAllowed(`${site}/api/public/x402/signal`, agent.token), agent.token).toBe(false);
    }
    const sitemap = await (await get('/sitemap.xml')).text();
    expect(sitemap).toContain(`<loc>${site}/</loc>`);
    expect(await (await get('/ai.txt')).text()).toMatch(/^User-Agent: \*$/m);
  });

  it('publishes Agent Skills (discovery v0.2.0): each SKILL.md matches its digest and frontmatter, and names only tools and URLs that exist', async () => {
    for (const method of ['GET', 'HEAD']) {
      const res = await fetch(`${site}/.well-known/agent-skills/index.json`, { method });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
    }
    const index = (await (await get('/.well-known/agent-skills/index.json')).json()) as Json;
    expect(index.$schema).toBe('https://schemas.agentskills.io/discovery/0.2.0/schema.json');
    expect(index.skills.map((s: Json) => s.name)).toEqual([
      'card-charges',
      'site-readiness',
      'x402-purchases',
    ]);
    const publicTools = new Set(
      operations.filter((op) => op.mcp?.includes('public')).map((op) => op.toolName),
    );
    const skus = operations.filter((op) => op.sku);
    for (const entry of index.skills as Json[]) {
      expect(entry.name).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
      expect(entry.type).toBe('skill-md');
      expect(entry.description.length).toBeLessThanOrEqual(1024);
      const res = await fetch(new URL(entry.url, `${site}/.well-known/agent-skills/index.json`));
      expect(res.status, entry.url).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/markdown/);
      const bytes = Buffer.from(await res.arrayBuffer());
      expect(entry.digest).toBe(`sha256:${createHash('sha256').update(bytes).digest('hex')}`);
      const text = bytes.toString('utf8');
      const front = /^---\n([\s\S]*?)\n---\n/.exec(text);
      expect(front, entry.name).not.toBeNull();
      expect(parseYaml(front?.[1] as string)).toEqual({ name: entry.name, description: entry.description });
      // Every tool it tells an agent to call is one the public MCP server lists.
      const tools = [...text.matchAll(/MCP tool `([a-z_]+)`/g)].map((m) => m[1] as string);
      expect(tools.length, entry.name).toBeGreaterThan(0);
      for (const tool of tools) expect(publicTools.has(tool), `${entry.name}: ${tool}`).toBe(true);
      // And every address of this deployment it names is one the service routes.
      for (const [, url] of text.matchAll(/`(?:GET|POST) (http[^`\s]+)`/g)) {
        const route = operations.find((op) => operationUrl(op, service.config) === url);
        expect(route, `${entry.name}: ${url}`).toBeDefined();
      }
    }
    const purchases = await (await get('/.well-known/agent-skills/x402-purchases/SKILL.md')).text();
    for (const op of skus) expect(purchases, op.name).toContain(`$${op.sku?.usdc.toFixed(2)} USDC`);
    expect((await get('/.well-known/agent-skills/no-such-skill/SKILL.md')).status).toBe(404);
  });

  it('x402.json lists exactly the paid operations; protected resource metadata names the issuer', async () => {
    const x402 = (await (await get('/.well-known/x402.json')).json()) as Json;
    // The same document under the name without `.json` that x402 crawlers also ask for.
    const plain = await get('/.well-known/x402');
    expect(plain.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await plain.json()).toEqual(x402);
    expect(x402.resources.map((r: Json) => r.sku).sort()).toEqual(
      operations.flatMap((op) => (op.sku ? [op.sku.id] : [])).sort(),
    );
    const prm = (await (await get('/.well-known/oauth-protected-resource')).json()) as Json;
    expect(prm.resource).toBe(site);
    expect(prm.authorization_servers).toEqual([service.config.auth_url]);
  });

  it('the home page answers HTML, Markdown for agents that ask (Vary: Accept) and JSON, with every API on it', async () => {
    const page = await get('/', { accept: 'text/html' });
    expect(page.headers.get('vary')).toMatch(/Accept/i);
    expect(page.headers.get('content-security-policy')).not.toContain('unsafe-inline');
    const html = await page.text();
    for (const api of apis(operations, service.config)) expect(html).toContain(`id="${api.id}"`);
    const md = await get('/', { accept: 'text/markdown' });
    expect(md.headers.get('content-type')).toMatch(/^text\/markdown/);
    expect(md.headers.get('vary')).toMatch(/Accept/i);
    const markdown = await md.text();
    expect(markdown).not.toMatch(/<html/i);
    for (const op of operations) expect(markdown, op.name).toContain(op.title);
    const json = (await (await get('/', { accept: 'application/json' })).json()) as Json;
    expect(json.urls.mcp).toBe(service.config.mcp_url);
  });

  it('escapes what it renders', async () => {
    const hostile = withTestSku().map((op) => (op.sku ? { ...op, title: '<script>alert(1)</script>' } : op));
    const other = await startTestService('sqlite', {}, { operations: hostile });
    try {
      const html = await (
        await fetch(`${other.config.site_url}/`, { headers: { accept: 'text/html' } })
      ).text();
      expect(html).not.toContain('<script>alert(1)</script>');
      expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    } finally {
      await other.close();
    }
  });
});

describe.each(dialects)('our own scanner scans our own deployment (%s)', (dialect) => {
  let service: TestService;
  let siteId: string;
  let key: string;
  const db = createTestDatabase(dialect);
  const scanner = {
    'rate_limits.unauthenticated_writes.points': 1000,
    // A deployment that sells: its paid resources answer 402 with terms (the commerce check).
    'payments.pay_to': '0x209693Bc6afc0C5328bA36FaF03C514EF312287C',
    ...scannerOnLoopback,
    'scanner.request_timeout_ms': 5000,
  };

  beforeAll(async () => {
    const database = await db;
    // The owner installs the pixel for the deployment's own domain, then runs it with PIXEL_SITE_ID.
    const first = await startTestService(dialect, scanner, { database });
    const port = first.config.port === 0 ? Number(new URL(first.url).port) : first.config.port;
    const api = first.config.public_api_url;
    const domain = new URL(first.config.site_url).host;
    const account = await fetch(`${api}/account`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: `owner-${dialect}@example.com`, password: 'correct horse battery' }),
    });
    key = (await account.json()).key.service_key;
    const install = await fetch(`${api}/pixel-install`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-key': key },
      body: JSON.stringify({ domain }),
    });
    expect(install.status).toBeLessThan(300);
    siteId = (await install.json()).site_id;
    await first.close();
    service = await startTestService(
      dialect,
      { ...scanner, port, site_url: first.config.site_url, 'pages.pixel_site_id': siteId },
      { database },
    );
  });
  afterAll(async () => {
    await service?.close();
    await (await db).drop();
  });

  it('carries its own pixel, and scores 90 or more, in the top tier', async () => {
    const html = await (
      await fetch(`${service.config.site_url}/`, { headers: { accept: 'text/html' } })
    ).text();
    expect(html).toContain(`${service.config.public_api_url}/beacon?site=${siteId}`);
    const beacon = await fetch(
      `${service.config.public_api_url}/beacon?site=${siteId}&url=${encodeURIComponent(`${service.config.site_url}/`)}`,
    );
    expect(beacon.status).toBe(204);

    const api = service.config.public_api_url;
    const domain = new URL(service.config.site_url).host;
    const res = await fetch(`${api}/scans`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ domain }),
    });
    expect(res.status).toBe(202);
    const accepted = (await res.json()) as Json;
    let scan: Json = accepted;
    await waitFor(async () => {
      scan = (await (await fetch(accepted.status_url)).json()) as Json;
      return scan.status === 'done' || scan.status === 'failed';
    }, 60_000);
    expect(scan.status).toBe('done');
    const findings = (scan.result.findings as Json[]).map((f) => `${f.id}: ${f.seen}`);
    expect(scan.result.score, findings.join('\n')).toBeGreaterThanOrEqual(90);
    expect(scan.result.tier.id).toBe(tiers[0]?.id);
    // Every document this deployment publishes earns its check in full; over loopback only https
    // cannot, and one page (the home page, until the pages of section 2) caps pages_readable.
    const checks = new Map<string, number | null>(
      (scan.result.components as Json[]).flatMap((c) => (c.checks as Json[]).map((k) => [k.id, k.score])),
    );
    for (const id of [
      'robots_txt',
      'robots_ai_rules',
      'ai_search_access',
      'content_signals',
      'sitemap',
      'markdown_negotiation',
      'api_catalog',
      'oauth_discovery',
      'mcp_server_card',
      'openapi',
      'x402',
      'word_count',
      'headings',
      'titles',
      'descriptions',
      'llms_full_txt',
      'llms_txt',
      'json_ld',
      'organization',
      'product_or_faq',
      'open_graph',
      'canonical',
      'ai_txt',
      // Scoring version 2: what the documents claim holds when checked against the servers.
      'door_test',
      'policy_coherence',
      'sitemap_lastmod',
      'x_robots_tag',
      'markdown_alternate',
      'link_headers',
      'oauth_chain',
      'mcp_live',
      'lang',
      'noindex',
      'llms_txt_links',
      'json_ld_valid',
      'entity_consistency',
      'agent_skills',
      'a2a_agent_card',
      // Issue 35: its paid resources answer with x402 terms; its MCP server speaks both eras.
      'commerce',
      'mcp_era',
    ]) {
      expect(checks.get(id), `${id}: ${findings.find((f) => f.startsWith(`${id}:`))}`).toBe(1);
    }
    expect(checks.get('https')).toBe(0);
    expect(scan.result.profile).toMatchObject({ id: 'api', detected: 'api', source: 'detected' });
    expect(scan.result.scoring_version).toBe(2);
  }, 90_000);

  it('proves control of its own domain with the file it serves, so its pixel data counts', async () => {
    const api = service.config.public_api_url;
    const file = await fetch(`${service.config.site_url}/.well-known/agent-service-verification.txt`);
    expect(file.status).toBe(200);
    expect(await file.text()).toMatch(/^agent-service-verification=\S+\n$/);
    const res = await fetch(`${api}/sites/${siteId}/verify`, {
      method: 'POST',
      headers: { 'x-service-key': key },
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ verified: true });
    // Now the beacon hit above is data: Live AI Traffic is judged (and, with no AI visit yet, scores 0).
    await service.services.traffic.drain();
    const traffic = await service.services.traffic.liveTraffic(new URL(service.config.site_url).host);
    expect(traffic).toMatchObject({ site_id: siteId, ai_events_30d: 0 });
    expect(traffic?.events_30d).toBeGreaterThan(0);
  });
});
