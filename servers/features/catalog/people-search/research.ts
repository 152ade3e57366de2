/**
 * The people-search research: several formulations of the name searched through the configured
 * search provider, the top result pages read through the SSRF-safe fetcher with robots.txt obeyed
 * (`scans/page-reader.ts`), what each says about the person extracted (`extract.ts`), candidates
 * clustered and facts cited (`dossier.ts`), and a summary written by the first configured language
 * model when there is one (told to use the cited facts only), extractive otherwise. Nothing is
 * stored: the dossier is the answer.
 */
import { z } from 'zod';
import { ServiceError } from '../../../errors.ts';
import type { CallScope } from '../../../operation-services.ts';
import { LanguageModelError } from '../../../outbound/llm.ts';
import type { SearchProvider, SearchResult } from '../../../outbound/search.ts';
import { PageReader } from '../../scans/page-reader.ts';
import { buildDossier, type DossierBody, extractiveSummary, type SourcedPage } from './dossier.ts';
import { pageEvidence } from './extract.ts';
import { type PeopleDossier, type PeopleSearchInput, RESEARCH_ONLY } from './schemas.ts';

/** Result pages read at once. */
const READ_CONCURRENCY = 4;

/** The searches run for a name: quoted alone, with the caller's context and location, and as a profile. */
export function formulations(input: PeopleSearchInput): string[] {
  const name = `"${input.name.trim().replace(/"/g, '')}"`;
  const context = input.context?.trim().split(/\s+/).slice(0, 8).join(' ');
  const location = input.location?.trim();
  const queries = [name];
  if (context) queries.push(`${name} ${context}`);
  if (location) queries.push(`${name} ${location}`);
  if (context && location) queries.push(`${name} ${context} ${location}`);
  queries.push(`${name} profile`);
  return [...new Set(queries)];
}

/** Results of every search merged: best position first, then found by more searches. */
function rankResults(perQuery: SearchResult[][]): string[] {
  const byUrl = new Map<string, { best: number; hits: number; first: number }>();
  let order = 0;
  for (const results of perQuery) {
    results.forEach((result, position) => {
      const known = byUrl.get(result.url);
      if (known) {
        known.best = Math.min(known.best, position);
        known.hits++;
      } else byUrl.set(result.url, { best: position, hits: 1, first: order++ });
    });
  }
  return [...byUrl.entries()]
    .sort(([, a], [, b]) => a.best - b.best || b.hits - a.hits || a.first - b.first)
    .map(([url]) => url);
}

const Summary = z.strictObject({ summary: z.string().min(1).max(2000) });

/** The services the research reads. */
type ResearchCall = CallScope<'config' | 'search' | 'siteFetch' | 'languageModels' | 'now'>;

/**
 * The answers of every formulation searched at once; one failed search is logged, all failed is
 * `provider_unavailable` (nothing charged).
 */
async function searchAll(
  ctx: ResearchCall,
  search: SearchProvider,
  queries: readonly string[],
  limit: number,
): Promise<{ settled: PromiseSettledResult<SearchResult[]>[]; answered: SearchResult[][] }> {
  const { services } = ctx;
  const settled = await Promise.allSettled(
    queries.map((q) => search.search(q, { limit, signal: ctx.signal })),
  );
  const answered = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  if (answered.length === 0) {
    const reason = (settled[0] as PromiseRejectedResult).reason as Error;
    const timedOut = reason?.name === 'TimeoutError' || reason?.name === 'AbortError';
    throw new ServiceError('provider_unavailable', {
      detail: `Search provider ${search.name}: ${
        timedOut ? `no answer within ${services.config.research.search.timeout_ms} ms` : reason?.message
      }; nothing was charged`,
      cause: reason,
    });
  }
  for (const s of settled) {
    if (s.status === 'rejected')
      ctx.log.warn({ err: s.reason, provider: search.name }, 'people-search: one search failed');
  }
  return { settled, answered };
}

