/**
 * The data model, one place to read it (STYLE.md 11). Migrations in `db/migrations/` create these
 * tables on SQLite and PostgreSQL alike; this file is their typed view for kysely.
 *
 * Value conventions on both dialects (see `database.ts`):
 * - timestamps: ISO 8601 strings in UTC (`timestamptz` on PostgreSQL, `text` on SQLite);
 * - JSON documents: text holding JSON (`jsonb` on PostgreSQL);
 * - ids: UUID v4 strings (`uuid` on PostgreSQL);
 * - money: integer minor units (cents), never floats.
 *
 * Tables owned by libraries, not listed here: `kysely_migration`, `kysely_migration_lock`
 * (migrations applied), `rate_limits` (rate-limiter-flexible's fixed windows per hashed client).
 */
import type { Generated, Insertable, Selectable } from 'kysely';

/** Secrets the service generates for itself on first start (HMAC keys, ...). Never leaves the database. */
export interface ServiceSecretsTable {
  name: string;
  value: string;
  created_at: string;
}

/**
 * When each content of the paid catalog's snapshot became current (`adapters/catalog.ts`): its
 * `updated`. `digest` is the SHA-256 (hex) of the snapshot without `updated`, canonical JSON
 * (RFC 8785); `updated_at` moves only when a content that had been replaced becomes current again.
 */
export interface CatalogSnapshotsTable {
  digest: string;
  updated_at: string;
}

/**
 * How a brand receives return requests. A brand with a webhook gets signed POSTs (Standard Webhooks);
 * otherwise its email, or the support email from the brand registry, is used when SMTP is configured.
 */
export interface BrandChannelsTable {
  brand_domain: string;
  webhook_url: string | null;
  /** Shared secret for the webhook signature (`whsec_` + base64). */
  webhook_secret: string | null;
  email: string | null;
  created_at: string;
  updated_at: string;
}

/**
 * A return or refund request started by a personal agent. Holds the person's name and contact:
 * these leave the service only towards the brand, never through the status endpoint or logs.
 */
export interface ReturnRequestsTable {
  id: string;
  brand_domain: string;
  /** Brand name from the registry at the time of the request (null for unknown brands). */
  brand_name: string | null;
  requester_name: string;
  contact: string;
  contact_kind: 'email' | 'phone';
  order_number: string | null;
  card_last4: string | null;
  /** Purchase date, ISO 8601 calendar date. */
  purchase_date: string | null;
  amount_cents: number | null;
  currency: string | null;
  message: string | null;
  agent_id: string | null;
  /** How the person's agent wants to hear back (see `returns/schemas.ts` ReplyProtocol). */
  protocol: string;
  callback_url: string | null;
  /** JSON: the approval proof as received plus what verifying it established. */
  approval: string | null;
  status: string;
  created_at: string;
  updated_at: string;
  /**
   * SHA-256 (hex) of the request's `request_token`, the requester's capability to cancel and add
   * messages; the token itself is shown once. Null for requests made before tokens existed.
   */
  request_token_hash: string | null;
  /**
   * Where the requester's agent is told of each status change and brand message, decided when the
   * request is made: `webhook` or `a2a` (to `callback_url`), `email` (to `contact`, when SMTP was
   * configured), or null - nothing is pushed (protocols `mcp`, `poll`, `phone`).
   */
  notify_channel: 'webhook' | 'a2a' | 'email' | null;
  /** Signing secret of the `webhook` notifications (`whsec_` + base64), sealed (`callbackSecretPlace`). */
  callback_secret: string | null;
}

/** Every status change of a return request, in order: the request's history. */
export interface ReturnEventsTable {
  id: string;
  request_id: string;
  seq: number;
  from_status: string | null;
  to_status: string;
  actor: 'service' | 'brand' | 'requester';
  note: string | null;
  at: string;
}

/**
 * The request's thread: the messages between the requester, the service and the brand, oldest
 * first. `direction`: `to_brand` (what the service sent the brand: the request, a cancellation),
 * `from_brand` (a reply), `from_requester` (a follow-up, sent on to the brand), `from_service`.
 * `sender` names the brand's address or agent, `requester` or `service` - never the person's
 * contact. `excerpt` is kept as received (bounded); the status endpoint redacts it (`thread.ts`).
 * `external_id` (a Message-ID, an A2A task or message id, our delivery id) is unique per request,
 * so a message that arrives twice is recorded once.
 */
export interface ReturnMessagesTable {
  id: string;
  request_id: string;
  direction: 'to_brand' | 'from_brand' | 'from_requester' | 'from_service';
  /** The channel between the service and the brand it went by (`webhook`, `email`, `a2a`); null until then. */
  channel: string | null;
  sender: string | null;
  /** 1 when the sender was authenticated (a signed webhook, DMARC-aligned mail, the request token). */
  sender_verified: number;
  subject: string | null;
  excerpt: string | null;
  /** JSON array of attachment file names. */
  attachments: string;
  external_id: string | null;
  at: string;
}

/**
 * The delivery outbox: one row per attempt to hand a return request to the brand over one channel.
 * Written in the same transaction as the request; a worker claims due rows with a lease, so a
 * crashed process's delivery is retried by another after the lease expires. `id` is the delivery id
 * sent with each attempt (`webhook-id`, email Message-ID) so receivers can drop duplicates.
 * `kind` says what it carries: the `request`, a requester's follow-up `message` (`message_id`),
 * or the requester's `cancel`; follow-ups and cancellations go by the request's channel.
 */
export interface DeliveriesTable extends OutboxColumns {
  id: string;
  request_id: string;
  kind: Generated<'request' | 'message' | 'cancel'>;
  message_id: string | null;
  /** `webhook`, `email`, `a2a` (the brand's A2A agent), `mcp` (its registered MCP server). */
  channel: 'webhook' | 'email' | 'a2a' | 'mcp';
  /** Webhook URL, email address, agent card URL (or base URL) or MCP URL when the delivery was queued. */
  target: string;
}

/**
 * A task a brand's A2A agent opened for a return request (migration 2026-11-28T0400Z_brand_tasks),
 * followed until it finishes: a leased queue like `deliveries` whose attempts are polls of the
 * task (`tasks/get`). `pending` while it is followed, `delivered` once the task finished (its
 * outcome is in the request's status and thread), `failed` when polling gave up (`follow_until`
 * passed, or the agent stopped answering). `task_state` is the A2A state last seen (`working`,
 * `input-required`...): a message sent to a task that has not finished names it.
 */
