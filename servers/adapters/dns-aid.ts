/**
 * The DNS-AID records (draft-mozleywilliams-dnsop-dnsaid) a deployment publishes for its agents, as
 * zone-file lines derived from the configuration: `_index._agents` (the site), `_mcp._agents` (the
 * public MCP server, its SEP-2127 server card as `cap`) and `_a2a._agents` (the A2A agent, its card
 * as `cap`). A service cannot write its own DNS zone; `npm run dns-aid-records` prints these lines
 * for the operator to add (docs/guides/site-owners/dns-aid.md), and the scanner's `dns_aid` check
 * reads them back the way it reads anyone's.
 *
 * The draft's own SvcParamKeys have no IANA numbers yet, so they are written in the RFC 9460
 * private-use form its reference implementation uses: `cap` is key65400, `bap` key65402.
 */
import type { Config } from '../config.ts';
import { AGENT_CARD_PATH } from './api-catalog.ts';

const TTL_S = 3600;

/** The zone under which the agents are published: the site's host without a leading `www.`. */
export const dnsAidZoneName = (config: Pick<Config, 'site_url'>): string =>
  new URL(config.site_url).hostname.replace(/^www\./, '');

/** One record per agent, in presentation form (RFC 9460 appendix A), ready for a zone file. */
export function dnsAidRecords(config: Pick<Config, 'site_url' | 'mcp_url'>): string[] {
  const zone = dnsAidZoneName(config);
  const line = (label: string, type: 'SVCB' | 'HTTPS', url: string, params: string) => {
    const u = new URL(url);
    const port = u.port || (u.protocol === 'https:' ? '443' : '80');
    return `${label}._agents.${zone}. ${TTL_S} IN ${type} 1 ${u.hostname}. alpn="h2,http/1.1" port=${port}${params}`;
  };
  const card = (url: string, protocol: string) =>
    ` mandatory=alpn,port key65400="${url}" key65402="${protocol}"`;
  return [
    line('_index', 'HTTPS', config.site_url, ''),
    line('_mcp', 'SVCB', config.mcp_url, card(`${config.mcp_url}/server-card`, 'mcp')),
    line('_a2a', 'SVCB', config.site_url, card(`${config.site_url}${AGENT_CARD_PATH}`, 'a2a')),
  ];
}
