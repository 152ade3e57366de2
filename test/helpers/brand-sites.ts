/**
 * A world of brand sites on loopback for channel discovery and delivery tests (issue 29): one HTTP
 * server that answers each brand by `Host` (virtual hosting), behind a real DNS server that resolves
 * every brand name to 127.0.0.1 and answers their mail domains' MX records. Point the service at it
 * with `world.overrides` (`outbound.dns_servers`, the brands' home page scheme and port, loopback
 * allowed, discovery on). Every request is recorded with its host.
 *
 * The brands (`brandDomains`), each a different way a brand publishes (or hides) its channels:
 * - `jsonLd` - schema.org Organization JSON-LD on the home page with a customer service
 *   `ContactPoint` (email, telephone) and a sales one, a return policy link, a sitemap in robots.txt;
 * - `mailto` - nothing on the home page but a "Contact us" link; `/contact` holds a
 *   `mailto:returns@` link;
 * - `a2a` - an A2A agent card at `/.well-known/agent-card.json` with a returns skill, served by a
 *   real A2A server (`@a2a-js/sdk`: its request handler and Express transport) at `/a2a` that answers
 *   a message with a task (`a2aAgent` records what it received and holds its tasks);
 * - `mcp` - an MCP catalog and server card and a live MCP server (the MCP SDK, stateless Streamable
 *   HTTP) at `/mcp` with a `request_refund` tool;
 * - `formPhone` - a contact page with a form and a `tel:` link, no email;
 * - `nothing` - one bare page;
 * - `person` - `mailto:` links that name a person, or point at another company's domain;
 * - `hostile` - HTML soup with broken JSON-LD, a redirect loop, a page that never answers, an
 *   endless page, a binary where a page is linked, a page robots.txt keeps from the scanner, and a
 *   sitemap of 5,000 help articles;
 * - `noMail` - a support address on a domain with a null MX (RFC 7505) and one on a name that does
 *   not exist;
 * - `slow` - a home page that answers only once `releaseSlow()` is called; then a ContactPoint email.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type AgentCard, type Message, Role, TaskState } from '@a2a-js/sdk';
import {
  type Client as A2aClient,
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
} from '@a2a-js/sdk/client';
import { AgentEvent, type AgentExecutor, DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import express from 'express';
import { Agent, fetch as undiciFetch } from 'undici';
import { outboundResolver } from '../../servers/outbound/dns-lookup.ts';
import { startDnsServer, type TestDnsServer } from './dns-server.ts';
import { mcpServerRoute, scannerToken } from './fixture-sites.ts';

export const brandDomains = {
  jsonLd: 'contactpoint-outfitters.com',
  mailto: 'mailto-goods-shop.com',
  a2a: 'agentic-shoe-outlet.com',
  mcp: 'toolful-gadget-store.com',
  formPhone: 'formphone-homewares.com',
  nothing: 'nothing-here-boutique.com',
  person: 'person-mail-traders.com',
  hostile: 'hostile-soup-store.com',
  noMail: 'no-mx-brand-goods.com',
  slow: 'slow-returns-emporium.com',
} as const;
export type BrandName = keyof typeof brandDomains;

/** The tools the `mcp` brand's server lists. */
export const brandMcpTools = ['request_refund', 'list_products'];

export interface BrandWorldRequest {
  host: string;
  path: string;
  method: string;
  userAgent: string | undefined;
}

export interface BrandA2aAgent {
  /** Every message the agent received, in order. */
  received: Message[];
  /** Tasks it opened (and can be asked for), by id. */
  tasks: InMemoryTaskStore;
}

export interface BrandWorld {
  dns: TestDnsServer;
  /** The port every brand answers on (`returns.discovery.home_page_port`). */
  port: number;
  /** `http://<domain>:<port>`. */
  origin(brand: BrandName): string;
  requests: BrandWorldRequest[];
  /** Requests a brand's site received for `path`. */
  hits(brand: BrandName, path: string): number;
  a2aAgent: BrandA2aAgent;
  /** `fetch` that resolves names through the world's DNS server (a test's own client of a brand). */
  fetch: typeof fetch;
  /** The official A2A client of the `a2a` brand's agent, as an outside agent would build it. */
  a2aClient(): Promise<A2aClient>;
  /** Lets the `slow` brand's home page answer (it waits until then). */
  releaseSlow(): void;
  /** Makes `domain` resolve here (A and MX) and answer as `brand`'s site: a real brand's name on a fixture. */
  serve(domain: string, brand: BrandName): void;
  /** Service settings that point discovery at this world. */
  overrides: Record<string, unknown>;
  close(): Promise<void>;
}

type Handler = (req: http.IncomingMessage, res: http.ServerResponse, origin: string) => void;

