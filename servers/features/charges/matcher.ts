/**
 * Which brand is behind a statement line: exact alias first, fuzzy second; and, whatever matched, the
 * merchant as the line names it.
 *
 * Exact: the longest run of leading merchant tokens that is a known alias (descriptor form, name,
 * alias or domain label) of a brand, spaced or squashed (`WAL MART` = `WALMART`); a registrable
 * domain seen in the line also counts. Fuzzy: a trigram index proposes candidate aliases, verified by
 * Levenshtein distance (fastest-levenshtein) against the leading tokens. The index is built once; a
 * lookup scans only the shortest posting lists of its trigrams, so it stays under a millisecond with
 * 100,000 brands (`npm run bench`), where linear-scan fuzzy libraries (fuse.js) take tens of ms.
 *
 * No confident mistakes: a match that leaves words of the merchant's name unexplained (`DELTA DEFENSE`
 * against Delta) or that is only a near spelling of another name stays below `high`; an open-data brand
 * (name-suggestion-index, simple-icons) reaches `high` only on its full name and, for a one-word name,
 * when the line's country is one it operates in; one that does not operate there drops below `medium`.
 */
import { distance } from 'fastest-levenshtein';
import { type Brand, countryOfDomain } from './brand-registry.ts';
import { canonicalTokens, type NormalizedDescriptor, normalizeDescriptor } from './normalize.ts';
import type { Processor } from './processors.ts';
import type {
  CardChargeMatch,
  ChargeLookupResult,
  ConfidenceLevel,
  Merchant,
  Processor as ProcessorOutput,
} from './schemas.ts';

type AliasKind = 'descriptor' | 'name' | 'alias' | 'domain';

interface AliasEntry {
  brand: number;
  kind: AliasKind;
  text: string;
  /** Canonical tokens joined without spaces. */
  squashed: string;
  /**
   * A descriptor written with a trailing `*` or `#` (`AUDIBLE*`): the brand's own form says a reference,
   * product or store code follows, so words after it do not count against the match.
   */
  open?: boolean;
}

const MAX_RESULTS = 5;
const NONE_JOINED: readonly number[] = Object.freeze([]);
const NONE_CITY: readonly string[] = Object.freeze([]);
const EMPTY = new Int32Array(0);
/** Lines per cache generation: at most twice as many are held. */
const LOOKUP_CACHE_SIZE = 5_000;
/**
 * Postings scanned per fuzzy query, at most. Lists are scanned rarest first, so the limit only ever
 * skips trigrams shared by tens of thousands of aliases - which say little about a near spelling.
 */
const FUZZY_SCAN_LIMIT = 20_000;
const FUZZY_MIN_SIMILARITY = 0.78;
const kindRank: Record<AliasKind, number> = { descriptor: 0, name: 1, domain: 2, alias: 3 };
/** Highest confidence of a match that leaves merchant words unexplained, or of a near spelling: `medium`. */
const PARTIAL_ONE = 0.82;
const PARTIAL_MORE = 0.76;
const FUZZY_PARTIAL = 0.8;
/** An open-data brand matched on one word, with no country to corroborate it. */
const INDEX_ONE_WORD = 0.84;
const INDEX_ELSEWHERE_PENALTY = 0.35;
/** A partial match on an open-data brand with nothing to place it: `low` on one word, `medium` on more. */
const INDEX_UNPLACED_PARTIAL = 0.66;
const INDEX_UNPLACED_PARTIAL_WORDS = 0.72;
/**
 * Words that add nothing to a merchant's name on a statement: legal forms, store words, billing words.
 * They neither count against a match nor make it.
 */
const filler = new Set(
  (
    'INC LLC LTD LIMITED CORP CORPORATION CO COMPANY GMBH AG SA SAS SARL SRL SPA BV NV AB OY PLC PBC LP LLP PTY ' +
    'KG INCORPORATED UK GB CAN AUS EU INTERNATIONAL THE ' +
    'STORE STORES SHOP MARKET MKT SUPERCENTER SUPERSTORE USA US ONLINE COM WWW HTTPS HTTP SUBSCRIPTION SUBSCR ' +
    'MEMBERSHIP PAYMENT PAYMENTS PURCHASE BILL BILLING SERVICES FUEL GAS QSR THE INTL RECURRING MONTHLY ' +
    'ANNUAL RENEWAL ORDER RIDE RIDES TRIP'
  ).split(' '),
);
/**
 * Tails glued to a brand's name by a processor's short name field (`WIDGETLYUSA`, `1STPHORMINT`,
 * `BESTBUYCOM`): legal forms, countries, `.COM`, international. A name followed by one of these
 * is the name.
 */
const gluedTails = new Set(
  'USA US UK INC LLC LTD CORP CO GMBH INT INTL COM NET ORG IO APP AI SUB SUBS DE FR IT ES NL EU CA AU'.split(
    ' ',
  ),
);
/** Legal forms and countries after a name, for the registry and the line alike (`WIDGETLY INC` = `WIDGETLY`). */
const legalTails = new Set(
  (
    'INC INCORPORATED LLC LTD LIMITED CORP CORPORATION CO COMPANY GMBH AG SA SAS SARL SRL SPA BV NV AB OY PLC ' +
    'PBC LP LLP PTY KG USA US UK GB CAN AUS EU INTL INTERNATIONAL COM'
  ).split(' '),
);
/** Legal forms that end a company's name (`LL`: `LLC` cut by the name field). */
const companyForms = new Set(
  'INC INCORPORATED LLC LL LTD LIMITED CORP CORPORATION GMBH AG SA SAS SARL SRL SPA BV NV PLC PBC LP LLP PTY KG'.split(
    ' ',
  ),
);
/** A brand found inside other words: at most `medium`, less the less of the line it explains. */
const INSIDE_BASE = 0.5;
const INSIDE_SPAN = 0.32;
const INSIDE_CAP = 0.8;
/** How much a partial match loses when its words are as common among brands as a word can be. */
const COMMON_WORDS = 0.3;
/** Below this rarity (idf / its maximum) a word is shared by a dozen brands or more. */
const COMMON_RARITY = 0.75;
/** A brand glued to a tail that names nothing (`WIDGETLYUSA`): `high`, not `very_high`. */
const GLUED_TAIL = 0.9;
/** A brand after its own billing entity (`ACMECORP WIDGETLY`, from `billed_as`). */
const BILLED_AS = 0.92;
/** A domain printed in the line that the registry does not hold, whose label agrees with the name. */
const LINE_WEBSITE = 0.75;

