/**
 * The brand registry: the hand-curated `brands.json` (real brands seen on US and European card
 * statements, with descriptor forms and contacts; its header records the sources) and the generated
 * `brand-index.json` (tens of thousands of brands from name-suggestion-index and simple-icons, built by
 * `npm run build-brands`; its header records sources, versions and licences). Curated entries win where
 * a domain is in both. Loaded once at start.
 */
import { readFileSync } from 'node:fs';
import { isValidPhoneNumber } from 'libphonenumber-js/min';
import { getDomain, getPublicSuffix } from 'tldts';
import { z } from 'zod';

const httpsUrl = z.url({ protocol: /^https$/, error: 'must be an https URL' });

/** Public support contacts of a brand, as returned by the API. */
export const BrandContact = z.strictObject({
  support_url: httpsUrl.optional(),
  email: z.email().optional(),
  phone: z.string().optional().describe('E.164, e.g. +18882804331.'),
});
export type BrandContact = z.infer<typeof BrandContact>;

/** The same, as the registry file must hold it: phone numbers checked against numbering plans. */
const BrandContactData = BrandContact.extend({
  phone: z
    .string()
    .refine((v) => /^\+[1-9]\d{6,14}$/.test(v) && isValidPhoneNumber(v), 'must be an E.164 phone number')
    .optional(),
});

export const BrandReturns = z.strictObject({
  policy_url: httpsUrl.optional(),
  portal_url: httpsUrl.optional(),
  window_days: z.number().int().positive().max(3650).optional(),
});
export type BrandReturns = z.infer<typeof BrandReturns>;

export const BrandCategory = z.enum([
  'retail',
  'grocery',
  'pharmacy',
  'fashion',
  'electronics',
  'home',
  'marketplace',
  'streaming',
  'music',
  'news',
  'gaming',
  'fitness',
  'software',
  'cloud',
  'ai',
  'travel',
  'airline',
  'hotel',
  'car_rental',
  'rail',
  'rideshare',
  'food_delivery',
  'restaurant',
  'coffee',
  'telecom',
  'utilities',
  'education',
  'dating',
  'finance',
  'fuel',
  'bar',
  'entertainment',
  'automotive',
  'beauty',
  'health',
  'services',
  'other',
]);
export type BrandCategory = z.infer<typeof BrandCategory>;

export const Brand = z.strictObject({
  name: z.string().min(1),
  domain: z
    .string()
    .refine((d) => getDomain(d, { allowPrivateDomains: true }) === d, 'must be a registrable domain'),
  category: BrandCategory,
  regions: z.array(z.enum(['US', 'EU', 'UK'])).min(1),
  /** Statement descriptor forms the brand is known to use, upper case, without store numbers or cities. */
  descriptors: z.array(z.string().min(1)),
  aliases: z.array(z.string().min(1)).optional(),
  /**
   * Parent companies or billing entities whose name the brand's charges carry (`ACMECORP WIDGETLY`), each
   * with the public page that says so: the brand's own "how your charge appears" page, Wikidata's
   * owned-by (P127), a processor's documentation. Read as aliases of the brand; never guessed.
   */
  billed_as: z.array(z.strictObject({ name: z.string().min(1), source: httpsUrl })).optional(),
  /**
   * The brand's own sites for other countries (`brand.co.uk`, `brand.it`), each on a country's
   * top-level domain: a line from that country is answered with that site. Only from a source (the
   * brand's official websites on Wikidata, P856), never made up from the name.
   */
  alternate_domains: z
    .array(
      z
        .string()
        .refine(
          (d) => getDomain(d) === d && countryOfDomain(d) !== null,
          'must be a registrable country domain',
        ),
    )
    .optional(),
  contact: BrandContactData,
  returns: BrandReturns,
});
/**
 * A registry brand. Curated entries are exactly the file's schema; entries from the open-data index have
 * no descriptors, contacts or returns, may have no `regions`, and carry where they come from.
 */
export type Brand = z.infer<typeof Brand> & {
  source?: 'curated' | BrandIndexSource;
  /** ISO 3166-1 alpha-2 codes, or UN M49 regions (`001` world, `150` Europe), where the brand operates. */
  countries?: readonly string[];
  wikidata?: string;
};
export type BrandIndexSource = 'name-suggestion-index' | 'simple-icons';

export const BrandRegistryFile = z.strictObject({
  about: z.string(),
  updated: z.iso.date(),
  sources: z.array(z.string()).min(1),
  notes: z.string().optional(),
  brands: z.array(Brand),
});

export const defaultBrandFile = new URL('./brands.json', import.meta.url);
export const brandIndexFile = new URL('./brand-index.json', import.meta.url);

