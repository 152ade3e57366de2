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
 * - `slow` - a home page that answers only once `releaseSlow()` is called; then a ContactPoint email;
 * - `a2aFlaky` - an A2A agent card with a returns skill whose agent fails as `flakyAgent.respond`
 *   says (an HTTP error, garbage, a hang), and a customer service `ContactPoint` email to fall back on;
 * - `mcpRegistered` - nothing on its site; an MCP server at `/mcp` (the MCP SDK) with an
 *   `open_return_case` tool, for a brand agent registered with protocol `mcp` (`mcpCalls`).
 *
 * The A2A agents are brands' agents: they answer a message with a task (submitted), a follow-up
 * sent to an open task moves it to working, and `moveTask` changes a task as the brand's own
 * system would (a question, an artifact, a decision), for the service to read with `tasks/get`.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type AgentCard, type Message, Role, type Task, TaskState } from '@a2a-js/sdk';
import {
  type Client as A2aClient,
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
} from '@a2a-js/sdk/client';
import {
  AgentEvent,
  type AgentExecutor,
  DefaultRequestHandler,
  InMemoryTaskStore,
  ServerCallContext,
} from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import express from 'express';
import { Agent, fetch as undiciFetch } from 'undici';
import { z } from 'zod';
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
  a2aFlaky: 'flaky-agent-apparel.com',
  mcpRegistered: 'registered-mcp-furniture.com',
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

/** How a brand's agent answers a call: normally, with an HTTP status, garbage (200, not JSON), or never. */
export type AgentBehaviour = 'ok' | 'garbage' | 'hang' | number;

export interface BrandA2aAgent {
  /** Every message the agent received, in order. */
  received: Message[];
  /** Tasks it opened (and can be asked for), by id. */
  tasks: InMemoryTaskStore;
  /** JSON-RPC calls seen (`respond` is asked for each, counting from 1). */
  calls: number;
  respond: (call: number) => AgentBehaviour;
  /** The brand's system moves a task: its state, a message of the agent, an artifact. */
  moveTask(
    taskId: string,
    change: {
      state: TaskState;
      message?: string;
      artifact?: { name: string; text?: string; data?: unknown };
    },
  ): Promise<Task>;
  task(taskId: string): Promise<Task | undefined>;
}

