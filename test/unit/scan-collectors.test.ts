import { describe, expect, it } from 'vitest';
import { parseAiTxt } from '../../servers/features/scans/collectors/ai-txt.ts';
import {
  checkApiCatalog,
  checkMarkdownNegotiation,
  checkMcpCard,
  checkOpenApi,
  checkProtectedResource,
  checkX402,
  type Fetched,
} from '../../servers/features/scans/collectors/discovery.ts';
import { parseLlmsTxt } from '../../servers/features/scans/collectors/llms-txt.ts';
import { parsePage } from '../../servers/features/scans/collectors/page.ts';
import { absentRobots, parseRobots, parseSignals } from '../../servers/features/scans/collectors/robots.ts';
import { parseSitemap } from '../../servers/features/scans/collectors/sitemap.ts';
import {
  answersLikeUnknownPath,
  fingerprintOf,
  isHtmlAnswer,
} from '../../servers/features/scans/collectors/soft-404.ts';

const robotsUrl = 'https://shop.example/robots.txt';

describe('robots.txt collector', () => {
  const text = [
    'User-agent: GPTBot',
    'User-agent: CCBot',
    'Disallow: /',
    '',
    'User-agent: OAI-SearchBot',
    'Allow: /',
    'Content-Signal: search=yes, ai-train=no',
    '',
    'user-agent: *',
    'Disallow: /checkout # carts are private',
    'Sitemap: https://shop.example/sitemap.xml',
  ].join('\r\n');

  it('reports, per AI agent token, whether a group names it and whether / is allowed', () => {
    const facts = parseRobots(robotsUrl, text);
    const by = Object.fromEntries(facts.agents.map((a) => [a.token, a]));
    expect(by.GPTBot).toMatchObject({ named: true, allowed_root: false, category: 'training' });
    expect(by.CCBot).toMatchObject({ named: true, allowed_root: false });
    expect(by['OAI-SearchBot']).toMatchObject({ named: true, allowed_root: true, category: 'search' });
    // Not named: falls under * which allows /.
    expect(by.ClaudeBot).toMatchObject({ named: false, allowed_root: true });
    expect(facts.user_agents).toEqual(['GPTBot', 'CCBot', 'OAI-SearchBot', '*']);
    expect(facts.sitemaps).toEqual(['https://shop.example/sitemap.xml']);
    expect(facts.blocks_everyone).toBe(false);
  });

  it('collects Content-Signal lines with the group they belong to', () => {
    const facts = parseRobots(robotsUrl, text);
    expect(facts.content_signals).toEqual([
      {
        user_agents: ['OAI-SearchBot'],
        signals: { search: true, 'ai-train': false },
        raw: 'search=yes, ai-train=no',
      },
    ]);
    expect(parseSignals('search=yes,ai-input=no, ai-train=no')).toEqual({
      search: true,
      'ai-input': false,
      'ai-train': false,
    });
    // Not a valid structured field (a space inside a token), parsed loosely.
    expect(parseSignals('search = yes, ai-train=no')).toEqual({ search: true, 'ai-train': false });
  });

  it('sees a site closed to everyone, and treats a missing robots.txt as allowing all', () => {
    const closed = parseRobots(robotsUrl, 'User-agent: *\nDisallow: /\n');
    expect(closed.blocks_everyone).toBe(true);
    expect(closed.agents.every((a) => !a.allowed_root && !a.named)).toBe(true);
    const absent = absentRobots();
    expect(absent.present).toBe(false);
    expect(absent.agents.every((a) => a.allowed_root)).toBe(true);
  });
});

