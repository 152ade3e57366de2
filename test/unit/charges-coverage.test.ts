import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  accuracyByKind,
  type CorpusName,
  corpusKinds,
  formatAccuracy,
  judge,
  loadCorpus,
} from '../../bench/descriptor-accuracy.ts';
import { buildIndex, serializeIndex } from '../../scripts/build-brands.ts';
import { brandIndexFile, loadBrands } from '../../servers/features/charges/brand-registry.ts';
import { BrandMatcher } from '../../servers/features/charges/matcher.ts';
import { detectProcessor, processors } from '../../servers/features/charges/processors.ts';

const matcher = new BrandMatcher(loadBrands());
const fixture = (name: CorpusName) => loadCorpus(name);
const confident = (level: string | undefined) => level === 'high' || level === 'very_high';

describe('the open-data brand index', () => {
  it('is exactly what npm run build-brands makes from the installed name-suggestion-index and simple-icons', () => {
    expect(serializeIndex(buildIndex()) === readFileSync(brandIndexFile, 'utf8')).toBe(true);
  });
});

describe('real long-tail statement lines', () => {
  const longtail = fixture('descriptors-longtail.json');
  const file = JSON.parse(
    readFileSync(new URL('../fixtures/descriptors-longtail.json', import.meta.url), 'utf8'),
  ) as { sources: Record<string, string>; kinds: Record<string, string> };

  it('holds the first 282 lines and at least 200 more, each from a source and of a kind named in the header', () => {
    expect(longtail.length).toBeGreaterThanOrEqual(482);
    expect(longtail.filter((c) => c.kind !== 'first-set').length).toBeGreaterThanOrEqual(200);
    expect(new Set(longtail.map((c) => c.line)).size).toBe(longtail.length);
    for (const c of longtail) {
      expect(file.sources[c.source as string], c.line).toMatch(/^https:/);
      expect(file.kinds[c.kind as string], c.line).toBeTypeOf('string');
      // Only the local and negative kinds are labelled null, and they all are (the first set mixes both).
      if (c.kind !== 'first-set')
        expect(c.domain === null, c.line).toBe(c.kind === 'local' || c.kind === 'negative');
    }
  });

  it('reports top-1, the share answered [] and confident false matches per kind', () => {
    const { rows } = accuracyByKind(matcher, longtail, corpusKinds('descriptors-longtail.json'));
    const famous = accuracyByKind(matcher, fixture('descriptors.json')).rows;
    process.stdout.write(
      `long-tail lines per kind:\n${formatAccuracy(rows)}famous brands:\n${formatAccuracy(famous)}`,
    );
    const all = rows.at(-1);
    expect(all?.lines).toBe(longtail.length);
    expect(rows.slice(0, -1).reduce((n, r) => n + r.lines, 0)).toBe(longtail.length);
  });

  it('puts the right brand first (or nothing at medium for a local merchant) for at least 80% of lines', () => {
    const misses = longtail.filter((c) => !judge(matcher, c).right);
    expect(1 - misses.length / longtail.length, misses.map((c) => c.line).join('\n')).toBeGreaterThanOrEqual(
      0.8,
    );
  });

  it('makes no confident mistake on either corpus', () => {
    const wrong = [...longtail, ...fixture('descriptors.json')].flatMap((c) => {
      const verdict = judge(matcher, c);
      return verdict.confidentFalse ? [`${c.line} -> ${verdict.best?.domain}`] : [];
    });
    expect(wrong).toEqual([]);
  });

  it('never answers a line that names no brand with high or very_high (a name, a generic word, a city, a bank narrative)', () => {
    const negatives = longtail.filter((c) => c.kind === 'negative' || c.kind === 'local');
    expect(negatives.length).toBeGreaterThanOrEqual(100);
    const confidentOnNegatives = negatives.flatMap((c) => {
      const level = matcher.lookup(c.line).matches[0]?.level;
      return confident(level) ? [`${c.line} -> ${level}`] : [];
    });
    expect(confidentOnNegatives).toEqual([]);
  });
});

