/**
 * Technical Foundation, continued: how an agent registers with the site and finds its agents
 * without reading a page - auth.md with its `agent_auth` block, and DNS-AID records. Both judge
 * facts collected since scoring version 3 (`crawl/auth-md.ts`, `crawl/dns-aid.ts`); older facts are
 * `unable_to_check`.
 */
import type { AuthMdFacts, DnsAidFacts, SiteFacts } from '../site-facts.ts';
import { notCollected } from './judging.ts';
import type { CheckDef, Evaluation, ProfileId } from './model.ts';

const AUTH_MD_SPEC = 'https://workos.com/auth-md/docs/auth-md';

/** auth.md's parts and what each is worth (after canagentuse.com's auth-md 1.0.0 check steps). */
const authMdParts = { guide: 0.35, protected_resource: 0.15, agent_auth: 0.3, endpoints: 0.2 } as const;

export const agentRegistrationChecks: readonly CheckDef[] = [
  {
    id: 'auth_md',
    component: 'technical_foundation',
    title: 'auth.md tells agents how to register',
    weight: 3,
    severity: 'info',
    rule: "the auth.md protocol, read as an agent does: `/auth.md` is a Markdown guide (2xx, not HTML, not the [soft-404](#soft-404s) answer, with a heading, about registering or authenticating): 0.35; the protected resource metadata (`/.well-known/oauth-protected-resource`, else the MCP server's) names an authorization server: 0.15; that server's metadata (RFC 8414, each layout) carries an `agent_auth` block with `skill`, `register_uri` and an identity type whose block names its `credential_types_supported` (and, for `identity_assertion`, `assertion_types_supported`): 0.3; the block's `skill`, `register_uri`, `claim_uri` and `revocation_uri`, asked with GET, answer (the skill 2xx, the others anything below 500 but 404: a POST endpoint answers 405): 0.2 times the share that do. Applies to API sites; to content sites and shops only when they publish OAuth metadata or an auth.md (`not_applicable` otherwise: a site without accounts has nothing to register for)",
    goal: 'Tell an agent, in one Markdown file and the authorization server metadata, how to register and get a credential without a sign-up form.',
    fix: 'Serve /auth.md (text/markdown) as a step-by-step registration guide, publish /.well-known/oauth-protected-resource naming your authorization server, and add an agent_auth block to its /.well-known/oauth-authorization-server metadata with skill (the auth.md URL), register_uri, claim_uri, revocation_uri, identity_types_supported and a block per identity type (anonymous: credential_types_supported; identity_assertion: assertion_types_supported and credential_types_supported). Make each URL answer.',
    spec: AUTH_MD_SPEC,
    evidence: ['auth_md', 'oauth'],
    evaluate: ({ facts, profile }) => {
      if (!facts.auth_md) return notCollected;
      if (!authMdApplies(facts, facts.auth_md, profile))
        return {
          score: null,
          status: 'not_applicable',
          seen: `a ${profile} site with no OAuth metadata and no auth.md: nothing to register for`,
        };
      return judgeAuthMd(facts.auth_md);
    },
  },
  {
    id: 'dns_aid',
    component: 'technical_foundation',
    title: 'Agents published in DNS (DNS-AID)',
    weight: 2,
    severity: 'info',
    rule: 'the SVCB and HTTPS records at `_index._agents`, `_mcp._agents` and `_a2a._agents` under the domain (without `www.`; AliasMode followed one hop), asked of the outbound DNS servers: share of records in ServiceMode with an `alpn` whose target answers a GET - its `cap` document (key65400) or, for an A2A record, `/.well-known/agent-card.json` with 2xx; else the target itself below 500. Scored only for API sites that publish records; informational otherwise (no value): the draft is young and few agents resolve it yet, a site may not control its DNS zone, so publishing agents over HTTP (MCP server card, A2A card) is not marked down for lacking it. No value for a site scanned by IP address; `unable_to_check` when no DNS server answered',
    goal: 'Let agents find the MCP server and A2A agent of a domain from DNS, before any HTTP request, and make sure what the records point to answers.',
    fix: 'Publish ServiceMode SVCB records under _agents: _mcp._agents.<domain> for the MCP server and _a2a._agents.<domain> for the A2A agent, each with alpn, port and key65400 (cap) naming the server card or agent card; keep the targets answering (docs/guides/site-owners/dns-aid.md).',
    spec: 'https://datatracker.ietf.org/doc/draft-mozleywilliams-dnsop-dnsaid/',
    evidence: ['dns_aid'],
    evaluate: ({ facts, profile }) =>
      facts.dns_aid ? judgeDnsAid(facts, facts.dns_aid, profile) : notCollected,
  },
];

