/**
 * Reading a statement line the way a person does (issue 32 items 1-5 and 9), one kind of line at a
 * time, each with lines that must match and lines that must not. The lines are made up, of the kinds
 * the issue lists; the registry is the shipped one plus a few made-up brands (Widgetly and friends),
 * so that no real brand's data is invented.
 */
import { describe, expect, it } from 'vitest';
import { type Brand, loadBrands } from '../../servers/features/charges/brand-registry.ts';
import { BrandMatcher } from '../../servers/features/charges/matcher.ts';
import { bankExportMerchant, normalizeDescriptor } from '../../servers/features/charges/normalize.ts';
import { detectProcessor } from '../../servers/features/charges/processors.ts';

const madeUp = (name: string, domain: string, extra: Partial<Brand> = {}): Brand => ({
  name,
  domain,
  category: 'software',
  regions: ['US'],
  descriptors: [name.toUpperCase()],
  contact: {},
  returns: {},
  source: 'curated',
  ...extra,
});

const shipped = loadBrands();
const widgetly = madeUp('Widgetly', 'widgetly.com');
const billed = madeUp('Gizmora', 'gizmora.app', {
  billed_as: [{ name: 'Acmecorp Holdings', source: 'https://gizmora.app/help/how-your-charge-appears' }],
});
const quill = madeUp('Smith & Quill', 'smithandquill.com', { descriptors: [] });
const ltd = madeUp('Quillon Widgets Ltd', 'quillonwidgets.co.uk', { descriptors: [] });
const matcher = new BrandMatcher([...shipped, widgetly, billed, quill, ltd]);
const plain = new BrandMatcher(shipped);

const confident = (level: string | undefined) => level === 'high' || level === 'very_high';
const best = (line: string, m = matcher) => m.lookup(line).matches[0];
const on = (line: string, domain: string, m = matcher) =>
  m.lookup(line).matches.find((match) => match.domain === domain);

describe('a brand with extra words around it (token-level matching)', () => {
  it.each([
    'WIDGETLY INC',
    'WIDGETLY LLC',
    'WIDGETLY MEMBERSHIP RENEWAL',
    'WIDGETLY 0412 SPRINGFIELD IL',
    'POS PURCHASE WIDGETLY #2231 PORTLAND OR',
    // Its domain glued without the dot is its own site.
    'WIDGETLYCOM 866-555-0100',
  ])('%s names the brand outright', (line) => {
    expect(best(line)).toMatchObject({ domain: 'widgetly.com', level: 'very_high' });
  });

  it.each(['WIDGETLYUSA', 'WIDGETLYINT', 'WIDGETLYLTD LONDON GB'])(
    '%s: the brand glued to a country, legal or .COM tail is high, not very high',
    (line) => {
      expect(best(line)).toMatchObject({ domain: 'widgetly.com', level: 'high' });
    },
  );

  it.each([
    ['ZORBLAX WIDGETLY', 'another word that names something before it'],
    ['ZORBLAX WIDGETLY STORE PORTLAND OR', 'inside other words'],
    ['WIDGETLYZORBLAX', 'glued to a word that is not a tail'],
    ['ACMECORP WIDGETLY', 'a parent the registry does not record for it'],
  ])('%s (%s) finds the brand, never above medium', (line) => {
    const hit = on(line, 'widgetly.com');
    expect(hit).toBeDefined();
    expect(confident(hit?.level)).toBe(false);
  });

  it('names the brand after its own billing entity, as its registry entry records it with a source', () => {
    expect(best('ACMECORP HOLDINGS GIZMORA')).toMatchObject({ domain: 'gizmora.app', level: 'high' });
    // Another brand after the same entity is not helped by it.
    expect(confident(on('ACMECORP HOLDINGS WIDGETLY', 'widgetly.com')?.level)).toBe(false);
  });

  it('weighs what the name leaves unexplained: a one-word name inside a company name is not medium', () => {
    // Real brands whose one word starts another business's name.
    for (const [line, domain] of [
      ['CHECKCARD 0412 ACME PLUMBING LLC 555-123-4567 OH', 'acmemarkets.com'],
      ['UNITED OIL 2305 SUNSET CLIFFS US SAN DIEGO CA', 'united.com'],
      ['THE CROWN & ANCHOR LONDON GB', 'crowndecoratingcentres.co.uk'],
      ['DELTA DEFENSE LLC', 'delta.com'],
    ] as const) {
      expect((on(line, domain, plain)?.confidence ?? 0) < 0.7, line).toBe(true);
    }
  });

  it('still reads a famous brand followed by its location as the brand, at medium or above', () => {
    expect(best('KOHLS #1234 MENOMONEE FAL WI', plain)).toMatchObject({ domain: 'kohls.com' });
    expect((best('KOHLS #1234 MENOMONEE FAL WI', plain)?.confidence ?? 0) >= 0.7).toBe(true);
  });
});

