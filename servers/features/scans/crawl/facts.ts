/**
 * Facts a crawl derives from what it read, once every request is done: markdown negotiation
 * against the pages' own words, robots.txt against itself and the site's documents, and who the
 * home page and llms.txt say the site is.
 */
import * as cheerio from 'cheerio';
import { checkMarkdownNegotiation } from '../collectors/discovery.ts';
import { entityClaimsOfPage, sameAsOfPage } from '../collectors/entity.ts';
import { organizationTypes } from '../collectors/page.ts';
import { aiAgents, parseRobots, robotsParser } from '../collectors/robots.ts';
import { isHtmlAnswer } from '../collectors/soft-404.ts';
import type { EntityFacts, PageSummary, PolicyFacts, SiteFacts } from '../site-facts.ts';
import { textOverlap, wordsOf } from '../verify.ts';
import { asFetched, type FetchOutcome } from './session.ts';

/** The home page and one other page asked for as markdown, against their HTML's words. */
export function markdownFacts(
  home: string,
  markdown: FetchOutcome | null,
  other: { target: PageSummary | null; outcome: FetchOutcome | null },
  pageWords: ReadonlyMap<string, Set<string>>,
): SiteFacts['markdown'] {
  const homeFacts = checkMarkdownNegotiation(markdown ? asFetched(markdown) : null, home);
  const { target, outcome } = other;
  const otherFacts = target && outcome ? checkMarkdownNegotiation(asFetched(outcome), target.url) : null;
  const otherWords = target ? (pageWords.get(target.url) ?? null) : null;
  return {
    ...homeFacts,
    vary_accept: markdown?.ok ? varyIncludesAccept(markdown.result.headers.vary) : null,
    text_overlap: overlapOf(markdown, pageWords.get(home) ?? null),
    other_page: otherFacts
      ? {
          url: otherFacts.url,
          supported: otherFacts.supported,
          note: otherFacts.note,
          vary_accept: outcome?.ok ? varyIncludesAccept(outcome.result.headers.vary) : null,
          text_overlap: overlapOf(outcome, otherWords),
        }
      : null,
  };
}

function overlapOf(o: FetchOutcome | null, words: Set<string> | null): number | null {
  return o?.ok && words && o.result.status < 300 && !isHtmlAnswer(o.result)
    ? textOverlap(wordsOf(o.result.body), words)
    : null;
}

function varyIncludesAccept(vary: string | undefined): boolean {
  return !!vary && vary.split(',').some((v) => v.trim() === '*' || v.trim().toLowerCase() === 'accept');
}

/** Does robots.txt contradict itself or the site's own documents? */
export function policyOf(
  text: string | null,
  robotsUrl: string,
  documents: { llms_txt: string; sitemaps: string[] },
): PolicyFacts | null {
  if (text === null) return null;
  const rules = robotsParser(robotsUrl, text);
  const root = new URL('/', robotsUrl).href;
  const { content_signals } = parseRobots(robotsUrl, text);
  const conflicts: string[] = [];
  for (const signal of content_signals) {
    const wants = Object.entries(signal.signals)
      .filter(([, yes]) => yes)
      .map(([name]) => name);
    if (wants.length === 0) continue;
    for (const agent of signal.user_agents) {
      if (rules.isAllowed(root, agent === '*' ? 'any-agent' : agent) === false)
        conflicts.push(
          `Content-Signal ${wants.map((w) => `${w}=yes`).join(', ')} for ${agent}, but ${agent} may not fetch /`,
        );
    }
  }
  const readers = ['*', ...aiAgents.filter((a) => a.category !== 'training').map((a) => a.token)];
  const blockedFor = (url: string) =>
    readers.filter((ua) => rules.isAllowed(url, ua === '*' ? 'any-agent' : ua) === false);
  return {
    content_signal_conflicts: conflicts,
    llms_txt_blocked_for: blockedFor(documents.llms_txt),
    sitemap_blocked_for: [...new Set(documents.sitemaps.flatMap(blockedFor))],
  };
}

/** What the home page and llms.txt say the organisation is called, and where it lives. */
export function entityOfHome(
  html: string,
  url: string,
  llms: { title: string | null; summary: string | null; url: string } | null,
): EntityFacts {
  const claims = entityClaimsOfPage(html, url, { home: true, about: false });
  const first = (source: string) =>
    claims.find((c) => c.field === 'name' && c.source === source)?.value ?? null;
  return {
    organization_name: first('json_ld'),
    organization_url: organizationUrlOf(html, url),
    same_as: sameAsOfPage(html),
    og_site_name: first('og_site_name'),
    llms_txt_title: llms?.title ?? null,
  };
}

/** `url` of the first organisation JSON-LD node on the page. */
function organizationUrlOf(html: string, base: string): string | null {
  const $ = cheerio.load(html);
  let found: string | null = null;
  $('script[type="application/ld+json"]').each((_, el) => {
    if (found) return;
    try {
      const stack: unknown[] = [JSON.parse($(el).text())];
      while (stack.length && !found) {
        const node = stack.pop();
        if (Array.isArray(node)) stack.push(...node);
        else if (node && typeof node === 'object') {
          const record = node as Record<string, unknown>;
          const types = [record['@type']].flat().filter((t): t is string => typeof t === 'string');
          if (
            types.some((t) => organizationTypes.has(t.replace(/^https?:\/\/schema\.org\//, ''))) &&
            typeof record.url === 'string'
          )
            found = URL.canParse(record.url, base) ? new URL(record.url, base).href : record.url;
          for (const value of Object.values(record))
            if (value && typeof value === 'object') stack.push(value);
        }
      }
    } catch {
      // not JSON: the json_ld_valid check reports it
    }
  });
  return found;
}
