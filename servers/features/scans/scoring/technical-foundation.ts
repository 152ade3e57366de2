/**
 * Technical Foundation (docs/reference/scoring.md): can agents reach, read and use the site.
 * Its checks in docs/reference/scoring.md order; their weights sum to 100.
 */
import LinkHeader from 'http-link-header';
import { aiAgents } from '../collectors/robots.ts';
import { apiOnly, clamp01, noPages, notCollected, pageShare, pct } from './judging.ts';
import type { CheckDef, Evaluation } from './model.ts';

const noindexPattern = /\b(noindex|none)\b/i;

const linkRels = new Set([
  'api-catalog',
  'service-desc',
  'service-doc',
  'describedby',
  'alternate',
  'sitemap',
  'llms-txt',
]);

export const technicalFoundationChecks: readonly CheckDef[] = [
  {
    id: 'robots_txt',
    component: 'technical_foundation',
    title: 'robots.txt is served',
    weight: 6,
    severity: 'warning',
    rule: '1 when `/robots.txt` answers 2xx with a body that is not HTML (by content type or by its start) and is not the [soft-404](#soft-404s) answer',
    goal: 'Tell crawlers and agents what they may fetch, in the one file every one of them reads first.',
    fix: 'Serve /robots.txt as text/plain with explicit groups for the crawlers you want (RFC 9309).',
    spec: 'https://www.rfc-editor.org/rfc/rfc9309',
    evidence: ['robots'],
    evaluate: ({ facts }) => ({
      score: facts.robots.present ? 1 : 0,
      seen: facts.robots.present ? 'robots.txt found' : 'no robots.txt',
      evidence_url: facts.robots.url,
    }),
  },
  {
    id: 'robots_ai_rules',
    component: 'technical_foundation',
    title: 'robots.txt names AI agents',
    weight: 4,
    severity: 'info',
    rule: 'groups naming AI agent tokens (GPTBot, OAI-SearchBot, ChatGPT-User, ClaudeBot, Claude-SearchBot, Claude-User, PerplexityBot, Perplexity-User, Google-Extended, Applebot-Extended, CCBot, Bytespider, meta-externalagent, Amazonbot, MistralAI-User, DuckAssistBot): number named / 4, at most 1',
    goal: 'State per AI agent what it may fetch, so search and answer agents are not caught by rules meant for others.',
    fix: 'Add User-agent groups for AI agents (GPTBot, OAI-SearchBot, ClaudeBot, PerplexityBot, Google-Extended ...) stating what each may fetch.',
    spec: 'https://www.rfc-editor.org/rfc/rfc9309#section-2.2.1',
    evidence: ['robots'],
    evaluate: ({ facts }) => {
      const named = facts.robots.agents.filter((a) => a.named).map((a) => a.token);
      return {
        score: clamp01(named.length / 4),
        seen: named.length ? `groups for ${named.join(', ')}` : 'no group names an AI agent',
        evidence_url: facts.robots.url,
      };
    },
  },
  {
    id: 'ai_search_access',
    component: 'technical_foundation',
    title: 'AI search and user-triggered agents may fetch the site',
    weight: 10,
    severity: 'critical',
    rule: 'share of AI search and user-triggered agents (not training crawlers) allowed to fetch `/` under the rules that apply to them; blocking training crawlers costs nothing',
    goal: 'Let AI search and user-triggered agents read the site so answers can cite it.',
    fix: 'Allow AI search and user-triggered agents (OAI-SearchBot, ChatGPT-User, Claude-SearchBot, Claude-User, PerplexityBot, Perplexity-User) at / so answers can cite you; training crawlers can stay blocked.',
    spec: 'https://www.rfc-editor.org/rfc/rfc9309',
    evidence: ['robots'],
    evaluate: ({ facts }) => {
      const relevant = facts.robots.agents.filter(
        (a) => aiAgents.find((d) => d.token === a.token)?.category !== 'training',
      );
      const blocked = relevant.filter((a) => !a.allowed_root).map((a) => a.token);
      return {
        score: relevant.length ? (relevant.length - blocked.length) / relevant.length : 1,
        seen: blocked.length
          ? `blocked at /: ${blocked.join(', ')}`
          : 'all AI search and user agents allowed at /',
        evidence_url: facts.robots.url,
      };
    },
  },
  {
    id: 'door_test',
    component: 'technical_foundation',
    title: 'AI agents are served like a browser',
    weight: 8,
    severity: 'critical',
    rule: 'the [door test](#the-door-test): share of the AI search and user-triggered agents asked as (OAI-SearchBot, ChatGPT-User, Claude-User) that were served; `unable_to_check` when none could be measured',
    goal: 'Serve the home page to AI search and user-triggered agents as it is served to a browser; robots.txt says what is allowed, the server must not say otherwise.',
    fix: 'Stop refusing AI agent user agents at the server, CDN or firewall (403, 401, challenge pages): allow OAI-SearchBot, ChatGPT-User, Claude-User and PerplexityBot, or verify them with Web Bot Auth instead of blocking by name.',
    spec: 'https://datatracker.ietf.org/doc/draft-meunier-web-bot-auth-architecture/',
    evidence: ['door'],
    evaluate: ({ facts }) => {
      if (!facts.verification) return notCollected;
      const door = facts.verification.door;
      if (!door)
        return { score: null, status: 'unable_to_check', seen: 'the home page could not be asked for' };
      const agents = door.filter((d) => d.class === 'search' || d.class === 'user');
      const measured = agents.filter((d) => d.verdict !== 'unmeasured');
      const blocked = door.filter((d) => d.verdict === 'blocked' && d.class !== 'browser');
      const describe = (list: typeof door) =>
        list.map((d) => `${d.visitor} (HTTP ${d.status ?? 'none'})`).join(', ');
      if (measured.length === 0)
        return {
          score: null,
          status: 'unable_to_check',
          seen: `unmeasured: ${describe(agents)} after three tries (rate limited or no answer)`,
          evidence_url: facts.home?.url ?? `${facts.origin}/`,
        };
      const served = measured.filter((d) => d.verdict === 'served').length;
      return {
        score: served / measured.length,
        seen: blocked.length
          ? `blocked: ${describe(blocked)}; browser HTTP ${door.find((d) => d.class === 'browser')?.status ?? 'none'}`
          : `served to ${measured.map((d) => d.visitor).join(', ')} as to a browser`,
        evidence_url: facts.home?.url ?? `${facts.origin}/`,
      };
    },
  },
  {
    id: 'content_signals',
    component: 'technical_foundation',
    title: 'Content-Signal preferences are declared',
    weight: 3,
    severity: 'info',
    rule: '1 when robots.txt has a `Content-Signal:` line (contentsignals.org)',
    goal: 'Say how content may be used once fetched: search, AI input, AI training.',
    fix: 'State how content may be used with a Content-Signal line in robots.txt, e.g. "Content-Signal: search=yes, ai-input=yes, ai-train=no" (contentsignals.org).',
    spec: 'https://contentsignals.org/',
    evidence: ['robots'],
    evaluate: ({ facts }) => {
      const n = facts.robots.content_signals.length;
      return {
        score: n > 0 ? 1 : 0,
        seen: n
          ? `Content-Signal: ${facts.robots.content_signals.map((c) => c.raw).join(' | ')}`
          : 'no Content-Signal line',
        evidence_url: facts.robots.url,
      };
    },
  },
  {
    id: 'policy_coherence',
    component: 'technical_foundation',
    title: 'robots.txt agrees with itself and the site',
    weight: 4,
    severity: 'warning',
    rule: '1 minus 0.4 when a Content-Signal line says `search=yes` / `ai-input=yes` (any `=yes`) for an agent that may not fetch `/`, 0.3 when llms.txt is disallowed for `*` or an AI search or user agent, 0.3 when a sitemap is; no value without robots.txt',
    goal: 'Keep what robots.txt allows consistent with its Content-Signal lines and with the documents the site publishes for agents.',
    fix: 'Do not disallow / for an agent whose group says search=yes or ai-input=yes, and never disallow /llms.txt or the sitemaps for AI search and user agents.',
    spec: 'https://contentsignals.org/',
    evidence: ['robots'],
    evaluate: ({ facts }) => {
      if (facts.policy === undefined) return notCollected;
      const p = facts.policy;
      if (!p) return { score: null, seen: 'no robots.txt: nothing to contradict' };
      const problems = [
        ...p.content_signal_conflicts,
        ...(p.llms_txt_blocked_for.length
          ? [`llms.txt disallowed for ${p.llms_txt_blocked_for.join(', ')}`]
          : []),
        ...(p.sitemap_blocked_for.length
          ? [`sitemaps disallowed for ${p.sitemap_blocked_for.join(', ')}`]
          : []),
      ];
      const score =
        1 -
        (p.content_signal_conflicts.length ? 0.4 : 0) -
        (p.llms_txt_blocked_for.length ? 0.3 : 0) -
        (p.sitemap_blocked_for.length ? 0.3 : 0);
      return {
        score: clamp01(score),
        seen: problems.length ? problems.join('; ') : 'no contradiction',
        evidence_url: facts.robots.url,
      };
    },
  },
  {
    id: 'sitemap',
    component: 'technical_foundation',
    title: 'An XML sitemap lists the pages',
    weight: 5,
    severity: 'warning',
    rule: '1 when the sitemaps (from `Sitemap:` lines, else `/sitemap.xml`, indexes followed up to `scanner.max_sitemaps` documents) list at least one URL; 0.5 for an index with no readable URLs',
    goal: 'List every page an agent should know about in one machine-readable place.',
    fix: 'Publish /sitemap.xml (or a sitemap index) and reference it with a Sitemap: line in robots.txt.',
    spec: 'https://www.sitemaps.org/protocol.html',
    evidence: ['sitemap'],
    evaluate: ({ facts }) => ({
      score:
        facts.sitemap.urls_found > 0 ? 1 : facts.sitemap.documents.some((d) => d.kind === 'index') ? 0.5 : 0,
      seen: facts.sitemap.urls_found
        ? `${facts.sitemap.urls_found} URL(s) in ${facts.sitemap.documents.length} sitemap document(s)`
        : (facts.sitemap.documents[0]?.note ?? 'no sitemap'),
      evidence_url: facts.sitemap.documents[0]?.url ?? null,
    }),
  },
  {
    id: 'sitemap_lastmod',
    component: 'technical_foundation',
    title: 'Sitemap entries carry lastmod',
    weight: 2,
    severity: 'info',
    rule: 'share of sitemap URLs with a `lastmod` in W3C Datetime format; no value without sitemap URLs',
    goal: 'Tell agents which pages changed, so they refetch those and not the rest.',
    fix: 'Give every <url> in the sitemap a <lastmod> in W3C Datetime format (2026-11-26 or 2026-11-26T10:00:00Z).',
    spec: 'https://www.sitemaps.org/protocol.html#lastmoddef',
    evidence: ['sitemap'],
    evaluate: ({ facts }) => {
      if (facts.sitemap.urls_with_lastmod === undefined) return notCollected;
      if (facts.sitemap.urls_found === 0) return { score: null, seen: 'no sitemap URL to judge' };
      const n = facts.sitemap.urls_with_lastmod;
      return {
        score: n / facts.sitemap.urls_found,
        seen: `${n} of ${facts.sitemap.urls_found} URL(s) with a valid lastmod`,
        evidence_url: facts.sitemap.documents.find((d) => d.kind === 'urlset')?.url ?? null,
      };
    },
  },
  {
    id: 'x_robots_tag',
    component: 'technical_foundation',
    title: 'No X-Robots-Tag keeps pages out',
    weight: 3,
    severity: 'warning',
    rule: 'share of pages read whose `X-Robots-Tag` header does not say `noindex` or `none`',
    goal: 'Do not tell indexes and answer engines, in a header nobody sees, to leave the pages out.',
    fix: 'Remove noindex / none from the X-Robots-Tag response header of public pages (often set by a CDN or framework default).',
    spec: 'https://developers.google.com/search/docs/crawling-indexing/robots-meta-tag#xrobotstag',
    evidence: ['home', 'page'],
    evaluate: ({ facts }) => {
      if (facts.pages.length === 0) return noPages;
      if (facts.pages.some((p) => p.x_robots_tag === undefined)) return notCollected;
      const tagged = facts.pages.filter((p) => p.x_robots_tag && noindexPattern.test(p.x_robots_tag));
      return {
        score: 1 - tagged.length / facts.pages.length,
        seen: tagged.length
          ? `X-Robots-Tag "${tagged[0]?.x_robots_tag}" on ${tagged.length} of ${facts.pages.length} page(s)`
          : 'no page is kept out by X-Robots-Tag',
        evidence_url: tagged[0]?.url ?? null,
      };
    },
  },
  {
    id: 'markdown_negotiation',
    component: 'technical_foundation',
    title: 'Pages are served as markdown on request',
    weight: 10,
    severity: 'warning',
    rule: "the home page requested with `Accept: text/markdown` comes back as `text/markdown` and is not HTML: 0.5; one other page read does too: 0.2; `Vary: Accept` on those answers: 0.15; their words overlap the HTML page's by at least half (shared words over the smaller set): 0.15. Without another page to ask, its part is left out and the rest renormalized; 0 when the home page is not served as markdown",
    goal: 'Give agents the text of any page without the HTML around it, from the same URL.',
    fix: 'Answer requests with "Accept: text/markdown" on every page (not only the home page) with a markdown rendering of the same content (Content-Type: text/markdown), and send Vary: Accept on both representations so caches keep them apart.',
    spec: 'https://www.rfc-editor.org/rfc/rfc9110#section-12.5.5',
    evidence: ['markdown'],
    evaluate: ({ facts }) => {
      const m = facts.markdown;
      if (m.vary_accept === undefined) {
        return {
          score: m.supported ? 1 : 0,
          seen: m.supported ? 'text/markdown returned' : `Accept: text/markdown ${m.note ?? 'not honoured'}`,
          evidence_url: m.url,
        };
      }
      if (!m.supported)
        return { score: 0, seen: `Accept: text/markdown ${m.note ?? 'not honoured'}`, evidence_url: m.url };
      const other = m.other_page;
      const parts: { ok: boolean; weight: number; miss: string }[] = [
        { ok: true, weight: 0.5, miss: '' },
        ...(other
          ? [
              {
                ok: other.supported,
                weight: 0.2,
                miss: `${new URL(other.url).pathname} ${other.note ?? 'not served as markdown'}`,
              },
            ]
          : []),
        {
          ok: m.vary_accept === true && (!other?.supported || other.vary_accept === true),
          weight: 0.15,
          miss: 'no Vary: Accept on the markdown answer',
        },
        {
          ok: (m.text_overlap ?? 0) >= 0.5 && (!other?.supported || (other.text_overlap ?? 0) >= 0.5),
          weight: 0.15,
          miss: `the markdown shares ${pct(Math.min(m.text_overlap ?? 0, other?.supported ? (other.text_overlap ?? 0) : 1))} of its words with the HTML page`,
        },
      ];
      const total = parts.reduce((n, p) => n + p.weight, 0);
      const earned = parts.filter((p) => p.ok).reduce((n, p) => n + p.weight, 0);
      const misses = parts.filter((p) => !p.ok).map((p) => p.miss);
      return {
        score: earned / total,
        seen: misses.length
          ? `text/markdown returned for the home page, but ${misses.join('; ')}`
          : `text/markdown returned for the home page${other ? ` and ${new URL(other.url).pathname}` : ''}, with Vary: Accept and the same text`,
        evidence_url: m.url,
      };
    },
  },
  {
    id: 'markdown_alternate',
    component: 'technical_foundation',
    title: 'Pages link their markdown version',
    weight: 2,
    severity: 'info',
    rule: 'share of pages with `<link rel="alternate" type="text/markdown">`',
    goal: 'Let an agent that reads the HTML find the markdown version without guessing.',
    fix: 'Add <link rel="alternate" type="text/markdown" href="..."> to the head of every page.',
    spec: 'https://html.spec.whatwg.org/multipage/links.html#rel-alternate',
    evidence: ['home', 'page'],
    evaluate: ({ facts }) => pageShare(facts, (p) => !!p.markdown_alternate) ?? noPages,
  },
  {
    id: 'link_headers',
    component: 'technical_foundation',
    title: 'Link headers point at agent resources',
    weight: 3,
    severity: 'info',
    rule: "the home page's `Link` header (RFC 8288, parsed with http-link-header): 1 when a link has rel `api-catalog`, `service-desc`, `service-doc`, `describedby`, `alternate`, `sitemap` or `llms-txt`; 0.5 for other links; 0 without",
    goal: 'Let an agent find the discovery documents from any response, without parsing HTML.',
    fix: 'Send a Link header (RFC 8288) on the home page naming your agent resources, e.g. Link: </.well-known/api-catalog>; rel="api-catalog", </llms.txt>; rel="describedby"; type="text/markdown".',
    spec: 'https://www.rfc-editor.org/rfc/rfc8288',
    evidence: ['home'],
    evaluate: ({ facts }) => {
      if (facts.home === undefined) return notCollected;
      const header = facts.home?.link ?? null;
      if (!header)
        return { score: 0, seen: 'no Link header on the home page', evidence_url: `${facts.origin}/` };
      let refs: { rel: string; uri: string }[] = [];
      try {
        refs = LinkHeader.parse(header).refs;
      } catch {
        return { score: 0, seen: 'the Link header does not parse (RFC 8288)', evidence_url: facts.home?.url };
      }
      const useful = refs.filter((r) => r.rel.split(/\s+/).some((rel) => linkRels.has(rel.toLowerCase())));
      return {
        score: useful.length ? 1 : refs.length ? 0.5 : 0,
        seen: useful.length
          ? `Link: ${useful.map((r) => `rel=${r.rel}`).join(', ')}`
          : `the Link header names no agent resource (${refs.map((r) => r.rel).join(', ') || 'nothing parsed'})`,
        evidence_url: facts.home?.url,
      };
    },
  },
  {
    id: 'https',
    component: 'technical_foundation',
    title: 'Served over HTTPS',
    weight: 3,
    severity: 'warning',
    rule: '1 when the crawl ended on an `https:` origin',
    goal: 'Serve agents content they can trust was not changed on the way.',
    fix: 'Serve the site over HTTPS and redirect http:// to it.',
    spec: 'https://www.rfc-editor.org/rfc/rfc9110#section-4.2.2',
    evidence: ['robots'],
    evaluate: ({ facts }) => ({
      score: facts.https ? 1 : 0,
      seen: facts.https ? 'https' : 'served over plain http',
      evidence_url: `${facts.origin}/`,
    }),
  },
  {
    id: 'api_catalog',
    component: 'technical_foundation',
    title: 'API catalog (RFC 9727)',
    weight: 6,
    severity: 'info',
    rule: '`/.well-known/api-catalog` (RFC 9727): 1 for a linkset whose entries have anchors, 0.5 for a [present](#soft-404s) JSON object that is not such a linkset',
    goal: 'List the APIs of the site, with their descriptions and docs, at one well-known address.',
    fix: 'Publish /.well-known/api-catalog as an application/linkset+json linkset pointing at your API descriptions (service-desc) and docs.',
    spec: 'https://www.rfc-editor.org/rfc/rfc9727',
    evidence: ['api_catalog'],
    applies: apiOnly,
    evaluate: ({ facts }) => discoveryEvaluation(facts.discovery.api_catalog, 'api-catalog'),
  },
  {
    id: 'openapi',
    component: 'technical_foundation',
    title: 'OpenAPI description, and its servers answer',
    weight: 4,
    severity: 'info',
    rule: 'an OpenAPI document found through the api-catalog `service-desc`, the home page\'s `Link` header `service-desc`, a `<link rel="service-desc">` or page link, or `/openapi.json` / `/openapi.yaml`, with an `openapi` (or `swagger`) field: 1 when it parses in full and every server in `servers[]` (up to two, asked with GET) answers below 500; 0.75 when it does not parse in full (cut at the byte limit) or a server does not answer; a [present](#soft-404s) JSON object or YAML mapping without the field: 0.5',
    goal: 'Describe the API so an agent can call it, and make sure the servers it names are there.',
    fix: 'Link an OpenAPI document from the api-catalog (service-desc) or a <link rel="service-desc">; its servers[] must be URLs that answer.',
    spec: 'https://spec.openapis.org/oas/v3.1.0#server-object',
    evidence: ['openapi', 'api_catalog'],
    applies: apiOnly,
    evaluate: ({ facts }) => {
      const base = discoveryEvaluation(facts.discovery.openapi, 'OpenAPI document');
      if (!facts.discovery.openapi.valid || !facts.verification) return base;
      const v = facts.verification.openapi;
      if (!v) return base;
      const down = v.servers.filter((s) => !s.ok);
      if (!v.parsed)
        return {
          ...base,
          score: 0.75,
          seen: `OpenAPI document found but could not be parsed in full${v.truncated ? ' (cut at the byte limit)' : ''}`,
        };
      if (down.length)
        return {
          ...base,
          score: 0.75,
          seen: `OpenAPI document found, but servers[] do not answer: ${down.map((s) => `${s.url} (${s.status ? `HTTP ${s.status}` : (s.note ?? 'no answer')})`).join(', ')}`,
        };
      return {
        ...base,
        seen: v.servers.length
          ? `OpenAPI document found; servers answer: ${v.servers.map((s) => s.url).join(', ')}`
          : 'OpenAPI document found',
      };
    },
  },
  {
    id: 'oauth_discovery',
    component: 'technical_foundation',
    title: 'OAuth discovery metadata',
    weight: 4,
    severity: 'info',
    rule: '0.5 for valid `/.well-known/oauth-protected-resource` (RFC 9728, has `resource`) + 0.5 for valid `/.well-known/oauth-authorization-server` (RFC 8414, has `issuer`); no partial credit',
    goal: 'Let an agent learn how to get a token without reading documentation.',
    fix: 'If agents sign in, publish /.well-known/oauth-protected-resource (RFC 9728) and /.well-known/oauth-authorization-server (RFC 8414).',
    spec: 'https://www.rfc-editor.org/rfc/rfc9728',
    evidence: ['oauth'],
    applies: apiOnly,
    evaluate: ({ facts }) => {
      const prm = facts.discovery.oauth_protected_resource;
      const asm = facts.discovery.oauth_authorization_server;
      const score = (prm.valid ? 0.5 : 0) + (asm.valid ? 0.5 : 0);
      return {
        score,
        seen: `protected resource metadata ${prm.valid ? 'valid' : (prm.note ?? 'missing')}; authorization server metadata ${asm.valid ? 'valid' : (asm.note ?? 'missing')}`,
        evidence_url: prm.url,
      };
    },
  },
  {
    id: 'oauth_chain',
    component: 'technical_foundation',
    title: 'The OAuth discovery chain holds together',
    weight: 5,
    severity: 'warning',
    rule: '[the OAuth chain](#the-oauth-chain): share of its links that hold; no value when there is no protected resource metadata and no 401',
    goal: 'Make every link of OAuth discovery agree: the resource names itself, each authorization server resolves under every layout clients use with the same issuer, and a 401 points back at the metadata.',
    fix: 'Set "resource" in each protected resource metadata document to the exact URL it describes; serve the authorization server metadata at /.well-known/oauth-authorization-server{issuer path}, at {issuer}/.well-known/oauth-authorization-server and at {issuer}/.well-known/openid-configuration, each with "issuer" equal to the issuer URL; send WWW-Authenticate: Bearer resource_metadata="..." on 401.',
    spec: 'https://www.rfc-editor.org/rfc/rfc8414#section-3.3',
    evidence: ['oauth', 'mcp'],
    applies: apiOnly,
    evaluate: ({ facts }) => {
      if (!facts.verification) return notCollected;
      const chain = facts.verification.oauth;
      if (!chain || chain.steps.length === 0)
        return { score: null, seen: 'no protected resource metadata or 401 challenge to follow' };
      const failed = chain.steps.filter((s) => !s.ok);
      return {
        score: (chain.steps.length - failed.length) / chain.steps.length,
        seen: failed.length
          ? `${failed.length} of ${chain.steps.length} link(s) broken: ${failed.map((s) => `${s.url}: ${s.note ?? s.check}`).join('; ')}`
          : `${chain.steps.length} link(s) verified across ${chain.authorization_servers.length} authorization server(s)`,
        evidence_url: failed[0]?.url ?? chain.steps[0]?.url ?? null,
      };
    },
  },
  {
    id: 'mcp_server_card',
    component: 'technical_foundation',
    title: 'MCP server card',
    weight: 4,
    severity: 'info',
    rule: '`/.well-known/mcp/server-card.json` (SEP-1649) or `/.well-known/mcp.json` naming the server and a URL to reach it: 1; a [present](#soft-404s) JSON object lacking either: 0.5. Without either, the SEP-2127 MCP Catalog `/.well-known/mcp/catalog.json` (SEP-2127 superseded SEP-1649 and moved cards to `<streamable-http-url>/server-card`): 1 when the first card it lists on the same site names the server and a URL; a present catalog without such a card: 0.5',
    goal: 'Let an agent find the MCP server and what it is before connecting.',
    fix: 'Describe your MCP server with a server card (SEP-2127: <endpoint>/server-card, listed in /.well-known/mcp/catalog.json; or /.well-known/mcp/server-card.json) naming it and its URL.',
    spec: 'https://github.com/modelcontextprotocol/modelcontextprotocol/pull/2127',
    evidence: ['mcp'],
    applies: apiOnly,
    evaluate: ({ facts }) => discoveryEvaluation(facts.discovery.mcp_server_card, 'MCP server card'),
  },
  {
    id: 'mcp_live',
    component: 'technical_foundation',
    title: 'The MCP server answers as its card says',
    weight: 4,
    severity: 'warning',
    rule: "[the MCP server](#the-mcp-server) the card names: 1 when `initialize` and `tools/list` answer and the card lists no tools or the same tools; 1 when it answers 401 with `resource_metadata`, 0.5 with a 401 without it; 0.25 when the card's tools and the served tools differ; 0 when it does not answer; no value without a valid card on this site",
    goal: 'Make the MCP server the card advertises answer initialize and tools/list, with the tools the card lists.',
    fix: 'Point the card at the live Streamable HTTP endpoint, keep it answering initialize and tools/list (401 with resource_metadata when it needs a token), and list on the card exactly the tools the server lists (or none).',
    spec: 'https://modelcontextprotocol.io/specification/2025-11-25/server/tools#listing-tools',
    evidence: ['mcp'],
    applies: apiOnly,
    evaluate: ({ facts }) => {
      if (!facts.verification) return notCollected;
      const v = facts.verification.mcp;
      if (!v) return { score: null, seen: 'no MCP server card on this site to verify' };
      const where = v.endpoint ?? v.card_url;
      if (v.auth_required)
        return v.resource_metadata
          ? {
              score: 1,
              seen: `${where} asks for a token (401) and names its resource metadata`,
              evidence_url: where,
            }
          : {
              score: 0.5,
              seen: `${where} answers 401 without resource_metadata in WWW-Authenticate`,
              evidence_url: where,
            };
      if (!v.initialized || !v.live_tools)
        return { score: 0, seen: `${where}: ${v.error ?? 'initialize failed'}`, evidence_url: where };
      if (v.missing_live.length || v.not_on_card.length)
        return {
          score: 0.25,
          seen: `the card and the server disagree: ${[
            v.missing_live.length ? `on the card only: ${v.missing_live.join(', ')}` : '',
            v.not_on_card.length ? `served but not on the card: ${v.not_on_card.join(', ')}` : '',
          ]
            .filter(Boolean)
            .join('; ')}`,
          evidence_url: where,
        };
      return {
        score: 1,
        seen: `initialize and tools/list answered: ${v.live_tools.length} tool(s)${v.card_tools ? ', the same as the card lists' : ''}`,
        evidence_url: where,
      };
    },
  },
  {
    id: 'a2a_agent_card',
    component: 'technical_foundation',
    title: 'A2A agent card',
    weight: 2,
    severity: 'info',
    rule: '`/.well-known/agent-card.json` (A2A 1.0, the well-known URI; earlier versions used `/.well-known/agent.json`, not read): 1 with `name`, `url` (or `supportedInterfaces`) and a `skills` array; a present JSON object lacking them 0.5',
    goal: 'Let other agents discover this one and its skills (Agent2Agent protocol).',
    fix: 'Publish /.well-known/agent-card.json with name, description, url (or supportedInterfaces), version, capabilities and skills.',
    spec: 'https://a2a-protocol.org/latest/topics/agent-discovery/',
    evidence: ['a2a'],
    applies: apiOnly,
    evaluate: ({ facts }) =>
      facts.discovery.a2a_agent_card
        ? discoveryEvaluation(facts.discovery.a2a_agent_card, 'A2A agent card')
        : notCollected,
  },
  {
    id: 'agent_skills',
    component: 'technical_foundation',
    title: 'Agent Skills index',
    weight: 2,
    severity: 'info',
    rule: '`/.well-known/agent-skills/index.json` (Agent Skills Discovery): 1 when its `skills` (or the array itself) list entries with `name` and `url`; present but not so 0.5',
    goal: 'Publish the skills that teach an agent to use the site, where agents look for them.',
    fix: 'Publish /.well-known/agent-skills/index.json listing each SKILL.md with name, type, description, url and sha256.',
    spec: 'https://agentskills.io/',
    evidence: ['agent_skills'],
    applies: apiOnly,
    evaluate: ({ facts }) =>
      facts.discovery.agent_skills
        ? discoveryEvaluation(facts.discovery.agent_skills, 'Agent Skills index')
        : notCollected,
  },
  {
    id: 'web_bot_auth',
    component: 'technical_foundation',
    title: 'Web Bot Auth key directory',
    weight: 0,
    severity: 'info',
    rule: '`/.well-known/http-message-signatures-directory` (Web Bot Auth, draft-meunier-webbotauth-httpsig-directory): a JWKS whose keys have `kty`. Informational (no weight): only sites that run agents of their own publish one, so it is a finding only when a document is there but broken',
    goal: 'For sites that run agents of their own: publish the keys they sign requests with, so other sites can let them in.',
    fix: 'Serve /.well-known/http-message-signatures-directory as a JWKS (application/http-message-signatures-directory+json) of the Ed25519 keys your agents sign with.',
    spec: 'https://datatracker.ietf.org/doc/draft-meunier-webbotauth-httpsig-directory/',
    evidence: ['web_bot_auth'],
    applies: apiOnly,
    informational: true,
    evaluate: ({ facts }) =>
      facts.discovery.web_bot_auth
        ? discoveryEvaluation(facts.discovery.web_bot_auth, 'key directory')
        : notCollected,
  },
  {
    id: 'x402',
    component: 'technical_foundation',
    title: 'x402 payment discovery, and resources that ask for payment',
    weight: 1,
    severity: 'info',
    rule: '`/.well-known/x402.json` or `/.well-known/x402` listing resources (or giving `x402Version`): 1, unless a listed resource on the site (up to three, asked with GET without payment) answers anything but 402 with complete requirements - v2 `PAYMENT-REQUIRED` (base64 JSON) or a v1 JSON body that the PaymentRequired schema of `@x402/core` accepts (the same answer the `commerce` check reads) - or 400/422 (it asks for input before a price): then 0.5; a [present](#soft-404s) JSON object listing none: 0.5',
    goal: 'Let agents find what they can pay for, and get a valid 402 when they ask for it unpaid.',
    fix: 'List paid resources at /.well-known/x402.json (or /.well-known/x402); each must answer an unpaid request with 402 and complete payment requirements (PAYMENT-REQUIRED).',
    spec: 'https://github.com/coinbase/x402/blob/main/specs/x402-specification.md',
    evidence: ['x402'],
    applies: ['api', 'shop'],
    evaluate: ({ facts }) => {
      const base = discoveryEvaluation(facts.discovery.x402, 'x402 document');
      const v = facts.verification?.x402;
      if (!facts.discovery.x402.valid || !v || v.resources.length === 0) return base;
      const failed = v.resources.filter((r) => r.verdict === 'failed');
      return failed.length
        ? {
            ...base,
            score: 0.5,
            seen: `x402 document found, but ${failed.map((r) => `${r.url} answered ${r.status ? `HTTP ${r.status}` : 'nothing'}${r.note ? ` (${r.note})` : ''}`).join('; ')}`,
          }
        : {
            ...base,
            seen: `x402 document found; ${v.resources.filter((r) => r.verdict === 'valid').length} of ${v.resources.length} resource(s) answered 402 with valid requirements${v.resources.some((r) => r.verdict === 'needs_input') ? ' (the others ask for input first)' : ''}`,
          };
    },
  },
];

function discoveryEvaluation(
  check: { present: boolean; valid: boolean; url: string; note: string | null },
  what: string,
): Evaluation {
  return {
    score: check.valid ? 1 : check.present ? 0.5 : 0,
    seen: check.valid
      ? `${what} found`
      : check.present
        ? `${what} found but ${check.note ?? 'invalid'}`
        : `no ${what}${check.note && check.note !== 'not fetched' ? ` (${check.note})` : ''}`,
    evidence_url: check.url,
  };
}