export async function researchDossier(ctx: ResearchCall, input: PeopleSearchInput): Promise<PeopleDossier> {
  const { services } = ctx;
  const search = services.search;
  if (!search)
    throw new ServiceError('sku_unavailable', {
      detail: 'people-search: no web search provider is configured',
    });
  const settings = services.config.research.people_search;
  const query = {
    name: input.name.trim(),
    context: input.context?.trim() ?? null,
    location: input.location?.trim() ?? null,
  };

  const progress = (done: number, message: string) => {
    ctx.reportProgress?.(done, 3, message)?.catch(() => {});
  };
  const queries = formulations(input);
  progress(0, `searching ${queries.length} formulations of the name`);
  const { settled, answered } = await searchAll(ctx, search, queries, settings.results_per_query);

  const urls = rankResults(answered).slice(0, settings.max_pages);
  const reader = new PageReader({
    fetch: services.siteFetch,
    userAgent: services.config.scanner.user_agent,
    maxBytes: settings.max_page_bytes,
    requestTimeoutMs: services.config.scanner.request_timeout_ms,
    maxRedirects: services.config.scanner.max_redirects,
    concurrency: READ_CONCURRENCY,
    now: services.now,
  });
  progress(1, `reading ${urls.length} result pages`);
  const outcomes = await reader.readAll(urls, ctx.signal);
  const pages: SourcedPage[] = [];
  const skippedByRobots: string[] = [];
  let failed = 0;
  let read = 0;
  for (const outcome of outcomes) {
    if (!outcome.ok) {
      if (outcome.reason === 'robots') skippedByRobots.push(outcome.url);
      else failed++;
      continue;
    }
    read++;
    const { page } = outcome;
    const html = /^text\/plain/i.test(page.content_type) ? plainTextAsHtml(page.body) : page.body;
    let evidence: ReturnType<typeof pageEvidence>;
    try {
      evidence = pageEvidence(html, page.final_url, query.name, query.location);
    } catch (err) {
      ctx.log.warn({ err, url: page.final_url }, 'people-search: page could not be read');
      continue;
    }
    if (!evidence.about_person) continue;
    pages.push({
      id: `s${pages.length + 1}`,
      evidence,
      title: evidence.title,
      retrieved_at: page.retrieved_at,
    });
  }

  progress(2, `clustering ${pages.length} pages about the person`);
  const body = buildDossier(query.name, query, pages);
  const { summary, source } = await summarize(ctx, query.name, body, read);
  return {
    query,
    summary,
    summary_source: source,
    ...body,
    sources: pages.map((p) => ({
      id: p.id,
      url: p.evidence.url,
      title: p.title,
      retrieved_at: p.retrieved_at,
    })),
    searches: queries.map((q, i) => {
      const s = settled[i] as PromiseSettledResult<SearchResult[]>;
      return { query: q, results: s.status === 'fulfilled' ? s.value.length : 0 };
    }),
    pages: { read, about_person: pages.length, skipped_by_robots: skippedByRobots, failed },
    next_steps: nextSteps(query, body, skippedByRobots),
    disclaimer: RESEARCH_ONLY,
    generated_at: services.now().toISOString(),
  };
}

/** The first configured model writes the summary from the cited facts only; extractive without one. */
async function summarize(
  ctx: ResearchCall,
  name: string,
  body: DossierBody,
  pagesRead: number,
): Promise<{ summary: string; source: string }> {
  const extractive = { summary: extractiveSummary(name, body, pagesRead), source: 'extractive' };
  const model = ctx.services.languageModels[0];
  if (!model || body.candidates.length === 0) return extractive;
  try {
    const answer = await model.structured({
      system:
        'You summarise research notes about a person. Use only the facts given, never outside knowledge. ' +
        'Keep people with the same name apart, say how sure each match is, and cite source ids like [s1].',
      user:
        `Write a summary of three or four sentences about who "${name}" most likely is, from these notes:\n` +
        JSON.stringify({
          candidates: body.candidates,
          key_facts: body.key_facts,
          affiliations: body.affiliations,
        }),
      schemaName: 'dossier_summary',
      schema: Summary,
      signal: ctx.signal,
    });
    return { summary: answer.value.summary, source: `llm:${model.name}` };
  } catch (err) {
    if (!(err instanceof LanguageModelError)) throw err;
    // The facts stand without the model's prose: the summary falls back to the pages' own words.
    ctx.log.warn({ err }, 'people-search: summary model failed; extractive summary used');
    return {
      summary: `${extractive.summary} (The language model ${model.name} did not answer: ${err.message}.)`,
      source: 'extractive',
    };
  }
}

function nextSteps(
  query: { name: string; context: string | null; location: string | null },
  body: DossierBody,
  skippedByRobots: readonly string[],
): string[] {
  const steps: string[] = [];
  const [first, second] = body.candidates;
  if (!first) {
    steps.push(
      `Search again with other spellings of "${query.name}" (a middle name or initial, a maiden name) and with context such as an employer or a city.`,
    );
  }
  if (second && first) {
    steps.push(
      `${body.candidates.length} people share this name: ${
        query.context || query.location ? 'add more' : 'add'
      } context (employer, role, field) or a location to tell "${first.description}" from "${second.description}".`,
    );
  }
  for (const affiliation of body.affiliations.filter((a) => a.candidate_id === first?.id).slice(0, 2)) {
    steps.push(
      `Confirm the link to ${affiliation.organization} on ${affiliation.organization}'s own website or staff directory.`,
    );
  }
  if (skippedByRobots.length) {
    steps.push(
      `${skippedByRobots.length} result page(s) were not read because their site's robots.txt disallows it; open them yourself: ${skippedByRobots.slice(0, 3).join(', ')}.`,
    );
  }
  if (first?.confidence !== undefined && first.confidence < 0.6) {
    steps.push(
      'No candidate is a clear match: ask the person, or someone who knows them, for a detail the pages can confirm.',
    );
  }
  return steps;
}

const escapeHtml = (text: string): string =>
  text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c] as string);

/** A text/plain page as paragraphs, so it is read like HTML. */
function plainTextAsHtml(text: string): string {
  return `<html><body>${text
    .split(/\n\s*\n/)
    .map((p) => `<p>${escapeHtml(p.trim())}</p>`)
    .join('')}</body></html>`;
}
