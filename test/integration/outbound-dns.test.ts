/**
 * One setting for every outbound DNS lookup (`outbound.dns_servers`, `OUTBOUND_DNS_SERVERS`; issue
 * 29 "How it is checked"): with only it set, a whole local world resolves through one DNS server on
 * loopback - the brand webhook the general fetcher calls, a site the scanner's fetcher reads, the
 * TXT record of domain verification, live merchant resolution and mail domains (MX) - and a
 * feature's own list still overrides it for that feature. Once per dialect.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../servers/config.ts';
import { dialects } from '../helpers/databases.ts';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server.ts';
import { type FixtureSite, startFixtureSite } from '../helpers/fixture-sites.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/receivers.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

describe('OUTBOUND_DNS_SERVERS', () => {
  it('is read from the environment as a list and refuses what is not an IP address with a port', () => {
    const config = loadConfig({ env: { OUTBOUND_DNS_SERVERS: '127.0.0.1:5353, [::1]:53,192.0.2.53' } });
    expect(config.outbound.dns_servers).toEqual(['127.0.0.1:5353', '[::1]:53', '192.0.2.53']);
    expect(loadConfig({ env: {} }).outbound.dns_servers).toEqual([]);
    expect(() => loadConfig({ env: { OUTBOUND_DNS_SERVERS: 'dns.example.com' } })).toThrow(
      /outbound\.dns_servers\.0: must be an IP address.*\[from environment OUTBOUND_DNS_SERVERS\]/,
    );
  });
});

describe.each(dialects)('one outbound DNS setting (%s)', (dialect) => {
  let dns: TestDnsServer;
  let own: TestDnsServer;
  let service: TestService;
  let receiver: WebhookReceiver;
  let merchant: FixtureSite;
  let site: http.Server;
  let sitePort: number;

  beforeAll(async () => {
    dns = await startDnsServer();
    own = await startDnsServer();
    receiver = await startWebhookReceiver();
    merchant = await startFixtureSite('merchant');
    site = http.createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' }).end(`hello ${req.headers.host}`);
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    sitePort = (site.address() as AddressInfo).port;
    for (const name of ['hooks.northwind-returns.com', 'www.readiness-shop.com', 'halcyonroasters.com']) {
      dns.a.set(name, ['127.0.0.1']);
    }
    service = await startTestService(dialect, {
      'outbound.dns_servers': [dns.address],
      'scanner.allow_private_networks': true,
      'charges.live_resolution.enabled': true,
      'charges.live_resolution.time_budget_ms': 30_000,
      'charges.live_resolution.home_page_scheme': 'http',
      'charges.live_resolution.home_page_port': merchant.port,
      'rate_limits.unauthenticated_writes.points': 1000,
    });
  });
  afterAll(async () => {
    await service?.close();
    await receiver?.close();
    await merchant?.close();
    site?.closeAllConnections();
    await new Promise<void>((resolve) => (site ? site.close(() => resolve()) : resolve()));
    await dns?.close();
    await own?.close();
  });

  const api = (path: string, init: RequestInit = {}, key?: string) =>
    fetch(`${service.config.public_api_url}${path}`, {
      ...init,
      headers: {
        ...(init.body ? { 'content-type': 'application/json' } : {}),
        ...(key ? { 'x-service-key': key } : {}),
      },
    });

  it('delivers a brand webhook to a host name the DNS server resolves (the general fetcher)', async () => {
    const domain = `northwind-returns-${dialect}.com`;
    const url = new URL(receiver.url);
    url.hostname = 'hooks.northwind-returns.com';
    await service.services.returns.connectBrandChannel({
      brand_domain: domain,
      webhook_url: url.href,
      webhook_secret: receiver.secret,
      email: null,
    });
    const res = await fetch(`${service.config.base_url}/return`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ brand_domain: domain, name: 'Jane Doe', contact: 'jane@example.com' }),
    });
    expect(res.status).toBe(200);
    await receiver.waitFor(() => receiver.processed.size === 1);
    expect(receiver.requests[0]?.headers.host).toBe(`hooks.northwind-returns.com:${url.port}`);
    expect(dns.questions).toContain('A hooks.northwind-returns.com');
  });

  it("reads a site by name through the scanner's fetcher", async () => {
    const res = await service.services.siteFetch(`http://www.readiness-shop.com:${sitePort}/`);
    expect(await res.text()).toBe(`hello www.readiness-shop.com:${sitePort}`);
    expect(dns.questions).toContain('A www.readiness-shop.com');
  });

  it("asks the same server for the scanner's DNS-AID records (SVCB, over UDP)", async () => {
    const record = {
      priority: 1,
      target: 'www.readiness-shop.com',
      params: { alpn: 'h2', port: String(sitePort) },
    };
    dns.svcb.set('_mcp._agents.readiness-shop.com', [record]);
    // The resolver the scans are given (`services.ts`: `resolveSvcb: dns.resolveSvcb`).
    expect(await service.services.dns.resolveSvcb('_mcp._agents.readiness-shop.com')).toEqual([record]);
    expect(dns.questions).toContain('UNKNOWN_64 _mcp._agents.readiness-shop.com');
  });

  it('names an unknown merchant from its site (live resolution)', async () => {
    const res = await fetch(
      `${service.config.base_url}/agent?charge=${encodeURIComponent('SQ *HALCYON ROASTERS OAKLAND CA')}`,
    );
    const body = await res.json();
    expect(body.resolution).toMatchObject({ status: 'resolved', domain: 'halcyonroasters.com' });
  });

  it('asks mail exchangers of a domain', async () => {
    dns.mx.set('northwind-returns.com', [{ exchange: 'mx.northwind-returns.com', preference: 10 }]);
    expect(await service.services.dns.resolveMx('northwind-returns.com')).toEqual([
      expect.objectContaining({ exchange: 'mx.northwind-returns.com', priority: 10 }),
    ]);
  });

  it('verifies a site by its TXT record, and a feature whose own servers are set asks those instead', async () => {
    const account = await (
      await api('/account', {
        method: 'POST',
        body: JSON.stringify({
          email: `dns-${dialect}-${Date.now()}@example.com`,
          password: 'correct horse',
        }),
      })
    ).json();
    const key = account.key.service_key as string;
    const domain = `txt-${dialect}.readiness-shop.com`;
    const installed = await (
      await api('/pixel-install', { method: 'POST', body: JSON.stringify({ domain }) }, key)
    ).json();
    dns.txt.set(domain, [installed.verification.dns.value]);
    const verified = await (await api(`/sites/${installed.site_id}/verify`, { method: 'POST' }, key)).json();
    expect(verified).toMatchObject({ verified: true, verification_method: 'dns' });
    expect(dns.questions).toContain(`TXT ${domain}`);

    // `sites.verification_dns_servers` overrides the outbound list for TXT records only.
    const overridden = await startTestService(
      dialect,
      {
        'outbound.dns_servers': [dns.address],
        'sites.verification_dns_servers': [own.address],
        'scanner.allow_private_networks': true,
      },
      { database: service.db },
    );
    try {
      const other = `own-${dialect}.readiness-shop.com`;
      const second = await (
        await fetch(`${overridden.config.public_api_url}/pixel-install`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-service-key': key },
          body: JSON.stringify({ domain: other }),
        })
      ).json();
      own.txt.set(other, [second.verification.dns.value]);
      const asked = dns.questions.length;
      const result = await (
        await fetch(`${overridden.config.public_api_url}/sites/${second.site_id}/verify`, {
          method: 'POST',
          headers: { 'x-service-key': key },
        })
      ).json();
      expect(result).toMatchObject({ verified: true, verification_method: 'dns' });
      expect(own.questions).toContain(`TXT ${other}`);
      expect(dns.questions.slice(asked)).not.toContain(`TXT ${other}`);
    } finally {
      await overridden.close();
    }
  });
});
