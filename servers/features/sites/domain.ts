/**
 * What a "domain" is in this service: a public host name (punycode, lowercase, no port), or - only
 * when `scanner.allow_private_networks` is on - `localhost[:PORT]` / `127.x.x.x[:PORT]`, so a local
 * fixture site can be registered, verified and scanned through the public endpoints.
 */
import { parse } from 'tldts';

export interface DomainPolicy {
  allowLocal: boolean;
}

export type DomainResult = { ok: true; domain: string } | { ok: false; message: string };

const LOCAL = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])(?::(\d{1,5}))?$/;

/** Accepts `example.com`, `https://www.example.com/page` (the host is kept) and trailing dots. */
export function normalizeDomain(raw: string, policy: DomainPolicy): DomainResult {
  let text = raw.trim().toLowerCase();
  if (text.includes('://')) {
    try {
      const url = new URL(text);
      if (url.protocol !== 'http:' && url.protocol !== 'https:')
        return { ok: false, message: 'must be a domain name' };
      text = url.host;
    } catch {
      return { ok: false, message: 'must be a domain name such as example.com' };
    }
  }
  text = text.replace(/[/?#].*$/, '').replace(/\.$/, '');
  const local = LOCAL.exec(text);
  if (local) {
    if (!policy.allowLocal) return { ok: false, message: 'must be a public domain name' };
    const port = local[2] === undefined ? undefined : Number(local[2]);
    if (port !== undefined && (port < 1 || port > 65535))
      return { ok: false, message: 'has an invalid port' };
    return { ok: true, domain: text };
  }
  if (text.includes(':')) return { ok: false, message: 'must not include a port' };
  let host: string;
  try {
    host = new URL(`http://${text}`).hostname;
  } catch {
    return { ok: false, message: 'must be a domain name such as example.com' };
  }
  const parsed = parse(host);
  if (parsed.isIp) return { ok: false, message: 'must be a domain name, not an IP address' };
  if (!parsed.domain || !parsed.isIcann || host.length > 253) {
    return { ok: false, message: 'must be a registrable domain name such as example.com' };
  }
  return { ok: true, domain: host };
}

export const isLocalDomain = (domain: string): boolean => LOCAL.test(domain);

/** The origin pages of a domain are fetched from: https for public names, http for local fixtures. */
export function siteOrigin(domain: string): string {
  return isLocalDomain(domain) ? `http://${domain}` : `https://${domain}`;
}