/** UN M49 Europe (150) members, for brands NSI lists as operating in "Europe". */
const europe = new Set(
  (
    'AD AL AT BA BE BG BY CH CY CZ DE DK EE ES FI FO FR GB GG GI GR HR HU IE IM IS IT JE LI LT LU LV MC MD ME MK ' +
    'MT NL NO PL PT RO RS RU SE SI SK SM UA VA XK'
  ).split(' '),
);

export function levelOf(confidence: number): ConfidenceLevel {
  if (confidence >= 0.95) return 'very_high';
  if (confidence >= 0.85) return 'high';
  if (confidence >= 0.7) return 'medium';
  return 'low';
}

/** A statement line as the matcher read it (`BrandMatcher.read`). Callers must not mutate it. */
export interface ReadLine {
  result: ChargeLookupResult;
  descriptor: NormalizedDescriptor;
  /**
   * The line was read before: it is coming back, and the matcher keeps it (this object) from now
   * on. False for a line read for the first time, which nothing keeps.
   */
  repeated: boolean;
}

export class BrandMatcher {
  readonly brands: readonly Brand[];
  private readonly byDomain = new Map<string, number>();
  private readonly spaced = new Map<string, number[]>();
  private readonly squashed = new Map<string, number[]>();
  private readonly aliases: AliasEntry[] = [];
  private readonly trigrams = new Map<string, Int32Array>();
  private readonly counts: Uint16Array;
  /** Squashed length of each alias, for the fuzzy length filter. */
  private readonly lengths: Uint16Array;
  private maxAliasTokens = 1;
  /** Inverse document frequency of alias words over brands; a word no brand uses weighs `maxWeight`. */
  private readonly idf = new Map<string, number>();
  private readonly maxWeight: number;
  /** Indices of the line's tokens that followed `&` or `AND` (set while a line is matched). */
  private joined: readonly number[] = NONE_JOINED;
  /** The line's city, whose words in the store's name (`JUMBO UTRECHT`) name no one (set while matching). */
  private cityWords: readonly string[] = NONE_CITY;
  /**
   * Recent lines that came back, with what was read from them: the answer and the descriptor it came
   * from. A line is kept from its second sighting on: a stream of lines each seen once (a statement
   * read end to end, a scan of made-up lines) neither pushes the lines that do come back out nor
   * pays for keeping what it never asks for again - keeping a line cost more than reading it.
   */
  private readonly lines = new Generations<ReadLine>(LOOKUP_CACHE_SIZE, { secondSight: true });
  /**
   * Recent readings (the descriptor as JSON), with the answer without its `charge`: lines that differ
   * only in what reading drops (store numbers, references, dates, card tails) share one merchant, so
   * a new line of a known merchant is read but not matched again. The answer is a function of the
   * reading alone (`resultFor`).
   */
  private readonly readings = new Generations<Omit<ChargeLookupResult, 'charge'>>(LOOKUP_CACHE_SIZE);
  /** 0: hand-curated, 1: open-data index. */
  private readonly tier: Uint8Array;
  /** Squashed aliases of five characters or more, sorted, for truncated names (`TICKETMASTE`). */
  private readonly sortedSquashed: [string, number][];
  /** Per brand with country sites: each country's site (its main site's country included). */
  private readonly regional = new Map<number, Map<string, string>>();

