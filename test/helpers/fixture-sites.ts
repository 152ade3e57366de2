/**
 * Local websites for the scanner to crawl, real HTTP servers on 127.0.0.1 port 0:
 * - `wellPrepared`: everything an agent-ready site publishes (robots.txt with AI groups and a
 *   Content-Signal line, llms.txt, llms-full.txt, ai.txt, sitemap index, JSON-LD, OpenGraph,
 *   markdown negotiation, api-catalog, OAuth metadata, MCP server card, x402, OpenAPI);
 * - `bare`: one thin HTML page and nothing else;
 * - `hostile`: an endless page, a redirect loop, a response that never comes, redirects to the
 *   cloud metadata address and a private network, a binary served where a page is linked;
 * - `large`: a home page and 199 linked pages, all in a sitemap.
 * - `spa`: a single-page app that answers every path, robots.txt and `/.well-known/` included,
 *   with the same 200 text/html shell (a soft 404 for everything it does not have);
 * - `spaWithDocuments`: the same shell for unknown paths, but real robots.txt, llms.txt and JSON
 *   discovery documents at their paths (one of them incomplete, to earn partial credit);
 * - `catchAllJson`: an API that answers every path with 200 JSON naming the path and a fresh
 *   request id (so no two answers are byte-identical);
 * - `catchAllText`: a server that answers every path with 200 text/plain "OK".
 * - `merchant`: the home page of a small business, Halcyon Roasters, a coffee roaster in Oakland,
 *   that names itself in its title, `og:site_name` and a schema.org `CafeOrCoffeeShop` JSON-LD
 *   node with its address - what live merchant resolution reads - whatever `Host` it is asked for.
 * - `brand`: Northwind Labs, a data pipeline software company founded in 2012 and headquartered in
 *   Lisbon, Portugal, saying so consistently in its Organization JSON-LD, title, og:site_name, meta
 *   description, about page and llms.txt (the entity audit's ground truth);
 * - `brandConflicting`: the same site whose home page `<title>` names another company (Southbay
 *   Analytics) than its JSON-LD does;
 * - `people`: result pages about two different people named Jane Doe (a robotics CTO in Portland and
 *   a marine biologist in Halifax), each page saying who she is in JSON-LD and prose with dated
 *   statements; robots.txt keeps `/private/` from the scanner's token.
 * - `mcpBothEras`: `wellPrepared` whose MCP server speaks 2026-07-28 and 2025-11-25 (the v2 SDK)
 *   and publishes its card at `/mcp/server-card`;
 * - `paidApi`: `wellPrepared` whose paid resource also offers an MPP challenge, with an OpenAPI
 *   operation marked `x-payment-info` that answers with an MPP challenge only, and an A2A card
 *   declaring the AP2 extension as a merchant;
 * - `shopCommerce`: `shop` with a UCP profile and an ACP discovery document;
 *   `shopBrokenCommerce`: the same with an incomplete UCP profile and ACP document.
 * Every request is recorded so tests can check what the crawler did (and did not) fetch.
 * - `webmcp*`: home pages that register WebMCP tools, well or badly, or misbehave
 *   (`webmcp-fixtures.ts`).
 * `startHeldSite` is a site that answers nothing until released (a scan that lasts).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createMcpHandler, McpServer as McpServerOfBothEras } from '@modelcontextprotocol/server';
import { webmcpBroken, webmcpHang, webmcpPrivate, webmcpSpin, webmcpTools } from './webmcp-fixtures.ts';

export type FixtureKind =
  | 'wellPrepared'
  | 'bare'
  | 'hostile'
  | 'large'
  | 'spa'
  | 'spaWithDocuments'
  | 'catchAllJson'
  | 'catchAllText'
  | 'merchant'
  | 'brand'
  | 'brandConflicting'
  | 'people'
  | 'blog'
  | 'blogNoVary'
  | 'blogDeadLinks'
  | 'shop'
  | 'blocker'
  | 'lyingCard'
  | 'badIssuer'
  | 'apiProduct'
  | 'webmcpTools'
  | 'webmcpBroken'
  | 'webmcpPrivate'
  | 'webmcpHang'
  | 'webmcpSpin'
  | 'mcpBothEras'
  | 'paidApi'
  | 'shopCommerce'
  | 'shopBrokenCommerce';

export interface FixtureOptions {
  /**
   * `apiProduct`: the issuer its protected MCP server names as its authorization server (our own
   * authorization server in the integration test); default the fixture's own origin.
   */
  authorizationServer?: string;
}

export interface FixtureRequest {
  path: string;
  accept: string | undefined;
  userAgent: string | undefined;
}

export interface FixtureSite {
  /** `127.0.0.1:PORT`, what a scan is asked for. */
  domain: string;
  url: string;
  port: number;
  requests: FixtureRequest[];
  /**
   * Serves `body` at `path` from now on, in place of what the kind answers there: what a site
   * owner does with generated files (the llms-txt SKU's llms.txt, llms-full.txt and ai.txt).
   */
  publish(path: string, contentType: string, body: string): void;
  close(): Promise<void>;
}

/** The robots.txt product token of the scanner in tests (config `scanner.user_agent`). */
export const scannerToken = 'agent-service-scanner';

/**
 * Service settings under which the scanner can scan these fixture sites quickly: loopback allowed,
 * no politeness delay, short timeouts, the queue polled every 50 ms. Tests spread it and override
 * what they need (fewer pages, a longer timeout).
 */
export const scannerOnLoopback = {
  'scanner.allow_private_networks': true,
  'scanner.delay_ms': 0,
  'scanner.request_timeout_ms': 1000,
  'scanner.poll_interval_ms': 50,
  'scanner.max_pages': 30,
} as const;

type Route = (req: http.IncomingMessage, res: http.ServerResponse, site: { origin: string }) => void;

const words = (n: number, seed = 'agents') =>
  Array.from({ length: n }, (_, i) => `${seed}${i % 7 === 0 ? '.' : ''} word${i % 50}`).join(' ');

