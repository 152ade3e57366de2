/**
 * The DNS-AID zone lines of a deployment (`servers/adapters/dns-aid.ts`, `npm run dns-aid-records`)
 * and the copy in docs/guides/site-owners/dns-aid.md, which must not drift from them.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { dnsAidRecords, dnsAidZoneName } from '../../servers/adapters/dns-aid.ts';
import { projectRoot } from '../../servers/config.ts';

describe('DNS-AID zone lines', () => {
  it('name the MCP server card and the A2A card, on the port of each URL', () => {
    const lines = dnsAidRecords({
      site_url: 'https://www.example.com',
      mcp_url: 'https://mcp.example.com:8443/mcp',
    });
    expect(dnsAidZoneName({ site_url: 'https://www.example.com' })).toBe('example.com');
    expect(lines).toEqual([
      '_index._agents.example.com. 3600 IN HTTPS 1 www.example.com. alpn="h2,http/1.1" port=443',
      '_mcp._agents.example.com. 3600 IN SVCB 1 mcp.example.com. alpn="h2,http/1.1" port=8443 mandatory=alpn,port key65400="https://mcp.example.com:8443/mcp/server-card" key65402="mcp"',
      '_a2a._agents.example.com. 3600 IN SVCB 1 www.example.com. alpn="h2,http/1.1" port=443 mandatory=alpn,port key65400="https://www.example.com/.well-known/agent-card.json" key65402="a2a"',
    ]);
  });

  it('are the ones the site owners guide shows', () => {
    const guide = readFileSync(path.join(projectRoot, 'docs/guides/site-owners/dns-aid.md'), 'utf8');
    const lines = dnsAidRecords({
      site_url: 'https://agents.example.com',
      mcp_url: 'https://agents.example.com/mcp',
    });
    for (const line of lines) expect(guide).toContain(line);
  });
});
