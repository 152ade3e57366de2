/**
 * The llms-txt SKU's generator: from the pages a crawl read, an `llms.txt` (llmstxt.org), an
 * `llms-full.txt` (the pages' main text as markdown) and an `ai.txt` (Spawning's convention).
 * Pure: no I/O, no clock; the same pages give the same files.
 *
 * - llms.txt (https://llmstxt.org): an H1 with the site's name, a `>` blockquote summary, a line of
 *   free text, then H2 sections whose lists hold `- [name](url): notes` links; the section named
 *   `Optional` holds links a reader may skip.
 * - llms-full.txt has no written standard; it follows the common practice of documentation hosts:
 *   each page as `# Title`, a `Source: <url>` line, then the page's main text as markdown.
 * - ai.txt (https://spawning.ai/ai-txt): robots.txt-like `User-Agent` groups with `Allow` /
 *   `Disallow` lines (paths or file patterns) saying which files may be used to train AI models.
 *   The site's owner is the only one who can decide that, so the policy written is the one the
 *   site's robots.txt already states (Content-Signal `ai-train`, blocked training crawlers).
 */
import * as cheerio from 'cheerio';
import TurndownService from 'turndown';
import type { PageFacts } from '../../scans/collectors/page.ts';
import { organizationTypes } from '../../scans/collectors/page.ts';
import type { RobotsFacts } from '../../scans/collectors/robots.ts';

/** What the generator keeps of one page read by the crawl (its HTML is dropped once extracted). */
export interface ExtractedPage {
  url: string;
  /** Where to link: the page's canonical URL when it is on the same origin, else `url`. */
  link_url: string;
  title: string | null;
  h1: string | null;
  description: string | null;
  /** Names the page gives the site: JSON-LD Organization and WebSite `name`, `og:site_name`. */
  site_names: string[];
  json_ld_types: string[];
  noindex: boolean;
  /** The page's main content (navigation, header, footer and scripts left out) as markdown. */
  markdown: string;
  /** The first sentence of the main content, for pages without a description. */
  lead: string | null;
}

export type SectionName = 'Docs' | 'Products' | 'Blog' | 'About' | 'Pages' | 'Optional';

/** The order sections appear in; `Optional` is last, as llmstxt.org places it. */
export const sectionOrder: readonly SectionName[] = [
  'Docs',
  'Products',
  'Blog',
  'About',
  'Pages',
  'Optional',
];

export interface ListedLink {
  section: SectionName;
  name: string;
  url: string;
  notes: string | null;
  /** Whether the page's text is in llms-full.txt. */
  in_full_text: boolean;
}

export interface TrainingPolicy {
  training: 'allowed' | 'disallowed';
  /** Where the policy comes from, in words. */
  reason: string;
}

export interface SiteInput {
  /** Where the crawl ran (`https://example.com`), after redirects. */
  origin: string;
  robots: RobotsFacts;
  /** Pages in the order the crawl read them (home page first when it could be read). */
  pages: ExtractedPage[];
}

export interface GeneratedFiles {
  site_name: string;
  summary: string;
  llms_txt: string;
  llms_full_txt: string;
  ai_txt: string;
  links: ListedLink[];
  training_policy: TrainingPolicy;
  /** Pages left out of llms.txt: noindex, duplicates of a canonical page, account and cart pages, beyond the caps. */
  pages_left_out: number;
  /** Pages whose text did not fit in llms-full.txt (`MAX_FULL_TEXT_CHARS`). */
  full_text_left_out: number;
}

/** Links per section before the rest move to Optional; links in Optional. */
const MAX_LINKS_PER_SECTION = 30;
const MAX_OPTIONAL_LINKS = 60;
/** One page's text in llms-full.txt, and the whole file (characters). */
const MAX_PAGE_TEXT_CHARS = 60_000;
export const MAX_FULL_TEXT_CHARS = 1_000_000;
const MAX_NOTES_CHARS = 200;
const MAX_SUMMARY_CHARS = 300;

// ------------------------------------------------------------------------------------------------
// One page
// ------------------------------------------------------------------------------------------------

