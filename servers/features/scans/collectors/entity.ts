/**
 * Entity consistency: what a site says about the organisation behind it, source by source, and
 * whether two statements of one attribute agree. Pure functions, shared by the `entity` SKU (its
 * ground truth and own-source consistency, then each language model's description compared with
 * it) and the scanner (issue 16: Organization name, url and sameAs against llms.txt and
 * og:site_name).
 *
 * Sources read: schema.org JSON-LD organisation nodes (`name`, `description`, `foundingDate`,
 * `address`, `founder`, `sameAs`, `logo`, the node's own `@type`) and Product / Service nodes, the
 * `<title>`, `og:site_name`, the meta and OpenGraph descriptions, llms.txt's H1 and summary, and the
 * about page's sentences ("founded in 2012", "headquartered in Lisbon").
 */
import * as cheerio from 'cheerio';
import { asArray, type JsonLdWalk, jsonLdNodesOf, typesOf } from '../../../page-reading.ts';

export const entityFields = [
  'name',
  'category',
  'description',
  'founded',
  'headquarters',
  'products',
  'people',
] as const;
export type EntityField = (typeof entityFields)[number];

/** Where a statement was read. */
export type EntitySource =
  | 'json_ld'
  | 'og_site_name'
  | 'title'
  | 'meta_description'
  | 'og_description'
  | 'llms_txt'
  | 'about_page';

export interface EntityClaim {
  field: EntityField;
  value: string;
  source: EntitySource;
  source_url: string;
}

export type Verdict = 'consistent' | 'drift' | 'missing' | 'unknown';

/** Which statement of a field counts as the site's own answer when sources differ, best first. */
const sourcePriority: Record<EntitySource, number> = {
  json_ld: 0,
  og_site_name: 1,
  llms_txt: 2,
  about_page: 3,
  meta_description: 4,
  og_description: 5,
  title: 6,
};

/** schema.org types that stand for the organisation itself (and common subtypes). */
const organizationType =
  /^(?:Organization|Corporation|LocalBusiness|OnlineStore|OnlineBusiness|NGO|EducationalOrganization|NewsMediaOrganization|GovernmentOrganization|MedicalOrganization|SportsOrganization|Airline|Brand|\w*(?:Store|Shop|Restaurant|Business|Establishment|Agency|Bakery|Brewery|Winery|Hotel|Company))$/;
const productType = /^(?:Product|Service|SoftwareApplication|WebApplication|MobileApplication|ProductModel)$/;

/** `<title>` separators ("Home | Northwind Labs", "Northwind Labs - Data pipelines"). */
const titleSeparators = /\s+[|\-–—:·•»~]\s+|\s*[|·•»]\s*/;

/** Every statement about the organisation one HTML page makes. */
export function entityClaimsOfPage(
  html: string,
  url: string,
  page: { home: boolean; about: boolean },
): EntityClaim[] {
  const $ = cheerio.load(html);
  const claims: EntityClaim[] = [];
  const add = (field: EntityField, value: unknown, source: EntitySource) => {
    const text = typeof value === 'string' ? clean(value) : '';
    if (text) claims.push({ field, value: text, source, source_url: url });
  };
  for (const node of jsonLdNodesOf($, ORGANIZATION_WALK)) {
    const types = typesOf(node);
    if (types.some((t) => organizationType.test(t))) {
      add('name', node.name, 'json_ld');
      add('description', node.description, 'json_ld');
      const specific = types.find((t) => t !== 'Organization' && organizationType.test(t));
      if (specific) add('category', humanizeType(specific), 'json_ld');
      add('founded', typeof node.foundingDate === 'string' ? node.foundingDate : undefined, 'json_ld');
      add('headquarters', addressText(node.address ?? node.location), 'json_ld');
      for (const person of asArray(node.founder ?? node.founders)) add('people', nameOf(person), 'json_ld');
      for (const offer of asArray(node.makesOffer)) {
        const item = (offer as Record<string, unknown>)?.itemOffered;
        add('products', nameOf(item), 'json_ld');
      }
    } else if (types.some((t) => productType.test(t))) {
      add('products', node.name, 'json_ld');
    }
  }
  if (page.home) {
    const title = clean($('head > title').first().text() || $('title').first().text());
    if (title) add('name', title, 'title');
    add('name', $('meta[property="og:site_name"]').attr('content'), 'og_site_name');
    add('description', $('meta[name="description" i]').attr('content'), 'meta_description');
    add('description', $('meta[property="og:description"]').attr('content'), 'og_description');
  }
  if (page.about) {
    $('script, style, noscript, template, svg').remove();
    const text = clean($('main').text() || $('body').text());
    for (const claim of statedFacts(text)) add(claim.field, claim.value, 'about_page');
  }
  return claims;
}