describe('names the processor cut', () => {
  it('reads a name cut in its last word as the brand whose alias it starts, at medium', () => {
    const cut = madeUp('Zorblax Widget Emporium', 'zorblaxwidgets.com', { descriptors: [] });
    const m = new BrandMatcher([...shipped, cut]);
    expect(m.lookup('TST* ZORBLAX WIDGET EMP').matches[0]).toMatchObject({
      domain: 'zorblaxwidgets.com',
      level: 'medium',
    });
  });

  it('reads an unknown short code that is the brand cut or misspelt (LIM*RIDE COST is Lime)', () => {
    expect(plain.lookup('LIM*RIDE COST HTTPSWWW.LI.M CA').matches[0]?.domain).toBe('li.me');
    // A code naming nothing leaves the line unmatched.
    expect(plain.lookup('XQZ*ZORBLAX WIDGETS').matches).toEqual([]);
  });
});

describe("the line's own website", () => {
  it('is the match when the registry holds it, very high', () => {
    expect(best('WIDGETLY.COM 866-555-0100 CA')).toMatchObject({
      domain: 'widgetly.com',
      level: 'very_high',
    });
  });

  it.each([
    ['ZUMBROWIDGETS.COM', 'zumbrowidgets.com'],
    ['WWW.ZUMBROWIDGETS.AI', 'zumbrowidgets.ai'],
    ['ZUMBRO WIDGETS ZUMBROWIDGETS.COM', 'zumbrowidgets.com'],
    ['ZUMBRO ZUMBROWIDGETS.CO.UK', 'zumbrowidgets.co.uk'],
  ])(
    '%s: a domain the registry lacks, agreeing with the name, is a medium match from the line',
    (line, domain) => {
      const result = matcher.lookup(line);
      expect(result.merchant.website_hint).toBe(domain);
      expect(result.matches[0]).toMatchObject({
        domain,
        brand: domain,
        level: 'medium',
        matched_on: 'domain',
        source: 'line',
      });
    },
  );

  it('is ignored when it disagrees with the name (and stays the website hint)', () => {
    const result = matcher.lookup('ZUMBRO WIDGETS QUARTLEY.COM');
    expect(result.merchant.website_hint).toBe('quartley.com');
    expect(result.matches.filter((m) => m.domain === 'quartley.com')).toEqual([]);
  });

  it("is not the brand when it is the processor's own, printed for someone else's sale", () => {
    const result = matcher.lookup('SQ *ZUMBRO WIDGETS SQUAREUP.COM CA');
    expect(result.processor?.name).toBe('Square');
    expect(result.matches.filter((m) => m.domain === 'squareup.com')).toEqual([]);
  });
});

describe('normalisation, for the line and the registry alike', () => {
  it.each(['SMITH&QUILL', 'SMITH & QUILL 0412 BOSTON MA', 'SMITH AND QUILL', 'Smith&Quill'])(
    '%s: & and AND fold away',
    (line) => {
      expect(best(line)).toMatchObject({ domain: 'smithandquill.com', level: 'very_high' });
    },
  );

  it("drops a legal tail from the registry's names too (Quillon Widgets Ltd = QUILLON WIDGETS)", () => {
    expect(best('QUILLON WIDGETS LONDON GB')).toMatchObject({ domain: 'quillonwidgets.co.uk' });
    expect(confident(best('QUILLON WIDGETS LONDON GB')?.level)).toBe(true);
  });

  it('does not shorten a name at its legal tail after & (New York & Company is not New York)', () => {
    expect(confident(best('NEW YORK', plain)?.level)).toBe(false);
  });

  it('drops store numbers with letters and reads a city printed twice as the city', () => {
    const read = normalizeDescriptor('BEA, Apple Pay Jumbo Utrecht,PAS123 NR:XY98ZT 14.03.24/09:10 UTRECHT');
    expect(read.merchantTokens).toEqual(['JUMBO', 'UTRECHT']);
    expect(read.city).toBe('UTRECHT');
    expect(best('BEA, Apple Pay Jumbo Utrecht,PAS123 NR:XY98ZT 14.03.24/09:10 UTRECHT', plain)?.domain).toBe(
      'jumbo.com',
    );
  });
});

