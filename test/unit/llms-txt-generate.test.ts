/**
 * The llms-txt SKU's generator on its own (pure): pages in, files out. Every file it writes must
 * be read back by our own collectors as valid, whatever the pages hold (a property test over
 * hostile titles, descriptions and URLs), and the choices it makes - site name, link names,
 * sections, what is left out, the ai.txt policy - are pinned case by case.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type ExtractedPage,
  extractPage,
  generateSiteFiles,
  MAX_FULL_TEXT_CHARS,
  sectionOf,
  trainingPolicyOf,
} from '../../servers/features/catalog/llms-txt/generate.ts';
import { parseAiTxt } from '../../servers/features/scans/collectors/ai-txt.ts';
import { parseLlmsTxt } from '../../servers/features/scans/collectors/llms-txt.ts';
import { parsePage } from '../../servers/features/scans/collectors/page.ts';
import { absentRobots, parseRobots } from '../../servers/features/scans/collectors/robots.ts';

const ORIGIN = 'https://acme.example';

function html(options: {
  title?: string;
  description?: string;
  jsonLd?: unknown;
  head?: string;
  body: string;
}): string {
  const escaped = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/"/g, '&quot;');
  return `<!doctype html><html><head>${options.title === undefined ? '' : `<title>${escaped(options.title)}</title>`}
${options.description === undefined ? '' : `<meta name="description" content="${escaped(options.description)}">`}
${options.jsonLd ? `<script type="application/ld+json">${JSON.stringify(options.jsonLd)}</script>` : ''}${options.head ?? ''}
</head><body>${options.body}</body></html>`;
}

function page(path: string, source: Parameters<typeof html>[0]): ExtractedPage {
  const url = new URL(path, ORIGIN).href;
  const body = html(source);
  return extractPage(body, parsePage(body, url));
}

const site = (pages: ExtractedPage[], robots = absentRobots()) =>
  generateSiteFiles({ origin: ORIGIN, robots, pages });

describe('extractPage', () => {
  it('keeps the main content as markdown, without navigation, header, footer, scripts or forms', () => {
    const extracted = page('/guide', {
      title: 'Guide | Acme',
      body: `<header><a href="/">Acme</a> <nav><a href="/pricing">Pricing</a></nav></header>
<main><article><header><h1>The guide</h1></header><p>First things first. Then <a href="setup">set up</a>
and <a href="javascript:alert(1)">click</a>.</p><ul><li>one</li><li>two</li></ul>
<pre><code>npm start</code></pre><form><input name="q"></form><script>track()</script></article></main>
<aside>Related</aside><footer>Copyright Acme</footer>`,
    });
    expect(extracted.markdown).toBe(
      '# The guide\n\nFirst things first. Then [set up](https://acme.example/setup) and click.\n\n- one\n- two\n\n```\nnpm start\n```',
    );
    expect(page('/l', { body: '<ol start="3"><li>c</li><li>d<ul><li>e</li></ul></li></ol>' }).markdown).toBe(
      '3. c\n4. d\n   - e',
    );
    expect(extracted.lead).toBe('First things first.');
    expect(extracted.title).toBe('Guide | Acme');
  });

  it('links to the canonical URL on the same origin, and only there', () => {
    const canonical = page('/a?utm=x', { head: '<link rel="canonical" href="/a">', body: '<p>A</p>' });
    expect(canonical.link_url).toBe(`${ORIGIN}/a`);
    const elsewhere = page('/b', {
      head: '<link rel="canonical" href="https://other.example/b">',
      body: '<p>B</p>',
    });
    expect(elsewhere.link_url).toBe(`${ORIGIN}/b`);
  });

  it('collects the names a page gives its site: Organization, then WebSite, then og:site_name', () => {
    const extracted = page('/', {
      head: '<meta property="og:site_name" content="Acme OG">',
      jsonLd: {
        '@graph': [
          { '@type': 'WebSite', name: 'Acme Site' },
          { '@type': 'https://schema.org/Corporation', name: 'Acme Inc.' },
        ],
      },
      body: '<p>Hi</p>',
    });
    expect(extracted.site_names).toEqual(['Acme Inc.', 'Acme Site', 'Acme OG']);
  });
});

describe('generateSiteFiles', () => {
  it('names the site and its pages from what the pages say', () => {
    const home = page('/', {
      title: 'Acme — Widgets for agents',
      description: 'Widgets, fast.',
      body: '<p>x</p>',
    });
    const pricing = page('/pricing', { title: 'Pricing | Acme', body: '<h1>Pricing</h1><p>Cheap.</p>' });
    const untitled = page('/notes/2026', { body: '<p>No title here. At all.</p>' });
    const files = site([pricing, home, untitled]);
    expect(files.site_name).toBe('Acme');
    expect(files.summary).toBe('Widgets, fast.');
    expect(files.links).toEqual([
      { section: 'Products', name: 'Pricing', url: `${ORIGIN}/pricing`, notes: 'Cheap.', in_full_text: true },
      { section: 'Pages', name: 'Acme', url: `${ORIGIN}/`, notes: 'Widgets, fast.', in_full_text: true },
      {
        section: 'Pages',
        name: '/notes/2026',
        url: `${ORIGIN}/notes/2026`,
        notes: 'No title here.',
        in_full_text: true,
      },
    ]);
    // The page's own H1 repeating its title is not repeated under the section heading.
    expect(files.llms_full_txt).toContain(`# Pricing\n\nSource: ${ORIGIN}/pricing\n\nCheap.`);
    expect(site([untitled]).site_name).toBe('acme.example');
    // Without a home page or a description, no other page's sentence is taken for the site's.
    expect(site([untitled]).summary).toBe('The website at acme.example.');
  });

  it('sorts pages into sections by path, then by schema.org type, with legal and archive pages Optional', () => {
    const at = (path: string, types: string[] = []) =>
      sectionOf({ url: `${ORIGIN}${path}`, json_ld_types: types });
    expect(at('/')).toBe('Pages');
    expect(at('/docs/install')).toBe('Docs');
    expect(at('/en/help/returns')).toBe('Docs');
    expect(at('/products/widget')).toBe('Products');
    expect(at('/blog/2026/hello')).toBe('Blog');
    expect(at('/about')).toBe('About');
    expect(at('/privacy')).toBe('Optional');
    expect(at('/tag/widgets')).toBe('Optional');
    expect(at('/widget-x', ['Product'])).toBe('Products');
    expect(at('/how-to-x', ['HowTo'])).toBe('Docs');
    expect(at('/something')).toBe('Pages');
  });

  it('leaves out noindex pages, duplicates of a canonical page, and sign-in, account and cart pages', () => {
    const files = site([
      page('/', { title: 'Acme', body: '<p>Home.</p>' }),
      page('/hidden', { head: '<meta name="robots" content="noindex">', body: '<p>h</p>' }),
      page('/a', { body: '<p>a</p>' }),
      page('/a?ref=x', { head: '<link rel="canonical" href="/a">', body: '<p>a</p>' }),
      page('/login', { body: '<p>l</p>' }),
      page('/shop/cart', { body: '<p>c</p>' }),
      page('/account/settings', { body: '<p>s</p>' }),
    ]);
    expect(files.links.map((l) => l.url)).toEqual([`${ORIGIN}/`, `${ORIGIN}/a`]);
    expect(files.pages_left_out).toBe(5);
  });

  it('moves links past 30 in a section to Optional, and caps Optional', () => {
    const pages = Array.from({ length: 100 }, (_, i) =>
      page(`/products/p${i}`, { title: `P${i}`, body: '<p>x</p>' }),
    );
    const files = site(pages);
    expect(files.links.filter((l) => l.section === 'Products')).toHaveLength(30);
    expect(files.links.filter((l) => l.section === 'Optional')).toHaveLength(60);
    expect(files.pages_left_out).toBe(10);
    // Optional pages are listed, not copied into llms-full.txt.
    expect(files.links.filter((l) => l.in_full_text)).toHaveLength(30);
    expect(parseLlmsTxt(files.llms_txt).sections.map((s) => [s.name, s.optional, s.links.length])).toEqual([
      ['Products', false, 30],
      ['Optional', true, 60],
    ]);
  });

  it(`keeps llms-full.txt under ${MAX_FULL_TEXT_CHARS} characters, saying which pages did not fit`, () => {
    const long = `<p>${'word '.repeat(11_000)}</p>`;
    const pages = Array.from({ length: 25 }, (_, i) => page(`/docs/d${i}`, { title: `D${i}`, body: long }));
    const files = site(pages);
    expect(files.llms_full_txt.length).toBeLessThanOrEqual(MAX_FULL_TEXT_CHARS + 1);
    expect(files.full_text_left_out).toBeGreaterThan(0);
    expect(files.links.filter((l) => !l.in_full_text)).toHaveLength(files.full_text_left_out);
  });

  it("writes in ai.txt the training policy the site's robots.txt states", () => {
    const robots = (text: string) => parseRobots(`${ORIGIN}/robots.txt`, text);
    expect(trainingPolicyOf(robots('User-agent: *\nContent-Signal: ai-train=no\nAllow: /\n'))).toEqual({
      training: 'disallowed',
      reason: 'robots.txt says Content-Signal: ai-train=no',
    });
    expect(
      trainingPolicyOf(robots('User-agent: *\nContent-Signal: search=yes, ai-train=yes\n')).training,
    ).toBe('allowed');
    expect(trainingPolicyOf(robots('User-agent: GPTBot\nUser-agent: CCBot\nDisallow: /\n'))).toEqual({
      training: 'disallowed',
      reason: 'robots.txt blocks the AI training crawlers GPTBot, CCBot',
    });
    // Blocking a search agent says nothing about training.
    expect(trainingPolicyOf(robots('User-agent: PerplexityBot\nDisallow: /\n')).training).toBe('allowed');
    expect(trainingPolicyOf(robots('User-agent: *\nDisallow: /\n')).training).toBe('disallowed');
    expect(trainingPolicyOf(absentRobots()).training).toBe('allowed');

    const closed = site([page('/', { body: '<p>x</p>' })], robots('User-agent: GPTBot\nDisallow: /\n'));
    const parsed = parseAiTxt(closed.ai_txt);
    expect(parsed).toMatchObject({ disallows_all: true, unknown_lines: 0 });
    expect(closed.ai_txt.startsWith('# Spawning AI\n')).toBe(true);
    const open = parseAiTxt(site([page('/', { body: '<p>x</p>' })]).ai_txt);
    expect(open).toEqual({
      groups: [{ user_agents: ['*'], allow: ['/', '*'], disallow: [] }],
      disallows_all: false,
      unknown_lines: 0,
    });
  });

  it('writes an llms.txt our collector reads as valid with a summary, whatever the pages hold', () => {
    const text = fc.string({ unit: 'grapheme', maxLength: 60 });
    const hostile = fc.oneof(
      text,
      fc.constantFrom(
        '[a](b)',
        '# not a title',
        '> quote',
        '- [x](y): z',
        'a]b[c',
        'line\nbreak',
        ')(',
        '  ',
        '',
      ),
    );
    const segment = fc.oneof(
      fc.webSegment().filter((s) => s.length > 0),
      fc.constantFrom('a(b)', 'x y', 'docs', 'privacy', 'login', 'ü', '%41', '[x]'),
    );
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            path: fc.array(segment, { maxLength: 3 }).map((s) => `/${s.join('/')}`),
            title: fc.option(hostile, { nil: undefined }),
            description: fc.option(hostile, { nil: undefined }),
            body: hostile,
          }),
          { minLength: 1, maxLength: 8 },
        ),
        (specs) => {
          const pages = specs.map((s) => {
            const body = `<p>${s.body.replace(/</g, '&lt;')}</p>`;
            const url = new URL(s.path, ORIGIN).href;
            const source = html({
              body,
              ...(s.title === undefined ? {} : { title: s.title }),
              ...(s.description === undefined ? {} : { description: s.description }),
            });
            return extractPage(source, parsePage(source, url));
          });
          const files = site(pages);
          const parsed = parseLlmsTxt(files.llms_txt, ORIGIN);
          expect(parsed.valid, files.llms_txt).toBe(true);
          expect(parsed.problems, files.llms_txt).toEqual([]);
          expect(parsed.title).toBe(files.site_name);
          expect(parsed.summary).toBeTruthy();
          const links = parsed.sections.flatMap((s) => s.links.map((l) => ({ section: s.name, ...l })));
          expect(links).toEqual(
            files.links.map((l) => ({
              section: l.section,
              name: l.name,
              url: new URL(l.url).href,
              notes: l.notes,
            })),
          );
          expect(parseAiTxt(files.ai_txt).unknown_lines).toBe(0);
        },
      ),
      { numRuns: 300 },
    );
  });
});
