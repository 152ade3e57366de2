/**
 * What an AI agent can learn from one HTML page: title, description, headings, words, schema.org
 * JSON-LD types (including `@graph`), OpenGraph, canonical URL, and the links the crawl follows.
 */
import * as cheerio from 'cheerio';
import { visibleText } from '../../../page-reading.ts';

export interface PageFacts {
  url: string;
  title: string | null;
  description: string | null;
  lang: string | null;
  h1: string[];
  h2_count: number;
  h3_count: number;
  word_count: number;
  /** schema.org types declared in JSON-LD, deduplicated (`Organization`, `Product`, `FAQPage`...). */
  json_ld_types: string[];
  /** JSON-LD scripts that did not parse. */
  json_ld_errors: number;
  open_graph: Record<string, string>;
  canonical: string | null;
  /** `<meta name="robots">` contains noindex. */
  noindex: boolean;
  /** `<link rel="alternate" type="text/markdown">` target, when the page announces one. */
  markdown_alternate: string | null;
  /** `<link rel="service-desc">` or links to an OpenAPI document. */
  openapi_links: string[];
  /** Absolute http(s) links found on the page, fragment removed. */
  links: string[];
}

export function parsePage(html: string, url: string): PageFacts {
  const $ = cheerio.load(html);
  const resolve = (href: string | undefined): string | null => {
    if (!href) return null;
    try {
      const u = new URL(href, url);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
      u.hash = '';
      return u.href;
    } catch {
      return null;
    }
  };

  const types = new Set<string>();
  let jsonLdErrors = 0;
  $('script[type="application/ld+json"]').each((_, el) => {
    try {
      collectTypes(JSON.parse($(el).text()), types, 0);
    } catch {
      jsonLdErrors++;
    }
  });

  const openGraph: Record<string, string> = {};
  $('meta[property^="og:"]').each((_, el) => {
    const property = $(el).attr('property');
    const content = $(el).attr('content');
    if (property && content && !(property in openGraph)) openGraph[property] = content.trim();
  });

  const links = new Set<string>();
  $('a[href]').each((_, el) => {
    const href = resolve($(el).attr('href'));
    if (href) links.add(href);
  });
  const openapi = new Set<string>();
  $('link[rel~="service-desc"][href], a[href*="openapi"]').each((_, el) => {
    const href = resolve($(el).attr('href'));
    if (href) openapi.add(href);
  });

  const text = (s: string) => s.replace(/\s+/g, ' ').trim();
  const bodyText = text(visibleText($));

  return {
    url,
    title: text($('head > title').first().text() || $('title').first().text()) || null,
    description: $('meta[name="description" i]').attr('content')?.trim() || null,
    lang: $('html').attr('lang')?.trim() || null,
    h1: $('h1')
      .map((_, el) => text($(el).text()))
      .get()
      .filter(Boolean),
    h2_count: $('h2').length,
    h3_count: $('h3').length,
    word_count: bodyText ? bodyText.split(' ').filter((w) => /[\p{L}\p{N}]/u.test(w)).length : 0,
    json_ld_types: [...types],
    json_ld_errors: jsonLdErrors,
    open_graph: openGraph,
    canonical: resolve($('link[rel="canonical"]').attr('href')),
    noindex: /noindex/i.test($('meta[name="robots" i]').attr('content') ?? ''),
    markdown_alternate: resolve($('link[rel="alternate"][type="text/markdown"]').attr('href')),
    openapi_links: [...openapi],
    links: [...links],
  };
}

/** `@type` of every node, walking arrays, `@graph` and nested objects (bounded depth). */
function collectTypes(node: unknown, out: Set<string>, depth: number): void {
  if (depth > 8 || node === null || typeof node !== 'object') return;
  if (Array.isArray(node)) {
    for (const item of node) collectTypes(item, out, depth + 1);
    return;
  }
  const record = node as Record<string, unknown>;
  const type = record['@type'];
  for (const t of Array.isArray(type) ? type : [type]) {
    if (typeof t === 'string') out.add(t.replace(/^https?:\/\/schema\.org\//, ''));
  }
  for (const [key, value] of Object.entries(record)) {
    if (key !== '@type' && key !== '@context') collectTypes(value, out, depth + 1);
  }
}

/** Organization-like types (schema.org subtypes that identify the publisher). */
export const organizationTypes = new Set([
  'Organization',
  'Corporation',
  'LocalBusiness',
  'OnlineStore',
  'NewsMediaOrganization',
  'EducationalOrganization',
  'NGO',
]);
