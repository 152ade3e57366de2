/**
 * Does this home page belong to the merchant on the statement line? Pure: the page's own claims
 * about its name - `<title>`, `og:site_name` (ogp.me), schema.org JSON-LD `Organization` /
 * `LocalBusiness` names and `WebSite` name - compared with the merchant's name after the same
 * normalisation as the matcher's, and the city, when the line has one, looked for on the page.
 * The line's name is read as a person reads it (issue 32 item 7): a trade word or legal-entity tail
 * may be absent on one side, a name its processor's field cut short may be a prefix, words the line
 * adds after the name may be a location, a number or a known tail (`COM`, `USA`, a city glued on), the
 * site may use a longer form of the name when its own domain is the line's name, and the company the
 * site names in its JSON-LD `legalName` or its footer (`© 2026 Delta Defense, LLC`, `operated by`)
 * counts as its name; live resolution reads the site's about page the same way when the home page
 * does not name the merchant. A near spelling is still a different business here.
 */
import * as cheerio from 'cheerio';
import { jsonLdEntriesOf, typesOf, visibleText } from '../../page-reading.ts';
import type { BrandCategory } from './brand-registry.ts';
import { coreTokens, lineTails, type MerchantLine, tradeWords } from './candidates.ts';
import { canonicalTokens } from './normalize.ts';

export type NameSignal = 'title' | 'site_name' | 'organization';

export interface SiteIdentity {
  /** Names the page gives itself, with where each was read. */
  names: { signal: NameSignal; text: string }[];
  /** `address.addressLocality` of its organisations, as written. */
  localities: string[];
  /** `address.addressCountry` of its organisations, as ISO 3166-1 alpha-2 where it could be read. */
  countries: string[];
  /** `address.addressRegion` of its organisations written as a two-letter code (`CO`, `ON`). */
  regions: string[];
  /**
   * A page about other businesses: a directory, review or listing page (JSON-LD that lists or reviews
   * businesses other than its own, or a directory's own words). Evidence a business exists, never its site.
   */
  directory: boolean;
  category: BrandCategory | null;
  /** Canonical tokens of the title, description, visible text and addresses, space-joined and padded. */
  text: string;
  /** A parked or for-sale domain page. */
  parked: boolean;
  /** The path of the site's own about page, linked from this one (`/about-us`), if any. */
  aboutPath: string | null;
}

/** Links to a site's own about page: `/about`, `/about-us`, `/company/about`, `/our-story`. */
const aboutLink =
  /^\/(?:[\w-]+\/)?(?:about(?:[-_]?us)?|our[-_]story|who[-_]we[-_]are|company)\/?(?:\.html?)?$/i;

