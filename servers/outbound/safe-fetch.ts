/**
 * Outbound HTTP for URLs that users or brands supply: only http(s), and every connection - the
 * first and each redirect hop - goes to a public unicast address. Names are resolved by our own
 * lookup, checked with ipaddr.js, and the connection is made to the checked address, so DNS
 * rebinding between check and connect is not possible. Loopback and private ranges are allowed
 * only with `outbound.allow_private_networks` (tests, self-hosting).
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { Agent, buildConnector, fetch, Headers, type RequestInit, type Response } from 'undici';
import { invalid } from '../errors.ts';

export class BlockedDestinationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BlockedDestinationError';
  }
}

/** True for addresses that are routable on the public internet (ipaddr.js range `unicast`). */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
    parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  }
  return parsed.range() === 'unicast';
}

/** True for this machine's own addresses: 127.0.0.0/8, ::1 and their IPv4-mapped forms. */
export function isLoopbackAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
    parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  }
  return parsed.range() === 'loopback';
}

export interface SafeFetchOptions {
  allowPrivateNetworks: boolean;
  /**
   * Lets connections reach loopback addresses (this machine) and nothing else private: the
   * scanner's `localSitesAllowed` in development mode. Implied by `allowPrivateNetworks`.
   */
  allowLoopback?: boolean;
  timeoutMs: number;
  userAgent: string;
  /** Overrides the address policy (tests exercise redirect checks with it). */
  allowAddress?: (address: string) => boolean;
  /** Name resolution, `dns.lookup` by default (tests stand in a rebinding resolver). */
  lookup?: typeof dnsLookup;
}

export interface SafeFetch {
  (url: string | URL, init?: RequestInit): Promise<Response>;
  /**
   * Why this fetcher would refuse to call `url`, checked now (when a URL is registered, so the one
   * who registers it learns at once), or null. Fetching checks again at connect time: a name that
   * resolves to a public address today may not tomorrow.
   */
  destinationProblem(url: string): Promise<string | null>;
  close(): Promise<void>;
}

export function createSafeFetch(options: SafeFetchOptions): SafeFetch {
  const allowed =
    options.allowAddress ??
    ((address: string) =>
      options.allowPrivateNetworks ||
      isPublicAddress(address) ||
      (options.allowLoopback === true && isLoopbackAddress(address)));
  const resolve = options.lookup ?? dnsLookup;
  const guardedLookup: LookupFunction = (hostname, lookupOptions, callback) => {
    resolve(hostname, { ...lookupOptions, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const list = addresses as unknown as LookupAddress[];
      const blocked = list.find((a) => !allowed(a.address));
      if (blocked || list.length === 0) {
        return callback(new BlockedDestinationError(`${hostname} resolves to a non-public address`), '', 0);
      }
      if (lookupOptions.all) return callback(null, list as never, 0);
      const first = list[0] as LookupAddress;
      return callback(null, first.address, first.family);
    });
  };

  // Every connection passes here, redirects included; IP literals never reach the lookup hook.
  const baseConnect = buildConnector({ lookup: guardedLookup, timeout: options.timeoutMs });
  const connect: buildConnector.connector = (connectOptions, callback) => {
    const host = connectOptions.hostname.replace(/^\[|\]$/g, '');
    if (ipaddr.isValid(host) && !allowed(host)) {
      return callback(new BlockedDestinationError(`${host} is not a public address`), null);
    }
    return baseConnect(connectOptions, callback);
  };
  const agent = new Agent({
    connect,
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
  });

  const safeFetch = (async (input: string | URL, init: RequestInit = {}) => {
    const url = new URL(input);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new BlockedDestinationError(`only http and https URLs are fetched (got ${url.protocol})`);
    }
    if (url.username || url.password)
      throw new BlockedDestinationError('URLs with credentials are not fetched');
    const headers = new Headers(init.headers);
    if (!headers.has('user-agent')) headers.set('user-agent', options.userAgent);
    return fetch(url, {
      ...init,
      headers,
      dispatcher: agent,
      signal: init.signal ?? AbortSignal.timeout(options.timeoutMs),
    });
  }) as SafeFetch;
  safeFetch.destinationProblem = async (input: string) => {
    let url: URL;
    try {
      url = new URL(input);
    } catch {
      return 'must be an absolute URL';
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http or https URL';
    if (url.username || url.password) return 'must not carry credentials (user:password@)';
    if (options.allowPrivateNetworks && !options.allowAddress) return null;
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (ipaddr.isValid(host))
      return allowed(host) ? null : `must not point at a non-public address (${host})`;
    let addresses: LookupAddress[];
    try {
      addresses = await new Promise<LookupAddress[]>((ok, fail) =>
        resolve(host, { all: true }, (err, list) =>
          err ? fail(err) : ok(list as unknown as LookupAddress[]),
        ),
      );
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // A name that does not exist is the registrant's mistake; a resolver failure is not: the
      // check at connect time still applies.
      return code === 'ENOTFOUND' || code === 'ENODATA'
        ? `names a host that does not resolve (${host})`
        : null;
    }
    const blocked = addresses.find((a) => !allowed(a.address));
    return blocked ? `names a host that resolves to a non-public address (${host})` : null;
  };
  safeFetch.close = () => agent.close();
  return safeFetch;
}

/**
 * Refuses, with a 400 naming `field`, a URL that `fetch` would not call: for URLs that are stored now
 * and called later (brand webhooks, agents' callbacks).
 */
export async function requireCallableDestination(
  fetch: SafeFetch,
  url: string,
  field: string,
): Promise<void> {
  const problem = await fetch.destinationProblem(url);
  if (problem) throw invalid([{ field, message: problem }]);
}

export interface LimitedBody {
  bytes: Buffer;
  /** True when the body was longer than the limit: only the first `maxBytes` were kept. */
  truncated: boolean;
}

/**
 * Reads at most `maxBytes` of a response body and cancels the stream past that, so a hostile or
 * endless body costs the limit, not memory. A `Content-Length` above the limit is refused unread.
 */
export async function readLimitedBody(response: Response, maxBytes: number): Promise<LimitedBody> {
  const declared = Number(response.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel().catch(() => {});
    return { bytes: Buffer.alloc(0), truncated: true };
  }
  if (!response.body) return { bytes: Buffer.alloc(0), truncated: false };
  const chunks: Buffer[] = [];
  let size = 0;
  const reader = response.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { bytes: Buffer.concat(chunks, size), truncated: false };
      const room = maxBytes - size;
      if (value.byteLength > room) {
        chunks.push(Buffer.from(value.buffer, value.byteOffset, room));
        size += room;
        await reader.cancel().catch(() => {});
        return { bytes: Buffer.concat(chunks, size), truncated: true };
      }
      chunks.push(Buffer.from(value.buffer, value.byteOffset, value.byteLength));
      size += value.byteLength;
    }
  } finally {
    reader.releaseLock();
  }
}
