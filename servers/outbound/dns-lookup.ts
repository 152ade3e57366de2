/**
 * The one place outbound DNS is asked (`outbound.dns_servers`, `OUTBOUND_DNS_SERVERS`): the safe
 * fetchers' name lookups, TXT records for domain verification, MX and A/AAAA for the mail domains
 * of brand channels. A feature may name its own servers (`sites.verification_dns_servers`,
 * `charges.live_resolution.dns_servers`); those override the outbound ones for that feature.
 * With no servers named, names are resolved as the system does (`dns.lookup`, i.e. getaddrinfo
 * with /etc/hosts, and the system's resolver configuration for records).
 *
 * With servers named, lookups go to them over the wire (`dns.Resolver`), so a whole local test world
 * (brand sites, mail domains, scanned sites) resolves through one DNS server. The safe fetcher still
 * checks every address a lookup returns before it connects (`safe-fetch.ts`).
 *
 * SVCB and HTTPS records (RFC 9460; the scanner's DNS-AID check) are beyond `dns.Resolver`, so they
 * are asked over UDP with dns-packet, of the same servers, or of the system resolver's
 * (`dns.getServers()`) when none are named.
 */
import { randomInt } from 'node:crypto';
import { createSocket } from 'node:dgram';
import {
  type lookup as dnsLookup,
  getServers,
  type LookupAddress,
  type MxRecord,
  lookup as systemLookup,
} from 'node:dns';
import { Resolver } from 'node:dns/promises';
import { isIP } from 'node:net';
import * as packet from 'dns-packet';
import ipaddr from 'ipaddr.js';
import { z } from 'zod';
import { decodeSvcb, HTTPS_TYPE, SVCB_TYPE, type SvcbRecord } from './svcb.ts';

/**
 * A DNS server as `dns.Resolver.setServers` takes it: `ip`, `ip:port`, `[ipv6]` or `[ipv6]:port`.
 * Checked with the configuration, so a typo is a start-up error naming the key, not a crash.
 */
export const DnsServer = z
  .string()
  .refine(
    (value) => dnsServerProblem(value) === null,
    'must be an IP address with an optional port: 192.0.2.53, 192.0.2.53:5353, [2001:db8::53]:53',
  );

function dnsServerProblem(value: string): string | null {
  const { host, port } = splitServer(value);
  if (!isIP(host)) return 'not an IP address';
  if (port !== undefined && (port < 1 || port > 65535)) return 'bad port';
  return null;
}

function splitServer(value: string): { host: string; port: number | undefined } {
  const bracketed = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(value);
  const plain = /^([\d.]+)(?::(\d{1,5}))?$/.exec(value);
  const host = bracketed?.[1] ?? plain?.[1] ?? value;
  const port = bracketed?.[2] ?? plain?.[2];
  return { host, port: port === undefined ? undefined : Number(port) };
}

/** The servers a feature asks: its own when it names some, else the outbound ones. */
export function dnsServersFor(
  config: { outbound: { dns_servers: readonly string[] } },
  own: readonly string[] = [],
): readonly string[] {
  return own.length > 0 ? own : config.outbound.dns_servers;
}

export interface OutboundResolver {
  /** The servers asked; empty: the system resolver. */
  readonly servers: readonly string[];
  /** A `dns.lookup` for `createSafeFetch({ lookup })` and anything else that connects by name. */
  readonly lookup: typeof dnsLookup;
  resolveTxt(name: string): Promise<string[][]>;
  resolveMx(name: string): Promise<MxRecord[]>;
  resolve4(name: string): Promise<string[]>;
  resolve6(name: string): Promise<string[]>;
  /**
   * SVCB (or HTTPS) records of `name`; none for NXDOMAIN or no data. Rejects, with a `code` as
   * `dns.Resolver` gives one (`ETIMEOUT`, `ESERVFAIL` ...), when no server answered.
   */
  resolveSvcb(name: string, type?: 'SVCB' | 'HTTPS', signal?: AbortSignal): Promise<SvcbRecord[]>;
}

/** The SVCB query alone, for a part that needs only it (the scanner's DNS-AID phase). */
export type SvcbResolver = OutboundResolver['resolveSvcb'];

export interface OutboundResolverOptions {
  /** Per query (c-ares `timeout`), default 2000 ms. */
  timeoutMs?: number;
  /** Attempts per query and server (c-ares `tries`), default 1. */
  tries?: number;
}

/** The resolver of `servers` (empty: the system's). One factory for every outbound lookup. */
export function outboundResolver(
  servers: readonly string[],
  options: OutboundResolverOptions = {},
): OutboundResolver {
  const resolver = new Resolver({ timeout: options.timeoutMs ?? 2000, tries: options.tries ?? 1 });
  if (servers.length > 0) resolver.setServers([...servers]);
  return {
    servers: [...servers],
    lookup: servers.length > 0 ? resolverLookup(resolver) : systemLookup,
    resolveTxt: (name) => resolver.resolveTxt(name),
    resolveMx: (name) => resolver.resolveMx(name),
    resolve4: (name) => resolver.resolve4(name),
    resolve6: (name) => resolver.resolve6(name),
    resolveSvcb: (name, type = 'SVCB', signal) =>
      querySvcb(servers.length > 0 ? servers : getServers(), name, type, options.timeoutMs ?? 2000, signal),
  };
}

