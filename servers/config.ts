/**
 * Configuration: `mcp.config.json` (defaults, documented in docs/reference/configuration.md, generated from this schema) overridden by environment
 * variables, validated by one zod schema. Every problem is reported at once, naming the key and
 * where its value came from (STYLE.md 8).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import proxyaddr from 'proxy-addr';
import { z } from 'zod';
import { DnsServer } from './outbound/dns-lookup.ts';
import { SettlerKey } from './payments/settler-key.ts';
import { SecretBox, SecretsKey } from './secrets.ts';

export const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const packageJson = JSON.parse(readFileSync(path.join(projectRoot, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
};
export const serviceName: string = packageJson.name;
export const serviceVersion: string = packageJson.version;
/** The service's name wherever it names itself: pages, discovery documents, the authorization server's pages. */
export const SERVICE_TITLE = 'Agent service';

const absoluteUrl = z
  .url({ protocol: /^https?$/, error: 'must be an absolute http(s) URL' })
  .transform((u) => u.replace(/\/+$/, ''));

const positiveInt = z.number().int().positive();

const RateLimit = z.strictObject({ points: positiveInt, duration_s: positiveInt });

/**
 * Express `trust proxy` (proxy-addr): false, true, a hop count, or a comma list of addresses, CIDR
 * ranges and the names `loopback`, `linklocal`, `uniquelocal`. Checked here so a bad value is a
 * configuration error listed with the others, not an exception when the app is built.
 */
const TrustProxy = z.union([
  z.boolean(),
  z.number().int().min(0),
  z.string().refine((value) => {
    try {
      proxyaddr.compile(value.split(',').map((part) => part.trim()));
      return true;
    } catch {
      return false;
    }
  }, 'must be true, false, a hop count, or a comma list of IP addresses, CIDR ranges, loopback, linklocal or uniquelocal'),
]);

/** A `SECRETS_KEY`: 32 random bytes as base64 or hex. */
const SecretsKeyText = z.string().transform((text, ctx) => {
  const key = SecretsKey.parse(text);
  if (!key) {
    ctx.addIssue({
      code: 'custom',
      message: 'must be 32 random bytes as base64 or hex (openssl rand -base64 32)',
    });
    return z.NEVER;
  }
  return key;
});

/** The name of an environment variable that holds a secret (the secret itself is never in a file). */
const EnvName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,100}$/, 'must be an environment variable name');

/** An EVM address (20 bytes, 0x-prefixed hex), e.g. the `payTo` that receives USDC. */
const EvmAddress = z
  .string()
  .regex(/^0x[0-9a-fA-F]{40}$/, 'must be an EVM address (0x followed by 40 hex digits)');

/** The private key that submits settlements on chain (`PAYMENTS_SETTLER_PRIVATE_KEY`). */
const SettlerKeyText = z.string().transform((text, ctx) => {
  const key = SettlerKey.parse(text);
  if (!key) {
    ctx.addIssue({ code: 'custom', message: 'must be a 32-byte private key as 0x-prefixed hex' });
    return z.NEVER;
  }
  return key;
});

/** Event types of CAEP 1.0 that the receiver acts on and the transmitter sends (SPEC "Events"). */
export const CAEP_EVENT_TYPES = [
  'https://schemas.openid.net/secevent/caep/event-type/session-revoked',
  'https://schemas.openid.net/secevent/caep/event-type/credential-change',
  'https://schemas.openid.net/secevent/caep/event-type/token-claims-change',
] as const;

/**
 * A Shared Signals transmitter whose Security Event Tokens the push endpoint
 * (`{auth_url}/ssf/push`) accepts (docs/guides/authentication/caep.md):
 * - `issuer`: the SETs' `iss`, compared exactly;
 * - `jwks_uri`: its JSON Web Key Set, fetched through the SSRF-safe fetcher and cached;
 * - `audience`: the `aud` its SETs must carry; null means our issuer (`auth_url`);
 * - `push_token`: if set, the transmitter must also send `Authorization: Bearer <push_token>`
 *   (the SSF stream's `authorization_header`); compared in constant time;
 * - `events`: the event types accepted from it (default: the three of SPEC "Events");
 * - `email_subjects`: whether its `email` subject identifiers may name our accounts (a transmitter
 *   that does not verify the emails it names should not be trusted with this).
 */
export const TrustedTransmitter = z.strictObject({
  issuer: z.url({ protocol: /^https?$/, error: 'must be an absolute http(s) URL' }),
  jwks_uri: z.url({ protocol: /^https?$/, error: 'must be an absolute http(s) URL' }),
  audience: z.string().min(1).nullable().default(null),
  push_token: z.string().min(16, 'must be at least 16 characters').nullable().default(null),
  events: z
    .array(z.enum(CAEP_EVENT_TYPES))
    .min(1)
    .default([...CAEP_EVENT_TYPES]),
  email_subjects: z.boolean().default(true),
});
export type TrustedTransmitter = z.infer<typeof TrustedTransmitter>;

/** A mail domain: lowercase labels of letters, digits and hyphens, at least two. */
const MailDomain = z
  .string()
  .transform((d) => d.trim().toLowerCase().replace(/\.$/, ''))
  .refine(
    (d) =>
      /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/.test(d),
    'must be a domain name such as replies.example.com',
  );

/** `returns.inbound_mail`: brands' replies by email (`returns/inbound/`). */
const InboundMail = z
  .strictObject({
    port: z
      .number()
      .int()
      .min(0)
      .max(65535)
      .nullable()
      .describe(
        "port of the SMTP listener that takes [brands' replies by email](../guides/customer-service/brands.md#brand-replies-by-email) (`25` behind the inbound domain's MX; `0`: any free port); set together with `INBOUND_MAIL_DOMAIN`. null: no listener, and the person's own address stays the Reply-To",
      ),
    host: z.string().min(1).describe('listening address of the SMTP listener'),
    domain: MailDomain.nullable().describe(
      "domain of the per-request addresses `returns+<request>.<token>@<domain>` (its MX points at the listener; a subdomain of `SMTP_FROM`'s domain keeps our mail DMARC-aligned). On, email deliveries carry such an address as `Reply-To` and envelope sender",
    ),
    max_bytes: positiveInt.describe(
      'largest reply accepted (announced with `SIZE`); a bigger one is refused with `552`',
    ),
    max_clients: positiveInt.describe(
      'SMTP connections at once per process; past it new ones are refused (`421`)',
    ),
    tls_key_file: z
      .string()
      .min(1)
      .nullable()
      .describe(
        'PEM key: with `tls_cert_file`, the listener offers `STARTTLS` (both, or neither; production mode warns without them)',
      ),
    tls_cert_file: z.string().min(1).nullable().describe('PEM certificate chain, with `tls_key_file`'),
  })
  .refine((m) => (m.port === null) === (m.domain === null), {
    message: 'port (INBOUND_SMTP_PORT) and domain (INBOUND_MAIL_DOMAIN) are set together, or neither',
    path: ['domain'],
  })
  .refine((m) => (m.tls_key_file === null) === (m.tls_cert_file === null), {
    message: 'tls_key_file and tls_cert_file are set together, or neither',
    path: ['tls_cert_file'],
  });

