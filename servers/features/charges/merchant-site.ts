/**
 * Does this home page belong to the merchant on the statement line? Pure: the page's own claims
 * about its name - `<title>`, `og:site_name` (ogp.me), schema.org JSON-LD `Organization` /
 * `LocalBusiness` names and `WebSite` name - compared with the merchant's name after the same
 * normalisation as the matcher's, and the city, when the line has one, looked for on the page.
 * Exact agreement only (a trade word or legal-entity tail may be absent on one side; a name the
 * descriptor cut short may be a prefix): a near spelling is a different business here.
 */
import * as cheerio from 'cheerio';
import { jsonLdEntriesOf, typesOf, visibleText } from '../../page-reading.ts';
import type { BrandCategory } from './brand-registry.ts';
import { coreTokens, type MerchantLine, tradeWords } from './candidates.ts';
import { canonicalTokens } from './normalize.ts';

export type NameSignal = 'title' | 'site_name' | 'organization';

export interface SiteIdentity {
  /** Names the page gives itself, with where each was read. */
  names: { signal: NameSignal; text: string }[];
  /** `address.addressLocality` of its organisations, as written. */
  localities: string[];
  /** `address.addressCountry` of its organisations, as ISO 3166-1 alpha-2 where it could be read. */
  countries: string[];
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
  const add = (signal: NameSignal, text: unknown) => {
    if (typeof text !== 'string') return;
    const clean = text.replace(/\s+/g, ' ').trim();
    if (clean && clean.length <= 200 && !hostLike.test(clean)) names.push({ signal, text: clean });
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
    }
  }

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
    directory: others.length > 0 || directoryPage.test(visible.slice(0, 20_000)),
    category: category ?? (types.length > 0 ? 'other' : null),
    text,
    parked: parkedPage.test(`${title} ${visible.slice(0, 5000)}`),
  };
}

export type NameAgreement = 'exact' | 'trade_word' | 'truncated';

/**
 * Squashed length from which a name may be a cut-off one: the name field holds 22 (Mastercard) to
 * 25 (Visa) characters, less a facilitator prefix (`SQ *`, `TST* `) and spaces.
 */
const TRUNCATED_AT_LEAST = 16;

/**
 * How `siteName` agrees with the merchant's name, or null. Exact: the same words (case, accents,
 * punctuation, `THE`, `AND`, a legal-entity tail aside), or the name followed by the line's city.
 * Trade word: one side adds a trade word the other leaves out (`BLUE BOTTLE` / `Blue Bottle
 * Coffee`), never both (`JOES PIZZA` is not `Joe's Tacos`). Truncated: a long name the descriptor
 * cut short (DE43 allows 22-25 characters) is the start of the site's name.
 */
export function nameAgreement(
  nameTokens: readonly string[],
  cityTokens: readonly string[],
  siteName: string,
): NameAgreement | null {
  const merchant = coreTokens(nameTokens);
  const site = coreTokens(canonicalTokens(siteName));
  if (merchant.length === 0 || site.length === 0) return null;
  const m = merchant.join('');
  const s = site.join('');
  if (s === m) return 'exact';
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
  if (m.length >= TRUNCATED_AT_LEAST && s.length > m.length && s.startsWith(m)) return 'truncated';
  return null;
}

export interface SiteVerdict {
  accepted: boolean;
  /** Why it was not accepted. */
  reason: 'parked' | 'directory' | 'name_absent' | 'city_mismatch' | 'country_mismatch' | null;
  /** The kinds of name claims that agree with the merchant. */
  signals: NameSignal[];
  /** The page's own name for the business (the best agreeing claim), when accepted. */
  name: string | null;
  city: 'agrees' | 'absent' | 'unknown';
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

export function judgeSite(
  merchant: Pick<MerchantLine, 'nameTokens' | 'cityTokens'> & { country?: string | null },
  site: SiteIdentity,
  options: { websiteHint: boolean; domainCountry?: string | null },
): SiteVerdict {
  const rejected = (reason: SiteVerdict['reason'], city: SiteVerdict['city'] = 'unknown'): SiteVerdict => ({
    accepted: false,
    reason,
    signals: [],
    name: null,
    city,
    country: 'unknown',
    confidence: 0,
  });
  if (site.parked) return rejected('parked');
  // A page that lists or reviews businesses names them without being any one's site.
  if (site.directory) return rejected('directory');

  const signalRank: Record<NameSignal, number> = { site_name: 0, organization: 1, title: 2 };
  const agreeing = site.names
    .map((n) => ({ ...n, agreement: nameAgreement(merchant.nameTokens, merchant.cityTokens, n.text) }))
    .filter((n) => n.agreement !== null)
    .sort((a, b) => signalRank[a.signal] - signalRank[b.signal]);
  if (agreeing.length === 0) return rejected('name_absent');

  let city: SiteVerdict['city'] = 'unknown';
  if (merchant.cityTokens.length > 0) {
    const onPage = site.text.includes(` ${merchant.cityTokens.join(' ')} `);
    const localities = site.localities.map((l) => canonicalTokens(l).join(' '));
    if (onPage || localities.includes(merchant.cityTokens.join(' '))) city = 'agrees';
    else if (localities.length > 0) return rejected('city_mismatch', 'absent');
    else city = 'absent';
  }

  // A same-name business in another country is another business, whether or not the line has a city.
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
  if (agreeing.every((n) => n.agreement === 'truncated')) confidence -= 0.04;
  if (city === 'agrees') confidence += 0.04;
  if (city === 'absent') confidence -= 0.08;
  if (options.websiteHint) confidence += 0.04;
  return {
    accepted: true,
    reason: null,
    signals,
    name: (agreeing[0] as { text: string }).text,
    city,
    country,
    confidence: Math.round(Math.min(MAX_GUESSED_CONFIDENCE, confidence) * 100) / 100,
  };
}
