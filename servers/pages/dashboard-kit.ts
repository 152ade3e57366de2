/**
 * What every page and form of the owner dashboard (dashboard.ts) is built with, made once per
 * router: the owner's operation call (the session's account and grant, nothing from the request),
 * the `no-store`, unindexed send in the shared layout, and the session checks of a page and a form.
 */
import express, { type Request, type RequestHandler, type Response } from 'express';
import type { z } from 'zod';
import type { DashboardSession, DashboardSessions } from '../../auth/dashboard-sessions.ts';
import { cookieOf, refusedNul } from '../../auth/form-security.ts';
import type { Config } from '../config.ts';
import { type AnyOperation, invokeOperation, type Operation, type OperationContext } from '../operation.ts';
import type { Services } from '../services.ts';
import { DashboardSignIn, SESSION_COOKIE } from './dashboard-sign-in.ts';
import { type Html, html } from './html.ts';
import { layout, pageCsp } from './layout.ts';
import { sendWithFeaturedBrand } from './marketplace.ts';

export const DASHBOARD_PATH = '/dashboard';

/** A dashboard page as sent: its HTML body in the layout and its Markdown twin. */
export type DashboardPage = {
  path: string;
  title: string;
  description: string;
  body: Html;
  markdown: string;
};

/** A message shown atop a page after a form: what went wrong, or what was done. */
export type Notice = { kind: 'error' | 'done'; text: string };

export class DashboardKit {
  readonly services: Services;
  readonly config: Config;
  /** `site_url`, the base of the public pages. */
  readonly site: string;
  /** The dashboard's own URL, the base of its pages and forms. */
  readonly base: string;
  readonly sessions: DashboardSessions;
  readonly signIn: DashboardSignIn;
  /** The body parser of the dashboard's forms. */
  readonly form: RequestHandler = express.urlencoded({ extended: false, limit: '8kb' });
  private readonly csp: string;
  private readonly operations: readonly AnyOperation[];

  constructor(services: Services, operations: readonly AnyOperation[]) {
    this.services = services;
    this.operations = operations;
    this.config = services.config;
    this.site = services.config.site_url;
    this.base = `${this.site}${DASHBOARD_PATH}`;
    this.sessions = services.dashboardSessions;
    this.signIn = new DashboardSignIn(services);
    this.csp = pageCsp(services.config, { svgCharts: true });
  }

  /** The operation context of a signed-in owner: the account and grant of the session, nothing from the request. */
  private ownerContext(req: Request, session: DashboardSession): OperationContext {
    return {
      services: this.services,
      operations: this.operations,
      request: {
        id: String(req.id),
        ip: req.ip ?? 'unknown',
        via: 'rest',
        headers: { 'user-agent': req.get('user-agent') },
      },
      log: req.log,
      signal: new AbortController().signal,
      account: { id: session.grant.accountId, keyId: null },
      grant: session.grant,
    };
  }

  call<I extends z.ZodType, O extends z.ZodType>(
    op: Operation<I, O>,
    req: Request,
    session: DashboardSession,
    input: unknown,
  ): Promise<z.output<O>> {
    return invokeOperation(op, this.ownerContext(req, session), input);
  }

  send(req: Request, res: Response, p: DashboardPage, status = 200): Promise<void> {
    res.status(status).set({
      'Cache-Control': 'no-store',
      'X-Robots-Tag': 'noindex, nofollow',
      'X-Frame-Options': 'DENY',
    });
    res.vary('Cookie');
    return sendWithFeaturedBrand(this.services, req, res, {
      html: layout({
        config: this.config,
        path: DASHBOARD_PATH,
        title: p.title,
        description: p.description,
        body: p.body,
      }),
      markdown: p.markdown,
      csp: this.csp,
    });
  }

  /** A page's session; without one, the sign-in page (or, for a deeper page, sign-in and back). */
  async sessionOrSignIn(req: Request, res: Response): Promise<DashboardSession | null> {
    const session = await this.sessions.find(cookieOf(req, SESSION_COOKIE));
    if (session) return session;
    if (cookieOf(req, SESSION_COOKIE) !== undefined) this.signIn.clearSessionCookie(res);
    if (req.path === '/' || req.path === '') {
      await this.send(req, res, this.signedOutPage());
      return null;
    }
    await this.signIn.start(res, `${DASHBOARD_PATH}${req.path}`);
    return null;
  }

  /** A form's session and anti-forgery check; answers 403 itself when either fails. */
  async formSession(req: Request, res: Response): Promise<DashboardSession | null> {
    const session = await this.sessions.find(cookieOf(req, SESSION_COOKIE));
    const body = (req.body ?? {}) as Record<string, unknown>;
    if (!session || !this.sessions.csrfValid(session, body.csrf)) {
      await this.send(
        req,
        res,
        {
          path: DASHBOARD_PATH,
          title: 'Request refused',
          description: 'The form was not sent from your dashboard.',
          body: html`<h1>Request refused</h1><p role="alert">${
            session
              ? 'This form was not sent from your dashboard page.'
              : 'Your dashboard session has ended. Sign in again.'
          }</p><p><a href="${this.base}">Back to the dashboard</a></p>`,
          markdown: '# Request refused\n',
        },
        403,
      );
      return null;
    }
    if (refusedNul(res, body)) return null;
    return session;
  }

  private signedOutPage(): DashboardPage {
    const { base, site, config } = this;
    return {
      path: DASHBOARD_PATH,
      title: 'Owner dashboard',
      description:
        'Sign in to see your sites, their agent and human traffic, scans, keys and connected clients.',
      body: html`<h1>Owner dashboard</h1>
<p>Site owners see here their own sites and pixel status, agent-versus-human traffic per site, the latest scans with their findings, their service keys, and the AI clients they connected to their account.</p>
<p><a class="button" href="${base}/sign-in">Sign in</a></p>
<section class="card" aria-labelledby="new-h"><h2 id="new-h">No account yet?</h2>
<p>Create one with a password, then sign in here:</p>
<pre><code>curl -X POST ${config.public_api_url}/account -H 'content-type: application/json' \\
  -d '{"email":"you@example.com","password":"a long passphrase"}'</code></pre>
<p>Or register your first site and get its traffic pixel at once with <code>POST ${config.public_api_url}/pixel-install</code> (see the <a href="${site}/docs">API reference</a>).</p>
</section>`,
      markdown: `# Owner dashboard\n\nSign in at ${base}/sign-in to see your sites, traffic, scans, keys and connected clients.\n`,
    };
  }
}

/** The CSRF field every dashboard form carries. */
export const csrfField = (session: DashboardSession): Html =>
  html`<input type="hidden" name="csrf" value="${session.csrf}">`;

export const pct = (share: number) => `${Math.round(share * 1000) / 10}%`;
export const when = (iso: string | null) => (iso ? `${iso.slice(0, 16).replace('T', ' ')} UTC` : 'never');

export function noticeOf(notice: Notice | undefined): Html {
  if (!notice) return html``;
  return html`<p class="notice notice-${notice.kind}" role="${notice.kind === 'error' ? 'alert' : 'status'}">${notice.text}</p>`;
}
