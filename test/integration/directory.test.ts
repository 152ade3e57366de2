/**
 * The directory over real HTTP, once per dialect: listings (pending until the domain is verified
 * by a loopback site serving the token), search, filters and pagination; brand agents, whose return
 * requests reach the brand's webhook (a Standard Webhooks receiver) and whose status the brand moves
 * through its own endpoint; key isolation between accounts; the reads as public MCP tools.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../servers/registry.ts';
import { dialects } from '../helpers/databases.ts';
import { startWebhookReceiver, type WebhookReceiver, waitFor } from '../helpers/receivers.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are checked field by field
type Json = any;

describe.each(dialects)('directory (%s)', (dialect) => {
  let service: TestService;
  let api: string;
  const sites: Server[] = [];
  const receivers: WebhookReceiver[] = [];
  /** Every token the loopback sites serve: any registration whose token is here verifies. */
  const servedTokens = new Set<string>();
  /** A word no other test uses, so text searches see only this file's listings. */
  const marker = `zq${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    service = await startTestService(dialect, {
      'rate_limits.unauthenticated_writes.points': 1000,
      'scanner.allow_private_networks': true,
    });
    api = service.config.public_api_url;
  });
  afterAll(async () => {
    for (const r of receivers) await r.close();
    await service?.close();
    for (const s of sites) s.close();
  });

  /** A loopback "site" on its own port; its domain is `127.0.0.1:PORT`. */
  async function newSite(): Promise<string> {
    const site = createServer((req, res) => {
      if (req.url === '/.well-known/agent-service-verification.txt') {
        res.writeHead(200, { 'content-type': 'text/plain' }).end([...servedTokens].join('\n'));
      } else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    sites.push(site);
    return `127.0.0.1:${(site.address() as AddressInfo).port}`;
  }

  const call = async (method: string, path: string, body?: unknown, key?: string) => {
    const res = await fetch(`${api}${path}`, {
      method,
      headers: {
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(key ? { 'x-service-key': key } : {}),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as Json };
  };

  let n = 0;
  async function newAccount(): Promise<string> {
    const res = await call('POST', '/account', { email: `dir${++n}-${marker}@example.com` });
    expect(res.status).toBe(201);
    return res.body.key.service_key;
  }

  /** Registers `domain` for the account; `verify` serves its token and verifies it over HTTP. */
  async function addSite(
    key: string,
    domain: string,
    verify: boolean,
  ): Promise<{ site_id: string; token: string }> {
    const res = await call('POST', '/pixel-install', { domain }, key);
    expect(res.status).toBe(200);
    const site = { site_id: res.body.site_id, token: res.body.verification.token };
    if (verify) {
      servedTokens.add(site.token);
      const verified = await call('POST', `/sites/${site.site_id}/verify`, undefined, key);
      expect(verified.body.verified).toBe(true);
    }
    return site;
  }

  /**
   * A registrable brand domain (return requests only name those) marked verified in the database:
   * no public DNS or https here, and the proof itself is exercised with loopback sites above.
   */
  async function verifiedBrand(key: string, domain: string): Promise<void> {
    const { site_id } = await addSite(key, domain, false);
    await service.services.db
      .updateTable('sites')
      .set({ verified_at: new Date().toISOString(), verification_method: 'dns' })
      .where('id', '=', site_id)
      .execute();
  }

  const listing = (domain: string, extra: Record<string, unknown> = {}) => ({
    domain,
    name: `Acme ${marker}`,
    description: 'Invoices for agents.',
    category: 'finance',
    url: `http://${domain}/product`,
    contact: { email: 'hello@acme.example' },
    ...extra,
  });

  const search = (query: Record<string, string>) => call('GET', `/listings?${new URLSearchParams(query)}`);

  it('keeps a listing pending until the domain is verified, then lists it; a second POST updates it', async () => {
    const key = await newAccount();
    const domain = await newSite();
    const { site_id, token } = await addSite(key, domain, false);

    const noKey = await call('POST', '/listings', listing(domain));
    expect(noKey.status).toBe(401);

    const pending = await call(
      'POST',
      '/listings',
      listing(domain, { tags: ['Billing', 'billing', 'API'] }),
      key,
    );
    expect(pending.status).toBe(200);
    expect(pending.body).toMatchObject({ domain, status: 'pending', created: true, score: null });
    expect(pending.body.tags).toEqual(['billing', 'api']);
    expect((await search({ q: marker })).body.listings).toEqual([]);

    servedTokens.add(token);
    expect((await call('POST', `/sites/${site_id}/verify`, undefined, key)).body.verified).toBe(true);
    const listed = await search({ q: marker });
    expect(listed.body.listings.map((l: Json) => l.listing_id)).toEqual([pending.body.listing_id]);
    expect(listed.body.listings[0]).toMatchObject({ domain, category: 'finance', score: null });
    expect(listed.body.listings[0]).not.toHaveProperty('status');

    const updated = await call(
      'POST',
      '/listings',
      listing(domain, { description: 'Invoices and receipts.' }),
      key,
    );
    expect(updated.body).toMatchObject({
      listing_id: pending.body.listing_id,
      status: 'listed',
      created: false,
      description: 'Invoices and receipts.',
      created_at: pending.body.created_at,
    });

    // Another account cannot ride on this account's verification: its listing of the domain stays pending.
    const otherKey = await newAccount();
    const other = await call('POST', '/listings', listing(domain, { name: `Impostor ${marker}` }), otherKey);
    expect(other.body).toMatchObject({ status: 'pending', created: true });
    expect(other.body.listing_id).not.toBe(pending.body.listing_id);
    expect((await search({ q: `impostor ${marker}` })).body.listings).toEqual([]);

    const offDomain = await call(
      'POST',
      '/listings',
      listing(domain, { url: 'https://elsewhere.example.com/' }),
      key,
    );
    expect(offDomain.status).toBe(400);
    expect(offDomain.body.errors).toEqual([{ field: 'url', message: expect.stringContaining(domain) }]);
    const tooLong = await call('POST', '/listings', listing(domain, { description: 'x'.repeat(501) }), key);
    expect(tooLong.body.errors.map((e: Json) => e.field)).toEqual(['description']);
  });

  it('searches case-insensitively with literal wildcards, filters by category and score, and pages with a cursor', async () => {
    const key = await newAccount();
    const tag = `${marker}p`;
    const made: string[] = [];
    const domains: string[] = [];
    for (const [i, extra] of [
      { category: 'ai_tools', description: 'Agents that answer 100% of tickets.' },
      { category: 'ai_tools', description: 'Agents for support_desk teams.' },
      { category: 'media', description: 'A newsletter about agents.' },
    ].entries()) {
      const domain = await newSite();
      domains.push(domain);
      await addSite(key, domain, true);
      const res = await call(
        'POST',
        '/listings',
        listing(domain, { name: `Site ${i}`, tags: [tag], ...extra }),
        key,
      );
      expect(res.body.status).toBe('listed');
      made.push(res.body.listing_id);
    }
    const newestFirst = [...made].reverse();

    expect((await search({ q: tag.toUpperCase() })).body.listings.map((l: Json) => l.listing_id)).toEqual(
      newestFirst,
    );
    const percent = await search({ q: '100%' });
    expect(percent.body.listings.map((l: Json) => l.listing_id)).toEqual([made[0]]);
    expect((await search({ q: 'support_desk' })).body.listings.map((l: Json) => l.listing_id)).toEqual([
      made[1],
    ]);
    expect((await search({ q: '%%' })).body.listings).toEqual([]);
    expect((await search({ q: 'port_d' })).body.listings.map((l: Json) => l.listing_id)).toEqual([made[1]]);
    expect((await search({ q: 'port%d' })).body.listings).toEqual([]);

    const media = await search({ q: tag, category: 'media' });
    expect(media.body.listings.map((l: Json) => l.listing_id)).toEqual([made[2]]);
    // No domain has a Signal Strength score yet: any threshold leaves every listing out.
    expect((await search({ q: tag, min_score: '0' })).body).toEqual({ listings: [], next_cursor: null });
    // A real public scan of the first site gives it a score; unscored domains still never pass.
    const accepted = await call('POST', '/scans', { domain: domains[0] });
    expect(accepted.status).toBe(202);
    let score = -1;
    await waitFor(async () => {
      const scan = (await call('GET', `/scans/${accepted.body.scan_id}`)).body;
      if (scan.status === 'done') score = scan.result.score;
      return scan.status === 'done';
    });
    const scored = await search({ q: tag, min_score: '0' });
    expect(scored.body.listings.map((l: Json) => [l.listing_id, l.score])).toEqual([[made[0], score]]);
    expect((await search({ q: tag, min_score: String(Math.min(100, score + 1)) })).body.listings).toEqual(
      score === 100 ? scored.body.listings : [],
    );

    const first = await search({ q: tag, limit: '2' });
    expect(first.body.listings.map((l: Json) => l.listing_id)).toEqual(newestFirst.slice(0, 2));
    expect(first.body.next_cursor).toEqual(expect.any(String));
    const second = await search({ q: tag, limit: '2', cursor: first.body.next_cursor });
    expect(second.body.listings.map((l: Json) => l.listing_id)).toEqual(newestFirst.slice(2));
    expect(second.body.next_cursor).toBeNull();

    for (const [query, field] of [
      [{ limit: '0' }, 'limit'],
      [{ limit: '101' }, 'limit'],
      [{ min_score: 'high' }, 'min_score'],
      [{ category: 'toys' }, 'category'],
      [{ cursor: 'not-a-cursor' }, 'cursor'],
    ] as const) {
      const res = await search(query);
      expect(res.status, JSON.stringify(query)).toBe(400);
      expect(res.body.errors[0].field).toBe(field);
    }
  });

  it('shows the storefront and every operation of the service', async () => {
    const hub = await call('GET', '/agenthub');
    expect(hub.status).toBe(200);
    expect(hub.body.featured).toEqual([]);
    expect(hub.body.spotlight).toEqual([]);
    expect(hub.body.categories).toHaveLength(12);
    const total = hub.body.categories.reduce((sum: number, c: Json) => sum + c.listings, 0);
    expect(hub.body.total_listings).toBe(total);
    expect(hub.body.categories.find((c: Json) => c.category === 'ai_tools').listings).toBeGreaterThanOrEqual(
      2,
    );
    expect(hub.body.top_listings.length).toBe(Math.min(total, 12));

    const services = await call('GET', '/services');
    expect(services.body.services.map((s: Json) => s.name).sort()).toEqual(
      operations.map((op) => op.name).sort(),
    );
    const byName = new Map(services.body.services.map((s: Json) => [s.name, s]));
    expect(byName.get('searchListings')).toMatchObject({
      tool_name: 'search_listings',
      method: 'GET',
      url: `${api}/listings`,
      access: 'public',
      free: true,
      price: null,
      surfaces: { rest: 'public_api', mcp: ['public'] },
    });
    expect(byName.get('updateBrandRequestStatus')).toMatchObject({
      url: `${api}/brand-agent/requests/{request_id}/status`,
      access: 'service_key',
      surfaces: { mcp: [] },
    });
    expect(byName.get('startReturnRequest')).toMatchObject({ url: `${service.config.base_url}/return` });
  });

  describe('brand agents', () => {
    const returnRequest = async (brand_domain: string) => {
      const res = await fetch(`${service.config.base_url}/return`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          brand_domain,
          name: 'Jane Doe',
          contact: 'jane@example.com',
          order_number: 'A-7',
        }),
      });
      expect(res.status).toBe(200);
      return (await res.json()) as Json;
    };
    const statusOf = async (url: string) => (await fetch(url)).json() as Promise<Json>;
    const brandAgent = (domain: string, receiver: WebhookReceiver, extra: Record<string, unknown> = {}) => ({
      domain,
      endpoint: receiver.url,
      protocols: ['webhook', 'mcp'],
      support_contact: { email: 'help@brand.example', url: 'https://brand.example.com/help' },
      return_contact: { email: 'returns-desk-private@brand.example' },
      return_policy: {
        window_days: 30,
        conditions: 'Unworn, with tags.',
        url: 'https://brand.example.com/returns',
      },
      ...extra,
    });

    let brandKey: string;
    let otherKey: string;
    let domain: string;
    let receiver: WebhookReceiver;

    beforeAll(async () => {
      brandKey = await newAccount();
      otherKey = await newAccount();
      domain = `dir-${dialect}-${marker}.com`;
      await verifiedBrand(brandKey, domain);
      receiver = await startWebhookReceiver();
      receivers.push(receiver);
    });

    it('refuses an unverified or non-registrable domain', async () => {
      const unverified = await call('POST', '/brand-agent', brandAgent(domain, receiver), otherKey);
      expect(unverified.status).toBe(403);
      expect(unverified.body.code).toBe('domain_not_verified');
      const sub = await call('POST', '/brand-agent', brandAgent(`www.${domain}`, receiver), brandKey);
      expect(sub.status).toBe(400);
      expect(sub.body.errors).toEqual([{ field: 'domain', message: expect.stringContaining(domain) }]);
      const noKey = await call('POST', '/brand-agent', brandAgent(domain, receiver));
      expect(noKey.status).toBe(401);
    });

    it("delivers the brand's requests to its webhook; the brand moves them through its endpoint", async () => {
      const waiting = await returnRequest(domain);
      expect(waiting.status).toBe('awaiting_channel');

      const registered = await call(
        'POST',
        '/brand-agent',
        brandAgent(domain, receiver, { webhook_secret: receiver.secret }),
        brandKey,
      );
      expect(registered.status).toBe(200);
      expect(registered.body).toMatchObject({
        kind: 'brand',
        domain,
        created: true,
        webhook_secret: null,
        protocols: ['webhook', 'mcp'],
        return_policy: { window_days: 30 },
        delivery: { channel: 'webhook', queued_requests: 1 },
      });
      expect(JSON.stringify(registered.body)).not.toContain('returns-desk-private');

      const fresh = await returnRequest(domain);
      expect(fresh.delivery.channel).toBe('webhook');
      await waitFor(() => receiver.processed.size === 2);
      const delivered = [...receiver.processed.values()]
        .map((r) => (r.payload as Json).data.request_id)
        .sort();
      expect(delivered).toEqual([waiting.request_id, fresh.request_id].sort());
      await waitFor(async () => (await statusOf(fresh.status_url)).status === 'delivered');

      const inbox = await call('GET', '/brand-agent/requests?status=delivered', undefined, brandKey);
      expect(inbox.status).toBe(200);
      const mine = inbox.body.requests.find((r: Json) => r.request_id === fresh.request_id);
      expect(mine).toMatchObject({
        brand_domain: domain,
        status: 'delivered',
        can_set: ['acknowledged', 'approved', 'denied'],
        customer: { name: 'Jane Doe', contact: 'jane@example.com', contact_kind: 'email' },
        order: { number: 'A-7' },
        status_url: fresh.status_url,
      });

      const path = `/brand-agent/requests/${fresh.request_id}/status`;
      const ack = await call('POST', path, { status: 'acknowledged', note: 'Label sent' }, brandKey);
      expect(ack.status).toBe(200);
      expect(ack.body).toMatchObject({ status: 'acknowledged', next_step: { by: 'brand' } });
      const seen = await statusOf(fresh.status_url);
      expect(seen.status).toBe('acknowledged');
      expect(seen.history.at(-1)).toMatchObject({ status: 'acknowledged', by: 'brand', note: 'Label sent' });

      const illegal = await call('POST', path, { status: 'refunded' }, brandKey);
      expect(illegal.status).toBe(409);
      expect(illegal.body.code).toBe('illegal_transition');
      const notBrands = await call('POST', path, { status: 'cancelled' }, brandKey);
      expect(notBrands.status).toBe(400);
      expect(notBrands.body.errors[0].field).toBe('status');

      // Another account: neither sees nor moves this brand's requests.
      const foreign = await call('POST', path, { status: 'approved' }, otherKey);
      expect(foreign.status).toBe(404);
      expect(foreign.body.code).toBe('not_found');
      const otherInbox = await call('GET', '/brand-agent/requests', undefined, otherKey);
      expect(otherInbox.body).toEqual({ requests: [], next_cursor: null });
      const missing = await call(
        'POST',
        `/brand-agent/requests/${crypto.randomUUID()}/status`,
        { status: 'approved' },
        brandKey,
      );
      expect(missing.status).toBe(404);

      const approved = await call('POST', path, { status: 'approved' }, brandKey);
      expect(approved.body.status).toBe('approved');
      expect((await statusOf(fresh.status_url)).history.map((h: Json) => h.status)).toEqual([
        'received',
        'delivered',
        'acknowledged',
        'approved',
      ]);
    });

    it('pages the brand inbox', async () => {
      const first = await call('GET', '/brand-agent/requests?limit=1', undefined, brandKey);
      expect(first.body.requests).toHaveLength(1);
      const second = await call(
        'GET',
        `/brand-agent/requests?limit=1&cursor=${first.body.next_cursor}`,
        undefined,
        brandKey,
      );
      expect(second.body.requests).toHaveLength(1);
      expect(second.body.requests[0].request_id).not.toBe(first.body.requests[0].request_id);
      expect(second.body.next_cursor).toBeNull();
    });

    it('lists brand agents publicly without secrets or the private return contact', async () => {
      const agents = await call('GET', '/agents');
      expect(agents.status).toBe(200);
      const agent = agents.body.agents.find((a: Json) => a.domain === domain);
      expect(agent).toMatchObject({
        kind: 'brand',
        endpoint: receiver.url,
        support_contact: { email: 'help@brand.example' },
        return_policy: { conditions: 'Unworn, with tags.' },
      });
      const text = JSON.stringify(agents.body);
      expect(text).not.toContain(receiver.secret);
      expect(text).not.toContain('returns-desk-private');
      expect((await call('GET', '/agents?kind=soul')).body).toEqual({
        agents: [],
        sponsored: [],
        next_cursor: null,
      });
    });

    it('keeps the agent of a domain with the account that registered it', async () => {
      await verifiedBrand(otherKey, domain);
      const taken = await call('POST', '/brand-agent', brandAgent(domain, receiver), otherKey);
      expect(taken.status).toBe(409);
      expect(taken.body.code).toBe('brand_agent_taken');
      const again = await call('POST', '/brand-agent', brandAgent(domain, receiver), brandKey);
      expect(again.body).toMatchObject({
        created: false,
        webhook_secret: null,
        delivery: { channel: 'webhook' },
      });
    });

    it('generates a webhook secret once, and signs deliveries with it', async () => {
      const key = await newAccount();
      const generatedFor = `gen-${dialect}-${marker}.com`;
      await verifiedBrand(key, generatedFor);
      const sink = await startWebhookReceiver();
      receivers.push(sink);
      const registered = await call('POST', '/brand-agent', brandAgent(generatedFor, sink), key);
      const secret: string = registered.body.webhook_secret;
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
      expect(
        (await call('POST', '/brand-agent', brandAgent(generatedFor, sink), key)).body.webhook_secret,
      ).toBeNull();
      expect(JSON.stringify((await call('GET', '/agents')).body)).not.toContain(secret);

      const started = await returnRequest(generatedFor);
      await waitFor(() => sink.requests.length === 1);
      const [received] = sink.requests;
      const payload = new Webhook(secret).verify(
        received?.body ?? '',
        received?.headers as Record<string, string>,
      );
      expect(payload).toMatchObject({ data: { request_id: started.request_id } });
    });
  });

  it('serves every read as a public MCP tool with the REST result', async () => {
    const client = new Client({ name: 'directory-test', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(service.config.mcp_url)));
    try {
      const viaTool = await client.callTool({ name: 'search_listings', arguments: { q: marker, limit: 5 } });
      expect(viaTool.isError).toBeFalsy();
      expect(viaTool.structuredContent).toEqual((await search({ q: marker, limit: '5' })).body);
      for (const name of ['list_agents', 'get_agent_hub', 'list_services']) {
        const result = await client.callTool({ name, arguments: {} });
        expect(result.isError, name).toBeFalsy();
      }
      const bad = await client.callTool({ name: 'search_listings', arguments: { min_score: 'high' } });
      expect(bad.isError).toBe(true);
    } finally {
      await client.close();
    }
  });
});