describe('llms.txt collector (llmstxt.org)', () => {
  it('parses title, summary, sections, links and the Optional section', () => {
    const parsed = parseLlmsTxt(
      [
        '# FastHTML',
        '',
        '> FastHTML is a python library for web applications.',
        '',
        'Important notes: free text is allowed here.',
        '',
        '## Docs',
        '',
        '- [Quick start](https://fastht.ml/docs/tutorials/quickstart.html.md): A brief overview',
        '- [HTMX reference](/docs/htmx.md)',
        '',
        '## Optional',
        '',
        '- [Starlette docs](https://starlette.io/full.md): a subset of the docs',
      ].join('\n'),
      'https://fastht.ml/llms.txt',
    );
    expect(parsed).toMatchObject({
      valid: true,
      title: 'FastHTML',
      summary: 'FastHTML is a python library for web applications.',
      link_count: 3,
      problems: [],
    });
    expect(parsed.sections.map((s) => [s.name, s.optional, s.links.length])).toEqual([
      ['Docs', false, 2],
      ['Optional', true, 1],
    ]);
    expect(parsed.sections[0]?.links[0]).toEqual({
      name: 'Quick start',
      url: 'https://fastht.ml/docs/tutorials/quickstart.html.md',
      notes: 'A brief overview',
    });
    expect(parsed.sections[0]?.links[1]).toMatchObject({
      url: 'https://fastht.ml/docs/htmx.md',
      notes: null,
    });
  });

  it('flags a file without an H1 and list items that are not links', () => {
    const parsed = parseLlmsTxt('Welcome!\n\n## Pages\n\n- home page\n- [About](/about)\n');
    expect(parsed.valid).toBe(false);
    expect(parsed.title).toBeNull();
    expect(parsed.problems.join(' ')).toMatch(/H1/);
    expect(parsed.problems.join(' ')).toMatch(/1 list item/);
  });
});

describe('ai.txt collector', () => {
  it('reads Spawning groups and sees a blanket disallow', () => {
    const parsed = parseAiTxt('# ai.txt\nUser-Agent: *\nDisallow: *.jpg\nDisallow: *.png\nAllow: *.txt\n');
    expect(parsed.groups).toEqual([{ user_agents: ['*'], allow: ['*.txt'], disallow: ['*.jpg', '*.png'] }]);
    expect(parsed.disallows_all).toBe(false);
    expect(parseAiTxt('User-Agent: *\nDisallow: /\n').disallows_all).toBe(true);
  });
});

describe('sitemap collector', () => {
  it('reads a urlset, a sitemap index, and refuses other XML', () => {
    const urlset = parseSitemap(
      '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc> https://a.example/ </loc><lastmod>2026-01-01</lastmod></url></urlset>',
    );
    expect(urlset).toEqual({ kind: 'urlset', urls: [{ loc: 'https://a.example/', lastmod: '2026-01-01' }] });
    const index = parseSitemap(
      '<sitemapindex><sitemap><loc>https://a.example/s1.xml</loc></sitemap><sitemap><loc>https://a.example/s2.xml</loc></sitemap></sitemapindex>',
    );
    expect(index).toEqual({
      kind: 'index',
      sitemaps: ['https://a.example/s1.xml', 'https://a.example/s2.xml'],
    });
    expect(parseSitemap('<html><body>hi</body></html>').kind).toBe('invalid');
  });

  it('does not expand entities (billion laughs)', () => {
    const bomb = `<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><urlset><url><loc>&b;</loc></url></urlset>`;
    const parsed = parseSitemap(bomb);
    expect(JSON.stringify(parsed).length).toBeLessThan(500);
  });
});

describe('page collector', () => {
  const html = `<!doctype html><html lang="en"><head><title> Acme  Tools </title>
    <meta name="description" content="Tools for builders.">
    <link rel="canonical" href="/tools">
    <link rel="service-desc" href="/openapi.json">
    <link rel="alternate" type="text/markdown" href="/tools.md">
    <meta property="og:title" content="Acme"><meta property="og:image" content="https://cdn.example/a.png">
    <meta name="robots" content="noindex, follow">
    <script type="application/ld+json">{"@context":"https://schema.org","@graph":[{"@type":"Organization","name":"Acme"},{"@type":["Product","https://schema.org/Thing"],"offers":{"@type":"Offer"}}]}</script>
    <script type="application/ld+json">{ not json</script>
    <script>var hidden = "these words do not count";</script></head>
    <body><h1>Tools</h1><h2>Hammers</h2><h2>Saws</h2><h3>Small</h3>
    <p>Five words are in here.</p><a href="/about#team">About</a><a href="mailto:x@y.z">Mail</a>
    <a href="https://other.example/">Other</a></body></html>`;

  it('extracts title, description, headings, words, JSON-LD types, OpenGraph, canonical and links', () => {
    const facts = parsePage(html, 'https://acme.example/tools?x=1');
    expect(facts).toMatchObject({
      title: 'Acme Tools',
      description: 'Tools for builders.',
      lang: 'en',
      h1: ['Tools'],
      h2_count: 2,
      h3_count: 1,
      json_ld_errors: 1,
      canonical: 'https://acme.example/tools',
      noindex: true,
      markdown_alternate: 'https://acme.example/tools.md',
      openapi_links: ['https://acme.example/openapi.json'],
      open_graph: { 'og:title': 'Acme', 'og:image': 'https://cdn.example/a.png' },
    });
    expect(facts.json_ld_types.sort()).toEqual(['Offer', 'Organization', 'Product', 'Thing']);
    // h1 + 2 h2 + h3 + 5 words + 3 link texts; script text is not counted.
    expect(facts.word_count).toBe(1 + 2 + 1 + 5 + 3);
    expect(facts.links).toEqual(['https://acme.example/about', 'https://other.example/']);
  });
});