  constructor(brands: readonly Brand[]) {
    this.brands = brands;
    this.tier = Uint8Array.from(brands, (b) => (b.source === undefined || b.source === 'curated' ? 0 : 1));
    const postings = new Map<string, number[]>();
    const documents = new Map<string, number>();
    brands.forEach((brand, index) => {
      if (!this.byDomain.has(brand.domain)) this.byDomain.set(brand.domain, index);
      const label = brand.domain.split('.')[0] ?? '';
      const curated = this.tier[index] === 0;
      // An open-data brand's site label is often a plain word (juniper.net, public.gr): only its names count.
      const forms: [AliasKind, string][] = [
        ...brand.descriptors.map((d): [AliasKind, string] => ['descriptor', d]),
        ['name', brand.name],
        ...(brand.aliases ?? [])
          .filter((a) => curated || a.replace(/[^A-Za-z0-9]/g, '').length >= 3)
          .map((a): [AliasKind, string] => ['alias', a]),
        ...(brand.billed_as ?? []).map((b): [AliasKind, string] => ['alias', b.name]),
        ...(curated && label.length >= 4 ? [['domain', label] as [AliasKind, string]] : []),
      ];
      const seen = new Set<string>();
      const words = new Set<string>();
      for (const [kind, text] of forms) {
        const folded = matchTokens(canonicalTokens(text.replace(/\*/g, ' ')));
        // A legal or country tail is not part of the name (`ACME WIDGETS INC` = `ACME WIDGETS`): both forms.
        const variants = [folded];
        let bare = folded.length;
        while (bare > 1 && legalTails.has(folded[bare - 1] as string)) bare--;
        // Not after `&` (`New York & Company` is not `New York`).
        if (bare < folded.length && !/&|\bAND\b/i.test(text) && folded.slice(0, bare).join('').length >= 4)
          variants.push(folded.slice(0, bare));
        for (const tokens of variants) {
          if (tokens.length === 0) continue;
          const key = tokens.join(' ');
          if (seen.has(key)) continue;
          seen.add(key);
          for (const word of tokens) words.add(word);
          const id = this.aliases.length;
          const squashed = tokens.join('');
          const open = kind === 'descriptor' && /[*#]\s*$/.test(text);
          this.aliases.push({ brand: index, kind, text, squashed, ...(open ? { open } : {}) });
          push(this.spaced, key, id);
          if (tokens.length > 1) push(this.squashed, squashed, id);
          this.maxAliasTokens = Math.max(this.maxAliasTokens, tokens.length);
          // Keyed by the alias's first letter too: a misspelling rarely hits the first letter, and
          // the posting lists become ~25 times shorter.
          for (const gram of trigramsOf(squashed)) push(postings, squashed[0] + gram, id);
        }
      }
      for (const word of words) documents.set(word, (documents.get(word) ?? 0) + 1);
    });
    // Inverse document frequency of each word over brands: a word many brands share (CAFE, UNITED)
    // says less about which brand a line names than a word one brand owns (NETFLIX).
    this.maxWeight = Math.log(brands.length + 1);
    for (const [word, count] of documents) this.idf.set(word, Math.log((brands.length + 1) / count));
    // A domain glued without its dots ("BESTBUYCOM806...") names the brand too.
    brands.forEach((brand, index) => {
      const glued = brand.domain.replace(/[^a-z0-9]/g, '').toUpperCase();
      if (this.spaced.has(glued) || this.squashed.has(glued)) return;
      const id = this.aliases.length;
      this.aliases.push({ brand: index, kind: 'domain', text: brand.domain, squashed: glued });
      push(this.squashed, glued, id);
    });
    // A brand's country site on the line names the brand as its main site does (after every main
    // site: a domain that is some brand's own is that brand's).
    brands.forEach((brand, index) => {
      if (!brand.alternate_domains || brand.alternate_domains.length === 0) return;
      const sites = new Map<string, string>();
      for (const domain of [brand.domain, ...brand.alternate_domains]) {
        if (!this.byDomain.has(domain)) this.byDomain.set(domain, index);
        const country = countryOfDomain(domain);
        if (country !== null && !sites.has(country)) sites.set(country, domain);
      }
      this.regional.set(index, sites);
    });
    for (const [gram, ids] of postings) this.trigrams.set(gram, Int32Array.from(new Set(ids)));
    this.sortedSquashed = this.aliases
      .map((a, id) => [a.squashed, id] as [string, number])
      .filter(([squashed]) => squashed.length >= 5)
      .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] - b[1]));
    this.counts = new Uint16Array(this.aliases.length);
    this.lengths = Uint16Array.from(this.aliases, (a) => a.squashed.length);
  }

  get aliasCount(): number {
    return this.aliases.length;
  }

  /**
   * The brands that have exactly these canonical tokens as an alias (spaced or squashed, as exact
   * matching reads them): whom the registry names for a line that says only this.
   */
  brandsWithAlias(tokens: readonly string[]): Brand[] {
    if (tokens.length === 0) return [];
    tokens = matchTokens(tokens);
    const ids =
      this.spaced.get(tokens.join(' ')) ??
      this.squashed.get(tokens.join('')) ??
      (tokens.length > 1 ? this.spaced.get(tokens.join('')) : undefined) ??
      [];
    return [...new Set(ids.map((id) => (this.aliases[id] as AliasEntry).brand))].map(
      (index) => this.brands[index] as Brand,
    );
  }

  brandByDomain(domain: string): Brand | undefined {
    const index = this.byDomain.get(domain);
    return index === undefined ? undefined : this.brands[index];
  }

  /**
   * Looks a statement line up. Lines that come back are cached (bounded, oldest first out, from
   * their second sighting on): the registry does not change while the process runs, and a few
   * merchants account for most charges. Callers must not mutate a result.
   */
  lookup(charge: string): ChargeLookupResult {
    return this.read(charge).result;
  }

  /**
   * The line as read (processor, merchant tokens, city, country) with its answer, from the same
   * cache as `lookup`: reading a line costs more than matching it, so later sources (declared
   * descriptors, live resolution) take the descriptor from here rather than reading it again. And
   * whether the line came back (`repeated`): a caller that keeps something per line (`lookup.ts`)
   * keeps it only for those, so a stream of lines each seen once costs no more than their reading.
   */
  read(charge: string): ReadLine {
    let entry = this.lines.get(charge);
    if (!entry) {
      const descriptor = this.readProcessor(normalizeDescriptor(charge));
      // Where `&` joined words is part of the reading: canonical tokens do not keep a lone `&`.
      const joined = joinedAt(charge, matchTokens(descriptor.tokens));
      const reading =
        joined.length === 0 ? JSON.stringify(descriptor) : `${JSON.stringify(descriptor)}&${joined}`;
      let answer = this.readings.get(reading);
      if (!answer) {
        const { charge: _line, ...rest } = this.resultFor(charge, descriptor);
        answer = rest;
        this.readings.set(reading, answer);
      }
      entry = { result: { charge, ...answer }, descriptor, repeated: false };
      // Kept from its second sighting on, which makes it a line that comes back.
      entry.repeated = this.lines.set(charge, entry);
    }
    return entry;
  }

  /** The matching itself, without the cache (benchmarks measure this). */
  lookupUncached(charge: string): ChargeLookupResult {
    return this.resultFor(charge, this.readProcessor(normalizeDescriptor(charge)));
  }

  private resultFor(charge: string, descriptor: NormalizedDescriptor): ChargeLookupResult {
    const processor = descriptor.processor;
    return {
      charge,
      normalized: descriptor.normalized,
      processor: processor ? processorOutput(processor) : null,
      merchant: merchantOf(descriptor),
      matches: this.match(descriptor, charge),
    };
  }

  /**
   * A short code before `*` that the processor table does not know is a facilitator, unless the code is
   * itself a brand's name (`UBER *TRIP`, `CKE*CARLS JR`): then it is part of the merchant's name.
   */
  private readProcessor(descriptor: NormalizedDescriptor): NormalizedDescriptor {
    if (descriptor.processor?.kind !== 'unrecognised') return descriptor;
    const key = matchTokens(descriptor.prefixTokens).join(' ');
    if (!this.spaced.has(key) && !this.squashed.has(key.replace(/ /g, ''))) return descriptor;
    const tokens = [...descriptor.prefixTokens, ...descriptor.tokens];
    const merchantTokens = [...descriptor.prefixTokens, ...descriptor.merchantTokens];
    return {
      ...descriptor,
      processor: null,
      prefixTokens: [],
      tokens,
      merchantTokens,
      normalized: merchantTokens.join(' '),
    };
  }

  match(line: NormalizedDescriptor, charge?: string): CardChargeMatch[] {
    const descriptor = foldedReading(line);
    this.joined = charge === undefined ? NONE_JOINED : joinedAt(charge, descriptor.tokens);
    this.cityWords = descriptor.city === null ? NONE_CITY : descriptor.city.split(' ');
    try {
      return this.matchFolded(descriptor);
    } finally {
      this.joined = NONE_JOINED;
      this.cityWords = NONE_CITY;
    }
  }

  private matchFolded(descriptor: NormalizedDescriptor): CardChargeMatch[] {
    const found = new Map<number, { confidence: number; on: CardChargeMatch['matched_on']; text: string }>();
    const offer = (brand: number, confidence: number, on: CardChargeMatch['matched_on'], text: string) => {
      const current = found.get(brand);
      if (!current || confidence > current.confidence) found.set(brand, { confidence, on, text });
    };

    // The line's own website: a domain the registry holds names its brand (unless it is the
    // processor's, printed for someone else's sale); one it does not hold is evidence when its
    // label agrees with the name on the line, and is ignored otherwise.
    const websites: string[] = [];
    /** The brand's site the line printed, per brand: its answer whatever else matched. */
    let printed: Map<number, string> | undefined;
    for (const domain of descriptor.domains) {
      if (domain === descriptor.processor?.domain && descriptor.tokens.length > 0) continue;
      const brand = this.byDomain.get(domain);
      if (brand !== undefined) {
        offer(brand, 0.97, 'domain', domain);
        printed ??= new Map();
        if (!printed.has(brand)) printed.set(brand, domain);
      } else if (labelAgrees(domain, descriptor)) websites.push(domain);
    }
    const named = this.exact(descriptor, offer);
    // A cut or misspelt name is looked for when the tokens name no brand at medium or above (a word
    // of the line found inside others does not stop it: `TICKETMASTE` holds `TICKET`).
    // A name the exact stage already weighed and found wanting (0.5 and up) is not offered again as
    // a near spelling of itself.
    const below = (level: number) => {
      for (const hit of found.values()) if (hit.confidence >= level) return false;
      return true;
    };
    if (below(0.7)) this.truncated(descriptor, offer);
    if (!named && below(0.5)) this.fuzzy(descriptor, offer);
    // An unknown short code may be the brand's own name misspelt or cut (`LIM*RIDE COST`, Lime's
    // `LIME*RIDE COST`): the line with its code is looked for too.
    if (descriptor.processor?.kind === 'unrecognised' && below(0.5)) {
      this.fuzzy(
        {
          ...descriptor,
          tokens: [...descriptor.prefixTokens, ...descriptor.tokens],
          merchantTokens: [...descriptor.prefixTokens, ...descriptor.merchantTokens],
        },
        offer,
      );
    }

    const processor = descriptor.processor;
    const storeDomain = processor?.merchantOfRecord ? processor.domain : null;
    if (found.size === 0 && processor && storeDomain) {
      const brand = this.byDomain.get(storeDomain);
      const billedOnly = descriptor.tokens.length === 0;
      if (brand !== undefined) offer(brand, billedOnly ? 0.97 : 0.75, 'processor', processor.name);
      else return [this.processorOnly(processor, storeDomain, billedOnly)];
    }

    // A place's name (`SANTA FE`, `NEW YORK`) said alone is a city before it is an open-data brand.
    if (placeShaped(descriptor.merchantTokens)) {
      for (const [index, hit] of found)
        if (this.tier[index] !== 0 && hit.confidence > INDEX_ONE_WORD) hit.confidence = INDEX_ONE_WORD;
    }
    const matches = [...found.entries()]
      .sort((a, b) => b[1].confidence - a[1].confidence || a[0] - b[0])
      .slice(0, MAX_RESULTS)
      .map(([index, hit]) =>
        this.toMatch(
          index,
          hit.confidence,
          hit.on,
          hit.text,
          processor,
          descriptor.country,
          printed?.get(index),
        ),
      );
    if (websites.length === 0) return matches;
    const fromLine = websites.map((domain) => lineWebsiteMatch(domain, processor));
    return [...matches, ...fromLine].sort((a, b) => b.confidence - a.confidence).slice(0, MAX_RESULTS);
  }

  /** Longest leading run of tokens that is an alias; with a processor, also the line with its prefix. */
  /** Whether the line starts with a known name (then a near spelling of it is not looked for). */
  private exact(
    descriptor: NormalizedDescriptor,
    offer: (brand: number, confidence: number, on: CardChargeMatch['matched_on'], text: string) => void,
  ): boolean {
    const named = this.exactRun(
      descriptor.tokens,
      descriptor.merchantTokens.length,
      descriptor.country,
      offer,
    );
    const processor = descriptor.processor;
    if (descriptor.prefixTokens.length > 0) {
      // The line with its prefix finds brands billing under a prefix of their own (GOOGLE *ADS), never
      // the processor on its name alone for someone else's sale (PAYPAL *SHOP is not PayPal; a store
      // fronting an unknown developer is the processor fallback below).
      const prefix = descriptor.prefixTokens.join('');
      this.exactRun(
        [...descriptor.prefixTokens, ...descriptor.tokens],
        descriptor.prefixTokens.length + descriptor.merchantTokens.length,
        descriptor.country,
        (brand, confidence, on, text) => {
          const own = processor !== null && (this.brands[brand] as Brand).domain === processor.domain;
          if (!own || matchTokens(canonicalTokens(text.replace(/\*/g, ' '))).join('') !== prefix)
            offer(brand, confidence, on, text);
        },
        false,
      );
    }
    return named;
  }

  /**
   * A name cut short or glued to more text, as facilitators print it (PayPal keeps 11 characters:
   * `PAYPAL *TICKETMASTE`, `PAYPAL *1STPHORMINT`; `GRUBHUBBUFFALOWILDWIN`): the first merchant word is
   * the start of an alias, or an alias starts it. Either way another name may be meant: medium at most.
   */
  private truncated(
    descriptor: NormalizedDescriptor,
    offer: (brand: number, confidence: number, on: CardChargeMatch['matched_on'], text: string) => void,
  ): void {
    // The whole name cut in its last word by the name field (`HUHOT MONGOLIAN G`, `THE ORIGINAL
    // PANCAKE H`): all its words start an alias of two words or more.
    const name =
      descriptor.merchantTokens[0] === 'THE' ? descriptor.merchantTokens.slice(1) : descriptor.merchantTokens;
    const whole = name.join('');
    if (name.length >= 2 && whole.length >= 10 && !digitsOnly.test(name.at(-1) as string)) {
      // Not a domain glued without its dots: what follows the name there is a TLD, not a cut word.
      const cut = this.cutOf(whole).filter((id) => !(this.aliases[id] as AliasEntry).text.includes('.'));
      const candidates = this.preferred(cut, descriptor.country);
      const brands = new Set(candidates.map((id) => (this.aliases[id] as AliasEntry).brand));
      if (brands.size === 1)
        for (const id of candidates) {
          const alias = this.aliases[id] as AliasEntry;
          offer(
            alias.brand,
            this.partial(alias.brand, 0.8, descriptor.country, name.length),
            alias.kind,
            alias.text,
          );
        }
    }
    const word = descriptor.merchantTokens[0];
    if (!word || word.length < 8 || /^\d+$/.test(word)) return;
    const cut = this.cutOf(word);
    const glued: number[] = [];
    for (let n = word.length - 1; n >= 5 && glued.length === 0; n--) {
      for (const id of this.spaced.get(word.slice(0, n)) ?? []) glued.push(id);
    }
    for (const [ids, base] of [
      [cut, 0.8],
      [glued, 0.78],
    ] as [number[], number][]) {
      const candidates = this.preferred(ids, descriptor.country);
      const brands = new Set(candidates.map((id) => (this.aliases[id] as AliasEntry).brand));
      if (brands.size === 0 || brands.size > 2) continue;
      for (const id of candidates) {
        const alias = this.aliases[id] as AliasEntry;
        const confidence = base - (brands.size > 1 ? 0.15 : 0);
        offer(alias.brand, this.partial(alias.brand, confidence, descriptor.country), alias.kind, alias.text);
      }
    }
  }

  /** Aliases (at most four) that start with `word` and go on: the name `word` cut short. */
  private cutOf(word: string): number[] {
    const list = this.sortedSquashed;
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((list[mid] as [string, number])[0] < word) lo = mid + 1;
      else hi = mid;
    }
    const cut: number[] = [];
    for (let i = lo; i < list.length && cut.length <= 3; i++) {
      const [squashed, id] = list[i] as [string, number];
      if (!squashed.startsWith(word)) break;
      if (squashed.length > word.length) cut.push(id);
    }
    return cut;
  }

  /** A partial match on an open-data brand stands only where the brand operates. */
  private partial(index: number, confidence: number, country: string | null, words = 1): number {
    if (this.tier[index] === 0) return confidence;
    const operates = this.operatesIn(index, country);
    if (operates === true) return Math.min(confidence, PARTIAL_MORE);
    if (operates === false) return confidence - INDEX_ELSEWHERE_PENALTY;
    return Math.min(confidence, words > 1 ? INDEX_UNPLACED_PARTIAL_WORDS : INDEX_UNPLACED_PARTIAL);
  }

  /** Whether an open-data brand operates in a country: true, false, or null when either is unknown. */
  private operatesIn(index: number, country: string | null): boolean | null {
    const countries = (this.brands[index] as Brand).countries;
    if (country === null || !countries || countries.length === 0) return null;
    return countries.some((c) => c === country || c === '001' || (c === '150' && europe.has(country)));
  }

  /** Open-data brands need more than a one-word name to be confident, and must operate where the line is. */
  private corroborated(index: number, confidence: number, words: number, country: string | null): number {
    if (this.tier[index] === 0) return confidence;
    const operates = this.operatesIn(index, country);
    if (operates === false) return confidence - INDEX_ELSEWHERE_PENALTY;
    if (operates === null && words === 1) return Math.min(confidence, INDEX_ONE_WORD);
    return confidence;
  }

  /**
   * The brand named anywhere in the line, as a run of its tokens or a glued prefix of one token. The
   * longest run at the start comes first, as before; the rest of the line is read only when that does
   * not explain the whole name. A run explains the words it covers: how much of the line that is,
   * weighed by how rare each word is among the registry's brands, sets the confidence of a partial
   * match (`medium` at most); a run preceded by a word that names something is never above `medium`,
   * unless that word is the brand's own billing entity (`billed_as`).
   */
  private exactRun(
    tokens: string[],
    merchantLength: number,
    country: string | null,
    offer: (brand: number, confidence: number, on: CardChargeMatch['matched_on'], text: string) => void,
    anywhere = true,
  ): boolean {
    const named = Math.min(merchantLength, tokens.length);
    const weights = new Float64Array(tokens.length);
    let total = 0;
    for (let j = 0; j < named; j++) {
      // The city's words in a store's name (`JUMBO UTRECHT`) name no one; the first word always does.
      const weight =
        j > 0 && this.cityWords.includes(tokens[j] as string) ? 0 : this.weight(tokens[j] as string);
      weights[j] = weight;
      total += weight;
    }
    let best = 0;
    const found = (brand: number, confidence: number, on: CardChargeMatch['matched_on'], text: string) => {
      if (confidence > best) best = confidence;
      offer(brand, confidence, on, text);
    };
    // Past the first word only when the start does not already name a brand outright.
    let started = false;
    for (let i = 0; i < (anywhere ? Math.max(1, named) : 1) && i < tokens.length; i++) {
      if (i > 0 && (best >= 0.95 || weights[i] === 0)) continue;
      if (this.runAt(tokens, i, named, weights, total, country, found)) {
        if (i === 0) started = true;
        continue;
      }
      this.gluedAt(tokens, i, named, weights, total, country, found);
    }
    return started;
  }

  /** The longest alias starting at token `i`; false when there is none. */
  private runAt(
    tokens: string[],
    i: number,
    named: number,
    weights: Float64Array,
    total: number,
    country: string | null,
    offer: (brand: number, confidence: number, on: CardChargeMatch['matched_on'], text: string) => void,
  ): boolean {
    for (let k = Math.min(tokens.length - i, this.maxAliasTokens); k >= 1; k--) {
      const head = k === 1 ? [tokens[i] as string] : tokens.slice(i, i + k);
      const spacedKey = k === 1 ? (tokens[i] as string) : head.join(' ');
      const ids = this.spaced.get(spacedKey);
      const squashedKey = k === 1 ? spacedKey : head.join('');
      const hits =
        ids ?? this.squashed.get(squashedKey) ?? (k > 1 ? this.spaced.get(squashedKey) : undefined);
      if (!hits) continue;
      this.offerRun(hits, tokens, i, k, 1, false, named, weights, total, country, !ids, offer);
      return true;
    }
    return false;
  }

  /**
   * A brand glued to more text in one token (`WIDGETLYUSA`, `1STPHORMINT`, `U-HAULKINGS` read as `U
   * HAULKINGS`): the longest alias of five characters or more that starts the token (or a one- or
   * two-letter token and the next, which a hyphen split).
   */
  private gluedAt(
    tokens: string[],
    i: number,
    named: number,
    weights: Float64Array,
    total: number,
    country: string | null,
    offer: (brand: number, confidence: number, on: CardChargeMatch['matched_on'], text: string) => void,
  ): void {
    const first = tokens[i] as string;
    const span = first.length <= 2 && i + 1 < named ? 2 : 1;
    const word = span === 2 ? first + (tokens[i + 1] as string) : first;
    if (word.length < 6 || digitsOnly.test(word)) return;
    for (let n = word.length - 1; n >= 5; n--) {
      if (span === 2 && n <= first.length) break;
      const prefix = word.slice(0, n);
      const hits = this.spaced.get(prefix) ?? this.squashed.get(prefix);
      if (!hits) continue;
      const tail = word.slice(n);
      // The tail is a legal form or country (nothing), or words the alias leaves unexplained.
      const explained = gluedTails.has(tail) ? 1 : n / word.length;
      this.offerRun(hits, tokens, i, span, explained, true, named, weights, total, country, false, offer);
      return;
    }
  }

  /**
   * Offers the brands of an alias found at tokens `i` to `i + k`, of which the last is explained to
   * the share `lastExplained` (a glued prefix explains part of its token, all of it before a legal or
   * country tail).
   */
  private offerRun(
    hits: number[],
    tokens: string[],
    i: number,
    k: number,
    lastExplained: number,
    glued: boolean,
    named: number,
    weights: Float64Array,
    total: number,
    country: string | null,
    squashedOnly: boolean,
    offer: (brand: number, confidence: number, on: CardChargeMatch['matched_on'], text: string) => void,
  ): void {
    let before = 0;
    for (let j = 0; j < i; j++) before += weights[j] as number;
    let inside = 0;
    for (let j = i; j < i + k && j < named; j++)
      inside += (weights[j] as number) * (j === i + k - 1 ? lastExplained : 1);
    let after = 0;
    let unexplained = 0;
    for (let j = i + k; j < named; j++) {
      after += weights[j] as number;
      if ((weights[j] as number) > 0) unexplained++;
    }
    for (let j = 0; j < i; j++) if ((weights[j] as number) > 0) unexplained++;
    const candidates = this.preferred(hits, country);
    const ambiguous = new Set(candidates.map((id) => this.aliases[id]?.brand)).size > 1;
    let rarity = 0;
    for (let j = i; j < i + k; j++)
      rarity += (this.idf.get(tokens[j] as string) ?? this.maxWeight) / this.maxWeight;
    rarity /= k;
    const length = tokens.slice(i, i + k).join('').length;
    for (const id of [...candidates].sort((a, b) => this.rank(a) - this.rank(b))) {
      const alias = this.aliases[id] as AliasEntry;
      // Words before the name that are the brand's own billing entity explain themselves.
      const billed = before > 0 && this.billedAs(alias.brand, tokens.slice(0, i));
      const rest = (billed ? 0 : before) + (alias.open && before === 0 ? 0 : after);
      const left = rest === 0 ? 0 : unexplained;
      let confidence: number;
      if (left === 0 && lastExplained === 1) {
        confidence = glued ? GLUED_TAIL : billed ? BILLED_AS : 0.99;
        if (squashedOnly) confidence -= 0.02;
        if (ambiguous) confidence -= 0.15;
        offer(alias.brand, this.corroborated(alias.brand, confidence, k, country), alias.kind, alias.text);
        continue;
      }
      // Merchant words the alias leaves unexplained ("DELTA" in "DELTA DENTAL INS"): another name that
      // contains this one, so never above medium, and less the less of the line it explains.
      // At the start of the line the words after a name are most often its location or product
      // (`KOHLS MENOMONEE`); inside the line, or glued, it is only as good as the share it explains.
      if (before === 0 && !glued) confidence = left === 1 ? PARTIAL_ONE : PARTIAL_MORE;
      else confidence = Math.min(INSIDE_CAP, INSIDE_BASE + INSIDE_SPAN * (total > 0 ? inside / total : 1));
      // A one-word name many brands share (UNITED, LIBERTY: a dozen or more) among other words may be
      // any of them.
      if (k === 1 && rarity < COMMON_RARITY) confidence -= COMMON_WORDS * (1 - rarity);
      // `CROWN & ANCHOR`: a one-word name goes on after the run.
      if (k === 1 && this.joined.includes(i + k)) confidence = Math.min(confidence, 0.6);
      // Words between the name and a legal form are another company's name (`ACME PLUMBING LLC`).
      if (this.namesAnotherCompany(tokens, i + k, named, weights)) confidence = Math.min(confidence, 0.6);
      // Words joined by `&` count as one (`DICKS CLOTHING&SPORTNG`).
      let words = left;
      for (const j of this.joined) if (j >= i + k && j < named) words--;
      if (length <= 3 || (k === 1 && length <= 5 && words > 1)) confidence = Math.min(confidence, 0.6);
      if (squashedOnly) confidence -= 0.02;
      if (ambiguous) confidence -= 0.15;
      offer(alias.brand, this.partial(alias.brand, confidence, country, k), alias.kind, alias.text);
    }
  }

  /** A named word after the run, then a legal form: the run is part of a longer company name. */
  private namesAnotherCompany(tokens: string[], from: number, named: number, weights: Float64Array): boolean {
    let words = 0;
    for (let j = from; j < named; j++) {
      if (companyForms.has(tokens[j] as string)) return words > 0;
      if ((weights[j] as number) > 0) words++;
    }
    return false;
  }

  /** Whether these tokens are one of the brand's billing entities, as its registry entry records them. */
  private billedAs(index: number, tokens: readonly string[]): boolean {
    const entities = (this.brands[index] as Brand).billed_as;
    if (!entities || entities.length === 0) return false;
    const squashed = tokens.join('');
    return entities.some((e) => matchTokens(canonicalTokens(e.name)).join('') === squashed);
  }

  /** How much a merchant word says about who the merchant is: nothing for fillers, numbers and letters. */
  private weight(token: string): number {
    if (token.length <= 1 || filler.has(token) || digitsOnly.test(token)) return 0;
    return this.idf.get(token) ?? this.maxWeight;
  }

  /**
   * Near spellings of the first one to three merchant tokens. Candidates come from the trigram index
   * with the q-gram lemma (a string within d edits shares all but 3d of its trigrams) and prefix
   * filtering (such a string appears in one of the 3d+1 rarest posting lists), so only short posting
   * lists are scanned; survivors are checked by length, shared trigrams, then Levenshtein distance.
   */
  private fuzzy(
    descriptor: NormalizedDescriptor,
    offer: (brand: number, confidence: number, on: CardChargeMatch['matched_on'], text: string) => void,
  ): void {
    const counts = this.counts;
    const named = descriptor.merchantTokens.filter((t) => !filler.has(t)).length;
    for (let k = 1; k <= Math.min(descriptor.tokens.length, 3); k++) {
      const head = descriptor.tokens.slice(0, k).join('');
      // A near spelling of only part of the merchant's name is a different name: medium at most.
      const cap = k >= named ? 0.9 : FUZZY_PARTIAL;
      if (head.length < 4) continue;
      const budget = head.length >= 10 ? 2 : 1;
      const lists = [...new Set(trigramsOf(head))]
        .map((gram) => this.trigrams.get(head[0] + gram) ?? EMPTY)
        .sort((a, b) => a.length - b.length);
      const need = Math.max(1, lists.length - 3 * budget);
      const scanned = lists.length - need + 1;

      const touched: number[] = [];
      const lengths = this.lengths;
      let work = 0;
      for (let l = 0; l < scanned && work < FUZZY_SCAN_LIMIT; l++) {
        const ids = lists[l] as Int32Array;
        work += ids.length;
        for (let i = 0; i < ids.length; i++) {
          const id = ids[i] as number;
          if (Math.abs((lengths[id] as number) - head.length) > budget) continue;
          if (counts[id] === 0) touched.push(id);
          counts[id] = (counts[id] as number) + 1;
        }
      }
      for (const id of touched) {
        let shared = counts[id] as number;
        counts[id] = 0;
        for (let l = scanned; l < lists.length && shared < need; l++) {
          if (contains(lists[l] as Int32Array, id)) shared++;
        }
        if (shared < need) continue;
        const alias = this.aliases[id] as AliasEntry;
        const similarity = 1 - distance(head, alias.squashed) / Math.max(head.length, alias.squashed.length);
        if (similarity < FUZZY_MIN_SIMILARITY) continue;
        const confidence = Math.min(cap, similarity * 0.92);
        if (this.tier[alias.brand] === 0) offer(alias.brand, confidence, 'fuzzy', alias.text);
        // Tens of thousands of open-data names make near spellings of plain words common (MERCURY ->
        // Mercure): only a close one, of a brand that operates where the line was printed.
        else if (similarity >= 0.88 && this.operatesIn(alias.brand, descriptor.country) === true)
          offer(alias.brand, Math.min(FUZZY_PARTIAL, confidence), 'fuzzy', alias.text);
      }
    }
  }

  private rank(id: number): number {
    return kindRank[(this.aliases[id] as AliasEntry).kind];
  }

  /**
   * Of several brands with the same alias: the hand-curated ones if any, else the open-data ones that
   * operate in the line's country if any (A&W USA, not A&W Canada, for a line ending in a US state).
   */
  private preferred(hits: number[], country: string | null): number[] {
    const curated = hits.filter((id) => this.tier[(this.aliases[id] as AliasEntry).brand] === 0);
    if (curated.length > 0) return curated;
    if (country === null) return hits;
    const local = hits.filter(
      (id) => this.operatesIn((this.aliases[id] as AliasEntry).brand, country) === true,
    );
    return local.length > 0 ? local : hits;
  }

  private toMatch(
    index: number,
    confidence: number,
    on: CardChargeMatch['matched_on'],
    text: string,
    processor: Processor | null,
    country: string | null,
    printed?: string,
  ): CardChargeMatch {
    const brand = this.brands[index] as Brand;
    const rounded = Math.round(Math.max(0, Math.min(1, confidence)) * 100) / 100;
    const sites = this.regional.get(index);
    let domain = brand.domain;
    let alternates: string[] | undefined;
    if (sites) {
      // The site the line printed, else the line's country's, else the main one; the others listed.
      if (printed !== undefined) domain = printed;
      else if (country !== null) domain = sites.get(country) ?? brand.domain;
      alternates = [brand.domain, ...(brand.alternate_domains ?? [])].filter((d) => d !== domain);
    }
    return {
      brand: brand.name,
      domain,
      ...(alternates ? { alternate_domains: alternates } : {}),
      category: brand.category,
      confidence: rounded,
      level: levelOf(rounded),
      matched_on: on,
      matched_text: text,
      ...(processor ? { processor: processorOutput(processor) } : {}),
      contact: brand.contact,
      returns: brand.returns,
    };
  }

  private processorOnly(processor: Processor, domain: string, billedOnly: boolean): CardChargeMatch {
    const confidence = billedOnly ? 0.97 : 0.75;
    return {
      brand: processor.name,
      domain,
      category: 'other',
      confidence,
      level: levelOf(confidence),
      matched_on: 'processor',
      matched_text: processor.name,
      processor: processorOutput(processor),
      contact: {},
      returns: {},
    };
  }
}

