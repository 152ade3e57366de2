/**
 * A `dns.lookup` stand-in that asks given DNS servers (A and AAAA over the wire, `dns.Resolver`)
 * instead of the system resolver, for `createSafeFetch({ lookup })`: the safe fetcher still checks
 * every address it returns before connecting. Used where the configuration names DNS servers for
 * outbound checks (live merchant resolution; tests point it at a local DNS server).
 */
import { type lookup as dnsLookup, type LookupAddress, Resolver } from 'node:dns';
import ipaddr from 'ipaddr.js';

export function resolverLookup(servers: string[], timeoutMs = 2000): typeof dnsLookup {
  const resolver = new Resolver({ timeout: timeoutMs, tries: 1 });
  resolver.setServers(servers);
  const query = (type: 'A' | 'AAAA', hostname: string) =>
    new Promise<string[]>((ok, fail) =>
      type === 'A'
        ? resolver.resolve4(hostname, (err, list) => (err ? fail(err) : ok(list)))
        : resolver.resolve6(hostname, (err, list) => (err ? fail(err) : ok(list))),
    );

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
    const wanted: ('A' | 'AAAA')[] = family === 4 ? ['A'] : family === 6 ? ['AAAA'] : ['A', 'AAAA'];
    Promise.allSettled(wanted.map((type) => query(type, hostname))).then((results) => {
      const list: LookupAddress[] = [];
      results.forEach((result, i) => {
        if (result.status !== 'fulfilled') return;
        for (const address of result.value) list.push({ address, family: wanted[i] === 'A' ? 4 : 6 });
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
