/**
 * What one fetched page says about a person of the name asked for: whether it is about them at
 * all, the statements that name them (and the pronoun sentences right after), schema.org JSON-LD
 * `Person` nodes (jobTitle, worksFor, affiliation, alumniOf, memberOf, address, sameAs, url),
 * organisations and places named beside them, and dated statements. Pure: the page is given.
 */
import * as cheerio from 'cheerio';
import { asArray, type JsonLdWalk, jsonLdNodesOf } from '../../../page-reading.ts';
import { normalizeName } from '../../scans/collectors/entity.ts';

export interface PageEvidence {
  url: string;
  title: string | null;
  /** The page names the person (the full name, in its title or text). */
  about_person: boolean;
  /** Sentences that state something about the person. */
  statements: string[];
  roles: string[];
  organizations: { name: string; role: string | null }[];
  locations: string[];
  /** Dated statements: ISO date or year, and the sentence. */
  dated: { date: string; event: string }[];
  /** Profiles and sites the page links the person to (JSON-LD sameAs and url). */
  links: string[];
  /** A page about the person (a profile: JSON-LD Person, or a known profile host). */
  profile: boolean;
  publication: boolean;
}

const MONTHS = [
  'january',
  'february',
  'march',
  'april',
  'may',
  'june',
  'july',
  'august',
  'september',
  'october',
  'november',
  'december',
];

/** Organisation names end with one of these words ("Acme Robotics", "Coastal University"). */
const orgTail =
  '(?:University|College|Institute|School|Academy|Hospital|Clinic|Robotics|Automation|Labs?|Laboratory|Inc\\.?|LLC|Ltd\\.?|GmbH|Corporation|Corp\\.?|Company|Group|Foundation|Society|Agency|Bank|Partners|Technologies|Systems|Software|Studios?|Museum|Council|Association|Ventures|Capital|Media|Press|Consulting|Industries|Holdings)';
const orgPattern = new RegExp(`\\b((?:[A-Z][\\p{L}&'.-]*\\s+){1,4}${orgTail})(?![\\p{L}])`, 'gu');
const rolePattern =
  /\b((?:(?:Chief|Senior|Junior|Associate|Assistant|Executive|Managing|General|Vice|Lead|Principal|Staff|Head|Director|Professor|Lecturer|Researcher|Scientist|Engineer|Manager|Partner|President|Founder|Co-founder|Cofounder|CEO|CTO|CFO|COO|VP|Editor|Reporter|Designer|Developer|Analyst|Consultant|Attorney|Physician|Nurse|Teacher)\b[\p{L} -]{0,40}?))(?=\s+(?:of|at)\s+[A-Z])/gu;
/** "Halifax", "Portland, Oregon", "Halifax, Nova Scotia": a place name and up to two parts after commas. */
const place =
  "[A-Z][\\p{L}'-]+(?:\\s+[A-Z][\\p{L}'-]+)?(?:,\\s+[A-Z][\\p{L}'-]+(?:\\s+[A-Z][\\p{L}'-]+)?){0,2}";
const placePattern = new RegExp(`\\b(?:based|lives|living|located|resides|works)\\s+in\\s+(${place})`, 'gu');
const inPlacePattern = new RegExp(`${orgTail}\\s+in\\s+(${place})`, 'gu');
const fullDate =
  /\b(January|February|March|April|May|June|July|August|September|October|November|December)\s+(\d{1,2}),\s+((?:19|20)\d{2})\b/i;
const yearOnly = /\b((?:19|20)\d{2})\b/;

const profileHosts =
  /(^|\.)(linkedin\.com|github\.com|gitlab\.com|x\.com|twitter\.com|facebook\.com|instagram\.com|mastodon\.social|bsky\.app|orcid\.org|scholar\.google\.com|researchgate\.net|medium\.com|substack\.com|about\.me|crunchbase\.com)$/i;

export const isProfileUrl = (url: string): boolean => {
  try {
    return profileHosts.test(new URL(url).hostname);
  } catch {
    return false;
  }
};

/** The name appears in the text as a whole (case, accents and punctuation aside). */
export function mentions(text: string, name: string): boolean {
  const n = normalizeName(name);
  return n !== '' && ` ${normalizeName(text)} `.includes(` ${n} `);
}

