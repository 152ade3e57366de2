/**
 * The auth_md and dns_aid checks (`scoring/agent-registration.ts`) on fixture sites crawled for
 * real: a site that passes, one that fails in parts, sites they do not apply to; and DNS-AID over
 * loopback, the `_agents` records served by a real DNS server (`test/helpers/dns-server.ts`) and
 * asked through the outbound resolver, the fixture sites resolved through the same server.
 */
import { createSocket, type Socket } from 'node:dgram';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CrawlRequest, crawlSite, type SiteFacts } from '../../servers/features/scans/crawler.ts';
import { judgeAuthMd, judgeDnsAid } from '../../servers/features/scans/scoring/agent-registration.ts';
import { type CheckResult, type ProfileId, scoreSite } from '../../servers/features/scans/scoring.ts';
import { outboundResolver } from '../../servers/outbound/dns-lookup.ts';
import { createSafeFetch } from '../../servers/outbound/safe-fetch.ts';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server.ts';
import {
  type FixtureKind,
  type FixtureSite,
  scannerToken,
  startFixtureSite,
} from '../helpers/fixture-sites.ts';

const userAgent = `${scannerToken}/0.1.0`;
const limits: CrawlRequest['limits'] = {
  max_pages: 10,
  max_bytes: 1_000_000,
  request_timeout_ms: 3000,
  scan_timeout_ms: 30_000,
  concurrency: 4,
  delay_ms: 0,
  max_redirects: 5,
  max_sitemaps: 2,
};

function checkOf(facts: SiteFacts, id: string, profile?: ProfileId): CheckResult {
  const score = scoreSite(facts, null, null, profile ? { profile } : {});
  return score.components.flatMap((c) => c.checks).find((k) => k.id === id) as CheckResult;
}

describe('auth_md on fixture sites', () => {
  const facts = new Map<string, SiteFacts>();
  beforeAll(async () => {
    const fetch = createSafeFetch({ allowPrivateNetworks: true, timeoutMs: 3000, userAgent });
    const kinds: FixtureKind[] = ['agentRegistration', 'agentRegistrationBroken', 'blog', 'wellPrepared'];
    for (const kind of kinds) {
      const site = await startFixtureSite(kind);
      try {
        facts.set(
          kind,
          await crawlSite({ domain: site.domain, fetch, userAgent, limits, schemes: ['http'] }),
        );
      } finally {
        await site.close();
      }
    }
    await fetch.close?.();
  }, 60_000);

  it('passes a site whose auth.md, agent_auth block and endpoints all hold', () => {
    const f = facts.get('agentRegistration') as SiteFacts;
    expect(f.auth_md?.guide.valid).toBe(true);
    expect(f.auth_md?.agent_auth).toMatchObject({
      complete_types: ['anonymous', 'identity_assertion'],
      problems: [],
    });
    expect(f.auth_md?.endpoints.map((e) => [e.name, e.status, e.ok])).toEqual([
      ['skill', 200, true],
      ['register_uri', 405, true],
      ['claim_uri', 405, true],
      ['revocation_uri', 405, true],
    ]);
    const check = checkOf(f, 'auth_md');
    expect(check).toMatchObject({ status: 'pass', score: 1 });
    expect(check.evidence.some((e) => e.url.endsWith('/auth.md'))).toBe(true);
  });

  it('gives part marks for the pieces there, naming each missing one', () => {
    const f = facts.get('agentRegistrationBroken') as SiteFacts;
    const check = checkOf(f, 'auth_md');
    // The authorization server named (0.15) and one of two endpoints answering (0.1).
    expect(check).toMatchObject({ status: 'partial', score: 0.25 });
    expect(check.seen).toContain('/auth.md: an HTML page, not Markdown');
    expect(check.seen).toContain('no register_uri');
    expect(check.seen).toMatch(/claim_uri \S+\/agent\/auth\/claim HTTP 404/);
  });

  it('fails an API site that has OAuth but no auth.md and no agent_auth block', () => {
    const check = checkOf(facts.get('wellPrepared') as SiteFacts, 'auth_md');
    expect(check).toMatchObject({ status: 'partial', score: 0.15 });
    expect(check.seen).toContain('agent_auth: the metadata has no agent_auth object');
  });

  it('does not apply to a content site without OAuth metadata, unless it is scored as an API product', () => {
    const blog = facts.get('blog') as SiteFacts;
    expect(checkOf(blog, 'auth_md')).toMatchObject({ status: 'not_applicable', score: null });
    expect(checkOf(blog, 'auth_md', 'api')).toMatchObject({ status: 'fail', score: 0 });
    // A site scored as content that has OAuth metadata is asked for auth.md all the same.
    expect(checkOf(facts.get('agentRegistration') as SiteFacts, 'auth_md', 'content')).toMatchObject({
      status: 'pass',
    });
  });

  it('is unable to check facts stored before it existed', () => {
    const old = { ...(facts.get('agentRegistration') as SiteFacts) };
    delete old.auth_md;
    delete old.dns_aid;
    expect(checkOf(old, 'auth_md')).toMatchObject({ status: 'unable_to_check', score: null });
    expect(checkOf(old, 'dns_aid')).toMatchObject({ status: 'unable_to_check', score: null });
  });

  it('skips DNS-AID for a site scanned by IP address (no zone to publish in)', () => {
    const f = facts.get('agentRegistration') as SiteFacts;
    expect(f.dns_aid).toMatchObject({ lookup: 'skipped', records: [] });
    expect(checkOf(f, 'dns_aid')).toMatchObject({ status: 'no_data', score: null });
  });

  it('judges from the facts alone', () => {
    const f = facts.get('agentRegistration') as SiteFacts;
    expect(judgeAuthMd(f.auth_md as NonNullable<SiteFacts['auth_md']>).score).toBe(1);
  });
});

