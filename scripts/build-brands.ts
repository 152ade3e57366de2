/**
 * Builds `servers/features/charges/brand-index.json`, the open-data half of the brand registry, from
 * two packages on the npm registry (devDependencies; the built file is committed so an install needs
 * neither of them, nor a network):
 *
 * - name-suggestion-index (BSD-3-Clause): brands of physical chains with their OSM category, the
 *   countries they operate in (`locationSet`), their names and match names, and the Wikidata identities
 *   NSI ships (`dist/wikidata/wikidata.json`: label and official website, Wikidata P856).
 * - simple-icons (CC0-1.0): mostly online brands; the site is the host of the icon's `source` or
 *   `guidelines` URL when that host is the brand's own (not a code host, wiki or logo aggregator).
 *
 * Names come only from those sources (brand, name, brand:en, matchNames, the Wikidata label, simple-icons
 * aliases): no legal-entity form is invented. The output is deterministic (sorted, no clock), so
 * `npm run build-brands -- --check` (and the unit test that runs it) proves the committed file is what
 * the installed versions produce.
 *
 * Usage: npm run build-brands [-- --check]
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { getDomain } from 'tldts';
import type { BrandCategory } from '../servers/features/charges/brand-registry.ts';
import { brandIndexFile, countryOfDomain } from '../servers/features/charges/brand-registry.ts';

// Read by path: neither package lists these files (or its package.json) in its `exports`.
const modules = new URL('../node_modules/', import.meta.url);
const readJson = <T>(path: string): T => JSON.parse(readFileSync(new URL(path, modules), 'utf8')) as T;

interface NsiItem {
  id: string;
  displayName: string;
  locationSet?: { include?: unknown[] };
  matchNames?: string[];
  tags: Record<string, string>;
}
interface WikidataEntry {
  label?: string;
  officialWebsites?: string[];
  identities?: { website?: string };
}
interface SimpleIcon {
  title: string;
  source: string;
  guidelines?: string;
  aliases?: { aka?: string[]; dup?: { title: string }[]; loc?: Record<string, string> };
}

/**
 * One brand of the index: `[name, domain, category, countries, aliases, wikidata, source, alternates]`
 * (alternates: the brand's country sites, space-separated, '' for none).
 */
export type IndexRow = [string, string, BrandCategory, string, string[], string, 0 | 1, string];