/** The first same-site link to an about page (a path, never another host). */
function aboutPathOf($: cheerio.CheerioAPI): string | null {
  for (const el of $('a[href]').toArray().slice(0, 500)) {
    const href = ($(el).attr('href') ?? '').trim();
    let path = href;
    if (/^https?:\/\//i.test(href)) continue;
    path = path.split(/[?#]/)[0] ?? '';
    if (aboutLink.test(path)) return path;
  }
  return null;
}

/** schema.org types that stand for the business itself (and their common subtypes). */
const organizationTypes =
  /^(?:Organization|Corporation|LocalBusiness|OnlineStore|OnlineBusiness|Brand|\w*(?:Store|Shop|Restaurant|Business|Establishment|Bakery|Brewery|Winery|BarOrPub|Hotel|Gym|Salon))$/;

const categoryOfType: [RegExp, BrandCategory][] = [
  [/^CafeOrCoffeeShop$/, 'coffee'],
  [
    /^(?:Restaurant|FastFoodRestaurant|FoodEstablishment|Bakery|BarOrPub|Brewery|Winery|IceCreamShop)$/,
    'restaurant',
  ],
  [/^GroceryStore$/, 'grocery'],
  [/^(?:ClothingStore|ShoeStore|JewelryStore)$/, 'fashion'],
  [/^(?:ElectronicsStore|ComputerStore)$/, 'electronics'],
  [/^(?:HomeGoodsStore|FurnitureStore|HardwareStore|GardenStore)$/, 'home'],
  [/^Pharmacy$/, 'pharmacy'],
  [/^(?:Hotel|LodgingBusiness|Motel|Hostel)$/, 'hotel'],
  [/^(?:ExerciseGym|HealthClub|SportsActivityLocation)$/, 'fitness'],
  [/^(?:Store|OnlineStore)$/, 'retail'],
];

const parkedPage =
  /\b(?:(?:this|the) domain(?: name)?\b.{0,40}\b(?:is|may be) for sale|buy this domain|domain (?:is )?parked|parked (?:free|domain|by)|domain parking)\b/i;

/** What directory and review sites say to the businesses they list and to their readers. */
const directoryPage =
  /\b(?:claim (?:this|your) (?:business|listing)|is this your business|add (?:a|your) business|write a review|business directory|find (?:local )?businesses near)\b/i;

/** JSON-LD properties whose values are other businesses than the page's own (listed, reviewed, mentioned). */
const listingKeys = new Set(['itemListElement', 'itemReviewed', 'item', 'mentions']);

/** Country names schema.org `addressCountry` is written with, besides alpha-2 codes. */
const countryNames: Record<string, string> = {
  'UNITED STATES': 'US',
  'UNITED STATES OF AMERICA': 'US',
  USA: 'US',
  'UNITED KINGDOM': 'GB',
  UK: 'GB',
  'GREAT BRITAIN': 'GB',
  ENGLAND: 'GB',
  SCOTLAND: 'GB',
  WALES: 'GB',
  'NORTHERN IRELAND': 'GB',
  IRELAND: 'IE',
  CANADA: 'CA',
  AUSTRALIA: 'AU',
  'NEW ZEALAND': 'NZ',
  GERMANY: 'DE',
  DEUTSCHLAND: 'DE',
  FRANCE: 'FR',
  SPAIN: 'ES',
  ESPANA: 'ES',
  ITALY: 'IT',
  ITALIA: 'IT',
  NETHERLANDS: 'NL',
  NEDERLAND: 'NL',
  BELGIUM: 'BE',
  AUSTRIA: 'AT',
  SWITZERLAND: 'CH',
  SWEDEN: 'SE',
  DENMARK: 'DK',
  NORWAY: 'NO',
  FINLAND: 'FI',
  POLAND: 'PL',
  PORTUGAL: 'PT',
};

function countryOf(value: unknown): string | null {
  const text = typeof value === 'string' ? value : (value as { name?: unknown } | null)?.name;
  if (typeof text !== 'string') return null;
  const key = canonicalTokens(text).join(' ');
  if (/^[A-Z]{2}$/.test(key)) return key === 'UK' ? 'GB' : key;
  return countryNames[key] ?? null;
}

/** A name that is only a host name ("halcyonroasters.com"): what parked and placeholder pages show. */
const hostLike = /^[a-z0-9-]+(?:\.[a-z0-9-]+)+\/?$/i;

/** Separators between the parts of a `<title>` ("Home | Halcyon Roasters", "Halcyon - Coffee"). */
const titleSeparators = /\s+[|\-–—:·•»~]\s+|\s*[|·•»]\s*/;

export function readSiteIdentity(html: string): SiteIdentity {
  const $ = cheerio.load(html);
  const names: SiteIdentity['names'] = [];
  const localities: string[] = [];
  const countries: string[] = [];
  const listed: string[] = [];
  const types: string[] = [];
  const regions: string[] = [];
  const hosts: SiteIdentity['names'] = [];
  const add = (signal: NameSignal, text: unknown) => {
    if (typeof text !== 'string') return;
    const clean = text.replace(/\s+/g, ' ').trim();
    if (clean && clean.length <= 200) (hostLike.test(clean) ? hosts : names).push({ signal, text: clean });
  };

  const title = $('head > title').first().text() || $('title').first().text();
  add('title', title);
  for (const part of title.split(titleSeparators)) if (part.trim() !== title.trim()) add('title', part);
  add('site_name', $('meta[property="og:site_name"]').attr('content'));

  for (const { node, marked: isListed } of jsonLdEntriesOf($, { arrayLimit: 50 }, (key) =>
    listingKeys.has(key),
  )) {
    const nodeTypes = typesOf(node);
    if (!nodeTypes.some((t) => organizationTypes.test(t))) {
      if (!isListed && nodeTypes.includes('WebSite')) add('site_name', node.name);
      continue;
    }
    if (isListed) {
      if (typeof node.name === 'string') listed.push(node.name);
      continue;
    }
    types.push(...nodeTypes);
    for (const key of ['name', 'alternateName', 'legalName']) {
      const value = node[key];
      for (const v of Array.isArray(value) ? value : [value]) add('organization', v);
    }
    for (const address of Array.isArray(node.address) ? node.address : [node.address]) {
      const locality = (address as Record<string, unknown> | undefined)?.addressLocality;
      if (typeof locality === 'string' && locality.trim()) localities.push(locality.trim());
      const country = countryOf((address as Record<string, unknown> | undefined)?.addressCountry);
      if (country && !countries.includes(country)) countries.push(country);
      const region = (address as Record<string, unknown> | undefined)?.addressRegion;
      if (typeof region === 'string' && /^[A-Za-z]{2}$/.test(region.trim()))
        regions.push(region.trim().toUpperCase());
    }
  }
  for (const company of footerCompanies($)) add('organization', company);
  // A page that shows nothing but a host name is a placeholder; a site that calls itself `Super.com`
  // says more about itself (its JSON-LD, a tagline), and the name counts (its TLD dropped when compared).
  if (names.length > 0 || hosts.some((n) => n.signal === 'organization')) names.push(...hosts);

  const aboutPath = aboutPathOf($);
  const description = $('meta[name="description" i]').attr('content') ?? '';
  const visible = visibleText($);
  const text = ` ${canonicalTokens([title, description, visible, ...localities].join(' ')).join(' ')} `;
  const category = categoryOfType.find(([pattern]) => types.some((t) => pattern.test(t)))?.[1] ?? null;
  // A business listing its own branches (`Halcyon Roasters Downtown`) is not a directory.
  const own = names.map((n) => canonicalTokens(n.text).join(' '));
  const others = listed.filter((name) => {
    const key = canonicalTokens(name).join(' ');
    return !own.some((o) => o !== '' && (key === o || key.startsWith(`${o} `)));
  });
  return {
    names,
    localities,
    countries,
    regions,
    directory: others.length > 0 || directoryPage.test(visible.slice(0, 20_000)),
    category: category ?? (types.length > 0 ? 'other' : null),
    text,
    parked: parkedPage.test(`${title} ${visible.slice(0, 5000)}`),
    aboutPath,
  };
}

/**
 * The company a page's footer says runs the site: the copyright holder (`© 2026 Delta Defense, LLC.
 * All rights reserved.`) and the one it is operated or owned by. Only the footer: a body may quote
 * anyone's copyright.
 */
const copyright =
  /(?:©|\(c\)|copyright)\s*(?:\d{4}(?:\s*[-–]\s*\d{4})?\s*)?([A-Z0-9][^©|;\n]{1,80}?)(?=\.\s|\.?$|\s*[|;]|\s+all rights)/gi;
const operatedBy =
  /\b(?:operated|owned|run|provided) by\s+([A-Z0-9][^.|;,\n]{1,80}?(?:,? (?:Inc|LLC|Ltd|Limited|GmbH|B\.V|S\.A|Pty Ltd)\.?)?)(?=[.|;,]|\s*$)/gi;

function footerCompanies($: cheerio.CheerioAPI): string[] {
  const text = $('footer, [role=contentinfo], [id*=footer i], [class*=footer i]')
    .map((_, el) => $(el).text())
    .get()
    .join(' \n ')
    .replace(/[ \t]+/g, ' ')
    .slice(0, 4000);
  const names = [...text.matchAll(copyright), ...text.matchAll(operatedBy)].map((m) => (m[1] ?? '').trim());
  return [...new Set(names)].filter((n) => n.length >= 2 && !/^\d+$/.test(n));
}

/**
 * How the site's name agrees with the line's: the same words; one side without a trade word; the
 * line's words the site's name plus a location, number or tail; a name the processor cut short; the
 * site's longer name for its own domain's name; the initials of its name (`AFW` on afw.com).
 */
export type NameAgreement = 'exact' | 'trade_word' | 'leftover' | 'truncated' | 'longer_name' | 'initials';

/** How much each kind of agreement takes from a site's confidence. */
const agreementCost: Record<NameAgreement, number> = {
  exact: 0,
  trade_word: 0,
  leftover: 0.02,
  truncated: 0.04,
  longer_name: 0.04,
  initials: 0.06,
};

/**
 * Words a line prints after a business's name that say where or how it was paid, not who: web and
 * country tails, billing words, places' parts. A street fragment (`LAUREL ST`) is a location too.
 */
const leftoverWords = new Set([
  ...lineTails,
  ...'USA AUS NZ CAN IRL SWEDEN CANADA IRELAND AUSTRALIA NEWZEALAND GERMANY FRANCE SPAIN ITALY NETHERLANDS'.split(
    ' ',
  ),
  ...'MEMBERSHIP MEMBERSHI SUBSCRIPTION SUB RENEWAL MONTHLY ANNUAL BILLING PAYMENT PMT'.split(' '),
  ...'DOWNTOWN AIRPORT MALL CENTER CENTRE STATION NORTH SOUTH EAST WEST'.split(' '),
]);
const streetWords = new Set(
  'ST STREET AVE AVENUE AV RD ROAD BLVD BOULEVARD DR DRIVE LN LANE WAY PL SQ HWY HIGHWAY PKWY'.split(' '),
);
/** Company words a processor's field cuts short after a name (`YANDYENTERP`, `1STPHORMINT`). */
const entityWords = 'ENTERPRISES INTERNATIONAL INCORPORATED HOLDINGS CORPORATION COMPANY LIMITED GROUP'.split(
  ' ',
);

/** What the line says beyond the name, and where to look for it: the line's city, the site's page. */
interface Leftover {
  cityTokens: readonly string[];
  /** The page's canonical text, space-padded (`SiteIdentity.text`): a place it names is a location. */
  pageText?: string;
  /** The page's other names for itself, squashed (its company: `DELTADEFENSELLC`). */
  ownNames?: readonly string[];
}

/** First words of places' names: `FORT CO` is Fort Collins cut by the field. */
const placeStarts = new Set('FORT FT SAN SANTA ST SAINT LOS LAS PORT MT MOUNT'.split(' '));

/**
 * Are these words, left on the line's side after the name, a location, a number, a known tail, or the
 * company the site itself says it is (`USCCA/DELTA DEFENSE LL` on a site whose footer names Delta
 * Defense, LLC)?
 */
function tolerated(rest: readonly string[], where: Leftover): boolean {
  if (rest.length === 0) return false;
  if (streetWords.has(rest.at(-1) as string) && rest.length <= 4) return true;
  const words = rest.filter(
    (t) => !/^\d+$/.test(t) && !leftoverWords.has(t) && !where.cityTokens.includes(t),
  );
  if (words.length === 0 || words.join('') === where.cityTokens.join('')) return true;
  if (placeStarts.has(words[0] as string) && words.length <= 2) return true;
  const squashed = words.join('');
  if (squashed.length >= 6 && where.ownNames?.some((n) => n.startsWith(squashed))) return true;
  // A place the site itself names (`NZ POST AUCKLAND` on a page that says Auckland); a trade word
  // on the page is no place (`HALCYON ROASTERS BAKERY` is another business).
  if (words.some((w) => tradeWords.has(w) || w.length < 3)) return false;
  return where.pageText?.includes(` ${words.join(' ')} `) ?? false;
}

/**
 * A glued tail: what follows the name inside one word is a country, a tail, a number, the city, or a
 * company word cut short (`ENTERP`).
 */
function gluedTail(rest: string, cityTokens: readonly string[]): boolean {
  return (
    rest.length > 0 &&
    (/^\d+$/.test(rest) ||
      leftoverWords.has(rest) ||
      (cityTokens.length > 0 && rest === cityTokens.join('')) ||
      (rest.length >= 3 && entityWords.some((w) => w.startsWith(rest))))
  );
}

/** Singular and plural spell one business (`GENESIS HEALTH CLUB` / Genesis Health Clubs). */
const sameSquashed = (a: string, b: string) => a === b || a === `${b}S` || b === `${a}S`;

const initialsOf = (tokens: readonly string[]) =>
  tokens
    .filter((t) => t !== 'OF' && t !== 'THE')
    .map((t) => t[0])
    .join('');

/**
 * Squashed length from which a name may be a cut-off one: the name field holds 22 (Mastercard) to
 * 25 (Visa) characters, less a facilitator prefix (`SQ *`, `TST* `) and spaces.
 */
const TRUNCATED_AT_LEAST = 16;

/**
 * How `siteName` agrees with the merchant's name, or null. Exact: the same words (case, accents,
 * punctuation, `THE`, `AND`, a legal-entity tail, a plural `S` aside), or the name followed by the
 * line's city. Trade word: one side adds a trade word the other leaves out (`BLUE BOTTLE` / `Blue
 * Bottle Coffee`), never both (`JOES PIZZA` is not `Joe's Tacos`). Leftover: the line's words are the
 * site's name and then a location, a number or a known tail, as words or glued (`DASHLANEUSA`).
 * Truncated: the line's name is the start of the site's and the name filled its field (`cut`: DE43
 * holds 22-25 characters less the processor's prefix; PayPal keeps 11), or is long enough that it may
 * have. Longer name, initials: the site's name starts with the line's words, or its initials are the
 * line's name, and the site's own domain is that name (`domainLabel`).
 */
export function nameAgreement(
  nameTokens: readonly string[],
  cityTokens: readonly string[],
  siteName: string,
  context: {
    cut?: boolean;
    domainLabel?: string | null;
    pageText?: string;
    ownNames?: readonly string[];
  } = {},
): NameAgreement | null {
  const where: Leftover = {
    cityTokens,
    ...(context.pageText ? { pageText: context.pageText } : {}),
    ...(context.ownNames ? { ownNames: context.ownNames } : {}),
  };
  const merchant = coreTokens(nameTokens);
  const site = coreTokens(canonicalTokens(siteName));
  if (merchant.length === 0 || site.length === 0) return null;
  const m = merchant.join('');
  const s = site.join('');
  if (sameSquashed(s, m)) return 'exact';
  if (cityTokens.length > 0 && s === m + cityTokens.join('')) return 'exact';
  const withoutTrade = (tokens: string[]) =>
    tokens.length > 1 && tradeWords.has(tokens.at(-1) as string) ? tokens.slice(0, -1).join('') : null;
  const mCore = withoutTrade(merchant);
  const sCore = withoutTrade(site);
  if (
    (mCore !== null && mCore.length >= 5 && mCore === s) ||
    (sCore !== null && sCore.length >= 5 && sCore === m)
  ) {
    return 'trade_word';
  }
  if (s.length >= 4 && leftover(merchant, s, where)) return 'leftover';
  const cutAt = context.cut ? 5 : TRUNCATED_AT_LEAST;
  if (m.length >= cutAt && s.length > m.length && s.startsWith(m)) return 'truncated';
  const label = context.domainLabel?.toUpperCase().replace(/-/g, '') ?? null;
  if (label !== null && label.length >= 3) {
    const named = label === m || leftover(merchant, label, where);
    if (named && site.length > 1 && s.startsWith(label) && m.startsWith(site[0] as string))
      return 'longer_name';
    if (named && site.length >= 3 && initialsOf(site) === label) return 'initials';
  }
  return null;
}

/** The line's words are `name` (squashed) followed by tolerated words, or by a glued tail. */
function leftover(merchant: readonly string[], name: string, where: Leftover): boolean {
  let joined = '';
  for (let i = 0; i < merchant.length; i++) {
    const token = merchant[i] as string;
    if (name.startsWith(joined + token)) {
      joined += token;
      if (sameSquashed(joined, name) && i < merchant.length - 1)
        return tolerated(merchant.slice(i + 1), where);
      continue;
    }
    // The name ends inside this word: the rest of it must be a tail glued on, and nothing may follow.
    return (
      name.length > joined.length &&
      token.startsWith(name.slice(joined.length)) &&
      (i === merchant.length - 1 || tolerated(merchant.slice(i + 1), where)) &&
      gluedTail(token.slice(name.length - joined.length), where.cityTokens)
    );
  }
  return false;
}

export interface SiteVerdict {
  accepted: boolean;
  /** Why it was not accepted. */
  reason:
    | 'parked'
    | 'directory'
    | 'name_absent'
    | 'city_mismatch'
    | 'region_mismatch'
    | 'country_mismatch'
    | null;
  /** The kinds of name claims that agree with the merchant. */
  signals: NameSignal[];
  /** The page's own name for the business (the best agreeing claim), when accepted. */
  name: string | null;
  city: 'agrees' | 'absent' | 'unknown';
  /**
   * The line's state or province against the regions of the site's addresses: agrees, unknown when
   * either says none. Another region, with no word of the line's city on the page, is a rejection.
   */
  region: 'agrees' | 'unknown';
  /**
   * The line's country against the site's (its JSON-LD address, else its country domain): agrees,
   * unknown when either says none. Another country is a rejection (`country_mismatch`).
   */
  country: 'agrees' | 'unknown';
  /** At most 0.84 (`medium`): a guess, however good, is never `high`. */
  confidence: number;
}

/** Guessed results stay below `high` (0.85): issue 10, "never above medium". */
export const MAX_GUESSED_CONFIDENCE = 0.84;
/**
 * A site on a country's own domain (`.com.au`, `.co.uk`) for a line that names no country: a
 * same-name business may be anywhere, so it is a lead (`low`), never a `medium` answer. A `.com`
 * with an address is not held to it: a business online sells beyond the country of its address.
 */
const COUNTRY_UNKNOWN_AT_MOST = 0.66;

type MerchantSide = Pick<MerchantLine, 'nameTokens' | 'cityTokens'> &
  Partial<Pick<MerchantLine, 'country' | 'region' | 'cut'>>;

export function judgeSite(
  merchant: MerchantSide,
  site: SiteIdentity,
  options: { websiteHint: boolean; domainCountry?: string | null; domainLabel?: string | null },
): SiteVerdict {
  const rejected = (reason: SiteVerdict['reason'], city: SiteVerdict['city'] = 'unknown'): SiteVerdict => ({
    accepted: false,
    reason,
    signals: [],
    name: null,
    city,
    region: 'unknown',
    country: 'unknown',
    confidence: 0,
  });
  if (site.parked) return rejected('parked');
  // A page that lists or reviews businesses names them without being any one's site.
  if (site.directory) return rejected('directory');

  const context = {
    cut: merchant.cut ?? false,
    domainLabel: options.domainLabel ?? null,
    pageText: site.text,
    ownNames: site.names.map((n) => canonicalTokens(n.text).join('')),
  };
  const signalRank: Record<NameSignal, number> = { site_name: 0, organization: 1, title: 2 };
  const agreeing = site.names
    .map((n) => ({
      ...n,
      agreement: nameAgreement(merchant.nameTokens, merchant.cityTokens, n.text, context),
    }))
    .filter((n): n is typeof n & { agreement: NameAgreement } => n.agreement !== null)
    .sort(
      (a, b) =>
        agreementCost[a.agreement] - agreementCost[b.agreement] ||
        signalRank[a.signal] - signalRank[b.signal],
    );
  if (agreeing.length === 0) return rejected('name_absent');

  const city = cityOf(merchant, site);
  if (city === 'mismatch') return rejected('city_mismatch', 'absent');

  // A same-name business in another state or country is another business, with a city or without.
  const lineRegion = merchant.region ?? null;
  let region: SiteVerdict['region'] = 'unknown';
  if (lineRegion !== null && site.regions.length > 0) {
    if (!site.regions.includes(lineRegion) && city !== 'agrees') return rejected('region_mismatch', city);
    region = 'agrees';
  }
  let country: SiteVerdict['country'] = 'unknown';
  const lineCountry = merchant.country ?? null;
  const siteCountries =
    site.countries.length > 0 ? site.countries : options.domainCountry ? [options.domainCountry] : [];
  if (lineCountry !== null && siteCountries.length > 0) {
    if (!siteCountries.includes(lineCountry)) return rejected('country_mismatch', city);
    country = 'agrees';
  }

  const signals = [...new Set(agreeing.map((n) => n.signal))];
  let confidence = signals.length >= 2 ? 0.76 : 0.7;
  confidence -= agreementCost[(agreeing[0] as { agreement: NameAgreement }).agreement];
  if (city === 'agrees') confidence += 0.04;
  // A chain's home page names no store's city: where its own address puts it in the line's
  // country, the city's absence counts less (a local namesake's address would name its own city).
  if (city === 'absent') confidence -= country === 'agrees' && site.countries.length > 0 ? 0.04 : 0.08;
  if (options.websiteHint) confidence += 0.04;
  if (lineCountry === null && options.domainCountry && !options.websiteHint)
    confidence = Math.min(confidence, COUNTRY_UNKNOWN_AT_MOST);
  return {
    accepted: true,
    reason: null,
    signals,
    name: (agreeing[0] as { text: string }).text,
    city,
    region,
    country,
    confidence: Math.round(Math.min(MAX_GUESSED_CONFIDENCE, confidence) * 100) / 100,
  };
}

/** The line's city on the page (or its addresses), absent from it, or in none of its addresses. */
function cityOf(merchant: MerchantSide, site: SiteIdentity): SiteVerdict['city'] | 'mismatch' {
  if (merchant.cityTokens.length === 0) return 'unknown';
  const onPage = site.text.includes(` ${merchant.cityTokens.join(' ')} `);
  const localities = site.localities.map((l) => canonicalTokens(l).join(' '));
  if (onPage || localities.includes(merchant.cityTokens.join(' '))) return 'agrees';
  return localities.length > 0 ? 'mismatch' : 'absent';
}