/** The curated file alone. */
export function loadCuratedBrands(file: URL | string = defaultBrandFile): Brand[] {
  const parsed = BrandRegistryFile.safeParse(JSON.parse(readFileSync(file, 'utf8')));
  if (!parsed.success) throw new Error(`brand registry ${String(file)}: ${z.prettifyError(parsed.error)}`);
  const seen = new Set<string>();
  for (const brand of parsed.data.brands) {
    if (seen.has(brand.domain)) throw new Error(`brand registry: duplicate domain ${brand.domain}`);
    seen.add(brand.domain);
  }
  return parsed.data.brands.map((brand) => ({ ...brand, source: 'curated' as const }));
}

type IndexRow = [string, string, BrandCategory, string, string[], string, number, string];
const BrandIndexFile = z.object({
  sources: z.array(z.object({ name: z.string(), version: z.string(), license: z.string() })).min(1),
  source_names: z.array(z.enum(['name-suggestion-index', 'simple-icons'])),
  rows: z.array(z.unknown()),
});

/**
 * The generated index. Its rows are checked by a test against a fresh build rather than by zod here:
 * validating 20,000 objects on every start would cost more than parsing them.
 */
export function loadBrandIndex(file: URL | string = brandIndexFile): Brand[] {
  const parsed = BrandIndexFile.parse(JSON.parse(readFileSync(file, 'utf8')));
  const sources = parsed.source_names;
  return (parsed.rows as IndexRow[]).map(
    ([name, domain, category, countries, aliases, wikidata, source, alternates]) => {
      const list = countries === '' ? [] : countries.split(' ');
      const regions = regionsOf(list);
      return {
        name,
        domain,
        category,
        regions,
        descriptors: [],
        ...(aliases.length > 0 ? { aliases } : {}),
        contact: {},
        returns: {},
        source: sources[source] as BrandIndexSource,
        countries: list,
        ...(wikidata ? { wikidata } : {}),
        ...(alternates ? { alternate_domains: alternates.split(' ') } : {}),
      };
    },
  );
}

const euCountries = new Set(
  'AT BE BG CY CZ DE DK EE ES FI FR GR HR HU IE IT LT LU LV MT NL PL PT RO SE SI SK IS NO CH LI'.split(' '),
);
function regionsOf(countries: readonly string[]): Brand['regions'] {
  const regions = new Set<'US' | 'EU' | 'UK'>();
  for (const c of countries) {
    if (c === 'US' || c === '001' || c === '021' || c === '019') regions.add('US');
    if (c === 'GB' || c === '001' || c === '150') regions.add('UK');
    if (euCountries.has(c) || c === '001' || c === '150') regions.add('EU');
  }
  return [...regions];
}

/**
 * The whole registry: curated brands first, then index brands whose domain the curated file does not
 * hold (the curated entry wins; it takes the index's Wikidata id and countries where it has none).
 */
export function loadBrands(
  curatedFile: URL | string = defaultBrandFile,
  indexFile: URL | string | null = brandIndexFile,
): Brand[] {
  const curated = loadCuratedBrands(curatedFile);
  if (indexFile === null) return curated;
  const byDomain = new Map(curated.map((brand) => [brand.domain, brand]));
  const merged = [...curated];
  for (const brand of loadBrandIndex(indexFile)) {
    const own = byDomain.get(brand.domain);
    if (own) {
      if (brand.wikidata && !own.wikidata) own.wikidata = brand.wikidata;
      if (!own.countries && brand.countries && brand.countries.length > 0) own.countries = brand.countries;
      if (!own.alternate_domains && brand.alternate_domains) own.alternate_domains = brand.alternate_domains;
      continue;
    }
    merged.push(brand);
  }
  // A country site the registry holds as a brand of its own (Amazon's UK storefront) answers as that
  // brand, with its own descriptors and contacts: it is no one else's alternate.
  const primaries = new Set(merged.map((b) => b.domain));
  for (const [i, brand] of merged.entries()) {
    if (!brand.alternate_domains) continue;
    const alternates = brand.alternate_domains.filter((d) => !primaries.has(d));
    if (alternates.length === brand.alternate_domains.length) continue;
    const { alternate_domains: _all, ...rest } = brand;
    merged[i] = alternates.length > 0 ? { ...rest, alternate_domains: alternates } : rest;
  }
  return merged;
}

/**
 * Top-level domains of a country that are mostly sold as generic names (`.io`, `.ai`, `.co`,
 * `.tv`, `.me`...): a site on one says nothing about where the business is.
 */
const genericCountryTlds = new Set(
  'ac ai cc co fm gg im io je la ly me ms nu sh so st to tv vc ws'.split(' '),
);

/**
 * The ISO 3166-1 alpha-2 country of a domain on a country's top-level domain (`brand.co.uk` GB,
 * `brand.it` IT, `brand.com.au` AU); null for a generic one (`.com`, `.eu`, `.io`).
 */
export function countryOfDomain(domain: string): string | null {
  const tld = getPublicSuffix(domain)?.split('.').at(-1);
  if (tld?.length !== 2 || tld === 'eu' || genericCountryTlds.has(tld)) return null;
  return tld === 'uk' ? 'GB' : tld.toUpperCase();
}