function page(options: {
  origin: string;
  path: string;
  title: string;
  body: string;
  jsonLd?: unknown;
  links?: string[];
}): string {
  const { origin, path, title, body, jsonLd, links = [] } = options;
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title>
<meta name="description" content="${title} - what Example Widgets offers to people and agents.">
<link rel="canonical" href="${origin}${path}">
<link rel="alternate" type="text/markdown" href="${origin}${path === '/' ? '/index' : path}.md">
<meta property="og:title" content="${title}"><meta property="og:description" content="${title}">
<meta property="og:image" content="${origin}/og.png"><meta property="og:type" content="website">
${jsonLd ? `<script type="application/ld+json">${JSON.stringify(jsonLd)}</script>` : ''}
<style>body{font-family:sans-serif}</style><script>window.x = 1;</script></head>
<body><h1>${title}</h1><h2>Overview</h2><p>${body}</p><h2>Details</h2><p>${words(120, 'details')}</p>
<nav>${links.map((l) => `<a href="${l}">${l}</a>`).join(' ')}</nav></body></html>`;
}

/** The tools the fixtures' MCP server lists; a lying card adds one it does not serve. */
export const fixtureTools = ['list_widgets', 'get_widget'];

/**
 * A real MCP server (the SDK, stateless Streamable HTTP, JSON answers) serving `tools` (each answers
 * "ok"), `fixtureTools` by default. The brand world's MCP brand uses it too (`brand-sites.ts`).
 */
export function mcpServerRoute(
  options: {
    tools?: { name: string; description?: string }[];
    guard?: (req: http.IncomingMessage, res: http.ServerResponse) => boolean;
  } = {},
): (req: http.IncomingMessage, res: http.ServerResponse) => void {
  const tools =
    options.tools ?? fixtureTools.map((name) => ({ name, description: `${name} of Example Widgets` }));
  return (req, res) => {
    if (options.guard && !options.guard(req, res)) return;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const server = new McpServer({ name: 'example-widgets', version: '1.0.0' });
      for (const tool of tools)
        server.registerTool(tool.name, { description: tool.description ?? tool.name }, async () => ({
          content: [{ type: 'text', text: 'ok' }],
        }));
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
      });
      res.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      const text = Buffer.concat(chunks).toString('utf8');
      await transport.handleRequest(req, res, text ? JSON.parse(text) : undefined);
    });
  };
}

/** x402 v2: an unpaid request gets 402 with complete requirements in PAYMENT-REQUIRED. */
const paidResource: Route = (_req, res, { origin }) => {
  const required = {
    x402Version: 2,
    error: 'payment required',
    resource: { url: `${origin}/api/paid`, description: 'A widget report', mimeType: 'application/json' },
    accepts: [
      {
        scheme: 'exact',
        network: 'eip155:8453',
        amount: '10000',
        asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
        payTo: '0x1111111111111111111111111111111111111111',
        maxTimeoutSeconds: 300,
        extra: { name: 'USD Coin', version: '2' },
      },
    ],
  };
  res
    .writeHead(402, {
      'content-type': 'application/json',
      'payment-required': Buffer.from(JSON.stringify(required)).toString('base64'),
    })
    .end('{}');
};

const wellPrepared: Record<string, Route> = {
  '/robots.txt': (_req, res, { origin }) => {
    res
      .writeHead(200, { 'content-type': 'text/plain' })
      .end(
        [
          '# AI agents welcome for search and answers, not for training',
          'User-agent: GPTBot',
          'User-agent: Google-Extended',
          'User-agent: CCBot',
          'Disallow: /',
          '',
          'User-agent: OAI-SearchBot',
          'User-agent: ChatGPT-User',
          'User-agent: ClaudeBot',
          'User-agent: PerplexityBot',
          'Allow: /',
          '',
          `User-agent: ${scannerToken}`,
          'Disallow: /private/',
          'Content-Signal: search=yes, ai-input=yes, ai-train=no',
          '',
          'User-agent: *',
          'Content-Signal: search=yes, ai-train=no',
          'Allow: /',
          '',
          `Sitemap: ${origin}/sitemap-index.xml`,
        ].join('\n'),
      );
  },
  '/llms.txt': (_req, res, { origin }) => {
    res
      .writeHead(200, { 'content-type': 'text/plain; charset=utf-8' })
      .end(
        `# Example Widgets\n\n> Widgets for people and their agents: catalogue, prices and an MCP server.\n\nWe answer within a day.\n\n## Docs\n\n- [About](${origin}/about): who we are\n- [Widget](${origin}/products/widget): the product\n\n## Optional\n\n- [FAQ](${origin}/faq)\n`,
      );
  },
  '/llms-full.txt': (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' }).end(`# Example Widgets\n\n${words(400)}`);
  },
  '/ai.txt': (_req, res) => {
    res
      .writeHead(200, { 'content-type': 'text/plain' })
      .end('# Spawning AI\nUser-Agent: *\nDisallow: *.jpg\nDisallow: *.png\nAllow: *.html\n');
  },
  '/sitemap-index.xml': (_req, res, { origin }) => {
    res
      .writeHead(200, { 'content-type': 'application/xml' })
      .end(
        `<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>${origin}/sitemap-pages.xml</loc></sitemap></sitemapindex>`,
      );
  },
  '/sitemap-pages.xml': (_req, res, { origin }) => {
    const paths = ['/', '/about', '/products/widget', '/faq', '/docs'];
    res
      .writeHead(200, { 'content-type': 'application/xml' })
      .end(
        `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${paths.map((p) => `<url><loc>${origin}${p}</loc><lastmod>2026-11-01</lastmod></url>`).join('')}</urlset>`,
      );
  },
  '/.well-known/api-catalog': (_req, res, { origin }) => {
    res.writeHead(200, { 'content-type': 'application/linkset+json' }).end(
      JSON.stringify({
        linkset: [
          {
            anchor: `${origin}/api`,
            'service-desc': [{ href: `${origin}/openapi.json`, type: 'application/json' }],
            'service-doc': [{ href: `${origin}/docs`, type: 'text/html' }],
          },
        ],
      }),
    );
  },
  '/openapi.json': (_req, res) => {
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ openapi: '3.1.0', info: { title: 'Widgets', version: '1' }, paths: {} }));
  },
  '/.well-known/oauth-protected-resource': (_req, res, { origin }) => {
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ resource: `${origin}/`, authorization_servers: [origin] }));
  },
  '/.well-known/openid-configuration': (_req, res, { origin }) => {
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        issuer: origin,
        authorization_endpoint: `${origin}/authorize`,
        token_endpoint: `${origin}/token`,
        jwks_uri: `${origin}/jwks`,
      }),
    );
  },
  '/mcp': mcpServerRoute(),
  '/api/paid': paidResource,
  '/.well-known/agent-card.json': (_req, res, { origin }) => {
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        name: 'Example Widgets agent',
        description: 'Finds widgets.',
        url: `${origin}/a2a`,
        version: '1.0.0',
        capabilities: {},
        defaultInputModes: ['text/plain'],
        defaultOutputModes: ['text/plain'],
        skills: [{ id: 'find-widget', name: 'Find a widget', description: 'Finds a widget', tags: [] }],
      }),
    );
  },
  '/.well-known/agent-skills/index.json': (_req, res, { origin }) => {
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        skills: [
          {
            name: 'widgets',
            type: 'skill-md',
            description: 'How to use the Example Widgets API',
            url: `${origin}/.well-known/agent-skills/widgets/SKILL.md`,
            sha256: '0'.repeat(64),
          },
        ],
      }),
    );
  },
  '/.well-known/oauth-authorization-server': (_req, res, { origin }) => {
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        issuer: origin,
        authorization_endpoint: `${origin}/authorize`,
        token_endpoint: `${origin}/token`,
      }),
    );
  },
  '/.well-known/mcp/server-card.json': (_req, res, { origin }) => {
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        serverInfo: { name: 'example-widgets', version: '1.0.0' },
        transport: { type: 'streamable-http', endpoint: `${origin}/mcp` },
        tools: fixtureTools.map((name) => ({ name })),
      }),
    );
  },
  '/.well-known/x402.json': (_req, res, { origin }) => {
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ x402Version: 2, resources: [`${origin}/api/paid`] }));
  },
};

