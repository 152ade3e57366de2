/**
 * The discovery documents and the home page on `{site_url}` (issue 14 section 1), each rendered
 * once per process from (operations, config) and served with its media type. Documents for agents
 * are open to every origin; `/` answers HTML, Markdown (`Accept: text/markdown`) or the JSON map of
 * URLs by content negotiation, with `Vary: Accept`.
 */

import express, { type RequestHandler, type Response } from 'express';
import { descriptorUrl, signupUrl, skillUrl } from '../../auth/descriptor.ts';
import { clientRegistrationMetadata, METADATA_CACHE_CONTROL, siteResource } from '../../auth/provider.ts';
import { SERVICE_SCOPE } from '../../auth/scopes.ts';
import { localSitesAllowed, serviceVersion } from '../config.ts';
import { VERIFICATION_NAME, VERIFICATION_PATH } from '../features/sites/service.ts';
import type { AnyOperation, McpServerName } from '../operation.ts';
import { homePage, OG_IMAGE_PATH, ogImage, pagePaths } from '../pages/home.ts';
import { sendWithFeaturedBrand } from '../pages/marketplace.ts';
import { isLocalDomain } from '../public-address.ts';
import type { Services } from '../services.ts';
import { agentSkills } from './agent-skills.ts';
import {
  AGENT_CARD_PATH,
  AGENT_SKILLS_INDEX_PATH,
  AGENT_SKILLS_PATH,
  API_CATALOG_CONTENT_TYPE,
  API_CATALOG_PATH,
  apiCatalog,
  MCP_SERVER_CARD_TYPE,
} from './api-catalog.ts';
import { aiTxt, robotsTxt, sitemapXml } from './crawler-rules.ts';
import { llmsFullTxt, llmsTxt } from './llms-txt.ts';
import { LEGACY_SERVER_CARD_PATH, MCP_CATALOG_PATH, mcpCatalog, mcpServerCard } from './mcp-server-card.ts';
import { WEBMCP_SCRIPT_PATH, webmcpScript } from './webmcp-tools.ts';

const DISCOVERY_CACHE_CONTROL = 'public, max-age=300';

/**
 * Registrations of its own name a development deployment vouches for at once, newest first: their
 * lines stay within what the verifier reads of the file (4 KiB).
 */
const DEVELOPMENT_VOUCHED_SITES = 50;

/** RFC 9727 section 3: where the api-catalog is, as a Link header. */
export const apiCatalogLink = (siteUrl: string): string =>
  `<${siteUrl}${API_CATALOG_PATH}>; rel="api-catalog"`;

function open(res: Response): Response {
  return res
    .set('Access-Control-Allow-Origin', '*')
    .set('Cache-Control', DISCOVERY_CACHE_CONTROL)
    .set('X-Content-Type-Options', 'nosniff');
}

/** A document served as is, on GET and HEAD. */
const document =
  (type: string, body: string, headers: Record<string, string> = {}): RequestHandler =>
  (_req, res) => {
    open(res).set(headers).type(type).send(body);
  };

/**
 * `{site_url}/.well-known/oauth-protected-resource` (RFC 9728): the site as a resource. A token issued
 * for `resource={site_url}` authorizes the Bearer writes of the site and of the public API under it.
 */
export function siteResourceMetadata(services: Services) {
  const { config, authorization } = services;
  return {
    resource: siteResource(config),
    authorization_servers: [authorization.issuer],
    bearer_methods_supported: ['header'],
    scopes_supported: [SERVICE_SCOPE],
    ...clientRegistrationMetadata(authorization),
    resource_name: 'Agent service (Bearer writes on the site and the public API)',
    resource_documentation: `${config.site_url}/`,
  };
}