export function pageEvidence(html: string, url: string, name: string, location: string | null): PageEvidence {
  const $ = cheerio.load(html);
  const title = $('head > title').first().text().replace(/\s+/g, ' ').trim() || null;
  const roles = new Set<string>();
  const organizations = new Map<string, { name: string; role: string | null }>();
  const locations = new Set<string>();
  const links = new Set<string>();
  let personNode = false;
  let publication = false;
  const addOrg = (org: unknown, role: string | null) => {
    const orgName = nameOf(org);
    if (!orgName) return;
    const key = normalizeName(orgName);
    const known = organizations.get(key);
    if (!known) organizations.set(key, { name: orgName.trim(), role });
    else if (!known.role && role) known.role = role;
  };

  for (const node of jsonLdNodesOf($, PERSON_WALK)) {
    const types = asArray(node['@type']).map(String);
    if (types.some((t) => /ScholarlyArticle|Article|Book|Thesis/.test(t))) publication = true;
    if (!types.includes('Person') || typeof node.name !== 'string' || !mentions(node.name, name)) continue;
    personNode = true;
    const role = typeof node.jobTitle === 'string' ? node.jobTitle.trim() : null;
    if (role) roles.add(role);
    for (const org of asArray(node.worksFor)) addOrg(org, role);
    for (const key of ['affiliation', 'memberOf', 'alumniOf'] as const) {
      for (const org of asArray(node[key])) addOrg(org, key === 'alumniOf' ? 'alumnus' : role);
    }
    const address = asArray(node.address)[0] ?? asArray(node.homeLocation)[0];
    const place = placeOf(address);
    if (place) locations.add(place);
    for (const link of [...asArray(node.sameAs), node.url]) {
      if (typeof link === 'string' && /^https?:\/\//.test(link) && link !== url) links.add(link);
    }
  }

  $('script, style, noscript, template, svg, nav, header, footer').remove();
  // Headings repeat the title; statements come from running text.
  const paragraphs = $('p, li, td, blockquote, dd')
    .map((_, el) => $(el).text().replace(/\s+/g, ' ').trim())
    .get()
    .filter(Boolean);
  const statements: string[] = [];
  // A pronoun sentence right after one naming the person (in the same or the next paragraph) is about them.
  let follows = false;
  for (const paragraph of paragraphs) {
    for (const sentence of sentencesOf(paragraph)) {
      if (mentions(sentence, name)) {
        statements.push(sentence);
        follows = true;
      } else if (follows && /^(She|He|They|Her|His|Their)\b/.test(sentence)) {
        statements.push(sentence);
      } else follows = false;
    }
  }
  const uniqueStatements = [...new Set(statements)].map((s) =>
    s.length > 400 ? `${s.slice(0, 397)}...` : s,
  );

  const dated: PageEvidence['dated'] = [];
  for (const sentence of uniqueStatements) {
    for (const match of sentence.matchAll(orgPattern)) addOrg(cleanOrg(match[1] as string), roleIn(sentence));
    for (const match of sentence.matchAll(rolePattern)) roles.add((match[1] as string).trim());
    for (const match of sentence.matchAll(placePattern)) locations.add((match[1] as string).trim());
    for (const match of sentence.matchAll(inPlacePattern)) locations.add((match[1] as string).trim());
    const full = fullDate.exec(sentence);
    if (full) {
      const month = MONTHS.indexOf((full[1] as string).toLowerCase()) + 1;
      dated.push({
        date: `${full[3]}-${String(month).padStart(2, '0')}-${String(full[2]).padStart(2, '0')}`,
        event: sentence,
      });
      continue;
    }
    const year = yearOnly.exec(sentence);
    if (year) dated.push({ date: year[1] as string, event: sentence });
  }
  const text = `${title ?? ''} ${paragraphs.join(' ')}`;
  if (location && mentions(text, location)) locations.add(location);

  return {
    url,
    title,
    about_person: personNode || mentions(text, name),
    statements: uniqueStatements,
    roles: [...roles],
    organizations: [...organizations.values()],
    locations: [...new Set([...locations].map((l) => l.replace(/[.,]+$/, '')))],
    dated,
    links: [...links],
    profile: personNode || isProfileUrl(url),
    publication: publication || /\/(papers?|publications?|articles?)\//i.test(new URL(url).pathname),
  };
}

/** "The Acme Robotics" -> "Acme Robotics"; sentence-initial words that are not part of a name dropped. */
function cleanOrg(name: string): string {
  return name
    .replace(/^(?:The|A|An|At|In|On|Of|For|With|From|By|And|She|He|They|Dr\.?|Mr\.?|Ms\.?|Mrs\.?)\s+/, '')
    .trim();
}

/** The role a sentence gives beside an organisation ("... Chief Technology Officer of Acme Robotics"). */
function roleIn(sentence: string): string | null {
  rolePattern.lastIndex = 0;
  const match = rolePattern.exec(sentence);
  rolePattern.lastIndex = 0;
  return match?.[1]?.trim() ?? null;
}

/** Sentence ends: a period, ! or ? followed by a space and a capital, outside abbreviations. */
function sentencesOf(paragraph: string): string[] {
  return paragraph
    .split(/(?<!\b(?:Dr|Mr|Ms|Mrs|Prof|St|Jr|Sr|Inc|Co|vs|e\.g|i\.e))(?<=[.!?])\s+(?=[A-Z"'(])/)
    .map((s) => s.trim())
    .filter(Boolean);
}

function placeOf(value: unknown): string | null {
  if (typeof value === 'string') return value.trim() || null;
  if (!value || typeof value !== 'object') return null;
  const a = value as Record<string, unknown>;
  const parts = [a.addressLocality, a.addressRegion].filter(
    (p): p is string => typeof p === 'string' && p.trim() !== '',
  );
  return parts.length ? parts.join(', ') : null;
}

function nameOf(value: unknown): string | null {
  if (typeof value === 'string') return value.trim() || null;
  if (value && typeof value === 'object' && typeof (value as { name?: unknown }).name === 'string') {
    return (value as { name: string }).name.trim() || null;
  }
  return null;
}

/** Where a person is found in JSON-LD: the page's graph, and who wrote, is or works for what it is about. */
const PERSON_WALK: JsonLdWalk = {
  follow: ['@graph', 'author', 'creator', 'mainEntity', 'about', 'employee', 'member'],
};