/** OSM key/value (NSI tree path without the `brands/` prefix) to our category. First match wins. */
const categoryRules: [RegExp, BrandCategory][] = [
  [/^amenity\/(?:fast_food|restaurant|food_court|ice_cream)$/, 'restaurant'],
  [/^amenity\/cafe$|^shop\/coffee$|^shop\/tea$/, 'coffee'],
  [/^amenity\/(?:bar|pub|biergarten|nightclub)$/, 'bar'],
  [/^amenity\/(?:fuel|charging_station)$|^waterway\/fuel$|^man_made\/charge_point$/, 'fuel'],
  [/^amenity\/pharmacy$|^shop\/chemist$/, 'pharmacy'],
  [
    /^amenity\/(?:bank|atm|bureau_de_change|money_transfer|payment_centre|payment_terminal)$|^office\/(?:financial|financial_advisor|insurance|mortgage|tax_advisor)$|^shop\/(?:money_lender|pawnbroker)$/,
    'finance',
  ],
  [/^amenity\/(?:car_rental|car_sharing|motorcycle_rental|bicycle_rental)$/, 'car_rental'],
  [/^tourism\/(?:hotel|motel|hostel|caravan_site)$/, 'hotel'],
  [/^shop\/travel_agency$/, 'travel'],
  [/^leisure\/(?:fitness_centre|sports_centre|fitness_station)$/, 'fitness'],
  [
    /^amenity\/(?:cinema|casino|gambling|karaoke_box)$|^leisure\/|^tourism\/theme_park$|^shop\/(?:ticket|lottery|bookmaker)$/,
    'entertainment',
  ],
  [
    /^shop\/(?:supermarket|convenience|greengrocer|butcher|bakery|pastry|deli|frozen_food|seafood|cheese|dairy|health_food|beverages|alcohol|wine|confectionery|chocolate|nuts|spices|country_store|general)$/,
    'grocery',
  ],
  [
    /^shop\/(?:clothes|shoes|fashion_accessories|bag|jewelry|watches|leather|tailor|fabric|boutique)$/,
    'fashion',
  ],
  [/^shop\/(?:mobile_phone|telecommunication)$|^office\/telecommunication$/, 'telecom'],
  [
    /^shop\/(?:electronics|computer|hifi|camera|video_games|printer_ink|mobile_phone_accessories)$/,
    'electronics',
  ],
  [
    /^shop\/(?:furniture|doityourself|hardware|houseware|kitchen|bed|interior_decoration|garden_centre|paint|lighting|flooring|curtain|appliance|bathroom_furnishing|tiles|carpet|window_blind|doors|power_tools|trade|household_linen)$/,
    'home',
  ],
  [
    /^shop\/(?:car|car_parts|car_repair|tyres|motorcycle|motorcycle_repair|truck|truck_repair)$|^amenity\/(?:car_wash|vehicle_inspection)$/,
    'automotive',
  ],
  [/^shop\/(?:beauty|cosmetics|hairdresser|perfumery|massage|tattoo|hairdresser_supply)$/, 'beauty'],
  [
    /^shop\/(?:optician|hearing_aids|medical_supply|nutrition_supplements)$|^healthcare\/|^amenity\/(?:clinic|doctors|dentist|hospital|veterinary)$/,
    'health',
  ],
  [
    /^amenity\/(?:school|college|university|driving_school|language_school|kindergarten|prep_school|music_school|childcare|training)$/,
    'education',
  ],
  [/^amenity\/(?:post_office|parcel_locker|post_depot)$|^office\/logistics$/, 'services'],
  [/^shop\//, 'retail'],
];

export function categoryOf(path: string): BrandCategory {
  for (const [rule, category] of categoryRules) if (rule.test(path)) return category;
  return 'other';
}

/** Hosts that are not a brand's own site: social networks, code hosts, wikis, logo collections. */
const notOwnSite = new Set(
  (
    'facebook.com instagram.com twitter.com x.com linkedin.com youtube.com tiktok.com pinterest.com ' +
    'wikipedia.org wikimedia.org wikidata.org wikia.com fandom.com github.com github.io githubusercontent.com ' +
    'gitlab.com bitbucket.org figma.com google.com goo.gl dropbox.com behance.net dribbble.com medium.com ' +
    'imgur.com brandfetch.com seeklogo.com worldvectorlogo.com logos-world.net 1000logos.net svgporn.com ' +
    'simpleicons.org linktr.ee yelp.com tripadvisor.com foursquare.com apple.com archive.org t.me vk.com ' +
    'npmjs.com pypi.org sourceforge.net bit.ly canva.com notion.site notion.so'
  ).split(' '),
);

function domainOf(url: string | undefined): string | null {
  if (!url) return null;
  let host: string;
  try {
    host = new URL(url).hostname.toLowerCase();
  } catch {
    return null;
  }
  const domain = getDomain(host, { allowPrivateDomains: true });
  if (!domain || notOwnSite.has(domain) || notOwnSite.has(getDomain(host) ?? '')) return null;
  return domain;
}

/** Usable on a card statement: Latin letters or digits once diacritics are gone. */
function latin(text: string): boolean {
  const plain = text.normalize('NFKD').replace(/[\u0300-\u036f]/g, '');
  return /[A-Za-z0-9]/.test(plain) && !/[^\x20-\x7e]/.test(plain.replace(/[ßæøÆØœŒłŁđĐ]/g, ''));
}

function squash(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/[^A-Za-z0-9]/g, '')
    .toLowerCase();
}

/** A country list, or M49 region codes (`001` world, `150` Europe) where NSI gives a region. */
function countriesOf(item: NsiItem): string[] {
  const out = new Set<string>();
  for (const entry of item.locationSet?.include ?? []) {
    if (typeof entry !== 'string') continue;
    const code = /^([a-z]{2})(?:$|[-_.])/.exec(entry)?.[1] ?? (/^\d{3}$/.test(entry) ? entry : null);
    if (code) out.add(code.toUpperCase());
  }
  return [...out].sort();
}