const html = (res: http.ServerResponse, body: string, status = 200) =>
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' }).end(body);

function page(title: string, body: string, jsonLd?: unknown): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title>
${jsonLd ? `<script type="application/ld+json">${JSON.stringify(jsonLd)}</script>` : ''}</head>
<body><h1>${title}</h1>${body}</body></html>`;
}

const robots =
  (lines: string[] = []) =>
  (_req: http.IncomingMessage, res: http.ServerResponse) =>
    res
      .writeHead(200, { 'content-type': 'text/plain' })
      .end([`User-agent: *`, 'Allow: /', ...lines].join('\n'));

function routes(table: Record<string, Handler>): Handler {
  return (req, res, origin) => {
    const path = (req.url ?? '/').split('?')[0] as string;
    const route = table[path];
    if (route) route(req, res, origin);
    else html(res, page('Not found', '<p>Nothing here.</p>'), 404);
  };
}

/**
 * A site from its pages by path: a string is an HTML page (200); a handler answers itself (a
 * redirect, a hang, a stream, a page that names its origin). robots.txt allows everyone unless the
 * site gives its own.
 */
function site(pages: Record<string, string | Handler>): Handler {
  const table: Record<string, Handler> = { '/robots.txt': robots() };
  for (const [path, page] of Object.entries(pages)) {
    table[path] = typeof page === 'string' ? (_req, res) => html(res, page) : page;
  }
  return routes(table);
}

const contactPoints = (domain: string) => ({
  '@context': 'https://schema.org',
  '@type': 'Organization',
  name: 'ContactPoint Outfitters',
  contactPoint: [
    {
      '@type': 'ContactPoint',
      contactType: 'customer service',
      email: `support@${domain}`,
      telephone: '+1-415-555-0100',
    },
    { '@type': 'ContactPoint', contactType: 'sales', email: `sales@${domain}` },
  ],
});

const sitemap: Handler = (_req, res, origin) =>
  res
    .writeHead(200, { 'content-type': 'application/xml' })
    .end(
      `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>${origin}/</loc></url><url><loc>${origin}/about</loc></url></urlset>`,
    );

const contactForm = `<p>Call <a href="tel:+1-212-555-0199">+1 212 555 0199</a> or write to us:</p>
<form method="post" action="/customer-service/send"><input name="name"><input type="email" name="email">
<textarea name="message"></textarea><button>Send</button></form>
<form role="search" action="/search"><input type="search" name="q"></form>`;

/** The brands whose sites are pages and nothing else. */
function staticBrands(d: typeof brandDomains): Partial<Record<BrandName, Handler>> {
  return {
    jsonLd: site({
      '/robots.txt': (req, res, origin) => robots([`Sitemap: ${origin}/sitemap.xml`])(req, res),
      '/sitemap.xml': sitemap,
      '/': (_req, res, origin) =>
        html(
          res,
          page(
            'ContactPoint Outfitters',
            `<p>Outdoor gear.</p><a href="${origin}/policies/return-policy">Return policy</a>`,
            contactPoints(d.jsonLd),
          ),
        ),
      '/about': page('About', '<p>Since 1999.</p>'),
      '/policies/return-policy': page('Return policy', '<p>30 days.</p>'),
    }),
    mailto: site({
      '/': page('Mailto Goods', '<p>Goods.</p><a href="/contact">Contact us</a>'),
      '/contact': page(
        'Contact',
        `<p>Write to <a href="mailto:returns@${d.mailto}?subject=Return">us</a>.</p>`,
      ),
    }),
    formPhone: site({
      '/': page('Formphone Homewares', '<a href="/customer-service">Customer service</a>'),
      '/customer-service': page('Customer service', contactForm),
    }),
    nothing: site({ '/': page('Nothing Here', '<p>Hello.</p>') }),
    person: site({
      '/': page('Person Mail Traders', '<a href="/contact">Contact</a>'),
      '/contact': page(
        'Contact',
        `<a href="mailto:jane.doe@${d.person}">Jane Doe, our manager</a>
