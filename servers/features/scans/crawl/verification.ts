/**
 * The last phases of a crawl: find the OpenAPI document, then verify what the documents claim
 * (issue 16 section 1), in parallel and each bounded by the session: the MCP server the card names
 * answers, the OpenAPI servers and x402 resources answer, llms.txt links resolve, the home page
 * opens to AI agents (the door test), a second page answers markdown; then the OAuth chain, which
 * reads the MCP server's 401.
 */
import LinkHeader from 'http-link-header';
import {
  agentDocumentPaths,
  checkMcpCard,
  checkOpenApi,
  checkX402,
  type DiscoveryCheck,
  discoveryPaths,
  mcpCardEndpoint,
  openApiServers,
} from '../collectors/discovery.ts';
import { parseLlmsTxt } from '../collectors/llms-txt.ts';
import { mediaType } from '../collectors/soft-404.ts';
import type {
  CommerceFacts,
  LlmsVerification,
  OpenApiVerification,
  PageSummary,
  X402Verification,
} from '../site-facts.ts';
import {
  type DoorAnswer,
  doorTest,
  type McpVerification,
  type OAuthChain,
  verifyMcp,
  verifyOAuthChain,
} from '../verify.ts';
import { readCommerce, x402VerificationOf } from './commerce.ts';
import type { SiteDocuments, UnknownPathJudge } from './documents.ts';
import { asFetched, type FetchOutcome, type FetchResult, textOf } from './session.ts';
import type { Site } from './site.ts';

/** Largest answer of a site's MCP server read by the live check (`verifyMcp`). */
const MCP_ANSWER_MAX_BYTES = 1024 * 1024;
const LLMS_LINKS_CHECKED = 10;

export interface OpenApiFound {
  check: DiscoveryCheck;
  document: { url: string; body: string; truncated: boolean } | null;
}

/** OpenAPI: a service-desc from the catalog, a link on the pages, or the conventional paths. */
export async function findOpenApi(
  site: Site,
  judge: UnknownPathJudge,
  leads: { serviceDescs: string[]; homeLink: string | null; pages: PageSummary[] },
): Promise<OpenApiFound> {
  const { session } = site;
  const candidates = [
    ...leads.serviceDescs,
    ...linkTargets(leads.homeLink, 'service-desc', site.home),
    ...leads.pages.flatMap((p) => p.openapi_links),
  ].filter(site.onSite);
  let found: OpenApiFound = { check: checkOpenApi(null, site.at('/openapi.json')), document: null };
  const tried = [...new Set(candidates), site.at('/openapi.json'), site.at('/openapi.yaml')].slice(0, 3);
  for (const candidate of tried) {
    if (session.signal.aborted) break;
    const outcome = await session.get(
      candidate,
      'application/json, application/yaml;q=0.9, */*;q=0.1',
      undefined,
      {
        topic: 'openapi',
      },
    );
    judge.like(outcome);
    found = { check: checkOpenApi(asFetched(outcome), candidate, judge.answer), document: null };
    if (found.check.valid) {
      if (outcome.ok)
        found.document = {
          url: outcome.result.final_url,
          body: outcome.result.body,
          truncated: outcome.result.truncated,
        };
      break;
    }
  }
  return found;
}

export interface Claims {
  mcp: McpVerification | null;
  openapi: OpenApiVerification | null;
  x402: X402Verification | null;
  commerce: CommerceFacts;
  llms_txt: LlmsVerification | null;
  door: DoorAnswer[] | null;
  /** A page beyond the home page, asked for as markdown. */
  markdownTarget: PageSummary | null;
  markdownOther: FetchOutcome | null;
}