export function discoveryRouter(services: Services, operations: readonly AnyOperation[]): RequestHandler {
  const { config } = services;
  const router = express.Router({ strict: false });
  const json = (value: unknown) => JSON.stringify(value, null, 2);
  const link = apiCatalogLink(config.site_url);
  const home = homePage(operations, config);
  const urlMap = json({
    service: 'agent-service',
    version: serviceVersion,
    urls: {
      site: config.site_url,
      customer_service_agent: config.base_url,
      customer_service_openapi: `${config.base_url}/openapi.json`,
      public_api: config.public_api_url,
      catalog: `${config.public_api_url}/catalog`,
      live_catalog: `${config.functions_url}/catalog`,
      health: `${config.public_api_url}/health`,
      mcp: config.mcp_url,
      mcp_owner: `${config.mcp_url}/auth`,
      authorization_server: config.auth_url,
      agent_auth: descriptorUrl(config),
      agent_auth_skill: skillUrl(config),
      anonymous_signup: signupUrl(config),
      security_events: `${config.auth_url}/.well-known/ssf-configuration`,
      openapi: `${config.site_url}/openapi.json`,
      api_catalog: `${config.site_url}${API_CATALOG_PATH}`,
      llms_txt: `${config.site_url}/llms.txt`,
      agent_skills: `${config.site_url}${AGENT_SKILLS_INDEX_PATH}`,
      a2a_agent_card: `${config.site_url}${AGENT_CARD_PATH}`,
    },
  });

  const homeResponse = { ...home, json: urlMap };
  router.get('/', (req, res, next) => {
    res.set('Link', link);
    sendWithFeaturedBrand(services, req, res, homeResponse).catch(next);
  });
  // The deployment's own site (PIXEL_SITE_ID) proves control of its domain by serving its token
  // (sites/service.ts), so the traffic its pixel sees counts towards its own public score.
  // In development mode the deployment vouches for every registration of the local name it was
  // reached by (`localhost:8787`, `127.0.0.1:8787`) or of its own host: whoever runs a development
  // service runs its accounts too, and the proof is still fetched over HTTP from the name registered,
  // so a name that does not reach this process never verifies. Production never serves these.
  const ownSiteId = config.pages.pixel_site_id;
  const ownHost = new URL(config.site_url).host.toLowerCase();
  const vouchesForLocalNames = config.mode === 'development' && localSitesAllowed(config);
  if (ownSiteId || vouchesForLocalNames) {
    router.get(VERIFICATION_PATH, async (req, res, next) => {
      const tokens: string[] = [];
      if (ownSiteId) {
        const own = await services.sites.get(ownSiteId);
        if (own && (own.domain === ownHost.replace(/^www\./, '') || own.domain === ownHost))
          tokens.push(own.verification_token);
      }
      const host = (req.headers.host ?? '').toLowerCase();
      if (vouchesForLocalNames && (host === ownHost || isLocalDomain(host))) {
        tokens.push(...(await services.sites.tokensFor(host, DEVELOPMENT_VOUCHED_SITES)));
      }
      if (tokens.length === 0) return next();
      res
        .set('Cache-Control', 'no-store')
        .type('text/plain; charset=utf-8')
        .send([...new Set(tokens)].map((token) => `${VERIFICATION_NAME}=${token}\n`).join(''));
    });
  }
  router.get(OG_IMAGE_PATH, document('image/svg+xml', ogImage()));

  router.get(
    API_CATALOG_PATH,
    document(API_CATALOG_CONTENT_TYPE, json(apiCatalog(operations, config)), { Link: link }),
  );
  router.get(
    WEBMCP_SCRIPT_PATH,
    document('text/javascript; charset=utf-8', webmcpScript(operations, config)),
  );
  router.get('/llms.txt', document('text/markdown; charset=utf-8', llmsTxt(operations, config)));
  router.get('/llms-full.txt', document('text/markdown; charset=utf-8', llmsFullTxt(operations, config)));
  router.get('/robots.txt', document('text/plain; charset=utf-8', robotsTxt(config)));
  router.get('/ai.txt', document('text/plain; charset=utf-8', aiTxt(config)));
  router.get('/sitemap.xml', document('application/xml', sitemapXml(config, pagePaths)));
  router.get(MCP_CATALOG_PATH, document('application/json', json(mcpCatalog(operations, config))));
  const skills = agentSkills(operations, config);
  router.get(AGENT_SKILLS_INDEX_PATH, document('application/json', skills.index));
  for (const skill of skills.skills) {
    router.get(
      `${AGENT_SKILLS_PATH}/${skill.name}/SKILL.md`,
      document('text/markdown; charset=utf-8', skill.markdown),
    );
  }
  router.get(
    LEGACY_SERVER_CARD_PATH,
    document('application/json', json(mcpServerCard(operations, config, 'public'))),
  );
  router.get('/.well-known/oauth-protected-resource', (_req, res) => {
    open(res).set('Cache-Control', METADATA_CACHE_CONTROL).json(siteResourceMetadata(services));
  });
  return router;
}

/** `<streamable-http-url>/server-card` of one MCP server (SEP-2127), mounted at that URL. */
export function serverCardRouter(
  services: Services,
  operations: readonly AnyOperation[],
  server: McpServerName,
): RequestHandler {
  const router = express.Router({ strict: false });
  router.get(
    '/',
    document(
      MCP_SERVER_CARD_TYPE,
      JSON.stringify(mcpServerCard(operations, services.config, server), null, 2),
    ),
  );
  return router;
}
