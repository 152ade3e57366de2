/**
 * The merchant of a statement line, as live resolution needs it, and the domains worth checking
 * for it: the domain printed on the line, a search provider's results, then names made from the
 * merchant's name (`BLUE BOTTLE COFFEE` -> bluebottlecoffee.com, blue-bottle-coffee.com,
 * bluebottle.com, ...).
 */
import { getDomain, parse } from 'tldts';
import type { NormalizedDescriptor } from './normalize.ts';

export interface MerchantLine {
  /** Canonical tokens of the merchant's name (`["HALCYON", "ROASTERS"]`). */
  nameTokens: string[];
  /** Canonical tokens of the city printed after the name, empty when none was read. */
  cityTokens: string[];
  /** ISO 3166-1 alpha-2, when the line ends with a country or a US state / Canadian province. */
  country: string | null;
  /** The US state or Canadian province the line ends with (`CO`), else null. */
  region: string | null;
  /**
   * The name fills the field its processor leaves it, so it may be cut short (`PAYPAL *TICKETMASTE`):
   * DE43's name field holds 22 characters (Mastercard; Visa 25) less the processor's prefix, and PayPal
   * keeps 11 of the merchant's.
   */
  cut: boolean;
  /** A registrable domain printed on the line (`HALCYONROASTERS.COM`), if any. */
  websiteHint: string | null;
}

const usStates = new Set(
  (
    'AL AK AZ AR CA CO CT DE FL GA HI ID IL IN IA KS KY LA ME MD MA MI MN MS MO MT NE NV NH NJ NM NY NC ND OH ' +
    'OK OR PA RI SC SD TN TX UT VT VA WA WV WI WY DC'
  ).split(' '),
);
const countries: Record<string, string> = {
  US: 'US',
  USA: 'US',
  GB: 'GB',
  GBR: 'GB',
  UK: 'GB',
  IE: 'IE',
  IRL: 'IE',
  DE: 'DE',
  DEU: 'DE',
  FR: 'FR',
  FRA: 'FR',
  NL: 'NL',
  NLD: 'NL',
  ES: 'ES',
  ESP: 'ES',
  IT: 'IT',
  ITA: 'IT',
  AU: 'AU',
  AUS: 'AU',
  CAN: 'CA',
};

/**
 * The merchant as `normalize.ts` reads the line: its name tokens, the city tokens after them, the
 * country from the last word, a domain printed on it. Once the lookup carries its own `merchant`
 * (issue 10 item 3), that is the better source for the same fields.
 */
export function merchantOfLine(charge: string, descriptor: NormalizedDescriptor): MerchantLine {
  // The normalizer reads city and country from the line (the answer's `merchant`); the last word
  // of the line is the fallback for forms it does not split.
  const last = charge.toUpperCase().trim().split(/\s+/).at(-1) ?? '';
  const country = descriptor.country ?? (usStates.has(last) ? 'US' : (countries[last] ?? null));
  return {
    nameTokens: descriptor.merchantTokens,
    cityTokens: descriptor.city
      ? descriptor.city.toUpperCase().split(/\s+/).filter(Boolean)
      : descriptor.tokens.slice(descriptor.merchantTokens.length),
    country,
    region: descriptor.region,
    cut: mayBeCut(descriptor),
    websiteHint: descriptor.domains[0] ?? null,
  };
}

/** Characters of DE43's name field (Mastercard's 22; Visa's 25 leaves more). */
const NAME_FIELD = 22;
/** What processors keep of a merchant's name where they keep less than the field allows. */
const processorCuts: Record<string, number> = { paypal: 11 };

/** Does the merchant's name, as printed after its processor's prefix, fill what the field leaves it? */
function mayBeCut(descriptor: NormalizedDescriptor): boolean {
  if (!descriptor.processor) return false;
  // The prefix as printed (`SQ *`, `PAYPAL *`): its words, a space and the star.
  const prefix = descriptor.prefixTokens.join(' ').length + 2;
  const room = processorCuts[descriptor.processor.id] ?? NAME_FIELD - prefix;
  // The first words fill it: later ones are the city field.
  let printed = 0;
  for (const token of descriptor.merchantTokens) {
    printed += (printed > 0 ? 1 : 0) + token.length;
    if (printed >= room - 1) return true;
  }
  return false;
}

