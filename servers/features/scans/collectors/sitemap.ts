/**
 * XML sitemaps (sitemaps.org protocol 0.9): a `urlset` of page URLs or a `sitemapindex` of further
 * sitemaps. Parsed with fast-xml-parser; entity expansion is off, so a hostile file cannot grow.
 */
import { XMLParser } from 'fast-xml-parser';

export type Sitemap =
  | { kind: 'urlset'; urls: { loc: string; lastmod: string | null }[] }
  | { kind: 'index'; sitemaps: string[] }
  | { kind: 'invalid'; reason: string };

const parser = new XMLParser({
  ignoreAttributes: true,
  processEntities: false,
  removeNSPrefix: true,
  isArray: (name) => name === 'url' || name === 'sitemap',
});

export function parseSitemap(xml: string): Sitemap {
  let doc: Record<string, unknown>;
  try {
    doc = parser.parse(xml) as Record<string, unknown>;
  } catch (err) {
    return { kind: 'invalid', reason: `not well-formed XML: ${(err as Error).message.split('\n')[0]}` };
  }
  const urlset = doc.urlset as { url?: { loc?: unknown; lastmod?: unknown }[] } | undefined;
  if (urlset !== undefined) {
    const urls = (urlset?.url ?? [])
      .filter((u) => typeof u?.loc === 'string')
      .map((u) => ({ loc: String(u.loc).trim(), lastmod: u.lastmod ? String(u.lastmod) : null }));
    return { kind: 'urlset', urls };
  }
  const index = doc.sitemapindex as { sitemap?: { loc?: unknown }[] } | undefined;
  if (index !== undefined) {
    return {
      kind: 'index',
      sitemaps: (index?.sitemap ?? [])
        .filter((s) => typeof s?.loc === 'string')
        .map((s) => String(s.loc).trim()),
    };
  }
  return { kind: 'invalid', reason: 'neither a urlset nor a sitemapindex' };
}
