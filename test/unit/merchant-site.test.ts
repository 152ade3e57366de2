/**
 * Live resolution's pure parts: which domains are worth checking for a merchant, and whether a home
 * page names it. Written as the mistakes to avoid: a namesake in another business or city, a page
 * that only shows the domain name, a parked domain, a directory page, a confident guess.
 */
import { describe, expect, it } from 'vitest';
import {
  candidateDomains,
  isPlatform,
  isResolvable,
  merchantOfLine,
  nameLabels,
} from '../../servers/features/charges/candidates.ts';
import {
  judgeSite,
  MAX_GUESSED_CONFIDENCE,
  nameAgreement,
  readSiteIdentity,
} from '../../servers/features/charges/merchant-site.ts';
import { normalizeDescriptor } from '../../servers/features/charges/normalize.ts';

const merchantOf = (line: string) => merchantOfLine(line, normalizeDescriptor(line));

function page(options: { title?: string; siteName?: string; jsonLd?: unknown; body?: string }): string {
  return `<!doctype html><html><head>${options.title === undefined ? '' : `<title>${options.title}</title>`}
${options.siteName ? `<meta property="og:site_name" content="${options.siteName}">` : ''}
${options.jsonLd ? `<script type="application/ld+json">${JSON.stringify(options.jsonLd)}</script>` : ''}
</head><body>${options.body ?? ''}</body></html>`;
}

describe('the merchant of a line', () => {
  it('reads the name, the city after it, the country and a printed domain', () => {
    expect(merchantOf('SQ *HALCYON ROASTERS OAKLAND CA')).toEqual({
      nameTokens: ['HALCYON', 'ROASTERS'],
      cityTokens: ['OAKLAND'],
      country: 'US',
      region: 'CA',
      cut: false,
      websiteHint: null,
    });
    expect(merchantOf('TST* MARLOWE KITCHEN SAN FRANCISCO CA').cityTokens).toEqual(['SAN', 'FRANCISCO']);
    expect(merchantOf('HALCYONROASTERS.COM 510-555-0142 CA').websiteHint).toBe('halcyonroasters.com');
    expect(merchantOf('MARLOWE KITCHEN LONDON GB').country).toBe('GB');
  });

  it('does not resolve codes and numbers', () => {
    expect(isResolvable(merchantOf('POS 0042 1234'))).toBe(false);
    expect(isResolvable(merchantOf('XY 12'))).toBe(false);
    expect(isResolvable(merchantOf('SQ *HALCYON ROASTERS'))).toBe(true);
  });

  it('does not resolve a line that names no brand: a place, words for a kind of business', () => {
    for (const line of ['SANTA FE', 'FORT COLLINS', 'CITY PARKING 0412', 'GAS STATION DENVER CO', 'CAR WASH'])
      expect(isResolvable(merchantOf(line)), line).toBe(false);
    for (const line of ['LA COLOMBE COFFEE', 'PARKING SPOT HOLDINGS INC LONG NAME', 'BLUE BOTTLE COFFEE'])
      expect(isResolvable(merchantOf(line)), line).toBe(true);
  });
});