interface Draft {
  name: string;
  domain: string;
  categories: Map<BrandCategory, number>;
  countries: Set<string>;
  aliases: Set<string>;
  wikidata: string;
  source: 0 | 1;
  items: number;
  alternates: Set<string>;
}

/**
 * The brand's sites for other countries among its Wikidata official websites (P856): registrable
 * domains on a country's top-level domain with the main site's label (`amazon.it` for amazon.com,
 * not `about.google` nor another label the brand also owns), in Wikidata's order.
 */
function countrySites(domain: string, websites: readonly string[]): string[] {
  const label = domain.split('.')[0];
  const out = new Set<string>();
  for (const site of websites) {
    const other = domainOf(site);
    if (other && other !== domain && other.split('.')[0] === label && countryOfDomain(other) !== null)
      out.add(other);
  }
  return [...out];
}

export function buildIndex(): { meta: Record<string, unknown>; rows: IndexRow[] } {
  const nsiPackage = readJson<{ version: string }>('name-suggestion-index/package.json');
  const nsi = readJson<{ nsi: Record<string, { items: NsiItem[] }> }>(
    'name-suggestion-index/dist/json/nsi.json',
  );
  const { wikidata } = readJson<{ wikidata: Record<string, WikidataEntry> }>(
    'name-suggestion-index/dist/wikidata/wikidata.json',
  );
  const { dissolved } = readJson<{ dissolved: Record<string, unknown> }>(
    'name-suggestion-index/dist/wikidata/dissolved.json',
  );
  const iconsPackage = readJson<{ version: string }>('simple-icons/package.json');
  const icons = readJson<SimpleIcon[]>('simple-icons/data/simple-icons.json');

  // Keyed by Wikidata id: NSI lists one brand once per OSM category and per regional variant. Brands
  // with different ids stay apart even when they share a site (a group's brands, a franchisor's site).
  const byKey = new Map<string, Draft>();
  const domains = new Set<string>();
  const add = (key: string, draft: Draft) => {
    const existing = byKey.get(key);
    domains.add(draft.domain);
    if (!existing) {
      byKey.set(key, draft);
      return;
    }
    existing.items += draft.items;
    for (const [c, n] of draft.categories) existing.categories.set(c, (existing.categories.get(c) ?? 0) + n);
    for (const c of draft.countries) existing.countries.add(c);
    for (const a of [draft.name, ...draft.aliases]) existing.aliases.add(a);
    for (const d of draft.alternates) existing.alternates.add(d);
  };

  addNsiBrands(nsi, wikidata, dissolved, add);
  addIconBrands(icons, domains, add);
  const rows: IndexRow[] = [...byKey.values()]
    .sort((a, b) => a.domain.localeCompare(b.domain) || a.wikidata.localeCompare(b.wikidata))
    .map((draft) => indexRow(draft, domains));

  const meta = {
    about:
      'Open-data half of the brand registry for card-charge lookup, generated by `npm run build-brands` (scripts/build-brands.ts); do not edit. The hand-curated brands.json wins where a domain is in both.',
    sources: [
      {
        name: 'name-suggestion-index',
        version: nsiPackage.version,
        license: 'BSD-3-Clause',
        url: 'https://github.com/osmlab/name-suggestion-index',
        used: "brands/* items: names, matchNames, OSM category, locationSet countries; dist/wikidata/wikidata.json: Wikidata label and official websites (P856): the first is the brand's site, others with its label on a country's top-level domain are its alternate_domains",
      },
      {
        name: 'simple-icons',
        version: iconsPackage.version,
        license: 'CC0-1.0',
        url: 'https://github.com/simple-icons/simple-icons',
        used: 'title, aliases (aka, dup), site from the source/guidelines URL when it is the brand’s own',
      },
    ],
    fields: ['name', 'domain', 'category', 'countries', 'aliases', 'wikidata', 'source', 'alternate_domains'],
    source_names: ['name-suggestion-index', 'simple-icons'],
    brands: rows.length,
  };
  return { meta, rows };
}

type AddDraft = (key: string, draft: Draft) => void;

