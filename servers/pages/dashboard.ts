/**
 * The owner dashboard at `{site_url}/dashboard` (issue 14 section 2): an account's sites with their
 * pixel status and install snippets, traffic charts per site, the latest scans and their findings,
 * service keys (create, revoke) and the OAuth clients the owner approved (revoke).
 *
 * Owners sign in on the authorization server's own sign-in page (`dashboard-sign-in.ts`); the
 * session stands for the OAuth grant the sign-in ended with (`auth/dashboard-sessions.ts`). Every
 * read and write invokes the registry's operations with that grant, exactly as the owner-scoped
 * MCP server does: the owner tools read under row-level security (`db/scoped.ts`), and the account
 * is the grant's, never a value of the request. Forms are plain HTML posts carrying the session's
 * anti-forgery token; every page is `no-store` and kept out of search indexes.
 *
 * The router only routes: the forms are the functions below, the pages are dashboard-overview.ts
 * and dashboard-site.ts, and all of them are built with the shared `DashboardKit` (dashboard-kit.ts).
 */
import express, { type Request, type RequestHandler, type Response } from 'express';
import { DASHBOARD_SESSION_TTL_MS, type DashboardSession } from '../../auth/dashboard-sessions.ts';
import { withOwnerScope } from '../../db/scoped.ts';
import { ServiceError } from '../errors.ts';
import {
  createServiceKey,
  revokeConnectedClient,
  revokeServiceKey,
} from '../features/accounts/operations.ts';
import { installPixel, verifySite } from '../features/sites/operations.ts';
import type { AnyOperation } from '../operation.ts';
import type { Services } from '../services.ts';
import { DASHBOARD_PATH, DashboardKit } from './dashboard-kit.ts';
import { overviewPage } from './dashboard-overview.ts';
import { sitePage } from './dashboard-site.ts';
import { html } from './html.ts';
import { wrap } from './page-kit.ts';

type Handler = (kit: DashboardKit, req: Request, res: Response) => Promise<void>;

export function dashboardRouter(services: Services, operations: readonly AnyOperation[]): RequestHandler {
  const kit = new DashboardKit(services, operations);
  const router = express.Router();
  const route = (handler: Handler) => wrap((req, res) => handler(kit, req, res));
  router.get('/sign-in', route(startSignIn));
  router.get('/callback', route(finishSignIn));
  router.post('/sign-out', kit.form, route(signOut));
  router.get('/', route(overview));
  router.get('/sites/:site_id', route(siteById));
  router.post('/sites', kit.form, route(addSite));
  router.post('/sites/:site_id/verify', kit.form, route(verifyOwnership));
  router.post('/keys', kit.form, route(createKey));
  router.post('/keys/:key_id/revoke', kit.form, route(revokeKey));
  router.post('/clients/:grant_id/revoke', kit.form, route(revokeClient));

  const outer = express.Router();
  outer.use(DASHBOARD_PATH, router);
  return outer;
}

async function startSignIn(kit: DashboardKit, req: Request, res: Response): Promise<void> {
  const returnTo = typeof req.query.return_to === 'string' ? req.query.return_to : DASHBOARD_PATH;
  // Only a dashboard path: the sign-in must never send the owner anywhere else (open redirect).
  const safe = /^\/dashboard(\/[\w-]+)*$/.test(returnTo) ? returnTo : DASHBOARD_PATH;
  await kit.signIn.start(res, safe);
}

async function finishSignIn(kit: DashboardKit, req: Request, res: Response): Promise<void> {
  const result = await kit.signIn.finish(req, res);
  if (!result.ok) {
    await kit.send(
      req,
      res,
      {
        path: DASHBOARD_PATH,
        title: 'Sign-in failed',
        description: result.message,
        body: html`<h1>Sign-in failed</h1><p role="alert">${result.message}</p><p><a href="${kit.base}/sign-in">Sign in again</a></p>`,
        markdown: `# Sign-in failed\n\n${result.message}\n`,
      },
      result.status,
    );
    return;
  }
  const { cookie } = await kit.sessions.create(result.grant);
  kit.signIn.setSessionCookie(res, cookie, DASHBOARD_SESSION_TTL_MS);
  res.set('Cache-Control', 'no-store').redirect(303, `${kit.site}${result.returnTo}`);
}

async function signOut(kit: DashboardKit, req: Request, res: Response): Promise<void> {
  const session = await kit.formSession(req, res);
  if (!session) return;
  await kit.sessions.end(session);
  kit.signIn.clearSessionCookie(res);
  await kit.send(req, res, {
    path: DASHBOARD_PATH,
    title: 'Signed out of the dashboard',
    description: 'You are signed out of the dashboard.',
    body: html`<h1>Signed out of the dashboard</h1>
<p>Your dashboard session has ended. You may still be signed in at the authorization server, which lets the dashboard sign you in again without your password; to end that too, <a href="${kit.config.auth_url}/logout">sign out of your account</a>.</p>
<p><a href="${kit.base}">Back to the dashboard</a></p>`,
    markdown: '# Signed out of the dashboard\n',
  });
}

