/**
 * The pages of a crawl: the home page first, then the sitemaps, then every known page breadth
 * first in waves, up to `max_pages`. Only HTML pages on the crawl's origin are read, robots.txt
 * obeyed; each page's facts are kept without its links (`PageSummary`).
 */
import * as cheerio from 'cheerio';
import { parsePage } from '../collectors/page.ts';
import { parseSitemap } from '../collectors/sitemap.ts';
import type { PageSummary, SiteFacts } from '../site-facts.ts';
import { wordsOf } from '../verify.ts';
import { type FetchOutcome, type FetchResult, sameSite, textOf } from './session.ts';
import type { Site } from './site.ts';

const htmlTypes = /^(text\/html|application\/xhtml\+xml)\b/i;
/** Links to these are no pages. */
const notPages = /\.(png|jpe?g|gif|webp|svg|ico|pdf|zip|gz|mp4|mp3|woff2?|css|js|xml|txt|json|md)$/i;

export class PageCrawl {
  readonly pages: PageSummary[] = [];
  /** Words of the first pages' text, to compare with their markdown renderings. */
  readonly pageWords = new Map<string, Set<string>>();
  /** The home page's HTML, when it was read. */
  homeHtml: string | null = null;
  private readonly site: Site;
  private readonly queue: string[] = [];
  private readonly seen = new Set<string>();

  constructor(site: Site, homeUrl: string) {
    this.site = site;
    this.seen.add(homeUrl);
  }

  /** Queues a page of `base` not seen yet. */
  enqueue(url: string, base: string): void {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      return;
    }
    u.hash = '';
    if (u.origin !== base || this.seen.has(u.href)) return;
    if (notPages.test(u.pathname)) return;
    this.seen.add(u.href);
    this.queue.push(u.href);
  }

  /** The home page's answer, fetched before the documents: read as a page, or counted as failed. */
  readHome(outcome: FetchOutcome | null): void {
    const { stats } = this.site.session;
    if (!outcome) {
      stats.skipped_by_robots++;
      return;
    }
    if (!outcome.ok) {
      stats.pages_failed++;
      this.site.session.noteError(outcome.url, outcome.error);
      return;
    }
    const r = outcome.result;
    if (r.status >= 200 && r.status < 300 && htmlTypes.test(r.content_type ?? '')) {
      this.homeHtml = r.body;
      for (const link of this.read(r)) this.enqueue(link, this.site.origin);
    } else {
      stats.pages_failed++;
      this.site.session.noteError(
        r.final_url,
        r.status >= 300 ? `HTTP ${r.status}` : `not HTML (${r.content_type})`,
      );
    }
  }

  /** Every queued page, in waves of what `max_pages` leaves room for. */
  async crawlQueue(): Promise<void> {
    const { session } = this.site;
    const { limits, stats } = session;
    const expected = () =>
      session.done + Math.min(this.queue.length, Math.max(0, limits.max_pages - this.pages.length)) + 1;
    session.total = session.done + Math.min(this.queue.length, limits.max_pages - this.pages.length) + 1;
    while (this.queue.length > 0 && !session.signal.aborted) {
      const room = limits.max_pages - (stats.pages_fetched + stats.pages_failed);
      if (room <= 0) {
        stats.stopped = 'max_pages';
        break;
      }
      const wave = this.queue.splice(0, room);
      await Promise.all(wave.map((url) => this.visit(url)));
      session.total = expected();
    }
  }

  private async visit(url: string): Promise<void> {
    const { session } = this.site;
    if (!this.site.mayFetch(url)) {
      session.stats.skipped_by_robots++;
      return;
    }
    const outcome = await session.get(url, 'text/html, application/xhtml+xml;q=0.9, */*;q=0.1');
    if (!outcome.ok) {
      session.stats.pages_failed++;
      session.noteError(outcome.url, outcome.error);
      return;
    }
    const r = outcome.result;
    if (r.status < 200 || r.status >= 300) {
      session.stats.pages_failed++;
      session.noteError(r.final_url, `HTTP ${r.status}`);
      return;
    }
    if (!htmlTypes.test(r.content_type ?? '')) {
      session.stats.skipped_not_html++;
      session.noteError(r.final_url, `not HTML (${r.content_type ?? 'no content type'})`);
      return;
    }
    const links = this.read(r);
    for (const link of links) this.enqueue(link, new URL(r.final_url).origin);
    session.progress('pages', `read ${new URL(r.final_url).pathname}`);
  }

  /** Keeps a page's facts; answers its links. */
  private read(r: FetchResult): string[] {
    const { session } = this.site;
    session.stats.pages_fetched++;
    const facts = parsePage(r.body, r.final_url);
    session.request.onPage?.({ url: r.final_url, html: r.body, facts });
    if (this.pageWords.size < 6) this.pageWords.set(r.final_url, wordsOf(pageText(r.body)));
    const { links, ...summary } = facts;
    this.pages.push({
      ...summary,
      status: r.status,
      bytes: r.bytes,
      truncated: r.truncated,
      x_robots_tag: r.headers['x-robots-tag'] ?? null,
    });
    return links;
  }
}