/** Parts of a page that are not its content (WAI-ARIA landmarks and their HTML elements). */
const chrome = [
  'script',
  'style',
  'noscript',
  'template',
  'svg',
  'iframe',
  'object',
  'embed',
  'form',
  'button',
  'input',
  'select',
  'textarea',
  'nav',
  'aside',
  'dialog',
  'img',
  'picture',
  'video',
  'audio',
  'canvas',
  '[role="navigation"]',
  '[role="banner"]',
  '[role="contentinfo"]',
  '[role="search"]',
  '[aria-hidden="true"]',
  '[hidden]',
].join(', ');

function markdownConverter(): TurndownService {
  const service = new TurndownService({
    headingStyle: 'atx',
    codeBlockStyle: 'fenced',
    bulletListMarker: '-',
    emDelimiter: '_',
    strongDelimiter: '**',
    linkStyle: 'inlined',
  });
  // Turndown pads list markers to four columns (`-   item`); one space is what people write.
  service.addRule('listItem', {
    filter: 'li',
    replacement(content, node, options) {
      // Turndown's DOM (domino); the project compiles without the DOM library, so named by shape.
      const parent = node.parentNode as {
        nodeName: string;
        children: ArrayLike<unknown>;
        getAttribute(name: string): string | null;
      } | null;
      let prefix = `${options.bulletListMarker} `;
      if (parent?.nodeName === 'OL') {
        const start = Number(parent.getAttribute('start') ?? 1) || 1;
        prefix = `${start + Array.prototype.indexOf.call(parent.children, node)}. `;
      }
      const text = content
        .replace(/^\n+/, '')
        .replace(/\n+$/, '\n')
        .replace(/\n/gm, `\n${' '.repeat(prefix.length)}`);
      return prefix + text + (node.nextSibling && !/\n$/.test(text) ? '\n' : '');
    },
  });
  return service;
}

let converter: TurndownService | undefined;
function markdownOf(html: string): string {
  converter ??= markdownConverter();
  return converter
    .turndown(html)
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

const oneLine = (text: string): string => text.replace(/\s+/g, ' ').trim();

function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max - 3);
  const space = cut.lastIndexOf(' ');
  return `${space > max / 2 ? cut.slice(0, space) : cut}...`;
}

function firstSentence(text: string): string | null {
  const line = oneLine(text);
  if (!line) return null;
  const match = /^.+?[.!?](?=\s|$)/.exec(line);
  return clip(match ? match[0] : line, MAX_NOTES_CHARS);
}