function processorOutput(processor: Processor): ProcessorOutput {
  return {
    name: processor.name,
    domain: processor.domain,
    kind: processor.kind,
    merchant_of_record: processor.merchantOfRecord,
  };
}

/** Slots of the second-sight filter: a power of two, a few times the lines a cache keeps. */
const SIGHTINGS = 1 << 15;

/**
 * A bounded cache in two generations of at most `size` entries each: a key is looked up in both and
 * moved to the current one, and a full current generation becomes the previous one, dropping the
 * older. Dropping the oldest entry of one Map instead walks the deleted slots at its start on every
 * miss (V8 compacts a Map only when it grows), which made cache misses measurably slower.
 *
 * With `secondSight`, a key is kept only when it was offered before: a filter of recent keys' hashes
 * (TinyLFU's doorkeeper: one slot per hash, no objects) remembers the first offer. Two keys sharing
 * a slot only make one of them kept a sighting early or late.
 */
class Generations<V> {
  readonly #size: number;
  #current = new Map<string, V>();
  #previous = new Map<string, V>();
  readonly #sighted: Int32Array | null;

  constructor(size: number, options: { secondSight?: boolean } = {}) {
    this.#size = size;
    this.#sighted = options.secondSight ? new Int32Array(SIGHTINGS) : null;
  }

