/**
 * The site-level documents of a crawl, asked for in parallel through the session's limiter:
 * llms.txt, llms-full.txt, ai.txt, the discovery documents under `/.well-known/`, the home page as
 * markdown, and first of all a made-up path under `/.well-known/`. A site that answers that with
 * 2xx (a soft 404, `collectors/soft-404.ts`) would otherwise seem to have every document: an answer
 * the same as that one is noted in `same_answer` and earns nothing.
 */
import { randomBytes } from 'node:crypto';
import {
  agentDocumentPaths,
  checkMcpCard,
  type DiscoveryCheck,
  discoveryPaths,
  type Fetched,
  readMcpCatalog,
} from '../collectors/discovery.ts';
import {
  answersLikeUnknownPath,
  fingerprintOf,
  isHtmlAnswer,
  type UnknownPathAnswer,
} from '../collectors/soft-404.ts';
import { asFetched, type FetchOutcome, type FetchResult, sameSite, textOf } from './session.ts';
import type { Site } from './site.ts';

/** A made-up well-known name: a plain prefix, so a site's operator can tell what it is, and a random tail. */
const unknownPathPrefix = '/.well-known/agent-service-probe-';

export interface SiteDocuments {
  probeAnswer: FetchOutcome;
  llms: FetchOutcome | null;
  llmsFull: FetchOutcome | null;
  aiTxt: FetchOutcome | null;
  catalog: FetchOutcome;
  prm: FetchOutcome;
  asm: FetchOutcome;
  mcpCard: FetchOutcome;
  mcpJson: FetchOutcome;
  x402: FetchOutcome;
  x402Plain: FetchOutcome;
  a2aCard: FetchOutcome;
  skills: FetchOutcome;
  botAuth: FetchOutcome;
  /** The home page asked for as markdown; null when robots.txt keeps the scanner from it. */
  markdown: FetchOutcome | null;
}

export async function fetchDocuments(site: Site): Promise<SiteDocuments> {
  const { session } = site;
  const at = (path: string) => site.at(path);
  const allowedGet = (path: string, accept: string, topic: string, maxBytes?: number) =>
    site.mayFetch(at(path)) ? session.get(at(path), accept, maxBytes, { topic }) : Promise.resolve(null);
  const wellKnown = (path: string, topic: string) =>
    session.get(at(path), 'application/json, */*;q=0.1', 256 * 1024, { topic });
  const unknownPathUrl = at(`${unknownPathPrefix}${randomBytes(8).toString('hex')}`);
  const text = 'text/plain, text/markdown, */*;q=0.1';
  const [
    probeAnswer,
    llms,
    llmsFull,
    aiTxt,
    catalog,
    prm,
    asm,
    mcpCard,
    mcpJson,
    x402,
    x402Plain,
    a2aCard,
    skills,
    botAuth,
    markdown,
  ] = await Promise.all([
    session.get(unknownPathUrl, 'application/json, */*;q=0.1', 256 * 1024, { topic: 'unknown_path' }),
    allowedGet('/llms.txt', text, 'llms_txt'),
    allowedGet('/llms-full.txt', text, 'llms_full_txt'),
    allowedGet('/ai.txt', 'text/plain, */*;q=0.1', 'ai_txt', 256 * 1024),
    session.get(
      at(discoveryPaths.api_catalog),
      'application/linkset+json, application/json;q=0.9',
      256 * 1024,
      {
        topic: 'api_catalog',
      },
    ),
    wellKnown(discoveryPaths.oauth_protected_resource, 'oauth'),
    wellKnown(discoveryPaths.oauth_authorization_server, 'oauth'),
    wellKnown(discoveryPaths.mcp_server_card, 'mcp'),
    wellKnown(discoveryPaths.mcp_json, 'mcp'),
    wellKnown(discoveryPaths.x402, 'x402'),
    wellKnown(agentDocumentPaths.x402_plain, 'x402'),
    wellKnown(agentDocumentPaths.a2a_agent_card, 'a2a'),
    wellKnown(agentDocumentPaths.agent_skills, 'agent_skills'),
    session.get(
      at(agentDocumentPaths.web_bot_auth),
      'application/http-message-signatures-directory+json, application/json;q=0.9',
      64 * 1024,
      { topic: 'web_bot_auth' },
    ),
    site.mayFetch(site.home)
      ? session.get(site.home, 'text/markdown, text/plain;q=0.5', undefined, { topic: 'markdown' })
      : Promise.resolve(null),
  ]);
  // biome-ignore format: one line per document
  return { probeAnswer, llms, llmsFull, aiTxt, catalog, prm, asm, mcpCard, mcpJson, x402, x402Plain, a2aCard, skills, botAuth, markdown };
}