describe('candidate domains', () => {
  it('makes names from the merchant: joined, hyphenated, without a trailing trade word or legal tail', () => {
    expect(nameLabels(['BLUE', 'BOTTLE', 'COFFEE'])).toEqual([
      'bluebottlecoffee',
      'blue-bottle-coffee',
      'bluebottle',
      'blue-bottle',
    ]);
    expect(nameLabels(['THE', 'JUNIPER', 'AND', 'IVY', 'LLC'])).toEqual(['juniperivy', 'juniper-ivy']);
  });

  it("checks the line's own domain first, then search results, then names with .com before the country's TLD", () => {
    const merchant = { ...merchantOf('MARLOWE KITCHEN LONDON GB'), websiteHint: 'marlowe.co.uk' };
    expect(
      candidateDomains(
        merchant,
        [
          'https://www.yelp.com/biz/marlowe-kitchen-london',
          'http://169.254.169.254/latest/meta-data/',
          'http://127.0.0.1:8080/',
          'http://intranet.local/',
          'https://www.marlowekitchen.london/menu',
          'not a url',
        ],
        20,
      ),
    ).toEqual([
      { domain: 'marlowe.co.uk', source: 'website_hint' },
      { domain: 'marlowekitchen.london', source: 'search' },
      { domain: 'marlowekitchen.com', source: 'name' },
      { domain: 'marlowe-kitchen.com', source: 'name' },
      { domain: 'marlowe.com', source: 'name' },
      { domain: 'marlowekitchen.co.uk', source: 'name' },
      { domain: 'marlowe-kitchen.co.uk', source: 'name' },
    ]);
  });

  it('leaves out directories, review sites and platforms, in every country (yelp.co.uk)', () => {
    for (const d of ['yelp.com', 'yelp.co.uk', 'tripadvisor.de', 'trustpilot.com', 'yell.com', 'wixsite.com'])
      expect(isPlatform(d), d).toBe(true);
    expect(isPlatform('halcyonroasters.com')).toBe(false);
  });

  it('drops a store number or a web or country tail from the name it makes domains of', () => {
    expect(nameLabels(['WIDGETLY', 'COM'])).toEqual(['widgetly']);
    expect(nameLabels(['WIDGETLY', 'USA'])).toEqual(['widgetly']);
    expect(nameLabels(['HALCYON', 'ROASTERS', '0412'])).toEqual(['halcyonroasters', 'halcyon-roasters']);
  });

  it('stops at the configured number', () => {
    expect(candidateDomains(merchantOf('BLUE BOTTLE COFFEE'), [], 2)).toHaveLength(2);
  });
});