/** Asks each server in turn until one answers (c-ares does the same for the other types). */
async function querySvcb(
  servers: readonly string[],
  name: string,
  type: 'SVCB' | 'HTTPS',
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<SvcbRecord[]> {
  let failure: Error = Object.assign(new Error('no DNS server to ask'), { code: 'ECONNREFUSED' });
  for (const server of servers) {
    if (signal?.aborted) break;
    try {
      return await askOnce(server, name, type === 'SVCB' ? SVCB_TYPE : HTTPS_TYPE, timeoutMs, signal);
    } catch (err) {
      failure = err as Error;
    }
  }
  throw failure;
}

const dnsError = (code: string, message: string) => Object.assign(new Error(message), { code });

/** One UDP question to one server; the answer's records of that type, whatever name they carry (after a CNAME). */
function askOnce(
  server: string,
  name: string,
  typeNumber: number,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<SvcbRecord[]> {
  const { host, port } = splitServer(server);
  const socket = createSocket(isIP(host) === 6 ? 'udp6' : 'udp4');
  const id = randomInt(0, 65536);
  const typeName = `UNKNOWN_${typeNumber}` as packet.RecordType;
  return new Promise<SvcbRecord[]>((resolve, reject) => {
    const finish = (err: Error | null, records: SvcbRecord[] = []) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', aborted);
      socket.close();
      if (err) reject(err);
      else resolve(records);
    };
    const aborted = () => finish(dnsError('ECANCELLED', `query for ${name} cancelled`));
    const timer = setTimeout(
      () => finish(dnsError('ETIMEOUT', `no answer for ${name} from ${server}`)),
      timeoutMs,
    );
    signal?.addEventListener('abort', aborted, { once: true });
    socket.on('error', (err) => finish(err));
    socket.on('message', (message) => {
      let reply: packet.Packet;
      try {
        reply = packet.decode(message);
      } catch {
        return; // not a DNS message: keep waiting for the real answer
      }
      if (reply.id !== id) return;
      const rcode = (reply.flags ?? 0) & 0xf;
      if (rcode === 3) return finish(null, []);
      if (rcode !== 0)
        return finish(dnsError(rcode === 5 ? 'EREFUSED' : 'ESERVFAIL', `rcode ${rcode} for ${name}`));
      if ((reply.flags ?? 0) & packet.TRUNCATED_RESPONSE)
        return finish(dnsError('EBADRESP', `the answer for ${name} was truncated`));
      try {
        const records = (reply.answers ?? [])
          .filter((a) => a.type === typeName)
          .map((a) => decodeSvcb((a as { data: Buffer }).data));
        finish(null, records);
      } catch (err) {
        finish(dnsError('EBADRESP', `malformed record for ${name}: ${(err as Error).message}`));
      }
    });
    const query = packet.encode({
      type: 'query',
      id,
      flags: packet.RECURSION_DESIRED,
      questions: [{ type: typeName, name: name.replace(/\.$/, ''), class: 'IN' }],
    });
    socket.send(query, port ?? 53, host);
  });
}

/** `localhost` and `*.localhost` are loopback without asking anyone (RFC 6761 section 6.3). */
const localhostName = /^(?:.+\.)?localhost\.?$/i;

/** A `dns.lookup` stand-in that asks the resolver's servers for A and AAAA records. */
function resolverLookup(resolver: Resolver): typeof dnsLookup {
  const lookup = (
    hostname: string,
    options: { family?: number | string; all?: boolean } | undefined,
    callback: (
      err: NodeJS.ErrnoException | null,
      addresses: LookupAddress[] | string,
      family?: number,
    ) => void,
  ): void => {
    const family =
      options?.family === 'IPv4' ? 4 : options?.family === 'IPv6' ? 6 : Number(options?.family ?? 0);
    const answer = (list: LookupAddress[]) => {
      if (options?.all) return callback(null, list);
      const first = list[0] as LookupAddress;
      return callback(null, first.address, first.family);
    };
    if (ipaddr.isValid(hostname)) {
      answer([{ address: hostname, family: ipaddr.parse(hostname).kind() === 'ipv6' ? 6 : 4 }]);
      return;
    }
    if (localhostName.test(hostname)) {
      const loopback: LookupAddress[] = [
        { address: '127.0.0.1', family: 4 },
        { address: '::1', family: 6 },
      ];
      answer(loopback.filter((a) => family === 0 || a.family === family));
      return;
    }
    const wanted: (4 | 6)[] = family === 4 ? [4] : family === 6 ? [6] : [4, 6];
    Promise.allSettled(
      wanted.map((f) => (f === 4 ? resolver.resolve4(hostname) : resolver.resolve6(hostname))),
    ).then((results) => {
      const list: LookupAddress[] = [];
      results.forEach((result, i) => {
        if (result.status !== 'fulfilled') return;
        for (const address of result.value) list.push({ address, family: wanted[i] as 4 | 6 });
      });
      if (list.length > 0) return answer(list);
      const failure = results.find((r) => r.status === 'rejected') as PromiseRejectedResult | undefined;
      const err: NodeJS.ErrnoException = Object.assign(new Error(`no address for ${hostname}`), {
        code: (failure?.reason as NodeJS.ErrnoException | undefined)?.code ?? 'ENOTFOUND',
        hostname,
      });
      return callback(err, options?.all ? [] : '', 0);
    });
  };
  return lookup as unknown as typeof dnsLookup;
}