<a href="mailto:support@helpdesk-vendor-mail.com">Support</a>`,
      ),
    }),
    noMail: site({
      '/': page(
        'No MX Goods',
        `<a href="mailto:support@${d.noMail}">support</a><a href="mailto:help@care.${d.noMail}">care</a>`,
      ),
    }),
    mcp: site({
      '/': page('Toolful Gadget Store', '<p>Gadgets, and an MCP server for agents.</p>'),
      '/.well-known/mcp/catalog.json': (_req, res, origin) =>
        json(res, {
          specVersion: 'draft',
          entries: [
            {
              identifier: 'urn:test:toolful',
              type: 'application/mcp-server-card+json',
              url: `${origin}/mcp/server-card`,
            },
          ],
        }),
      '/mcp/server-card': (_req, res, origin) =>
        json(res, {
          name: 'com.toolful/store',
          version: '1.0.0',
          remotes: [{ type: 'streamable-http', url: `${origin}/mcp` }],
        }),
      '/mcp': mcpServerRoute({
        tools: [
          { name: 'request_refund', description: 'Ask for a refund of an order: order number, reason.' },
          { name: 'list_products', description: 'The gadgets on sale.' },
        ],
      }),
    }),
  };
}

const json = (res: http.ServerResponse, value: unknown) =>
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(value));

/** Soup, a redirect loop, a page that never answers, an endless page, a binary, a robots.txt rule. */
function hostileBrand(hanging: http.ServerResponse[]): Handler {
  return site({
    '/robots.txt': (_req, res, origin) =>
      res
        .writeHead(200, { 'content-type': 'text/plain' })
        .end(
          `User-agent: ${scannerToken}\nDisallow: /private/\n\nUser-agent: *\nAllow: /\n\nSitemap: ${origin}/sitemap.xml\n`,
        ),
    // 5,000 help articles: more than any page cap, more than a report keeps.
    '/sitemap.xml': (_req, res, origin) =>
      res
        .writeHead(200, { 'content-type': 'application/xml' })
        .end(
          `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${Array.from(
            { length: 5000 },
            (_, i) => `<url><loc>${origin}/help/article-${i}</loc></url>`,
          ).join('')}</urlset>`,
        ),
    '/': `<html><head><title>Hostile</title><script type="application/ld+json">{"@type": "Organization", contactPoint: [</script>
<body><div><p>soup <b><i>unclosed <table><tr><td><a href="/contact">Contact</a><a href="/help">Help center</a>
<a href="/support">Support</a><a href="/returns">Returns</a><a href="/private/contact-us">Contact us privately</a>
<a href="mailto:%E0%A4%A">broken</a><a href="tel:">nothing</a><a href="http://[::1">bad url</a></td>`,
    '/contact': (_req, res) => res.writeHead(302, { location: '/contact-us' }).end(),
    '/contact-us': (_req, res) => res.writeHead(302, { location: '/contact' }).end(),
    '/help': (_req, res) => {
      hanging.push(res);
    },
    '/support': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      const chunk = `<p>${'support '.repeat(1000)}</p>`;
      const pump = () => {
        while (!res.destroyed && res.write(chunk)) {
          // fill the socket until it pushes back
        }
        if (!res.destroyed) res.once('drain', pump);
      };
      res.write('<html><body>');
      pump();
    },
    '/returns': (_req, res) =>
      res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(Buffer.alloc(4096, 7)),
    '/private/contact-us': page('Private', `<a href="mailto:support@${brandDomains.hostile}">support</a>`),
  });
}

/** A home page that answers once `gate` opens, with a returns ContactPoint. */
function slowBrand(domain: string, gate: Promise<void>): Handler {
  return site({
    '/': (_req, res) => {
      void gate.then(() =>
        html(
          res,
          page('Slow Returns Emporium', '<p>Finally.</p>', {
            '@context': 'https://schema.org',
            '@type': 'Organization',
            contactPoint: { contactType: 'returns', email: `returns@${domain}` },
          }),
        ),
      );
    },
  });
}

/** The `a2a` brand: its card, a real A2A JSON-RPC server answering with a task, and a home page. */
function a2aBrand(origin: string, agent: BrandA2aAgent): Handler {
  const card: AgentCard = {
    name: 'Agentic Shoe Outlet support',
    description: 'Customer service of Agentic Shoe Outlet: order questions, returns and refunds.',
    supportedInterfaces: [
      { url: `${origin}/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: '' },
    ],
    provider: { organization: 'Agentic Shoe Outlet', url: `${origin}/` },
    version: '1.0.0',
    capabilities: { streaming: false, pushNotifications: false, extensions: [] },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain', 'application/json'],
    defaultOutputModes: ['text/plain', 'application/json'],
    skills: [
      {
        id: 'track_order',
        name: 'Track an order',
        description: 'Where a parcel is.',
        tags: ['orders'],
        examples: [],
        inputModes: [],
        outputModes: [],
        securityRequirements: [],
      },
      {
        id: 'process_return',
        name: 'Returns and refunds',
        description: 'Open a return or refund case for an order.',
        tags: ['returns', 'refunds'],
        examples: [],
        inputModes: [],
        outputModes: [],
        securityRequirements: [],
      },
    ],
    signatures: [],
  };
  const executor: AgentExecutor = {
    async execute(context, bus) {
      agent.received.push(context.userMessage);
      bus.publish(
        AgentEvent.task({
          id: context.taskId,
          contextId: context.contextId,
          status: {
            state: TaskState.TASK_STATE_SUBMITTED,
            message: undefined,
            timestamp: new Date().toISOString(),
          },
          artifacts: [],
          history: [context.userMessage],
          metadata: {},
        }),
      );
      bus.finished();
    },
    async cancelTask() {},
  };
  const handler = new DefaultRequestHandler(card, agent.tasks, executor);
  const app = express();
  app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: async () => card }));
  app.use('/a2a', jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  app.get('/robots.txt', (_req, res) => {
    res.type('text/plain').send('User-agent: *\nAllow: /\n');
  });
  app.get('/', (_req, res) => {
    res.type('html').send(page('Agentic Shoe Outlet', '<p>Shoes. Agents welcome.</p>'));
  });
  return (req, res) => app(req, res);
}

