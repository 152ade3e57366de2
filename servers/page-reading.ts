/**
 * What the service reads out of other sites' HTML pages, the same way wherever it reads them: the
 * schema.org JSON-LD nodes (the scanner's entity collector, merchant sites, brands' contact points,
 * people-search pages) and the visible text (the scanner's page reader, merchant sites). Each
 * caller keeps its own judgement of what the nodes and the words say.
 */
import type { CheerioAPI } from 'cheerio';

export type JsonLdNode = Record<string, unknown>;

export function asArray(value: unknown): unknown[] {
  if (value === undefined || value === null) return [];
  return Array.isArray(value) ? value : [value];
}

/** A node's `@type`s, with the schema.org prefix of expanded ones taken off. */
export function typesOf(node: JsonLdNode): string[] {
  return asArray(node['@type'])
    .filter((t): t is string => typeof t === 'string')
    .map((t) => t.replace(/^https?:\/\/schema\.org\//, ''));
}

/** How far a walk goes below the nodes it finds. */
export interface JsonLdWalk {
  /**
   * The keys whose values are walked: a list (walked in its order) or a test. Default: every key
   * but `@context` and `@type`.
   */
  follow?: readonly string[] | ((key: string) => boolean);
  /** Items read of any one array (a page can hold thousands of offers). Default: all. */
  arrayLimit?: number;
}

/** Nested structure read at most this deep: a document is data from anyone. */
const MAX_DEPTH = 6;

/**
 * Every node with an `@type` in a JSON-LD document, each before the nodes inside it: through
 * arrays, `@graph` and the values `walk` follows.
 */
export function jsonLdNodes(data: unknown, walk: JsonLdWalk = {}): JsonLdNode[] {
  const out: JsonLdNode[] = [];
  const follow = walk.follow ?? ((key: string) => key !== '@context' && key !== '@type');
  const visit = (value: unknown, depth: number): void => {
    if (depth > MAX_DEPTH || value === null || typeof value !== 'object') return;
    if (Array.isArray(value)) {
      for (const item of value.slice(0, walk.arrayLimit)) visit(item, depth + 1);
      return;
    }
    const node = value as JsonLdNode;
    if (node['@type'] !== undefined) out.push(node);
    if (typeof follow === 'function') {
      for (const [key, child] of Object.entries(node)) if (follow(key)) visit(child, depth + 1);
    } else {
      for (const key of follow) visit(node[key], depth + 1);
    }
  };
  visit(data, 0);
  return out;
}

/** The nodes of every `<script type="application/ld+json">` of the page; a script that is not JSON says nothing. */
export function jsonLdNodesOf($: CheerioAPI, walk: JsonLdWalk = {}): JsonLdNode[] {
  const out: JsonLdNode[] = [];
  $('script[type="application/ld+json"]').each((_, el) => {
    let data: unknown;
    try {
      data = JSON.parse($(el).text());
    } catch {
      return;
    }
    out.push(...jsonLdNodes(data, walk));
  });
  return out;
}

/**
 * The page's visible text: its body's text nodes (the whole document's without a body) joined by
 * spaces, as written - `.text()` would glue adjacent blocks into one word. Scripts, styles and
 * other unseen elements are removed from `$` first.
 */
export function visibleText($: CheerioAPI): string {
  $('script, style, noscript, template, svg').remove();
  const root = $('body').length ? $('body') : $('html');
  return root
    .find('*')
    .addBack()
    .contents()
    .filter((_, node) => node.type === 'text')
    .map((_, node) => (node as unknown as { data: string }).data)
    .get()
    .join(' ');
}
