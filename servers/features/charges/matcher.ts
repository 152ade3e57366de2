/**
 * Which brand is behind a statement line: exact alias first, fuzzy second.
 *
 * Exact: the longest run of leading merchant tokens that is a known alias (descriptor form, name,
 * alias or domain label) of a brand, spaced or squashed (`WAL MART` = `WALMART`); a registrable
 * domain seen in the line also counts. Fuzzy: a trigram index proposes candidate aliases, scored by
 * Levenshtein similarity (fastest-levenshtein) against the leading tokens. The index is built once;
 * a lookup touches only the posting lists of the query's trigrams, so it stays well under a
 * millisecond with 100,000 brands (`npm run bench`). Linear-scan fuzzy libraries (fuse.js) take tens
 * of milliseconds at that size.
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
const FUZZY_CANDIDATES = 24;
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
  private maxAliasTokens = 1;

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
        for (const gram of trigramsOf(squashed)) push(postings, gram, id);
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
  }

  brandByDomain(domain: string): Brand | undefined {
    const index = this.byDomain.get(domain);
    return index === undefined ? undefined : this.brands[index];
  }

  lookup(charge: string): ChargeLookupResult {
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

  private fuzzy(
    descriptor: NormalizedDescriptor,
    offer: (brand: number, confidence: number, on: CardChargeMatch['matched_on'], text: string) => void,
  ): void {
    const heads: string[] = [];
    for (let k = 1; k <= Math.min(descriptor.tokens.length, 4); k++) {
      heads.push(descriptor.tokens.slice(0, k).join(''));
    }
    const query = heads.at(-1);
    if (!query || query.length < 4) return;

    const touched: number[] = [];
    const counts = this.counts;
    for (const gram of trigramsOf(query)) {
      const ids = this.trigrams.get(gram);
      if (!ids) continue;
      for (let i = 0; i < ids.length; i++) {
        const id = ids[i] as number;
        if (counts[id] === 0) touched.push(id);
        counts[id] = (counts[id] as number) + 1;
      }
    }
    // Keep the aliases that share the most trigrams (relative to their own size).
    const scored: { id: number; score: number }[] = [];
    for (const id of touched) {
      const shared = counts[id] as number;
      counts[id] = 0;
      const own = Math.max(1, (this.aliases[id] as AliasEntry).squashed.length - 2);
      const score = shared / own;
      if (shared >= 2 && score >= 0.5) scored.push({ id, score });
    }
    scored.sort((a, b) => b.score - a.score);

    for (const { id } of scored.slice(0, FUZZY_CANDIDATES)) {
      const alias = this.aliases[id] as AliasEntry;
      if (alias.squashed.length < 4) continue;
      let best = 0;
      for (const head of heads) {
        if (Math.abs(head.length - alias.squashed.length) > Math.max(2, alias.squashed.length * 0.3))
          continue;
        const similarity = 1 - distance(head, alias.squashed) / Math.max(head.length, alias.squashed.length);
        if (similarity > best) best = similarity;
      }
      if (best >= FUZZY_MIN_SIMILARITY) offer(alias.brand, Math.min(0.9, best * 0.92), 'fuzzy', alias.text);
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

function trigramsOf(text: string): string[] {
  if (text.length < 3) return [];
  const grams: string[] = [];
  for (let i = 0; i + 3 <= text.length; i++) grams.push(text.slice(i, i + 3));
  return grams;
}