describe('does the page name the merchant', () => {
  const halcyon = merchantOf('SQ *HALCYON ROASTERS OAKLAND CA');

  it('agrees on the same words whatever the case, accents, punctuation, THE, AND and a legal tail', () => {
    expect(nameAgreement(['HALCYON', 'ROASTERS'], [], 'Halcyon Roasters')).toBe('exact');
    expect(nameAgreement(['JUNIPER', 'IVY'], [], 'Juniper & Ivy')).toBe('exact');
    expect(nameAgreement(['JUNIPER', 'IVY'], [], 'The Juniper and Ivy, LLC')).toBe('exact');
    expect(nameAgreement(['CAFE', 'DE', 'FLORE'], [], 'Café de Flore')).toBe('exact');
    expect(nameAgreement(['HALCYON', 'ROASTERS'], ['OAKLAND'], 'Halcyon Roasters Oakland')).toBe('exact');
  });

  it('lets one side leave a trade word out, never both (a different business)', () => {
    expect(nameAgreement(['BLUE', 'BOTTLE', 'COFFEE'], [], 'Blue Bottle')).toBe('trade_word');
    expect(nameAgreement(['MARLOWE'], [], 'Marlowe Kitchen')).toBe('trade_word');
    expect(nameAgreement(['JOES', 'PIZZA'], [], "Joe's Tacos")).toBeNull();
    expect(nameAgreement(['JOES', 'PIZZA'], [], "Joe's")).toBeNull(); // too short a core to stand alone
  });

  it('takes a long name the descriptor cut short as the start of the full one, and nothing looser', () => {
    expect(nameAgreement(['NORTHSIDE', 'PROVISIO'], [], 'Northside Provisions')).toBe('truncated');
    expect(nameAgreement(['HALCYON', 'ROAST'], [], 'Halcyon Roasters')).toBeNull();
    // Singular and plural are one business's name (GENESIS HEALTH CLUB, Genesis Health Clubs).
    expect(nameAgreement(['HALCYON', 'ROASTER'], [], 'Halcyon Roasters')).toBe('exact');
    expect(nameAgreement(['HALCYON', 'ROASTERS'], [], 'Halcyon Roastery')).toBeNull();
    expect(nameAgreement(['HALCYON'], [], 'Halcyon Roasters')).toBeNull();
    expect(nameAgreement(['HALCYON', 'ROASTERS'], [], 'Halcyon Roasters Supply Co Portland')).toBeNull();
  });

  it('accepts the page that names it in og:site_name, JSON-LD and title, in its city, at medium at most', () => {
    const html = page({
      title: 'Home | Halcyon Roasters',
      siteName: 'Halcyon Roasters',
      jsonLd: {
        '@context': 'https://schema.org',
        '@graph': [
          { '@type': 'WebSite', name: 'Halcyon' },
          {
            '@type': 'CafeOrCoffeeShop',
            name: 'Halcyon Roasters',
            address: { '@type': 'PostalAddress', addressLocality: 'Oakland' },
          },
        ],
      },
    });
    const site = readSiteIdentity(html);
    expect(site.category).toBe('coffee');
    const verdict = judgeSite(halcyon, site, { websiteHint: true });
    expect(verdict).toMatchObject({
      accepted: true,
      name: 'Halcyon Roasters',
      city: 'agrees',
      signals: ['site_name', 'organization', 'title'],
    });
    expect(verdict.confidence).toBe(MAX_GUESSED_CONFIDENCE);
    expect(verdict.confidence).toBeLessThan(0.85);
  });

  it('refuses a page that does not name it, or only shows a host name', () => {
    const bare = readSiteIdentity(page({ title: 'Welcome', body: '<p>Welcome to our site in Oakland.</p>' }));
    expect(judgeSite(halcyon, bare, { websiteHint: false })).toMatchObject({
      accepted: false,
      reason: 'name_absent',
    });
    const hostOnly = readSiteIdentity(
      page({ title: 'halcyonroasters.com', siteName: 'halcyonroasters.com' }),
    );
    expect(judgeSite(halcyon, hostOnly, { websiteHint: false })).toMatchObject({
      accepted: false,
      reason: 'name_absent',
    });
  });

  it('refuses a parked domain even when its title names the merchant', () => {
    const parked = readSiteIdentity(
      page({
        title: 'Halcyon Roasters',
        body: '<h1>This domain is for sale!</h1><p>Buy this domain today.</p>',
      }),
    );
    expect(judgeSite(halcyon, parked, { websiteHint: false })).toMatchObject({
      accepted: false,
      reason: 'parked',
    });
  });

  it('refuses a namesake whose address is in another city, and lowers one that does not say where it is', () => {
    const elsewhere = readSiteIdentity(
      page({
        siteName: 'Halcyon Roasters',
        jsonLd: {
          '@type': 'LocalBusiness',
          name: 'Halcyon Roasters',
          address: { addressLocality: 'Portland' },
        },
      }),
    );
    expect(judgeSite(halcyon, elsewhere, { websiteHint: false })).toMatchObject({
      accepted: false,
      reason: 'city_mismatch',
    });
    const silent = judgeSite(halcyon, readSiteIdentity(page({ siteName: 'Halcyon Roasters' })), {
      websiteHint: false,
    });
    expect(silent).toMatchObject({ accepted: true, city: 'absent' });
    expect(silent.confidence).toBeLessThan(0.7);
  });

  it('does not take a directory or product node for the business', () => {
    const product = readSiteIdentity(page({ jsonLd: { '@type': 'Product', name: 'Halcyon Roasters' } }));
    expect(product.names).toEqual([]);
  });

  it('refuses a directory or review page that features the merchant, and takes a business listing its branches', () => {
    const listing = readSiteIdentity(
      page({
        title: 'Halcyon Roasters - Oakland | Best Local Bites',
        jsonLd: {
          '@type': 'ItemList',
          itemListElement: [
            { '@type': 'ListItem', item: { '@type': 'CafeOrCoffeeShop', name: 'Halcyon Roasters' } },
            { '@type': 'ListItem', item: { '@type': 'CafeOrCoffeeShop', name: 'Other Beans' } },
          ],
        },
      }),
    );
    expect(listing.directory).toBe(true);
    expect(listing.names.map((n) => n.signal)).not.toContain('organization');
    expect(judgeSite(halcyon, listing, { websiteHint: false })).toMatchObject({
      accepted: false,
      reason: 'directory',
    });
    const review = readSiteIdentity(
      page({
        title: 'Halcyon Roasters',
        jsonLd: { '@type': 'Review', itemReviewed: { '@type': 'LocalBusiness', name: 'Halcyon Roasters' } },
        body: '<p>Is this your business? Claim your business.</p>',
      }),
    );
    expect(review.directory).toBe(true);
    const own = readSiteIdentity(
      page({
        siteName: 'Halcyon Roasters',
        jsonLd: {
          '@type': 'Organization',
          name: 'Halcyon Roasters',
          subjectOf: {
            '@type': 'ItemList',
            itemListElement: [
              { '@type': 'ListItem', item: { '@type': 'CafeOrCoffeeShop', name: 'Halcyon Roasters Uptown' } },
            ],
          },
        },
      }),
    );
    expect(own.directory).toBe(false);
    expect(judgeSite(halcyon, own, { websiteHint: false }).accepted).toBe(true);
  });

  it("refuses a same-name business in another country, by its address or its country's domain", () => {
    const bristol = merchantOf('CORVIDAE COFFEE BRISTOL GB');
    const us = readSiteIdentity(
      page({
        siteName: 'Corvidae Coffee',
        jsonLd: {
          '@type': 'LocalBusiness',
          name: 'Corvidae Coffee',
          address: { addressCountry: 'United States' },
        },
      }),
    );
    expect(us.countries).toEqual(['US']);
    expect(judgeSite(bristol, us, { websiteHint: false })).toMatchObject({
      accepted: false,
      reason: 'country_mismatch',
    });
    const bare = readSiteIdentity(page({ siteName: 'Corvidae Coffee' }));
    expect(judgeSite(bristol, bare, { websiteHint: false, domainCountry: 'DE' })).toMatchObject({
      accepted: false,
      reason: 'country_mismatch',
    });
    expect(judgeSite(bristol, bare, { websiteHint: false, domainCountry: 'GB' })).toMatchObject({
      accepted: true,
      country: 'agrees',
    });
    expect(judgeSite(bristol, bare, { websiteHint: false, domainCountry: null })).toMatchObject({
      accepted: true,
      country: 'unknown',
    });
  });
});

