import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadBrands } from '../../servers/features/charges/brand-registry.ts';
import { BrandMatcher, levelOf } from '../../servers/features/charges/matcher.ts';
import { processors } from '../../servers/features/charges/processors.ts';

const brands = loadBrands();
const matcher = new BrandMatcher(brands);
const corpus = JSON.parse(readFileSync(new URL('../fixtures/descriptors.json', import.meta.url), 'utf8')) as {
  cases: { line: string; domain: string | null; processor?: string }[];
};

describe('shipped brand registry', () => {
  it('holds at least 400 real brands with unique domains and descriptor forms', () => {
    expect(brands.length).toBeGreaterThanOrEqual(400);
    expect(new Set(brands.map((b) => b.domain)).size).toBe(brands.length);
    for (const brand of brands) expect(brand.descriptors.length, brand.domain).toBeGreaterThan(0);
  });
});

describe('BrandMatcher over the statement-line corpus', () => {
  const domains = new Set([...brands.map((b) => b.domain), ...processors.map((p) => p.domain)]);

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
