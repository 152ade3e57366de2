/**
 * Live resolution measured on a local web that behaves like the real one (issue 32, "How it is
 * checked"): top-1 of the long-tail statement lines with live resolution off and on, with and without
 * a search provider, through `GET /agent` of a running service.
 *
 * The local web (one HTTP server on loopback, every name answered by a DNS server on loopback):
 * - each brand the long-tail fixture names has its own site at its domain - the name the registry
 *   holds for it (else its domain's label), in `<title>` with a tagline, `og:site_name` and a JSON-LD
 *   Organization with its legal name and its country (the domain's country, else the one its lines
 *   were printed in); never the lines' words, cities or store numbers;
 * - a same-name business elsewhere for each of them and for each local merchant: the same name on
 *   the country's other domain (`.co.uk` for a US brand, `.com` for the others) with an address in
 *   another country;
 * - a review site and a business directory whose home pages list businesses;
 * - a search engine (SearXNG's JSON) that ranks by the query's words against each page's name and
 *   text, puts the review and directory pages first when they list a matching business, and knows
 *   nothing of the fixture's answers.
 * Judged as the coverage test judges the registry (`descriptor-accuracy.ts`): the right brand first
 * at medium or above, or nothing at medium for a line with domain null; confident false = high or
 * very_high on another brand.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { openDatabase } from '../db/database.ts';
import { migrateToLatest } from '../db/migrate.ts';
import { countryOfDomain, loadBrands } from '../servers/features/charges/brand-registry.ts';
import { BrandMatcher } from '../servers/features/charges/matcher.ts';
import { canonicalTokens } from '../servers/features/charges/normalize.ts';
import { type RunningService, startService } from '../servers/server.ts';
import { startDnsServer } from '../test/helpers/dns-server.ts';
import {
  type AccuracyRow,
  corpusKinds,
  type DescriptorCase,
  formatAccuracy,
  loadCorpus,
} from './descriptor-accuracy.ts';

interface Site {
  domain: string;
  name: string;
  legalName: string;
  country: string | null;
  /** Businesses a review or directory page lists; empty for a business's own site. */
  lists: string[];
}

const html = (s: string) => s.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);

function pageOf(site: Site): string {
  if (site.lists.length > 0) {
    const items = site.lists.map((name, i) => ({
      '@type': 'ListItem',
      position: i + 1,
      item: { '@type': 'LocalBusiness', name },
    }));
    return `<!doctype html><html><head><title>${html(site.name)} - reviews of local businesses</title>
<script type="application/ld+json">${JSON.stringify({ '@context': 'https://schema.org', '@type': 'ItemList', itemListElement: items })}</script></head>
<body><h1>${html(site.name)}</h1><p>Write a review. Claim your business.</p><ul>${site.lists.map((n) => `<li>${html(n)}</li>`).join('')}</ul></body></html>`;
  }
  const org = {
    '@context': 'https://schema.org',
    '@type': 'Organization',
    name: site.name,
    legalName: site.legalName,
    url: `https://${site.domain}/`,
    ...(site.country ? { address: { '@type': 'PostalAddress', addressCountry: site.country } } : {}),
  };
  return `<!doctype html><html><head><title>${html(site.name)} | Official site</title>
<meta property="og:site_name" content="${html(site.name)}">
<script type="application/ld+json">${JSON.stringify(org)}</script></head>
<body><header><a href="/">${html(site.name)}</a></header><main><h1>Welcome to ${html(site.name)}</h1>
<p>Shop online or visit us.</p></main><footer>&copy; 2026 ${html(site.legalName)}. All rights reserved.</footer></body></html>`;
}

/**
 * The names the fixture's brands that the registry does not hold give themselves on their own sites
 * (their titles and logos, as of 2026), and the companies some are run by (footers, imprints).
 */
