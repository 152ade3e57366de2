/**
 * `GET {site_url}/`: the home page, server-rendered from the registry and the configuration - what
 * the service does, each API with its URL and operations, the one-line MCP connection, the
 * discovery documents - in HTML for people, in Markdown for agents that ask for `text/markdown`
 * (same content), and as the JSON map of URLs for clients that ask for JSON. When
 * `pages.pixel_site_id` is set the HTML carries the service's own traffic pixel.
 *
 * Rendered in the shared layout of the pages (layout.ts).
 */
import { createHash } from 'node:crypto';
import { descriptorUrl, signupUrl, skillUrl } from '../../auth/descriptor.ts';
import { API_CATALOG_PATH, type Api, apis } from '../adapters/api-catalog.ts';
import { callUrl, llmsFullTxt, mcpConnectLine, priceOf, serviceSummary } from '../adapters/llms-txt.ts';
import { MCP_CATALOG_PATH } from '../adapters/mcp-server-card.ts';
import { WEBMCP_SCRIPT_PATH, webmcpOrigins } from '../adapters/webmcp-tools.ts';
import { type Config, SERVICE_TITLE, serviceVersion } from '../config.ts';
import { installSnippets } from '../features/sites/snippets.ts';
import type { AnyOperation } from '../operation.ts';
import { html, raw } from './html.ts';
import { layout, OG_IMAGE_PATH, pageCsp } from './layout.ts';
import type { RenderedPage } from './negotiate.ts';

/** The HTML pages of the site (for the sitemap); the pages of section 2 add theirs. */
export const pagePaths = [
  '/',
  '/leaderboard',
  '/agenthub',
  '/featured',
  '/souls',
  '/robot-soul',
  '/agent-requests',
  '/docs',
] as const;

export { OG_IMAGE_PATH };

export interface DiscoveryLink {
  title: string;
  url: string;
  about: string;
}

/** The discovery documents of the site, in the order the home page and docs/reference/discovery.md list them. */
export function discoveryLinks(config: Config): DiscoveryLink[] {
  const site = config.site_url;
  return [
    {
      title: 'llms.txt',
      url: `${site}/llms.txt`,
      about: 'every operation with its URL, for language models',
    },
    {
      title: 'llms-full.txt',
      url: `${site}/llms-full.txt`,
      about: 'the same with full descriptions and arguments',
    },
    {
      title: 'OpenAPI (JSON)',
      url: `${site}/openapi.json`,
      about: 'every REST surface in one OpenAPI 3.1.0 document',
    },
    { title: 'OpenAPI (YAML)', url: `${site}/openapi.yaml`, about: 'the same document in YAML' },
    { title: 'API catalog', url: `${site}${API_CATALOG_PATH}`, about: 'RFC 9727 linkset, one entry per API' },
    {
      title: 'x402 resources',
      url: `${site}/.well-known/x402.json`,
      about: 'paid resources, prices and payment terms',
    },
    { title: 'MCP catalog', url: `${site}${MCP_CATALOG_PATH}`, about: 'the MCP server cards (SEP-2127)' },
    {
      title: 'Protected resource metadata',
      url: `${site}/.well-known/oauth-protected-resource`,
      about: 'RFC 9728, for Bearer writes on the site',
    },
    {
      title: 'Authorization server metadata',
      url: `${site}/.well-known/oauth-authorization-server`,
      about: `RFC 8414, mirror of ${config.auth_url}`,
    },
    {
      title: 'Agent authentication',
      url: descriptorUrl(config),
      about: 'how agents sign in, and the auth.md skill',
    },
    {
      title: 'robots.txt',
      url: `${site}/robots.txt`,
      about: 'crawler rules, AI agents named, Content-Signal',
    },
    { title: 'ai.txt', url: `${site}/ai.txt`, about: 'AI training permissions (Spawning)' },
    { title: 'Sitemap', url: `${site}/sitemap.xml`, about: 'the pages of the site' },
  ];
}

function operationLine(op: AnyOperation, api: Api, config: Config) {
  const price = priceOf(op);
  return {
    title: op.title,
    url: callUrl(op, api, config),
    method: api.kind === 'rest' && op.http ? op.http.method : null,
    tool: op.mcp?.length ? op.toolName : null,
    summary: op.description.split(/(?<=\.)\s/)[0] ?? op.title,
    price,
  };
}