/** Judges answers against the site's answer to a path it does not have. */
export class UnknownPathJudge {
  /** Stored with the facts; its `same_answer` grows as answers are judged. */
  readonly answer: UnknownPathAnswer | null;

  constructor(site: Site, probeAnswer: FetchOutcome) {
    this.answer = probeAnswer.ok
      ? {
          url: probeAnswer.result.final_url,
          ...fingerprintOf(asFetched(probeAnswer) as Fetched),
          soft_404: probeAnswer.result.status >= 200 && probeAnswer.result.status < 300,
          same_answer: [],
        }
      : null;
    if (!probeAnswer.ok) site.session.noteError(probeAnswer.url, probeAnswer.error);
  }

  /** The answer is the site's answer to any path it lacks: noted, and never credited. */
  like(o: FetchOutcome | null): boolean {
    const fetched = o ? asFetched(o) : null;
    if (!fetched || !this.answer || !answersLikeUnknownPath(fetched, this.answer)) return false;
    if (!this.answer.same_answer.includes(fetched.url)) this.answer.same_answer.push(fetched.url);
    return true;
  }

  /** A 2xx answer that is text: neither an HTML page nor the answer to any path. */
  plainText(o: FetchOutcome | null): FetchResult | null {
    const r = o ? textOf(o) : null;
    return r && !isHtmlAnswer(r) && !this.like(o) ? r : null;
  }
}

export interface McpCardFound {
  check: DiscoveryCheck;
  /** The card the MCP verification reads: the one that earned the check. */
  card: { url: string; body: string } | null;
}

/**
 * The MCP server card: at its SEP-2127 path, at `mcp.json`, or the first card on this site that the
 * MCP catalog names.
 */
export async function findMcpCard(
  site: Site,
  docs: SiteDocuments,
  judge: UnknownPathJudge,
): Promise<McpCardFound> {
  const { mcpCard, mcpJson } = docs;
  const cardCheck = checkMcpCard(asFetched(mcpCard), site.at(discoveryPaths.mcp_server_card), judge.answer);
  const check = cardCheck.present
    ? cardCheck
    : checkMcpCard(asFetched(mcpJson), site.at(discoveryPaths.mcp_json), judge.answer);
  let card: McpCardFound['card'] = null;
  if (check.valid) {
    const source = cardCheck.present ? mcpCard : mcpJson;
    if (source.ok) card = { url: source.result.final_url, body: source.result.body };
  }
  return check.present ? { check, card } : fromMcpCatalog(site, judge, { check, card });
}

/** SEP-2127: the catalog names each card's URL; the first one on this site is read. */
async function fromMcpCatalog(
  site: Site,
  judge: UnknownPathJudge,
  found: McpCardFound,
): Promise<McpCardFound> {
  const { session } = site;
  const catalogUrl = site.at(discoveryPaths.mcp_catalog);
  const catalogOutcome = await session.get(catalogUrl, 'application/json, */*;q=0.1', 256 * 1024, {
    topic: 'mcp',
  });
  judge.like(catalogOutcome);
  const catalog = readMcpCatalog(asFetched(catalogOutcome), catalogUrl, judge.answer);
  if (!catalog.check.present) return found;
  const cardUrl = catalog.cards.find((u) => sameSite(new URL(u), new URL(site.origin)));
  if (!cardUrl || !site.mayFetch(cardUrl)) return { check: catalog.check, card: found.card };
  const card = await session.get(
    cardUrl,
    'application/mcp-server-card+json, application/json;q=0.9',
    256 * 1024,
    {
      topic: 'mcp',
    },
  );
  const listed = checkMcpCard(asFetched(card), cardUrl, judge.answer);
  if (!listed.valid) return { check: catalog.check, card: found.card };
  return {
    check: listed,
    card: card.ok ? { url: card.result.final_url, body: card.result.body } : found.card,
  };
}