/** Everything the documents claim, checked in parallel. */
export async function verifyClaims(
  site: Site,
  found: {
    docs: SiteDocuments;
    judge: UnknownPathJudge;
    mcpCard: { url: string; body: string } | null;
    openapi: OpenApiFound['document'];
    llmsText: FetchResult | null;
    pages: PageSummary[];
  },
): Promise<Claims> {
  const { session } = site;
  session.progress('documents', 'verifying what the documents claim');
  const { x402, x402Plain } = found.docs;
  const x402Fetched = [x402, x402Plain].find(
    (o) => o.ok && checkX402(asFetched(o), o.result.final_url, found.judge.answer).valid,
  );
  const markdownTarget = found.pages.find((p) => p.url !== site.home && p.url !== `${site.origin}/`) ?? null;
  const x402Doc = x402Fetched?.ok ? x402Fetched.result : null;
  const [mcp, openapi, commerce, llmsLinks, door, markdownOther] = await Promise.all([
    found.mcpCard && !session.signal.aborted
      ? verifyMcpCard(site, found.mcpCard, found.judge)
      : Promise.resolve(null),
    verifyOpenApiServers(site, found.openapi),
    readCommerce(site, { judge: found.judge, a2aCard: found.docs.a2aCard, x402Doc, openapi: found.openapi }),
    verifyLlmsLinks(site, found.llmsText),
    site.mayFetch(site.home) && !session.signal.aborted
      ? doorTest(site.home, session.probe, session.signal)
      : Promise.resolve(null),
    markdownTarget && !session.signal.aborted
      ? session.get(markdownTarget.url, 'text/markdown, text/plain;q=0.5', undefined, { topic: 'markdown' })
      : Promise.resolve(null),
  ]);
  return {
    mcp,
    openapi,
    x402: x402VerificationOf(x402Doc, commerce),
    commerce,
    llms_txt: llmsLinks,
    door,
    markdownTarget,
    markdownOther,
  };
}

/** x402's two documents: the one that is valid, else the plain name when only it is there. */
export function x402Check(site: Site, docs: SiteDocuments, judge: UnknownPathJudge): DiscoveryCheck {
  const named = checkX402(asFetched(docs.x402), site.at(discoveryPaths.x402), judge.answer);
  const plain = checkX402(asFetched(docs.x402Plain), site.at(agentDocumentPaths.x402_plain), judge.answer);
  return named.valid || !plain.present ? named : plain;
}

/**
 * The OAuth chain from the protected resource metadata (the site's, and the one for the MCP
 * endpoint's path) and the MCP server's 401 challenge.
 */
export async function verifyOAuth(
  site: Site,
  prm: FetchOutcome,
  mcp: McpVerification | null,
  judge: UnknownPathJudge,
): Promise<OAuthChain | null> {
  const { session } = site;
  const documents: { url: string; body: string }[] = [];
  if (prm.ok && textOf(prm) && !judge.like(prm))
    documents.push({ url: prm.result.final_url, body: prm.result.body });
  if (mcp?.endpoint) {
    const path = new URL(mcp.endpoint).pathname.replace(/\/$/, '');
    if (path) {
      const scoped = await session.get(
        site.at(`${discoveryPaths.oauth_protected_resource}${path}`),
        'application/json',
        64 * 1024,
        { topic: 'oauth' },
      );
      if (scoped.ok && textOf(scoped) && !judge.like(scoped))
        documents.push({ url: scoped.result.final_url, body: scoped.result.body });
    }
  }
  if (!(documents.length || mcp?.auth_required) || session.signal.aborted) return null;
  return verifyOAuthChain({
    documents,
    challenge:
      mcp?.auth_required && mcp.endpoint
        ? { url: mcp.endpoint, resource_metadata: mcp.resource_metadata }
        : null,
    probe: session.probe,
  });
}

async function verifyMcpCard(
  site: Site,
  card: { url: string; body: string },
  judge: UnknownPathJudge,
): Promise<McpVerification | null> {
  const { session } = site;
  const { endpoint, tools } = mcpCardEndpoint(card.body, card.url);
  if (endpoint && !site.onSite(endpoint)) return null;
  const verified = await verifyMcp({
    cardUrl: card.url,
    endpoint,
    cardTools: tools,
    // Each MCP request takes a slot of the limiter and counts as a request of the crawl.
    fetch: session.limitedFetch,
    userAgent: session.userAgent,
    timeoutMs: session.limits.request_timeout_ms,
    // A tool list with input and output schemas runs past a page's size: a server with a few
    // dozen tools answers `tools/list` with a quarter of a megabyte (ours: 262 KB).
    maxBytes: MCP_ANSWER_MAX_BYTES,
    evidence: session.evidence,
    signal: session.signal,
  });
  if (verified.eras && endpoint)
    verified.eras.server_card = await serverCardExtension(site, endpoint, card, judge);
  return verified;
}

