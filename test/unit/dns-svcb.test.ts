/**
 * SVCB and HTTPS records (RFC 9460): the RDATA codec (`servers/outbound/svcb.ts`) and the outbound
 * resolver's SVCB query over UDP (`servers/outbound/dns-lookup.ts`) against a real DNS server on
 * loopback.
 */
import { createSocket } from 'node:dgram';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outboundResolver } from '../../servers/outbound/dns-lookup.ts';
import { decodeSvcb, encodeSvcb, type SvcbRecord } from '../../servers/outbound/svcb.ts';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server.ts';

const mcp: SvcbRecord = {
  priority: 1,
  target: 'mcp.example.com',
  params: {
    mandatory: 'alpn,port',
    alpn: 'h2,http/1.1',
    port: '8443',
    ipv4hint: '192.0.2.1,192.0.2.2',
    ipv6hint: '2001:db8::1',
    key65400: 'https://mcp.example.com/mcp/server-card',
    key65402: 'mcp',
  },
};

describe('SVCB RDATA (RFC 9460 section 2.2)', () => {
  it('round-trips every parameter kind, custom keys as text', () => {
    expect(decodeSvcb(encodeSvcb(mcp))).toEqual(mcp);
  });

  it('reads the example of RFC 9460 appendix D.2 (alpn with a port)', () => {
    // "SVCB 16 foo.example.org. alpn=h2,h3-19 port=53" in wire form, byte for byte.
    const wire = Buffer.from(
      '0010' + '03666f6f076578616d706c65036f726700' + '00010009' + '026832' + '0568332d3139' + '000300020035',
      'hex',
    );
    expect(decodeSvcb(wire)).toEqual({
      priority: 16,
      target: 'foo.example.org',
      params: { alpn: 'h2,h3-19', port: '53' },
    });
  });

  it('gives "." for a record that names its owner, and refuses a cut record', () => {
    expect(decodeSvcb(encodeSvcb({ priority: 0, target: '.', params: {} })).target).toBe('.');
    expect(() => decodeSvcb(encodeSvcb(mcp).subarray(0, 30))).toThrow();
  });
});

describe('outboundResolver().resolveSvcb over UDP', () => {
  let dns: TestDnsServer;
  beforeAll(async () => {
    dns = await startDnsServer();
    dns.svcb.set('_mcp._agents.example.com', [mcp]);
    dns.https.set('_index._agents.example.com', [
      { priority: 1, target: 'example.com', params: { alpn: 'h2' } },
    ]);
    dns.a.set('example.com', ['192.0.2.10']);
  });
  afterAll(() => dns?.close());

  it('answers the records of the type asked, and none for NXDOMAIN or no data', async () => {
    const resolver = outboundResolver([dns.address]);
    expect(await resolver.resolveSvcb('_mcp._agents.example.com')).toEqual([mcp]);
    expect(await resolver.resolveSvcb('_index._agents.example.com', 'HTTPS')).toEqual([
      { priority: 1, target: 'example.com', params: { alpn: 'h2' } },
    ]);
    expect(await resolver.resolveSvcb('_index._agents.example.com', 'SVCB')).toEqual([]);
    expect(await resolver.resolveSvcb('_a2a._agents.example.com')).toEqual([]);
    expect(dns.questions).toContain('UNKNOWN_64 _mcp._agents.example.com');
  });

  it('rejects with ETIMEOUT when the server never answers, and tries the next server', async () => {
    const silent = createSocket('udp4');
    await new Promise<void>((resolve) => silent.bind(0, '127.0.0.1', resolve));
    const quiet = `127.0.0.1:${(silent.address() as AddressInfo).port}`;
    try {
      await expect(
        outboundResolver([quiet], { timeoutMs: 200 }).resolveSvcb('_mcp._agents.example.com'),
      ).rejects.toMatchObject({ code: 'ETIMEOUT' });
      expect(
        await outboundResolver([quiet, dns.address], { timeoutMs: 200 }).resolveSvcb(
          '_mcp._agents.example.com',
        ),
      ).toEqual([mcp]);
    } finally {
      silent.close();
    }
  });
});