export interface BrandTasksTable extends OutboxColumns {
  id: string;
  request_id: string;
  /** The delivery whose message opened the task. */
  delivery_id: string;
  /** The agent as the delivery reached it (its card URL, or base URL). */
  agent_url: string;
  task_id: string;
  context_id: string;
  task_state: string;
  follow_until: string;
}

/** What a row of a leased outbox (`db/leases.ts`) holds besides what it carries. */
export interface OutboxColumns {
  state: 'pending' | 'delivered' | 'failed';
  attempts: number;
  next_attempt_at: string;
  lease_owner: string | null;
  lease_expires_at: string | null;
  /** Short technical reason of the last failure (HTTP status, network error code); no personal data. */
  last_error: string | null;
  created_at: string;
  delivered_at: string | null;
}

/**
 * The outbox of notifications to the requester's agent (`notify_channel` of the request), one row
 * per status change (`return.status_changed`) or brand message (`return.message`), written in the
 * transaction of the change it reports. `id` is the event id on every attempt (`webhook-id`, the
 * A2A messageId, the Message-ID); `data` the event's data as of the change, so each attempt sends
 * the same bytes. Leased, retried and backed off like `deliveries` (`returns.delivery.*`).
 */
export interface ReturnNotificationsTable extends OutboxColumns {
  id: string;
  request_id: string;
  type: 'return.status_changed' | 'return.message';
  channel: 'webhook' | 'a2a' | 'email';
  /** JSON: the event's `data` without `status_url` (added when sent, from the configuration). */
  data: string;
}

/** `Idempotency-Key` records: the same key and body replays the stored response; another body is refused. */
export interface IdempotencyKeysTable {
  operation: string;
  key: string;
  /** SHA-256 of the canonical (RFC 8785) input. */
  fingerprint: string;
  /** JSON; sealed (`sealJson`, `idempotencyResponsePlace`) when it holds secrets shown once. */
  response: string;
  created_at: string;
}

// --- Site owners (migration 2026-11-21T1400Z_accounts) ---------------------------------------

/** A site owner. The email is stored lowercased; the password (optional) is for the OAuth sign-in. */
export interface AccountsTable {
  id: string;
  email: string;
  /** `$scrypt$ln=17,r=8,p=1$<salt>$<hash>` (base64url), or null for an account made from an email only. */
  password_hash: string | null;
  created_at: string;
}

/**
 * Service keys (`x-service-key`). Only the SHA-256 of a key is stored: keys carry 256 random bits, so
 * a fast hash is enough and lets a key be found by an index lookup. `prefix` is the first characters
 * of the key, shown in listings so an owner can tell keys apart and recognise a leaked one.
 */