/**
 * First words of places' names (`SANTA FE`, `FORT COLLINS`): two words starting with one, said
 * alone, are a place, not a business (`LA COLOMBE`, `EL FAROLITO` are businesses: not listed).
 */
const placeWords = new Set('SAN SANTA LOS LAS SAINT ST FORT FT'.split(' '));

/**
 * Words that say what kind of business or charge it is, not which one (`CITY PARKING`, `GAS
 * STATION`): a line of these alone names no brand, and its "site" would be anyone's.
 */
const genericWords = new Set(
  (
    'PARKING GARAGE LOT AIRPORT CITY DOWNTOWN MAIN STREET GAS STATION FUEL CAR WASH AUTO REPAIR BARBER ' +
    'GENERAL GROCERY GROCERIES PHARMACY DRUG LIQUOR WINE BEER FOOD FOODS SUPERMARKET ' +
    'CONVENIENCE PAYMENT PURCHASE POS DEBIT CREDIT CARD TRANSFER DEPOSIT WITHDRAWAL FEE FEES ATM CASH ' +
    'TAXI CAB TOLL TRANSIT BUS TRAIN TICKET TICKETS LAUNDRY CLEANERS DENTAL MEDICAL DOCTOR VET NAILS HAIR'
  ).split(' '),
);

/**
 * Worth resolving: a name with some letters to it that may name a business - not a bare code or
 * number, not the line's city or a place's name alone, not only words for a kind of business
 * (issue 32 item 9: a line that names no brand gets no guess either).
 */
export function isResolvable(merchant: MerchantLine): boolean {
  const squashed = merchant.nameTokens.join('');
  if (squashed.length < 4 || (squashed.match(/[A-Z]/g)?.length ?? 0) < 3) return false;
  const core = coreTokens(merchant.nameTokens).filter((t) => !/^\d+$/.test(t));
  if (core.length === 0) return false;
  // A website printed on the line says the name is a business's, whatever else it reads like.
  if (merchant.websiteHint !== null) return true;
  if (merchant.cityTokens.length > 0 && core.join(' ') === merchant.cityTokens.join(' ')) return false;
  if (core.length === 2 && placeWords.has(core[0] as string)) return false;
  return !core.every((t) => genericWords.has(t) || tradeWords.has(t));
}

/** Legal-entity words that say nothing about which business it is. */
export const legalSuffixes = new Set(
  'INC INCORPORATED LLC LLP LTD LIMITED CO CORP CORPORATION COMPANY GMBH AG SA SAS SARL SRL SPA BV NV PLC PC PTY AB OY KG'.split(
    ' ',
  ),
);

/** Trade words a business may leave out of its own name or domain (`BLUE BOTTLE COFFEE` = bluebottle.com). */
export const tradeWords = new Set(
  (
    'COFFEE CAFE RESTAURANT KITCHEN BAR GRILL PIZZA PIZZERIA BAKERY BAKEHOUSE DELI MARKET SHOP STORE BOUTIQUE ' +
    'SALON SPA STUDIO TAVERN PUB BISTRO DINER TAQUERIA BREWING BREWERY WINERY HOTEL INN GYM FITNESS CLINIC ' +
    'ONLINE GROUP SERVICES SERVICE'
  ).split(' '),
);

/** The words that name the business: no leading THE, no `AND`, no legal-entity tail. */
export function coreTokens(tokens: readonly string[]): string[] {
  const out = tokens.filter((t) => t !== 'AND');
  if (out[0] === 'THE' && out.length > 1) out.shift();
  while (out.length > 1 && legalSuffixes.has(out.at(-1) as string)) out.pop();
  return out;
}

/** Country code -> the top-level domain its businesses usually use besides `.com`. */
const countryTlds: Record<string, string[]> = {
  GB: ['co.uk'],
  IE: ['ie'],
  DE: ['de'],
  FR: ['fr'],
  NL: ['nl'],
  BE: ['be'],
  LU: ['lu'],
  ES: ['es'],
  PT: ['pt'],
  IT: ['it'],
  AT: ['at'],
  CH: ['ch'],
  SE: ['se'],
  DK: ['dk'],
  NO: ['no'],
  FI: ['fi'],
  PL: ['pl'],
  AU: ['com.au'],
  NZ: ['co.nz'],
  CA: ['ca'],
};

