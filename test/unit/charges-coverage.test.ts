import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildIndex, serializeIndex } from '../../scripts/build-brands.ts';
import { brandIndexFile, loadBrands } from '../../servers/features/charges/brand-registry.ts';
import { BrandMatcher } from '../../servers/features/charges/matcher.ts';
import { detectProcessor, processors } from '../../servers/features/charges/processors.ts';

const matcher = new BrandMatcher(loadBrands());
type Case = { line: string; domain: string | null };
const fixture = (name: string) =>
  (JSON.parse(readFileSync(new URL(`../fixtures/${name}`, import.meta.url), 'utf8')) as { cases: Case[] })
    .cases;
const confident = (level: string | undefined) => level === 'high' || level === 'very_high';

describe('the open-data brand index', () => {
  it('is exactly what npm run build-brands makes from the installed name-suggestion-index and simple-icons', () => {
    expect(serializeIndex(buildIndex()) === readFileSync(brandIndexFile, 'utf8')).toBe(true);
  });
});

describe('real long-tail statement lines', () => {
  const longtail = fixture('descriptors-longtail.json');

  it('holds at least 150 real lines, each from a source named in the header', () => {
    const file = JSON.parse(
      readFileSync(new URL('../fixtures/descriptors-longtail.json', import.meta.url), 'utf8'),
    );
    expect(longtail.length).toBeGreaterThanOrEqual(150);
    for (const c of longtail as (Case & { source: string })[])
      expect(file.sources[c.source], c.line).toMatch(/^https:/);
  });

  it('puts the right brand first (or nothing at medium for a local merchant) for at least 80% of lines', () => {
    const misses = longtail.filter((c) => {
      const matches = matcher.lookup(c.line).matches;
      return c.domain === null
        ? matches.some((m) => m.confidence >= 0.7)
        : matches[0]?.domain !== c.domain || (matches[0]?.confidence ?? 0) < 0.7;
    });
    expect(1 - misses.length / longtail.length, misses.map((c) => c.line).join('\n')).toBeGreaterThanOrEqual(
      0.8,
    );
  });

  it('makes no confident mistake on either corpus', () => {
    const wrong = [...longtail, ...fixture('descriptors.json')].flatMap((c) => {
      const best = matcher.lookup(c.line).matches[0];
      return best && confident(best.level) && best.domain !== c.domain ? [`${c.line} -> ${best.domain}`] : [];
    });
    expect(wrong).toEqual([]);
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