export interface ServiceKeysTable {
  id: string;
  account_id: string;
  key_hash: string;
  prefix: string;
  label: string | null;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

/**
 * A site (host name, or `localhost:PORT` when private networks are allowed) registered by an account.
 * Several accounts may register the same domain; each proves ownership on its own with its token.
 */
export interface SitesTable {
  id: string;
  account_id: string;
  domain: string;
  verification_token: string;
  verified_at: string | null;
  /** `http` (well-known file) or `dns` (TXT record). */
  verification_method: string | null;
  /** 1 when the owner opted in to per-site figures in network-wide data, else 0. */
  share_network: number;
  created_at: string;
}

// ---------------------------------------------------------------------------------------------
// Scanner and Signal Strength (migration 2026-11-21T1510Z_scans; scoring rules in docs/reference/scoring.md)
// ---------------------------------------------------------------------------------------------

/**
 * One scan of a domain, and the durable queue of scans: queued rows are claimed by a worker under a
 * lease (`FOR UPDATE SKIP LOCKED` on PostgreSQL), progress is written while it runs, and the result
 * (score, tier, components, the crawl's facts) is kept with it. `account_id` is the account that
 * asked (null for anonymous requests); private scans (`is_public` 0) are shown only to it, to the
 * anonymous session that asked, or to the holder of its read token. Every scan of a domain is kept as
 * its history, up to `scanner.history_per_domain` finished ones: the scan worker prunes older ones
 * (never the one `domain_scores` shows, nor one a payment bought).
 */
export interface ScansTable {
  id: string;
  domain: string;
  account_id: string | null;
  /** 1: public (leaderboard, GET /scan-score); 0: only the requesting account sees it. */
  is_public: number;
  /** `full` (POST /scans) or `quick` (first GET /signal of a never-scanned domain). */
  depth: 'full' | 'quick';
  status: 'queued' | 'running' | 'done' | 'failed';
  /** Crawler phase while running (`robots`, `documents`, `pages`, `done`). */
  phase: string | null;
  progress_done: number;
  progress_total: number;
  progress_message: string | null;
  attempts: number;
  lease_owner: string | null;
  lease_expires_at: string | null;
  requested_at: string;
  started_at: string | null;
  finished_at: string | null;
  /** Why a failed scan failed, in words fit for the caller (unreachable, blocked, timed out). */
  error: string | null;
  score: number | null;
  tier: string | null;
  /** Set when components without data were left out of the score (docs/reference/scoring.md no-data rule). */
  note: string | null;
  /** JSON: ComponentResult[] (each with its checks). */
  components: string | null;
  /** JSON: MCP tool names. */
  recommended_next_tools: string | null;
  /** JSON: SiteFacts, what the crawler saw. */
  facts: string | null;
  /**
   * The anonymous session that requested the scan (migration 2026-11-21T1620Z_anonymous_sessions),
   * kept after a claim moves the scan to an account (`account_id`).
   */
  anonymous_session_id: string | null;
  /**
   * SHA-256 hex digest of the read token of a private scan bought through the x402 `scan` SKU
   * (migration 2026-11-23T1200Z_scan_read_tokens): whoever holds the token reads the scan, with or
   * without an account. Null for every other scan.
   */
  read_token_hash: string | null;
  /**
   * The scoring version that computed `score` (migration 2026-11-26T1000Z_scan_evidence_and_versions;
   * null: version 1). Scans of an older version are re-scored from `facts` and `scoring_inputs`.
   */
  scoring_version: number | null;
  /** JSON: `{traffic, previous}`, what the score was computed from besides the facts. */
  scoring_inputs: string | null;
  /** The profile the requester chose (`content`, `shop`, `api`); null: the detected one. */
  profile: string | null;
}

/**
 * The scan each payment of the `scan` SKU bought, queued or joined (migration
 * 2026-11-27T0100Z_paid_scans): the payment sent again after its process died answers that scan.
 */
export interface PaidScansTable {
  payment_id: string;
  scan_id: string;
  created_at: string;
}

/**
 * The nonce of every x402 sign-in-with-x message that read a paid resource (migration
 * 2026-11-29T0100Z_sign_in_with_x): spent once, across processes - the insert is the check. Kept
 * until `expires_at`, past which the message (issued at most `MAX_MESSAGE_AGE` before) is refused
 * for its age anyway; then deleted.
 */
export interface SiwxNoncesTable {
  nonce: string;
  /** The wallet that signed in with it, lower-case. */
  address: string;
  used_at: string;
  expires_at: string;
}

/**
 * A batch of scans an account asked for in one request (`POST /scans/batch`, migration
 * 2026-11-30T0400Z_scan_history_batches): written with its items and their queued scans in one
 * transaction, so the 202 names a batch that exists. Progress is read off the items' scans.
 */
export interface ScanBatchesTable {
  id: string;
  account_id: string;
  /** 1: the batch's scans are public (leaderboard); 0: private to the account. */
  is_public: number;
  /** The profile every scan of the batch is scored as; null: each site's detected one. */
  profile: string | null;
  created_at: string;
}

/**
 * One domain of a batch, in the order given, and the scan it queued or joined (one already queued
 * or running for the domain). `scan_id` is null once that scan was pruned from the domain's
 * history (`scanner.history_per_domain`).
 */
export interface ScanBatchItemsTable {
  batch_id: string;
  seq: number;
  domain: string;
  scan_id: string | null;
}

/** The findings of a scan, in the order reported (critical first). */
export interface ScanFindingsTable {
  scan_id: string;
  seq: number;
  /** The check id (`llms_txt`, `ai_search_access`, ...) or `no_pixel`. */
  finding_id: string;
  component: string;
  severity: 'critical' | 'warning' | 'info';
  seen: string;
  fix: string;
  evidence_url: string | null;
  /** The check's title and goal, the specification link, a coding agent's prompt (2026-11-26T1000Z). */
  title: string | null;
  goal: string | null;
  spec_url: string | null;
  agent_prompt: string | null;
  /** JSON: RequestEvidence[], the requests behind the finding. */
  evidence: string | null;
}

/**
 * The latest public score of each domain: what GET /signal, GET /leaderboard and the readiness
 * index read. Updated with each finished public scan (a quick check never replaces a full scan).
 * `has_*` are 0/1 adoption flags for the readiness index.
 */
export interface DomainScoresTable {
  domain: string;
  scan_id: string;
  depth: 'full' | 'quick';
  score: number;
  tier: string;
  scanned_at: string;
  has_llms_txt: number;
  has_robots_ai_rules: number;
  has_api_catalog: number;
  has_mcp: number;
  has_markdown: number;
  /** The scoring version of `score` (null: version 1); the re-scoring job brings every row up to date. */
  scoring_version: number | null;
  /**
   * The full scan the row showed before `scan_id` replaced it, and its score (migration
   * 2026-11-30T0400Z_scan_history_batches): the leaderboard's movement since the last scan. Null
   * for a domain's first full scan; kept out of the history's pruning.
   */
  previous_scan_id: string | null;
  previous_score: number | null;
}

/** Leaderboard ranks at the start of each period (UTC day `YYYY-MM-DD`): movement is measured against them. */
export interface LeaderboardSnapshotsTable {
  period: string;
  domain: string;
  rank: number;
  score: number;
  tier: string;
}

/** The readiness index at the start of each period: its history. */
export interface ReadinessSnapshotsTable {
  period: string;
  taken_at: string;
  domains: number;
  /** JSON: tier id -> number of domains. */
  tiers: string;
  /** JSON: signal -> number of domains that have it (`llms_txt`, `robots_ai_rules`, `api_catalog`, `mcp`, `markdown`). */
  adoption: string;
}

// --- Directory (migration 2026-11-21T1520Z_directory) -----------------------------------------

/**
 * A listing in the public directory: one per account and domain. It is public (`listed`) exactly
 * while the account has verified the domain - decided at read time by joining `sites`, so a
 * listing submitted before verification appears the moment the domain is verified.
 */
export interface ListingsTable {
  id: string;
  account_id: string;
  domain: string;
  name: string;
  /** At most 500 characters. */
  description: string;
  /** One of `directory/schemas.ts` ListingCategory. */
  category: string;
  url: string;
  /** JSON array of lowercase tags. */
  tags: string;
  /** JSON: the published contact `{email?, url?, phone?}`. */
  contact: string;
  /** Lowercased name, description, domain and tags: what `q` is matched against on both dialects. */
  search_text: string;
  created_at: string;
  updated_at: string;
}

/**
 * The agent a brand registered for its verified (registrable) domain, one per domain, owned by the
 * account that registered it. Its webhook secret is not here: it lives only in `brand_channels`,
 * which signs deliveries, and is shown once, when generated.
 */
export interface BrandAgentsTable {
  id: string;
  account_id: string;
  domain: string;
  name: string;
  endpoint: string;
  /** JSON array: subset of webhook, email, mcp, a2a. */
  protocols: string;
  /** JSON `{email?, url?, phone?}`: published in GET /agents. */
  support_contact: string;
  /** JSON `{email?, url?, phone?}`: where return requests go; never published. */
  return_contact: string;
  /** JSON `{window_days?, conditions?, url?}` or null. */
  return_policy: string | null;
  created_at: string;
  updated_at: string;
}

// --- Card charge lookup for the long tail (migration 2026-11-24T1000Z_merchant_resolution) -----

/**
 * What live resolution concluded about a merchant of a statement line (`charges/resolution.ts`):
 * the website whose home page names it (`resolved`), or that no candidate did (`not_found`). Keyed
 * by the merchant's canonical name and city (`''` when the line has none); served until
 * `expires_at` (`charges.live_resolution.*_ttl_days`), then checked again. Public facts only.
 */
export interface ResolvedMerchantsTable {
  /** Canonical tokens of the merchant's name, joined without spaces (`HALCYONROASTERS`). */
  name_key: string;
  city_key: string;
  status: 'resolved' | 'not_found';
  /** Registrable domain of the merchant's site (resolved only). */
  domain: string | null;
  /** The name the site gives itself. */
  name: string | null;
  category: string | null;
  /** At most 0.84: a resolution is a guess and never `high`. */
  confidence: number | null;
  /**
   * JSON: `{url, signals, city, source, candidates: [{domain, source, outcome}]}` - the home page
   * read, which of its name claims agreed (title, site_name, organization), whether the city
   * agreed, where the domain came from, and what every candidate checked gave.
   */
  evidence: string;
  checked_at: string;
  expires_at: string;
}

// --- Brand channels found on brands' sites (migration 2026-11-28T0100Z_brand_channels) ------

/**
 * Each brand domain's channel discovery (`returns/channels/`): what the last finished run concluded
 * and read, when it is due again, and the lease of the process running it now - one process
 * discovers a domain at a time, across processes; a lease whose process died simply runs out.
 */
export interface BrandDiscoveriesTable {
  /** Registrable domain of the brand (`netflix.com`). */
  domain: string;
  /**
   * The last finished run: `complete` (every page planned was read), `partial` (the time budget or
   * a page failed before the end), `unreachable` (not even the home page could be read). Null
   * until a run finishes.
   */
  outcome: 'complete' | 'partial' | 'unreachable' | null;
  /** JSON `DiscoveryReport`: what was tried (URL, outcome), what was refused and why, the duration. */
  report: string | null;
  started_at: string | null;
  finished_at: string | null;
  /** When a new run is due (the TTL, shortened after a partial run or a failed delivery); null: now. */
  expires_at: string | null;
  /** Why a run was asked before the TTL (`refreshSoon`: a delivery failure). */
  refresh_reason: string | null;
  lease_owner: string | null;
  lease_expires_at: string | null;
}

/**
 * A channel a discovery found on the brand's own site, with its evidence: kind (`a2a`, `mcp`,
 * `email`, `form`, `phone`, `chat`, `return_policy`), address (URL, email address or E.164
 * number), detail (JSON: skill id, tool name, contactType, vendor...), the page it was read on and
 * how. A run replaces the domain's rows; `found_at` survives runs that find the channel again.
 */
export interface DiscoveredChannelsTable {
  id: string;
  domain: string;
  kind: string;
  address: string;
  detail: string;
  source_url: string;
  /** How it was found (`a2a_agent_card`, `json_ld_contact_point`, `mailto_link`, ...). */
  found_by: string;
  found_at: string;
  /** The last run that found it. */
  seen_at: string;
}

/**
 * A channel a delivery could not use (`markChannelFailed`): skipped for delivery until
 * `failed_until`, whoever lists it (registration, registry or site). Kept apart from the channels
 * so a refresh that finds the channel again does not forget the failure.
 */
export interface ChannelFailuresTable {
  domain: string;
  kind: string;
  address: string;
  /** Short technical reason (`SMTP 550`, `A2A task failed`); no personal data. */
  reason: string;
  failed_at: string;
  failed_until: string;
}

/**
 * Statement descriptors a brand declared for its verified domain (`charges/declarations.ts`):
 * matched at `very_high` and shown as `brand_declared`. A descriptor belongs to one domain
 * (`descriptor_key` is unique), a domain's set to the account that declared it first.
 */
export interface DeclaredDescriptorsTable {
  id: string;
  account_id: string;
  domain: string;
  /** As declared, upper case and whitespace collapsed (`SQ *HLCYN RSTRS`). */
  descriptor: string;
  /** Canonical merchant tokens of it, joined without spaces (`HLCYNRSTRS`). */
  descriptor_key: string;
  /** The processor named by its prefix (`square`), when it has one: then only lines through it match. */
  processor: string | null;
  created_at: string;
}

// --- Agent-versus-human traffic (migration 2026-11-21T1500Z_traffic) -------------------------
// Raw events are kept `traffic.raw_retention_days` (default 30) and hold no IP address: only its
// network prefix (/24 for IPv4, /48 for IPv6). Every read is served from the rollups below, which
// the batch insert updates in the same transaction; rollups hold counts only and are kept
// `traffic.rollup_retention_days` (default 400). `day` is a UTC calendar date `YYYY-MM-DD`,
// `hour` a UTC hour `YYYY-MM-DDTHH`; `agent` is '' where none applies (plain human visits).

/** One hit on a site, classified when received. `path` never includes the query string. */
export interface TrafficEventsTable {
  id: Generated<number>;
  site_id: string;
  occurred_at: string;
  received_at: string;
  /** `beacon` (the pixel, GET /beacon) or `server` (server-side batch, POST /events). */
  source: 'beacon' | 'server';
  /** `human`, `ai_referred`, `ai_user_agent`, `ai_search`, `ai_training`, `browser_agent`, `other_bot`. */
  category: string;
  /** Agent name (`GPTBot`), or the assistant that referred a person (`ChatGPT`). */
  agent: string | null;
  path: string;
  /** Host of the referrer only. */
  referrer_host: string | null;
  /** HTTP status the site answered (server-side events). */
  status: number | null;
  /** Network prefix of the client (`203.0.113.0/24`, `2001:db8:1::/48`), never the address. */
  ip_prefix: string | null;
  /** User agent, at most 512 characters, kept so events can be classified again. */
  user_agent: string;
}

/** Events per site, day, category and agent: totals, shares, by agent, by day, AI referrals. */
export interface TrafficDailyTable {
  site_id: string;
  day: string;
  category: string;
  agent: string;
  operator: string | null;
  events: number;
}

/** Events per site, day, category and path: top pages per category. */
export interface TrafficPagesDailyTable {
  site_id: string;
  day: string;
  category: string;
  path: string;
  events: number;
}

/** Events received per site, hour and source: the install status' "last 24 hours". */
export interface TrafficHourlyTable {
  site_id: string;
  hour: string;
  source: 'beacon' | 'server';
  events: number;
}

/** First and last event received per site and source, and the running total. */
export interface TrafficSiteSourcesTable {
  site_id: string;
  source: 'beacon' | 'server';
  first_event_at: string;
  last_event_at: string;
  events: number;
}

/** Network-wide events per day, category and agent, summed over every site (no site column). */
export interface TrafficNetworkDailyTable {
  day: string;
  category: string;
  agent: string;
  operator: string | null;
  events: number;
}

/** Which sites have seen which agent (automated categories only): the directory's "sites seen". */
export interface TrafficAgentSitesTable {
  agent: string;
  site_id: string;
  first_seen_at: string;
  last_seen_at: string;
}

// --- Authorization server (migration 2026-11-21T1600Z_oauth) -----------------------------------

/**
 * oidc-provider's stored models (Session, Interaction, AuthorizationCode, RefreshToken, Grant,
 * Client, ...), one row per (id, model). `payload` is the model as oidc-provider hands it over;
 * the other columns are the lookups it asks for. Where the id is a bearer secret (refresh tokens,
 * registration access tokens, codes, sessions...) `id` is its SHA-256 digest and the payload
 * carries no copy of it (migration 2026-11-22T1200Z, `auth/adapter.ts`). A row past `expires_at`
 * is treated as absent and removed by the sweep; a client expires a day after registering unless
 * a person approves it.
 */
export interface OauthRecordsTable {
  id: string;
  model: string;
  grant_id: string | null;
  uid: string | null;
  user_code: string | null;
  account_id: string | null;
  /** The client the row belongs to (a Client row: its own id); keeps a used client alive. */
  client_id: string | null;
  payload: string;
  expires_at: string | null;
  consumed_at: string | null;
}

/**
 * ES256 keys that sign access tokens. At most one is unretired (unique index
 * `oauth_signing_keys_one_active`) and it signs; every key stays in the JWKS until tokens it signed
 * have expired, so a rotation never invalidates a token in flight.
 */
export interface OauthSigningKeysTable {
  kid: string;
  /** Private JWK (JSON text). Never leaves the database except into the provider's keystore. */
  private_jwk: string;
  created_at: string;
  retired_at: string | null;
}

/** Access tokens of the account issued before `revoked_before` are refused (sign out everywhere). */
export interface OauthAccountRevocationsTable {
  account_id: string;
  revoked_before: string;
}

// --- Identity assertions (migration 2026-11-25T1100Z_identity_assertions) --------------------

/** An identity provider's subject (`iss`, `sub` of its ID-JAGs) linked to one account. */
export interface IdentityLinksTable {
  issuer: string;
  subject: string;
  account_id: string;
  created_at: string;
}

/** `jti`s of accepted assertions, per issuer, kept until the assertion expires: each is accepted once. */
export interface AssertionJtisTable {
  issuer: string;
  jti: string;
  expires_at: string;
}

/**
 * One-time codes of the verified-email flow (`auth/assertions/email-codes.ts`): sent to `email` for
 * the OAuth client `client_id`, stored as an HMAC (the code itself has few digits), good for ten
 * minutes and five tries; `used_at` once exchanged for an assertion.
 */
export interface EmailCodesTable {
  id: string;
  email: string;
  client_id: string;
  code_hash: string;
  attempts: Generated<number>;
  created_at: string;
  expires_at: string;
  used_at: string | null;
}

// --- Owner dashboard (migration 2026-11-26T1000Z_dashboard_sessions) ------------------------------

/**
 * A sign-in to the owner dashboard at `{site_url}/dashboard`: the dashboard is a first-party OAuth
 * client of the authorization server, and the session stands for the grant its sign-in was
 * approved under (`servers/pages/dashboard/sessions.ts`). It ends at `expires_at`, on sign-out, or
 * as soon as that grant is revoked. The cookie holds 256 random bits; only their SHA-256 hex digest
 * is stored.
 */
export interface DashboardSessionsTable {
  id_hash: string;
  account_id: string;
  client_id: string;
  grant_id: string;
  /** Scopes of the access token the sign-in ended with, space-separated. */
  scopes: string;
  created_at: string;
  expires_at: string;
}

// --- Anonymous sessions (migration 2026-11-21T1620Z_anonymous_sessions) ----------------------

/**
 * An agent's session without an account (`POST {auth_url}/signup`): a bearer token good for
 * `scan_limit` scans until `expires_at`, and a one-time claim code a person redeems at
 * `{site_url}/register` to move the session's scans to their account. Both secrets carry 256
 * random bits and are stored only as SHA-256 hex digests. A claimed session's token stops working.
 */
export interface AnonymousSessionsTable {
  id: string;
  token_hash: string;
  claim_code_hash: string;
  /** The limit in force when the session was made (config `auth.anonymous.scan_limit`). */
  scan_limit: number;
  scans_used: number;
  created_at: string;
  expires_at: string;
  claimed_at: string | null;
  /** The account the session was claimed by. */
  claimed_by: string | null;
}

// --- Payments (migration 2026-11-23T1000Z_payments) --------------------------------------------

/**
 * One x402 payment authorization (EIP-3009 `TransferWithAuthorization`) and what it paid for. The
 * unique constraint on (network, asset, payer, nonce) is the durable reservation: the row is
 * inserted before the handler runs, so one authorization runs at most one execution, across
 * processes. Statuses (`servers/payments/ledger.ts`):
 * - `reserved`: verified, the handler is running (or settlement is in flight);
 * - `authorized`: verified and the result delivered, not yet on chain (no chain configured): the
 *   settler submits it once it can, before `valid_before`;
 * - `settled`: on chain (`transaction_hash`);
 * - `failed`: settlement refused or the authorization expired unsettled; nothing was delivered
 *   (or, for an expired authorized payment, nothing was collected);
 * - `released`: the handler failed; nothing moved and the authorization may be used again;
 * - `reconciling`: the settlement outcome is unknown (timeout); the settler reads the chain.
 * Amounts are USDC atomic units (6 decimals), exact integers.
 */
export interface PaymentsTable {
  id: string;
  /** The catalog SKU paid for (`llms-txt`). */
  sku: string;
  /** CAIP-2 network (`eip155:8453`), whichever x402 version the payer spoke. */
  network: string;
  /** Token contract, lower-case. */
  asset: string;
  /** `authorization.from`, lower-case. */
  payer: string;
  /** `authorization.nonce` (32 bytes hex), lower-case. */
  nonce: string;
  amount: number;
  pay_to: string;
  x402_version: number;
  /** `embedded` or the remote facilitator's URL. */
  facilitator: string;
  status: 'reserved' | 'authorized' | 'settled' | 'failed' | 'released' | 'reconciling';
  transaction_hash: string | null;
  /** Why settlement failed, or what reconciliation found (x402 error reason). */
  error: string | null;
  referral_handle: string | null;
  /** The referral handle's share of `amount` (config `payments.referral_share` at payment time). */
  referral_credit: number;
  /** SHA-256 of the SKU and its validated input: a replay gets the stored result only for the same request. */
  request_hash: string;
  /** The x402 PaymentPayload as received (JSON): what the settler submits later. */
  payload: string;
  /** The payment requirements it was verified against (JSON). */
  requirements: string;
  /** `authorization.validBefore` (unix seconds): settle before this or never. */
  valid_before: number;
  /**
   * The id the payer chose for this logical request (x402 payment-identifier extension), or null:
   * a retry carrying it - with a new authorization - gets this payment's result instead of paying
   * again. Unique per payer among live payments (migration 2026-11-28T0500Z_payment_identifiers).
   */
  payment_identifier: string | null;
  /** The operation's output (JSON), stored with the outcome so a replay gets the same response. */
  result: string | null;
  /** Settlement attempts by the settler. */
  attempts: Generated<number>;
  /**
   * While `reserved`: the token of the request running it, which the request renews while it runs
   * (a reservation whose lease ran out belongs to a process that stopped: it is recovered). While
   * `authorized` or `reconciling`: the settler process working on it.
   */
  lease_owner: string | null;
  lease_expires_at: string | null;
  created_at: string;
  updated_at: string;
  settled_at: string | null;
}

/** The referral handle of an account (one each): settled payments naming it (`ref`) credit it. */
export interface ReferralHandlesTable {
  handle: string;
  account_id: string;
  created_at: string;
}

// --- Souls: agent identities (migration 2026-11-25T1000Z_souls) ----------------------------

/** A registration challenge (`POST /soul/challenge`): only its SHA-256 is kept; single use, 5 minutes. */
export interface SoulChallengesTable {
  challenge_hash: string;
  /** RFC 7638 thumbprint of the public key it was issued for: only that key may answer it. */
  key_thumbprint: string;
  created_at: string;
  expires_at: string;
  used_at: string | null;
}

/** A soul: a permanent agent identity whose `agent_id` is the RFC 9278 thumbprint URI of its first key. */
export interface SoulsTable {
  /** Internal row id (UUID): the registry's keyset pages run over `(created_at, id)`. */
  id: string;
  agent_id: string;
  /** Unique, lower case. */
  handle: string;
  name: string;
  /** `name` lower-cased, for registry search. */
  name_key: string;
  description: string;
  image: string | null;
  /** JSON `{mcp?, a2a?, web?}`: absolute URLs. */
  endpoints: string;
  /** JSON `{name?, url?, email?}`: who runs the agent, as the agent declares it. */
  operator: string | null;
  /** The account linked by a registration made with one of our OAuth access tokens. */
  account_id: string | null;
  status: 'active' | 'retired';
  created_at: string;
  updated_at: string;
  retired_at: string | null;
  /**
   * The service's compact JWS over the log's head, `{agent_id, sequence, digest, issued_at}`
   * (sequence 0 and digest null before the first entry); re-signed by every append. Set for every
   * soul since migration 2026-11-27T2300Z_soul_memory_signatures.
   */
  checkpoint: string | null;
}

/**
 * Who signed a row of the soul log: `writer` - its writer (the soul's key, or the service for
 * account and paid writes); `migration` - the service's one-off key of migration
 * 2026-11-27T2300Z_soul_memory_signatures, for rows written before logs were signed.
 */
export type SignatureOrigin = 'writer' | 'migration';

/** Every key a soul has held (public JWK, Ed25519 or P-256); the current one has no `valid_until`. */
export interface SoulKeysTable {
  thumbprint: string;
  agent_id: string;
  jwk: string;
  valid_from: string;
  valid_until: string | null;
  /**
   * A rotated-in key's endorsement: the rotation's Bearer JWT, signed by the key before it
   * (`endorsement_kid` its thumbprint) and naming this one in `new_key`; null for the first key,
   * which the agent_id binds.
   */
  endorsement: string | null;
  endorsement_kid: string | null;
  endorsement_origin: SignatureOrigin | null;
}

/** `jti` of soul-signed JWTs already used, kept until they expire: each is accepted once, in any process. */
export interface SoulTokenIdsTable {
  agent_id: string;
  jti: string;
  expires_at: string;
}

/** A soul's append-only, hash-chained log (`features/souls/chain.ts`); unique (agent_id, sequence). */
export interface SoulMemoriesTable {
  id: string;
  agent_id: string;
  /** Position in the soul's log, from 1. */
  sequence: number;
  layer: 'episodic' | 'semantic';
  kind: 'memory' | 'validation';
  content: string;
  content_digest: string;
  previous_digest: string | null;
  digest: string;
  /** soul: the soul itself (its agent_id); account: an account id; payer: an EVM address (soul-write). */
  writer_kind: 'soul' | 'account' | 'payer';
  writer_id: string;
  /** The payment of a soul-write, when the entry was paid for. */
  payment_id: string | null;
  recorded_at: string;
  /**
   * The entry's compact JWS: the soul's JWT that wrote it (its `memory` claim binds the content),
   * or the service's JWS over `digest` (`soul_log_keys`). `signature_kid` names the key: a soul
   * key's thumbprint or a service kid. Set for every entry since migration
   * 2026-11-27T2300Z_soul_memory_signatures.
   */
  signature: string | null;
  signature_kid: string | null;
  signature_origin: SignatureOrigin | null;
}

/**
 * The service's ES256 keys that sign the soul log (account and paid entries, checkpoints),
 * published at `{site_url}/api/soul/jwks.json` for good. At most one is unretired
 * (`soul_log_keys_one_active`) and it signs; `private_jwk` is sealed with SECRETS_KEY, and null for
 * the migration's key, whose private half was never stored.
 */
export interface SoulLogKeysTable {
  kid: string;
  /** Public JWK (JSON text) with kid, alg, use. */
  public_jwk: string;
  private_jwk: string | null;
  created_at: string;
  retired_at: string | null;
}

/** ERC-8004 identities (registry + token id) a soul links, proven by the owning wallet's signature. */
export interface SoulRegistrationsTable {
  agent_id: string;
  /** `eip155:<chain id>:<identity registry address>`. */
  agent_registry: string;
  /** The ERC-721 token id, decimal. */
  erc8004_agent_id: string;
  /** The wallet that signed the link (lower case). */
  owner: string;
  signature: string;
  created_at: string;
}

// --- Security events (migration 2026-11-25T1200Z_security_events) ----------------------------

/**
 * A Security Event Token accepted at the push endpoint (`auth/events/receiver.ts`), one row per
 * transmitter (`issuer`) and `jti`: a SET takes effect once. `digest` (SHA-256 of the compact
 * token) tells a transmitter's retry of the same SET (answered 202 again) from another SET
 * reusing the `jti` (refused). `account_id` is the account the subject named, or null.
 */
export interface SecurityEventReceiptsTable {
  issuer: string;
  jti: string;
  digest: string;
  event_type: string;
  account_id: string | null;
  received_at: string;
}

/** Claims a trusted transmitter reported changed for an account (CAEP token-claims-change), merged per issuer. */
export interface AccountEventClaimsTable {
  account_id: string;
  issuer: string;
  /** JSON object: the claims as last reported. */
  claims: string;
  changed_at: string;
}

/**
 * A receiver's stream at our transmitter (SSF 1.0 section 8): SETs about the owning account are
 * pushed (RFC 8935) to `endpoint_url` with `authorization_header` (sealed, `ssfAuthorizationPlace`).
 * `events_requested` is a JSON array of event type URIs; `status` enabled | paused | disabled.
 */
export interface SsfStreamsTable {
  id: string;
  account_id: string;
  endpoint_url: string;
  authorization_header: string | null;
  events_requested: string;
  description: string | null;
  status: 'enabled' | 'paused' | 'disabled';
  status_reason: string | null;
  created_at: string;
  updated_at: string;
}

/**
 * Outbox of signed SETs for a stream, delivered like `deliveries` (lease, retries with backoff).
 * `id` is the SET's `jti`; `token` the compact SET, signed when the event happened, so every
 * attempt sends the same bytes.
 */
export interface SsfDeliveriesTable {
  id: string;
  stream_id: string;
  event_type: string;
  token: string;
  state: 'pending' | 'delivered' | 'failed';
  attempts: number;
  next_attempt_at: string;
  lease_owner: string | null;
  lease_expires_at: string | null;
  last_error: string | null;
  created_at: string;
  delivered_at: string | null;
}

// --- Marketplace (migration 2026-11-25T1300Z_marketplace) ----------------------------------------

/**
 * USDC owed back to a payer (`servers/payments/credits.ts`): the unused part of an outbid featured
 * bid, a cancelled campaign's remainder, a declined booking's deposit. One per (reason, subject).
 * Statuses: `owed` (waits for its source payment to be settled and for a settler key), `sending`
 * (a signed USDC transfer from the settler key is stored in `raw_transaction` and broadcast; the
 * settler reads its receipt, rebroadcasting the same bytes if needed - never a second transfer),
 * `paid` (`transaction_hash`), `void` (the source payment failed: nothing was collected to give back).
 * Amounts in USDC atomic units.
 */
export interface MarketplaceCreditsTable {
  id: string;
  /** The address credited, lower-case: the payer of the source payment. */
  payer: string;
  amount: number;
  /** `featured_outbid`, ... */
  reason: string;
  /** What the credit is for (the bid id, campaign id, booking id). */
  subject_id: string;
  /** The payment the money came from: paid out only once that one is settled. */
  source_payment_id: string;
  status: 'owed' | 'sending' | 'paid' | 'void';
  transaction_hash: string | null;
  /** The signed transfer (hex) while `sending`, so that a restart rebroadcasts the same transaction. */
  raw_transaction: string | null;
  error: string | null;
  attempts: Generated<number>;
  lease_owner: string | null;
  lease_expires_at: string | null;
  created_at: string;
  updated_at: string;
  paid_at: string | null;
}

/**
 * One row per limited placement (`featured`, `spotlight`): a purchase that must see every earlier one
 * (the auction's holder, the free spotlight slots) is decided holding its row.
 */
export interface MarketplaceLocksTable {
  id: string;
  updated_at: string;
}

/**
 * One paid bid for the Featured Brand slot. `holding`: holds it until `holds_until` (past that it
 * has expired); `outbid`: a higher daily bid took the slot at `ended_at` and the unused part was
 * credited (`credited`). A bid whose payment failed holds nothing. Amounts in USDC atomic units.
 */
export interface FeaturedBidsTable {
  id: string;
  payment_id: string;
  payer: string;
  domain: string;
  url: string;
  blurb: string | null;
  /** Daily bid. */
  bid: number;
  days: number;
  /** Paid: bid x days. */
  amount: number;
  status: 'holding' | 'outbid';
  holds_from: string;
  holds_until: string;
  ended_at: string | null;
  credited: Generated<number>;
  created_at: string;
}

/** A 30-day spotlight placement, shown from `starts_at` to `ends_at`, with the scan queued at purchase. */
export interface SpotlightsTable {
  id: string;
  payment_id: string;
  domain: string;
  url: string;
  blurb: string | null;
  agent_handle: string | null;
  business_name: string | null;
  scan_id: string | null;
  starts_at: string;
  ends_at: string;
  created_at: string;
}

/**
 * A robot embodiment booking opened by its paid deposit. Statuses: requested -> quoted -> scheduled
 * -> active -> completed; declined (from requested or quoted) and cancelled (before active) credit
 * the deposit back. The requester reads it with the secret token of its status URL (only its
 * SHA-256 is kept); the contact goes to the operator only.
 */
export interface EmbodimentBookingsTable {
  id: string;
  payment_id: string;
  payer: string;
  token_hash: string;
  /** Email or E.164 phone: delivered to the operator, never shown on the status URL. */
  contact: string;
  agent_handle: string;
  duration_days: number;
  /** Atomic USDC paid. */
  deposit: number;
  status: 'requested' | 'quoted' | 'scheduled' | 'active' | 'completed' | 'declined' | 'cancelled';
  quote_amount: number | null;
  quote_valid_until: string | null;
  scheduled_for: string | null;
  created_at: string;
  updated_at: string;
}

/** Every status change of a booking, with the operator's note. */
export interface EmbodimentEventsTable {
  id: string;
  booking_id: string;
  from_status: string | null;
  to_status: string;
  note: string | null;
  at: string;
}

/**
 * A boost campaign: `pending_payment` (made with POST /boost, waiting for its payment URL to be
 * paid), `active` (spending `budget` at `marketplace.boost_cpm_usdc` on reported impressions),
 * `completed` (spent), `cancelled` (the remainder credited back). Amounts in atomic USDC.
 */
export interface BoostCampaignsTable {
  id: string;
  /** The account that made it with POST /boost; null when bought directly with x402. */
  account_id: string | null;
  payment_id: string | null;
  payer: string | null;
  /** SHA-256 of the token of its status URL. */
  token_hash: string;
  domain: string;
  url: string;
  note: string | null;
  budget: number;
  spent: Generated<number>;
  impressions: Generated<number>;
  clicks: Generated<number>;
  status: 'pending_payment' | 'active' | 'completed' | 'cancelled';
  created_at: string;
  updated_at: string;
  ended_at: string | null;
}

/** One signed impressions report of an ad network, once per (campaign, network, report id). */
export interface BoostReportsTable {
  campaign_id: string;
  network: string;
  report_id: string;
  impressions: number;
  /** Atomic USDC charged for it (capped at what was left). */
  charged: number;
  at: string;
}

/**
 * Outbox of the marketplace, as `deliveries` is for returns: new embodiment bookings to the robot
 * operator (webhook or email) and boost campaigns to each ad network (`network`), signed webhooks.
 */
export interface MarketplaceDeliveriesTable {
  id: string;
  kind: 'embodiment_booking' | 'boost_campaign';
  subject_id: string;
  /** The ad network's name (`marketplace.ad_networks`) for a campaign. */
  network: string | null;
  channel: 'webhook' | 'email';
  target: string;
  state: 'pending' | 'delivered' | 'failed';
  attempts: number;
  next_attempt_at: string;
  lease_owner: string | null;
  lease_expires_at: string | null;
  last_error: string | null;
  created_at: string;
  delivered_at: string | null;
}

export interface Database {
  service_secrets: ServiceSecretsTable;
  catalog_snapshots: CatalogSnapshotsTable;
  brand_channels: BrandChannelsTable;
  return_requests: ReturnRequestsTable;
  return_events: ReturnEventsTable;
  deliveries: DeliveriesTable;
  return_messages: ReturnMessagesTable;
  return_notifications: ReturnNotificationsTable;
  brand_tasks: BrandTasksTable;
  idempotency_keys: IdempotencyKeysTable;
  accounts: AccountsTable;
  service_keys: ServiceKeysTable;
  sites: SitesTable;
  scans: ScansTable;
  paid_scans: PaidScansTable;
  siwx_nonces: SiwxNoncesTable;
  scan_findings: ScanFindingsTable;
  scan_batches: ScanBatchesTable;
  scan_batch_items: ScanBatchItemsTable;
  domain_scores: DomainScoresTable;
  leaderboard_snapshots: LeaderboardSnapshotsTable;
  readiness_snapshots: ReadinessSnapshotsTable;
  listings: ListingsTable;
  brand_agents: BrandAgentsTable;
  resolved_merchants: ResolvedMerchantsTable;
  brand_discoveries: BrandDiscoveriesTable;
  discovered_channels: DiscoveredChannelsTable;
  channel_failures: ChannelFailuresTable;
  declared_descriptors: DeclaredDescriptorsTable;
  traffic_events: TrafficEventsTable;
  traffic_daily: TrafficDailyTable;
  traffic_pages_daily: TrafficPagesDailyTable;
  traffic_hourly: TrafficHourlyTable;
  traffic_site_sources: TrafficSiteSourcesTable;
  traffic_network_daily: TrafficNetworkDailyTable;
  traffic_agent_sites: TrafficAgentSitesTable;
  oauth_records: OauthRecordsTable;
  oauth_signing_keys: OauthSigningKeysTable;
  oauth_account_revocations: OauthAccountRevocationsTable;
  anonymous_sessions: AnonymousSessionsTable;
  dashboard_sessions: DashboardSessionsTable;
  identity_links: IdentityLinksTable;
  assertion_jtis: AssertionJtisTable;
  email_codes: EmailCodesTable;
  payments: PaymentsTable;
  referral_handles: ReferralHandlesTable;
  soul_challenges: SoulChallengesTable;
  souls: SoulsTable;
  soul_keys: SoulKeysTable;
  soul_token_ids: SoulTokenIdsTable;
  soul_memories: SoulMemoriesTable;
  soul_log_keys: SoulLogKeysTable;
  soul_registrations: SoulRegistrationsTable;
  security_event_receipts: SecurityEventReceiptsTable;
  account_event_claims: AccountEventClaimsTable;
  ssf_streams: SsfStreamsTable;
  ssf_deliveries: SsfDeliveriesTable;
  marketplace_credits: MarketplaceCreditsTable;
  marketplace_locks: MarketplaceLocksTable;
  featured_bids: FeaturedBidsTable;
  spotlights: SpotlightsTable;
  embodiment_bookings: EmbodimentBookingsTable;
  embodiment_events: EmbodimentEventsTable;
  boost_campaigns: BoostCampaignsTable;
  boost_reports: BoostReportsTable;
  marketplace_deliveries: MarketplaceDeliveriesTable;
}

export type ReturnRequestRow = Selectable<ReturnRequestsTable>;
export type NewReturnRequest = Insertable<ReturnRequestsTable>;
export type ReturnEventRow = Selectable<ReturnEventsTable>;
export type DeliveryRow = Selectable<DeliveriesTable>;
export type ReturnMessageRow = Selectable<ReturnMessagesTable>;
export type NewReturnMessage = Insertable<ReturnMessagesTable>;
export type ReturnNotificationRow = Selectable<ReturnNotificationsTable>;
export type BrandTaskRow = Selectable<BrandTasksTable>;
export type SsfStreamRow = Selectable<SsfStreamsTable>;
export type SsfDeliveryRow = Selectable<SsfDeliveriesTable>;
export type BrandChannelRow = Selectable<BrandChannelsTable>;
export type AccountRow = Selectable<AccountsTable>;
export type ServiceKeyRow = Selectable<ServiceKeysTable>;
export type SiteRow = Selectable<SitesTable>;
export type ScanRow = Selectable<ScansTable>;
export type AnonymousSessionRow = Selectable<AnonymousSessionsTable>;
export type PaymentRow = Selectable<PaymentsTable>;
export type MarketplaceCreditRow = Selectable<MarketplaceCreditsTable>;
export type FeaturedBidRow = Selectable<FeaturedBidsTable>;
export type SpotlightRow = Selectable<SpotlightsTable>;
export type EmbodimentBookingRow = Selectable<EmbodimentBookingsTable>;
export type MarketplaceDeliveryRow = Selectable<MarketplaceDeliveriesTable>;
export type BoostCampaignRow = Selectable<BoostCampaignsTable>;
export type DomainScoreRow = Selectable<DomainScoresTable>;
export type ListingRow = Selectable<ListingsTable>;
export type BrandAgentRow = Selectable<BrandAgentsTable>;
export type ResolvedMerchantRow = Selectable<ResolvedMerchantsTable>;
export type BrandDiscoveryRow = Selectable<BrandDiscoveriesTable>;
export type DiscoveredChannelRow = Selectable<DiscoveredChannelsTable>;
export type ChannelFailureRow = Selectable<ChannelFailuresTable>;
export type DeclaredDescriptorRow = Selectable<DeclaredDescriptorsTable>;
export type NewTrafficEvent = Insertable<TrafficEventsTable>;
export type SoulRow = Selectable<SoulsTable>;
export type SoulKeyRow = Selectable<SoulKeysTable>;
export type SoulMemoryRow = Selectable<SoulMemoriesTable>;
export type SoulRegistrationRow = Selectable<SoulRegistrationsTable>;