const wellPreparedPages: Record<string, { title: string; jsonLd?: unknown }> = {
  '/': {
    title: 'Example Widgets',
    jsonLd: {
      '@context': 'https://schema.org',
      '@graph': [
        { '@type': 'Organization', name: 'Example Widgets', url: 'https://widgets.example' },
        { '@type': 'WebSite', name: 'Example Widgets' },
      ],
    },
  },
  '/about': { title: 'About Example Widgets', jsonLd: { '@type': 'AboutPage' } },
  '/products/widget': {
    title: 'The Widget',
    jsonLd: { '@context': 'https://schema.org', '@type': 'Product', name: 'Widget' },
  },
  '/faq': {
    title: 'Questions',
    jsonLd: { '@context': 'https://schema.org', '@type': 'FAQPage', mainEntity: [] },
  },
  '/docs': { title: 'Docs', jsonLd: { '@type': ['TechArticle', 'https://schema.org/WebPage'] } },
  '/private/secret': { title: 'Private' },
};

function wellPreparedPage(req: http.IncomingMessage, res: http.ServerResponse, origin: string): boolean {
  const path = (req.url ?? '/').split('?')[0] as string;
  const spec = wellPreparedPages[path];
  if (!spec) return false;
  const accept = req.headers.accept ?? '';
  if (/text\/markdown/.test(accept) && !/text\/html/.test(accept)) {
    res
      .writeHead(200, { 'content-type': 'text/markdown; charset=utf-8', vary: 'Accept' })
      .end(`# ${spec.title}\n\n${words(200)}\n`);
    return true;
  }
  res
    .writeHead(200, {
      'content-type': 'text/html; charset=utf-8',
      vary: 'Accept',
      link: '</.well-known/api-catalog>; rel="api-catalog", </llms.txt>; rel="describedby"; type="text/markdown"',
    })
    .end(
      page({
        origin,
        path,
        title: spec.title,
        body: words(260),
        jsonLd: spec.jsonLd
          ? JSON.parse(JSON.stringify(spec.jsonLd).replaceAll('https://widgets.example', origin))
          : undefined,
        links: [
          '/',
          '/about',
          '/products/widget',
          '/faq',
          '/docs',
          '/private/secret',
          'https://elsewhere.example/',
        ],
      }),
    );
  return true;
}

const bare: Record<string, Route> = {
  '/': (_req, res) => {
    res
      .writeHead(200, { 'content-type': 'text/html' })
      .end('<html><body><p>Welcome to our site.</p></body></html>');
  },
};

const hostileLinks = ['/huge', '/loop-a', '/slow', '/metadata', '/internal', '/binary', '/fine'];
const hostile: Record<string, Route> = {
  '/': (_req, res) => {
    res
      .writeHead(200, { 'content-type': 'text/html' })
      .end(
        `<html><head><title>Hostile</title></head><body><h1>Traps</h1>${hostileLinks.map((l) => `<a href="${l}">${l}</a>`).join('')}</body></html>`,
      );
  },
  // An endless HTML body: the crawler must stop at its byte limit.
  '/huge': (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    const chunk = `<p>${'x'.repeat(64 * 1024)}</p>`;
    const write = () => {
      while (res.write(chunk)) {
        if (res.destroyed) return;
      }
      res.once('drain', write);
    };
    res.on('close', () => res.removeAllListeners('drain'));
    res.write('<html><head><title>Huge</title></head><body>');
    write();
  },
  '/loop-a': (_req, res) => {
    res.writeHead(302, { location: '/loop-b' }).end();
  },
  '/loop-b': (_req, res) => {
    res.writeHead(302, { location: '/loop-a' }).end();
  },
  // Headers never come; the per-request timeout must end it.
  '/slow': () => {},
  '/metadata': (_req, res) => {
    res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end();
  },
  '/internal': (_req, res) => {
    res.writeHead(301, { location: 'http://10.0.0.1/admin' }).end();
  },
  '/binary': (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(Buffer.alloc(4096, 7));
  },
  '/fine': (_req, res) => {
    res
      .writeHead(200, { 'content-type': 'text/html' })
      .end(`<html><head><title>Fine</title></head><body><h1>Fine</h1><p>${words(50)}</p></body></html>`);
  },
};