const siteNames: Record<string, string> = {
  'aramark.com': 'Aramark',
  'lamars.com': "LaMar's Donuts",
  'manypets.com': 'ManyPets',
  'pimsleur.com': 'Pimsleur',
  'luggagehero.com': 'LuggageHero',
  'dailywire.com': 'The Daily Wire',
  'homeagain.com': 'HomeAgain',
  'getmagic.com': 'Magic',
  'flosports.tv': 'FloSports',
  'pinotspalette.com': "Pinot's Palette",
  '1stphorm.com': '1st Phorm',
  'caesars.com': 'Caesars Entertainment',
  'freshnlean.com': "Fresh N' Lean",
  'yandy.com': 'Yandy',
  'genesishealthclubs.com': 'Genesis Health Clubs',
  'afw.com': 'American Furniture Warehouse',
  'chebahut.com': 'Cheba Hut',
  'jerrysartarama.com': "Jerry's Artarama",
  'lazparking.com': 'LAZ Parking',
  'lyriccinema.com': 'The Lyric',
  'usconcealedcarry.com': 'USCCA',
  'therealworld.ai': 'The Real World',
  'meowwolf.com': 'Meow Wolf',
  'dashlane.com': 'Dashlane',
  'fogodechao.com': 'Fogo de Chão',
  'creamistry.com': 'Creamistry',
  'wealthfront.com': 'Wealthfront',
  'etrade.com': 'E*TRADE',
  'myfonts.com': 'MyFonts',
  'wahl.co.uk': 'Wahl UK',
  'eonenergy.com': 'E.ON Next',
  'ealing.gov.uk': 'Ealing Council',
  'barclays.co.uk': 'Barclays',
  'ironman.com': 'IRONMAN',
  'airnewzealand.co.nz': 'Air New Zealand',
  'cobbandco.co.nz': 'Cobb & Co',
  'eventcinemas.co.nz': 'Event Cinemas',
  'fergburger.com': 'Fergburger',
  'hallensteins.com': 'Hallensteins',
  'intercity.co.nz': 'InterCity',
  'nzpost.co.nz': 'NZ Post',
  'peteralexander.co.nz': 'Peter Alexander',
  'porkbun.com': 'Porkbun',
  'polynesianspa.co.nz': 'Polynesian Spa',
  'skyline.co.nz': 'Skyline',
  'southerncross.co.nz': 'Southern Cross Health Insurance',
  'coffeeclub.co.nz': 'The Coffee Club',
  'trademe.co.nz': 'Trade Me',
  'super.com': 'Super.com',
};
const legalNames: Record<string, string> = {
  'usconcealedcarry.com': 'Delta Defense, LLC',
  'caesars.com': 'Caesars Entertainment, Inc.',
  'ealing.gov.uk': 'London Borough of Ealing',
  'wahl.co.uk': 'Wahl (UK) Ltd',
  'skyline.co.nz': 'Skyline Enterprises Limited',
  'shein.com': 'Roadget Business Pte. Ltd.',
  'eonenergy.com': 'E.ON Next Energy Limited',
  'getmagic.com': 'Magic Dedicated, Inc.',
};

/** The local web's sites: the brands' own, their namesakes elsewhere, a review site and a directory. */
function buildWeb(cases: DescriptorCase[], matcher: BrandMatcher): Map<string, Site> {
  const sites = new Map<string, Site>();
  const lineCountries = new Map<string, string>();
  for (const c of cases) {
    const country = matcher.lookup(c.line).merchant.country;
    if (c.domain && country && !lineCountries.has(c.domain)) lineCountries.set(c.domain, country);
  }
  const names: string[] = [];
  for (const domain of new Set(cases.flatMap((c) => (c.domain ? [c.domain] : [])))) {
    const name = matcher.brandByDomain(domain)?.name ?? siteNames[domain] ?? domain;
    const country = countryOfDomain(domain) ?? lineCountries.get(domain) ?? null;
    const legalName = legalNames[domain] ?? `${name} ${country === 'US' ? 'Inc.' : 'Ltd'}`;
    sites.set(domain, { domain, name, legalName, country, lists: [] });
    names.push(name);
    const elsewhere = country === 'GB' ? 'AU' : 'GB';
    const namesake = `${(domain.split('.')[0] ?? domain).replace(/[^a-z0-9-]/g, '')}.${elsewhere === 'GB' ? 'co.uk' : 'com.au'}`;
    if (!sites.has(namesake)) {
      sites.set(namesake, {
        domain: namesake,
        name,
        legalName: `${name} Ltd`,
        country: elsewhere,
        lists: [],
      });
    }
  }
  // Local merchants have namesakes abroad too (a "Petra Grill" in Sydney for a Fort Collins line).
  for (const c of cases) {
    if (c.domain !== null || c.kind === 'negative') continue;
    const merchant = matcher.lookup(c.line).merchant.name;
    const words = canonicalTokens(merchant ?? '').filter((t) => /^[A-Z]{3,}$/.test(t));
    if (words.length < 2) continue;
    const domain = `${words.join('').toLowerCase()}.com.au`;
    const name = words.map((w) => w.charAt(0) + w.slice(1).toLowerCase()).join(' ');
    if (!sites.has(domain))
      sites.set(domain, { domain, name, legalName: `${name} Pty Ltd`, country: 'AU', lists: [] });
    names.push(name);
  }
  sites.set('reviewhub.com', {
    domain: 'reviewhub.com',
    name: 'ReviewHub',
    legalName: '',
    country: null,
    lists: names,
  });
  sites.set('citylistings.net', {
    domain: 'citylistings.net',
    name: 'City Listings',
    legalName: '',
    country: null,
    lists: names,
  });
  return sites;
}

