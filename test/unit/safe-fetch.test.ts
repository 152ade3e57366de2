import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSafeFetch, isLoopbackAddress, isPublicAddress } from '../../servers/outbound/safe-fetch.ts';

let server: http.Server;
let port: number;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    if (req.url === '/redirect-private') {
      res.writeHead(302, { location: `http://127.0.0.2:${port}/ok` }).end();
      return;
    }
    res.writeHead(200).end('ok');
  });
  await new Promise<void>((r) => server.listen(0, '0.0.0.0', () => r()));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe('SSRF-safe fetch', () => {
  it('classifies addresses', () => {
    for (const a of [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      'fc00::1',
      'fe80::1',
      '::ffff:127.0.0.1',
      '224.0.0.1',
    ]) {
      expect(isPublicAddress(a), a).toBe(false);
    }
    for (const a of ['93.184.216.34', '1.1.1.1', '2606:4700:4700::1111'])
      expect(isPublicAddress(a), a).toBe(true);
  });

  it('refuses loopback, private literals, names resolving to them, and non-http schemes by default', async () => {
    const safe = createSafeFetch({ allowPrivateNetworks: false, timeoutMs: 2000, userAgent: 'test' });
    try {
      for (const url of [
        `http://127.0.0.1:${port}/ok`,
        `http://localhost:${port}/ok`,
        `http://[::1]:${port}/ok`,
        'http://169.254.169.254/latest/meta-data/',
        'http://10.0.0.1/',
      ]) {
        await expect(safe(url), url).rejects.toThrow();
      }
      await expect(safe('file:///etc/passwd')).rejects.toThrow(/only http and https/);
      await expect(safe('http://user:pw@example.com/')).rejects.toThrow(/credentials/);
    } finally {
      await safe.close();
    }
  });

  it('with allowLoopback reaches this machine and nothing else private (development mode scans)', async () => {
    for (const a of ['127.0.0.1', '127.0.0.2', '::1', '::ffff:127.0.0.1'])
      expect(isLoopbackAddress(a), a).toBe(true);
    for (const a of ['10.1.2.3', '192.168.1.1', '169.254.169.254', 'fc00::1', '0.0.0.0', '93.184.216.34'])
      expect(isLoopbackAddress(a), a).toBe(false);
    const safe = createSafeFetch({
      allowPrivateNetworks: false,
      allowLoopback: true,
      timeoutMs: 2000,
      userAgent: 'test',
    });
    try {
      expect(await (await safe(`http://127.0.0.1:${port}/ok`)).text()).toBe('ok');
      expect(await (await safe(`http://127.0.0.2:${port}/ok`)).text()).toBe('ok');
      for (const url of [
        'http://169.254.169.254/latest/meta-data/',
        'http://10.0.0.1/',
        'http://192.168.1.1/',
      ]) {
        const refused = await safe(url).catch((err: Error) => err);
        expect((refused as Error & { cause?: Error }).cause?.name, url).toBe('BlockedDestinationError');
      }
    } finally {
      await safe.close();
    }
  });

  it('checks every redirect hop, not only the first URL', async () => {
    // Policy for this test: 127.0.0.1 is reachable, 127.0.0.2 (also loopback on Linux) is not.
    const safe = createSafeFetch({
      allowPrivateNetworks: false,
      timeoutMs: 2000,
      userAgent: 'test',
      allowAddress: (address) => address === '127.0.0.1',
    });
    try {
      expect(await (await safe(`http://127.0.0.1:${port}/ok`)).text()).toBe('ok');
      const blocked = await safe(`http://127.0.0.1:${port}/redirect-private`).catch((err: Error) => err);
      expect((blocked as Error & { cause?: Error }).cause?.name).toBe('BlockedDestinationError');
      const manual = await safe(`http://127.0.0.1:${port}/redirect-private`, { redirect: 'manual' });
      expect(manual.status).toBe(302);
    } finally {
      await safe.close();
    }
  });
});