const LARGE_PAGES = 199;
const large: Record<string, Route> = {
  '/robots.txt': (_req, res, { origin }) => {
    res
      .writeHead(200, { 'content-type': 'text/plain' })
      .end(`User-agent: *\nAllow: /\nSitemap: ${origin}/sitemap.xml\n`);
  },
  '/sitemap.xml': (_req, res, { origin }) => {
    const urls = ['/', ...Array.from({ length: LARGE_PAGES }, (_, i) => `/p/${i + 1}`)];
    res
      .writeHead(200, { 'content-type': 'application/xml' })
      .end(
        `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${urls.map((u) => `<url><loc>${origin}${u}</loc></url>`).join('')}</urlset>`,
      );
  },
};

function largePage(req: http.IncomingMessage, res: http.ServerResponse, origin: string): boolean {
  const path = (req.url ?? '/').split('?')[0] as string;
  const match = /^\/p\/(\d+)$/.exec(path);
  const n = path === '/' ? 0 : match ? Number(match[1]) : -1;
  if (n < 0 || n > LARGE_PAGES) return false;
  const links = Array.from({ length: 5 }, (_, i) => `/p/${((n + i) % LARGE_PAGES) + 1}`);
  if (n === 0) links.push(...Array.from({ length: 20 }, (_, i) => `/p/${i * 10 + 1}`));
  res
    .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
    .end(page({ origin, path, title: n === 0 ? 'Large site' : `Page ${n}`, body: words(300), links }));
  return true;
}

/** What a client-side rendered app's host serves for every route it does not know. */
const spaShell = `<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>Acme App</title>
<meta name="description" content="Acme: the app for widgets.">
<script type="module" crossorigin src="/assets/index-4f9c2b.js"></script></head>
<body><div id="root"></div><noscript>You need to enable JavaScript to run this app.</noscript></body></html>`;

const spaFallback: Route = (_req, res) => {
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(spaShell);
};

const spaWithDocuments: Record<string, Route> = {
  '/robots.txt': (_req, res) => {
    res
      .writeHead(200, { 'content-type': 'text/plain' })
      .end('User-agent: OAI-SearchBot\nUser-agent: ClaudeBot\nAllow: /\n\nUser-agent: *\nAllow: /\n');
  },
  '/llms.txt': (_req, res, { origin }) => {
    res
      .writeHead(200, { 'content-type': 'text/plain; charset=utf-8' })
      .end(`# Acme\n\n> The app for widgets.\n\n## Docs\n\n- [API](${origin}/openapi.json): the API\n`);
  },
  '/.well-known/api-catalog': wellPrepared['/.well-known/api-catalog'] as Route,
  '/openapi.json': wellPrepared['/openapi.json'] as Route,
  '/.well-known/mcp/server-card.json': wellPrepared['/.well-known/mcp/server-card.json'] as Route,
  // A JSON document that is really there but lists nothing yet: "present but incomplete".
  '/.well-known/x402.json': (_req, res) => {
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ description: 'Paid endpoints are coming.' }));
  },
};

let requestCounter = 0;
const catchAllJson: Route = (req, res) => {
  res.writeHead(200, { 'content-type': 'application/json' }).end(
    JSON.stringify({
      error: 'Not Found',
      path: (req.url ?? '/').split('?')[0],
      request_id: `req-${++requestCounter}-${Math.random().toString(36).slice(2)}`,
    }),
  );
};

const catchAllText: Route = (_req, res) => {
  res.writeHead(200, { 'content-type': 'text/plain' }).end('OK');
};

/** Real small-business markup: the name in three places, the city in the address and the footer. */
const merchant: Record<string, Route> = {
  '/': (_req, res, { origin }) => {
    const jsonLd = {
      '@context': 'https://schema.org',
      '@type': 'CafeOrCoffeeShop',
      name: 'Halcyon Roasters',
      url: `${origin}/`,
      telephone: '+1-510-555-0142',
      address: {
        '@type': 'PostalAddress',
        streetAddress: '4120 Telegraph Ave',
        addressLocality: 'Oakland',
        addressRegion: 'CA',
        postalCode: '94609',
        addressCountry: 'US',
      },
    };
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(
      `<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>Home | Halcyon Roasters</title>
<meta name="description" content="Small-batch coffee roasted in Oakland. Café, beans and subscriptions.">
<meta property="og:site_name" content="Halcyon Roasters"><meta property="og:title" content="Home">
<meta property="og:type" content="website">
<script type="application/ld+json">${JSON.stringify(jsonLd)}</script></head>
<body><header><a href="/">Halcyon Roasters</a><nav><a href="/shop">Shop</a> <a href="/visit">Visit</a></nav></header>
<main><h1>Coffee, roasted slowly</h1><p>${words(60, 'beans')}</p></main>
<footer>4120 Telegraph Ave, Oakland, CA 94609 · (510) 555-0142</footer></body></html>`,
    );
  },
};

