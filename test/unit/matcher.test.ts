import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { brandIndexFile, loadBrands } from '../../servers/features/charges/brand-registry.ts';
import { BrandMatcher, levelOf } from '../../servers/features/charges/matcher.ts';
import { processors } from '../../servers/features/charges/processors.ts';

const brands = loadBrands();
const matcher = new BrandMatcher(brands);
const corpus = JSON.parse(readFileSync(new URL('../fixtures/descriptors.json', import.meta.url), 'utf8')) as {
  cases: { line: string; domain: string | null; processor?: string }[];
};

describe('shipped brand registry', () => {
  it('holds at least 400 hand-curated brands with unique domains and descriptor forms', () => {
    const curated = brands.filter((b) => b.source === 'curated');
    expect(curated.length).toBeGreaterThanOrEqual(400);
    expect(new Set(curated.map((b) => b.domain)).size).toBe(curated.length);
    for (const brand of curated) expect(brand.descriptors.length, brand.domain).toBeGreaterThan(0);
  });

  it('adds over 10,000 open-data brands, none on a curated domain, with sources and licences', () => {
    const open = brands.filter((b) => b.source !== 'curated');
    expect(open.length).toBeGreaterThan(10_000);
    const curatedDomains = new Set(brands.filter((b) => b.source === 'curated').map((b) => b.domain));
    expect(open.filter((b) => curatedDomains.has(b.domain))).toEqual([]);
    expect(new Set(open.map((b) => b.source))).toEqual(new Set(['name-suggestion-index', 'simple-icons']));
    const index = JSON.parse(readFileSync(brandIndexFile, 'utf8')) as {
      sources: { name: string; license: string }[];
    };
    expect(index.sources.map((s) => [s.name, s.license])).toEqual([
      ['name-suggestion-index', 'BSD-3-Clause'],
      ['simple-icons', 'CC0-1.0'],
    ]);
  });
});

describe('BrandMatcher over the statement-line corpus', () => {
  const domains = new Set<string | null>([
    ...brands.map((b) => b.domain),
    ...processors.map((p) => p.domain),
  ]);

  it('has a corpus of realistic lines whose expected brands exist', () => {
    expect(corpus.cases.length).toBeGreaterThanOrEqual(150);
    for (const c of corpus.cases) if (c.domain) expect(domains.has(c.domain), c.domain).toBe(true);
  });

  it('puts the expected brand first for at least 97% of lines, and reports the processor', () => {
    const misses: string[] = [];
    for (const c of corpus.cases) {
      const result = matcher.lookup(c.line);
      const best = result.matches[0];
      const ok =
        c.domain === null
          ? !result.matches.some((m) => m.confidence >= 0.7)
          : best?.domain === c.domain && best.confidence >= 0.7;
      const processorOk = !c.processor || result.processor?.name.startsWith(c.processor);
      if (!ok || !processorOk) misses.push(`${c.line} -> ${best?.domain ?? 'none'} (expected ${c.domain})`);
    }
    const hitRate = 1 - misses.length / corpus.cases.length;
    expect(hitRate, misses.join('\n')).toBeGreaterThanOrEqual(0.97);
  });

  it('returns no matches for an unknown charge', () => {
    expect(matcher.lookup('XQZW VRPLK 0042').matches).toEqual([]);
    expect(matcher.lookup('SQ *MARIAS TAQUERIA 2 OAKLAND CA')).toMatchObject({
      processor: { name: 'Square' },
      matches: [],
    });
  });

  it('tolerates misspellings through fuzzy matching, with lower confidence', () => {
    const [best] = matcher.lookup('NETFLX.COM').matches;
    expect(best).toMatchObject({ domain: 'netflix.com' });
    const fuzzy = matcher.lookup('SPOTIFFY USA').matches[0];
    expect(fuzzy).toMatchObject({ domain: 'spotify.com', matched_on: 'fuzzy' });
    expect(fuzzy?.confidence).toBeLessThan(0.95);
  });

  it('returns the merchant of record when the merchant behind it is unknown or absent', () => {
    const apple = matcher.lookup('APPLE.COM/BILL 866-712-7753 CA');
    expect(apple.matches[0]).toMatchObject({ domain: 'apple.com', level: 'very_high' });
    const paddle = matcher.lookup('PADDLE.NET* SOMEAPP');
    expect(paddle.matches[0]).toMatchObject({
      domain: 'paddle.com',
      matched_on: 'processor',
      processor: { merchant_of_record: true },
    });
  });

  it('maps confidence to levels', () => {
    expect([0.99, 0.9, 0.75, 0.5].map(levelOf)).toEqual(['very_high', 'high', 'medium', 'low']);
  });
});

describe('reading a line once', () => {
  it('gives the descriptor of a line from the same cache as its answer (reading costs more than matching)', () => {
    const matcher = new BrandMatcher(loadBrands());
    const line = 'CHECKCARD 0312 NETFLIX.COM 866-579-7172 CA';
    const first = matcher.read(line);
    expect(first.repeated).toBe(false);
    const kept = matcher.read(line);
    expect(kept.repeated).toBe(true);
    expect(kept.result).toEqual(first.result);
    expect(matcher.read(line).descriptor).toBe(kept.descriptor);
    expect(matcher.lookup(line)).toBe(kept.result);
    expect(kept.descriptor.processor).toBeNull();
  });

  it('keeps a line from its second sighting on, and a stream of lines seen once does not push it out', () => {
    const matcher = new BrandMatcher(loadBrands());
    const line = 'POS PURCHASE STARBUCKS STORE 11234 SEATTLE WA';
    matcher.read(line);
    const kept = matcher.read(line);
    // Twice as many new lines as both cache generations hold: each read once, none kept.
    for (let i = 0; i < 20_000; i++) {
      expect(matcher.read(`SQ *COFFEE CART ${i} PORTLAND OR`).repeated).toBe(false);
    }
    const again = matcher.read(line);
    expect(again).toBe(kept);
    expect(again.repeated).toBe(true);
  });
});

describe('lines of one merchant', () => {
  it('are matched once: lines that read alike share the answer, each keeping its own charge', () => {
    const matcher = new BrandMatcher(loadBrands());
    const first = matcher.lookup('POS PURCHASE STARBUCKS STORE 11234 SEATTLE WA');
    const second = matcher.lookup('POS PURCHASE STARBUCKS STORE 98765 SEATTLE WA');
    expect(second.charge).toBe('POS PURCHASE STARBUCKS STORE 98765 SEATTLE WA');
    expect(first.charge).toBe('POS PURCHASE STARBUCKS STORE 11234 SEATTLE WA');
    expect(second.matches).toBe(first.matches);
    expect(second.matches[0]?.domain).toBe('starbucks.com');
    // The shared answer is what matching the line afresh gives.
    expect(second).toEqual(matcher.lookupUncached('POS PURCHASE STARBUCKS STORE 98765 SEATTLE WA'));
  });

  it('keep apart lines whose reading differs in anything (here the city)', () => {
    const matcher = new BrandMatcher(loadBrands());
    const seattle = matcher.lookup('POS PURCHASE STARBUCKS STORE 11234 SEATTLE WA');
    const portland = matcher.lookup('POS PURCHASE STARBUCKS STORE 11234 PORTLAND OR');
    expect(portland.merchant.city).toBe('PORTLAND');
    expect(seattle.merchant.city).toBe('SEATTLE');
  });
});