describe('no confident mistakes', () => {
  it.each([
    ['DELTA DEFENSE LLC', 'delta.com'],
    ['DELTA DENTAL INS 800-555-1212 CA', 'delta.com'],
    ['USCCA/DELTA DEFENSE LL', 'delta.com'],
    ['NETFLIX AND CHILL BAR AUSTIN TX', 'netflix.com'],
    ['SPOTIFFY CAFE HOUSE', 'spotify.com'],
  ])('%s is never a high match for %s (one word of a brand inside another name)', (line, domain) => {
    const hit = matcher.lookup(line).matches.find((m) => m.domain === domain);
    expect(confident(hit?.level)).toBe(false);
  });

  it('does not name a one-country chain for a line printed in another country', () => {
    // Bäckerei Schmidt is a German chain (name-suggestion-index, locationSet DE).
    expect(matcher.lookup('BAECKEREI SCHMIDT SEATTLE WA').matches.filter((m) => m.confidence >= 0.7)).toEqual(
      [],
    );
  });

  it('picks the brand of the same name that operates where the line was printed', () => {
    const canada = matcher.lookup('A&W RESTAURANT TORONTO ON').matches[0]?.domain;
    const us = matcher.lookup('A&W RESTAURANT DENVER CO').matches[0]?.domain;
    expect(canada).toBeDefined();
    expect(us).toBeDefined();
    expect(canada).not.toBe(us);
  });
});

describe('every processor form', () => {
  it('detects each prefix of the table, before a merchant, as its processor', () => {
    for (const processor of processors) {
      expect(processor.source, processor.id).not.toBe('');
      for (const prefix of processor.prefixes) {
        const glued = prefix.endsWith('+') ? prefix.slice(0, -1) : null;
        const written = glued ?? (/[A-Z0-9]$/.test(prefix) ? `${prefix} ` : prefix);
        const detected = detectProcessor(`${written}ACME WIDGETS`);
        expect(detected?.processor.id, prefix).toBe(processor.id);
        expect(detected?.rest, prefix).toBe('ACME WIDGETS');
      }
    }
  });

  it('reads an unknown short code before * as a facilitator and the rest as the merchant', () => {
    const result = matcher.lookup('XQZ*ZUMBRO WIDGETS PORTLAND OR');
    expect(result.processor).toEqual({
      name: 'XQZ',
      domain: null,
      kind: 'unrecognised',
      merchant_of_record: false,
    });
    expect(result.merchant).toMatchObject({
      name: 'ZUMBRO WIDGETS',
      city: 'PORTLAND',
      region: 'OR',
      country: 'US',
    });
  });

  it('keeps a short code that is a brand name as the merchant (UBER *TRIP is Uber, not a facilitator)', () => {
    const result = matcher.lookup('UBER *TRIP HELP.UBER.COM CA');
    expect(result.processor).toBeNull();
    expect(result.matches[0]).toMatchObject({ domain: 'uber.com', level: 'very_high' });
  });

  it('names the developer behind GOOGLE * and the merchant of record behind APPLE.COM/BILL', () => {
    const google = matcher.lookup('GOOGLE *Duolingo g.co/helppay#');
    expect(google.processor).toMatchObject({
      name: 'Google Play',
      kind: 'app_store',
      merchant_of_record: true,
    });
    expect(google.merchant.name).toBe('DUOLINGO');
    expect(google.matches[0]).toMatchObject({ domain: 'duolingo.com', processor: { name: 'Google Play' } });
    const apple = matcher.lookup('APPLE.COM/BILL 866-712-7753 CA');
    expect(apple.merchant).toMatchObject({ name: 'Apple', phone: '+18667127753' });
    expect(apple.matches[0]).toMatchObject({ domain: 'apple.com', matched_on: 'processor' });
  });

  it('never offers a facilitator as the brand of a sale it only processed', () => {
    const result = matcher.lookup('PAYPAL *MAGGIEZUROS 402-935-7733 CA');
    expect(result.processor?.name).toBe('PayPal');
    expect(result.matches.filter((m) => m.domain === 'paypal.com')).toEqual([]);
    expect(result.merchant).toMatchObject({ name: 'MAGGIEZUROS', phone: '+14029357733', region: 'CA' });
  });

  it('reads a name PayPal cut at eleven characters', () => {
    expect(matcher.lookup('PAYPAL *TICKETMASTE TIC 402-935-7733 CA').matches[0]?.domain).toBe(
      'ticketmaster.com',
    );
  });
});