/** Northwind Labs, consistent in every source (or, `conflicting`, with another company's title). */
function brandSite(conflicting: boolean): Record<string, Route> {
  const description = 'Northwind Labs builds data pipeline software for small analytics teams.';
  const html = (origin: string, title: string, head: string, body: string) =>
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title>${head}</head>
<body><header><a href="${origin}/">Northwind Labs</a> <a href="/about">About</a> <a href="/products/streamline">Streamline</a></header>
<main>${body}</main><footer>Rua Augusta 100, Lisbon, Portugal</footer></body></html>`;
  return {
    '/robots.txt': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nAllow: /\n');
    },
    '/llms.txt': (_req, res, { origin }) => {
      res
        .writeHead(200, { 'content-type': 'text/plain; charset=utf-8' })
        .end(
          `# Northwind Labs\n\n> ${description}\n\n## Docs\n\n- [About](${origin}/about): who we are\n- [Streamline](${origin}/products/streamline): the product\n`,
        );
    },
    '/': (_req, res, { origin }) => {
      const jsonLd = {
        '@context': 'https://schema.org',
        '@type': 'Organization',
        name: 'Northwind Labs',
        url: `${origin}/`,
        logo: `${origin}/logo.png`,
        description,
        foundingDate: '2012',
        address: { '@type': 'PostalAddress', addressLocality: 'Lisbon', addressCountry: 'Portugal' },
        founder: [{ '@type': 'Person', name: 'Ana Ferreira' }],
        sameAs: [
          'https://www.wikidata.org/wiki/Q999999999',
          'https://www.linkedin.com/company/northwind-labs',
        ],
      };
      const title = conflicting
        ? 'Southbay Analytics | Home'
        : 'Northwind Labs | Data pipelines for small teams';
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(
        html(
          origin,
          title,
          `<meta name="description" content="${description}">
<meta property="og:site_name" content="Northwind Labs"><meta property="og:description" content="${description}">
<script type="application/ld+json">${JSON.stringify(jsonLd)}</script>`,
          `<h1>Data pipelines for small teams</h1><p>${description} ${words(40, 'pipelines')}</p>`,
        ),
      );
    },
    '/about': (_req, res, { origin }) => {
      res
        .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
        .end(
          html(
            origin,
            'About Northwind Labs',
            `<script type="application/ld+json">${JSON.stringify({ '@context': 'https://schema.org', '@type': 'AboutPage' })}</script>`,
            '<h1>About us</h1><p>Northwind Labs was founded in 2012 by Ana Ferreira and is headquartered in Lisbon, Portugal. We build data pipeline software for small analytics teams.</p>',
          ),
        );
    },
    '/products/streamline': (_req, res, { origin }) => {
      res
        .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
        .end(
          html(
            origin,
            'Streamline - Northwind Labs',
            `<script type="application/ld+json">${JSON.stringify({ '@context': 'https://schema.org', '@type': 'Product', name: 'Streamline', description: 'Managed data pipelines.' })}</script>`,
            '<h1>Streamline</h1><p>Managed data pipelines for analytics teams.</p>',
          ),
        );
    },
  };
}

