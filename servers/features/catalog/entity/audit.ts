/**
 * The entity audit: the brand's own site read with the scanner's crawler (SSRF-safe, robots.txt
 * obeyed) is the ground truth; its sources are checked against one another; each configured
 * language model is asked for a structured description of the entity, compared field by field
 * (`scans/collectors/entity.ts`, shared with the scanner), scored, and turned into findings with
 * fixes. Nothing is stored: the audit is the answer.
 */
import { z } from 'zod';
import { ServiceError } from '../../../errors.ts';
import type { CallScope } from '../../../operation-services.ts';
import { type LanguageModel, LanguageModelError } from '../../../outbound/llm.ts';
import {
  compareField,
  type EntityClaim,
  type EntityField,
  type EntitySource,
  entityClaimsOfLlmsTxt,
  entityClaimsOfPage,
  entityFields,
  type GroundTruth,
  groundTruthOf,
  ownSourceConsistency,
  type SourceComparison,
  sameAsOfPage,
  type Verdict,
} from '../../scans/collectors/entity.ts';

/** What each model is asked for (the JSON Schema of `response_format`). */
export const ModelDescription = z.strictObject({
  name: z.string().nullable().describe('The name of the company or brand.'),
  category: z.string().nullable().describe('What kind of business it is, in a few words.'),
  description: z.string().nullable().describe('One or two sentences on what it does.'),
  founded: z.string().nullable().describe('The year it was founded.'),
  headquarters: z.string().nullable().describe('City and country of its headquarters.'),
  products: z.array(z.string()).describe('Its main products or services.'),
  people: z
    .array(z.strictObject({ name: z.string(), role: z.string().nullable() }))
    .describe('Founders and leaders.'),
});
export type ModelDescription = z.infer<typeof ModelDescription>;

const SYSTEM_PROMPT =
  'You describe companies and brands from what you learned in training. Do not browse and do not guess: ' +
  'answer null (or an empty list) for anything you do not know.';

export interface Comparison {
  field: EntityField;
  verdict: Verdict;
  expected: string | null;
  found: string | null;
}

export interface ModelResult {
  provider: string;
  model: string;
  score: number | null;
  comparisons: Comparison[];
  answer: string;
}

export interface Finding {
  field: EntityField;
  severity: 'critical' | 'warning' | 'info';
  seen: string;
  fix: string;
}

export interface SiteEvidence {
  origin: string;
  claims: EntityClaim[];
  truth: GroundTruth;
  consistency: SourceComparison[];
  same_as: string[];
  pages_read: number;
}

/** Pages of the brand's site read for its ground truth. */
const ENTITY_MAX_PAGES = 30;

const aboutPath = /^\/(?:[a-z]{2}(?:-[a-z]{2})?\/)?(?:about(?:-us)?|company|who-we-are|our-story|story)\/?$/i;

