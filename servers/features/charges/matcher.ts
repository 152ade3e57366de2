/**
 * Which brand is behind a statement line: exact alias first, fuzzy second.
 *
 * Exact: the longest run of leading merchant tokens that is a known alias (descriptor form, name,
 * alias or domain label) of a brand, spaced or squashed (`WAL MART` = `WALMART`); a registrable
 * domain seen in the line also counts. Fuzzy: a trigram index proposes candidate aliases, verified by
 * Levenshtein distance (fastest-levenshtein) against the leading tokens. The index is built once; a
 * lookup scans only the shortest posting lists of its trigrams, so it stays under a millisecond with
 * 100,000 brands (`npm run bench`), where linear-scan fuzzy libraries (fuse.js) take tens of ms.
 */
import { distance } from 'fastest-levenshtein';
import type { Brand } from './brand-registry.ts';
import { canonicalTokens, type NormalizedDescriptor, normalizeDescriptor } from './normalize.ts';
import type { Processor } from './processors.ts';
import type { CardChargeMatch, ChargeLookupResult, ConfidenceLevel } from './schemas.ts';

type AliasKind = 'descriptor' | 'name' | 'alias' | 'domain';

interface AliasEntry {
  brand: number;
  kind: AliasKind;
  text: string;
  /** Canonical tokens joined without spaces. */
  squashed: string;
}

const MAX_RESULTS = 5;
const EMPTY = new Int32Array(0);
const LOOKUP_CACHE_SIZE = 10_000;
/**
 * Postings scanned per fuzzy query, at most. Lists are scanned rarest first, so the limit only ever
 * skips trigrams shared by tens of thousands of aliases - which say little about a near spelling.
 */
const FUZZY_SCAN_LIMIT = 20_000;
const FUZZY_MIN_SIMILARITY = 0.78;
const kindRank: Record<AliasKind, number> = { descriptor: 0, name: 1, domain: 2, alias: 3 };

export function levelOf(confidence: number): ConfidenceLevel {
  if (confidence >= 0.95) return 'very_high';
  if (confidence >= 0.85) return 'high';
  if (confidence >= 0.7) return 'medium';
  return 'low';
}

export class BrandMatcher {
  readonly brands: readonly Brand[];
  private readonly byDomain = new Map<string, number>();
  private readonly spaced = new Map<string, number[]>();
  private readonly squashed = new Map<string, number[]>();
  private readonly aliases: AliasEntry[] = [];
  private readonly trigrams = new Map<string, Int32Array>();
  private readonly counts: Uint16Array;
  /** Squashed length of each alias, for the fuzzy length filter. */
  private readonly lengths: Uint16Array;
  private maxAliasTokens = 1;
  private readonly cache = new Map<string, ChargeLookupResult>();

  constructor(brands: readonly Brand[]) {
    this.brands = brands;
    const postings = new Map<string, number[]>();
    brands.forEach((brand, index) => {
      this.byDomain.set(brand.domain, index);
      const label = brand.domain.split('.')[0] ?? '';
      const forms: [AliasKind, string][] = [
        ...brand.descriptors.map((d): [AliasKind, string] => ['descriptor', d]),
        ['name', brand.name],
        ...(brand.aliases ?? []).map((a): [AliasKind, string] => ['alias', a]),
        ...(label.length >= 4 ? [['domain', label] as [AliasKind, string]] : []),
      ];
      const seen = new Set<string>();
      for (const [kind, text] of forms) {
        const tokens = canonicalTokens(text.replace(/\*/g, ' '));
        if (tokens.length === 0) continue;
        const key = tokens.join(' ');
        if (seen.has(key)) continue;
        seen.add(key);
        const id = this.aliases.length;
        const squashed = tokens.join('');
        this.aliases.push({ brand: index, kind, text, squashed });
        push(this.spaced, key, id);
        if (tokens.length > 1) push(this.squashed, squashed, id);
        this.maxAliasTokens = Math.max(this.maxAliasTokens, tokens.length);
        // Keyed by the alias's first letter too: a misspelling rarely hits the first letter, and
        // the posting lists become ~25 times shorter.
        for (const gram of trigramsOf(squashed)) push(postings, squashed[0] + gram, id);
      }
    });
    // A domain glued without its dots ("BESTBUYCOM806...") names the brand too.
    brands.forEach((brand, index) => {
      const glued = brand.domain.replace(/[^a-z0-9]/g, '').toUpperCase();
      if (this.spaced.has(glued) || this.squashed.has(glued)) return;
      const id = this.aliases.length;
      this.aliases.push({ brand: index, kind: 'domain', text: brand.domain, squashed: glued });
      push(this.squashed, glued, id);
    });
    for (const [gram, ids] of postings) this.trigrams.set(gram, Int32Array.from(new Set(ids)));
    this.counts = new Uint16Array(this.aliases.length);
    this.lengths = Uint16Array.from(this.aliases, (a) => a.squashed.length);
  }