/** Pages about two people named Jane Doe, as a search engine would find them. */
function personPage(
  origin: string,
  title: string,
  person: Record<string, unknown> | null,
  paragraphs: string[],
): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title>
<meta name="description" content="${paragraphs[0]?.slice(0, 150) ?? ''}">
${person ? `<script type="application/ld+json">${JSON.stringify({ '@context': 'https://schema.org', ...person })}</script>` : ''}
</head><body><main><h1>${title}</h1>${paragraphs.map((p) => `<p>${p}</p>`).join('\n')}</main>
<footer><a href="${origin}/">Home</a></footer></body></html>`;
}

const people: Record<string, Route> = {
  '/robots.txt': (_req, res) => {
    res
      .writeHead(200, { 'content-type': 'text/plain' })
      .end(`User-agent: ${scannerToken}\nDisallow: /private/\n\nUser-agent: *\nAllow: /\n`);
  },
  '/team/jane-doe': (_req, res, { origin }) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(
      personPage(
        origin,
        'Jane Doe - Chief Technology Officer - Acme Robotics',
        {
          '@type': 'Person',
          name: 'Jane Doe',
          jobTitle: 'Chief Technology Officer',
          worksFor: { '@type': 'Organization', name: 'Acme Robotics' },
          address: { '@type': 'PostalAddress', addressLocality: 'Portland', addressRegion: 'OR' },
          sameAs: ['https://github.com/janedoe-robotics', 'https://www.linkedin.com/in/janedoe-acme'],
        },
        [
          'Jane Doe is the Chief Technology Officer of Acme Robotics, based in Portland, Oregon.',
          'She joined Acme Robotics in 2019 after eight years building warehouse robots.',
        ],
      ),
    );
  },
  '/news/acme-robotics-cto': (_req, res, { origin }) => {
    res
      .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      .end(
        personPage(origin, 'Acme Robotics names Jane Doe CTO', null, [
          'PORTLAND - On March 4, 2019 Acme Robotics named Jane Doe its Chief Technology Officer.',
          'Jane Doe previously led engineering at Lumen Automation in Portland.',
        ]),
      );
  },
  '/faculty/jane-doe': (_req, res, { origin }) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(
      personPage(
        origin,
        'Dr. Jane Doe, Professor of Marine Biology - Coastal University',
        {
          '@type': 'Person',
          name: 'Jane Doe',
          jobTitle: 'Professor of Marine Biology',
          affiliation: { '@type': 'CollegeOrUniversity', name: 'Coastal University' },
          address: { '@type': 'PostalAddress', addressLocality: 'Halifax', addressRegion: 'NS' },
        },
        [
          'Dr. Jane Doe is a Professor of Marine Biology at Coastal University in Halifax, Nova Scotia.',
          'She received her PhD in 2008 and has studied North Atlantic kelp forests since 2010.',
        ],
      ),
    );
  },
  '/papers/kelp-2015': (_req, res, { origin }) => {
    res
      .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      .end(
        personPage(origin, 'Kelp forest decline in the North Atlantic (2015)', null, [
          'Jane Doe, Coastal University, Halifax. Published in 2015 in the Journal of Marine Ecology.',
        ]),
      );
  },
  '/private/jane-doe': (_req, res, { origin }) => {
    res
      .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      .end(personPage(origin, 'Private', null, ['Jane Doe private notes that must not be read.']));
  },
  '/unrelated': (_req, res, { origin }) => {
    res
      .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      .end(personPage(origin, 'Gardening tips', null, ['Nothing about the person asked for here.']));
  },
};

/**
 * A content site (the blog archetype) and its variants: robots.txt with AI groups and a
 * Content-Signal line, a sitemap with lastmod, llms.txt whose links resolve, llms-full.txt, ai.txt,
 * pages with Article and Organization JSON-LD, markdown negotiation with Vary: Accept, a Link
 * header; no API. `shop` marks its pages up as products; `blocker` refuses AI agents' user agents
 * with 403 whatever robots.txt says; `blogNoVary` answers markdown without Vary; `blogDeadLinks`
 * lists pages in llms.txt that do not exist.
 */
function contentSite(kind: 'blog' | 'shop' | 'blocker' | 'blogNoVary' | 'blogDeadLinks') {
  const name = kind === 'shop' ? 'Harbor Goods' : 'Field Notes';
  const paths =
    kind === 'shop'
      ? ['/', '/products/lamp', '/products/chair', '/about', '/faq']
      : ['/', '/posts/one', '/posts/two', '/about', '/faq'];
  const jsonLdOf = (origin: string, path: string) =>
    path === '/'
      ? {
          '@context': 'https://schema.org',
          '@graph': [
            {
              '@type': 'Organization',
              name,
              url: `${origin}/`,
              sameAs: ['https://social.example/fieldnotes'],
            },
            { '@type': kind === 'shop' ? 'OnlineStore' : 'Blog', name },
          ],
        }
      : kind === 'shop' && path.startsWith('/products/')
        ? {
            '@context': 'https://schema.org',
            '@type': 'Product',
            name: path.slice(10),
            offers: { '@type': 'Offer', price: '20', priceCurrency: 'USD' },
          }
        : path === '/faq'
          ? { '@context': 'https://schema.org', '@type': 'FAQPage', mainEntity: [] }
          : { '@context': 'https://schema.org', '@type': 'Article', headline: path };
  const titleOf = (path: string) => (path === '/' ? name : `${path.split('/').pop()} - ${name}`);
  const routes: Record<string, Route> = {
    '/robots.txt': (_req, res, { origin }) => {
      res
        .writeHead(200, { 'content-type': 'text/plain' })
        .end(
          `User-agent: GPTBot\nDisallow: /\n\nUser-agent: OAI-SearchBot\nUser-agent: ChatGPT-User\nUser-agent: Claude-User\nUser-agent: PerplexityBot\nAllow: /\n\nUser-agent: *\nContent-Signal: search=yes, ai-input=yes, ai-train=no\nAllow: /\n\nSitemap: ${origin}/sitemap.xml\n`,
        );
    },
    '/sitemap.xml': (_req, res, { origin }) => {
      res
        .writeHead(200, { 'content-type': 'application/xml' })
        .end(
          `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${paths.map((p) => `<url><loc>${origin}${p}</loc><lastmod>2026-11-20</lastmod></url>`).join('')}</urlset>`,
        );
    },
    '/llms.txt': (_req, res, { origin }) => {
      const links =
        kind === 'blogDeadLinks' ? ['/posts/gone', '/posts/also-gone', '/about'] : paths.slice(1, 4);
      res
        .writeHead(200, { 'content-type': 'text/markdown; charset=utf-8' })
        .end(
          `# ${name}\n\n> ${name}: notes and goods for people and their agents.\n\n## Pages\n\n${links.map((l) => `- [${l}](${origin}${l}): a page`).join('\n')}\n`,
        );
    },
    '/llms-full.txt': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' }).end(`# ${name}\n\n${words(400)}`);
    },
    '/ai.txt': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('User-Agent: *\nAllow: *.html\n');
    },
  };
  const pageRoute: Route = (req, res, { origin }) => {
    const path = (req.url ?? '/').split('?')[0] as string;
    const accept = req.headers.accept ?? '';
    const vary = kind === 'blogNoVary' ? {} : { vary: 'Accept' };
    if (/text\/markdown/.test(accept) && !/text\/html/.test(accept)) {
      res
        .writeHead(200, { 'content-type': 'text/markdown; charset=utf-8', ...vary })
        .end(
          `# ${titleOf(path)}\n\n## Overview\n\n${words(260)}\n\n## Details\n\n${words(120, 'details')}\n`,
        );
      return;
    }
    const html = page({
      origin,
      path,
      title: titleOf(path),
      body: words(260),
      jsonLd: jsonLdOf(origin, path),
      links: paths,
    });
    res
      .writeHead(200, {
        'content-type': 'text/html; charset=utf-8',
        ...vary,
        link: '</llms.txt>; rel="describedby"; type="text/markdown", </sitemap.xml>; rel="sitemap"',
      })
      .end(
        html.replace(
          '<meta property="og:type" content="website">',
          `<meta property="og:type" content="${kind === 'shop' && path.startsWith('/products/') ? 'product' : 'website'}"><meta property="og:site_name" content="${name}">`,
        ),
      );
  };
  for (const path of paths) routes[path] = pageRoute;
  return routes;
}

/** The AI agents a blocking site refuses at its door, whatever its robots.txt allows. */
const blockedAgents = /GPTBot|OAI-SearchBot|ChatGPT-User|Claude-User|ClaudeBot|PerplexityBot/;

/**
 * The API product archetype: a home page, an api-catalog and OpenAPI document, and an MCP server
 * that asks for a token (401 naming its protected resource metadata, RFC 9728), whose
 * authorization server is `authorizationServer` (our own in the integration test).
 */
