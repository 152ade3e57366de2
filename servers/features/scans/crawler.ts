/**
 * The scanner's crawler: fetches one site's public pages and machine documents, politely and safely.
 *
 * Safety comes from `createSafeFetch` (only http(s); every connection, each redirect hop included,
 * goes to an address the policy allows, checked at connect time so DNS rebinding cannot slip
 * through). On top of it this module follows redirects itself (`redirect: 'manual'`) with a hop cap
 * and loop detection and refuses hops that leave the site, reads at most `max_bytes` of any body,
 * bounds each request and the whole scan in time, checks content types, and obeys the site's
 * robots.txt for its own product token (robots-parser is given the token, never the full UA).
 * Politeness: at most `concurrency` requests in flight to the host (p-limit) and `delay_ms` between
 * a slot's requests (raised to the site's Crawl-delay for our token, capped).
 *
 * Before judging any document it asks for a made-up path under `/.well-known/`: a site that
 * answers that with 2xx (a soft 404, `collectors/soft-404.ts`) would otherwise seem to have every
 * document, and an answer the same as that one earns nothing.
 *
 * What is collected is judged by the pure collectors in `collectors/`; scoring is `scoring.ts`.
 *
 * The parts, in `crawl/`: `session.ts` (the limiter, the time budget, the counters, the evidence and
 * `get`, the one way a request is made), then one module per phase: `site.ts` (robots.txt and the
 * origin), `documents.ts` (the site-level documents and the unknown-path judge), `pages.ts` (home
 * page, sitemaps, breadth-first pages), `verification.ts` (OpenAPI, the claims, the OAuth chain;
 * with `commerce.ts`, the commerce manifests and the paid resources' unpaid answers), `webmcp.ts`
 * (the home page in headless Chromium for its WebMCP tools, when the deployment runs a browser; its
 * requests go through the same `get`) and `facts.ts` (what is derived once everything is read).
 * `test/unit/scan-fixtures-golden.test.ts`
 * pins what the whole produces on every fixture site.
 */
import { parseAiTxt } from './collectors/ai-txt.ts';
import {
  agentDocumentPaths,
  checkA2aCard,
  checkAgentSkills,
  checkApiCatalog,
  checkAuthorizationServer,
  checkProtectedResource,
  checkWebBotAuth,
  discoveryPaths,
} from './collectors/discovery.ts';
import { parseLlmsTxt } from './collectors/llms-txt.ts';
import { absentRobots, parseRobots, type RobotsFacts } from './collectors/robots.ts';
import { fetchDocuments, findMcpCard, type SiteDocuments, UnknownPathJudge } from './crawl/documents.ts';
import { entityOfHome, markdownFacts, policyOf } from './crawl/facts.ts';
import { PageCrawl, readSitemaps } from './crawl/pages.ts';
import {
  asFetched,
  CrawlError,
  type CrawlRequest,
  CrawlSession,
  type FetchOutcome,
  type FetchResult,
} from './crawl/session.ts';
import { readRobots, Site } from './crawl/site.ts';
import { type Claims, findOpenApi, verifyClaims, verifyOAuth, x402Check } from './crawl/verification.ts';
import { readWebMcp } from './crawl/webmcp.ts';
import type { SiteFacts, WebMcpFacts } from './site-facts.ts';
import type { OAuthChain } from './verify.ts';

export {
  CrawlError,
  type CrawlLimits,
  type CrawlProgress,
  type CrawlRequest,
  productToken,
  sameSite,
} from './crawl/session.ts';
export type { SiteFacts } from './site-facts.ts';

/** The whole crawl, phase by phase; each phase fetches through the one session. */
export async function crawlSite(request: CrawlRequest): Promise<SiteFacts> {
  const session = new CrawlSession(request);
  // 1. robots.txt decides the origin (https first) and what we may fetch.
  const robotsTxt = await readRobots(session);
  // 2. Home page first: its final URL fixes the crawl origin (http -> https, apex -> www).
  session.progress('documents', 'reading the home page');
  const homeUrl = `${robotsTxt.origin}/`;
  const homeOutcome = robotsTxt.mayFetch(homeUrl)
    ? await session.get(homeUrl, 'text/html;q=1, */*;q=0.1', undefined, { topic: 'home' })
    : null;
  const site = new Site(session, robotsTxt, homeOutcome?.ok ? homeOutcome.result.final_url : homeUrl);
  const crawl = new PageCrawl(site, homeUrl);

  // 3. Site-level documents, in parallel through the same limiter.
  const docs = await fetchDocuments(site);
  const judge = new UnknownPathJudge(site, docs.probeAnswer);
  const { catalog, prm, asm, mcpCard: card, mcpJson, x402, x402Plain, a2aCard, skills, botAuth } = docs;
  for (const o of [catalog, prm, asm, card, mcpJson, x402, x402Plain, a2aCard, skills, botAuth])
    judge.like(o);
  const robots =
    robotsTxt.text !== null && !judge.like(robotsTxt.outcome)
      ? parseRobots(robotsTxt.url, robotsTxt.text)
      : absentRobots();
  const texts = {
    llms: judge.plainText(docs.llms),
    llmsFull: judge.plainText(docs.llmsFull),
    ai: judge.plainText(docs.aiTxt),
  };
  const apiCatalog = checkApiCatalog(
    asFetched(docs.catalog),
    site.at(discoveryPaths.api_catalog),
    judge.answer,
  );
  const mcpCard = await findMcpCard(site, docs, judge);

  // 4. Home page facts, then sitemaps, then the rest of the pages breadth first.
  crawl.readHome(homeOutcome);
  const { sitemap, pageUrls } = await readSitemaps(site, robots.sitemaps);
  for (const url of pageUrls) crawl.enqueue(url, site.origin);
  await crawl.crawlQueue();

  // 5. OpenAPI, then 6. verify what the documents claim.
  const homeHeaders = homeOutcome?.ok ? homeOutcome.result.headers : null;
  const openapi = await findOpenApi(site, judge, {
    serviceDescs: apiCatalog.service_descs,
    homeLink: homeHeaders?.link ?? null,
    pages: crawl.pages,
  });
  const claims = await verifyClaims(site, {
    docs,
    judge,
    mcpCard: mcpCard.card,
    openapi: openapi.document,
    llmsText: texts.llms,
    pages: crawl.pages,
  });
  // 7. The OAuth chain, and beside it the home page in a browser for its WebMCP tools.
  const [chain, webmcp] = await Promise.all([
    verifyOAuth(site, docs.prm, claims.mcp, judge),
    request.browser && homeOutcome?.ok ? readWebMcp(site, request.browser) : null,
  ]);
  if (session.signal.aborted && !session.cancelled) session.stats.stopped = 'time_budget';
  if (session.cancelled) throw new CrawlError('timeout', 'scan cancelled');
  return siteFactsOf(
    { site, robots, texts, docs, judge, sitemap, crawl, homeOutcome, claims, chain, webmcp },
    {
      api_catalog: apiCatalog,
      mcp_server_card: mcpCard.check,
      openapi: openapi.check,
    },
  );
}

