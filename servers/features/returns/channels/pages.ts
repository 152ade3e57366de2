/**
 * Which pages of a brand's site to read for its channels, and its return policy: links (and
 * sitemap URLs) whose text or path names contact, help, support, customer service or returns, on
 * the brand's own registrable domain (`help.brand.com` counts, another company's help desk does
 * not). Pure: the discovery does the fetching.
 */
import type { CheerioAPI } from 'cheerio';
import { getDomain } from 'tldts';
import type { FoundChannel } from './schemas.ts';

/** An HTML page as read: where it was read (after redirects) and its parsed document. */
export interface HtmlPage {
  url: URL;
  $: CheerioAPI;
}

/** Words of links worth reading, with how much: contact and customer service first. */
const pageWords: [RegExp, number][] = [
  [/\bcontact(?:[-_ ]?us)?\b|\bkontakt|\bcontacto\b|\bcontatti\b|\bnous[-_ ]contacter\b/i, 6],
  [/\bcustomer[-_ ]?(?:service|care|support)s?\b|\bkundenservice\b|\bservice[-_ ]client/i, 6],
  [/\breturns?\b|\brefunds?\b|\bexchanges?\b|\bretour|\brückgabe|\bdevoluci/i, 5],
  [/\bhelp(?:[-_ ]?(?:center|centre|desk))?\b|\bsupport\b|\bhilfe\b|\baide\b|\bayuda\b/i, 4],
  [/\bfaqs?\b|\bfrequently[-_ ]asked\b/i, 2],
];

/** A link to the return policy itself (not any returns page): its text or path says so. */
const policyWords =
  /\b(?:returns?|refunds?)(?:[-_ ]?(?:and|&|-)[-_ ]?(?:refunds?|exchanges?|returns?))?[-_ ]?(?:policy|policies|conditions|terms)\b|\breturn[-_]?policy|\brefund[-_]?policy/i;

/** Whether `url` is on the brand's site: same registrable domain, or the same host for local names. */
export function onBrandSite(url: URL, brandDomain: string): boolean {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
  const registrable = getDomain(url.hostname);
  return registrable ? registrable === brandDomain : url.host === brandDomain;
}

/** How much a link with this text and URL promises a contact or returns page (0: not at all). */
export function pageScore(text: string, url: URL): number {
  const said = `${text} ${pathText(url).replace(/[/.]/g, ' ')}`;
  let best = 0;
  for (const [words, score] of pageWords) if (words.test(said) && score > best) best = score;
  return best;
}

export interface PageLink {
  url: string;
  score: number;
}

/** The page's links to contact, help, support and returns pages of the brand's site, best first. */
export function contactPageLinks(page: HtmlPage, brandDomain: string): PageLink[] {
  const links = new Map<string, PageLink>();
  page.$('a[href]').each((_, el) => {
    const url = absolute(page.$(el).attr('href'), page.url);
    if (!url || !onBrandSite(url, brandDomain)) return;
    url.hash = '';
    const score = pageScore(page.$(el).text(), url);
    if (score === 0 || url.href === page.url.href) return;
    const known = links.get(url.href);
    if (!known || known.score < score) links.set(url.href, { url: url.href, score });
  });
  return [...links.values()].sort((a, b) => b.score - a.score);
}

/** Sitemap URLs that look like contact, help, support or returns pages, best first. */
export function contactPagesOf(urls: readonly string[], brandDomain: string): PageLink[] {
  const out: PageLink[] = [];
  for (const raw of urls) {
    const url = absolute(raw, undefined);
    if (!url || !onBrandSite(url, brandDomain)) continue;
    const score = pageScore('', url);
    if (score > 0) out.push({ url: url.href, score });
  }
  return out.sort((a, b) => b.score - a.score);
}

/** Links to the brand's return policy on this page (`onSite`: whether a URL is the brand's). */
export function returnPolicyLinks(page: HtmlPage, onSite: (url: URL) => boolean): FoundChannel[] {
  const found = new Map<string, FoundChannel>();
  page.$('a[href]').each((_, el) => {
    const url = absolute(page.$(el).attr('href'), page.url);
    if (!url || !onSite(url)) return;
    url.hash = '';
    const said = `${page.$(el).text()} ${pathText(url)}`;
    if (!policyWords.test(said) || found.has(url.href)) return;
    found.set(url.href, {
      kind: 'return_policy',
      address: url.href,
      detail: {},
      source_url: page.url.href,
      found_by: 'page_link',
    });
  });
  return [...found.values()];
}

/** `href` resolved against the page, or undefined when it is not a URL. */
export function absolute(href: string | undefined, base: URL | undefined): URL | undefined {
  if (!href) return undefined;
  try {
    return new URL(href.trim(), base);
  } catch {
    return undefined;
  }
}

/** The URL's path as words (`%20` decoded); a malformed escape is kept as written. */
function pathText(url: URL): string {
  try {
    return decodeURIComponent(url.pathname);
  } catch {
    return url.pathname;
  }
}