async function overview(kit: DashboardKit, req: Request, res: Response): Promise<void> {
  const session = await kit.sessionOrSignIn(req, res);
  if (session) await overviewPage(kit, req, res, session);
}

async function siteById(kit: DashboardKit, req: Request, res: Response): Promise<void> {
  const session = await kit.sessionOrSignIn(req, res);
  if (!session) return;
  const siteId = String(req.params.site_id);
  const row = /^[0-9a-f-]{36}$/i.test(siteId)
    ? await withOwnerScope(kit.services, session.grant.accountId, (scope) =>
        scope.sites().selectAll('sites').where('sites.id', '=', siteId).executeTakeFirst(),
      )
    : undefined;
  if (!row) {
    await kit.send(
      req,
      res,
      {
        path: DASHBOARD_PATH,
        title: 'No such site',
        description: 'This site is not one of yours.',
        body: html`<h1>No such site</h1><p>Your account has no site with this id.</p><p><a href="${kit.base}">Back to your dashboard</a></p>`,
        markdown: '# No such site\n',
      },
      404,
    );
    return;
  }
  await sitePage(kit, req, res, session, row);
}

/** An operation's refusal shown on the overview, or rethrown when it is not the owner's to fix. */
async function refusal(
  kit: DashboardKit,
  req: Request,
  res: Response,
  session: DashboardSession,
  err: unknown,
): Promise<void> {
  if (!(err instanceof ServiceError) || err.status >= 500) throw err;
  await overviewPage(kit, req, res, session, { kind: 'error', text: err.publicDetail }, err.status);
}

async function addSite(kit: DashboardKit, req: Request, res: Response): Promise<void> {
  const session = await kit.formSession(req, res);
  if (!session) return;
  try {
    const site = await kit.call(installPixel, req, session, {
      domain: (req.body as Record<string, unknown>).domain,
    });
    res.redirect(303, `${kit.base}/sites/${site.site_id}`);
  } catch (err) {
    await refusal(kit, req, res, session, err);
  }
}

async function verifyOwnership(kit: DashboardKit, req: Request, res: Response): Promise<void> {
  const session = await kit.formSession(req, res);
  if (!session) return;
  try {
    const result = await kit.call(verifySite, req, session, { site_id: req.params.site_id });
    const row = await withOwnerScope(kit.services, session.grant.accountId, (scope) =>
      scope.sites().selectAll('sites').where('sites.id', '=', result.site_id).executeTakeFirstOrThrow(),
    );
    const text = result.verified
      ? `${result.domain} is verified.`
      : `Not verified yet: ${result.checks.map((c) => `${c.method}: ${c.detail}`).join('; ')}`;
    await sitePage(kit, req, res, session, row, { kind: result.verified ? 'done' : 'error', text });
  } catch (err) {
    await refusal(kit, req, res, session, err);
  }
}

async function createKey(kit: DashboardKit, req: Request, res: Response): Promise<void> {
  const session = await kit.formSession(req, res);
  if (!session) return;
  const label = String((req.body as Record<string, unknown>).label ?? '').trim();
  let key: Awaited<ReturnType<typeof createServiceKey.handler>>;
  try {
    key = await kit.call(createServiceKey, req, session, label ? { label } : {});
  } catch (err) {
    await refusal(kit, req, res, session, err);
    return;
  }
  await kit.send(req, res, {
    path: DASHBOARD_PATH,
    title: 'Your new service key',
    description: 'A new service key, shown once.',
    body: html`<h1>Your new service key</h1>
<p role="status">Copy it now: it is shown only once. Only its digest is kept.</p>
<p class="card"><code data-testid="new-key">${key.service_key}</code></p>
<p>Label: ${key.label ?? 'none'}. Send it as the <code>x-service-key</code> header.</p>
<p><a href="${kit.base}">Back to your dashboard</a></p>`,
    markdown: '# Your new service key\n\nShown once in the HTML page.\n',
  });
}

async function revokeKey(kit: DashboardKit, req: Request, res: Response): Promise<void> {
  const session = await kit.formSession(req, res);
  if (!session) return;
  try {
    await kit.call(revokeServiceKey, req, session, { key_id: req.params.key_id });
    res.redirect(303, `${kit.base}#keys-h`);
  } catch (err) {
    await refusal(kit, req, res, session, err);
  }
}

async function revokeClient(kit: DashboardKit, req: Request, res: Response): Promise<void> {
  const session = await kit.formSession(req, res);
  if (!session) return;
  if (req.params.grant_id === session.grant.grantId) {
    await overviewPage(
      kit,
      req,
      res,
      session,
      { kind: 'error', text: 'Sign out to end this dashboard session.' },
      400,
    );
    return;
  }
  try {
    await kit.call(revokeConnectedClient, req, session, { grant_id: req.params.grant_id });
    res.redirect(303, `${kit.base}#clients-h`);
  } catch (err) {
    await refusal(kit, req, res, session, err);
  }
}