function authMdApplies(facts: SiteFacts, a: AuthMdFacts, profile: ProfileId): boolean {
  if (profile === 'api') return true;
  const d = facts.discovery;
  return d.oauth_protected_resource.valid || d.oauth_authorization_server.valid || a.guide.valid;
}

export function judgeAuthMd(a: AuthMdFacts): Evaluation {
  const block = a.agent_auth;
  const blockOk = block !== null && block.problems.length === 0;
  const answering = a.endpoints.filter((e) => e.ok);
  const parts = {
    guide: a.guide.valid ? 1 : 0,
    protected_resource: a.protected_resource.authorization_servers.length ? 1 : 0,
    agent_auth: blockOk ? 1 : 0,
    endpoints: block && a.endpoints.length ? answering.length / a.endpoints.length : 0,
  };
  const score = (Object.keys(parts) as (keyof typeof parts)[]).reduce(
    (n, k) => n + parts[k] * authMdParts[k],
    0,
  );
  const misses = [
    a.guide.valid ? null : `/auth.md: ${a.guide.note ?? 'not a Markdown guide'}`,
    parts.protected_resource
      ? null
      : `protected resource metadata: ${a.protected_resource.note ?? 'no authorization server'}`,
    blockOk
      ? null
      : block
        ? `agent_auth: ${block.problems.join(', ')}`
        : `agent_auth: ${a.authorization_server?.note ?? 'no authorization server to ask'}`,
    ...a.endpoints.filter((e) => !e.ok).map((e) => `${e.name} ${e.url} ${e.note ?? 'did not answer'}`),
  ].filter((m): m is string => m !== null);
  return {
    score: Math.round(score * 100) / 100,
    seen: misses.length
      ? misses.join('; ')
      : `auth.md found; agent_auth at ${a.authorization_server?.url} with ${block?.complete_types.join(', ')}; ${a.endpoints.length} endpoint(s) answer`,
    evidence_url: a.guide.valid ? a.guide.url : (a.authorization_server?.url ?? a.guide.url),
  };
}

export function judgeDnsAid(facts: SiteFacts, d: DnsAidFacts, profile: ProfileId): Evaluation {
  if (d.lookup === 'skipped') return { score: null, seen: `DNS-AID not looked up: ${d.note}` };
  if (d.lookup === 'failed')
    return {
      score: null,
      status: 'unable_to_check',
      seen: `no DNS server answered for _agents.${d.domain}: ${d.note}`,
    };
  const agentsElsewhere = [
    facts.discovery.mcp_server_card.valid ? 'an MCP server card' : null,
    facts.discovery.a2a_agent_card?.valid ? 'an A2A agent card' : null,
  ].filter((x): x is string => x !== null);
  if (d.records.length === 0)
    return {
      score: null,
      seen: `no SVCB or HTTPS records under _agents.${d.domain} (informational${agentsElsewhere.length ? `: the site publishes ${agentsElsewhere.join(' and ')} over HTTP` : ''})`,
    };
  const good = d.records.filter((r) => !r.problem && r.endpoint?.ok);
  const described = d.records
    .map(
      (r) =>
        `${r.name} ${r.type} -> ${r.target}${r.problem ? ` (${r.problem})` : r.endpoint ? ` ${r.endpoint.url} ${r.endpoint.ok ? 'answers' : (r.endpoint.note ?? 'does not answer')}` : ''}`,
    )
    .join('; ');
  const evidence_url = `dns:_agents.${d.domain}`;
  if (profile !== 'api')
    return { score: null, seen: `informational for a ${profile} site: ${described}`, evidence_url };
  return { score: good.length / d.records.length, seen: described, evidence_url };
}
