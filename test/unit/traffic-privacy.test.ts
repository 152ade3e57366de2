/** What of a visitor is kept: the network prefix of its address, the path of a page, a referrer's host. */
import { describe, expect, it } from 'vitest';
import { networkPrefix, pagePath, urlHost } from '../../servers/features/traffic/privacy.ts';

describe('networkPrefix', () => {
  it.each([
    ['203.0.113.77', '203.0.113.0/24'],
    ['255.255.255.255', '255.255.255.0/24'],
    ['0.0.0.0', '0.0.0.0/24'],
    // Forms a header may carry: padded, IPv4-mapped IPv6, octal parts.
    [' 203.0.113.77 ', '203.0.113.0/24'],
    ['::ffff:203.0.113.77', '203.0.113.0/24'],
    ['010.0.0.1', '8.0.0.0/24'],
    ['2001:db8:abcd:12:1:2:3:4', '2001:db8:abcd::/48'],
    ['[2001:db8::1]', '2001:db8::/48'],
  ])('keeps %j as %j', (ip, prefix) => {
    expect(networkPrefix(ip)).toBe(prefix);
  });

  it.each([[''], [null], [undefined], ['not an address'], ['1.2.3.4.5'], ['256.1.1.1']])(
    'keeps nothing of %j',
    (ip) => {
      expect(networkPrefix(ip)).toBeNull();
    },
  );
});

describe('pagePath and urlHost', () => {
  it('keeps the path of a page, never its query or fragment', () => {
    expect(pagePath('https://shop.example/p/42?email=a@b.c#x')).toBe('/p/42');
    expect(pagePath('/docs/a?q=secret')).toBe('/docs/a');
    expect(pagePath(`/${'a'.repeat(600)}`)).toHaveLength(512);
  });

  it('keeps the host of a referrer, lower case, or nothing', () => {
    expect(urlHost('https://ChatGPT.com/c/123?q=x')).toBe('chatgpt.com');
    expect(urlHost('http://localhost:8080/')).toBe('localhost:8080');
    expect(urlHost('not a url')).toBeNull();
    expect(urlHost(undefined)).toBeNull();
  });
});