/** What llms.txt says: its H1 names the site, its summary describes it (llmstxt.org). */
export function entityClaimsOfLlmsTxt(
  llms: { title: string | null; summary: string | null },
  url: string,
): EntityClaim[] {
  const claims: EntityClaim[] = [];
  if (llms.title)
    claims.push({ field: 'name', value: clean(llms.title), source: 'llms_txt', source_url: url });
  if (llms.summary) {
    claims.push({ field: 'description', value: clean(llms.summary), source: 'llms_txt', source_url: url });
    for (const fact of statedFacts(llms.summary))
      claims.push({ ...fact, source: 'llms_txt', source_url: url });
  }
  return claims;
}

/** "Founded in 2012", "headquartered in Lisbon, Portugal" in running text. */
function statedFacts(text: string): { field: EntityField; value: string }[] {
  const facts: { field: EntityField; value: string }[] = [];
  const founded =
    /\b(?:founded|established|started|incorporated)\s+(?:in\s+)?(?:\w+\s+)?((?:19|20)\d{2})\b/i.exec(text);
  if (founded?.[1]) facts.push({ field: 'founded', value: founded[1] });
  const hq =
    /\b(?:[Hh]eadquartered|[Hh]eadquarters (?:are|is)|[Bb]ased|[Ll]ocated)\s+in\s+((?:[A-Z][\p{L}'-]+(?:\s+[A-Z][\p{L}'-]+)*)(?:,\s*[A-Z][\p{L}'-]+(?:\s+[A-Z][\p{L}'-]+)*)*)/u.exec(
      text,
    );
  if (hq?.[1]) facts.push({ field: 'headquarters', value: hq[1] });
  return facts;
}

/** The site's own answer per field: the best source's statement (lists: every distinct item). */
export interface GroundTruth {
  fields: Partial<Record<EntityField, { value: string; source: EntitySource; source_url: string }>>;
  products: string[];
  people: string[];
}

export function groundTruthOf(claims: readonly EntityClaim[]): GroundTruth {
  const fields: GroundTruth['fields'] = {};
  const ranked = [...claims].sort((a, b) => sourcePriority[a.source] - sourcePriority[b.source]);
  for (const claim of ranked) {
    if (claim.field === 'products' || claim.field === 'people') continue;
    // A title names the site only through the segment that is the name: used when nothing else names it.
    const value = claim.source === 'title' ? brandSegment(claim.value) : claim.value;
    if (!fields[claim.field])
      fields[claim.field] = { value, source: claim.source, source_url: claim.source_url };
  }
  const distinct = (field: 'products' | 'people') => {
    const seen = new Map<string, string>();
    for (const c of ranked)
      if (c.field === field && !seen.has(normalizeName(c.value))) seen.set(normalizeName(c.value), c.value);
    return [...seen.values()];
  };
  const products = distinct('products');
  const people = distinct('people');
  if (products.length) fields.products = { value: products.join('; '), ...sourceOf(ranked, 'products') };
  if (people.length) fields.people = { value: people.join('; '), ...sourceOf(ranked, 'people') };
  return { fields, products, people };
}

const sourceOf = (claims: readonly EntityClaim[], field: EntityField) => {
  const first = claims.find((c) => c.field === field) as EntityClaim;
  return { source: first.source, source_url: first.source_url };
};