describe('a line ending with a country code', () => {
  it('reads NL as the Netherlands, not Newfoundland', () => {
    for (const line of ['NETFLIX INTERNATIONAL B.V. AMSTERDAM NL', 'NS REIZIGERS UTRECHT NL']) {
      const read = normalizeDescriptor(line);
      expect(read, line).toMatchObject({ country: 'NL', region: null });
    }
    expect(normalizeDescriptor('NS REIZIGERS UTRECHT NL').city).toBe('UTRECHT');
    // A US state that is also a country code is still the state.
    expect(normalizeDescriptor('HALCYON ROASTERS OAKLAND CA')).toMatchObject({ country: 'US', region: 'CA' });
  });

  it("takes no word of the name, nor a printed domain's label, for the city before it", () => {
    expect(normalizeDescriptor('DUTCH BROS COFFEE #12 GR')).toMatchObject({
      merchantTokens: ['DUTCH', 'BROS', 'COFFEE'],
      city: null,
    });
    expect(normalizeDescriptor('SKY DIGITAL 0344 241 1653 GB').city).toBeNull();
    expect(normalizeDescriptor('AMZNMktplace amazon.co.uk LU').city).toBeNull();
    expect(normalizeDescriptor('DELIVEROO LONDON GB')).toMatchObject({
      merchantTokens: ['DELIVEROO'],
      city: 'LONDON',
    });
  });
});

describe('processors with any separator', () => {
  it.each([
    ['PAYPAL *WIDGETLY', 'PayPal'],
    ['PAYPAL*WIDGETLY', 'PayPal'],
    ['PAYPAL_WIDGETLY', 'PayPal'],
    ['PAYPAL _*WIDGETLY', 'PayPal'],
    ['SQ*WIDGETLY', 'Square'],
    ['SQ * WIDGETLY', 'Square'],
    ['PLAYSTATION_WIDGETLY', 'PlayStation Store'],
  ])('%s is %s for the brand after it', (line, processor) => {
    const result = matcher.lookup(line);
    expect(result.processor?.name).toBe(processor);
    expect(result.matches[0]).toMatchObject({ domain: 'widgetly.com' });
  });

  it('reads an unknown short code with _ or a spaced * as a facilitator, a brand code as the brand', () => {
    expect(detectProcessor('XQZ_ZUMBRO WIDGETS')?.processor).toMatchObject({
      name: 'XQZ',
      kind: 'unrecognised',
    });
    expect(detectProcessor('XQZ *ZUMBRO WIDGETS')?.rest).toBe('ZUMBRO WIDGETS');
    expect(detectProcessor('ZUMBRO WIDGETS')).toBeNull();
    expect(matcher.lookup('UBER_TRIP HELP.UBER.COM CA').matches[0]).toMatchObject({ domain: 'uber.com' });
  });
});

describe('bank export forms', () => {
  it.each([
    ['WIDGETLY DES:SUBSCR ID:0412 INDN:JANE ZORBLAX CO ID:1234567 PPD', 'WIDGETLY'],
    ['ACH DEBIT WIDGETLY DES:SUBSCR ID:XXXXX INDN:JANE ZORBLAX CO ID:XXXXX WEB', 'WIDGETLY'],
    [
      'ORIG CO NAME:WIDGETLY ORIG ID:9000 DESC DATE:0312 CO ENTRY DESCR:SUBSCR SEC:WEB TRACE#:0210 EED:240312 IND ID:1 IND NAME:JANE ZORBLAX TRN: 123',
      'WIDGETLY',
    ],
    ['ONLINE BILL PAY TYPE: ONLINE PMT ID: 0412 CO: WIDGETLY', 'WIDGETLY'],
    ['TYPE: AUTO PAY ID: 9876 CO: WIDGETLY INC NAME: JANE ZORBLAX', 'WIDGETLY INC'],
  ])('%s reads to %s', (line, merchant) => {
    const result = matcher.lookup(line);
    expect(result.normalized).toBe(merchant);
    expect(result.matches[0]).toMatchObject({ domain: 'widgetly.com', level: 'very_high' });
  });

  it('never reads the account holder (INDN, IND NAME) as the merchant', () => {
    const result = matcher.lookup('ZORBLAX UTILITIES DES:BILL PAY ID:0412 INDN:JANE WIDGETLY CO ID:99 PPD');
    expect(result.normalized).toBe('ZORBLAX UTILITIES');
    expect(result.matches.filter((m) => m.domain === 'widgetly.com')).toEqual([]);
  });

  it('leaves a card line with a colon as it is', () => {
    expect(bankExportMerchant('NETFLIX.COM 12:30 LOS GATOS CA')).toBe('NETFLIX.COM 12:30 LOS GATOS CA');
  });
});