/**
 * A search engine over the local web: a site scores by the share of the query's words its name
 * holds (a word of four letters or more may match the start of a name's word: lines cut names);
 * review and directory pages come first when a business they list scores.
 */
function searchOf(sites: Map<string, Site>) {
  const own = [...sites.values()].filter((s) => s.lists.length === 0);
  const wordsOf = (name: string) => canonicalTokens(name);
  const score = (query: string[], name: string) => {
    const words = wordsOf(name);
    const squashed = words.join('');
    const agrees = (q: string, w: string) =>
      q === w || (q.length >= 4 && w.length >= 4 && (q.startsWith(w) || w.startsWith(q)));
    const hits = query.filter(
      (q) => words.some((w) => agrees(q, w)) || (q.length >= 4 && squashed.startsWith(q)),
    );
    const named = words.filter((w) => query.some((q) => agrees(q, w)) || query.join('').startsWith(squashed));
    if (query.length === 0 || words.length === 0) return 0;
    if (!hits.some((q) => q.length >= 3) && named.length < words.length) return 0;
    // The share of the query the name explains, or of the name the query holds (a long line, a short name).
    return Math.max(hits.length / query.length, named.length / words.length);
  };
  return (q: string) => {
    const query = canonicalTokens(q);
    const ranked = own
      // Search engines index the page's footer too: its company's name finds it.
      .map((s) => ({ s, score: Math.max(score(query, s.name), score(query, s.legalName)) }))
      .filter((r) => r.score >= 0.5)
      .sort((a, b) => b.score - a.score);
    const hits = ranked.slice(0, 3).map((r) => ({ url: `https://${r.s.domain}/`, title: r.s.name }));
    if (hits.length === 0) return [];
    // Review and directory pages rank above small businesses' own sites, as on the real web.
    return [
      { url: `https://reviewhub.com/biz/${encodeURIComponent(q)}`, title: `${q} - ReviewHub` },
      { url: `https://citylistings.net/listing/${encodeURIComponent(q)}`, title: `${q} | City Listings` },
      ...hits,
    ];
  };
}

async function startWeb(sites: Map<string, Site>) {
  const search = searchOf(sites);
  const server = http.createServer((req, res) => {
    const host = (req.headers.host ?? '').replace(/:\d+$/, '').replace(/^www\./, '');
    const url = new URL(req.url ?? '/', 'http://local');
    if (url.pathname === '/search') {
      const q = url.searchParams.get('q') ?? '';
      const results = search(q).map((r) => ({ ...r, content: '', engine: 'local' }));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ query: q, number_of_results: results.length, results }));
      return;
    }
    const site = sites.get(host);
    if (!site || url.pathname !== '/') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(pageOf(site));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export type LiveMode = 'off' | 'on, no search provider' | 'on, search provider';

export interface LiveAccuracy {
  mode: LiveMode;
  rows: AccuracyRow[];
  misses: string[];
}

const confident = (level: string | undefined) => level === 'high' || level === 'very_high';

interface Answer {
  matches: { domain: string; confidence: number; level: string; alternate_domains?: string[] }[];
}

function judged(kase: DescriptorCase, answer: Answer) {
  const first = answer.matches[0];
  const same =
    first !== undefined &&
    (first.domain === kase.domain ||
      (kase.domain !== null && !!first.alternate_domains?.includes(kase.domain)));
  const right =
    kase.domain === null ? !answer.matches.some((m) => m.confidence >= 0.7) : same && first.confidence >= 0.7;
  return {
    right,
    empty: answer.matches.length === 0,
    confidentFalse: first !== undefined && confident(first.level) && !same,
  };
}