describe('reads the line as a person does (issue 32 item 7)', () => {
  it('takes a name its processor cut at the length it keeps (PayPal: 11), whatever the length', () => {
    const paypal = merchantOf('PAYPAL *YANDYENTERP 402-935-7733 AZ');
    expect(paypal.cut).toBe(true);
    expect(merchantOf('PAYPAL *YANDY 402-935-7733 AZ').cut).toBe(false);
    expect(merchantOf('YANDYENTERP PHOENIX AZ').cut).toBe(false);
    expect(nameAgreement(['NORTHSIDE', 'PR'], [], 'Northside Provisions', { cut: true })).toBe('truncated');
    expect(nameAgreement(['NORTHSIDE', 'PR'], [], 'Northside Provisions')).toBeNull();
    // The company word the cut left glued on (YANDY + ENTERP[RISES]).
    expect(nameAgreement(paypal.nameTokens, [], 'Yandy', { cut: paypal.cut })).toBe('leftover');
  });

  it('tolerates a location, a number or a known tail left on the line, as words or glued', () => {
    expect(nameAgreement(['DASHLANEUSA'], [], 'Dashlane')).toBe('leftover');
    expect(nameAgreement(['WIDGETLY', 'COM'], [], 'Widgetly')).toBe('leftover');
    expect(nameAgreement(['CHEBA', 'HUT', 'LAUREL', 'ST'], [], 'Cheba Hut')).toBe('leftover');
    expect(nameAgreement(['WIDGETLY', '0412', 'SPRINGFIELD'], ['SPRINGFIELD'], 'Widgetly')).toBe('leftover');
    expect(nameAgreement(['WIDGETLY', 'MEMBERSHIP', 'RENEWAL'], [], 'Widgetly')).toBe('leftover');
    // A place only when the site itself names it.
    expect(nameAgreement(['NZ', 'POST', 'AUCKLAND'], [], 'NZ Post')).toBeNull();
    expect(
      nameAgreement(['NZ', 'POST', 'AUCKLAND'], [], 'NZ Post', { pageText: ' OUR AUCKLAND STORES ' }),
    ).toBe('leftover');
    // A place cut by the field (Fort Collins), and the company the site itself says it is.
    expect(nameAgreement(['PINOTS', 'PALETTE', 'FORT'], [], "Pinot's Palette")).toBe('leftover');
    expect(
      nameAgreement(['USCCA', 'DELTA', 'DEFENSE', 'LL'], [], 'USCCA', {
        ownNames: ['USCCA', 'DELTADEFENSELLC'],
      }),
    ).toBe('leftover');
    expect(nameAgreement(['USCCA', 'DELTA', 'DEFENSE', 'LL'], [], 'USCCA')).toBeNull();
    // Other words are another business's name.
    expect(nameAgreement(['HALCYON', 'ROASTERS', 'SUPPLY'], [], 'Halcyon Roasters')).toBeNull();
    expect(nameAgreement(['WIDGETLYSHOES'], [], 'Widgetly')).toBeNull();
  });

  it("takes the site's longer name or its initials only on its own domain of the line's name", () => {
    expect(nameAgreement(['LAMARS'], [], "LaMar's Donuts", { domainLabel: 'lamars' })).toBe('longer_name');
    expect(nameAgreement(['LAMARS'], [], "LaMar's Donuts", { domainLabel: 'donutworld' })).toBeNull();
    expect(nameAgreement(['AFW'], [], 'American Furniture Warehouse', { domainLabel: 'afw' })).toBe(
      'initials',
    );
    expect(nameAgreement(['AFW'], [], 'American Furniture Warehouse')).toBeNull();
  });

  it("reads the company the footer names and a site's own Brand.com name; a host name alone is no name", () => {
    const uscca = readSiteIdentity(
      page({
        title: 'USCCA | Concealed carry training',
        body: '<main>Train with us.</main><footer><p>© 2026 Delta Defense, LLC. All rights reserved.</p></footer>',
      }),
    );
    expect(uscca.names).toContainEqual({ signal: 'organization', text: 'Delta Defense, LLC' });
    expect(
      judgeSite(merchantOf('DELTA DEFENSE LLC WEST BEND WI'), uscca, { websiteHint: false }),
    ).toMatchObject({
      accepted: true,
      signals: ['organization'],
    });
    const quoted = readSiteIdentity(page({ title: 'Blog', body: '<p>© 2026 Delta Defense, LLC</p>' }));
    expect(quoted.names.map((n) => n.text)).not.toContain('Delta Defense, LLC');

    const superCom = readSiteIdentity(page({ title: 'Super.com | Save on hotels', siteName: 'Super.com' }));
    expect(judgeSite(merchantOf('SUPER+*1833-773-8471'), superCom, { websiteHint: false }).accepted).toBe(
      true,
    );
  });

  it('compares a same-name business on the state, and keeps one abroad low when the line names no country', () => {
    const denver = merchantOf('MARLOWE KITCHEN DENVER CO');
    const oregon = readSiteIdentity(
      page({
        siteName: 'Marlowe Kitchen',
        jsonLd: { '@type': 'Restaurant', name: 'Marlowe Kitchen', address: { addressRegion: 'OR' } },
      }),
    );
    expect(judgeSite(denver, oregon, { websiteHint: false })).toMatchObject({
      accepted: false,
      reason: 'region_mismatch',
    });
    const colorado = readSiteIdentity(
      page({
        siteName: 'Marlowe Kitchen',
        jsonLd: { '@type': 'Restaurant', name: 'Marlowe Kitchen', address: { addressRegion: 'CO' } },
      }),
    );
    expect(judgeSite(denver, colorado, { websiteHint: false })).toMatchObject({
      accepted: true,
      region: 'agrees',
    });

    const nowhere = merchantOf('BISON LIQUORS');
    const site = readSiteIdentity(page({ siteName: 'Bison Liquors', title: 'Bison Liquors' }));
    expect(judgeSite(nowhere, site, { websiteHint: false, domainCountry: 'AU' }).confidence).toBeLessThan(
      0.7,
    );
    expect(
      judgeSite(nowhere, site, { websiteHint: false, domainCountry: null }).confidence,
    ).toBeGreaterThanOrEqual(0.7);
    // A .com with an address sells beyond its country: not held to low.
    const dotCom = readSiteIdentity(
      page({
        siteName: 'Bison Liquors',
        title: 'Bison Liquors',
        jsonLd: { '@type': 'Store', name: 'Bison Liquors', address: { addressCountry: 'US' } },
      }),
    );
    expect(
      judgeSite(nowhere, dotCom, { websiteHint: false, domainCountry: null }).confidence,
    ).toBeGreaterThanOrEqual(0.7);
  });
});