/** Starts the world: the DNS server, then the brands' server. */
export async function startBrandWorld(): Promise<BrandWorld> {
  const dns = await startDnsServer();
  const requests: BrandWorldRequest[] = [];
  const hanging: http.ServerResponse[] = [];
  let releaseSlow = () => {};
  const gate = new Promise<void>((resolve) => {
    releaseSlow = resolve;
  });
  const agent: BrandA2aAgent = { received: [], tasks: new InMemoryTaskStore() };
  const handlers = new Map<string, Handler>();
  const server = http.createServer((req, res) => {
    const host = (req.headers.host ?? '').replace(/:\d+$/, '').toLowerCase();
    requests.push({
      host,
      path: req.url ?? '/',
      method: req.method ?? 'GET',
      userAgent: req.headers['user-agent'],
    });
    const handler = handlers.get(host);
    if (!handler) {
      res.writeHead(421).end('misdirected');
      return;
    }
    handler(req, res, `http://${req.headers.host}`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const origin = (brand: BrandName) => `http://${brandDomains[brand]}:${port}`;

  for (const [brand, handler] of Object.entries(staticBrands(brandDomains))) {
    handlers.set(brandDomains[brand as BrandName], handler);
  }
  handlers.set(brandDomains.a2a, a2aBrand(origin('a2a'), agent));
  handlers.set(brandDomains.hostile, hostileBrand(hanging));
  handlers.set(brandDomains.slow, slowBrand(brandDomains.slow, gate));

  for (const domain of Object.values(brandDomains)) {
    dns.a.set(domain, ['127.0.0.1']);
    dns.mx.set(domain, [{ exchange: `mx.${domain}`, preference: 10 }]);
  }
  // A null MX: the domain takes no mail (RFC 7505); `care.<domain>` is not in DNS at all.
  dns.mx.set(brandDomains.noMail, [{ exchange: '.', preference: 0 }]);
  // The other company a mailto points at takes mail: it is refused for its domain, not its DNS.
  dns.mx.set('helpdesk-vendor-mail.com', [{ exchange: 'mx.helpdesk-vendor-mail.com', preference: 10 }]);

  const dispatcher = new Agent({ connect: { lookup: outboundResolver([dns.address]).lookup } });
  const worldFetch = ((url: string | URL, init?: RequestInit) =>
    undiciFetch(url, { ...(init as object), dispatcher })) as unknown as typeof fetch;
  return {
    dns,
    port,
    origin,
    fetch: worldFetch,
    a2aClient: () =>
      new ClientFactory(
        ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
          transports: [new JsonRpcTransportFactory({ fetchImpl: worldFetch })],
          cardResolver: new DefaultAgentCardResolver({ fetchImpl: worldFetch }),
        }),
      ).createFromUrl(origin('a2a')),
    requests,
    hits: (brand, path) => requests.filter((r) => r.host === brandDomains[brand] && r.path === path).length,
    a2aAgent: agent,
    releaseSlow: () => releaseSlow(),
    serve(domain, brand) {
      dns.a.set(domain, ['127.0.0.1']);
      dns.mx.set(domain, [{ exchange: `mx.${domain}`, preference: 10 }]);
      handlers.set(domain, handlers.get(brandDomains[brand]) as Handler);
    },
    overrides: {
      'outbound.dns_servers': [dns.address],
      'scanner.allow_private_networks': true,
      'returns.discovery.enabled': true,
      'returns.discovery.home_page_scheme': 'http',
      'returns.discovery.home_page_port': port,
    },
    async close() {
      releaseSlow();
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await dispatcher.close();
      await dns.close();
    },
  };
}

/** A message an agent sends: one text part (what the delivery tests send to the `a2a` brand). */
export function textMessage(text: string): Message {
  return {
    messageId: randomUUID(),
    contextId: '',
    taskId: '',
    role: Role.ROLE_USER,
    parts: [
      { content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' },
    ],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}
