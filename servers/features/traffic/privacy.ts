/**
 * What of a visitor is kept: never the IP address, only its network prefix (/24 for IPv4, /48 for
 * IPv6: the granularity of an ISP's customer block, enough to tell networks apart and count
 * regions, not to single out a household); never the query string of a page or a referrer (they
 * carry search terms, session ids and email addresses), only the path and the referrer's host.
 */
import { isIPv4 } from 'node:net';
import ipaddr from 'ipaddr.js';

/** The /24 (IPv4) or /48 (IPv6) network of an address, or null when it is none. */
export function networkPrefix(ip: string | null | undefined): string | null {
  if (!ip) return null;
  // A socket's peer, as every pixel hit has one: dotted decimal, the prefix its first three parts.
  if (isIPv4(ip)) return `${ip.slice(0, ip.lastIndexOf('.'))}.0/24`;
  let address: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    address = ipaddr.parse(ip.trim().replace(/^\[|\]$/g, ''));
  } catch {
    return null;
  }
  if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()) {
    address = (address as ipaddr.IPv6).toIPv4Address();
  }
  if (address.kind() === 'ipv4') {
    const [a, b, c] = address.toByteArray();
    return `${a}.${b}.${c}.0/24`;
  }
  const parts = (address as ipaddr.IPv6).parts;
  return `${new ipaddr.IPv6([parts[0] ?? 0, parts[1] ?? 0, parts[2] ?? 0, 0, 0, 0, 0, 0]).toString()}/48`;
}

const MAX_PATH = 512;

/** The path of a page URL (absolute, or a path as servers log it), without query or fragment. */
export function pagePath(url: string): string {
  let path: string;
  try {
    path = new URL(url, 'http://path.invalid').pathname;
  } catch {
    path = '/';
  }
  return path.length > MAX_PATH ? path.slice(0, MAX_PATH) : path;
}

/** Host of a URL (lower case, with a non-default port), or null. */
export function urlHost(url: string | null | undefined): string | null {
  if (!url) return null;
  try {
    return new URL(url).host.toLowerCase() || null;
  } catch {
    return null;
  }
}