describe('dns_aid over loopback, records from a real DNS server', () => {
  let dns: TestDnsServer;
  let site: FixtureSite;
  let silent: Socket;
  const crawl = async (host: string, servers: string[], timeoutMs = 2000) => {
    const resolver = outboundResolver(servers, { timeoutMs });
    const fetch = createSafeFetch({
      allowPrivateNetworks: true,
      timeoutMs: 3000,
      userAgent,
      lookup: resolver.lookup,
    });
    try {
      return await crawlSite({
        domain: `${host}:${site.port}`,
        fetch,
        userAgent,
        limits,
        schemes: ['http'],
        resolveSvcb: resolver.resolveSvcb,
      });
    } finally {
      await fetch.close?.();
    }
  };

  beforeAll(async () => {
    dns = await startDnsServer();
    site = await startFixtureSite('agentRegistration');
    silent = createSocket('udp4');
    await new Promise<void>((resolve) => silent.bind(0, '127.0.0.1', resolve));
    const port = String(site.port);
    for (const host of [
      'agents.test',
      'www.agents.test',
      'broken.test',
      'quiet.test',
      'none.test',
      'gone.test',
    ])
      dns.a.set(host, ['127.0.0.1']);
    // The three well-known names: an MCP record with its card as `cap`, an A2A record whose agent card
    // is read, and the index as an HTTPS AliasMode record followed to the site's own ServiceMode one.
    dns.svcb.set('_mcp._agents.agents.test', [
      {
        priority: 1,
        target: 'agents.test',
        params: {
          mandatory: 'alpn,port',
          alpn: 'h2,http/1.1',
          port,
          key65400: `http://agents.test:${port}/.well-known/mcp/server-card.json`,
          key65402: 'mcp',
        },
      },
    ]);
    dns.svcb.set('_a2a._agents.agents.test', [
      { priority: 1, target: 'agents.test', params: { alpn: 'a2a', port } },
    ]);
    dns.https.set('_index._agents.agents.test', [{ priority: 0, target: 'agents.test', params: {} }]);
    dns.https.set('agents.test', [{ priority: 1, target: '.', params: { alpn: 'h2', port } }]);
    // broken.test: an MCP record whose capability document is missing, an A2A record without alpn.
    dns.svcb.set('_mcp._agents.broken.test', [
      {
        priority: 1,
        target: 'broken.test',
        params: { alpn: 'mcp', port, key65400: `http://broken.test:${port}/nope.json` },
      },
    ]);
    dns.svcb.set('_a2a._agents.broken.test', [{ priority: 1, target: 'broken.test', params: { port } }]);
    dns.svcb.set('_index._agents.broken.test', [
      { priority: 1, target: 'broken.test', params: { alpn: 'h2', port } },
    ]);
  });
  afterAll(async () => {
    silent?.close();
    await site?.close();
    await dns?.close();
  });

  it('passes an API site whose records all point at something that answers', async () => {
    const f = await crawl('www.agents.test', [dns.address]);
    expect(f.dns_aid?.domain).toBe('agents.test');
    expect(f.dns_aid?.lookup).toBe('done');
    const records = f.dns_aid?.records ?? [];
    expect(records.map((r) => [r.name, r.type, r.protocol, r.endpoint?.ok])).toEqual([
      ['_a2a._agents.agents.test', 'SVCB', 'a2a', true],
      ['_index._agents.agents.test', 'HTTPS', null, true],
      ['_mcp._agents.agents.test', 'SVCB', 'mcp', true],
    ]);
    expect(records[0]?.endpoint?.url).toBe(`http://agents.test:${site.port}/.well-known/agent-card.json`);
    expect(records[1]).toMatchObject({ alias_of: 'agents.test', target: 'agents.test' });
    expect(records[2]?.cap).toBe(`http://agents.test:${site.port}/.well-known/mcp/server-card.json`);
    expect(dns.questions).toContain('UNKNOWN_64 _mcp._agents.agents.test');
    const check = checkOf(f, 'dns_aid');
    expect(check).toMatchObject({ status: 'pass', score: 1 });
    expect(check.evidence.some((e) => e.url === 'dns:_mcp._agents.agents.test?type=SVCB')).toBe(true);
    // Informational for a content site: reported, not scored.
    expect(checkOf(f, 'dns_aid', 'content')).toMatchObject({ status: 'no_data', score: null });
  });

  it('scores the share of records that hold, saying what is wrong with the others', async () => {
    const f = await crawl('broken.test', [dns.address]);
    const check = checkOf(f, 'dns_aid');
    expect(check.score).toBeCloseTo(1 / 3, 2);
    expect(check.status).toBe('partial');
    expect(check.seen).toContain('_a2a._agents.broken.test SVCB -> broken.test (no alpn)');
    expect(check.seen).toContain('nope.json HTTP 404');
  });

  it('does not mark down a site without records: informational', async () => {
    const f = await crawl('none.test', [dns.address]);
    expect(f.dns_aid).toMatchObject({ lookup: 'done', records: [] });
    const check = checkOf(f, 'dns_aid');
    expect(check).toMatchObject({ status: 'no_data', score: null });
    expect(check.seen).toContain(
      'informational: the site publishes an MCP server card and an A2A agent card',
    );
  });

  it('is unable to check when no DNS server answers, within the scan budget', async () => {
    const quiet = `127.0.0.1:${(silent.address() as AddressInfo).port}`;
    // Names resolve through the real server; the SVCB questions go to one that never answers.
    const resolver = outboundResolver([quiet], { timeoutMs: 200 });
    const names = outboundResolver([dns.address]);
    const fetch = createSafeFetch({
      allowPrivateNetworks: true,
      timeoutMs: 3000,
      userAgent,
      lookup: names.lookup,
    });
    const f = await crawlSite({
      domain: `quiet.test:${site.port}`,
      fetch,
      userAgent,
      limits,
      schemes: ['http'],
      resolveSvcb: resolver.resolveSvcb,
    });
    await fetch.close?.();
    expect(f.dns_aid).toMatchObject({ lookup: 'failed', records: [] });
    expect(judgeDnsAid(f, f.dns_aid as NonNullable<SiteFacts['dns_aid']>, 'api')).toMatchObject({
      score: null,
      status: 'unable_to_check',
    });
    expect(checkOf(f, 'dns_aid').status).toBe('unable_to_check');
  });
});