describe('discovery documents and markdown negotiation', () => {
  const ok = (body: unknown, contentType = 'application/json', url = 'https://a.example/x'): Fetched => ({
    url,
    status: 200,
    content_type: contentType,
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

  it('judges an RFC 9727 api-catalog linkset and collects its service-desc links', () => {
    const catalog = checkApiCatalog(
      ok(
        { linkset: [{ anchor: 'https://a.example/api', 'service-desc': [{ href: '/openapi.json' }] }] },
        'application/linkset+json',
        'https://a.example/.well-known/api-catalog',
      ),
      'https://a.example/.well-known/api-catalog',
    );
    expect(catalog).toMatchObject({ present: true, valid: true, note: null, apis: 1 });
    expect(catalog.service_descs).toEqual(['https://a.example/openapi.json']);
    expect(checkApiCatalog(ok({ apis: [] }), 'u')).toMatchObject({ present: true, valid: false });
    // A hostile catalog cannot fail the scan: an href that is no URL makes it invalid, nothing more.
    expect(
      checkApiCatalog(
        ok({ linkset: [{ anchor: 'https://a.example/api', 'service-desc': [{ href: 'http://[::1' }] }] }),
        'https://a.example/.well-known/api-catalog',
      ),
    ).toMatchObject({
      present: true,
      valid: false,
      service_descs: [],
      note: '1 service-desc href(s) are not URLs',
    });
    expect(checkApiCatalog({ ...ok('nope'), status: 404 }, 'u')).toMatchObject({
      present: false,
      note: 'HTTP 404',
    });
    expect(checkApiCatalog(null, 'u')).toMatchObject({ present: false, note: 'not fetched' });
  });

  it('judges OAuth metadata, MCP server cards in either form, and x402', () => {
    expect(checkProtectedResource(ok({ resource: 'https://a.example' }), 'u').valid).toBe(true);
    expect(checkProtectedResource(ok({ issuer: 'x' }), 'u').valid).toBe(false);
    expect(
      checkMcpCard(ok({ serverInfo: { name: 'a' }, transport: { endpoint: 'https://a.example/mcp' } }), 'u')
        .valid,
    ).toBe(true);
    expect(checkMcpCard(ok({ name: 'a', url: 'https://a.example/mcp' }), 'u').valid).toBe(true);
    expect(checkMcpCard(ok({ name: 'a' }), 'u').valid).toBe(false);
    expect(checkX402(ok({ x402Version: 2, resources: [] }), 'u').valid).toBe(true);
  });

  it('accepts markdown only when it is labelled and is not HTML', () => {
    expect(checkMarkdownNegotiation(ok('# Hi', 'text/markdown; charset=utf-8'), 'u').supported).toBe(true);
    expect(checkMarkdownNegotiation(ok('<!doctype html><p>', 'text/markdown'), 'u').supported).toBe(false);
    expect(checkMarkdownNegotiation(ok('<html>', 'text/html'), 'u')).toMatchObject({
      supported: false,
      note: 'answered text/html',
    });
  });
});

describe('soft 404s: answers like a made-up path earn nothing', () => {
  const shell =
    '<!doctype html><html><head><title>App</title></head><body><div id="root"></div></body></html>';
  const answer = (
    url: string,
    body: string,
    contentType: string | null = 'text/html; charset=utf-8',
    status = 200,
  ): Fetched => ({
    url,
    status,
    content_type: contentType,
    body,
  });
  const probeUrl = 'https://app.example/.well-known/agent-service-probe-0123456789abcdef';
  const spa = fingerprintOf(answer(probeUrl, shell));
  const catalogUrl = 'https://app.example/.well-known/api-catalog';

  it('recognises the same answer, even when it echoes the path or carries a fresh request id', () => {
    expect(answersLikeUnknownPath(answer(catalogUrl, shell), spa)).toBe(true);
    // Echoing the requested URL or path does not make an answer different.
    const echo = (url: string) => `<html><body>No page at ${new URL(url).pathname} (${url})</body></html>`;
    expect(
      answersLikeUnknownPath(
        answer(catalogUrl, echo(catalogUrl)),
        fingerprintOf(answer(probeUrl, echo(probeUrl))),
      ),
    ).toBe(true);
    // A catch-all JSON answer with a request id: same members, so the same answer.
    const api = (url: string, id: string) =>
      answer(
        url,
        JSON.stringify({ error: 'Not Found', path: new URL(url).pathname, request_id: id }),
        'application/json',
      );
    expect(answersLikeUnknownPath(api(catalogUrl, 'r2'), fingerprintOf(api(probeUrl, 'r1')))).toBe(true);
    // A real document differs; so does another status or media type.
    expect(
      answersLikeUnknownPath(answer(catalogUrl, '{"linkset":[]}', 'application/linkset+json'), spa),
    ).toBe(false);
    expect(answersLikeUnknownPath(answer(catalogUrl, shell, 'text/plain'), spa)).toBe(false);
    expect(answersLikeUnknownPath(answer(catalogUrl, shell, 'text/html', 201), spa)).toBe(false);
    // A site that answers made-up paths with 404 has no soft 404 to match, whatever its pages say.
    const proper = fingerprintOf(answer(probeUrl, shell, 'text/html', 404));
    expect(answersLikeUnknownPath(answer(catalogUrl, shell), proper)).toBe(false);
    expect(answersLikeUnknownPath(answer(catalogUrl, shell), null)).toBe(false);
  });

  it('tells HTML pages by their label or their start, not markdown that opens with a comment', () => {
    expect(isHtmlAnswer(answer('u', shell, 'text/plain'))).toBe(true);
    expect(isHtmlAnswer(answer('u', '\uFEFF <!-- app --> <HTML lang="en">', 'application/json'))).toBe(true);
    expect(isHtmlAnswer(answer('u', '{}', 'application/xhtml+xml'))).toBe(true);
    expect(isHtmlAnswer(answer('u', '<!-- generated -->\n# Acme\n', 'text/plain'))).toBe(false);
    expect(isHtmlAnswer(answer('u', 'User-agent: *\nAllow: /\n', null))).toBe(false);
  });

  it('gives a JSON document partial credit only when it is a JSON object that is not the soft-404 answer', () => {
    // The attack: the app shell at every document path, before and without a probe.
    for (const check of [checkApiCatalog, checkMcpCard, checkX402, checkOpenApi, checkProtectedResource]) {
      expect(check(answer(catalogUrl, shell), catalogUrl, spa), check.name).toMatchObject({
        present: false,
        valid: false,
        note: 'answered like a made-up path (a soft 404)',
      });
      // Without the probe (it failed), HTML is still not the document.
      expect(check(answer(catalogUrl, shell), catalogUrl), check.name).toMatchObject({
        present: false,
        note: 'an HTML page, not the document',
      });
    }
    // A catch-all that answers 200 text/plain is not JSON either.
    expect(checkX402(answer(catalogUrl, 'OK', 'text/plain'), catalogUrl)).toMatchObject({
      present: false,
      note: 'not a JSON object',
    });
    expect(checkOpenApi(answer(catalogUrl, 'OK', 'text/plain'), catalogUrl)).toMatchObject({
      present: false,
    });
    // Really there but incomplete: partial credit stays.
    expect(
      checkX402(answer(catalogUrl, '{"description":"soon"}', 'application/json'), catalogUrl, spa),
    ).toMatchObject({
      present: true,
      valid: false,
    });
    expect(
      checkMcpCard(answer(catalogUrl, '{"name":"a"}', 'application/json'), catalogUrl, spa),
    ).toMatchObject({
      present: true,
      valid: false,
    });
    expect(
      checkOpenApi(answer(catalogUrl, 'info:\n  title: A\npaths: {}\n', 'application/yaml'), catalogUrl, spa),
    ).toMatchObject({
      present: true,
      valid: false,
    });
    expect(
      checkOpenApi(answer(catalogUrl, 'openapi: 3.1.0\ninfo:\n  title: A\n', 'text/yaml'), catalogUrl, spa),
    ).toMatchObject({
      present: true,
      valid: true,
    });
  });
});
