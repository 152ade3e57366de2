/**
 * `{site_url}/robots.txt` (RFC 9309) with a group per kind of AI agent and a `Content-Signal`
 * line (contentsignals.org), `/ai.txt` (Spawning) and `/sitemap.xml` (sitemaps.org 0.9). The AI
 * agents named are the scanner's own list (`collectors/robots.ts`), so what we publish is what we
 * score others on; the paths kept from crawlers are the ones no crawler can use (the OAuth
 * endpoints and sign-in pages, the MCP and A2A endpoints, paid calls that answer 402, the owner dashboard
 * behind its sign-in).
 */
import type { Config } from '../config.ts';
import { aiAgents } from '../features/scans/collectors/robots.ts';
import { A2A_PATH, serverCardUrl } from './api-catalog.ts';

/** contentsignals.org: search results, answers grounded in the site, and training are all welcome. */
export const CONTENT_SIGNAL = 'search=yes, ai-input=yes, ai-train=yes';

/** The site-relative paths of URLs under the site's origin (others are another host's business). */
function sitePaths(config: Config, urls: string[]): string[] {
  const origin = new URL(config.site_url).origin;
  return urls
    .map((u) => new URL(u))
    .filter((u) => u.origin === origin)
    .map((u) => `${u.pathname.replace(/\/+$/, '')}/`);
}

export function robotsTxt(config: Config): string {
  const closed = sitePaths(config, [
    config.auth_url,
    config.mcp_url,
    `${config.site_url}${A2A_PATH}`,
    `${config.site_url}/api/public/x402`,
    `${config.site_url}/dashboard`,
  ]);
  // The MCP server cards (SEP-2127, `<streamable-http-url>/server-card`) stay open: the longest
  // match wins (RFC 9309 section 2.2.2).
  const cards = sitePaths(config, [
    serverCardUrl(config.mcp_url),
    serverCardUrl(`${config.mcp_url}/auth`),
  ]).map((p) => p.replace(/\/$/, ''));
  // `$` anchors the endpoint itself (RFC 9309 section 2.2.3); the trailing `/` closes what is under it.
  const rules = [
    'Allow: /',
    ...cards.map((p) => `Allow: ${p}`),
    ...closed.flatMap((p) => [`Disallow: ${p.replace(/\/$/, '')}$`, `Disallow: ${p}`]),
  ];
  const group = (category: string) =>
    aiAgents.filter((a) => a.category === category).map((a) => `User-agent: ${a.token}`);
  return [
    `# ${config.site_url}: documents for agents are ${config.site_url}/llms.txt and ${config.site_url}/openapi.json.`,
    '# Closed to crawlers: the authorization server, the MCP and A2A endpoints (connect a client instead),',
    '# the paid calls (they answer 402 with x402 terms) and the owner dashboard (behind a sign-in).',
    '',
    '# AI search engines and agents acting for a person.',
    ...group('search'),
    ...group('user'),
    ...rules,
    '',
    '# AI training crawlers.',
    ...group('training'),
    ...rules,
    '',
    'User-agent: *',
    `Content-Signal: ${CONTENT_SIGNAL}`,
    ...rules,
    '',
    `Sitemap: ${config.site_url}/sitemap.xml`,
    '',
  ].join('\n');
}

export function aiTxt(config: Config): string {
  return [
    '# ai.txt (https://site.spawning.ai/spawning-ai-txt): what of this site may be used to train AI models.',
    `# Documentation written for models: ${config.site_url}/llms.txt and ${config.site_url}/llms-full.txt.`,
    'User-Agent: *',
    'Allow: /',
    '',
  ].join('\n');
}

const xmlEscape = (text: string) =>
  text.replace(
    /[<>&'"]/g,
    (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&apos;', '"': '&quot;' })[c] as string,
  );

/**
 * `lastmod` (sitemaps.org) is when this process started: every page is rendered from the registry
 * and the configuration of the running version, so none changed before that (the scanner's
 * `sitemap_lastmod` check asks for it).
 */
export function sitemapXml(config: Config, pages: readonly string[], lastmod: Date = new Date()): string {
  const base = config.site_url;
  const at = lastmod.toISOString().replace(/\.\d{3}Z$/, 'Z');
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">',
    ...pages.map((p) => `  <url><loc>${xmlEscape(`${base}${p}`)}</loc><lastmod>${at}</lastmod></url>`),
    '</urlset>',
    '',
  ].join('\n');
}