export async function measureLiveAccuracy(options: { only?: LiveMode[] } = {}): Promise<LiveAccuracy[]> {
  const cases = loadCorpus('descriptors-longtail.json');
  const kinds = corpusKinds('descriptors-longtail.json');
  const brands = new BrandMatcher(loadBrands());
  const sites = buildWeb(cases, brands);
  const web = await startWeb(sites);
  const dns = await startDnsServer();
  for (const domain of sites.keys()) {
    dns.a.set(domain, ['127.0.0.1']);
    dns.a.set(`www.${domain}`, ['127.0.0.1']);
  }
  const modes: LiveMode[] = options.only ?? ['off', 'on, no search provider', 'on, search provider'];
  const out: LiveAccuracy[] = [];
  try {
    for (const mode of modes) out.push(await measureMode(mode, cases, kinds, brands, web.port, dns.address));
  } finally {
    await dns.close();
    await web.close();
  }
  return out;
}

async function measureMode(
  mode: LiveMode,
  cases: DescriptorCase[],
  kinds: string[],
  brands: BrandMatcher,
  port: number,
  dnsAddress: string,
): Promise<LiveAccuracy> {
  const dir = mkdtempSync(path.join(tmpdir(), 'agent-service-bench-live-'));
  const database = openDatabase({ url: null, sqliteFile: path.join(dir, 'service.db') });
  await migrateToLatest(database.db);
  let service: RunningService | undefined;
  try {
    service = await startService({
      env: {},
      database,
      brands,
      log: pino({ level: 'silent' }),
      background: false,
      overrides: {
        port: 0,
        host: '127.0.0.1',
        data_dir: dir,
        'scanner.allow_private_networks': true,
        'charges.live_resolution.enabled': mode !== 'off',
        'charges.live_resolution.time_budget_ms': 30_000,
        'charges.live_resolution.home_page_scheme': 'http',
        'charges.live_resolution.home_page_port': port,
        'charges.live_resolution.dns_servers': [dnsAddress],
        ...(mode === 'on, search provider'
          ? { 'research.search.searxng_url': `http://127.0.0.1:${port}` }
          : {}),
      },
    });
    const verdicts: (ReturnType<typeof judged> & { kase: DescriptorCase; got: string })[] = [];
    for (const kase of cases) {
      const res = await fetch(`${service.config.base_url}/agent?charge=${encodeURIComponent(kase.line)}`);
      const answer = (await res.json()) as Answer;
      const first = answer.matches[0];
      let got = first ? `${first.domain} ${first.confidence}` : '[]';
      if (process.env.LIVE_DEBUG && !judged(kase, answer).right) {
        // Why: every candidate's outcome, as the resolver stored it.
        const rows = await database.db
          .selectFrom('resolved_merchants')
          .select(['name_key', 'evidence'])
          .execute();
        const key = (answer as { merchant?: { name?: string } }).merchant?.name ?? '';
        const row = rows.find((r) => r.name_key === canonicalTokens(key).join(''));
        if (row)
          got += ` ${JSON.stringify((JSON.parse(row.evidence) as { candidates: unknown }).candidates)}`;
      }
      verdicts.push({ ...judged(kase, answer), kase, got });
    }
    const row = (kind: string, vs: typeof verdicts): AccuracyRow => ({
      kind,
      lines: vs.length,
      top1: vs.filter((v) => v.right).length,
      empty: vs.filter((v) => v.empty).length,
      confidentFalse: vs.filter((v) => v.confidentFalse).length,
    });
    return {
      mode,
      rows: [
        ...kinds.map((k) =>
          row(
            k,
            verdicts.filter((v) => v.kase.kind === k),
          ),
        ),
        // The lines added for issue 32 (every kind but the first set).
        row(
          'issue 32 kinds',
          verdicts.filter((v) => v.kase.kind !== 'first-set'),
        ),
        row('all', verdicts),
      ],
      misses: verdicts
        .filter((v) => !v.right)
        .map((v) => `${v.kase.line} | want ${v.kase.domain} | got ${v.got}`),
    };
  } finally {
    await service?.stop();
    await database.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Prints the table of each mode (LIVE_MODES=off,... to choose; LIVE_MISSES=1 lists the misses, LIVE_DEBUG=1 why). */
export async function printLiveAccuracy(): Promise<void> {
  const only = process.env.LIVE_MODES?.split(',') as LiveMode[] | undefined;
  for (const result of await measureLiveAccuracy(only ? { only } : {})) {
    process.stdout.write(
      `\nLong-tail lines, live resolution ${result.mode}:\n${formatAccuracy(result.rows)}`,
    );
    if (process.env.LIVE_MISSES) process.stdout.write(`${result.misses.join('\n')}\n`);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await printLiveAccuracy();
