/**
 * Channel discovery for any brand domain (issue 29 part 1), once per dialect, against real local
 * peers: the brand world of `test/helpers/brand-sites.ts` (brand sites by `Host` on loopback behind
 * a DNS server that also answers MX), an SMTP server, a webhook receiver, the A2A and MCP servers of
 * two brands. Written as what a personal agent sees: `GET /brands/{domain}` over REST and MCP, and
 * `POST /return` that never waits on a slow site.
 */
import { TaskState } from '@a2a-js/sdk';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Dialect } from '../../db/database.ts';
import { markChannelFailed } from '../../servers/features/returns/channels/repository.ts';
import { type BrandWorld, brandDomains, startBrandWorld, textMessage } from '../helpers/brand-sites.ts';
import { dialects } from '../helpers/databases.ts';
import { startSmtpServer, waitFor } from '../helpers/receivers.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are checked field by field
type Json = any;

describe.each(dialects)('brand channels (%s)', (dialect: Dialect) => {
  let world: BrandWorld;
  let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
  let service: TestService;
  const extra: TestService[] = [];

  beforeAll(async () => {
    world = await startBrandWorld();
    smtp = await startSmtpServer();
    service = await startTestService(dialect, {
      ...world.overrides,
      // Local peers answer at once: reads wait for their discovery, so the tests need no timing.
      'returns.discovery.request_budget_ms': 30_000,
      'returns.discovery.request_timeout_ms': 1000,
      'smtp.url': smtp.url,
      'rate_limits.unauthenticated_writes.points': 1000,
    });
  });
  afterAll(async () => {
    for (const s of extra) await s.close();
    await service?.close();
    await world?.close();
    await smtp?.close();
  });

  const brands = async (svc: TestService, domain: string): Promise<{ status: number; body: Json }> => {
    const res = await fetch(`${svc.config.base_url}/brands/${encodeURIComponent(domain)}`);
    return { status: res.status, body: await res.json() };
  };
  const channel = (body: Json, kind: string) => body.channels.find((c: Json) => c.kind === kind);
  const fileReturn = async (svc: TestService, brand_domain: string): Promise<Json> => {
    const res = await fetch(`${svc.config.base_url}/return`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ brand_domain, name: 'Jane Doe', contact: 'jane@example.com' }),
    });
    expect(res.status).toBe(200);
    return res.json();
  };

  it('finds a customer service email and phone in the JSON-LD ContactPoint, and refuses the sales one', async () => {
    const { status, body } = await brands(service, brandDomains.jsonLd);
    expect(status).toBe(200);
    expect(body.discovery).toMatchObject({ status: 'fresh', outcome: 'complete', retry_after_s: null });
    expect(body.discovery.next_run_at > body.discovery.ran_at).toBe(true);
    const home = `${world.origin('jsonLd')}/`;
    expect(channel(body, 'email')).toEqual({
      kind: 'email',
      address: `support@${brandDomains.jsonLd}`,
      detail: { contact_type: 'customer service' },
      source: 'site',
      found_by: 'json_ld_contact_point',
      source_url: home,
      found_at: expect.any(String),
      delivery_rank: 1,
      failed: null,
      use: expect.stringContaining('role address'),
    });
    expect(channel(body, 'phone')).toMatchObject({
      address: '+14155550100',
      found_by: 'json_ld_contact_point',
    });
    expect(channel(body, 'return_policy')).toMatchObject({
      address: `${world.origin('jsonLd')}/policies/return-policy`,
      found_by: 'page_link',
    });
    expect(body.discovery.report.refused).toContainEqual({
      kind: 'email',
      address: `sales@${brandDomains.jsonLd}`,
      source_url: home,
      reason: 'its contactType "sales" is not for customers',
    });
    // SMTP is configured: a request is delivered to that address.
    expect(body.delivery_channel).toBe('email');
    // Stored with its evidence.
    const rows = await service.services.db
      .selectFrom('discovered_channels')
      .selectAll()
      .where('domain', '=', brandDomains.jsonLd)
      .execute();
    expect(rows.map((r) => `${r.kind} ${r.found_by}`).sort()).toEqual([
      'email json_ld_contact_point',
      'phone json_ld_contact_point',
      'return_policy page_link',
    ]);
  });

  it('finds a mailto on the contact page the home page links to, and reads the scanner token in robots.txt', async () => {
    const { body } = await brands(service, brandDomains.mailto);
    expect(channel(body, 'email')).toMatchObject({
      address: `returns@${brandDomains.mailto}`,
      found_by: 'mailto_link',
      source_url: `${world.origin('mailto')}/contact`,
      delivery_rank: 1,
    });
    const fetched = world.requests.filter((r) => r.host === brandDomains.mailto);
    expect(fetched.map((r) => r.path)).toEqual(expect.arrayContaining(['/robots.txt', '/', '/contact']));
    expect(fetched.every((r) => r.userAgent?.startsWith('agent-service-scanner/'))).toBe(true);
  });

  it("finds the brand's A2A agent by its returns skill, and that agent answers a message with a task", async () => {
    const { body } = await brands(service, brandDomains.a2a);
    const cardUrl = `${world.origin('a2a')}/.well-known/agent-card.json`;
    expect(channel(body, 'a2a')).toMatchObject({
      address: cardUrl,
      source: 'site',
      found_by: 'a2a_agent_card',
      source_url: cardUrl,
      delivery_rank: 1,
      detail: {
        skill_id: 'process_return',
        skill_name: 'Returns and refunds',
        agent_name: 'Agentic Shoe Outlet support',
        interface_url: `${world.origin('a2a')}/a2a`,
        protocol_binding: 'JSONRPC',
        protocol_version: '1.0',
      },
    });
    // A request would be delivered to it as an A2A message (return-delivery-channels.test.ts).
    expect(body.delivery_channel).toBe('a2a');

    // The fixture is a real A2A server, for the delivery tests: the official client gets a task back.
    const client = await world.a2aClient();
    const answer = await client.sendMessage({
      tenant: '',
      message: textMessage('Return order A-1'),
      configuration: undefined,
      metadata: undefined,
    });
    expect(answer).toMatchObject({ status: { state: TaskState.TASK_STATE_SUBMITTED } });
    expect(world.a2aAgent.received).toHaveLength(1);
  });

  it("finds the brand's MCP server through its catalog and card, by the refund tool its live tools/list has", async () => {
    const { body } = await brands(service, brandDomains.mcp);
    expect(channel(body, 'mcp')).toMatchObject({
      address: `${world.origin('mcp')}/mcp`,
      found_by: 'mcp_server_card',
      source_url: `${world.origin('mcp')}/mcp/server-card`,
      delivery_rank: null,
      detail: { tool_name: 'request_refund', card_url: `${world.origin('mcp')}/mcp/server-card` },
    });
    expect(body.discovery.report.tried).toContainEqual({
      url: `${world.origin('mcp')}/mcp`,
      what: 'mcp_server',
      outcome: 'read',
      detail: '2 tools',
    });
  });

  it('finds a contact form and a phone number for the person, and no delivery channel', async () => {
    const { body } = await brands(service, brandDomains.formPhone);
    const page = `${world.origin('formPhone')}/customer-service`;
    expect(body.channels).toEqual([
      expect.objectContaining({ kind: 'form', address: page, found_by: 'contact_form', delivery_rank: null }),
      expect.objectContaining({
        kind: 'phone',
        address: '+12125550199',
        found_by: 'tel_link',
        source_url: page,
      }),
    ]);
    expect(body.delivery_channel).toBeNull();
  });

  it('answers a site with nothing: no channels, a complete discovery, what it tried', async () => {
    const { body } = await brands(service, brandDomains.nothing);
    expect(body).toMatchObject({
      domain: brandDomains.nothing,
      known: false,
      channels: [],
      delivery_channel: null,
    });
    expect(body.discovery.outcome).toBe('complete');
    expect(body.discovery.report.tried).toContainEqual(
      expect.objectContaining({ what: 'home', outcome: 'read', url: `${world.origin('nothing')}/` }),
    );
    expect(body.discovery.report.tried).toContainEqual(
      expect.objectContaining({ what: 'agent_card', outcome: 'http', detail: 'HTTP 404' }),
    );
  });

  it("refuses a mailto that names a person or points at another company's domain", async () => {
    const { body } = await brands(service, brandDomains.person);
    expect(channel(body, 'email')).toBeUndefined();
    const refused = body.discovery.report.refused.filter((r: Json) => r.kind === 'email');
    expect(refused).toEqual([
      expect.objectContaining({
        address: `jane.doe@${brandDomains.person}`,
        reason: expect.stringContaining('names a person'),
      }),
      expect.objectContaining({
        address: 'support@helpdesk-vendor-mail.com',
        reason: `on another domain than ${brandDomains.person}`,
      }),
    ]);
  });

  it('refuses addresses whose domain takes no mail: a null MX, and a name that does not exist', async () => {
    const { body } = await brands(service, brandDomains.noMail);
    expect(channel(body, 'email')).toBeUndefined();
    expect(body.discovery.report.refused).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          address: `support@${brandDomains.noMail}`,
          reason: expect.stringContaining('null MX'),
        }),
        expect.objectContaining({
          address: `help@care.${brandDomains.noMail}`,
          reason: `care.${brandDomains.noMail} does not exist in DNS`,
        }),
      ]),
    );
  });

  it('gives a clear answer for a hostile site - soup, a redirect loop, a hang, an endless page, a binary, robots', async () => {
    const { status, body } = await brands(service, brandDomains.hostile);
    expect(status).toBe(200);
    expect(body.discovery.outcome).toBe('partial');
    const tried = body.discovery.report.tried as Json[];
    const of = (path: string) => tried.find((t) => t.url === `${world.origin('hostile')}${path}`);
    expect(of('/contact')).toMatchObject({
      outcome: 'failed',
      detail: expect.stringContaining('redirect loop'),
    });
    expect(of('/help')).toMatchObject({ outcome: 'failed', detail: expect.stringContaining('timed out') });
    expect(of('/support')).toMatchObject({
      outcome: 'read',
      detail: expect.stringContaining('cut at the size limit'),
    });
    expect(of('/returns')).toMatchObject({ outcome: 'not_text' });
    expect(of('/private/contact-us')).toMatchObject({ outcome: 'robots' });
    expect(world.hits('hostile', '/private/contact-us')).toBe(0);
    expect(body.channels).toEqual([]);
    // Its sitemap's 5,000 help articles: the page cap reads a few, the report names 20 and counts the rest.
    expect(
      world.requests.filter((r) => r.host === brandDomains.hostile && r.path.startsWith('/help/')).length,
    ).toBeLessThanOrEqual(8);
    expect(tried.filter((t) => t.outcome === 'skipped').length).toBe(20);
    expect(body.discovery.report.notes).toContainEqual(
      expect.stringMatching(/page cap \(8\) was reached: \d+ more pages not read/),
    );
  });

  it('does not hold POST /return for a slow site: the discovery goes on and queues the request when it finds an email', async () => {
    const quick = await startTestService(
      dialect,
      {
        ...world.overrides,
        'returns.discovery.request_budget_ms': 50,
        'returns.discovery.request_timeout_ms': 20_000,
        'smtp.url': smtp.url,
        'rate_limits.unauthenticated_writes.points': 1000,
      },
      { database: service.db },
    );
    extra.push(quick);
    const started = await fileReturn(quick, brandDomains.slow);
    // The site has not answered yet (it waits for releaseSlow): the request was answered without it.
    expect(started).toMatchObject({ status: 'awaiting_channel', delivery: { channel: null } });
    expect((await brands(quick, brandDomains.slow)).body.discovery.status).toBe('running');

    world.releaseSlow();
    await waitFor(() => smtp.mails.some((m) => m.to.includes(`returns@${brandDomains.slow}`)), 20_000);
    let status: Json;
    await waitFor(async () => {
      status = await (await fetch(started.status_url)).json();
      return status.status === 'delivered';
    });
    expect(status?.history.map((h: Json) => h.status)).toEqual([
      'received',
      'awaiting_channel',
      'received',
      'delivered',
    ]);
  });

  it('delivers POST /return on the email found within the budget (resolveChannel reads the ranking)', async () => {
    const started = await fileReturn(service, brandDomains.jsonLd);
    expect(started).toMatchObject({ status: 'received', delivery: { channel: 'email' } });
    await waitFor(() => smtp.mails.some((m) => m.to.includes(`support@${brandDomains.jsonLd}`)));
  });

  it('ranks a registered webhook above what the site shows, without showing its address', async () => {
    await service.services.returns.connectBrandChannel({
      brand_domain: brandDomains.mailto,
      webhook_url: 'http://127.0.0.1:9/hooks',
      webhook_secret: `whsec_${Buffer.alloc(24, 1).toString('base64')}`,
      email: null,
    });
    const { body } = await brands(service, brandDomains.mailto);
    expect(body.channels.slice(0, 2)).toEqual([
      expect.objectContaining({ kind: 'webhook', address: null, source: 'registered', delivery_rank: 1 }),
      expect.objectContaining({ kind: 'email', address: `returns@${brandDomains.mailto}`, delivery_rank: 2 }),
    ]);
    expect(body.delivery_channel).toBe('webhook');
  });

  it('skips a channel a delivery marked failed, and discovers the domain again at the next read', async () => {
    const before = (await brands(service, brandDomains.jsonLd)).body;
    expect(before.discovery.status).toBe('fresh');
    const homeReads = world.hits('jsonLd', '/');
    await service.services.db.transaction().execute((trx) =>
      markChannelFailed(
        trx,
        {
          domain: brandDomains.jsonLd,
          kind: 'email',
          address: `support@${brandDomains.jsonLd}`,
          reason: 'SMTP 550',
        },
        new Date(),
        3_600_000,
      ),
    );
    const after = (await brands(service, brandDomains.jsonLd)).body;
    expect(channel(after, 'email')).toMatchObject({
      delivery_rank: null,
      failed: { reason: 'SMTP 550', at: expect.any(String), until: expect.any(String) },
    });
    expect(after.delivery_channel).toBeNull();
    // The failure asked for a new discovery: this read ran it (the home page was read again).
    expect(world.hits('jsonLd', '/')).toBe(homeReads + 1);
    expect(after.discovery).toMatchObject({ status: 'fresh', refresh_reason: null });
  });

  it('lets one process discover a domain at a time: two processes on one database read the site once', async () => {
    const second = await startTestService(
      dialect,
      { ...world.overrides, 'returns.discovery.request_budget_ms': 30_000 },
      { database: service.db },
    );
    extra.push(second);
    const domain = brandDomains.formPhone;
    await service.services.db.deleteFrom('brand_discoveries').where('domain', '=', domain).execute();
    const reads = world.hits('formPhone', '/');
    const [a, b] = await Promise.all([brands(service, domain), brands(second, domain)]);
    expect(world.hits('formPhone', '/')).toBe(reads + 1);
    expect(a.body.channels).toEqual(b.body.channels);
    expect(b.body.discovery.status).toBe('fresh');
  });

  it('is a public MCP tool with the same answer', async () => {
    const client = new Client({ name: 'brand-channels-test', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(service.config.mcp_url)));
    const result = await client.callTool({
      name: 'get_brand_channels',
      arguments: { domain: brandDomains.mcp },
    });
    await client.close();
    const rest = (await brands(service, brandDomains.mcp)).body;
    expect(result.structuredContent).toEqual(rest);
  });

  it('refuses what is not a public domain name with 400 naming the field', async () => {
    for (const domain of ['brand.example', '10.0.0.1', 'not a domain']) {
      const { status, body } = await brands(service, domain);
      expect(status, domain).toBe(400);
      expect(body.errors[0].field).toBe('domain');
    }
  });

  it('reads registered and registry channels only when discovery is off, and says so', async () => {
    const off = await startTestService(
      dialect,
      { 'returns.discovery.enabled': false },
      { database: service.db },
    );
    extra.push(off);
    const { body } = await brands(off, 'netflix.com');
    expect(body).toMatchObject({
      domain: 'netflix.com',
      known: true,
      discovery: { status: 'off', report: null },
    });
    expect(body.channels.every((c: Json) => c.source === 'registry')).toBe(true);
  });

  it('counts a read that starts a discovery against the per-address write limit, and a stored answer not', async () => {
    // A database of its own: the write counters of the other tests' requests are not in it.
    const limited = await startTestService(dialect, {
      ...world.overrides,
      'returns.discovery.request_budget_ms': 30_000,
      'rate_limits.unauthenticated_writes.points': 1,
    });
    extra.push(limited);
    expect((await brands(limited, brandDomains.nothing)).status).toBe(200);
    const refused = await brands(limited, brandDomains.person);
    expect(refused.status).toBe(429);
    expect(refused.body.code).toBe('rate_limited');
    expect((await brands(limited, brandDomains.nothing)).status).toBe(200);
  });
});
