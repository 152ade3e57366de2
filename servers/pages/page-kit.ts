/**
 * What every public page of `public.ts` is built with, made once per router: the operation call a
 * page reads its data by (as the REST adapter does for the JSON endpoint), the send in the shared
 * layout with its CSP, and the 4xx page for an operation's refusal.
 */
import type { Request, RequestHandler, Response } from 'express';
import type { z } from 'zod';
import { requestInfo } from '../adapters/rest.ts';
import type { Config } from '../config.ts';
import { ServiceError } from '../errors.ts';
import { type AnyOperation, CallContext, invokeOperation, type Operation } from '../operation.ts';
import type { Services } from '../services.ts';
import { type Html, html } from './html.ts';
import { layout, pageCsp } from './layout.ts';
import { sendWithFeaturedBrand } from './marketplace.ts';
import type { RenderedPage } from './negotiate.ts';

/** A page as sent: its HTML body in the layout, its Markdown twin, and whether it draws SVG charts. */
export type PageContent = {
  path: string;
  title: string;
  description: string;
  body: Html;
  markdown: string;
  charts?: boolean;
};

/** Markdown with its markup characters escaped, for text that came from a user. */
export const md = (text: string) => text.replace(/([\\`*_[\]<>|])/g, '\\$1');

/** An async page handler as Express middleware: a rejection goes to the error handler. */
export const wrap =
  (handler: (req: Request, res: Response) => Promise<void>): RequestHandler =>
  (req, res, next) => {
    handler(req, res).catch(next);
  };

export class PageKit {
  readonly services: Services;
  readonly config: Config;
  /** `site_url`, the base of every page link. */
  readonly site: string;
  readonly csp: string;
  private readonly chartCsp: string;
  private readonly operations: readonly AnyOperation[];

  constructor(services: Services, operations: readonly AnyOperation[]) {
    this.services = services;
    this.operations = operations;
    this.config = services.config;
    this.site = services.config.site_url;
    this.csp = pageCsp(services.config);
    this.chartCsp = pageCsp(services.config, { svgCharts: true });
  }

  /** Invokes an operation for a page, as the REST adapter does for its JSON endpoint. */
  call<I extends z.ZodType, O extends z.ZodType>(
    op: Operation<I, O>,
    req: Request,
    input: unknown,
  ): Promise<z.output<O>> {
    const controller = new AbortController();
    return invokeOperation(
      op,
      new CallContext(
        {
          services: this.services,
          operations: this.operations,
          request: requestInfo(req, 'rest'),
          signal: controller.signal,
        },
        () => req.log,
      ),
      input,
    );
  }

  page(req: Request, res: Response, p: PageContent, status = 200): Promise<void> {
    const rendered: RenderedPage = {
      html: layout({
        config: this.config,
        path: p.path,
        title: p.title,
        description: p.description,
        body: p.body,
      }),
      markdown: p.markdown,
      csp: p.charts ? this.chartCsp : this.csp,
    };
    res.status(status);
    return sendWithFeaturedBrand(this.services, req, res, rendered);
  }

  /** A 404 or 400 as a page (problem details stay for the JSON endpoints). */
  problemPage(req: Request, res: Response, error: unknown, path: string): Promise<void> {
    if (!(error instanceof ServiceError) || error.status >= 500) throw error;
    const detail = error.expose ? error.message : error.title;
    return this.page(
      req,
      res,
      {
        path,
        title: error.title,
        description: detail,
        body: html`<h1>${error.title}</h1><p>${detail}</p><p><a href="${this.site}/">Back to the home page</a></p>`,
        markdown: `# ${error.title}\n\n${detail}\n`,
      },
      error.status,
    );
  }
}
