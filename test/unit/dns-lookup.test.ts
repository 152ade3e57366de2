/**
 * The outbound resolver factory (`servers/outbound/dns-lookup.ts`) against a real DNS server on
 * loopback: what its `lookup` answers for the safe fetcher, and its record queries.
 */
import type { LookupAddress } from 'node:dns';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outboundResolver } from '../../servers/outbound/dns-lookup.ts';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server.ts';

describe('outboundResolver', () => {
  let dns: TestDnsServer;
  beforeAll(async () => {
    dns = await startDnsServer();
    dns.a.set('shop.example.com', ['192.0.2.10']);
    dns.aaaa.set('shop.example.com', ['2001:db8::10']);
    dns.mx.set('shop.example.com', [{ exchange: 'mx.shop.example.com', preference: 5 }]);
    dns.txt.set('shop.example.com', ['v=spf1 -all']);
  });
  afterAll(() => dns?.close());

  const lookupAll = (hostname: string, family = 0) =>
    new Promise<LookupAddress[]>((resolve, reject) =>
      outboundResolver([dns.address]).lookup(hostname, { all: true, family }, (err, list) =>
        err ? reject(err) : resolve(list as unknown as LookupAddress[]),
      ),
    );

  it('asks the named servers for A and AAAA records, by family', async () => {
    expect(await lookupAll('shop.example.com')).toEqual([
      { address: '192.0.2.10', family: 4 },
      { address: '2001:db8::10', family: 6 },
    ]);
    expect(await lookupAll('shop.example.com', 6)).toEqual([{ address: '2001:db8::10', family: 6 }]);
  });

  it('answers IP literals and localhost names without asking (RFC 6761 section 6.3)', async () => {
    const asked = dns.questions.length;
    expect(await lookupAll('192.0.2.1')).toEqual([{ address: '192.0.2.1', family: 4 }]);
    expect(await lookupAll('api.localhost', 4)).toEqual([{ address: '127.0.0.1', family: 4 }]);
    expect(dns.questions.length).toBe(asked);
  });

  it('fails a name the server does not know with ENOTFOUND', async () => {
    await expect(lookupAll('nowhere.example.com')).rejects.toMatchObject({ code: 'ENOTFOUND' });
  });

  it('queries MX and TXT records of the same servers', async () => {
    const resolver = outboundResolver([dns.address]);
    expect(await resolver.resolveMx('shop.example.com')).toEqual([
      expect.objectContaining({ exchange: 'mx.shop.example.com', priority: 5 }),
    ]);
    expect(await resolver.resolveTxt('shop.example.com')).toEqual([['v=spf1 -all']]);
    await expect(resolver.resolveMx('nowhere.example.com')).rejects.toMatchObject({ code: 'ENOTFOUND' });
  });
});
