/**
 * The first phase of a crawl: robots.txt decides the origin (the first scheme that answers) and
 * what the scanner may fetch; its Crawl-delay for our token slows the session down. Then the site
 * the later phases share: where the crawl runs once the home page's redirects are followed.
 */

import { robotsParser } from '../collectors/robots.ts';
import { isHtmlAnswer } from '../collectors/soft-404.ts';
import { CrawlError, type CrawlSession, type FetchOutcome, sameSite, textOf } from './session.ts';

export interface SiteRobots {
  /** `scheme://domain`, the first scheme whose robots.txt request was answered. */
  origin: string;
  url: string;
  outcome: FetchOutcome | null;
  /** The robots.txt body when it was served as text (not an HTML page), else null. */
  text: string | null;
  mayFetch: (url: string) => boolean;
}

export async function readRobots(session: CrawlSession): Promise<SiteRobots> {
  const { request } = session;
  session.progress('robots', 'reading robots.txt');
  let origin = '';
  let outcome: FetchOutcome | null = null;
  for (const scheme of request.schemes ?? ['https', 'http']) {
    const candidate = `${scheme}://${request.domain}`;
    const answer = await session.get(`${candidate}/robots.txt`, 'text/plain, */*;q=0.1', 512 * 1024, {
      topic: 'robots',
    });
    if (answer.ok) {
      origin = candidate;
      outcome = answer;
      break;
    }
    if (answer.blocked) throw new CrawlError('blocked', `${request.domain}: destination not allowed`);
    if (session.signal.aborted) throw new CrawlError('timeout', `${request.domain}: time budget exhausted`);
    outcome = answer;
  }
  if (!origin) {
    const reason = outcome && !outcome.ok ? outcome.error : 'no answer';
    throw new CrawlError('unreachable', `${request.domain} could not be reached (${reason})`);
  }
  const url = `${origin}/robots.txt`;
  const answer = outcome ? textOf(outcome) : null;
  const text = answer && !isHtmlAnswer(answer) ? answer.body : null;
  const ownRules = robotsParser(url, text ?? '');
  const crawlDelay = ownRules.getCrawlDelay(session.token);
  if (crawlDelay) session.slowDownTo(crawlDelay);
  return { origin, url, outcome, text, mayFetch: (u) => ownRules.isAllowed(u, session.token) !== false };
}

/** Where the crawl runs, fixed by the home page's final URL (http -> https, apex -> www). */
export class Site {
  readonly session: CrawlSession;
  readonly robots: SiteRobots;
  /** The home page's final URL. */
  readonly home: string;
  readonly origin: string;

  constructor(session: CrawlSession, robots: SiteRobots, home: string) {
    this.session = session;
    this.robots = robots;
    this.home = home;
    this.origin = new URL(home).origin;
  }

  /** `path` on the crawl's origin. */
  at(path: string): string {
    return `${this.origin}${path}`;
  }

  mayFetch(url: string): boolean {
    return this.robots.mayFetch(url);
  }

  /** On this site (`sameSite`); false for what is no URL. */
  readonly onSite = (url: string): boolean => {
    try {
      return sameSite(new URL(url), new URL(this.origin));
    } catch {
      return false;
    }
  };
}
