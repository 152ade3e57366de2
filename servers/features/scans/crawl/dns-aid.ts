/**
 * DNS-AID (draft-mozleywilliams-dnsop-dnsaid): a domain publishes its agents in DNS under
 * `_agents.<domain>` as SVCB (or HTTPS) records in ServiceMode - `_index._agents` the entry point,
 * `_mcp._agents` an MCP server, `_a2a._agents` an A2A agent - carrying `alpn` and `port`, and the
 * draft's own parameters in the private-use key range: `cap` (key65400, the URI of a capability
 * document such as an A2A agent card or an MCP server card) and `bap` (key65402, the agent protocols
 * when `alpn` names the transport: the draft does both). Those three well-known names are asked for,
 * each as SVCB and as HTTPS, through the outbound resolver (`outbound/dns-lookup.ts`); an
 * AliasMode record is followed one hop.
 *
 * Then what each record points to is asked with GET through the scan session: its `cap` document,
 * else the A2A agent card of an A2A record, else the target itself. The scheme is the crawl's
 * (https in production; a site on http in tests and local setups), the port the record's.
 */
import { isIP } from 'node:net';
import type { SvcbResolver } from '../../../outbound/dns-lookup.ts';
import type { SvcbRecord } from '../../../outbound/svcb.ts';
import type { DnsAidFacts, DnsAidRecord } from '../site-facts.ts';
import type { Site } from './site.ts';

export const DNS_AID_LABELS = ['_index', '_mcp', '_a2a'] as const;
/** Private-use SvcParamKeys the DNS-AID draft (section 4.4.3) and its reference implementation use. */
export const dnsAidKeys = { cap: 'key65400', bap: 'key65402' } as const;
const MAX_RECORDS = 6;

/** The name agents are published under: the scanned host without its port and a leading `www.`. */
export function dnsAidDomain(domain: string): string | null {
  const host = domain
    .replace(/^\[|\](:\d+)?$/g, '')
    .replace(/:\d+$/, '')
    .toLowerCase();
  if (isIP(host) || host === 'localhost' || host.endsWith('.localhost')) return null;
  return host.replace(/^www\./, '');
}

/** The phase: never rejects (it is started early and awaited last). */
export function readDnsAid(site: Site, resolve: SvcbResolver | undefined): Promise<DnsAidFacts> {
  return collectDnsAid(site, resolve).catch((err: Error) => ({
    domain: site.session.request.domain,
    lookup: 'failed' as const,
    note: err.message,
    records: [],
  }));
}

async function collectDnsAid(site: Site, resolve: SvcbResolver | undefined): Promise<DnsAidFacts> {
  const domain = dnsAidDomain(site.session.request.domain);
  if (!domain)
    return {
      domain: site.session.request.domain,
      lookup: 'skipped',
      note: 'an IP address or local name: no DNS zone to publish in',
      records: [],
    };
  if (!resolve) return { domain, lookup: 'skipped', note: 'no DNS resolver given to the scan', records: [] };
  const { records, failures } = await lookUp(site, domain, resolve);
  if (!records.length && failures.length === DNS_AID_LABELS.length * 2)
    return { domain, lookup: 'failed', note: failures[0] ?? 'no answer', records: [] };
  const checked = await Promise.all(records.slice(0, MAX_RECORDS).map((r) => verifyRecord(site, r)));
  return { domain, lookup: 'done', note: failures.length ? failures.join('; ') : null, records: checked };
}

type Found = Omit<DnsAidRecord, 'endpoint'>;

async function lookUp(site: Site, domain: string, resolve: SvcbResolver) {
  const { session } = site;
  const failures: string[] = [];
  const ask = async (name: string, type: 'SVCB' | 'HTTPS'): Promise<SvcbRecord[]> => {
    const started = Date.now();
    try {
      const answer = await resolve(name, type, session.signal);
      record(site, name, type, started, answer, null);
      return answer;
    } catch (err) {
      const error = (err as { code?: string }).code ?? (err as Error).message;
      record(site, name, type, started, null, error);
      failures.push(`${type} ${name}: ${error}`);
      return [];
    }
  };
  const found: Found[] = [];
  await Promise.all(
    DNS_AID_LABELS.flatMap((label) =>
      (['SVCB', 'HTTPS'] as const).map(async (type) => {
        const name = `${label}._agents.${domain}`;
        for (const r of await ask(name, type)) {
          const target = r.priority === 0 && r.target !== '.' ? await followAlias(ask, r.target, type) : null;
          found.push(recordOf(name, type, target ?? r, r.priority === 0 ? r.target : null));
        }
      }),
    ),
  );
  // The same order whatever answered first.
  found.sort(
    (a, b) => a.name.localeCompare(b.name) || a.type.localeCompare(b.type) || a.priority - b.priority,
  );
  return { records: found, failures };
}

