/**
 * Configuration: `mcp.config.json` (defaults, documented in the README) overridden by environment
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

/**
 * An outbox's worker (`servers/outbox-worker.ts`): how often it polls, how many rows it claims at
 * once and for how long, and its retries (exponential backoff with jitter from `base_delay_ms` up
 * to `max_delay_ms`, `max_attempts` in all).
 */
const outboxSettings = z.strictObject({
  poll_interval_ms: positiveInt,
  batch_size: positiveInt,
  lease_ms: positiveInt,
  max_attempts: positiveInt,
  base_delay_ms: positiveInt,
  max_delay_ms: positiveInt,
});
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
 * (`{auth_url}/ssf/push`) accepts (README "Security events"):
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

/** `returns.inbound_mail`: see the key's comment below and README "Brand replies by email". */
const InboundMail = z
  .strictObject({
    /** Listening port; null: no listener (and the person's own address stays the Reply-To). */
    port: z.number().int().min(0).max(65535).nullable(),
    host: z.string().min(1),
    /** The domain of the per-request addresses; its MX must point at this listener. */
    domain: MailDomain.nullable(),
    /** Largest message accepted (SMTP SIZE); a bigger one is refused with 552. */
    max_bytes: positiveInt,
    /** Connections at once per process; past it new ones are refused (421). */
    max_clients: positiveInt,
    /** STARTTLS with this PEM key and certificate chain (both, or neither: no STARTTLS). */
    tls_key_file: z.string().min(1).nullable(),
    tls_cert_file: z.string().min(1).nullable(),
  })
  .refine((m) => (m.port === null) === (m.domain === null), {
    message: 'port (INBOUND_SMTP_PORT) and domain (INBOUND_MAIL_DOMAIN) are set together, or neither',
    path: ['domain'],
  })
  .refine((m) => (m.tls_key_file === null) === (m.tls_cert_file === null), {
    message: 'tls_key_file and tls_cert_file are set together, or neither',
    path: ['tls_cert_file'],
  });