  get aliasCount(): number {
    return this.aliases.length;
  }

  /**
   * The brands that have exactly these canonical tokens as an alias (spaced or squashed, as exact
   * matching reads them): whom the registry names for a line that says only this.
   */
  brandsWithAlias(tokens: readonly string[]): Brand[] {
    if (tokens.length === 0) return [];
    const ids =
      this.spaced.get(tokens.join(' ')) ??
      this.squashed.get(tokens.join('')) ??
      (tokens.length > 1 ? this.spaced.get(tokens.join('')) : undefined) ??
      [];
    return [...new Set(ids.map((id) => (this.aliases[id] as AliasEntry).brand))].map(
      (index) => this.brands[index] as Brand,
    );
  }

  brandByDomain(domain: string): Brand | undefined {
    const index = this.byDomain.get(domain);
    return index === undefined ? undefined : this.brands[index];
  }

  /**
   * Looks a statement line up. Results are cached (bounded, oldest first out): the registry does not change while the
   * process runs, and a few merchants account for most charges. Callers must not mutate a result.
   */
  lookup(charge: string): ChargeLookupResult {
    const cached = this.cache.get(charge);
    if (cached) return cached;
    const result = this.lookupUncached(charge);
    this.cache.set(charge, result);
    if (this.cache.size > LOOKUP_CACHE_SIZE) this.cache.delete(this.cache.keys().next().value as string);
    return result;
  }

  /** The matching itself, without the cache (benchmarks measure this). */
  lookupUncached(charge: string): ChargeLookupResult {
    const descriptor = normalizeDescriptor(charge);
    const processor = descriptor.processor;
    return {
      charge,
      normalized: descriptor.normalized,
      processor: processor
        ? { name: processor.name, domain: processor.domain, merchant_of_record: processor.merchantOfRecord }
        : null,
      matches: this.match(descriptor),
    };
  }

  match(descriptor: NormalizedDescriptor): CardChargeMatch[] {
    const found = new Map<number, { confidence: number; on: CardChargeMatch['matched_on']; text: string }>();
    const offer = (brand: number, confidence: number, on: CardChargeMatch['matched_on'], text: string) => {
      const current = found.get(brand);
      if (!current || confidence > current.confidence) found.set(brand, { confidence, on, text });
    };

    for (const domain of descriptor.domains) {
      const brand = this.byDomain.get(domain);
      if (brand !== undefined) offer(brand, 0.97, 'domain', domain);
    }
    this.exact(descriptor, offer);
    if (found.size === 0) this.fuzzy(descriptor, offer);

    const processor = descriptor.processor;
    if (found.size === 0 && processor?.merchantOfRecord) {
      const brand = this.byDomain.get(processor.domain);
      const billedOnly = descriptor.tokens.length === 0;
      if (brand !== undefined) offer(brand, billedOnly ? 0.97 : 0.75, 'processor', processor.name);
      else return [this.processorOnly(processor, billedOnly)];
    }

    return [...found.entries()]
      .sort((a, b) => b[1].confidence - a[1].confidence || a[0] - b[0])
      .slice(0, MAX_RESULTS)
      .map(([index, hit]) => this.toMatch(index, hit.confidence, hit.on, hit.text, processor));
  }

  /** Longest leading run of tokens that is an alias; with a processor, also the line with its prefix. */
  private exact(
    descriptor: NormalizedDescriptor,
    offer: (brand: number, confidence: number, on: CardChargeMatch['matched_on'], text: string) => void,
  ): void {
    this.exactRun(descriptor.tokens, descriptor.merchantTokens.length, offer);
    if (descriptor.prefixTokens.length > 0) {
      this.exactRun(
        [...descriptor.prefixTokens, ...descriptor.tokens],
        descriptor.prefixTokens.length + descriptor.merchantTokens.length,
        offer,
      );
    }
  }

  private exactRun(
    tokens: string[],
    merchantLength: number,
    offer: (brand: number, confidence: number, on: CardChargeMatch['matched_on'], text: string) => void,
  ): void {
    for (let k = Math.min(tokens.length, this.maxAliasTokens); k >= 1; k--) {
      const head = tokens.slice(0, k);
      const ids = this.spaced.get(head.join(' '));
      const squashedKey = head.join('');
      const hits =
        ids ?? this.squashed.get(squashedKey) ?? (k > 1 ? this.spaced.get(squashedKey) : undefined);
      if (!hits) continue;
      // Merchant words the alias leaves unexplained ("DELTA" in "DELTA DENTAL INS" leaves two).
      const unexplained = Math.max(0, merchantLength - k);
      const length = squashedKey.length;
      let confidence = unexplained === 0 ? 0.99 : unexplained === 1 ? 0.88 : 0.78;
      if (unexplained > 0 && (length <= 3 || (k === 1 && length <= 5 && unexplained > 1))) confidence = 0.6;
      if (!ids) confidence -= 0.02;
      if (new Set(hits.map((id) => this.aliases[id]?.brand)).size > 1) confidence -= 0.15;
      for (const id of [...hits].sort((a, b) => this.rank(a) - this.rank(b))) {
        const alias = this.aliases[id] as AliasEntry;
        offer(alias.brand, confidence, alias.kind, alias.text);
      }
      return;
    }
  }