/** Names of Organization-like and WebSite nodes in the page's JSON-LD (through `@graph` and nesting). */
function jsonLdSiteNames($: cheerio.CheerioAPI): string[] {
  const organizations: string[] = [];
  const websites: string[] = [];
  const walk = (node: unknown, depth: number): void => {
    if (depth > 8 || node === null || typeof node !== 'object') return;
    if (Array.isArray(node)) {
      for (const item of node) walk(item, depth + 1);
      return;
    }
    const record = node as Record<string, unknown>;
    const types = (Array.isArray(record['@type']) ? record['@type'] : [record['@type']])
      .filter((t): t is string => typeof t === 'string')
      .map((t) => t.replace(/^https?:\/\/schema\.org\//, ''));
    const name = typeof record.name === 'string' ? oneLine(record.name) : '';
    if (name && types.some((t) => organizationTypes.has(t))) organizations.push(name);
    else if (name && types.includes('WebSite')) websites.push(name);
    for (const [key, value] of Object.entries(record)) if (key !== '@context') walk(value, depth + 1);
  };
  $('script[type="application/ld+json"]').each((_, el) => {
    try {
      walk(JSON.parse($(el).text()), 0);
    } catch {
      // A script that does not parse names nothing; the scan reports it (json_ld_errors).
    }
  });
  return [...organizations, ...websites];
}

/** The main content element: `<main>`, `role=main`, a lone `<article>`, else the body. */
function mainContent($: cheerio.CheerioAPI) {
  for (const selector of ['main', '[role="main"]']) {
    const found = $(selector).first();
    if (found.length) return found;
  }
  const articles = $('article');
  if (articles.length === 1) return articles.first();
  return $('body').length ? $('body') : $.root();
}

/** What the generator needs of a page, from its HTML and the crawler's facts about it. */
export function extractPage(html: string, facts: PageFacts): ExtractedPage {
  const $ = cheerio.load(html);
  const siteNames = jsonLdSiteNames($);
  const ogSiteName = facts.open_graph['og:site_name'];
  if (ogSiteName) siteNames.push(oneLine(ogSiteName));

  $(chrome).remove();
  // A page's own header and footer (site logo, menus, copyright) are chrome; an article's are not.
  $('header, footer, [role="banner"], [role="contentinfo"]')
    .filter((_, el) => $(el).parents('main, article, [role="main"]').length === 0)
    .remove();
  const root = mainContent($);
  root.find('a[href]').each((_, el) => {
    const a = $(el);
    try {
      const target = new URL(a.attr('href') as string, facts.url);
      if (target.protocol === 'http:' || target.protocol === 'https:') a.attr('href', target.href);
      else a.replaceWith(a.text());
    } catch {
      a.replaceWith(a.text());
    }
  });
  const paragraph = root
    .find('p')
    .toArray()
    .map((el) => oneLine($(el).text()))
    .find((text) => text.length > 0);
  const markdown = markdownOf(root.html() ?? '');

  let linkUrl = facts.url;
  if (facts.canonical) {
    try {
      if (new URL(facts.canonical).origin === new URL(facts.url).origin) linkUrl = facts.canonical;
    } catch {
      // keep the page's own URL
    }
  }
  return {
    url: facts.url,
    link_url: linkUrl,
    title: facts.title ? oneLine(facts.title) : null,
    h1: facts.h1[0] ? oneLine(facts.h1[0]) : null,
    description: oneLine(facts.description ?? facts.open_graph['og:description'] ?? '') || null,
    site_names: siteNames,
    json_ld_types: facts.json_ld_types,
    noindex: facts.noindex,
    markdown,
    lead: firstSentence(paragraph ?? markdown.replace(/^#+\s.*$/gm, '')),
  };
}

// ------------------------------------------------------------------------------------------------
// Sections
// ------------------------------------------------------------------------------------------------

/** Pages no reader of llms.txt wants: sign-in, account, cart, search results. */
const leftOutPath =
  /^\/(?:.*\/)?(?:log-?in|log-?out|sign-?in|sign-?up|sign-?out|register|account|my-account|cart|basket|checkout|search|password|reset-password)(?:\/|$)/i;

const sectionRules: readonly { section: SectionName; path: RegExp; types: readonly string[] }[] = [
  {
    section: 'Optional',
    path: /^(?:privacy|privacy-policy|terms|terms-of-service|tos|legal|cookies?|cookie-policy|imprint|impressum|disclaimer|careers?|jobs|tags?|categor(?:y|ies)|authors?|archives?|page)$/,
    types: [],
  },
  {
    section: 'Docs',
    path: /^(?:docs?|documentation|guides?|help|support|api|apis|reference|faqs?|tutorials?|learn|kb|knowledge-?base|manual|getting-started|quickstart|developers?)$/,
    types: ['TechArticle', 'FAQPage', 'HowTo', 'APIReference'],
  },
  {
    section: 'Products',
    path: /^(?:products?|pricing|plans|features|solutions|services|shop|store|catalog(?:ue)?|integrations)$/,
    types: ['Product', 'ProductGroup', 'Service', 'SoftwareApplication', 'WebApplication', 'Offer'],
  },
  {
    section: 'Blog',
    path: /^(?:blog|news|articles?|posts?|press|updates|changelog|releases|stories|insights)$/,
    types: ['BlogPosting', 'NewsArticle', 'Article', 'Blog', 'Report'],
  },
  {
    section: 'About',
    path: /^(?:about|about-us|company|team|contact|contact-us|mission|story|customers|partners)$/,
    types: ['AboutPage', 'ContactPage'],
  },
];

/** The section of a page: by the first path segment that names one, else by its schema.org types. */
export function sectionOf(page: Pick<ExtractedPage, 'url' | 'json_ld_types'>): SectionName {
  const url = new URL(page.url);
  if (url.pathname === '/' || url.pathname === '') return 'Pages';
  const segments = url.pathname.toLowerCase().split('/').filter(Boolean);
  for (const segment of segments) {
    const rule = sectionRules.find((r) => r.path.test(segment));
    if (rule) return rule.section;
  }
  for (const rule of sectionRules) {
    if (rule.types.some((t) => page.json_ld_types.includes(t))) return rule.section;
  }
  return 'Pages';
}

// ------------------------------------------------------------------------------------------------
// The site
// ------------------------------------------------------------------------------------------------

const titleSeparators = /\s+[|\-–—·:»]\s+/;

function siteNameOf(home: ExtractedPage | undefined, pages: ExtractedPage[], origin: string): string {
  const named = home?.site_names[0] ?? pages.find((p) => p.site_names.length)?.site_names[0];
  if (named) return named;
  const title = home?.title?.split(titleSeparators)[0]?.trim();
  if (title) return title;
  return new URL(origin).host;
}

/** The page's title without the site's name (`Pricing | Acme` -> `Pricing`). */
function linkNameOf(page: ExtractedPage, siteName: string, isHome: boolean): string {
  if (isHome) return siteName;
  const title = page.title ?? page.h1;
  if (title) {
    const parts = title
      .split(titleSeparators)
      .filter((p) => p.trim().toLowerCase() !== siteName.toLowerCase());
    const name = parts.join(' - ').trim() || title;
    return name;
  }
  return decodeURIComponent(new URL(page.url).pathname);
}

/** Text safe inside `[...]` of a markdown link, on one line. */
const linkText = (text: string): string => clip(oneLine(text).replace(/\[/g, '(').replace(/\]/g, ')'), 120);

/** A URL safe inside `(...)` of a markdown link: no spaces or parentheses left unencoded. */
const linkTarget = (url: string): string =>
  url.replace(/\(/g, '%28').replace(/\)/g, '%29').replace(/\s/g, '%20');

/** The policy the site's robots.txt states about AI training, for ai.txt. */
export function trainingPolicyOf(robots: RobotsFacts): TrainingPolicy {
  const signals = robots.content_signals.filter((c) => 'ai-train' in c.signals);
  const general = signals.find((c) => c.user_agents.includes('*')) ?? signals[0];
  if (general) {
    const allowed = general.signals['ai-train'] === true;
    return {
      training: allowed ? 'allowed' : 'disallowed',
      reason: `robots.txt says Content-Signal: ai-train=${allowed ? 'yes' : 'no'}`,
    };
  }
  const blocked = robots.agents.filter((a) => a.category === 'training' && a.named && !a.allowed_root);
  if (blocked.length > 0) {
    return {
      training: 'disallowed',
      reason: `robots.txt blocks the AI training crawlers ${blocked.map((a) => a.token).join(', ')}`,
    };
  }
  if (robots.blocks_everyone)
    return { training: 'disallowed', reason: 'robots.txt disallows / to every crawler' };
  return {
    training: 'allowed',
    reason: robots.present
      ? 'robots.txt does not restrict AI training'
      : 'the site has no robots.txt, so it states no restriction on AI training',
  };
}

function aiTxtOf(origin: string, policy: TrainingPolicy): string {
  const rules = policy.training === 'disallowed' ? ['Disallow: /', 'Disallow: *'] : ['Allow: /', 'Allow: *'];
  return [
    '# Spawning AI',
    `# ai.txt for ${origin}, in Spawning's ai.txt convention (https://spawning.ai/ai-txt): which of`,
    "# this site's files may be used to train AI models. Patterns are paths or file types (*.jpg).",
    `# Policy taken from the site's own statement: ${policy.reason}.`,
    `# ${policy.training === 'disallowed' ? 'To allow training, replace Disallow with Allow.' : 'To opt out of training, replace Allow with Disallow.'}`,
    '',
    'User-Agent: *',
    ...rules,
    '',
  ].join('\n');
}

export function generateSiteFiles(site: SiteInput): GeneratedFiles {
  const origin = new URL(site.origin).origin;
  const homeUrl = `${origin}/`;
  const home = site.pages.find((p) => p.url === homeUrl || p.link_url === homeUrl);
  const siteName = oneLine(siteNameOf(home, site.pages, origin));
  const host = new URL(origin).host;
  const summary = clip(
    home?.description ??
      home?.lead ??
      site.pages.find((p) => p.description)?.description ??
      (siteName === host ? `The website at ${host}.` : `The website of ${siteName}, at ${host}.`),
    MAX_SUMMARY_CHARS,
  );

  // Home page first, then the crawl's order; one entry per canonical page.
  const ordered = home ? [home, ...site.pages.filter((p) => p !== home)] : [...site.pages];
  const seen = new Set<string>();
  let leftOut = 0;
  const bySection: SectionEntries = new Map(sectionOrder.map((s) => [s, []]));
  for (const page of ordered) {
    const path = new URL(page.url).pathname;
    if (page.noindex || seen.has(page.link_url) || leftOutPath.test(path)) {
      leftOut++;
      continue;
    }
    seen.add(page.link_url);
    let section = sectionOf(page);
    const list = bySection.get(section) as { page: ExtractedPage; link: ListedLink }[];
    if (section !== 'Optional' && list.length >= MAX_LINKS_PER_SECTION) section = 'Optional';
    const target = bySection.get(section) as typeof list;
    if (section === 'Optional' && target.length >= MAX_OPTIONAL_LINKS) {
      leftOut++;
      continue;
    }
    const notes = page.description ?? page.lead;
    target.push({
      page,
      link: {
        section,
        name: linkText(linkNameOf(page, siteName, page === home)),
        url: linkTarget(page.link_url),
        notes: notes ? clip(oneLine(notes), MAX_NOTES_CHARS) : null,
        in_full_text: false,
      },
    });
  }

  const full = fullText(siteName, summary, origin, bySection);

  const llms = [
    `# ${siteName}`,
    '',
    `> ${oneLine(summary)}`,
    '',
    `The full text of the pages below, as markdown, is in [llms-full.txt](${origin}/llms-full.txt).`,
  ];
  const links: ListedLink[] = [];
  for (const section of sectionOrder) {
    const entries = bySection.get(section) ?? [];
    if (entries.length === 0) continue;
    llms.push('', `## ${section}`, '');
    for (const { link } of entries) {
      llms.push(`- [${link.name}](${link.url})${link.notes ? `: ${link.notes}` : ''}`);
      links.push(link);
    }
  }

  const training_policy = trainingPolicyOf(site.robots);
  return {
    site_name: siteName,
    summary,
    llms_txt: `${llms.join('\n')}\n`,
    llms_full_txt: full.text,
    ai_txt: aiTxtOf(origin, training_policy),
    links,
    training_policy,
    pages_left_out: leftOut,
    full_text_left_out: full.leftOut,
  };
}

type SectionEntries = Map<SectionName, { page: ExtractedPage; link: ListedLink }[]>;

/**
 * llms-full.txt: the text of every listed page outside Optional, in section order, within the cap;
 * each link whose page it holds is marked `in_full_text`.
 */
function fullText(
  siteName: string,
  summary: string,
  origin: string,
  bySection: SectionEntries,
): { text: string; leftOut: number } {
  const fullParts = [
    `# ${siteName}`,
    `> ${summary}`,
    `The main text of the pages of ${origin} listed in [llms.txt](${origin}/llms.txt), as markdown: each page under its title, with its source URL.`,
  ];
  let fullLength = fullParts.join('\n\n').length;
  let fullLeftOut = 0;
  for (const section of sectionOrder) {
    if (section === 'Optional') continue;
    for (const entry of bySection.get(section) ?? []) {
      const text = clip(stripLeadingTitle(entry.page.markdown, entry.link.name), MAX_PAGE_TEXT_CHARS);
      if (!text) continue;
      const part = `# ${entry.link.name}\n\nSource: ${entry.page.link_url}\n\n${text}`;
      if (fullLength + part.length + 2 > MAX_FULL_TEXT_CHARS) {
        fullLeftOut++;
        continue;
      }
      fullParts.push(part);
      fullLength += part.length + 2;
      entry.link.in_full_text = true;
    }
  }
  return { text: `${fullParts.join('\n\n')}\n`, leftOut: fullLeftOut };
}

/** The page's markdown without a first heading that repeats its title (the section already has it). */
function stripLeadingTitle(markdown: string, name: string): string {
  const match = /^#{1,6}\s+(.+)\n*/.exec(markdown);
  if (match?.[1] && oneLine(match[1]).toLowerCase() === name.toLowerCase()) {
    return markdown.slice(match[0].length).trim();
  }
  return markdown.trim();
}