/** Operation descriptions are written for models, in Markdown: their `code` spans shown as code, not backticks. */
const withCode = (text: string) =>
  text.split('`').map((part, i) => (i % 2 === 1 ? html`<code>${part}</code>` : part));

/** What the page shows, once per process: a pure function of (operations, config). */
function model(operations: readonly AnyOperation[], config: Config) {
  return apis(operations, config).map((api) => ({
    api,
    lines: api.operations
      .filter((op) => api.kind === 'rest' || !op.http)
      .map((op) => operationLine(op, api, config)),
  }));
}

const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

/**
 * The HTML's Content-Security-Policy allows the service's own scripts (`/webmcp.js`) and its inline
 * script (the pixel) by hash only, and calls to the origins the WebMCP tools and the beacon use.
 */
export function homePage(operations: readonly AnyOperation[], config: Config): RenderedPage {
  const sections = model(operations, config);
  const site = config.site_url;
  const canonical = `${site}/`;
  const description =
    'Agent service: customer service tools for personal agents, website agent-readiness scans, ' +
    'an AI traffic pixel, agent identities and paid SKUs over x402 - as REST APIs and MCP servers.';
  const connect = mcpConnectLine(config);
  const snippet = config.pages.pixel_site_id
    ? installSnippets(config.public_api_url, config.pages.pixel_site_id)
    : null;
  const pixelScript = snippet ? (/^<script>([\s\S]*)<\/script>$/.exec(snippet.script)?.[1] ?? '') : '';
  const links = discoveryLinks(config);

  const jsonLd = {
    '@context': 'https://schema.org',
    '@graph': [
      {
        '@type': 'Organization',
        '@id': `${canonical}#organization`,
        name: SERVICE_TITLE,
        url: canonical,
        logo: `${site}${OG_IMAGE_PATH}`,
      },
      {
        '@type': 'WebSite',
        '@id': `${canonical}#website`,
        name: SERVICE_TITLE,
        url: canonical,
        publisher: { '@id': `${canonical}#organization` },
      },
      {
        '@type': 'SoftwareApplication',
        name: SERVICE_TITLE,
        applicationCategory: 'DeveloperApplication',
        operatingSystem: 'Any (HTTP API and MCP)',
        softwareVersion: serviceVersion,
        url: canonical,
        description: serviceSummary,
        provider: { '@id': `${canonical}#organization` },
        offers: {
          '@type': 'Offer',
          price: '0',
          priceCurrency: 'USD',
          description: 'Free operations; paid SKUs per call in USDC.',
        },
      },
    ],
  };

  const head = html`<link rel="api-catalog" href="${site}${API_CATALOG_PATH}">
<link rel="service-desc" type="application/openapi+json" href="${site}/openapi.json">
<link rel="alternate" type="text/plain" title="llms.txt" href="${site}/llms.txt">
`;
  const body = html`<h1>${SERVICE_TITLE}: customer service and agent-readiness APIs for AI agents</h1>
<p>${serviceSummary}</p>
<section id="pages" class="card" aria-labelledby="pages-h">
<h2 id="pages-h">For people</h2>
<ul>
<li><a href="${site}/leaderboard">Signal Strength leaderboard</a>: which sites are ready for AI agents, and a report per site.</li>
<li><a href="${site}/agenthub">Agent hub</a>: the directory's storefront; <a href="${site}/featured">the Featured Brand slot</a> and how to bid for it.</li>
<li><a href="${site}/souls">Soul registry</a>: registered agent identities; <a href="${site}/robot-soul">how to register one</a>.</li>
<li><a href="${site}/agent-requests">For brands</a>: how return and refund requests from personal agents reach you, and what you get.</li>
<li><a href="${site}/docs">API reference</a>: every REST surface, from the OpenAPI document.</li>
</ul>
</section>
<section id="connect">
<h2>Connect an MCP client in one line</h2>
<p>The public MCP server speaks Streamable HTTP at <code>${config.mcp_url}</code> and needs no sign-in. Add it to Claude Desktop, Cursor, VS Code or any client that reads an <code>mcp.json</code>:</p>
<pre><code>${connect}</code></pre>
<p>Agents without an MCP client call the same operations over REST; the whole site is described by <a href="${site}/openapi.json">one OpenAPI document</a>, and every operation is listed for language models in <a href="${site}/llms.txt">llms.txt</a>. Agents may sign up anonymously at <code>${signupUrl(config)}</code> and read <a href="${skillUrl(config)}">auth.md</a> for the ways to authenticate.</p>
</section>
${sections.map(
  ({ api, lines }) => html`<section id="${api.id}">
<h2>${api.title}</h2>
<p>${api.summary} Address: <code>${api.url}</code>. Description: ${api.descriptions.map(
    (d, i) => html`${i ? ', ' : ''}<a href="${d.href}" type="${d.type}">${d.type}</a>`,
  )}.</p>
<ul>
${lines.map(
  (
    l,
  ) => html`<li><strong>${l.title}</strong>: <code>${l.method ? `${l.method} ` : ''}${l.url}</code>${l.tool ? html` (MCP tool <code>${l.tool}</code>)` : ''}${l.price ? html` <span class="price">${l.price}</span>` : ''}. ${withCode(l.summary)}</li>
`,
)}</ul>
</section>
`,
)}
<section id="pixel">
<h2>Measure AI traffic on your own site</h2>
<p>Register your domain with <code>POST ${config.public_api_url}/pixel-install</code>: the answer carries your site id, a browser beacon to paste before <code>&lt;/body&gt;</code>, and a server-side feed that sees AI crawlers that never run scripts. This page carries the service's own beacon${snippet ? '' : ' once PIXEL_SITE_ID is configured'}; it sends the page address and referrer, nothing else, and sets no cookie.</p>
</section>
<section id="discovery">
<h2>Discovery documents</h2>
<ul>
${links.map(
  (l) => html`<li><a href="${l.url}">${l.title}</a>: ${l.about}</li>
`,
)}</ul>
</section>
<p>Health: <a href="${config.public_api_url}/health">${config.public_api_url}/health</a>.</p>`;
  // The free public reads as WebMCP tools for agents in the browser (adapters/webmcp-tools.ts).
  const webmcp = html`<script src="${site}${WEBMCP_SCRIPT_PATH}"></script>
`;
  const tail = snippet
    ? html`${webmcp}<script>${raw(pixelScript)}</script>
${raw(snippet.noscript)}`
    : webmcp;
  const page = layout({
    config,
    path: '/',
    title: 'Customer service and agent-readiness APIs for AI agents',
    description,
    body,
    head,
    tail,
    jsonLd,
  });

  const connectTo = new Set([new URL(config.public_api_url).origin, ...webmcpOrigins(operations, config)]);
  connectTo.delete(new URL(site).origin);
  const csp = pageCsp(config)
    .replace("script-src 'none'", `script-src 'self'${pixelScript ? ` ${sha256(pixelScript)}` : ''}`)
    .replace("connect-src 'self'", ['connect-src', "'self'", ...connectTo].join(' '));

  return { html: page, markdown: homeMarkdown(operations, config), csp };
}

/** The home page for agents: llms-full.txt's content, which is already what the page says, in Markdown. */
function homeMarkdown(operations: readonly AnyOperation[], config: Config): string {
  const links = discoveryLinks(config)
    .map((l) => `- [${l.title}](${l.url}): ${l.about}`)
    .join('\n');
  return `${llmsFullTxt(operations, config).replace(/\n## Discovery[\s\S]*$/, '')}\n## Discovery documents\n\n${links}\n`;
}

/** The Open Graph image: a card with the service's name, drawn as SVG. */
export function ogImage(): string {
  return `<svg xmlns="http://www.w3.org/2000/svg" width="1200" height="630" viewBox="0 0 1200 630">
<rect width="1200" height="630" fill="#0b1f3a"/>
<text x="80" y="280" font-family="system-ui,sans-serif" font-size="88" font-weight="700" fill="#ffffff">${SERVICE_TITLE}</text>
<text x="80" y="380" font-family="system-ui,sans-serif" font-size="40" fill="#c9d6ea">APIs and MCP servers for AI agents</text>
</svg>
`;
}