describe('no confident mistakes on lines that name no brand', () => {
  const people = [
    'JOHN SMITH',
    'MARIA GARCIA',
    'DAVID JOHNSON 555-123-4567',
    'SARAH MILLER PORTLAND OR',
    'ROBERT JONES',
    'THOMAS ANDERSON',
    'MATTHEW HARRIS',
    'ANTHONY MARTIN',
    'KEVIN WALKER',
    'JACK ROGERS',
    'WENDY MORGAN',
    'ROSS PETERSON',
    'TOMMY REED',
    'ZELLE TO JOHN SMITH',
  ];
  const words = [
    'PARKING',
    'COFFEE',
    'RESTAURANT',
    'PIZZA',
    'GROCERY',
    'PHARMACY',
    'CITY PARKING',
    'DOWNTOWN DELI',
    'MAIN STREET CAFE',
    'GAS STATION',
    'CAR WASH',
    'BARBER SHOP',
    'HOTEL',
    'AIRPORT PARKING',
    'GENERAL STORE',
    'BAKERY',
  ];
  const places = [
    'SPRINGFIELD',
    'CHICAGO',
    'DENVER CO',
    'PHOENIX AZ',
    'AUSTIN',
    'LONDON',
    'PARIS',
    'SEATTLE WA',
    'BERLIN',
    'SANTA FE',
    'SAN DIEGO',
    'LAS VEGAS',
    'FORT COLLINS',
    'NEW YORK',
    'MANCHESTER',
  ];
  it.each([...people, ...words, ...places])('%s is never high', (line) => {
    expect(plain.lookup(line).matches.filter((m) => confident(m.level))).toEqual([]);
  });
});

describe('lines that read alike', () => {
  it('share an answer only when & joins the same words (CROWN & ANCHOR is not CROWN ANCHOR)', () => {
    const m = new BrandMatcher(shipped);
    const joined = m.lookup('THE CROWN & ANCHOR LONDON GB');
    const apart = m.lookup('THE CROWN ANCHOR LONDON GB');
    expect(joined).toEqual(m.lookupUncached('THE CROWN & ANCHOR LONDON GB'));
    expect(apart).toEqual(m.lookupUncached('THE CROWN ANCHOR LONDON GB'));
    expect(joined.matches.some((x) => x.confidence >= 0.7)).toBe(false);
  });
});

describe('regional sites (item 6)', () => {
  const brellio = madeUp('Brellio', 'brellio.com', {
    descriptors: ['BRELLIO'],
    alternate_domains: ['brellio.co.uk', 'brellio.it'],
  });
  const m = new BrandMatcher([...shipped, brellio]);

  it("answers the site for the line's country and lists the others", () => {
    expect(best('BRELLIO LONDON GB', m)).toMatchObject({
      brand: 'Brellio',
      domain: 'brellio.co.uk',
      alternate_domains: ['brellio.com', 'brellio.it'],
    });
    expect(best('BRELLIO MILANO IT', m)).toMatchObject({
      domain: 'brellio.it',
      alternate_domains: ['brellio.com', 'brellio.co.uk'],
    });
  });

  it('answers the main site when the line names no country, or one the brand has no site for', () => {
    for (const line of ['BRELLIO', 'BRELLIO BERLIN DE']) {
      expect(best(line, m)).toMatchObject({
        domain: 'brellio.com',
        alternate_domains: ['brellio.co.uk', 'brellio.it'],
      });
    }
  });

  it('answers the country site the line printed, at very high', () => {
    expect(best('BRELLIO.IT', m)).toMatchObject({
      domain: 'brellio.it',
      level: 'very_high',
      alternate_domains: ['brellio.com', 'brellio.co.uk'],
    });
  });

  it('lists no alternate_domains for a brand with one site', () => {
    expect(best('WIDGETLY')).not.toHaveProperty('alternate_domains');
  });

  it("reads the registry's country sites from Wikidata (Albert Heijn: ah.nl, ah.be)", () => {
    expect(shipped.find((b) => b.domain === 'ah.nl')?.alternate_domains).toEqual(['ah.be']);
    expect(best('ALBERT HEIJN 1234 ANTWERPEN BE', plain)).toMatchObject({
      domain: 'ah.be',
      alternate_domains: ['ah.nl'],
    });
  });

  it("never lists a site the registry holds as a brand of its own (Amazon's UK and German storefronts)", () => {
    const amazon = shipped.find((b) => b.domain === 'amazon.com');
    expect(amazon?.alternate_domains).toContain('amazon.it');
    expect(amazon?.alternate_domains).not.toContain('amazon.co.uk');
    expect(amazon?.alternate_domains).not.toContain('amazon.de');
  });
});