/**
 * The sitemaps robots.txt names (or `/sitemap.xml`), indexes followed, up to `max_sitemaps`
 * documents; answers what each held and the page URLs they list.
 */
export async function readSitemaps(
  site: Site,
  named: readonly string[],
): Promise<{ sitemap: SiteFacts['sitemap']; pageUrls: string[] }> {
  const { session } = site;
  const sitemap: SiteFacts['sitemap'] = { documents: [], urls_found: 0, urls_with_lastmod: 0 };
  const queue = named.length ? [...named] : [site.at('/sitemap.xml')];
  const seen = new Set<string>();
  const pageUrls: string[] = [];
  while (queue.length && sitemap.documents.length < session.limits.max_sitemaps && !session.signal.aborted) {
    const url = queue.shift() as string;
    if (seen.has(url)) continue;
    seen.add(url);
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      continue;
    }
    if (!sameSite(target, new URL(site.origin))) {
      sitemap.documents.push({ url, kind: 'unreachable', entries: 0, note: 'on another site' });
      continue;
    }
    const outcome = await session.get(url, 'application/xml, text/xml;q=0.9, */*;q=0.1', undefined, {
      topic: 'sitemap',
    });
    const r = textOf(outcome);
    if (!r) {
      const note = outcome.ok ? `HTTP ${outcome.result.status}` : outcome.error;
      sitemap.documents.push({ url, kind: 'unreachable', entries: 0, note });
      continue;
    }
    queue.push(...readSitemap(sitemap, url, r, pageUrls));
  }
  return { sitemap, pageUrls };
}

/** Adds one sitemap document to `sitemap` and its pages to `pageUrls`; answers the sitemaps it lists. */
function readSitemap(
  sitemap: SiteFacts['sitemap'],
  url: string,
  r: FetchResult,
  pageUrls: string[],
): string[] {
  const parsed = parseSitemap(r.body);
  if (parsed.kind === 'urlset') {
    sitemap.documents.push({
      url,
      kind: 'urlset',
      entries: parsed.urls.length,
      note: r.truncated ? 'truncated' : null,
    });
    sitemap.urls_found += parsed.urls.length;
    sitemap.urls_with_lastmod =
      (sitemap.urls_with_lastmod ?? 0) +
      parsed.urls.filter((u) => u.lastmod && validLastmod(u.lastmod)).length;
    for (const u of parsed.urls) pageUrls.push(u.loc);
    return [];
  }
  if (parsed.kind === 'index') {
    sitemap.documents.push({ url, kind: 'index', entries: parsed.sitemaps.length, note: null });
    return parsed.sitemaps;
  }
  sitemap.documents.push({ url, kind: 'invalid', entries: 0, note: parsed.reason });
  return [];
}

/** A sitemap `lastmod` in W3C Datetime (sitemaps.org): a date, optionally with a time. */
function validLastmod(value: string): boolean {
  return /^\d{4}(-\d{2}(-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2}))?)?)?$/.test(value.trim());
}

/** The text of an HTML page as a reader sees it (scripts and styles out). */
function pageText(html: string): string {
  const $ = cheerio.load(html);
  $('script, style, noscript, template, svg, head').remove();
  return $('body').text() || $.root().text();
}
