/**
 * The public pages of `{site_url}` (issue 14 section 2): `/leaderboard`, `/scan/{domain}`, `/souls`,
 * `/souls/{agent_id}`, `/robot-soul`, `/agent-requests`, `/docs`, and the stylesheet. Each page reads its data by
 * invoking the same operations as the JSON endpoints (`invokeOperation`: validation, output
 * contract), renders HTML in the shared layout with escaping by default, and answers Markdown
 * for `Accept: text/markdown` (negotiate.ts). The router only routes: each page is a function of
 * the shared `PageKit` (page-kit.ts) in its own module (leaderboard.ts, scan-report.ts, souls.ts).
 */
import express, { type RequestHandler } from 'express';
import { getFeatured } from '../features/catalog/featured-bid/operations.ts';
import { getAgentHub } from '../features/directory/operations.ts';
import { AGENT_REQUESTS_PATH } from '../features/returns/brand-guide.ts';
import type { AnyOperation } from '../operation.ts';
import type { Services } from '../services.ts';
import { agentRequestsPage } from './agent-requests.ts';
import { docsRouter } from './docs.ts';
import { STYLESHEET_PATH, stylesheet } from './layout.ts';
import { leaderboardPage } from './leaderboard.ts';
import { agentHubBody, featuredBody, sendWithFeaturedBrand } from './marketplace.ts';
import { PageKit, wrap } from './page-kit.ts';
import { robotSoulPage } from './robot-soul.ts';
import { scanReportPage } from './scan-report.ts';
import { soulPage, soulsPage } from './souls.ts';

/** The HTML pages of section 2 with a fixed path (for the sitemap and the link crawl). */
export const publicPagePaths = [
  '/leaderboard',
  '/agenthub',
  '/featured',
  '/souls',
  '/robot-soul',
  '/agent-requests',
  '/docs',
] as const;

export function publicPagesRouter(services: Services, operations: readonly AnyOperation[]): RequestHandler {
  const { config } = services;
  const kit = new PageKit(services, operations);
  const router = express.Router({ strict: false });

  router.get(STYLESHEET_PATH, (_req, res) => {
    res.set('Cache-Control', 'public, max-age=3600').type('text/css; charset=utf-8').send(stylesheet);
  });
  router.get(
    '/leaderboard',
    wrap((req, res) => leaderboardPage(kit, req, res)),
  );
  router.get(
    '/scan/:domain',
    wrap((req, res) => scanReportPage(kit, req, res)),
  );
  router.get(
    '/souls',
    wrap((req, res) => soulsPage(kit, req, res)),
  );
  router.get(
    '/souls/:agent_id',
    wrap((req, res) => soulPage(kit, req, res)),
  );

  const robotSoul = robotSoulPage(config);
  router.get(
    '/robot-soul',
    wrap((req, res) => sendWithFeaturedBrand(services, req, res, { ...robotSoul, csp: kit.csp })),
  );

  const agentRequests = agentRequestsPage(config);
  router.get(
    AGENT_REQUESTS_PATH,
    wrap((req, res) => sendWithFeaturedBrand(services, req, res, { ...agentRequests, csp: kit.csp })),
  );

  router.get(
    '/featured',
    wrap(async (req, res) => {
      const slot = await kit.call(getFeatured, req, {});
      await kit.page(req, res, {
        path: '/featured',
        title: 'The Featured Brand slot',
        description: 'Who holds the Featured Brand slot, the bid history, and how to bid with x402.',
        ...featuredBody(config, slot),
      });
    }),
  );

  router.get(
    '/agenthub',
    wrap(async (req, res) => {
      const hub = await kit.call(getAgentHub, req, {});
      await kit.page(req, res, {
        path: '/agenthub',
        title: 'Agent hub',
        description: 'The storefront: featured and spotlight placements, top listings, categories.',
        ...agentHubBody(config, hub),
      });
    }),
  );

  router.use(docsRouter(services, operations));
  return router;
}