export interface SourceComparison {
  field: EntityField;
  verdict: Verdict;
  expected: string | null;
  found: string | null;
  source: EntitySource;
  source_url: string;
}

/**
 * Does every source state each field as the site's own answer does? One comparison per statement
 * (the answer's own statement excluded), plus `missing` where a source that should name or describe
 * the organisation does not (`expectedSources`: where a reader looks for it).
 */
export function ownSourceConsistency(
  claims: readonly EntityClaim[],
  truth: GroundTruth,
  expectedSources: readonly { field: EntityField; source: EntitySource; source_url: string }[],
): SourceComparison[] {
  const out: SourceComparison[] = [];
  for (const claim of claims) {
    if (claim.field === 'products' || claim.field === 'people') continue;
    const answer = truth.fields[claim.field];
    if (!answer || (answer.source === claim.source && answer.source_url === claim.source_url)) continue;
    out.push({
      field: claim.field,
      verdict: compareField(claim.field, answer.value, claim.value),
      expected: answer.value,
      found: claim.value,
      source: claim.source,
      source_url: claim.source_url,
    });
  }
  for (const expected of expectedSources) {
    const answer = truth.fields[expected.field];
    if (!answer) continue;
    const stated = claims.some((c) => c.field === expected.field && c.source === expected.source);
    if (!stated) out.push({ ...expected, verdict: 'missing', expected: answer.value, found: null });
  }
  return out;
}

/**
 * One field compared: `unknown` when the site states nothing to compare with, `missing` when the
 * other side states nothing, else `consistent` or `drift`. Names agree when one holds the other
 * (legal forms and punctuation aside: "Northwind" and "Northwind Labs, Inc."), years by the year,
 * places by the city, lists by any shared item, descriptions by a share of their content words.
 */
export function compareField(
  field: EntityField,
  expected: string | readonly string[] | null | undefined,
  found: string | readonly string[] | null | undefined,
): Verdict {
  const list = (v: string | readonly string[] | null | undefined): string[] =>
    v == null ? [] : (typeof v === 'string' ? [v] : [...v]).map(clean).filter(Boolean);
  const want = list(expected);
  const got = list(found);
  if (want.length === 0) return 'unknown';
  if (got.length === 0) return 'missing';
  switch (field) {
    case 'name':
      return want.some((w) => got.some((g) => sameName(w, g))) ? 'consistent' : 'drift';
    case 'founded': {
      const a = yearOf(want[0] as string);
      const b = yearOf(got[0] as string);
      if (a === null) return 'unknown';
      if (b === null) return 'missing';
      return a === b ? 'consistent' : 'drift';
    }
    case 'headquarters':
      return samePlace(want[0] as string, got[0] as string) ? 'consistent' : 'drift';
    case 'products':
    case 'people': {
      const wanted = want.flatMap((w) => w.split(/\s*;\s*/));
      return wanted.some((w) => got.some((g) => sameName(w, g))) ? 'consistent' : 'drift';
    }
    case 'category':
    case 'description':
      return wordOverlap(want.join(' '), got.join(' ')) >= (field === 'category' ? 0.5 : 0.25)
        ? 'consistent'
        : 'drift';
  }
}

/** Legal forms and filler that do not tell two names apart. */
const legalForms = new Set([
  'inc',
  'incorporated',
  'llc',
  'ltd',
  'limited',
  'gmbh',
  'ag',
  'sa',
  'sas',
  'bv',
  'plc',
  'corp',
  'corporation',
  'co',
  'company',
  'lda',
  'the',
]);

export function normalizeName(text: string): string {
  return foldDiacritics(text)
    .toLowerCase()
    .replace(/&/g, ' and ')
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .split(' ')
    .filter((w) => w && !legalForms.has(w))
    .join(' ');
}

function sameName(a: string, b: string): boolean {
  const x = normalizeName(a);
  const y = normalizeName(b);
  if (!x || !y) return false;
  return x === y || ` ${x} `.includes(` ${y} `) || ` ${y} `.includes(` ${x} `);
}