/**
 * The server card extension (SEP-2127, part of the 2026-07-28 revision): a card at the endpoint's
 * reserved location `<streamable-http-url>/server-card`. The card the crawl already read counts
 * when that is where it was.
 */
async function serverCardExtension(
  site: Site,
  endpoint: string,
  card: { url: string; body: string },
  judge: UnknownPathJudge,
): Promise<NonNullable<McpVerification['eras']>['server_card']> {
  const url = `${endpoint.replace(/\/$/, '')}/server-card`;
  if (card.url === url) return { url, found: true, note: null };
  if (!site.mayFetch(url) || site.session.signal.aborted)
    return { url, found: false, note: 'not fetched (robots.txt or the time budget)' };
  const got = await site.session.get(
    url,
    'application/mcp-server-card+json, application/json;q=0.9',
    256 * 1024,
    {
      topic: 'mcp',
    },
  );
  judge.like(got);
  const check = checkMcpCard(asFetched(got), url, judge.answer);
  return { url, found: check.valid, note: check.valid ? null : check.note };
}

async function verifyOpenApiServers(
  site: Site,
  doc: OpenApiFound['document'],
): Promise<OpenApiVerification | null> {
  if (!doc) return null;
  const { parsed, servers } = openApiServers(doc.body, doc.url);
  const checked = await Promise.all(
    servers.slice(0, 2).map(async (url) => {
      const got = await site.session.probe(url, {
        topic: 'openapi',
        accept: 'application/json, */*;q=0.5',
        maxBytes: 16 * 1024,
      });
      return {
        url,
        status: got.ok ? got.status : null,
        ok: got.ok && got.status < 500,
        note: got.ok ? null : got.error,
      };
    }),
  );
  return { url: doc.url, parsed, truncated: doc.truncated, servers: checked };
}

async function verifyLlmsLinks(site: Site, file: FetchResult | null): Promise<LlmsVerification | null> {
  if (!file) return null;
  const parsed = parseLlmsTxt(file.body, file.final_url);
  const links = [...new Set(parsed.sections.flatMap((s) => s.links.map((l) => l.url)))].filter(site.onSite);
  const checked = await Promise.all(
    links.slice(0, LLMS_LINKS_CHECKED).map(async (url) => {
      if (!site.mayFetch(url))
        return { url, status: null, ok: false, note: 'disallowed for the scanner by robots.txt' };
      const got = await site.session.probe(url, { topic: 'llms_links', accept: '*/*', maxBytes: 16 * 1024 });
      // Resolves: the resource is there. An API endpoint listed in llms.txt may answer 400, 401
      // or 405 to a bare GET and still exist; 404, 410 and 5xx are dead links.
      const dead = !got.ok || got.status === 404 || got.status === 410 || got.status >= 500;
      return {
        url,
        status: got.ok ? got.status : null,
        ok: !dead,
        note: got.ok ? (dead ? `HTTP ${got.status}` : null) : got.error,
      };
    }),
  );
  const type = mediaType(file.content_type);
  return {
    url: file.final_url,
    content_type: type,
    served_as_text: type === 'text/plain' || type === 'text/markdown' || type === 'text/x-markdown',
    links_total: links.length,
    links: checked,
  };
}

/** Targets of the links with relation `rel` in a `Link` header (RFC 8288), absolute. */
function linkTargets(header: string | null, rel: string, base: string): string[] {
  if (!header) return [];
  try {
    return LinkHeader.parse(header)
      .rel(rel)
      .flatMap((ref) => (URL.canParse(ref.uri, base) ? [new URL(ref.uri, base).href] : []));
  } catch {
    return [];
  }
}
