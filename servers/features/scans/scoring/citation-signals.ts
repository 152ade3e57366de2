/**
 * Citation Signals (docs/reference/scoring.md): can an AI answer name and cite the site correctly.
 * Its checks in docs/reference/scoring.md order; their weights sum to 100.
 */
import { compareField } from '../collectors/entity.ts';
import { organizationTypes } from '../collectors/page.ts';
import { sameSite } from '../crawl/session.ts';
import { noPages, notCollected, pageShare } from './judging.ts';
import { type CheckDef, nextTools } from './model.ts';

export const citationSignalsChecks: readonly CheckDef[] = [
  {
    id: 'llms_txt',
    component: 'citation_signals',
    title: 'llms.txt per llmstxt.org',
    weight: 20,
    severity: 'warning',
    rule: '`/llms.txt` per llmstxt.org: valid with a `>` summary 1, valid without a summary 0.8, present but not following the format 0.4',
    goal: 'Tell agents in one short file who you are and where the key pages are.',
    fix: 'Publish /llms.txt: an H1 with your name, a > summary, and ## sections of "- [name](url): notes" links to your key pages.',
    spec: 'https://llmstxt.org/',
    evidence: ['llms_txt'],
    tools: [nextTools.llmsTxt],
    evaluate: ({ facts }) => {
      const l = facts.llms_txt;
      if (!l) return { score: 0, seen: 'no llms.txt', evidence_url: `${facts.origin}/llms.txt` };
      const score = l.valid ? (l.summary ? 1 : 0.8) : 0.4;
      const seen = l.valid
        ? `"${l.title}", ${l.sections.length} section(s), ${l.link_count} link(s)${l.summary ? '' : ', no summary'}`
        : `llms.txt does not follow the format: ${l.problems.join('; ')}`;
      return { score, seen, evidence_url: l.url };
    },
  },
  {
    id: 'llms_txt_links',
    component: 'citation_signals',
    title: 'llms.txt links resolve, and it is served as text',
    weight: 8,
    severity: 'warning',
    rule: '0.8 x the share of llms.txt links checked that resolve (1 when none on the site) + 0.2 when it is served as `text/plain` or `text/markdown`; no value without llms.txt',
    goal: 'Make every link in llms.txt lead somewhere, and serve the file as text.',
    fix: 'Fix or remove llms.txt links that do not answer 2xx, and serve /llms.txt as text/plain or text/markdown.',
    spec: 'https://llmstxt.org/',
    evidence: ['llms_txt', 'llms_links'],
    tools: [nextTools.llmsTxt],
    evaluate: ({ facts }) => {
      if (!facts.verification) return notCollected;
      const v = facts.verification.llms_txt;
      if (!v) return { score: null, seen: 'no llms.txt to follow' };
      const dead = v.links.filter((l) => !l.ok);
      const share = v.links.length ? (v.links.length - dead.length) / v.links.length : 1;
      const problems = [
        ...(dead.length
          ? [
              `${dead.length} of ${v.links.length} link(s) checked do not resolve: ${dead.map((l) => `${l.url} (${l.status ? `HTTP ${l.status}` : (l.note ?? 'no answer')})`).join(', ')}`,
            ]
          : []),
        ...(v.served_as_text ? [] : [`served as ${v.content_type ?? 'no content type'}, not text`]),
      ];
      return {
        score: 0.8 * share + (v.served_as_text ? 0.2 : 0),
        seen: problems.length
          ? problems.join('; ')
          : `${v.links.length} of ${v.links_total} link(s) checked, all resolve; served as ${v.content_type}`,
        evidence_url: dead[0]?.url ?? v.url,
      };
    },
  },
  {
    id: 'json_ld',
    component: 'citation_signals',
    title: 'Pages carry schema.org JSON-LD',
    weight: 10,
    severity: 'info',
    rule: 'share of pages with schema.org JSON-LD (types read through `@graph` and nesting)',
    goal: 'State the facts of each page in structured data an agent reads without guessing.',
    fix: 'Describe pages with schema.org JSON-LD (<script type="application/ld+json">).',
    spec: 'https://schema.org/docs/gs.html',
    evidence: ['home', 'page'],
    evaluate: ({ facts }) => pageShare(facts, (p) => p.json_ld_types.length > 0) ?? noPages,
  },
  {
    id: 'json_ld_valid',
    component: 'citation_signals',
    title: 'JSON-LD parses',
    weight: 5,
    severity: 'warning',
    rule: 'share of pages whose every `application/ld+json` script parses as JSON',
    goal: 'Make sure the structured data is read at all: one syntax error hides the whole block.',
    fix: 'Fix the <script type="application/ld+json"> blocks that are not valid JSON (trailing commas, unescaped quotes, comments).',
    spec: 'https://www.w3.org/TR/json-ld11/',
    evidence: ['home', 'page'],
    evaluate: ({ facts }) => {
      const share = pageShare(facts, (p) => p.json_ld_errors === 0);
      if (!share) return noPages;
      const broken = facts.pages.filter((p) => p.json_ld_errors > 0);
      return {
        ...share,
        seen: broken.length
          ? `JSON-LD that does not parse on ${broken.length} page(s): ${broken
              .slice(0, 3)
              .map((p) => new URL(p.url).pathname)
              .join(', ')}`
          : 'every JSON-LD block parses',
        evidence_url: broken[0]?.url ?? null,
      };
    },
  },
  {
    id: 'organization',
    component: 'citation_signals',
    title: 'The publisher is identified (Organization)',
    weight: 12,
    severity: 'warning',
    rule: '1 when some page declares Organization (or Corporation, LocalBusiness, OnlineStore, NewsMediaOrganization, EducationalOrganization, NGO)',
    goal: 'Say who is behind the site, so answers name it right.',
    fix: 'Add an Organization (or LocalBusiness) JSON-LD node with name, url, logo and sameAs links.',
    spec: 'https://schema.org/Organization',
    evidence: ['home', 'page'],
    tools: [nextTools.entity],
    evaluate: ({ facts }) => {
      const page = facts.pages.find((p) => p.json_ld_types.some((t) => organizationTypes.has(t)));
      return {
        score: page ? 1 : 0,
        seen: page ? `Organization on ${page.url}` : 'no Organization JSON-LD',
        evidence_url: page?.url ?? `${facts.origin}/`,
      };
    },
  },
  {
    id: 'entity_consistency',
    component: 'citation_signals',
    title: 'The site names itself the same way everywhere',
    weight: 10,
    severity: 'warning',
    rule: "share of these that hold, for the home page's organisation JSON-LD: its `name` names the same organisation as `og:site_name` and as the llms.txt H1 (names compared as the entity SKU compares them: legal forms and punctuation aside, one containing the other), its `url` is on this site, its `sameAs` are https URLs; no value without an organisation name or anything to compare it with",
    goal: 'Give the organisation one name and one home: JSON-LD, og:site_name and llms.txt agree, and its url and sameAs point where they should.',
    fix: 'Use the same name in the Organization JSON-LD, og:site_name and the llms.txt H1; set the Organization url to this site and sameAs to absolute https URLs of your profiles elsewhere.',
    spec: 'https://schema.org/sameAs',
    evidence: ['home', 'llms_txt'],
    tools: [nextTools.entity],
    evaluate: ({ facts }) => {
      if (facts.entity === undefined) return notCollected;
      const e = facts.entity;
      if (!e?.organization_name) return { score: null, seen: 'no Organization name to compare' };
      const results: { ok: boolean; what: string }[] = [];
      for (const [label, other] of [
        ['og:site_name', e.og_site_name],
        ['the llms.txt title', e.llms_txt_title],
      ] as const) {
        if (other)
          results.push({
            ok: compareField('name', e.organization_name, other) === 'consistent',
            what: `${label} "${other}"`,
          });
      }
      if (e.organization_url)
        results.push({
          ok:
            URL.canParse(e.organization_url) && sameSite(new URL(e.organization_url), new URL(facts.origin)),
          what: `Organization url ${e.organization_url}`,
        });
      const badSameAs = e.same_as.filter((u) => !/^https:\/\//.test(u));
      if (e.same_as.length)
        results.push({ ok: badSameAs.length === 0, what: `sameAs ${badSameAs.join(', ')} (not https)` });
      if (results.length === 0)
        return { score: null, seen: `"${e.organization_name}": nothing else names the site to compare` };
      const off = results.filter((r) => !r.ok);
      return {
        score: (results.length - off.length) / results.length,
        seen: off.length
          ? `Organization "${e.organization_name}" disagrees with ${off.map((r) => r.what).join('; ')}`
          : `"${e.organization_name}" agrees across ${results.length} source(s)`,
        evidence_url: `${facts.origin}/`,
      };
    },
  },
  {
    id: 'product_or_faq',
    component: 'citation_signals',
    title: 'Products or FAQs are structured',
    weight: 8,
    severity: 'info',
    rule: '1 when some page declares Product, FAQPage, Service or SoftwareApplication',
    goal: 'Make offers and answers machine-readable.',
    fix: 'Mark up offers with Product JSON-LD and common questions with FAQPage.',
    spec: 'https://schema.org/Product',
    evidence: ['home', 'page'],
    evaluate: ({ facts }) => {
      const kinds = new Set(facts.pages.flatMap((p) => p.json_ld_types));
      const found = ['Product', 'FAQPage', 'Service', 'SoftwareApplication'].filter((t) => kinds.has(t));
      return {
        score: found.length ? 1 : 0,
        seen: found.length ? `found ${found.join(', ')}` : 'no Product or FAQPage',
      };
    },
  },
  {
    id: 'open_graph',
    component: 'citation_signals',
    title: 'OpenGraph title and image',
    weight: 12,
    severity: 'info',
    rule: 'share of pages with `og:title` and `og:image`',
    goal: 'Give every page a title and image for previews and citations.',
    fix: 'Add og:title, og:description and og:image to every page.',
    spec: 'https://ogp.me/',
    evidence: ['home', 'page'],
    evaluate: ({ facts }) =>
      pageShare(facts, (p) => !!p.open_graph['og:title'] && !!p.open_graph['og:image']) ?? noPages,
  },
  {
    id: 'canonical',
    component: 'citation_signals',
    title: 'Canonical URLs',
    weight: 8,
    severity: 'info',
    rule: 'share of pages with `<link rel="canonical">`',
    goal: 'Give each page one URL, so citations point at one place.',
    fix: 'Give every page a <link rel="canonical"> so citations point at one URL.',
    spec: 'https://www.rfc-editor.org/rfc/rfc6596',
    evidence: ['home', 'page'],
    evaluate: ({ facts }) => pageShare(facts, (p) => !!p.canonical) ?? noPages,
  },
  {
    id: 'ai_txt',
    component: 'citation_signals',
    title: 'ai.txt states AI usage preferences',
    weight: 7,
    severity: 'info',
    rule: '1 when `/ai.txt` (Spawning) is served',
    goal: 'State which media AI may use, in the file Spawning-compatible crawlers read.',
    fix: 'Publish /ai.txt (Spawning format) saying which media may be used by AI.',
    spec: 'https://site.spawning.ai/spawning-ai-txt',
    evidence: ['ai_txt'],
    tools: [nextTools.llmsTxt],
    evaluate: ({ facts }) => ({
      score: facts.ai_txt ? 1 : 0,
      seen: facts.ai_txt ? `${facts.ai_txt.groups.length} group(s)` : 'no ai.txt',
      evidence_url: facts.ai_txt?.url ?? `${facts.origin}/ai.txt`,
    }),
  },
];
