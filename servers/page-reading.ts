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

/** A node found by a walk, and whether it sits under a key `JsonLdWalk.marks` picks out. */
export interface JsonLdEntry {
  node: JsonLdNode;
  /** Under a marked key somewhere above it (a list of other businesses, say), not the page's own. */
  marked: boolean;
}

/**
 * Every node with an `@type` in a JSON-LD document, each before the nodes inside it: through
 * arrays, `@graph` and the values `walk` follows.
 */
export function jsonLdNodes(data: unknown, walk: JsonLdWalk = {}): JsonLdNode[] {
  return jsonLdEntries(data, walk).map((entry) => entry.node);
}

/** `jsonLdNodes` with, for each node, whether it lies under a key `marks` picks out. */
export function jsonLdEntries(
  data: unknown,
  walk: JsonLdWalk = {},
  marks: (key: string) => boolean = () => false,
): JsonLdEntry[] {
  const out: JsonLdEntry[] = [];
  const follow = walk.follow ?? ((key: string) => key !== '@context' && key !== '@type');
  const visit = (value: unknown, depth: number, marked: boolean): void => {
    if (depth > MAX_DEPTH || value === null || typeof value !== 'object') return;
    if (Array.isArray(value)) {
      for (const item of value.slice(0, walk.arrayLimit)) visit(item, depth + 1, marked);
      return;
    }
    const node = value as JsonLdNode;
    if (node['@type'] !== undefined) out.push({ node, marked });
    if (typeof follow === 'function') {
      for (const [key, child] of Object.entries(node))
        if (follow(key)) visit(child, depth + 1, marked || marks(key));
    } else {
      for (const key of follow) visit(node[key], depth + 1, marked || marks(key));
    }
  };
  visit(data, 0, false);
  return out;
}

/** The JSON of every `<script type="application/ld+json">` of the page; a script that is not JSON says nothing. */
function jsonLdDocumentsOf($: CheerioAPI): unknown[] {
  const out: unknown[] = [];
  $('script[type="application/ld+json"]').each((_, el) => {
    try {
      out.push(JSON.parse($(el).text()));
    } catch {
      // not JSON: nothing said
    }
  });
  return out;
}

/** The nodes of every `<script type="application/ld+json">` of the page. */
export function jsonLdNodesOf($: CheerioAPI, walk: JsonLdWalk = {}): JsonLdNode[] {
  return jsonLdDocumentsOf($).flatMap((data) => jsonLdNodes(data, walk));
}

/** `jsonLdNodesOf` with, for each node, whether it lies under a key `marks` picks out. */
export function jsonLdEntriesOf(
  $: CheerioAPI,
  walk: JsonLdWalk,
  marks: (key: string) => boolean,
): JsonLdEntry[] {
  return jsonLdDocumentsOf($).flatMap((data) => jsonLdEntries(data, walk, marks));
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