/** The city (first part of an address) of one side appears in the other. */
function samePlace(expected: string, found: string): boolean {
  const city = (s: string) => normalizeName(s.split(',')[0] ?? s);
  const e = normalizeName(expected);
  const f = normalizeName(found);
  const ce = city(expected);
  const cf = city(found);
  return (ce !== '' && ` ${f} `.includes(` ${ce} `)) || (cf !== '' && ` ${e} `.includes(` ${cf} `));
}

const yearOf = (text: string): number | null => {
  const match = /\b(1[6-9]\d{2}|20\d{2})\b/.exec(text);
  return match ? Number(match[1]) : null;
};

const stopwords = new Set(
  'a an and are as at be by for from has have in is it its of on or our that the their this to we with you your which who what where when how all more most into over than then them they these those also can will just about'.split(
    ' ',
  ),
);

function contentWords(text: string): Set<string> {
  return new Set(
    normalizeName(text)
      .split(' ')
      .filter((w) => w.length > 2 && !stopwords.has(w))
      .map((w) => w.replace(/(?:ies)$/, 'y').replace(/(?<=[^s])s$/, '')),
  );
}

/** Shared content words over the smaller side's (0-1). */
export function wordOverlap(a: string, b: string): number {
  const x = contentWords(a);
  const y = contentWords(b);
  if (x.size === 0 || y.size === 0) return 0;
  let shared = 0;
  for (const w of x) if (y.has(w)) shared++;
  return shared / Math.min(x.size, y.size);
}

/** The part of a `<title>` that names the site: the segment that is not "Home", the shortest otherwise. */
export function brandSegment(title: string): string {
  const parts = title
    .split(titleSeparators)
    .map((p) => p.trim())
    .filter((p) => p && !/^(home|homepage|welcome|start)$/i.test(p));
  if (parts.length <= 1) return parts[0] ?? title;
  return [...parts].sort((a, b) => a.length - b.length)[0] as string;
}

const clean = (text: string): string => text.replace(/\s+/g, ' ').trim();
const foldDiacritics = (text: string): string => text.normalize('NFKD').replace(/\p{M}/gu, '');

/** A JSON-LD value that may be one item or a list, as a list (nothing for null or absent). */
function nameOf(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object' && typeof (value as { name?: unknown }).name === 'string') {
    return (value as { name: string }).name;
  }
  return undefined;
}

/** "Lisbon, Lisboa, PT" from a PostalAddress (or the text of an address given as text). */
function addressText(value: unknown): string | undefined {
  const first = asArray(value)[0];
  if (typeof first === 'string') return first;
  if (!first || typeof first !== 'object') return undefined;
  const record = first as Record<string, unknown>;
  const address = (record.address && typeof record.address === 'object' ? record.address : record) as Record<
    string,
    unknown
  >;
  const country = address.addressCountry;
  const parts = [
    address.addressLocality,
    address.addressRegion,
    typeof country === 'string' ? country : nameOf(country),
  ].filter((p): p is string => typeof p === 'string' && p.trim() !== '');
  return parts.length ? parts.join(', ') : undefined;
}

/** "SoftwareCompany" -> "software company". */
const humanizeType = (type: string): string => type.replace(/(?<=[a-z])(?=[A-Z])/g, ' ').toLowerCase();

/**
 * How the entity collector walks JSON-LD: nested organisations count (a publisher inside a
 * WebSite); an organisation's addresses, founders and offers are read with it, not as nodes.
 */
export const ORGANIZATION_WALK: JsonLdWalk = {
  follow: (key) => !['@context', '@type', 'address', 'founder', 'founders', 'makesOffer'].includes(key),
};

/** sameAs links of the organisation nodes on a page (profiles models learn from). */
export function sameAsOfPage(html: string): string[] {
  const $ = cheerio.load(html);
  const links = new Set<string>();
  for (const node of jsonLdNodesOf($, ORGANIZATION_WALK)) {
    if (!typesOf(node).some((t) => organizationType.test(t))) continue;
    for (const link of asArray(node.sameAs))
      if (typeof link === 'string' && /^https?:\/\//.test(link)) links.add(link);
  }
  return [...links];
}