/**
 * Directories, review and map sites, social networks, marketplaces, processors and site builders:
 * their pages name many businesses, so they are evidence that a business exists, never its site.
 * Listed by registrable domain, and by label for those with a site per country (yelp.co.uk).
 */
const platforms = new Set(
  (
    'yelp.com facebook.com instagram.com twitter.com x.com linkedin.com tiktok.com youtube.com pinterest.com ' +
    'tripadvisor.com google.com goo.gl bing.com apple.com wikipedia.org yellowpages.com yell.com mapquest.com ' +
    'foursquare.com bbb.org trustpilot.com sitejabber.com reviews.io feefo.com glassdoor.com indeed.com ' +
    'nextdoor.com angi.com houzz.com thumbtack.com birdeye.com manta.com chamberofcommerce.com ' +
    'bizapedia.com opencorporates.com dnb.com zoominfo.com crunchbase.com restaurantji.com allmenus.com ' +
    'menupix.com zomato.com hotfrog.com cylex.com waze.com openstreetmap.org doordash.com ubereats.com ' +
    'grubhub.com opentable.com seamless.com squareup.com square.site toasttab.com ' +
    'paypal.com amazon.com wixsite.com business.site godaddysites.com myshopify.com linktr.ee'
  ).split(' '),
);
const platformLabels = new Set(
  'yelp tripadvisor trustpilot foursquare zomato cylex hotfrog google facebook opentable yellowpages'.split(
    ' ',
  ),
);

/** A directory, review site or platform, whose pages may name a merchant without being its site. */
export const isPlatform = (domain: string): boolean =>
  platforms.has(domain) || platformLabels.has(domain.split('.')[0] ?? '');

export type CandidateSource = 'website_hint' | 'search' | 'name';

export interface Candidate {
  domain: string;
  source: CandidateSource;
}

const label = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** Tails processors and issuers put after a name: a web tail or a country. */
export const lineTails = new Set('COM NET ORG WEB WWW ONLINE USA US UK GB INTL INT'.split(' '));

/** Domain labels made from the merchant's name, most likely first. */
export function nameLabels(nameTokens: readonly string[]): string[] {
  const named = coreTokens(nameTokens);
  // A store number, or a web or country tail the processor added (`WIDGETLY COM`, `WIDGETLY USA`),
  // is not in the business's domain.
  while (named.length > 1 && (/^\d+$/.test(named.at(-1) as string) || lineTails.has(named.at(-1) as string)))
    named.pop();
  const words = named.map((t) => t.toLowerCase().replace(/&/g, ''));
  const forms: string[][] = [words];
  if (words.length > 1 && tradeWords.has((words.at(-1) as string).toUpperCase()))
    forms.push(words.slice(0, -1));
  const labels: string[] = [];
  for (const form of forms) {
    labels.push(form.join(''));
    if (form.length > 1) labels.push(form.join('-'));
  }
  return [...new Set(labels)].filter((l) => l.length >= 3 && label.test(l));
}

/**
 * Candidate registrable domains for a merchant, deduplicated, at most `max`: the line's own
 * domain, then the search results' (platforms and IP addresses left out), then names with
 * `.com` first and the country's TLD after.
 */
export function candidateDomains(
  merchant: MerchantLine,
  searchUrls: readonly string[],
  max: number,
): Candidate[] {
  const out: Candidate[] = [];
  const seen = new Set<string>();
  const add = (domain: string | null, source: CandidateSource) => {
    if (!domain || seen.has(domain) || isPlatform(domain) || out.length >= max) return;
    seen.add(domain);
    out.push({ domain, source });
  };
  add(merchant.websiteHint, 'website_hint');
  for (const url of searchUrls) {
    let host: string;
    try {
      host = new URL(url).hostname;
    } catch {
      continue;
    }
    const parsed = parse(host);
    if (parsed.isIp || !parsed.isIcann) continue;
    add(parsed.domain, 'search');
  }
  const labels = nameLabels(merchant.nameTokens);
  const tlds = ['com', ...(merchant.country ? (countryTlds[merchant.country] ?? []) : [])];
  for (const tld of tlds) {
    for (const l of labels) add(getDomain(`${l}.${tld}`), 'name');
  }
  return out;
}