/** A call of `open_return_case` on the `mcpRegistered` brand's server. */
export interface McpToolCall {
  name: string;
  arguments: Record<string, unknown>;
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
  /** The `a2aFlaky` brand's agent (fails with 500 until told otherwise). */
  flakyAgent: BrandA2aAgent;
  /** Calls of the `mcpRegistered` brand's tool, in order. */
  mcpCalls: McpToolCall[];
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

/** A brand's A2A agent as its own system holds it: the task store, and a hand on its tasks. */
function brandAgent(): BrandA2aAgent {
  const tasks = new InMemoryTaskStore();
  const scope = new ServerCallContext();
  const agent: BrandA2aAgent = {
    received: [],
    tasks,
    calls: 0,
    respond: () => 'ok',
    task: (taskId) => tasks.load(taskId, scope),
    async moveTask(taskId, change) {
      const task = await tasks.load(taskId, scope);
      if (!task) throw new Error(`no task ${taskId}`);
      const said = change.message ? agentMessage(task, change.message) : undefined;
      const moved: Task = {
        ...task,
        status: { state: change.state, message: said, timestamp: new Date().toISOString() },
        history: said ? [...task.history, said] : task.history,
        artifacts: change.artifact
          ? [
              ...task.artifacts,
              {
                artifactId: randomUUID(),
                name: change.artifact.name,
                description: '',
                parts: [
                  ...(change.artifact.text ? [textPart(change.artifact.text)] : []),
                  ...(change.artifact.data === undefined
                    ? []
                    : [
                        {
                          content: { $case: 'data' as const, value: change.artifact.data },
                          metadata: undefined,
                          filename: '',
                          mediaType: 'application/json',
                        },
                      ]),
                ],
                metadata: undefined,
                extensions: [],
              },
            ]
          : task.artifacts,
      };
      await tasks.save(moved, scope);
      return moved;
    },
  };
  return agent;
}

const textPart = (text: string) => ({
  content: { $case: 'text' as const, value: text },
  metadata: undefined,
  filename: '',
  mediaType: 'text/plain',
});

function agentMessage(task: Task, text: string): Message {
  return {
    messageId: randomUUID(),
    contextId: task.contextId,
    taskId: task.id,
    role: Role.ROLE_AGENT,
    parts: [textPart(text)],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

/**
 * A brand's site with its A2A agent: its card, a real A2A JSON-RPC server (the SDK's request
 * handler) that opens a task for a message and moves an open task to working on a follow-up, and a
 * home page (with `jsonLd` when given). `agent.respond` decides each call's fate before the
 * JSON-RPC layer sees it.
 */
function a2aBrand(origin: string, agent: BrandA2aAgent, name: string, jsonLd?: unknown): Handler {
  const card: AgentCard = {
    name: `${name} support`,
    description: `Customer service of ${name}: order questions, returns and refunds.`,
    supportedInterfaces: [
      { url: `${origin}/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: '' },
    ],
    provider: { organization: name, url: `${origin}/` },
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
      if (context.task) {
        bus.publish(
          AgentEvent.statusUpdate({
            taskId: context.taskId,
            contextId: context.contextId,
            status: {
              state: TaskState.TASK_STATE_WORKING,
              message: undefined,
              timestamp: new Date().toISOString(),
            },
            metadata: undefined,
          }),
        );
        bus.finished();
        return;
      }
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
  app.use('/a2a', (_req, res, next) => {
    agent.calls += 1;
    const behaviour = agent.respond(agent.calls);
    if (behaviour === 'ok') return next();
    if (behaviour === 'hang') return;
    if (behaviour === 'garbage') {
      res.status(200).type('html').send('<html><body>Our agent is having a nap</body></html>');
      return;
    }
    res.status(behaviour).json({ error: 'unavailable' });
  });
  app.use('/a2a', jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  app.get('/robots.txt', (_req, res) => {
    res.type('text/plain').send('User-agent: *\nAllow: /\n');
  });
  app.get('/', (_req, res) => {
    res.type('html').send(page(name, '<p>Agents welcome.</p>', jsonLd));
  });
  return (req, res) => app(req, res);
}

/** The `mcpRegistered` brand: a bare home page and an MCP server with a tool for return cases. */
function registeredMcpBrand(calls: McpToolCall[]): Handler {
  const mcp = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const server = new McpServer({ name: 'registered-mcp-furniture', version: '1.0.0' });
      server.registerTool(
        'open_return_case',
        {
          description: 'Open a return or refund case for an order.',
          inputSchema: {
            order_number: z.string().optional(),
            reason: z.string(),
            customer_email: z.string().optional(),
            request_id: z.string().optional(),
          },
        },
        async (args) => {
          calls.push({ name: 'open_return_case', arguments: args });
          const caseId = `RC-${calls.length}`;
          return {
            content: [{ type: 'text', text: `Case ${caseId} opened; we will reply within 2 days.` }],
            structuredContent: { case_id: caseId, status: 'acknowledged' },
          };
        },
      );
      server.registerTool('list_furniture', { description: 'What is on sale.' }, async () => ({
        content: [{ type: 'text', text: 'chairs' }],
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
  return site({ '/': page('Registered MCP Furniture', '<p>Chairs.</p>'), '/mcp': mcp });
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
  const agent = brandAgent();
  const flaky = brandAgent();
  flaky.respond = () => 500;
  const mcpCalls: McpToolCall[] = [];
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
  handlers.set(brandDomains.a2a, a2aBrand(origin('a2a'), agent, 'Agentic Shoe Outlet'));
  handlers.set(
    brandDomains.a2aFlaky,
    a2aBrand(origin('a2aFlaky'), flaky, 'Flaky Agent Apparel', {
      '@context': 'https://schema.org',
      '@type': 'Organization',
      contactPoint: { contactType: 'customer service', email: `support@${brandDomains.a2aFlaky}` },
    }),
  );
  handlers.set(brandDomains.mcpRegistered, registeredMcpBrand(mcpCalls));
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
    flakyAgent: flaky,
    mcpCalls,
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