  get(key: string): V | undefined {
    const hit = this.#current.get(key);
    if (hit !== undefined) return hit;
    const old = this.#previous.get(key);
    if (old !== undefined) this.#keep(key, old);
    return old;
  }

  /** Keeps the value, unless this is the first offer of the key to a `secondSight` cache. */
  set(key: string, value: V): boolean {
    if (this.#sighted) {
      const hash = fnv1a(key);
      const slot = hash & (SIGHTINGS - 1);
      if (this.#sighted[slot] !== hash) {
        this.#sighted[slot] = hash;
        return false;
      }
    }
    this.#keep(key, value);
    return true;
  }

  #keep(key: string, value: V): void {
    if (this.#current.size >= this.#size) {
      this.#previous = this.#current;
      this.#current = new Map();
    }
    this.#current.set(key, value);
  }
}

/** 32-bit FNV-1a of a string's UTF-16 code units. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return hash | 0;
}

/** The merchant as the line names it; the processor's name when the line names no one else. */
function merchantOf(descriptor: NormalizedDescriptor): Merchant {
  return {
    name: descriptor.normalized || descriptor.tokens.join(' ') || descriptor.processor?.name || '',
    city: descriptor.city,
    region: descriptor.region,
    country: descriptor.country,
    phone: descriptor.phone,
    website_hint: descriptor.domains[0] ?? null,
  };
}