  /**
   * Near spellings of the first one to three merchant tokens. Candidates come from the trigram index
   * with the q-gram lemma (a string within d edits shares all but 3d of its trigrams) and prefix
   * filtering (such a string appears in one of the 3d+1 rarest posting lists), so only short posting
   * lists are scanned; survivors are checked by length, shared trigrams, then Levenshtein distance.
   */
  private fuzzy(
    descriptor: NormalizedDescriptor,
    offer: (brand: number, confidence: number, on: CardChargeMatch['matched_on'], text: string) => void,
  ): void {
    const counts = this.counts;
    for (let k = 1; k <= Math.min(descriptor.tokens.length, 3); k++) {
      const head = descriptor.tokens.slice(0, k).join('');
      if (head.length < 4) continue;
      const budget = head.length >= 10 ? 2 : 1;
      const lists = [...new Set(trigramsOf(head))]
        .map((gram) => this.trigrams.get(head[0] + gram) ?? EMPTY)
        .sort((a, b) => a.length - b.length);
      const need = Math.max(1, lists.length - 3 * budget);
      const scanned = lists.length - need + 1;

      const touched: number[] = [];
      const lengths = this.lengths;
      let work = 0;
      for (let l = 0; l < scanned && work < FUZZY_SCAN_LIMIT; l++) {
        const ids = lists[l] as Int32Array;
        work += ids.length;
        for (let i = 0; i < ids.length; i++) {
          const id = ids[i] as number;
          if (Math.abs((lengths[id] as number) - head.length) > budget) continue;
          if (counts[id] === 0) touched.push(id);
          counts[id] = (counts[id] as number) + 1;
        }
      }
      for (const id of touched) {
        let shared = counts[id] as number;
        counts[id] = 0;
        for (let l = scanned; l < lists.length && shared < need; l++) {
          if (contains(lists[l] as Int32Array, id)) shared++;
        }
        if (shared < need) continue;
        const alias = this.aliases[id] as AliasEntry;
        const similarity = 1 - distance(head, alias.squashed) / Math.max(head.length, alias.squashed.length);
        if (similarity >= FUZZY_MIN_SIMILARITY)
          offer(alias.brand, Math.min(0.9, similarity * 0.92), 'fuzzy', alias.text);
      }
    }
  }

  private rank(id: number): number {
    return kindRank[(this.aliases[id] as AliasEntry).kind];
  }

  private toMatch(
    index: number,
    confidence: number,
    on: CardChargeMatch['matched_on'],
    text: string,
    processor: Processor | null,
  ): CardChargeMatch {
    const brand = this.brands[index] as Brand;
    const rounded = Math.round(Math.max(0, Math.min(1, confidence)) * 100) / 100;
    return {
      brand: brand.name,
      domain: brand.domain,
      category: brand.category,
      confidence: rounded,
      level: levelOf(rounded),
      matched_on: on,
      matched_text: text,
      ...(processor
        ? {
            processor: {
              name: processor.name,
              domain: processor.domain,
              merchant_of_record: processor.merchantOfRecord,
            },
          }
        : {}),
      contact: brand.contact,
      returns: brand.returns,
    };
  }

  private processorOnly(processor: Processor, billedOnly: boolean): CardChargeMatch {
    const confidence = billedOnly ? 0.97 : 0.75;
    return {
      brand: processor.name,
      domain: processor.domain,
      category: 'other',
      confidence,
      level: levelOf(confidence),
      matched_on: 'processor',
      matched_text: processor.name,
      processor: { name: processor.name, domain: processor.domain, merchant_of_record: true },
      contact: {},
      returns: {},
    };
  }
}

function push<K>(map: Map<K, number[]>, key: K, value: number): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/** Binary search in an ascending posting list. */
function contains(list: Int32Array, id: number): boolean {
  let lo = 0;
  let hi = list.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const value = list[mid] as number;
    if (value === id) return true;
    if (value < id) lo = mid + 1;
    else hi = mid - 1;
  }
  return false;
}

function trigramsOf(text: string): string[] {
  if (text.length < 3) return [];
  const grams: string[] = [];
  for (let i = 0; i + 3 <= text.length; i++) grams.push(text.slice(i, i + 3));
  return grams;
}