function apiProduct(authorizationServer: string | undefined): Record<string, Route> {
  const asOf = (origin: string) => authorizationServer ?? origin;
  const resourceMetadata = (origin: string) => `${origin}/.well-known/oauth-protected-resource/mcp`;
  return {
    '/robots.txt': (_req, res, { origin }) => {
      res
        .writeHead(200, { 'content-type': 'text/plain' })
        .end(
          `User-agent: OAI-SearchBot\nUser-agent: ChatGPT-User\nUser-agent: Claude-User\nUser-agent: PerplexityBot\nAllow: /\n\nUser-agent: *\nContent-Signal: search=yes, ai-input=yes, ai-train=no\nAllow: /\n\nSitemap: ${origin}/sitemap-index.xml\n`,
        );
    },
    '/sitemap-index.xml': wellPrepared['/sitemap-index.xml'] as Route,
    '/sitemap-pages.xml': wellPrepared['/sitemap-pages.xml'] as Route,
    '/llms.txt': wellPrepared['/llms.txt'] as Route,
    '/llms-full.txt': wellPrepared['/llms-full.txt'] as Route,
    '/ai.txt': wellPrepared['/ai.txt'] as Route,
    '/.well-known/api-catalog': wellPrepared['/.well-known/api-catalog'] as Route,
    '/openapi.json': (_req, res, { origin }) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          openapi: '3.1.0',
          info: { title: 'Widgets', version: '1' },
          servers: [{ url: `${origin}/api` }],
          paths: {},
        }),
      );
    },
    '/api': (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    },
    '/.well-known/mcp/server-card.json': (_req, res, { origin }) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          name: 'example/widgets',
          version: '1.0.0',
          remotes: [{ type: 'streamable-http', url: `${origin}/mcp` }],
        }),
      );
    },
    // The SDK's MCP server behind a bearer check: without a token, 401 naming the metadata.
    '/mcp': (req, res, site) =>
      mcpServerRoute({
        guard: (request, response) => {
          if (/^Bearer\s+\S+/i.test(request.headers.authorization ?? '')) return true;
          response
            .writeHead(401, {
              'content-type': 'application/json',
              'www-authenticate': `Bearer resource_metadata="${resourceMetadata(site.origin)}"`,
            })
            .end('{"error":"invalid_token"}');
          return false;
        },
      })(req, res),
    '/.well-known/oauth-protected-resource/mcp': (_req, res, { origin }) => {
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ resource: `${origin}/mcp`, authorization_servers: [asOf(origin)] }));
    },
    '/.well-known/oauth-protected-resource': (_req, res, { origin }) => {
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ resource: `${origin}/`, authorization_servers: [asOf(origin)] }));
    },
    '/.well-known/oauth-authorization-server': wellPrepared[
      '/.well-known/oauth-authorization-server'
    ] as Route,
    '/.well-known/openid-configuration': wellPrepared['/.well-known/openid-configuration'] as Route,
  };
}

// --- Issue 35: agent commerce and the MCP eras ---------------------------------------------------

/**
 * An MCP server of both eras: the v2 SDK's `createMcpHandler` answers `server/discover`
 * (2026-07-28) and serves 2025-11-25 requests statelessly, from one factory.
 */
function mcpBothErasRoute(): Route {
  const handler = createMcpHandler(() => {
    const server = new McpServerOfBothEras({ name: 'example-widgets', version: '1.0.0' });
    for (const name of fixtureTools)
      server.registerTool(name, { description: `${name} of Example Widgets` }, async () => ({
        content: [{ type: 'text', text: 'ok' }],
      }));
    return server;
  });
  return (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers))
        if (typeof value === 'string') headers.set(name, value);
      const request = new Request(`http://${req.headers.host}${req.url}`, {
        method: req.method ?? 'GET',
        headers,
        ...(req.method === 'POST' ? { body: Buffer.concat(chunks) } : {}),
      });
      const response = await handler.fetch(request);
      res.writeHead(response.status, Object.fromEntries(response.headers));
      res.end(Buffer.from(await response.arrayBuffer()));
    });
  };
}

/** SEP-2127's card at the endpoint's reserved location. */
const serverCardOfBothEras: Route = (_req, res, { origin }) => {
  res.writeHead(200, { 'content-type': 'application/mcp-server-card+json' }).end(
    JSON.stringify({
      name: 'com.example/widgets',
      version: '1.0.0',
      remotes: [
        {
          type: 'streamable-http',
          url: `${origin}/mcp`,
          supportedProtocolVersions: ['2026-07-28', '2025-11-25'],
        },
      ],
    }),
  );
};

/** An MPP challenge (draft-httpauth-payment): the request is base64url JSON. */
const mppChallenge = (realm: string) =>
  `Payment id="ch_1", realm="${realm}", method="tempo", intent="charge", expires="2030-01-01T00:00:00Z", request="${Buffer.from(
    JSON.stringify({
      amount: '10000',
      currency: 'usd',
      recipient: '0x1111111111111111111111111111111111111111',
    }),
  ).toString('base64url')}"`;

/** x402 v2 terms and an MPP challenge on the same 402: either kind of client can pay. */
const paidResourceWithMpp: Route = (req, res, site) => {
  res.setHeader('www-authenticate', mppChallenge(new URL(site.origin).host));
  paidResource(req, res, site);
};

const mppOnlyResource: Route = (_req, res, { origin }) => {
  res
    .writeHead(402, {
      'content-type': 'application/json',
      'www-authenticate': mppChallenge(new URL(origin).host),
    })
    .end('{}');
};

/** MPP discovery (mpp.dev "Discovery"): an OpenAPI GET marked with `x-payment-info`. */
const openApiWithPaymentInfo: Route = (_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json' }).end(
    JSON.stringify({
      openapi: '3.1.0',
      info: { title: 'Widgets', version: '1' },
      paths: {
        '/api/fortune': {
          get: {
            'x-payment-info': {
              offers: [{ intent: 'charge', method: 'tempo', amount: '10000', currency: 'usd' }],
            },
          },
        },
      },
    }),
  );
};

const agentCardWithAp2: Route = (_req, res, { origin }) => {
  res.writeHead(200, { 'content-type': 'application/json' }).end(
    JSON.stringify({
      name: 'Example Widgets agent',
      description: 'Sells widgets to agents.',
      url: `${origin}/a2a`,
      version: '1.0.0',
      capabilities: {
        extensions: [
          {
            uri: 'https://github.com/google-agentic-commerce/ap2/tree/v0.1',
            description: 'Agent Payments Protocol',
            required: true,
            params: { roles: ['merchant'] },
          },
        ],
      },
      skills: [{ id: 'buy', name: 'Buy a widget', description: 'Buys a widget' }],
    }),
  );
};

/** A UCP business profile (ucp.dev); `complete: false` leaves out the capabilities. */
function ucpProfile(complete: boolean): Route {
  return (_req, res, { origin }) => {
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        ucp: {
          version: '2026-04-08',
          services: {
            'dev.ucp.shopping': [
              {
                version: '2026-04-08',
                spec: 'https://ucp.dev/specification/overview',
                transport: 'rest',
                endpoint: `${origin}/ucp/v1`,
                schema: 'https://ucp.dev/2026-04-08/services/shopping/rest.openapi.json',
              },
            ],
          },
          ...(complete
            ? {
                capabilities: {
                  'dev.ucp.shopping.checkout': [
                    {
                      version: '2026-04-08',
                      spec: 'https://ucp.dev/specification/checkout',
                      schema: 'https://ucp.dev/2026-04-08/schemas/shopping/checkout.json',
                    },
                  ],
                },
              }
            : {}),
        },
      }),
    );
  };
}