/**
 * An outbox's worker (`servers/outbox-worker.ts`): how often it polls, how many rows it claims at
 * once and for how long, and its retries (exponential backoff with jitter from `base_delay_ms` up
 * to `max_delay_ms`, `max_attempts` in all). Every outbox has its own.
 */
const OutboxDelivery = z.strictObject({
  poll_interval_ms: positiveInt,
  batch_size: positiveInt,
  lease_ms: positiveInt,
  max_attempts: positiveInt,
  base_delay_ms: positiveInt,
  max_delay_ms: positiveInt,
});

/** Where a fetched home page's port is: null, the scheme's own. */
const HomePagePort = z
  .number()
  .int()
  .min(1)
  .max(65535)
  .nullable()
  .describe("null: the scheme's port; tests and self-hosted setups point it at a local peer");

/** `auto`: on in production mode, off otherwise (a developer's machine does not crawl unasked). */
const AutoFlag = z.union([z.boolean(), z.literal('auto')]);

/**
 * Every setting, its type and what it does: `docs/reference/configuration.md` is generated from
 * these descriptions, `envBindings` and `mcp.config.json` (`npm run docs`), so each is written once.
 * Descriptions are Markdown; their links are relative to that page.
 */
export const Config = z
  .object({
    port: z.number().int().min(0).max(65535).describe('listening port (`0`: any free port)'),
    host: z.string().min(1).describe('listening address (`0.0.0.0` in containers)'),
    site_url: absoluteUrl.describe(
      'the main site: home page, discovery documents, pages, paid SKUs, the soul API ([URL map](../../README.md#url-map)). `{port}` is expanded',
    ),
    base_url: absoluteUrl.describe('the customer service agent; `{site_url}` and `{port}` are expanded'),
    public_api_url: absoluteUrl.describe('the public API'),
    mcp_url: absoluteUrl.describe('the public MCP server; the owner-scoped one is at `{mcp_url}/auth`'),
    auth_url: absoluteUrl.describe('the authorization server, also its issuer'),
    functions_url: absoluteUrl.describe('the live catalog host'),
    data_dir: z.string().min(1).describe('where SQLite keeps `service.db`'),
    database_url: z
      .string()
      .regex(/^(postgres(ql)?:\/\/|sqlite:)/, 'must be a postgres:// URL or sqlite:<file>')
      .nullable()
      .describe('`postgres://...` to use PostgreSQL (or `sqlite:<file>`); null: SQLite in `data_dir`'),
    database_pool_size: positiveInt
      .max(1000)
      .describe(
        "PostgreSQL connections each process keeps at most, plus one that listens for messages between processes; N processes (or `WORKERS=N`) open up to N times as many, so keep the sum under the server's `max_connections` (SQLite has one write and one read connection)",
      ),
    log_level: z
      .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
      .describe('`fatal` ... `trace`, `silent`'),
    mode: z
      .enum(['development', 'production'])
      .describe(
        '`production` (`NODE_ENV=production`) turns on [production mode](../operations/security.md#production-mode): it refuses unsafe settings and warns about defaults that must change (`productionChecks`); anything else is development',
      ),
    trust_proxy: TrustProxy.describe(
      'Express `trust proxy` (hop count, `true`, or a comma list of addresses, CIDR ranges, `loopback`, `linklocal`, `uniquelocal`); decides the client address used for rate limits',
    ),
    mcp: z.strictObject({
      allowed_hosts: z
        .array(z.string().min(1))
        .describe(
          "host names accepted in `Host`/`Origin` by the MCP endpoints (DNS-rebinding protection); empty: the MCP URL's host, plus `localhost`, `127.0.0.1`, `[::1]` when that host is local",
        ),
      shared_modern_server: z
        .boolean()
        .describe(
          "serve MCP 2026-07-28 `tools/call` and `tools/list` on one long-lived SDK server bound to the revision, as 2025-11-25 requests are (about a quarter of the CPU of a server per request); off: every 2026-07-28 request through the SDK's stateless entry, a server per request. The answers are the same either way",
        ),
    }),
    http: z.strictObject({
      body_limit_bytes: positiveInt.describe(
        'largest JSON body accepted (413 `payload_too_large` past it; batch ingestion has its own)',
      ),
    }),
    server: z.strictObject({
      shutdown_timeout_ms: positiveInt.describe(
        'after `SIGTERM`, how long in-flight requests get before their connections are closed ([Running in production](../operations/production.md#health-and-shutdown))',
      ),
      body_timeout_ms: positiveInt.describe(
        "how long a request's body may take to arrive once its headers have: past it the answer is `408 request_timeout` and the connection closes (a handler's own time is not counted; headers have Node's `headersTimeout`, 60 s) ([Slow and oversized requests](../operations/security.md#slow-and-oversized-requests))",
      ),
      workers: positiveInt
        .max(256)
        .describe(
          '`npm start` forks this many workers on one port (node:cluster); more than 1 needs PostgreSQL ([Scale-out](../operations/scale-out.md))',
        ),
    }),
    metrics: z.strictObject({
      enabled: z
        .boolean()
        .describe(
          'serve Prometheus metrics at `{site_url}/metrics` (off: 404) ([Metrics](../operations/production.md#metrics))',
        ),
    }),
    rate_limits: z.strictObject({
      unauthenticated_writes: RateLimit.describe(
        'writes without a service key (`POST /return`, `start_return_request`, `POST /account`, `POST /pixel-install` without a key, client registration, `POST {auth_url}/signup`, ...) per client address and window (rate-limiter-flexible)',
      ),
      authorization_requests: RateLimit.describe(
        '`GET`/`POST {auth_url}/oauth/authorize` per client address (each stores an interaction)',
      ),
      sign_in_failures_per_account: RateLimit.describe(
        'password sign-ins that failed (OAuth sign-in form, claim form) per account (the normalised email, known or not); see [Limits](../operations/security.md#limits)',
      ),
      sign_in_failures_per_address: RateLimit.describe('the same per client address, across emails'),
      email_codes_per_email: RateLimit.describe(
        'verified-email codes sent per email (`auth/assertions/email-codes.ts`)',
      ),
      scan_batch_domains: RateLimit.describe(
        'domains queued by `POST /scans/batch` (and the `start_my_scan_batch` tool) per account: a batch of 20 spends 20 points, and a batch larger than what is left is refused whole',
      ),
      email_codes_per_address: RateLimit.describe(
        'code requests and code checks per client address, across emails (a right code gives its check back)',
      ),
    }),
    outbound: z.strictObject({
      allow_private_networks: z
        .boolean()
        .describe(
          'lets outbound calls (brand webhooks, callbacks) reach loopback and private networks; tests and self-hosting only',
        ),
      timeout_ms: positiveInt.describe(
        'per outbound request (webhooks, A2A and MCP calls to brands, SSF pushes)',
      ),
      user_agent: z.string().min(1).describe("sent on outbound requests other than the scanner's"),
      dns_servers: z
        .array(DnsServer)
        .describe(
          'comma list of `ip[:port]` DNS servers for every outbound lookup: both safe fetchers (brand webhooks and callbacks, scans, brand sites), TXT ownership checks, live resolution, mail domains (MX) (`outbound/dns-lookup.ts`); empty: the system resolver. The per-feature lists override it for their feature',
        ),
    }),
    scanner: z.strictObject({
      allow_private_networks: z
        .boolean()
        .describe(
          'lets the scanner and domain verification reach loopback and private networks, and accepts `localhost:PORT` / `127.0.0.1:PORT` as a domain; tests and self-hosting only',
        ),
      allow_local_sites: z
        .union([z.boolean(), z.literal('auto')])
        .describe(
          'accepts the local names `localhost[:PORT]`, `127.x.x.x[:PORT]` and `[::1][:PORT]` as domains (scans, site verification, listings, placements) and lets the scanner and verification reach loopback only, not the other private networks `allow_private_networks` opens. `auto`: on in development mode (a developer scans and verifies the service itself out of the box), off in production; `true` in production needs ALLOW_PRIVATE_NETWORKS_IN_PRODUCTION',
        ),
      user_agent: z
        .string()
        .regex(/^[A-Za-z0-9_-]+\/\S+/, 'must start with a product token and version (name/1.0)')
        .describe(
          'scanner user agent; robots.txt rules for its product token (before `/`, `agent-service-scanner`) are obeyed',
        ),
      max_pages: positiveInt.describe('HTML pages read by a full scan'),
      quick_max_pages: positiveInt.describe('HTML pages read by the first quick check of `GET /signal`'),
      max_bytes: positiveInt.describe('largest body read from any response; the rest is not downloaded'),
      request_timeout_ms: positiveInt.describe('per scanner request'),
      scan_timeout_ms: positiveInt.describe(
        'whole-scan time budget: the crawl stops and scores what it read',
      ),
      concurrency: positiveInt.describe('politeness: requests in flight to the scanned host'),
      delay_ms: z
        .number()
        .int()
        .min(0)
        .describe("politeness: pause after each request (raised to the site's `Crawl-delay`, at most 2 s)"),
      max_redirects: z.number().int().min(0).max(20).describe('redirects followed per request'),
      max_sitemaps: positiveInt.describe('sitemap documents read (indexes followed)'),
      workers: positiveInt.describe('scans run at once per process'),
      poll_interval_ms: positiveInt.describe('how often idle scan workers look for queued scans'),
      lease_ms: positiveInt.describe('how long a claimed scan is held before another process may take it'),
      max_attempts: positiveInt.describe('attempts before a scan whose worker died is marked failed'),
      history_per_domain: positiveInt.describe(
        'finished scans kept per domain (`GET /scans?domain=`, diffs); the scan worker prunes older ones, never the one the leaderboard shows or one a payment bought',
      ),
      webmcp: z.strictObject({
        enabled: z
          .boolean()
          .describe(
            "reads the tools a site's home page registers for in-browser agents (WebMCP) with headless Chromium; off: the `webmcp` check is not measured",
          ),
        chromium_path: z.string().min(1).describe('the Chromium executable the WebMCP check launches'),
        pool_size: positiveInt
          .max(8)
          .describe('browsers the WebMCP check runs at once per process (each reused, one page at a time)'),
        page_budget_ms: positiveInt
          .max(60_000)
          .describe(
            'hard time budget of one page in the browser: it is closed then and what it registered is kept',
          ),
      }),
    }),
    sites: z.strictObject({
      verification_dns_servers: z
        .array(DnsServer)
        .describe(
          'comma list of `ip[:port]` DNS servers for TXT ownership checks only; empty: `outbound.dns_servers`',
        ),
    }),
    pages: z.strictObject({
      pixel_site_id: z
        .uuid()
        .nullable()
        .describe(
          "the `site_id` (from `POST /pixel-install`) of this deployment's own site: the home page then carries the service's own traffic pixel ([Discovery documents](discovery.md)); null: no pixel on the pages",
        ),
    }),
    charges: z.strictObject({
      live_resolution: z.strictObject({
        enabled: AutoFlag.describe(
          "[live resolution](../guides/customer-service/card-charges.md#live-resolution-of-unknown-merchants) of merchants the registry does not name confidently (verdicts stored in `resolved_merchants`): `auto` (on in production mode, off otherwise: a developer's machine does not crawl unasked), `on`, `off`",
        ),
        time_budget_ms: z
          .number()
          .int()
          .min(0)
          .max(30_000)
          .describe(
            'how long a lookup waits for a resolution before answering `pending` (it goes on in the background)',
          ),
        deadline_ms: positiveInt
          .max(60_000)
          .describe('when a resolution, background included, is cut off with every fetch of it'),
        max_candidates: positiveInt
          .max(20)
          .describe(
            "candidate domains checked per merchant (the line's own domain and search results first)",
          ),
        max_concurrent: positiveInt
          .max(64)
          .describe(
            'resolutions at once per process (with a queue of 8 per slot, then `pending` without starting one)',
          ),
        home_page_scheme: z
          .enum(['https', 'http'])
          .describe("where a candidate's home page is fetched: `{scheme}://{domain}[:port]/`"),
        home_page_port: HomePagePort,
        dns_servers: z
          .array(DnsServer)
          .describe(
            'comma list of `ip[:port]` DNS servers for candidate domains only; empty: `outbound.dns_servers`',
          ),
        resolved_ttl_days: positiveInt.describe('how long a found site is served before it is checked again'),
        not_found_ttl_days: positiveInt.describe(
          'how long "no site names this merchant" is served before it is tried again (a miss with a timeout: 1 hour)',
        ),
      }),
    }),
    research: z.strictObject({
      search: z.strictObject({
        searxng_url: absoluteUrl
          .nullable()
          .describe(
            'a SearXNG instance (with `json` in `search.formats` of its settings.yml) that live resolution and the [research SKUs](../guides/paid/research.md#providers) search through (`servers/outbound/search.ts`)',
          ),
        brave: z
          .strictObject({ url: absoluteUrl, api_key_env: EnvName.nullable() })
          .describe(
            "the [Brave Search API](../guides/paid/research.md#providers) (a commercial web search with its own index): used when the environment variable named by `api_key_env` holds a subscription token; SearXNG's fallback when both are set",
          ),
        timeout_ms: positiveInt.describe('per search request'),
      }),
      llm: z.strictObject({
        providers: z
          .array(
            z.strictObject({
              /** What answers cite (`openai`, `local-llama`); unique. */
              name: z.string().regex(/^[A-Za-z0-9_.-]{1,40}$/, 'must be 1-40 letters, digits, _ . or -'),
              /** The API base, such as `https://api.openai.com/v1` or `http://localhost:11434/v1` (Ollama). */
              base_url: absoluteUrl,
              model: z.string().min(1).max(200),
              /** The environment variable holding the API key; null for a server without keys. */
              api_key_env: EnvName.nullable(),
            }),
          )
          .max(8)
          .refine(
            (list) => new Set(list.map((p) => p.name)).size === list.length,
            'provider names must be unique',
          )
          .describe(
            'JSON list of OpenAI-compatible chat-completions endpoints `{name, base_url, model, api_key_env}` ([providers](../guides/paid/research.md#providers), `servers/outbound/llm.ts`); keys only from the variables named',
          ),
        timeout_ms: positiveInt
          .max(120_000)
          .describe(
            'per request to a language model; past it the paid call fails uncharged (`provider_unavailable`)',
          ),
      }),
      people_search: z.strictObject({
        results_per_query: positiveInt.max(20).describe('results asked per formulation of the query'),
        max_pages: positiveInt.max(30).describe('result pages fetched and read (robots.txt permitting)'),
        max_page_bytes: positiveInt.describe('largest body read of a result page'),
      }),
    }),
    returns: z.strictObject({
      delivery: OutboxDelivery.describe(
        'the delivery outbox of return requests to brands: poll, batch, lease, and retries with exponential backoff and jitter from `base_delay_ms` up to `max_delay_ms`, `max_attempts` in all',
      ),
      discovery: z.strictObject({
        enabled: AutoFlag.describe(
          "[reading brands' sites for their channels](../guides/customer-service/brands.md#how-a-brands-channels-are-found) (`returns/channels/`, through the scanner's fetcher and robots.txt rules): `auto` (on in production mode, off otherwise), `on`, `off`",
        ),
        request_budget_ms: z
          .number()
          .int()
          .min(0)
          .max(30_000)
          .describe(
            'how long `POST /return` and `GET /brands/{domain}` wait for a discovery; past it, it goes on in the background',
          ),
        deadline_ms: positiveInt
          .max(120_000)
          .describe("one discovery's whole time, background included: every fetch of it is cut off then"),
        max_pages: positiveInt.max(50).describe('HTML pages one discovery reads, the home page included'),
        max_bytes: positiveInt.describe('largest body read of any page, document or MCP answer'),
        request_timeout_ms: positiveInt.describe('per discovery request'),
        ttl_hours: positiveInt.describe(
          'how long a complete discovery is served before the next; a partial or unreachable one at most 1 hour',
        ),
        failed_channel_hold_hours: positiveInt.describe(
          'how long delivery skips a channel that failed (`markChannelFailed`)',
        ),
        max_concurrent: positiveInt
          .max(64)
          .describe('discoveries at once per process (with a queue of 8 per slot, then none started)'),
        home_page_scheme: z
          .enum(['https', 'http'])
          .describe("where a brand's home page is fetched: `{scheme}://{domain}[:port]/`"),
        home_page_port: HomePagePort,
      }),
      inbound_mail: InboundMail,
      brand_tasks: z.strictObject({
        poll_ms: positiveInt.describe(
          "how soon the task a brand's A2A agent opened is first read again (`GetTask`, `returns/brand-tasks.ts`); then every tenth of its age",
        ),
        max_poll_ms: positiveInt.describe("the longest wait between two reads of a brand's task"),
        follow_days: positiveInt.max(365).describe("how long a brand's task is followed"),
      }),
    }),
    traffic: z.strictObject({
      queue_max_events: positiveInt.describe(
        'events held in memory (queued plus being written) before ingestion answers 503',
      ),
      flush_max_events: positiveInt.describe('largest batch of traffic events written in one transaction'),
      write_timeout_ms: positiveInt.describe(
        'longest a write of beacon hits and event batches may take before its callers are answered 503 (one queued meanwhile waits for it, then for its own): a database that does not answer never holds a page',
      ),
      raw_retention_days: positiveInt.describe(
        'raw traffic events are deleted after this; rollups keep the counts',
      ),
      rollup_retention_days: positiveInt.describe(
        'rollup rows (daily counts per site, page, agent) are deleted after this',
      ),
      network_min_sites: positiveInt.describe(
        '`GET /ai-search-data` withholds network figures for a period in which fewer sites sent traffic (they would describe one site)',
      ),
    }),
    auth: z.strictObject({
      anonymous: z.strictObject({
        scan_limit: z
          .number()
          .int()
          .min(0)
          .describe(
            'scans one [anonymous session](../guides/authentication/anonymous.md) (`POST {auth_url}/signup`) may request',
          ),
        session_ttl_s: positiveInt.describe("lifetime of an anonymous session's bearer token and claim code"),
      }),
      trusted_issuers: z
        .array(
          z.strictObject({
            issuer: z.string().regex(/^https?:\/\//, 'must be an http(s) URL'),
            jwks_uri: z.string().regex(/^https?:\/\//, 'must be an http(s) URL'),
            trusted_for_email: z.boolean().default(false),
          }),
        )
        .describe(
          'identity providers whose ID-JAGs the token endpoint accepts (`auth/assertions/`): `[{"issuer": "https://idp.example.com", "jwks_uri": "https://idp.example.com/jwks", "trusted_for_email": false}]`. `issuer` is compared byte for byte with the assertion\'s `iss`; `jwks_uri` is fetched through the SSRF-safe fetcher and cached; `trusted_for_email` links a subject with no link yet to the account with the assertion\'s `email` (only when `email_verified` is not false) ([identity assertions](../guides/authentication/id-jag.md))',
        ),
      trusted_transmitters: z
        .array(TrustedTransmitter)
        .refine(
          (list) => new Set(list.map((t) => t.issuer)).size === list.length,
          'each issuer may be listed once',
        )
        .describe(
          'JSON list of Shared Signals transmitters whose SETs `{auth_url}/ssf/push` accepts (`TrustedTransmitter`; issuers unique) ([security events](../guides/authentication/caep.md#receiving-post-auth_urlssfpush))',
        ),
      client_id_metadata_documents: z
        .strictObject({
          enabled: z
            .boolean()
            .describe(
              "an https URL may be a `client_id`: the authorization server reads the client's metadata from it through the SSRF-safe fetcher (`auth/client-id-metadata.ts`, `outbound.*` address policy; [client ID metadata documents](../guides/authentication/oauth.md))",
            ),
          max_bytes: positiveInt.describe(
            "one document's size; past it the client is refused (`invalid_client`)",
          ),
          timeout_ms: positiveInt.describe(
            "one document's fetch time; past it the client is refused (`invalid_client`)",
          ),
          cache_min_s: positiveInt.describe(
            'how long each process keeps a fetched document at least: its `Cache-Control: max-age` (or `Expires`) held within `cache_min_s` and `cache_max_s`; refusals are not kept',
          ),
          cache_max_s: positiveInt.describe('how long each process keeps a fetched document at most'),
        })
        .refine((c) => c.cache_min_s <= c.cache_max_s, {
          message: 'cache_min_s must not be above cache_max_s',
          path: ['cache_min_s'],
        }),
      security_events: z.strictObject({
        max_streams_per_account: positiveInt.describe(
          'streams one account may hold at our transmitter (`auth/events/`)',
        ),
        delivery: OutboxDelivery.describe(
          'SET pushes to receivers: poll, batch, lease, and retries with exponential backoff and jitter from `base_delay_ms` up to `max_delay_ms`, `max_attempts` in all',
        ),
      }),
    }),
    secrets: z
      .strictObject({
        key: SecretsKeyText.nullable()
          .default(null)
          .describe(
            '32 random bytes (base64 or hex) that seal the secrets stored in the database ([secrets at rest](../operations/security.md#secrets-at-rest), `servers/secrets.ts`). Environment only: a key in a file would sit next to what it protects',
          ),
        previous_keys: z
          .array(SecretsKeyText)
          .default([])
          .describe(
            'comma list of retired keys, still accepted to open (and reseal) values during a rotation. Environment only',
          ),
      })
      .default({ key: null, previous_keys: [] }),
    payments: z.strictObject({
      pay_to: EvmAddress.nullable().describe(
        'EVM address that receives every x402 payment ([paid catalog](../guides/paid/x402.md)); an invalid one refuses to start, none logs a warning and every paid SKU answers `503 sku_unavailable`',
      ),
      network: z
        .enum(['base', 'base-sepolia'])
        .describe(
          '`base` (eip155:8453, USDC `0x8335…2913`, domain "USD Coin") or `base-sepolia` (eip155:84532, USDC `0x036C…CF7e`, domain "USDC")',
        ),
      facilitator_url: absoluteUrl
        .nullable()
        .describe('a remote x402 facilitator (`/verify`, `/settle`, `/supported`); null: the embedded one'),
      rpc_url: absoluteUrl
        .nullable()
        .describe(
          'JSON-RPC of the chain: the embedded facilitator verifies against it (code, balance simulation), settles through it with the settler key, and the settler reconciles from it',
        ),
      settler_private_key: SettlerKeyText.nullable()
        .default(null)
        .describe(
          'key that submits `transferWithAuthorization` for the embedded facilitator and pays gas. Environment only: never in a file, never logged (only its address)',
        ),
      max_timeout_seconds: z
        .number()
        .int()
        .min(30)
        .max(86_400)
        .describe('x402 `maxTimeoutSeconds`: how long a payment authorization stays valid after the 402'),
      sync_wait_seconds: z
        .number()
        .int()
        .min(0)
        .max(120)
        .describe(
          'how long a paid call waits for its work or its settlement before answering with what is known (`reconciling`, or 202 with `status_url` for SKUs that queue work, such as `scan`)',
        ),
      referral_share: z
        .number()
        .min(0)
        .max(1)
        .describe('share of each settled payment credited to the referral handle it named (`ref`)'),
      settler_poll_interval_ms: positiveInt.describe(
        'how often the settler looks for payments to settle or reconcile (and credits to pay back)',
      ),
      reservation_lease_seconds: z
        .number()
        .int()
        .min(1)
        .max(3600)
        .describe(
          "a running paid call renews its payment reservation three times per lease; a reservation whose process died is recovered (released, or reconciled when its result was stored) this long after its last renewal - by the settler, or at once by the payer's retry ([faults](../operations/faults.md))",
        ),
    }),
    marketplace: z.strictObject({
      spotlight_slots: z
        .number()
        .int()
        .min(1)
        .max(1000)
        .describe(
          'spotlight placements shown at once; a purchase when all are taken is 409 `spotlight_full` with the next opening ([Marketplace](../guides/paid/marketplace.md))',
        ),
      boost_cpm_usdc: z
        .number()
        .positive()
        .max(1000)
        .describe('what a boost campaign pays per thousand impressions reported by an ad network, in USDC'),
      ad_networks: z
        .array(
          z.strictObject({
            name: z.string().regex(/^[a-z0-9][a-z0-9-]{0,39}$/, 'must be a lower-case slug'),
            webhook_url: absoluteUrl,
            secret: z.string().regex(/^whsec_[A-Za-z0-9+/=]{16,}$/, 'must be whsec_ followed by base64'),
          }),
        )
        .refine((list) => new Set(list.map((n) => n.name)).size === list.length, 'names must be unique')
        .describe(
          '`[{name, webhook_url, secret}]`: ad networks that receive boost campaigns (Standard Webhooks signed with `secret`, `whsec_...`) and report impressions signed with the same secret',
        ),
      embodiment: z
        .strictObject({
          operator_account_email: z
            .email()
            .nullable()
            .describe(
              "the robot operator's account: its service keys move embodiment bookings (quote, schedule, ...); without it and at least one channel the SKU is unavailable (503 `sku_unavailable`, no 402)",
            ),
          webhook_url: absoluteUrl
            .nullable()
            .describe('new bookings are POSTed here, signed (Standard Webhooks) with `webhook_secret`'),
          webhook_secret: z
            .string()
            .regex(/^whsec_[A-Za-z0-9+/=]{16,}$/, 'must be whsec_ followed by base64')
            .nullable()
            .describe('`whsec_...`, required with `webhook_url`'),
          email: z.email().nullable().describe('new bookings are emailed here (needs `smtp.url`)'),
        })
        .refine((e) => e.webhook_url === null || e.webhook_secret !== null, {
          message: 'webhook_url needs webhook_secret (EMBODIMENT_WEBHOOK_SECRET)',
          path: ['webhook_secret'],
        }),
      delivery: OutboxDelivery.describe(
        'the marketplace outbox (`catalog/marketplace-outbox.ts`): bookings to the operator, campaigns to ad networks; poll, batch, lease, and retries with exponential backoff and jitter',
      ),
    }),
    unsafe: z.strictObject({
      allow_private_networks_in_production: z
        .boolean()
        .describe(
          'lets production mode keep `SCAN_ALLOW_PRIVATE` / `OUTBOUND_ALLOW_PRIVATE` on (a private deployment that scans its own network)',
        ),
    }),
    smtp: z.strictObject({
      url: z
        .string()
        .regex(/^smtps?:\/\//, 'must be an smtp:// or smtps:// URL')
        .nullable()
        .describe(
          '`smtp://user:pass@host:587` enables email: delivery to brands, verified-email codes, embodiment mail',
        ),
      from: z.string().min(3).describe('sender of those emails'),
    }),
  })
  .strict();
export type Config = z.infer<typeof Config>;

type EnvBinding = { key: string; parse?: (raw: string) => unknown };

/** Environment variable -> config key (dotted path). docs/reference/configuration.md is generated from it. */
export const envBindings: Record<string, EnvBinding> = {
  PORT: { key: 'port', parse: numberOrRaw },
  HOST: { key: 'host' },
  SITE_URL: { key: 'site_url' },
  BASE_URL: { key: 'base_url' },
  PUBLIC_API_URL: { key: 'public_api_url' },
  MCP_URL: { key: 'mcp_url' },
  AUTH_URL: { key: 'auth_url' },
  FUNCTIONS_URL: { key: 'functions_url' },
  DATA_DIR: { key: 'data_dir' },
  DATABASE_URL: { key: 'database_url' },
  DATABASE_POOL_SIZE: { key: 'database_pool_size', parse: numberOrRaw },
  LOG_LEVEL: { key: 'log_level' },
  SHUTDOWN_TIMEOUT_MS: { key: 'server.shutdown_timeout_ms', parse: numberOrRaw },
  BODY_TIMEOUT_MS: { key: 'server.body_timeout_ms', parse: numberOrRaw },
  WORKERS: { key: 'server.workers', parse: numberOrRaw },
  METRICS_ENABLED: { key: 'metrics.enabled', parse: flag },
  NODE_ENV: { key: 'mode', parse: (raw) => (raw === 'production' ? 'production' : 'development') },
  SECRETS_KEY: { key: 'secrets.key', parse: nullIfEmpty },
  SECRETS_KEY_PREVIOUS: { key: 'secrets.previous_keys', parse: list },
  PAY_TO: { key: 'payments.pay_to', parse: nullIfEmpty },
  PIXEL_SITE_ID: { key: 'pages.pixel_site_id', parse: nullIfEmpty },
  PAYMENTS_NETWORK: { key: 'payments.network' },
  X402_FACILITATOR_URL: { key: 'payments.facilitator_url', parse: nullIfEmpty },
  PAYMENTS_RPC_URL: { key: 'payments.rpc_url', parse: nullIfEmpty },
  PAYMENTS_SETTLER_PRIVATE_KEY: { key: 'payments.settler_private_key', parse: nullIfEmpty },
  PAYMENTS_MAX_TIMEOUT_SECONDS: { key: 'payments.max_timeout_seconds', parse: numberOrRaw },
  PAYMENTS_SYNC_WAIT_SECONDS: { key: 'payments.sync_wait_seconds', parse: numberOrRaw },
  PAYMENTS_REFERRAL_SHARE: { key: 'payments.referral_share', parse: numberOrRaw },
  PAYMENTS_SETTLER_POLL_INTERVAL_MS: { key: 'payments.settler_poll_interval_ms', parse: numberOrRaw },
  PAYMENTS_RESERVATION_LEASE_SECONDS: { key: 'payments.reservation_lease_seconds', parse: numberOrRaw },
  MARKETPLACE_SPOTLIGHT_SLOTS: { key: 'marketplace.spotlight_slots', parse: numberOrRaw },
  MARKETPLACE_BOOST_CPM_USDC: { key: 'marketplace.boost_cpm_usdc', parse: numberOrRaw },
  EMBODIMENT_OPERATOR_ACCOUNT_EMAIL: {
    key: 'marketplace.embodiment.operator_account_email',
    parse: nullIfEmpty,
  },
  EMBODIMENT_WEBHOOK_URL: { key: 'marketplace.embodiment.webhook_url', parse: nullIfEmpty },
  EMBODIMENT_WEBHOOK_SECRET: { key: 'marketplace.embodiment.webhook_secret', parse: nullIfEmpty },
  EMBODIMENT_EMAIL: { key: 'marketplace.embodiment.email', parse: nullIfEmpty },
  ALLOW_PRIVATE_NETWORKS_IN_PRODUCTION: { key: 'unsafe.allow_private_networks_in_production', parse: flag },
  TRUST_PROXY: {
    key: 'trust_proxy',
    parse: (raw) => (raw === 'true' ? true : raw === 'false' ? false : numberOrRaw(raw)),
  },
  MCP_ALLOWED_HOSTS: { key: 'mcp.allowed_hosts', parse: list },
  MCP_SHARED_MODERN_SERVER: { key: 'mcp.shared_modern_server', parse: flag },
  OUTBOUND_ALLOW_PRIVATE: { key: 'outbound.allow_private_networks', parse: flag },
  OUTBOUND_DNS_SERVERS: { key: 'outbound.dns_servers', parse: list },
  SCAN_ALLOW_PRIVATE: { key: 'scanner.allow_private_networks', parse: flag },
  SCAN_ALLOW_LOCAL: { key: 'scanner.allow_local_sites', parse: flag },
  SCAN_USER_AGENT: { key: 'scanner.user_agent' },
  SCAN_MAX_PAGES: { key: 'scanner.max_pages', parse: numberOrRaw },
  SCAN_CONCURRENCY: { key: 'scanner.concurrency', parse: numberOrRaw },
  SCAN_DELAY_MS: { key: 'scanner.delay_ms', parse: numberOrRaw },
  SCAN_TIMEOUT_MS: { key: 'scanner.scan_timeout_ms', parse: numberOrRaw },
  SCAN_WORKERS: { key: 'scanner.workers', parse: numberOrRaw },
  SCAN_HISTORY_PER_DOMAIN: { key: 'scanner.history_per_domain', parse: numberOrRaw },
  SCAN_WEBMCP: { key: 'scanner.webmcp.enabled', parse: flag },
  SCAN_WEBMCP_CHROMIUM_PATH: { key: 'scanner.webmcp.chromium_path' },
  SCAN_WEBMCP_POOL_SIZE: { key: 'scanner.webmcp.pool_size', parse: numberOrRaw },
  SCAN_WEBMCP_PAGE_BUDGET_MS: { key: 'scanner.webmcp.page_budget_ms', parse: numberOrRaw },
  SITES_DNS_SERVERS: { key: 'sites.verification_dns_servers', parse: list },
  CHARGES_LIVE_RESOLUTION: {
    key: 'charges.live_resolution.enabled',
    parse: (raw) => (raw.trim().toLowerCase() === 'auto' ? 'auto' : flag(raw)),
  },
  CHARGES_RESOLUTION_DNS_SERVERS: { key: 'charges.live_resolution.dns_servers', parse: list },
  SEARXNG_URL: { key: 'research.search.searxng_url', parse: nullIfEmpty },
  RESEARCH_LLM_PROVIDERS: { key: 'research.llm.providers', parse: jsonOrRaw },
  RESEARCH_LLM_TIMEOUT_MS: { key: 'research.llm.timeout_ms', parse: numberOrRaw },
  SMTP_URL: { key: 'smtp.url' },
  TRAFFIC_QUEUE_MAX_EVENTS: { key: 'traffic.queue_max_events', parse: numberOrRaw },
  TRAFFIC_WRITE_TIMEOUT_MS: { key: 'traffic.write_timeout_ms', parse: numberOrRaw },
  TRAFFIC_RAW_RETENTION_DAYS: { key: 'traffic.raw_retention_days', parse: numberOrRaw },
  TRAFFIC_ROLLUP_RETENTION_DAYS: { key: 'traffic.rollup_retention_days', parse: numberOrRaw },
  TRAFFIC_NETWORK_MIN_SITES: { key: 'traffic.network_min_sites', parse: numberOrRaw },
  SMTP_FROM: { key: 'smtp.from' },
  ANONYMOUS_SCAN_LIMIT: { key: 'auth.anonymous.scan_limit', parse: numberOrRaw },
  ANONYMOUS_SESSION_TTL_S: { key: 'auth.anonymous.session_ttl_s', parse: numberOrRaw },
  AUTH_TRUSTED_TRANSMITTERS: { key: 'auth.trusted_transmitters', parse: jsonOrRaw },
  AUTH_CLIENT_ID_METADATA_DOCUMENTS: { key: 'auth.client_id_metadata_documents.enabled', parse: flag },
  SSF_DELIVERY_BASE_DELAY_MS: { key: 'auth.security_events.delivery.base_delay_ms', parse: numberOrRaw },
  SSF_DELIVERY_MAX_ATTEMPTS: { key: 'auth.security_events.delivery.max_attempts', parse: numberOrRaw },
  RATE_LIMIT_WRITES_PER_MINUTE: { key: 'rate_limits.unauthenticated_writes.points', parse: numberOrRaw },
  DELIVERY_BASE_DELAY_MS: { key: 'returns.delivery.base_delay_ms', parse: numberOrRaw },
  DELIVERY_MAX_ATTEMPTS: { key: 'returns.delivery.max_attempts', parse: numberOrRaw },
  DELIVERY_LEASE_MS: { key: 'returns.delivery.lease_ms', parse: numberOrRaw },
  DELIVERY_POLL_INTERVAL_MS: { key: 'returns.delivery.poll_interval_ms', parse: numberOrRaw },
  RETURNS_DISCOVERY: {
    key: 'returns.discovery.enabled',
    parse: (raw) => (raw.trim().toLowerCase() === 'auto' ? 'auto' : flag(raw)),
  },
  RETURNS_DISCOVERY_BUDGET_MS: { key: 'returns.discovery.request_budget_ms', parse: numberOrRaw },
  RETURNS_DISCOVERY_TTL_HOURS: { key: 'returns.discovery.ttl_hours', parse: numberOrRaw },
  INBOUND_SMTP_PORT: {
    key: 'returns.inbound_mail.port',
    parse: (raw) => nullIfEmpty(raw) && numberOrRaw(raw),
  },
  INBOUND_SMTP_HOST: { key: 'returns.inbound_mail.host' },
  INBOUND_MAIL_DOMAIN: { key: 'returns.inbound_mail.domain', parse: nullIfEmpty },
  INBOUND_MAIL_MAX_BYTES: { key: 'returns.inbound_mail.max_bytes', parse: numberOrRaw },
  INBOUND_SMTP_TLS_KEY_FILE: { key: 'returns.inbound_mail.tls_key_file', parse: nullIfEmpty },
  INBOUND_SMTP_TLS_CERT_FILE: { key: 'returns.inbound_mail.tls_cert_file', parse: nullIfEmpty },
  RETURNS_TASK_POLL_MS: { key: 'returns.brand_tasks.poll_ms', parse: numberOrRaw },
};

function numberOrRaw(raw: string): unknown {
  return raw.trim() !== '' && Number.isFinite(Number(raw)) ? Number(raw) : raw;
}
function jsonOrRaw(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}
function nullIfEmpty(raw: string): string | null {
  return raw.trim() === '' ? null : raw.trim();
}
function list(raw: string): string[] {
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}
function flag(raw: string): unknown {
  if (/^(1|true|yes|on)$/i.test(raw)) return true;
  if (/^(0|false|no|off|)$/i.test(raw)) return false;
  return raw;
}

export class ConfigError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

export interface LoadConfigOptions {
  /** Defaults to `mcp.config.json` at the project root; `CONFIG_FILE` overrides. */
  file?: string;
  env?: NodeJS.ProcessEnv;
  /** Applied last (tests). Dotted keys allowed: `{ 'returns.delivery.lease_ms': 500 }`. */
  overrides?: Record<string, unknown>;
}

export function loadConfig(options: LoadConfigOptions = {}): Config {
  const env = options.env ?? process.env;
  const file = options.file ?? env.CONFIG_FILE ?? path.join(projectRoot, 'mcp.config.json');
  const problems: string[] = [];
  const origin = new Map<string, string>();

  let raw: Record<string, unknown>;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch (err) {
    throw new ConfigError([`${file}: ${(err as Error).message}`]);
  }
  delete raw.$comment;
  if (raw.secrets !== undefined) {
    problems.push(
      `secrets: keys are read from the environment only (SECRETS_KEY, SECRETS_KEY_PREVIOUS) [from ${path.basename(file)}]`,
    );
    delete raw.secrets;
  }
  const filePayments = raw.payments as Record<string, unknown> | undefined;
  if (filePayments && typeof filePayments === 'object' && 'settler_private_key' in filePayments) {
    problems.push(
      `payments.settler_private_key: read from the environment only (PAYMENTS_SETTLER_PRIVATE_KEY) [from ${path.basename(file)}]`,
    );
    delete filePayments.settler_private_key;
  }

  for (const [name, binding] of Object.entries(envBindings)) {
    const value = env[name];
    if (value === undefined) continue;
    setPath(raw, binding.key, binding.parse ? binding.parse(value) : value);
    origin.set(binding.key, `environment ${name}`);
  }
  for (const [key, value] of Object.entries(options.overrides ?? {})) {
    setPath(raw, key, value);
    origin.set(key, 'override');
  }

  const resolved = resolveTemplates(raw, problems);
  const parsed = Config.safeParse(resolved);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const key = issue.path.join('.') || '(root)';
      // A member of a value set as a whole (a JSON list from the environment) names that source.
      const where =
        origin.get(key) ?? [...origin].find(([set]) => key.startsWith(`${set}.`))?.[1] ?? path.basename(file);
      const keys = issue.code === 'unrecognized_keys' ? ` (${issue.keys.join(', ')})` : '';
      problems.push(`${key}: ${issue.message}${keys} [from ${where}]`);
    }
  }
  if (parsed.success) problems.push(...productionChecks(parsed.data).problems);
  if (problems.length > 0) throw new ConfigError(problems);
  return parsed.data as Config;
}

const URL_KEYS = ['site_url', 'base_url', 'public_api_url', 'mcp_url', 'auth_url', 'functions_url'] as const;

/**
 * What production mode (`NODE_ENV=production`) requires - `problems` stop the start (exit 78) - and
 * the defaults it warns about, each naming the setting to change (STYLE.md 8, oidc-provider's
 * `mustChange`). Development mode has neither.
 */
export function productionChecks(config: Config): { problems: string[]; warnings: string[] } {
  const problems: string[] = [];
  const warnings: string[] = [];
  if (config.mode !== 'production') return { problems, warnings };
  for (const key of URL_KEYS) {
    if (!config[key].startsWith('https://')) {
      problems.push(`${key}: must be an https URL in production (got ${config[key]})`);
    }
  }
  // An identity provider's keys decide who may sign in: fetched over TLS only.
  for (const [i, trusted] of config.auth.trusted_issuers.entries()) {
    if (!trusted.jwks_uri.startsWith('https://')) {
      problems.push(
        `auth.trusted_issuers.${i}.jwks_uri: must be an https URL in production (got ${trusted.jwks_uri})`,
      );
    }
  }
  if (!config.unsafe.allow_private_networks_in_production) {
    const overrides =
      'or set ALLOW_PRIVATE_NETWORKS_IN_PRODUCTION=1 if this deployment must reach its own network';
    if (config.scanner.allow_private_networks) {
      problems.push(
        `scanner.allow_private_networks: lets anyone scan this network's private addresses; turn off SCAN_ALLOW_PRIVATE in production, ${overrides}`,
      );
    }
    if (config.scanner.allow_local_sites === true) {
      problems.push(
        `scanner.allow_local_sites: lets anyone scan and verify this machine's own addresses; set it to auto or false in production, ${overrides}`,
      );
    }
    if (config.outbound.allow_private_networks) {
      problems.push(
        `outbound.allow_private_networks: lets brand webhooks reach this network's private addresses; turn off OUTBOUND_ALLOW_PRIVATE in production, ${overrides}`,
      );
    }
  }
  for (const [i, transmitter] of config.auth.trusted_transmitters.entries()) {
    if (!transmitter.jwks_uri.startsWith('https://'))
      problems.push(`auth.trusted_transmitters.${i}.jwks_uri: must be an https URL in production`);
  }
  if (!config.payments.pay_to) warnings.push(payToMissing);
  if (!config.secrets.key) {
    warnings.push(
      'SECRETS_KEY is not set: signing keys, cookie keys and brand webhook secrets are stored in clear in the database',
    );
  }
  if (config.trust_proxy === false) {
    warnings.push(
      'trust_proxy (TRUST_PROXY) is false: behind a TLS proxy every request seems to come from the proxy, and per-address rate limits apply to all clients at once',
    );
  }
  if (isLocalHost(new URL(config.site_url).hostname)) {
    warnings.push(`site_url (SITE_URL) is ${config.site_url}: published URLs point at this machine`);
  }
  if (config.smtp.url && /@localhost>?$/.test(config.smtp.from)) {
    warnings.push(`smtp.from (SMTP_FROM) is ${config.smtp.from}: brands receive mail from a local address`);
  }
  if (inboundMailEnabled(config) && !config.smtp.url) {
    warnings.push(
      'returns.inbound_mail is on but smtp.url (SMTP_URL) is not set: no mail to a brand carries a per-request reply address',
    );
  }
  if (inboundMailEnabled(config) && config.returns.inbound_mail.tls_key_file === null) {
    warnings.push(
      'returns.inbound_mail has no TLS (INBOUND_SMTP_TLS_KEY_FILE, INBOUND_SMTP_TLS_CERT_FILE): replies from brands reach the listener in clear',
    );
  }
  if (config.log_level === 'debug' || config.log_level === 'trace') {
    warnings.push(
      `log_level (LOG_LEVEL) is ${config.log_level}: logs hold request details not needed in production`,
    );
  }
  if (!config.database_url?.startsWith('postgres')) {
    warnings.push('database_url (DATABASE_URL) is not PostgreSQL: SQLite serves one process on one machine');
  }
  return { problems, warnings };
}

/** Logged at start in every mode when no `payTo` is configured (STYLE.md 8: name what to change). */
export const payToMissing =
  'payments.pay_to (PAY_TO) is not set: every paid SKU answers 503 sku_unavailable until an EVM address receives the payments';

const isLocalHost = (hostname: string): boolean =>
  hostname === 'localhost' || hostname.endsWith('.localhost') || /^127\.|^\[?::1\]?$/.test(hostname);

function setPath(target: Record<string, unknown>, dotted: string, value: unknown): void {
  const parts = dotted.split('.');
  let node = target;
  for (const part of parts.slice(0, -1)) {
    const next = node[part];
    if (typeof next !== 'object' || next === null) node[part] = {};
    node = node[part] as Record<string, unknown>;
  }
  node[parts.at(-1) as string] = value;
}

/** Expands `{port}`, `{site_url}` and `{version}` inside string values (site_url first, it may use port). */
function resolveTemplates(raw: Record<string, unknown>, problems: string[]): Record<string, unknown> {
  const vars: Record<string, string> = { port: String(raw.port), version: serviceVersion };
  const expand = (value: string, key: string): string =>
    value.replace(/\{(\w+)\}/g, (whole, name: string) => {
      const v = vars[name];
      if (v === undefined) {
        problems.push(`${key}: unknown placeholder ${whole}`);
        return whole;
      }
      return v;
    });
  if (typeof raw.site_url === 'string') {
    vars.site_url = expand(raw.site_url, 'site_url').replace(/\/+$/, '');
  }
  const walk = (node: unknown, key: string): unknown => {
    if (typeof node === 'string') return expand(node, key);
    if (Array.isArray(node)) return node.map((v, i) => walk(v, `${key}.${i}`));
    if (node && typeof node === 'object') {
      return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, walk(v, key ? `${key}.${k}` : k)]));
    }
    return node;
  };
  return walk(raw, '') as Record<string, unknown>;
}

