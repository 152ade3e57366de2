/**
 * Descriptor matching in process: first against the real shipped registry (curated brands.json plus the
 * open-data brand-index.json), reporting how long loading and indexing take and the heap they hold, then
 * against it grown to 100,000 brands with synthetic ones (pronounceable names, descriptor forms like real
 * ones). Reports p50/p99/max of single lookups over both statement-line corpora plus synthetic lines.
 */
import { readFileSync } from 'node:fs';
import { type Brand, loadBrands } from '../servers/features/charges/brand-registry.ts';
import { BrandMatcher } from '../servers/features/charges/matcher.ts';

// Syllables drawn like real brand names: consonant onsets, vowels, optional codas.
const onsets = [
  '',
  'b',
  'br',
  'c',
  'ch',
  'cl',
  'd',
  'dr',
  'f',
  'fl',
  'g',
  'gr',
  'h',
  'j',
  'k',
  'l',
  'm',
  'n',
  'p',
  'pl',
  'qu',
  'r',
  's',
  'sh',
  'sk',
  'sp',
  'st',
  't',
  'tr',
  'v',
  'w',
  'z',
];
const vowels = ['a', 'e', 'i', 'o', 'u', 'ai', 'ea', 'oo', 'y'];
const codas = ['', '', 'n', 'r', 'l', 'x', 'st', 'nd', 'ck', 'm', 'sh', 'th'];
const suffixes = [
  '',
  ' SHOP',
  ' STORE',
  ' MARKET',
  ' LABS',
  ' GOODS',
  ' CO',
  ' OUTFITTERS',
  ' DIGITAL',
  ' FOODS',
];

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

export function syntheticBrands(count: number, seed = 42): Brand[] {
  const random = rng(seed);
  const pick = <T>(list: T[]): T => list[Math.floor(random() * list.length)] as T;
  const brands: Brand[] = [];
  const seen = new Set<string>();
  while (brands.length < count) {
    const parts = 2 + Math.floor(random() * 2);
    let word = '';
    for (let i = 0; i < parts; i++) word += pick(onsets) + pick(vowels) + pick(codas);
    const name = `${word[0]?.toUpperCase()}${word.slice(1)}${pick(suffixes).toLowerCase()}`;
    const domain = `${word}${brands.length}.com`;
    if (seen.has(domain)) continue;
    seen.add(domain);
    const upper = name.toUpperCase();
    brands.push({
      name,
      domain,
      category: 'retail',
      regions: ['US'],
      descriptors: [upper, `${word.toUpperCase()}.COM`, `${upper.slice(0, 22)}*`],
      contact: {},
      returns: {},
    });
  }
  return brands;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] as number;
}

export interface RegistryLoad {
  brands: number;
  aliases: number;
  loadMs: number;
  indexMs: number;
  heapMb: number;
}

/** Load and index the real registry, timing each step and the heap it keeps. */
export function measureRegistryLoad(): { matcher: BrandMatcher; load: RegistryLoad } {
  globalThis.gc?.();
  const before = process.memoryUsage().heapUsed;
  const started = performance.now();
  const brands = loadBrands();
  const loaded = performance.now();
  const matcher = new BrandMatcher(brands);
  const indexed = performance.now();
  globalThis.gc?.();
  const heapMb = (process.memoryUsage().heapUsed - before) / 2 ** 20;
  return {
    matcher,
    load: {
      brands: brands.length,
      aliases: matcher.aliasCount,
      loadMs: loaded - started,
      indexMs: indexed - loaded,
      heapMb,
    },
  };
}