export const Config = z
  .object({
    port: z.number().int().min(0).max(65535),
    host: z.string().min(1),
    site_url: absoluteUrl,
    base_url: absoluteUrl,
    public_api_url: absoluteUrl,
    mcp_url: absoluteUrl,
    auth_url: absoluteUrl,
    functions_url: absoluteUrl,
    data_dir: z.string().min(1),
    database_url: z
      .string()
      .regex(/^(postgres(ql)?:\/\/|sqlite:)/, 'must be a postgres:// URL or sqlite:<file>')
      .nullable(),
    /**
     * PostgreSQL connections each process keeps open at most (SQLite has one write and one read
     * connection). N processes open up to N times this many: keep the sum under the server's
     * `max_connections`.
     */
    database_pool_size: positiveInt.max(1000),
    log_level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
    /**
     * `production` (NODE_ENV=production) refuses unsafe settings and warns about defaults that must
     * change (`productionChecks`); anything else is development.
     */
    mode: z.enum(['development', 'production']),
    /** Express `trust proxy`: false, true, a hop count or a list of addresses/subnets. */
    trust_proxy: TrustProxy,
    mcp: z.strictObject({
      /** Host names accepted in `Host`/`Origin` of MCP requests (DNS-rebinding protection). Empty: derived. */
      allowed_hosts: z.array(z.string().min(1)),
    }),
    http: z.strictObject({ body_limit_bytes: positiveInt }),
    /** Process model: README "Running in production". */
    server: z.strictObject({
      /** After SIGTERM: how long in-flight requests get before their connections are closed. */
      shutdown_timeout_ms: positiveInt,
      /**
       * How long a request's body may take to arrive once its headers have (408 past it); the
       * handler's own time is not counted. Headers have Node's `headersTimeout` (60 s).
       */
      body_timeout_ms: positiveInt,
      /** `npm start` forks this many workers on one port (node:cluster); past 1 needs PostgreSQL. */
      workers: positiveInt.max(256),
    }),
    /** Prometheus metrics at `{site_url}/metrics` (off: 404). */
    metrics: z.strictObject({ enabled: z.boolean() }),
    /** Points per client key and window (rate-limiter-flexible); README "Configuration" says what each counts. */
    rate_limits: z.strictObject({
      unauthenticated_writes: RateLimit,
      /** `GET`/`POST {auth_url}/oauth/authorize` per address: each stores an interaction. */
      authorization_requests: RateLimit,
      /** Password sign-ins that failed, per account (the normalised email, known or not)... */
      sign_in_failures_per_account: RateLimit,
      /** ...and per client address, across emails. */
      sign_in_failures_per_address: RateLimit,
      /** One-time codes sent for the verified-email assertion, per email (`auth/assertions/email-codes.ts`)... */
      email_codes_per_email: RateLimit,
      /** ...and per client address, across emails (code requests and code checks both count). */
      email_codes_per_address: RateLimit,
    }),
    outbound: z.strictObject({
      /** Lets outbound fetches reach loopback and private networks. For tests and self-hosting only. */
      allow_private_networks: z.boolean(),
      timeout_ms: positiveInt,
      user_agent: z.string().min(1),
      /**
       * DNS servers (`ip` or `ip:port`) for every outbound lookup: the safe fetchers, TXT
       * verification, live merchant resolution, mail domains (`outbound/dns-lookup.ts`). Empty: the
       * system resolver. The per-feature lists below override it for their feature.
       */
      dns_servers: z.array(DnsServer),
    }),
    scanner: z.strictObject({
      /**
       * Lets the scanner and domain verification reach loopback and private networks, and accepts
       * `localhost:PORT` / `127.0.0.1:PORT` as domains. For tests and self-hosting only.
       */
      allow_private_networks: z.boolean(),
      /** Sent on every scanner request; its product token (before `/`) is what robots.txt rules name. */
      user_agent: z
        .string()
        .regex(/^[A-Za-z0-9_-]+\/\S+/, 'must start with a product token and version (name/1.0)'),
      /** HTML pages read by a full scan, and by the quick first check of GET /signal. */
      max_pages: positiveInt,
      quick_max_pages: positiveInt,
      /** Largest body read from any response; the rest is not downloaded. */
      max_bytes: positiveInt,
      request_timeout_ms: positiveInt,
      /** Whole-scan time budget; the crawl stops and scores what it has. */
      scan_timeout_ms: positiveInt,
      /** Requests in flight to the scanned host, and the pause after each before the next. */
      concurrency: positiveInt,
      delay_ms: z.number().int().min(0),
      max_redirects: z.number().int().min(0).max(20),
      max_sitemaps: positiveInt,
      /** Scans one process runs at once, how often idle workers look for queued scans, the claim lease. */
      workers: positiveInt,
      poll_interval_ms: positiveInt,
      lease_ms: positiveInt,
      /** Attempts before a scan whose worker died is marked failed. */
      max_attempts: positiveInt,
    }),
    sites: z.strictObject({
      /** DNS servers (`ip` or `ip:port`) for TXT verification; empty: the system resolver. */
      verification_dns_servers: z.array(DnsServer),
    }),
    pages: z.strictObject({
      /**
       * The `site_id` (POST /pixel-install) of this deployment's own site: its pages then carry the
       * service's own traffic pixel. null: no pixel on the pages.
       */
      pixel_site_id: z.uuid().nullable(),
    }),
    charges: z.strictObject({
      /**
       * Live resolution of merchants the registry does not name confidently (README "Live
       * resolution"): candidate domains are checked through the SSRF-safe fetcher and the verdicts
       * are stored in `resolved_merchants`.
       */
      live_resolution: z.strictObject({
        /** `auto`: on in production mode, off otherwise (a developer's machine does not crawl unasked). */
        enabled: z.union([z.boolean(), z.literal('auto')]),
        /** How long a lookup waits for a resolution before answering `pending` (it goes on in the background). */
        time_budget_ms: z.number().int().min(0).max(30_000),
        /** Whole-resolution deadline, background included: every fetch of it is cut off then. */
        deadline_ms: positiveInt.max(60_000),
        /** Candidate domains checked per merchant (the line's own domain and search results first). */
        max_candidates: positiveInt.max(20),
        /** Resolutions one process runs at once; beyond that and a short queue, lookups answer `pending`. */
        max_concurrent: positiveInt.max(64),
        /** Where a candidate's home page is fetched: `{scheme}://{domain}[:{port}]/`. */
        home_page_scheme: z.enum(['https', 'http']),
        /** null: the scheme's port. Tests and self-hosted setups point it at a local peer. */
        home_page_port: z.number().int().min(1).max(65535).nullable(),
        /** DNS servers (`ip` or `ip:port`) that resolve candidate domains; empty: the system resolver. */
        dns_servers: z.array(DnsServer),
        /** How long a confirmed resolution is served before it is checked again. */
        resolved_ttl_days: positiveInt,
        /** How long "no site names this merchant" is served before it is tried again. */
        not_found_ttl_days: positiveInt,
      }),
    }),
    /** Outside providers the research features call (one provider interface, `servers/outbound/search.ts`). */
    research: z.strictObject({
      search: z.strictObject({
        /** A SearXNG instance with the `json` format enabled (`search.formats` in its settings.yml). */
        searxng_url: absoluteUrl.nullable(),
        /**
         * The Brave Search API (a commercial web search with its own index), used when the
         * environment variable named here holds a subscription token; SearXNG's fallback when both are set.
         */
        brave: z.strictObject({
          url: absoluteUrl,
          api_key_env: EnvName.nullable(),
        }),
        timeout_ms: positiveInt,
      }),
      /** Language models: OpenAI-compatible chat-completions endpoints (`servers/outbound/llm.ts`). */
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
          ),
        /** Per request to a provider; a provider past it fails the paid call, uncharged. */
        timeout_ms: positiveInt.max(120_000),
      }),
      people_search: z.strictObject({
        /** Results asked of the search provider per formulation of the query. */
        results_per_query: positiveInt.max(20),
        /** Result pages fetched and read (robots.txt permitting). */
        max_pages: positiveInt.max(30),
        /** Largest body read of a result page. */
        max_page_bytes: positiveInt,
      }),
    }),
    returns: z.strictObject({
      delivery: outboxSettings,
      /**
       * Channel discovery from brands' own sites (`returns/channels/`, README "How a brand's
       * channels are found"), through the scanner's fetcher and robots.txt rules.
       */
      discovery: z.strictObject({
        /** `auto`: on in production mode, off otherwise (a developer's machine does not crawl unasked). */
        enabled: z.union([z.boolean(), z.literal('auto')]),
        /** How long POST /return and GET /brands wait for a discovery; past it, it goes on in the background. */
        request_budget_ms: z.number().int().min(0).max(30_000),
        /** One discovery's whole time, background included: every fetch of it is cut off then. */
        deadline_ms: positiveInt.max(120_000),
        /** HTML pages one discovery reads, the home page included. */
        max_pages: positiveInt.max(50),
        /** Largest body read of any page, document or MCP answer; the rest is not downloaded. */
        max_bytes: positiveInt,
        request_timeout_ms: positiveInt,
        /** How long a complete discovery is served; a partial or unreachable one at most an hour. */
        ttl_hours: positiveInt,
        /** How long delivery skips a channel that failed (`markChannelFailed`). */
        failed_channel_hold_hours: positiveInt,
        /** Discoveries one process runs at once; past that and a short queue, reads answer what is stored. */
        max_concurrent: positiveInt.max(64),
        /** Where a brand's home page is fetched: `{scheme}://{domain}[:{port}]/`. */
        home_page_scheme: z.enum(['https', 'http']),
        /** null: the scheme's port. Tests and self-hosted setups point it at a local peer. */
        home_page_port: z.number().int().min(1).max(65535).nullable(),
      }),
      /**
       * Brands' replies by email (`returns/inbound/`, README "Brand replies by email"): an SMTP
       * listener for the per-request addresses `returns+<request>.<token>@{domain}`. Off while
       * `port` or `domain` is null; on, email deliveries carry such an address as `Reply-To` and
       * envelope sender.
       */
      inbound_mail: InboundMail,
      /**
       * Tasks brands' A2A agents open for delivered requests (`returns/brand-tasks.ts`), followed
       * by polling `tasks/get`: every `poll_ms` at first, then every tenth of the task's age, at most
       * `max_poll_ms`, for `follow_days`.
       */
      brand_tasks: z.strictObject({
        poll_ms: positiveInt,
        max_poll_ms: positiveInt,
        follow_days: positiveInt.max(365),
      }),
    }),
    traffic: z.strictObject({
      /** Events held in memory (queued plus being written) before ingestion answers 503. */
      queue_max_events: positiveInt,
      /** Largest batch written in one transaction. */
      flush_max_events: positiveInt,
      /**
       * Longest a write of traffic events may take before its callers (beacon hits, server-side
       * batches) are answered 503: a database that does not answer never holds a page's pixel.
       */
      write_timeout_ms: positiveInt,
      /** Raw events older than this are deleted; rollups keep the counts. */
      raw_retention_days: positiveInt,
      /** Rollup rows (daily counts per site, page, agent) older than this are deleted. */
      rollup_retention_days: positiveInt,
      /**
       * Network-wide figures (GET /ai-search-data) are published only for periods in which at least
       * this many sites sent traffic: with fewer, a "network" total would be one site's traffic.
       */
      network_min_sites: positiveInt,
    }),
    auth: z.strictObject({
      /** Sessions of agents without an account (`POST {auth_url}/signup`). */
      anonymous: z.strictObject({
        /** Scans one anonymous session may request (SPEC Limits leaves the number to us). */
        scan_limit: z.number().int().min(0),
        /** How long a session's bearer token and claim code are valid. */
        session_ttl_s: positiveInt,
      }),
      /**
       * Identity providers whose Identity Assertion JWT Authorization Grants (ID-JAG) the token
       * endpoint accepts (`auth/assertions/`). `issuer` is compared byte for byte with the
       * assertion's `iss`; `jwks_uri` is fetched through the SSRF-safe fetcher and cached.
       * `trusted_for_email`: a subject with no link yet is linked to the account with the
       * assertion's `email` (only when `email_verified` is not false).
       */
      trusted_issuers: z.array(
        z.strictObject({
          issuer: z.string().regex(/^https?:\/\//, 'must be an http(s) URL'),
          jwks_uri: z.string().regex(/^https?:\/\//, 'must be an http(s) URL'),
          trusted_for_email: z.boolean().default(false),
        }),
      ),
      /** Transmitters whose Security Event Tokens are accepted (`TrustedTransmitter`); issuers unique. */
      trusted_transmitters: z
        .array(TrustedTransmitter)
        .refine(
          (list) => new Set(list.map((t) => t.issuer)).size === list.length,
          'each issuer may be listed once',
        ),
      /**
       * Client ID metadata documents (`auth/client-id-metadata.ts`): an https URL as `client_id`,
       * its metadata fetched from there through the SSRF-safe fetcher (`outbound.*` address policy).
       * `max_bytes` and `timeout_ms` bound one fetch; a fetched document is kept in each process for
       * its `Cache-Control: max-age` (or `Expires`) held between `cache_min_s` and `cache_max_s`.
       */
      client_id_metadata_documents: z
        .strictObject({
          enabled: z.boolean(),
          max_bytes: positiveInt,
          timeout_ms: positiveInt,
          cache_min_s: positiveInt,
          cache_max_s: positiveInt,
        })
        .refine((c) => c.cache_min_s <= c.cache_max_s, {
          message: 'cache_min_s must not be above cache_max_s',
          path: ['cache_min_s'],
        }),
      /** Our own transmitter (`auth/events/`): receivers' streams and the SET delivery outbox. */
      security_events: z.strictObject({
        /** Streams one account may hold. */
        max_streams_per_account: positiveInt,
        /** Pushes to receivers: poll, batch, lease and retries with exponential backoff, as for returns. */
        delivery: outboxSettings,
      }),
    }),
    /**
     * Keys that seal the secrets stored in the database (`servers/secrets.ts`). Environment only
     * (`SECRETS_KEY`, `SECRETS_KEY_PREVIOUS`): a key in a file would sit next to what it protects.
     */
    secrets: z
      .strictObject({
        key: SecretsKeyText.nullable().default(null),
        previous_keys: z.array(SecretsKeyText).default([]),
      })
      .default({ key: null, previous_keys: [] }),
    /** The paid catalog over x402 (`servers/payments/`, README "Paid catalog (x402)"). */
    payments: z.strictObject({
      /** Receives every payment. Missing: paid SKUs answer 503 sku_unavailable (and a warning names it). */
      pay_to: EvmAddress.nullable(),
      /** `base` (eip155:8453) or `base-sepolia` (eip155:84532), each with its USDC. */
      network: z.enum(['base', 'base-sepolia']),
      /** A remote x402 facilitator (`/verify`, `/settle`, `/supported`); null: the embedded one. */
      facilitator_url: absoluteUrl.nullable(),
      /** JSON-RPC of the chain: the embedded facilitator settles through it and reconciliation reads it. */
      rpc_url: absoluteUrl.nullable(),
      /**
       * Submits `transferWithAuthorization` for the embedded facilitator. Environment only
       * (`PAYMENTS_SETTLER_PRIVATE_KEY`): a key in a file would sit next to the code.
       */
      settler_private_key: SettlerKeyText.nullable().default(null),
      /** How long a payment authorization is valid after the 402 (x402 `maxTimeoutSeconds`). */
      max_timeout_seconds: z.number().int().min(30).max(86_400),
      /**
       * How long a paid request waits for its work (the `scan` SKU's scan) or its settlement before
       * answering with what is known (202 with a status URL for a scan).
       */
      sync_wait_seconds: z.number().int().min(0).max(120),
      /** Share of each settled payment credited to the referral handle the call named (`ref`). */
      referral_share: z.number().min(0).max(1),
      /** How often the settler looks for authorized payments to settle and unknown outcomes to reconcile. */
      settler_poll_interval_ms: positiveInt,
      /**
       * How long a payment reservation holds without renewal: a running paid call renews it three
       * times per lease, so one whose process died is recovered (released, or reconciled when its
       * result was stored) this long after its last renewal - by the settler, or at once by the
       * payer's retry of the same payment.
       */
      reservation_lease_seconds: z.number().int().min(1).max(3600),
    }),
    /** The placement SKUs (README "Marketplace"). */
    marketplace: z.strictObject({
      /** Spotlight placements shown at once; a purchase when all are taken is 409 with the next opening. */
      spotlight_slots: z.number().int().min(1).max(1000),
      /** What a boost campaign pays per thousand impressions reported by an ad network, in USDC. */
      boost_cpm_usdc: z.number().positive().max(1000),
      /**
       * Ad networks that receive every boost campaign as a signed webhook (Standard Webhooks with
       * `secret`) and report impressions back, signed with the same secret.
       */
      ad_networks: z
        .array(
          z.strictObject({
            name: z.string().regex(/^[a-z0-9][a-z0-9-]{0,39}$/, 'must be a lower-case slug'),
            webhook_url: absoluteUrl,
            secret: z.string().regex(/^whsec_[A-Za-z0-9+/=]{16,}$/, 'must be whsec_ followed by base64'),
          }),
        )
        .refine((list) => new Set(list.map((n) => n.name)).size === list.length, 'names must be unique'),
      /**
       * The robot operator of the embodiment SKU. Without an operator account and at least one
       * channel the SKU is unavailable (503 sku_unavailable, no 402).
       */
      embodiment: z
        .strictObject({
          /** The account whose service keys move bookings (quote, schedule, ...). */
          operator_account_email: z.email().nullable(),
          /** New bookings are POSTed here, signed (Standard Webhooks) with `webhook_secret`. */
          webhook_url: absoluteUrl.nullable(),
          /** `whsec_` + base64; environment only would be better, so it is read from EMBODIMENT_WEBHOOK_SECRET too. */
          webhook_secret: z
            .string()
            .regex(/^whsec_[A-Za-z0-9+/=]{16,}$/, 'must be whsec_ followed by base64')
            .nullable(),
          /** New bookings are emailed here (needs smtp.url). */
          email: z.email().nullable(),
        })
        .refine((e) => e.webhook_url === null || e.webhook_secret !== null, {
          message: 'webhook_url needs webhook_secret (EMBODIMENT_WEBHOOK_SECRET)',
          path: ['webhook_secret'],
        }),
      /** The marketplace outbox (`catalog/marketplace-outbox.ts`): bookings to the operator, campaigns to ad networks. */
      delivery: outboxSettings,
    }),
    /** Settings that production mode refuses unless overridden here, deliberately. */
    unsafe: z.strictObject({
      /** Lets `*.allow_private_networks` stay on in production (a private deployment that scans its own network). */
      allow_private_networks_in_production: z.boolean(),
    }),
    smtp: z.strictObject({
      url: z
        .string()
        .regex(/^smtps?:\/\//, 'must be an smtp:// or smtps:// URL')
        .nullable(),
      from: z.string().min(3),
    }),
  })
  .strict();
export type Config = z.infer<typeof Config>;

type EnvBinding = { key: string; parse?: (raw: string) => unknown };

/** Environment variable -> config key (dotted path). The README's configuration table mirrors this. */
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
  OUTBOUND_ALLOW_PRIVATE: { key: 'outbound.allow_private_networks', parse: flag },
  OUTBOUND_DNS_SERVERS: { key: 'outbound.dns_servers', parse: list },
  SCAN_ALLOW_PRIVATE: { key: 'scanner.allow_private_networks', parse: flag },
  SCAN_USER_AGENT: { key: 'scanner.user_agent' },
  SCAN_MAX_PAGES: { key: 'scanner.max_pages', parse: numberOrRaw },
  SCAN_CONCURRENCY: { key: 'scanner.concurrency', parse: numberOrRaw },
  SCAN_DELAY_MS: { key: 'scanner.delay_ms', parse: numberOrRaw },
  SCAN_TIMEOUT_MS: { key: 'scanner.scan_timeout_ms', parse: numberOrRaw },
  SCAN_WORKERS: { key: 'scanner.workers', parse: numberOrRaw },
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