/** The `SecretBox` of a configuration: the current key seals, previous keys still open. */
export const secretBoxOf = (config: Config): SecretBox =>
  new SecretBox(config.secrets.key, config.secrets.previous_keys);

/** The host names the MCP endpoints accept (DNS-rebinding protection, MCP transports "Security warning"). */
export function mcpAllowedHosts(config: Config): string[] {
  if (config.mcp.allowed_hosts.length > 0) return config.mcp.allowed_hosts;
  const host = new URL(config.mcp_url).hostname;
  const loopback = ['localhost', '127.0.0.1', '[::1]'];
  return loopback.includes(host) ? loopback : [host];
}

/** Where SQLite lives when no `database_url` is given. */
export function sqliteFile(config: Config): string {
  if (config.database_url?.startsWith('sqlite:')) return config.database_url.slice('sqlite:'.length);
  return path.resolve(config.data_dir, 'service.db');
}

/** Whether lookups resolve unknown merchants live: `auto` means in production mode only. */
export function liveResolutionEnabled(config: Config): boolean {
  const enabled = config.charges.live_resolution.enabled;
  return enabled === 'auto' ? config.mode === 'production' : enabled;
}

/**
 * Whether local names (`localhost:PORT`...) are domains and loopback addresses are reachable for
 * the scanner and site verification: `scanner.allow_local_sites` (`auto`: in development mode
 * only), and always with `scanner.allow_private_networks`, which opens loopback with the rest.
 */
export function localSitesAllowed(config: Config): boolean {
  if (config.scanner.allow_private_networks) return true;
  const allowed = config.scanner.allow_local_sites;
  return allowed === 'auto' ? config.mode === 'development' : allowed;
}

/** Whether brands' sites are read for their channels: `auto` means in production mode only. */
export function channelDiscoveryEnabled(config: Config): boolean {
  const enabled = config.returns.discovery.enabled;
  return enabled === 'auto' ? config.mode === 'production' : enabled;
}

/** Whether brands' replies by email are received (`returns.inbound_mail` has a port and a domain). */
export function inboundMailEnabled(config: Config): boolean {
  const { port, domain } = config.returns.inbound_mail;
  return port !== null && domain !== null;
}