export interface MatchingResult {
  brands: number;
  aliases: number;
  indexMs: number;
  lookups: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

type CorpusCase = { line: string; domain: string | null };

function corpus(name: string): CorpusCase[] {
  return (
    JSON.parse(readFileSync(new URL(`../test/fixtures/${name}`, import.meta.url), 'utf8')) as {
      cases: CorpusCase[];
    }
  ).cases;
}

export interface CorpusAccuracy {
  fixture: string;
  lines: number;
  /** Lines whose expected brand comes first at medium or above (for a null label: nothing at medium). */
  top1: number;
  /** Lines answered with no match at all. */
  empty: number;
  /** Lines whose best match is high or very_high and not the expected brand. */
  confidentlyWrong: number;
}

/**
 * How the registry alone reads both statement-line corpora: top-1 as the coverage tests count it,
 * the share of lines answered `[]`, and confident false matches (issue 32, "How it is checked").
 */
export function measureCorpora(matcher: BrandMatcher): CorpusAccuracy[] {
  return ['descriptors.json', 'descriptors-longtail.json'].map((fixture) => {
    const cases = corpus(fixture);
    let top1 = 0;
    let empty = 0;
    let confidentlyWrong = 0;
    for (const c of cases) {
      const matches = matcher.lookupUncached(c.line).matches;
      const best = matches[0];
      if (!best) empty++;
      const right =
        c.domain === null
          ? !matches.some((m) => m.confidence >= 0.7)
          : best?.domain === c.domain && best.confidence >= 0.7;
      if (right) top1++;
      if (best && best.confidence >= 0.85 && best.domain !== c.domain) confidentlyWrong++;
    }
    return { fixture, lines: cases.length, top1, empty, confidentlyWrong };
  });
}

/** One fixture's accuracy as the bench prints it. */
export function corpusLine(a: CorpusAccuracy): string {
  const pct = (n: number) => `${((100 * n) / a.lines).toFixed(1)}%`;
  return (
    `${a.fixture}: ${a.lines} lines, top-1 ${a.top1} (${pct(a.top1)}), answered [] ${a.empty} (${pct(a.empty)}), ` +
    `confident false matches ${a.confidentlyWrong}`
  );
}

function corpusLines(): string[] {
  return ['descriptors.json', 'descriptors-longtail.json'].flatMap((name) =>
    (
      JSON.parse(readFileSync(new URL(`../test/fixtures/${name}`, import.meta.url), 'utf8')) as {
        cases: { line: string }[];
      }
    ).cases.map((c) => c.line),
  );
}

function timeLookups(matcher: BrandMatcher, lines: string[]): number[] {
  for (const line of lines) matcher.lookupUncached(line); // warm up
  const samples: number[] = [];
  for (let round = 0; round < 5; round++) {
    for (const line of lines) {
      const t = performance.now();
      matcher.lookupUncached(line);
      samples.push(performance.now() - t);
    }
  }
  return samples.sort((a, b) => a - b);
}

/** Lookups over both corpora against the real registry, as shipped. */
export function measureRealRegistry(): {
  load: RegistryLoad;
  result: MatchingResult;
  corpora: CorpusAccuracy[];
} {
  const { matcher, load } = measureRegistryLoad();
  const samples = timeLookups(matcher, corpusLines());
  return {
    load,
    corpora: measureCorpora(matcher),
    result: {
      brands: load.brands,
      aliases: load.aliases,
      indexMs: load.indexMs,
      lookups: samples.length,
      p50Ms: percentile(samples, 0.5),
      p99Ms: percentile(samples, 0.99),
      maxMs: samples.at(-1) as number,
    },
  };
}

export function measureMatching(total = 100_000): MatchingResult {
  const shipped = loadBrands();
  const synthetic = syntheticBrands(total - shipped.length);
  const started = performance.now();
  const matcher = new BrandMatcher([...shipped, ...synthetic]);
  const indexMs = performance.now() - started;

  const random = rng(7);
  const lines: string[] = corpusLines();
  for (let i = 0; i < 2000; i++) {
    const brand = synthetic[Math.floor(random() * synthetic.length)] as Brand;
    const descriptor = brand.descriptors[0] as string;
    const variant = i % 3;
    if (variant === 0) lines.push(`POS PURCHASE ${descriptor} #${1000 + i} SPRINGFIELD IL`);
    else if (variant === 1) lines.push(`SQ *${descriptor} 11/0${1 + (i % 9)}`);
    else
      lines.push(
        `${descriptor.slice(0, 3)}${descriptor.slice(4)} 800-555-0${String(i % 1000).padStart(3, '0')} CA`,
      );
  }

  const samples = timeLookups(matcher, lines);
  return {
    brands: matcher.brands.length,
    aliases: matcher.aliasCount,
    indexMs,
    lookups: samples.length,
    p50Ms: percentile(samples, 0.5),
    p99Ms: percentile(samples, 0.99),
    maxMs: samples.at(-1) as number,
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { load, result, corpora } = measureRealRegistry();
  const f = (n: number, d = 0) => n.toFixed(d);
  process.stdout.write(
    `real registry: ${load.brands} brands, ${load.aliases} aliases; loaded in ${f(load.loadMs)} ms, indexed in ` +
      `${f(load.indexMs)} ms, ${f(load.heapMb, 1)} MB heap; ${result.lookups} lookups: p50 ${f(result.p50Ms, 3)} ms, ` +
      `p99 ${f(result.p99Ms, 3)} ms, max ${f(result.maxMs, 2)} ms\n`,
  );
  for (const a of corpora) process.stdout.write(`${corpusLine(a)}\n`);
  const grown = measureMatching(100_000);
  process.stdout.write(
    `grown to ${grown.brands} brands, ${grown.aliases} aliases, indexed in ${f(grown.indexMs)} ms; ` +
      `${grown.lookups} lookups: p50 ${f(grown.p50Ms, 3)} ms, p99 ${f(grown.p99Ms, 3)} ms, max ${f(grown.maxMs, 2)} ms\n`,
  );
}
