/**
 * How a page is answered: HTML for people, the same content as Markdown for agents that ask for
 * `text/markdown` (the scanner's `markdown_negotiation` check), and JSON when a page has a JSON form
 * and the client prefers it. Always `Vary: Accept`, so caches keep the representations apart.
 */
import type { Request, Response } from 'express';

export interface RenderedPage {
  html: string;
  markdown: string;
  /** Content-Security-Policy of the HTML. */
  csp: string;
  /** A JSON representation, for pages that have one. */
  json?: string;
}

export function sendPage(req: Request, res: Response, page: RenderedPage): void {
  res.vary('Accept');
  const offered =
    page.json === undefined
      ? ['text/html', 'text/markdown']
      : ['text/html', 'text/markdown', 'application/json'];
  const wanted = req.accepts(offered);
  if (wanted === 'text/markdown') {
    res.type('text/markdown; charset=utf-8').send(page.markdown);
    return;
  }
  if (wanted === 'application/json' && page.json !== undefined) {
    res.type('application/json').send(page.json);
    return;
  }
  res
    .set('Content-Security-Policy', page.csp)
    .set('X-Content-Type-Options', 'nosniff')
    .set('Referrer-Policy', 'strict-origin-when-cross-origin')
    .type('text/html; charset=utf-8')
    .send(page.html);
}