/** Crawls the brand's site and reads what it says about itself. */
export async function readSite(ctx: CallScope<'scans'>, domain: string): Promise<SiteEvidence> {
  const claims: EntityClaim[] = [];
  const sameAs = new Set<string>();
  let pagesRead = 0;
  const facts = await ctx.services.scans.crawl(
    domain,
    {
      onPage: ({ url, html, facts: page }) => {
        pagesRead++;
        const path = new URL(url).pathname;
        const home = path === '/' || path === '';
        const about = aboutPath.test(path) || page.json_ld_types.includes('AboutPage');
        try {
          claims.push(...entityClaimsOfPage(html, url, { home, about }));
          for (const link of sameAsOfPage(html)) sameAs.add(link);
        } catch (err) {
          ctx.log.warn({ err, url }, 'entity: page could not be read');
        }
      },
      ...(ctx.reportProgress
        ? {
            onProgress: (p) => {
              ctx.reportProgress?.(p.done, p.total, p.message)?.catch(() => {});
            },
          }
        : {}),
    },
    ctx.signal,
    // The entity is stated on a few pages (home, about, products): not a full scan's 200.
    { max_pages: ENTITY_MAX_PAGES },
  );
  if (pagesRead === 0) {
    throw new ServiceError('site_unreachable', {
      detail:
        `No HTML page of ${domain} could be read` +
        (facts.crawl.skipped_by_robots ? ` (${facts.crawl.skipped_by_robots} kept out by robots.txt)` : ''),
    });
  }
  if (facts.llms_txt) claims.push(...entityClaimsOfLlmsTxt(facts.llms_txt, facts.llms_txt.url));
  const truth = groundTruthOf(claims);
  const home = `${facts.origin}/`;
  const expected: { field: EntityField; source: EntitySource; source_url: string }[] = [
    { field: 'name', source: 'json_ld', source_url: home },
    { field: 'description', source: 'json_ld', source_url: home },
    { field: 'founded', source: 'json_ld', source_url: home },
    { field: 'headquarters', source: 'json_ld', source_url: home },
    { field: 'name', source: 'og_site_name', source_url: home },
    { field: 'description', source: 'meta_description', source_url: home },
    { field: 'name', source: 'llms_txt', source_url: `${facts.origin}/llms.txt` },
    { field: 'description', source: 'llms_txt', source_url: `${facts.origin}/llms.txt` },
  ];
  return {
    origin: facts.origin,
    claims,
    truth,
    consistency: ownSourceConsistency(claims, truth, expected),
    same_as: [...sameAs],
    pages_read: pagesRead,
  };
}

/** Asks one model for its description of the entity; a failure is the whole request's (uncharged). */
export async function askModel(
  model: LanguageModel,
  entity: { brand: string; domain: string },
  signal: AbortSignal,
): Promise<{ description: ModelDescription; raw: string; model: string }> {
  try {
    const answer = await model.structured({
      system: SYSTEM_PROMPT,
      user:
        `Describe the brand entity "${entity.brand}", whose website is ${entity.domain}: its name, category, ` +
        'a one- or two-sentence description, the year it was founded, its headquarters (city, country), its ' +
        'main products or services, and its founders and leaders.',
      schemaName: 'entity_description',
      schema: ModelDescription,
      signal,
    });
    return { description: answer.value, raw: answer.raw, model: answer.model };
  } catch (err) {
    if (err instanceof LanguageModelError) {
      throw new ServiceError('provider_unavailable', {
        detail: `Language model provider ${err.message}; nothing was charged`,
        cause: err,
      });
    }
    throw err;
  }
}

/** A model's description compared with the site, field by field. */
export function compareDescription(
  description: ModelDescription,
  truth: GroundTruth,
  brand: string,
): Comparison[] {
  const site = (field: EntityField) => (field === 'name' ? brand : (truth.fields[field]?.value ?? null));
  const found: Record<EntityField, string | string[] | null> = {
    name: description.name,
    category: description.category,
    description: description.description,
    founded: description.founded,
    headquarters: description.headquarters,
    products: description.products,
    people: description.people.map((p) => p.name),
  };
  return entityFields.map((field) => {
    const expected = field === 'products' ? truth.products : field === 'people' ? truth.people : site(field);
    const value = found[field];
    return {
      field,
      verdict: compareField(field, expected, value),
      expected: Array.isArray(expected) ? (expected.length ? expected.join('; ') : null) : (expected ?? null),
      found: Array.isArray(value) ? (value.length ? value.join('; ') : null) : value,
    };
  });
}

/**
 * 0-100 over the fields the site states: consistent counts 1, missing (the model does not know)
 * 0.5, drift (it states something else) 0. null when the site states nothing comparable.
 */
export function consistencyScore(comparisons: readonly { verdict: Verdict }[]): number | null {
  const judged = comparisons.filter((c) => c.verdict !== 'unknown');
  if (judged.length === 0) return null;
  const points = judged.reduce(
    (sum, c) => sum + (c.verdict === 'consistent' ? 1 : c.verdict === 'missing' ? 0.5 : 0),
    0,
  );
  return Math.round((100 * points) / judged.length);
}