/** An ACP discovery document (ACP RFC "Discovery"); `complete: false` offers no REST transport. */
function acpDiscovery(complete: boolean): Route {
  return (_req, res, { origin }) => {
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        protocol: { name: 'acp', version: '2026-01-30', supported_versions: ['2025-09-29', '2026-01-30'] },
        api_base_url: `${origin}/acp`,
        transports: complete ? ['rest'] : ['mcp'],
        capabilities: { services: ['checkout'] },
      }),
    );
  };
}

const routes: Record<FixtureKind, Record<string, Route>> = {
  wellPrepared,
  bare,
  hostile,
  large,
  spa: {},
  spaWithDocuments,
  catchAllJson: {},
  catchAllText: {},
  merchant,
  brand: brandSite(false),
  brandConflicting: brandSite(true),
  people,
  blog: contentSite('blog'),
  blogNoVary: contentSite('blogNoVary'),
  blogDeadLinks: contentSite('blogDeadLinks'),
  shop: contentSite('shop'),
  blocker: contentSite('blocker'),
  lyingCard: {
    ...wellPrepared,
    '/.well-known/mcp/server-card.json': (_req, res, { origin }) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          serverInfo: { name: 'example-widgets', version: '1.0.0' },
          transport: { type: 'streamable-http', endpoint: `${origin}/mcp` },
          tools: [...fixtureTools, 'buy_widget'].map((name) => ({ name })),
        }),
      );
    },
  },
  badIssuer: {
    ...wellPrepared,
    '/.well-known/openid-configuration': (_req, res, { origin }) => {
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ issuer: `${origin}/tenant`, authorization_endpoint: `${origin}/authorize` }));
    },
  },
  apiProduct: {},
  webmcpTools,
  webmcpBroken,
  webmcpPrivate,
  webmcpHang,
  webmcpSpin,
  mcpBothEras: {
    ...wellPrepared,
    '/mcp': mcpBothErasRoute(),
    '/mcp/server-card': serverCardOfBothEras,
  },
  paidApi: {
    ...wellPrepared,
    '/api/paid': paidResourceWithMpp,
    '/api/fortune': mppOnlyResource,
    '/openapi.json': openApiWithPaymentInfo,
    '/.well-known/agent-card.json': agentCardWithAp2,
  },
  shopCommerce: {
    ...contentSite('shop'),
    '/.well-known/ucp': ucpProfile(true),
    '/.well-known/acp.json': acpDiscovery(true),
  },
  shopBrokenCommerce: {
    ...contentSite('shop'),
    '/.well-known/ucp': ucpProfile(false),
    '/.well-known/acp.json': acpDiscovery(false),
  },
};

/** What a kind answers for a path it has no route for; a 404 unless listed here. */
const fallbacks: Partial<Record<FixtureKind, Route>> = {
  spa: spaFallback,
  spaWithDocuments: spaFallback,
  catchAllJson,
  catchAllText,
};

export async function startFixtureSite(
  kind: FixtureKind,
  options: FixtureOptions = {},
): Promise<FixtureSite> {
  const kindRoutes = kind === 'apiProduct' ? apiProduct(options.authorizationServer) : routes[kind];
  const requests: FixtureRequest[] = [];
  const published = new Map<string, { contentType: string; body: string }>();
  const sockets = new Set<import('node:net').Socket>();
  let origin = '';
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0] as string;
    requests.push({ path, accept: req.headers.accept, userAgent: req.headers['user-agent'] });
    const document = published.get(path);
    if (document) return res.writeHead(200, { 'content-type': document.contentType }).end(document.body);
    if (kind === 'blocker' && blockedAgents.test(req.headers['user-agent'] ?? ''))
      return res
        .writeHead(403, { 'content-type': 'text/html' })
        .end('<html><body>Access denied</body></html>');
    const route = kindRoutes[path];
    if (route) return route(req, res, { origin });
    if (
      (kind === 'wellPrepared' ||
        kind === 'lyingCard' ||
        kind === 'badIssuer' ||
        kind === 'apiProduct' ||
        kind === 'mcpBothEras' ||
        kind === 'paidApi') &&
      wellPreparedPage(req, res, origin)
    )
      return;
    if (kind === 'large' && largePage(req, res, origin)) return;
    const fallback = fallbacks[kind];
    if (fallback) return fallback(req, res, { origin });
    res.writeHead(404, { 'content-type': 'text/html' }).end('<html><body>Not found</body></html>');
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  origin = `http://127.0.0.1:${port}`;
  return {
    domain: `127.0.0.1:${port}`,
    url: origin,
    port,
    requests,
    publish(path, contentType, body) {
      published.set(path, { contentType, body });
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A site that answers nothing until released (`startHeldSite`). */
export interface HeldSite {
  /** `127.0.0.1:PORT`, what a scan is asked for. */
  domain: string;
  /** Requests received so far. */
  received(): number;
  /** Requests received and neither answered nor given up by their client. */
  waiting(): number;
  /** Answers every waiting request, and all later ones, 404 at once. */
  release(): void;
  close(): Promise<void>;
}

/**
 * A site whose requests get no answer - not even headers - until `release()`: a scan of it lasts
 * until released, or until its client gives up (its connection closes), which `waiting()` shows.
 */
export async function startHeldSite(): Promise<HeldSite> {
  const held = new Set<http.ServerResponse>();
  let received = 0;
  let released = false;
  const server = http.createServer((_req, res) => {
    received += 1;
    if (released) return res.writeHead(404).end();
    held.add(res);
    res.on('close', () => held.delete(res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    domain: `127.0.0.1:${port}`,
    received: () => received,
    waiting: () => held.size,
    release() {
      released = true;
      for (const res of held) res.writeHead(404).end();
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