function push<K>(map: Map<K, number[]>, key: K, value: number): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/** Binary search in an ascending posting list. */
function contains(list: Int32Array, id: number): boolean {
  let lo = 0;
  let hi = list.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const value = list[mid] as number;
    if (value === id) return true;
    if (value < id) lo = mid + 1;
    else hi = mid - 1;
  }
  return false;
}

const digitsOnly = /^\d+$/;

/**
 * Which of the line's (folded) tokens followed `&` or `AND` in the line as printed: canonical tokens
 * drop a lone `&`, so the printed line says where a name went on (`CROWN & ANCHOR`).
 */
function joinedAt(charge: string, tokens: readonly string[]): readonly number[] {
  if (!charge.includes('&') && !/\band\b/i.test(charge)) return NONE_JOINED;
  const words = new Set<string>();
  for (const m of charge.toUpperCase().matchAll(/(?:&|\bAND\b)\s*([A-Z0-9'’]+)/g))
    for (const token of canonicalTokens(m[1] as string)) words.add(token);
  const at: number[] = [];
  tokens.forEach((token, j) => {
    if (j > 0 && words.has(token)) at.push(j);
  });
  return at;
}

/** First words of places' names that are rarely a brand's (`NEW` is: New Balance). */
const placeWords = new Set('SAN SANTA LOS LAS EL LA SAINT ST FORT FT'.split(' '));

/** A merchant part shaped like a place's name: `SANTA FE`, `FORT COLLINS`, `LAS VEGAS`. */
function placeShaped(tokens: readonly string[]): boolean {
  return tokens.length >= 2 && tokens.length <= 3 && placeWords.has(tokens[0] as string);
}

/** The reading with its tokens as matching compares them (`matchTokens`). */
function foldedReading(descriptor: NormalizedDescriptor): NormalizedDescriptor {
  const tokens = matchTokens(descriptor.tokens);
  const prefixTokens = matchTokens(descriptor.prefixTokens);
  if (tokens === descriptor.tokens && prefixTokens === descriptor.prefixTokens) return descriptor;
  return { ...descriptor, tokens, prefixTokens, merchantTokens: matchTokens(descriptor.merchantTokens) };
}

/**
 * Whether a domain printed on the line is the merchant's own: its label (`widgetly` of widgetly.co.uk)
 * is the name on the line spelled without spaces (`WIDGETLY`, `WIDGET LY`), starts with it, or is
 * how the name starts (`THEREALWORLD TI` and therealworld.ai); the processor's code counts as the
 * start of the name (`FLO*` and flosports.tv).
 */
export function labelAgrees(domain: string, descriptor: NormalizedDescriptor): boolean {
  const label = (domain.split('.')[0] ?? '').replace(/-/g, '').toUpperCase();
  if (label.length < 3) return false;
  const own =
    descriptor.merchantTokens[0] === 'THE' ? descriptor.merchantTokens.slice(1) : descriptor.merchantTokens;
  const names = descriptor.prefixTokens.length > 0 ? [own, [...descriptor.prefixTokens, ...own]] : [own];
  for (const name of names) {
    let squashed = '';
    for (const token of name) {
      squashed += token;
      if (squashed === label) return true;
      // The name goes on past the label (`THEREALWORLD TI`): a cut or a location after it.
      if (squashed.startsWith(label) && label.length >= 4) return true;
      if (!label.startsWith(squashed)) break;
      // The first words are how the label starts (`FLO` of flosports.tv, `MANY PETS` of manypetsinsurance).
      if (squashed.length >= 3 && squashed !== token) return true;
    }
    const first = name[0] ?? '';
    if (first.length >= 3 && label.startsWith(first)) return true;
  }
  return false;
}

/** A match on the line's own website, a domain the registry does not hold: `medium`, named by its domain. */
function lineWebsiteMatch(domain: string, processor: Processor | null): CardChargeMatch {
  return {
    brand: domain,
    domain,
    category: 'other',
    confidence: LINE_WEBSITE,
    level: levelOf(LINE_WEBSITE),
    matched_on: 'domain',
    matched_text: domain,
    ...(processor ? { processor: processorOutput(processor) } : {}),
    contact: {},
    returns: {},
    source: 'line',
  };
}

/**
 * Tokens as matching compares them, for the registry and the line alike: `&` and `AND` fold away
 * (`SMITH&CO` = `Smith & Co` = `SMITH AND CO`), since canonical tokens keep a glued `&` and drop a
 * lone one.
 */
export function matchTokens(tokens: readonly string[]): string[] {
  let plain = true;
  for (const t of tokens) if (t === 'AND' || t.includes('&')) plain = false;
  if (plain) return tokens as string[];
  const out: string[] = [];
  for (const t of tokens) {
    if (t === 'AND' && tokens.length > 1) continue;
    if (t.includes('&')) {
      for (const part of t.split('&')) if (part !== '') out.push(part);
    } else out.push(t);
  }
  return out;
}

function trigramsOf(text: string): string[] {
  if (text.length < 3) return [];
  const grams: string[] = [];
  for (let i = 0; i + 3 <= text.length; i++) grams.push(text.slice(i, i + 3));
  return grams;
}