/** What to publish where so that models (and the site's own sources) say it one way. */
const fixes: Record<EntityField, string> = {
  name:
    'Use one name everywhere: the Organization JSON-LD "name" on the home page, og:site_name, the home ' +
    "page's <title> and the H1 of /llms.txt; list the official profiles (Wikidata, LinkedIn, Crunchbase) " +
    'in the JSON-LD "sameAs" under that same name.',
  category:
    'Say what kind of business it is in the first sentence of the description (JSON-LD, meta description, ' +
    'the > summary of /llms.txt) and use the most specific schema.org @type for the organization.',
  description:
    'Publish one canonical one- or two-sentence description and repeat it verbatim in the Organization ' +
    'JSON-LD "description", the meta and og:description of the home page and the > summary of /llms.txt.',
  founded:
    'State the founding year as "foundingDate" in the Organization JSON-LD, as a sentence ("Founded in ' +
    'YYYY") on the about page and in /llms.txt, and correct it on the profiles listed in "sameAs" ' +
    '(Wikidata, Wikipedia, Crunchbase), which models learn from.',
  headquarters:
    'Give the headquarters as a PostalAddress ("addressLocality", "addressCountry") in the Organization ' +
    'JSON-LD, on the about page ("headquartered in City, Country") and in the footer, and correct the ' +
    'profiles listed in "sameAs".',
  products:
    'Describe the main products or services as Product or Service JSON-LD nodes on their pages and link ' +
    'each from /llms.txt with a one-line description.',
  people:
    'Name the founders and leaders: "founder" Person nodes in the Organization JSON-LD and a team or ' +
    'about page with their names and roles.',
};

const critical = new Set<EntityField>(['name', 'founded', 'headquarters']);

/** Findings, worst first: models that state something else, own sources that disagree, gaps. */
export function findingsOf(
  consistency: readonly SourceComparison[],
  models: readonly ModelResult[],
): Finding[] {
  const findings: Finding[] = [];
  for (const m of models) {
    for (const c of m.comparisons) {
      if (c.verdict === 'drift') {
        findings.push({
          field: c.field,
          severity: critical.has(c.field) ? 'critical' : 'warning',
          seen: `${m.provider} (${m.model}) says ${c.field} is "${c.found}"; the site says "${c.expected}".`,
          fix: fixes[c.field],
        });
      } else if (c.verdict === 'missing') {
        findings.push({
          field: c.field,
          severity: 'info',
          seen: `${m.provider} (${m.model}) does not know the ${c.field} ("${c.expected}" on the site).`,
          fix: fixes[c.field],
        });
      }
    }
  }
  for (const c of consistency) {
    if (c.verdict === 'drift') {
      findings.push({
        field: c.field,
        severity: c.field === 'name' ? 'critical' : 'warning',
        seen: `${sourceLabel[c.source]} at ${c.source_url} says "${c.found}"; the site's main statement is "${c.expected}".`,
        fix: fixes[c.field],
      });
    } else if (c.verdict === 'missing') {
      findings.push({
        field: c.field,
        severity: 'info',
        seen: `${sourceLabel[c.source]} at ${c.source_url} does not state the ${c.field}.`,
        fix: fixes[c.field],
      });
    }
  }
  const rank = { critical: 0, warning: 1, info: 2 };
  return findings.sort((a, b) => rank[a.severity] - rank[b.severity]);
}

export const sourceLabel: Record<EntitySource, string> = {
  json_ld: 'The Organization JSON-LD',
  og_site_name: 'og:site_name',
  title: 'The <title>',
  meta_description: 'The meta description',
  og_description: 'og:description',
  llms_txt: 'llms.txt',
  about_page: 'The about page',
};