/** RFC 9460 section 2.4.2: an AliasMode record sends the client to the target's own records. */
async function followAlias(
  ask: (name: string, type: 'SVCB' | 'HTTPS') => Promise<SvcbRecord[]>,
  target: string,
  type: 'SVCB' | 'HTTPS',
): Promise<SvcbRecord | null> {
  const best = (await ask(target, type))
    .filter((r) => r.priority > 0)
    .sort((a, b) => a.priority - b.priority)[0];
  // "." in ServiceMode names the record's owner: here the alias target.
  return best ? { ...best, target: best.target === '.' ? target : best.target } : null;
}

function recordOf(name: string, type: 'SVCB' | 'HTTPS', r: SvcbRecord, aliasOf: string | null): Found {
  const list = (v: string | undefined) =>
    v
      ? v
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)
      : [];
  const alpn = list(r.params.alpn);
  const bap = list(r.params[dnsAidKeys.bap]);
  const label = name.split('.')[0] ?? '';
  const protocol =
    [...bap, ...alpn].map((p) => p.split('/')[0]).find((p) => p === 'mcp' || p === 'a2a') ??
    (label === '_mcp' ? 'mcp' : label === '_a2a' ? 'a2a' : null);
  const problems = [
    r.priority === 0 ? `AliasMode to ${aliasOf ?? r.target} with no ServiceMode record behind it` : null,
    r.priority > 0 && !alpn.length ? 'no alpn' : null,
    r.params.port !== undefined && !(Number(r.params.port) > 0) ? 'bad port' : null,
  ].filter((p): p is string => p !== null);
  return {
    name,
    type,
    priority: r.priority,
    target: r.target,
    alias_of: aliasOf,
    alpn,
    port: r.params.port ? Number(r.params.port) : null,
    protocol,
    cap: r.params[dnsAidKeys.cap] ?? null,
    bap,
    problem: problems.length ? problems.join('; ') : null,
  };
}

/** What the record points to, asked with GET: the cap document or A2A card must be 2xx; a bare target any answer below 500. */
async function verifyRecord(site: Site, r: Found): Promise<DnsAidRecord> {
  if (r.problem || r.priority === 0) return { ...r, endpoint: null };
  const scheme = new URL(site.origin).protocol;
  const host = r.target === '.' ? r.name : r.target;
  const base = `${scheme}//${host.includes(':') ? `[${host}]` : host}${r.port ? `:${r.port}` : ''}`;
  const cap = r.cap && /^https?:\/\//.test(r.cap) ? r.cap : null;
  const url = cap ?? (r.protocol === 'a2a' ? `${base}/.well-known/agent-card.json` : `${base}/`);
  const document = cap !== null || r.protocol === 'a2a';
  if (!URL.canParse(url)) return { ...r, endpoint: { url, status: null, ok: false, note: 'not a URL' } };
  const got = await site.session.probe(url, {
    topic: 'dns_aid',
    accept: 'application/json, */*;q=0.5',
    maxBytes: 64 * 1024,
  });
  if (!got.ok) return { ...r, endpoint: { url, status: null, ok: false, note: got.error } };
  const ok = document ? got.status >= 200 && got.status < 300 : got.status < 500;
  return { ...r, endpoint: { url, status: got.status, ok, note: ok ? null : `HTTP ${got.status}` } };
}

/** DNS questions are evidence too: `dns:` URIs (RFC 4501), the records as the body. */
function record(
  site: Site,
  name: string,
  type: string,
  started: number,
  answer: SvcbRecord[] | null,
  error: string | null,
): void {
  const text = answer?.map(
    (r) =>
      `${r.priority} ${r.target}. ${Object.entries(r.params)
        .map(([k, v]) => `${k}=${v}`)
        .join(' ')}`,
  );
  site.session.evidence.add({
    topic: 'dns_aid',
    method: 'DNS',
    url: `dns:${name}?type=${type}`,
    status: null,
    headers: {},
    body_preview: text ? (text.length ? text.join(' | ').slice(0, 200) : 'no records') : null,
    duration_ms: Date.now() - started,
    error,
  });
}