interface Collected {
  site: Site;
  robots: RobotsFacts;
  texts: { llms: FetchResult | null; llmsFull: FetchResult | null; ai: FetchResult | null };
  docs: SiteDocuments;
  judge: UnknownPathJudge;
  sitemap: SiteFacts['sitemap'];
  crawl: PageCrawl;
  homeOutcome: FetchOutcome | null;
  claims: Claims;
  chain: OAuthChain | null;
  webmcp: WebMcpFacts | null;
}

/** The crawl's facts as stored with the scan, once every request is done. */
function siteFactsOf(
  c: Collected,
  judged: Pick<SiteFacts['discovery'], 'api_catalog' | 'mcp_server_card' | 'openapi'>,
): SiteFacts {
  const { site, texts, claims } = c;
  const { session } = site;
  const markdown = markdownFacts(
    site.home,
    c.docs.markdown,
    { target: claims.markdownTarget, outcome: claims.markdownOther },
    c.crawl.pageWords,
  );
  const llmsFacts = texts.llms
    ? { ...parseLlmsTxt(texts.llms.body, texts.llms.final_url), url: texts.llms.final_url }
    : null;
  session.stats.duration_ms = Date.now() - session.started;
  session.done = session.total;
  session.progress('done', `${session.stats.pages_fetched} page(s) read`);
  const home = c.homeOutcome?.ok ? c.homeOutcome.result : null;
  return {
    origin: site.origin,
    https: site.origin.startsWith('https:'),
    robots: { ...c.robots, url: site.robots.url },
    llms_txt: llmsFacts,
    llms_full_txt: texts.llmsFull
      ? { url: texts.llmsFull.final_url, bytes: texts.llmsFull.bytes, truncated: texts.llmsFull.truncated }
      : null,
    ai_txt: texts.ai ? { ...parseAiTxt(texts.ai.body), url: texts.ai.final_url } : null,
    unknown_path: c.judge.answer,
    sitemap: c.sitemap,
    markdown,
    discovery: discoveryOf(c, judged),
    home: home
      ? {
          url: home.final_url,
          status: home.status,
          link: home.headers.link ?? null,
          x_robots_tag: home.headers['x-robots-tag'] ?? null,
        }
      : null,
    verification: {
      mcp: claims.mcp,
      oauth: c.chain,
      openapi: claims.openapi,
      x402: claims.x402,
      llms_txt: claims.llms_txt,
      door: claims.door,
    },
    webmcp: c.webmcp,
    commerce: claims.commerce,
    policy: policyOf(
      site.robots.text !== null && c.robots.present ? site.robots.text : null,
      site.robots.url,
      {
        llms_txt: llmsFacts ? llmsFacts.url : site.at('/llms.txt'),
        sitemaps: c.sitemap.documents.map((d) => d.url),
      },
    ),
    entity: c.crawl.homeHtml ? entityOfHome(c.crawl.homeHtml, site.home, llmsFacts) : null,
    pages: c.crawl.pages,
    crawl: session.stats,
    requests: session.evidence.requests,
  };
}

function discoveryOf(
  { site, docs, judge }: Collected,
  judged: Pick<SiteFacts['discovery'], 'api_catalog' | 'mcp_server_card' | 'openapi'>,
): SiteFacts['discovery'] {
  const unknown = judge.answer;
  return {
    api_catalog: judged.api_catalog,
    oauth_protected_resource: checkProtectedResource(
      asFetched(docs.prm),
      site.at(discoveryPaths.oauth_protected_resource),
      unknown,
    ),
    oauth_authorization_server: checkAuthorizationServer(
      asFetched(docs.asm),
      site.at(discoveryPaths.oauth_authorization_server),
      unknown,
    ),
    mcp_server_card: judged.mcp_server_card,
    x402: x402Check(site, docs, judge),
    openapi: judged.openapi,
    a2a_agent_card: checkA2aCard(
      asFetched(docs.a2aCard),
      site.at(agentDocumentPaths.a2a_agent_card),
      unknown,
    ),
    agent_skills: checkAgentSkills(asFetched(docs.skills), site.at(agentDocumentPaths.agent_skills), unknown),
    web_bot_auth: checkWebBotAuth(asFetched(docs.botAuth), site.at(agentDocumentPaths.web_bot_auth), unknown),
  };
}
