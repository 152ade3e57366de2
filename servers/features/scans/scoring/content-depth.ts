/**
 * Content Depth (docs/reference/scoring.md): is there substance an agent can read.
 * Its checks in docs/reference/scoring.md order; their weights sum to 100.
 */
import { clamp01, median, noPages, pageShare } from './judging.ts';
import { type CheckDef, nextTools } from './model.ts';

export const contentDepthChecks: readonly CheckDef[] = [
  {
    id: 'pages_readable',
    component: 'content_depth',
    title: 'HTML pages could be read',
    weight: 15,
    severity: 'critical',
    rule: 'HTML pages read / 5, at most 1',
    goal: 'Have pages an agent can read without a browser, a login or a challenge.',
    fix: 'Make pages reachable without JavaScript, login or bot challenges, and link them from the home page or the sitemap.',
    spec: null,
    evidence: ['home', 'page'],
    evaluate: ({ facts }) => ({
      score: clamp01(facts.pages.length / 5),
      seen: `${facts.pages.length} page(s) read, ${facts.crawl.pages_failed} failed, ${facts.crawl.skipped_by_robots} skipped by robots.txt`,
      evidence_url: `${facts.origin}/`,
    }),
  },
  {
    id: 'word_count',
    component: 'content_depth',
    title: 'Pages carry substantial text',
    weight: 20,
    severity: 'warning',
    rule: 'median words per page / 300, at most 1 (scripts and styles not counted)',
    goal: 'Put the substance in the HTML: text an agent can quote.',
    fix: 'Give key pages real text (300+ words): what you offer, for whom, prices, policies - rendered in the HTML.',
    spec: null,
    evidence: ['home', 'page'],
    evaluate: ({ facts }) => {
      if (facts.pages.length === 0) return noPages;
      const m = median(facts.pages.map((p) => p.word_count));
      return {
        score: clamp01(m / 300),
        seen: `median ${Math.round(m)} words per page`,
        evidence_url: facts.pages[0]?.url,
      };
    },
  },
  {
    id: 'headings',
    component: 'content_depth',
    title: 'Pages have one H1 and section headings',
    weight: 10,
    severity: 'info',
    rule: 'share of pages with exactly one `<h1>` and at least one `<h2>`',
    goal: 'Structure pages so an agent can find the part it needs.',
    fix: 'Give every page exactly one <h1> and structure it with <h2> sections.',
    spec: 'https://html.spec.whatwg.org/multipage/sections.html#headings-and-outlines',
    evidence: ['home', 'page'],
    evaluate: ({ facts }) => pageShare(facts, (p) => p.h1.length === 1 && p.h2_count > 0) ?? noPages,
  },
  {
    id: 'titles',
    component: 'content_depth',
    title: 'Pages have titles',
    weight: 15,
    severity: 'warning',
    rule: 'share of pages with a `<title>`',
    goal: 'Name every page, so a citation can say what it points at.',
    fix: 'Give every page a distinct <title>.',
    spec: 'https://html.spec.whatwg.org/multipage/semantics.html#the-title-element',
    evidence: ['home', 'page'],
    evaluate: ({ facts }) => pageShare(facts, (p) => !!p.title) ?? noPages,
  },
  {
    id: 'descriptions',
    component: 'content_depth',
    title: 'Pages have meta descriptions',
    weight: 10,
    severity: 'info',
    rule: 'share of pages with `<meta name="description">`',
    goal: 'Summarise every page in a sentence an agent can reuse.',
    fix: 'Add a <meta name="description"> summarising each page in one or two sentences.',
    spec: 'https://html.spec.whatwg.org/multipage/semantics.html#meta-description',
    evidence: ['home', 'page'],
    evaluate: ({ facts }) => pageShare(facts, (p) => !!p.description) ?? noPages,
  },
  {
    id: 'lang',
    component: 'content_depth',
    title: 'Pages declare their language',
    weight: 5,
    severity: 'info',
    rule: 'share of pages whose `<html>` has a `lang` attribute',
    goal: 'Say what language each page is in, so agents answer in it and quote it right.',
    fix: 'Set <html lang="..."> (a BCP 47 tag such as en or pt-PT) on every page.',
    spec: 'https://html.spec.whatwg.org/multipage/dom.html#attr-lang',
    evidence: ['home', 'page'],
    evaluate: ({ facts }) => pageShare(facts, (p) => !!p.lang) ?? noPages,
  },
  {
    id: 'noindex',
    component: 'content_depth',
    title: 'Pages are not marked noindex',
    weight: 10,
    severity: 'warning',
    rule: 'share of pages without `<meta name="robots">` saying noindex',
    goal: 'Keep public pages in the indexes answer engines draw from.',
    fix: 'Remove <meta name="robots" content="noindex"> from pages you want found (keep it only on private or duplicate pages).',
    spec: 'https://developers.google.com/search/docs/crawling-indexing/robots-meta-tag',
    evidence: ['home', 'page'],
    evaluate: ({ facts }) => {
      const share = pageShare(facts, (p) => !p.noindex);
      if (!share) return noPages;
      const marked = facts.pages.filter((p) => p.noindex);
      return {
        ...share,
        seen: marked.length
          ? `noindex on ${marked.length} of ${facts.pages.length} page(s): ${marked
              .slice(0, 3)
              .map((p) => new URL(p.url).pathname)
              .join(', ')}`
          : 'no page is marked noindex',
        evidence_url: marked[0]?.url ?? null,
      };
    },
  },
  {
    id: 'llms_full_txt',
    component: 'content_depth',
    title: 'llms-full.txt carries the full text',
    weight: 15,
    severity: 'info',
    rule: '1 when `/llms-full.txt` is served',
    goal: 'Give agents the whole site as one markdown file.',
    fix: 'Publish /llms-full.txt with the full text of your key pages in markdown.',
    spec: 'https://llmstxt.org/',
    evidence: ['llms_full_txt'],
    tools: [nextTools.llmsTxt],
    evaluate: ({ facts }) => ({
      score: facts.llms_full_txt ? 1 : 0,
      seen: facts.llms_full_txt ? `${facts.llms_full_txt.bytes} bytes` : 'no llms-full.txt',
      evidence_url: facts.llms_full_txt?.url ?? `${facts.origin}/llms-full.txt`,
    }),
  },
];