/** NSI's brands with a Wikidata identity and an official website, keyed by their Wikidata id. */
function addNsiBrands(
  nsi: { nsi: Record<string, { items: NsiItem[] }> },
  wikidata: Record<string, WikidataEntry>,
  dissolved: Record<string, unknown>,
  add: AddDraft,
): void {
  for (const [path, { items }] of Object.entries(nsi.nsi).sort(([a], [b]) => a.localeCompare(b))) {
    if (!path.startsWith('brands/')) continue;
    const category = categoryOf(path.slice('brands/'.length));
    for (const item of items) {
      if (dissolved[item.id]) continue;
      const qid = item.tags['brand:wikidata'];
      const identity = qid ? wikidata[qid] : undefined;
      const site = identity?.officialWebsites?.[0] ?? identity?.identities?.website;
      const domain = domainOf(site);
      if (!qid || !domain) continue;
      const names = [
        item.tags['brand:en'],
        item.tags.brand,
        item.tags['name:en'],
        item.tags.name,
        item.displayName.replace(/\s*\([^)]*\)\s*$/, ''),
        identity?.label,
        ...(item.matchNames ?? []),
      ].filter((n): n is string => typeof n === 'string' && n.trim() !== '' && latin(n));
      const [name, ...aliases] = [...new Set(names.map((n) => n.trim()))];
      if (!name) continue;
      add(qid, {
        name,
        domain,
        categories: new Map([[category, 1]]),
        countries: new Set(countriesOf(item)),
        aliases: new Set(aliases),
        wikidata: qid,
        source: 0,
        items: 1,
        alternates: new Set(countrySites(domain, identity?.officialWebsites ?? [])),
      });
    }
  }
}

/** simple-icons' brands whose source is their own site, on a domain NSI did not name; keyed by domain. */
function addIconBrands(icons: SimpleIcon[], domains: ReadonlySet<string>, add: AddDraft): void {
  for (const icon of icons) {
    const domain = domainOf(icon.source) ?? domainOf(icon.guidelines);
    if (!domain || !latin(icon.title)) continue;
    // The icon's source must be the brand's own site: its label and the title share a stem.
    const label = squash(domain.split('.')[0] ?? '');
    const title = squash(icon.title);
    if (label.length < 2 || !(title.startsWith(label.slice(0, 4)) || label.startsWith(title.slice(0, 4))))
      continue;
    if (domains.has(domain)) continue;
    const aliases = [...(icon.aliases?.aka ?? []), ...(icon.aliases?.dup ?? []).map((d) => d.title)].filter(
      latin,
    );
    add(domain, {
      name: icon.title,
      domain,
      categories: new Map([['software', 1]]),
      countries: new Set(),
      aliases: new Set(aliases),
      wikidata: '',
      source: 1,
      items: 1,
      alternates: new Set(),
    });
  }
}

/** A merged brand as a row of the index: its main category, sorted countries and aliases, alternates no other brand holds. */
function indexRow(d: Draft, domains: ReadonlySet<string>): IndexRow {
  const category = [...d.categories.entries()].sort(
    (a, b) => b[1] - a[1] || a[0].localeCompare(b[0]),
  )[0]?.[0];
  d.aliases.delete(d.name);
  return [
    d.name,
    d.domain,
    category ?? 'other',
    [...d.countries].sort().join(' '),
    [...d.aliases].sort(),
    d.wikidata,
    d.source,
    [...d.alternates].filter((a) => !domains.has(a)).join(' '),
  ];
}

/** One brand a line: small diffs when a source is updated, and a file that loads with one JSON.parse. */
export function serializeIndex(index: { meta: Record<string, unknown>; rows: IndexRow[] }): string {
  const head = JSON.stringify(index.meta, null, 2).slice(0, -2);
  return `${head},\n  "rows": [\n${index.rows.map((r) => `    ${JSON.stringify(r)}`).join(',\n')}\n  ]\n}\n`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const started = performance.now();
  const text = serializeIndex(buildIndex());
  const ms = performance.now() - started;
  if (process.argv.includes('--check')) {
    const current = readFileSync(brandIndexFile, 'utf8');
    if (current !== text) {
      console.error(`${brandIndexFile.pathname} is out of date: run npm run build-brands`);
      process.exit(1);
    }
    console.warn(`brand index up to date (${Math.round(ms)} ms)`);
  } else {
    writeFileSync(brandIndexFile, text);
    console.warn(`wrote ${brandIndexFile.pathname}: ${text.length} bytes in ${Math.round(ms)} ms`);
  }
}
