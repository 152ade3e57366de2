/**
 * Verify, don't trust (issue 16 section 1): what a site's documents claim is checked against what
 * its servers do. The crawler does every request through its `Probe` (the SSRF-safe fetcher, the
 * politeness limiter, per-request timeouts, byte limits, evidence); this module decides what to ask
 * and judges the answers.
 *
 * - MCP: the server card's endpoint answers `initialize` and `tools/list` (never `tools/call`) with
 *   the MCP SDK client, and the tools the card lists are the tools the server lists; and which
 *   protocol eras it speaks (`server/discover` for 2026-07-28, `initialize` for 2025-11-25).
 * - OAuth: the protected resource metadata names the resource it was fetched for (RFC 9728 section
 *   3.3), each authorization server's metadata resolves under both RFC 8414 layouts and OpenID
 *   Connect Discovery with the same `issuer` (RFC 8414 section 3.3), and a 401 from the resource
 *   points back at that metadata (RFC 9728 section 5.1).
 * - The door test: the home page as a browser and as each class of AI agent.
 */

import { setTimeout as sleep } from 'node:timers/promises';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { RequestInit as UndiciRequestInit, Response as UndiciResponse } from 'undici';
import { parseRetryAfter } from '../../outbound/retry-after.ts';
import { readLimitedBody } from '../../outbound/safe-fetch.ts';
import { type AgentCategory, aiAgents } from './collectors/robots.ts';
import { bodyPreview, type EvidenceLog, keptHeaders } from './evidence.ts';

export interface ProbeOptions {
  topic: string;
  accept?: string;
  maxBytes?: number;
  method?: 'GET' | 'POST' | 'HEAD';
  headers?: Record<string, string>;
  body?: string;
  /** Sent instead of the scanner's own User-Agent (the door test). */
  userAgent?: string;
}

export type ProbeOutcome =
  | {
      ok: true;
      status: number;
      final_url: string;
      content_type: string | null;
      headers: Record<string, string>;
      body: string;
      truncated: boolean;
      bytes: number;
    }
  | { ok: false; url: string; error: string; blocked: boolean };

export type Probe = (url: string, options: ProbeOptions) => Promise<ProbeOutcome>;

// --- MCP ------------------------------------------------------------------------------------------

export interface McpVerification {
  card_url: string;
  endpoint: string | null;
  /** `initialize` succeeded. */
  initialized: boolean;
  server_name: string | null;
  protocol_version: string | null;
  /** The endpoint asked for authorization (401): tools cannot be listed without a token. */
  auth_required: boolean;
  /** The 401's WWW-Authenticate `resource_metadata`, when it gave one. */
  resource_metadata: string | null;
  live_tools: string[] | null;
  card_tools: string[] | null;
  /** Listed on the card, not by the server. */
  missing_live: string[];
  /** Listed by the server, not on the card. */
  not_on_card: string[];
  error: string | null;
  /** Which protocol eras the server speaks (absent before issue 35). */
  eras?: McpEras;
}

/** The MCP protocol eras a server speaks, each asked for the way a client of that era connects. */
export interface McpEras {
  /** `server/discover` answered, offering 2026-07-28 or later (stateless, `_meta` per request). */
  modern: { speaks: boolean; versions: string[]; error: string | null };
  /** `initialize` answered with a 2025 revision (2025-11-25). */
  legacy: { speaks: boolean; version: string | null; error: string | null };
  /** SEP-2127's server card at `<endpoint>/server-card`, the 2026-07-28 server card extension. */
  server_card: { url: string; found: boolean; note: string | null } | null;
}

const MAX_TOOL_PAGES = 3;

interface VerifyMcpOptions {
  cardUrl: string;
  endpoint: string | null;
  cardTools: string[] | null;
  /** The SSRF-safe fetch, through the crawl's politeness limiter. */
  fetch: (url: string, init: UndiciRequestInit) => Promise<UndiciResponse>;
  userAgent: string;
  timeoutMs: number;
  maxBytes: number;
  evidence: EvidenceLog;
  signal: AbortSignal;
}

/**
 * `initialize` then `tools/list` on `endpoint` with the MCP SDK client, every request through the
 * SSRF-safe fetch with the per-request timeout and byte limit; the whole exchange is bounded too.
 */
export async function verifyMcp(options: VerifyMcpOptions): Promise<McpVerification> {
  const result: McpVerification = {
    card_url: options.cardUrl,
    endpoint: options.endpoint,
    initialized: false,
    server_name: null,
    protocol_version: null,
    auth_required: false,
    resource_metadata: null,
    live_tools: null,
    card_tools: options.cardTools,
    missing_live: [],
    not_on_card: [],
    error: null,
  };
  if (!options.endpoint) {
    result.error = 'the card names no endpoint';
    return result;
  }
  const budget = AbortSignal.any([options.signal, AbortSignal.timeout(options.timeoutMs * 4)]);
  const limitedFetch = recordingFetch(options, budget, result);
  // 'auto': a server of the 2026-07-28 era answers server/discover; an older one, initialize.
  const client = newClient('auto');
  const transport = new StreamableHTTPClientTransport(new URL(options.endpoint), { fetch: limitedFetch });
  try {
    await client.connect(transport, { signal: budget, timeout: options.timeoutMs });
    result.initialized = true;
    result.server_name = client.getServerVersion()?.name ?? null;
    result.protocol_version = client.getNegotiatedProtocolVersion() ?? null;
    result.live_tools = await listToolNames(client, budget, options.timeoutMs);
    if (options.cardTools) {
      const live = new Set(result.live_tools);
      const card = new Set(options.cardTools);
      result.missing_live = options.cardTools.filter((t) => !live.has(t));
      result.not_on_card = result.live_tools.filter((t) => !card.has(t));
    }
  } catch (err) {
    result.error = result.auth_required
      ? 'the endpoint requires authorization (401)'
      : budget.aborted
        ? 'timed out'
        : shortError(err);
  }
  // Read before closing: a closed client forgets what `server/discover` offered.
  const modern =
    client.getProtocolEra() === 'modern'
      ? (client.getDiscoverResult()?.supportedVersions ?? [result.protocol_version ?? ''])
      : null;
  await client.close().catch(() => {});
  if (!result.auth_required)
    result.eras = await erasOf(modern, result, () =>
      connectsLegacy(options.endpoint as string, limitedFetch, budget, options.timeoutMs),
    );
  return result;
}

/**
 * The fetch the SDK's transport is given: the crawl's SSRF-safe fetch within the verification's
 * budget, each exchange kept as evidence, a 401's resource metadata noted on `result`.
 */
function recordingFetch(options: VerifyMcpOptions, budget: AbortSignal, result: McpVerification) {
  return async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const method = init?.method ?? 'GET';
    const started = Date.now();
    const headers = new Headers(init?.headers);
    headers.set('user-agent', options.userAgent);
    try {
      const response = await options.fetch(url, {
        method,
        headers: Object.fromEntries(headers),
        body: typeof init?.body === 'string' ? init.body : undefined,
        redirect: 'manual',
        // The transport's own signal too: client.close() aborts the GET stream it opened, which
        // otherwise held its connection until the timeout, after the scan was over.
        signal: AbortSignal.any([
          budget,
          AbortSignal.timeout(options.timeoutMs),
          ...(init?.signal ? [init.signal] : []),
        ]),
      });
      const body = await readLimitedBody(response, options.maxBytes);
      const text = body.bytes.toString('utf8');
      options.evidence.add({
        topic: 'mcp',
        method,
        url,
        status: response.status,
        headers: keptHeaders(response.headers),
        body_preview: bodyPreview(text),
        duration_ms: Date.now() - started,
        error: null,
      });
      if (response.status === 401) {
        result.auth_required = true;
        result.resource_metadata = resourceMetadataOf(response.headers.get('www-authenticate'));
      }
      return new Response(response.status === 204 || response.status === 202 ? null : body.bytes, {
        status: response.status,
        statusText: response.statusText,
        headers: Object.fromEntries(response.headers),
      });
    } catch (err) {
      // Closed by the client once the verification was done: not something the site did.
      if (init?.signal?.aborted && !budget.aborted) throw err;
      options.evidence.add({
        topic: 'mcp',
        method,
        url,
        status: null,
        headers: {},
        body_preview: null,
        duration_ms: Date.now() - started,
        error: (err as Error).name === 'TimeoutError' ? 'timed out' : (err as Error).message,
      });
      throw err;
    }
  };
}

function newClient(mode: 'auto' | 'legacy'): Client {
  return new Client({ name: 'agent-service-scanner', version: '1.0.0' }, { versionNegotiation: { mode } });
}

async function listToolNames(client: Client, signal: AbortSignal, timeout: number): Promise<string[]> {
  const tools: string[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_TOOL_PAGES; page++) {
    const listed = await client.listTools(cursor ? { cursor } : {}, { signal, timeout });
    tools.push(...listed.tools.map((t) => t.name));
    cursor = listed.nextCursor;
    if (!cursor) break;
  }
  return tools;
}

/**
 * The eras from the 'auto' connection (`modern`: what its `server/discover` offered, or null when
 * it fell back): a modern one proves `server/discover`, and `initialize` is then asked for on its
 * own (a 2025 client's connect); a legacy one proves `initialize` and that `server/discover` did
 * not offer 2026-07-28. The server card is judged by the crawl.
 */
async function erasOf(
  modern: string[] | null,
  result: McpVerification,
  legacyConnect: () => Promise<{ version: string | null; error: string | null }>,
): Promise<McpEras> {
  if (!result.initialized) {
    const error = result.error ?? 'no answer';
    return {
      modern: { speaks: false, versions: [], error },
      legacy: { speaks: false, version: null, error },
      server_card: null,
    };
  }
  if (!modern)
    return {
      modern: {
        speaks: false,
        versions: [],
        error: 'server/discover did not offer 2026-07-28 (fell back to initialize)',
      },
      legacy: { speaks: true, version: result.protocol_version, error: null },
      server_card: null,
    };
  const legacy = await legacyConnect();
  return {
    modern: { speaks: true, versions: modern, error: null },
    legacy: { speaks: legacy.error === null, version: legacy.version, error: legacy.error },
    server_card: null,
  };
}

/** A 2025-11-25 client's connect (`initialize`, then `notifications/initialized`), closed at once. */
async function connectsLegacy(
  endpoint: string,
  fetch: (input: string | URL | Request, init?: RequestInit) => Promise<Response>,
  signal: AbortSignal,
  timeout: number,
): Promise<{ version: string | null; error: string | null }> {
  const client = newClient('legacy');
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL(endpoint), { fetch }), {
      signal,
      timeout,
    });
    return { version: client.getNegotiatedProtocolVersion() ?? null, error: null };
  } catch (err) {
    return { version: null, error: signal.aborted ? 'timed out' : shortError(err) };
  } finally {
    await client.close().catch(() => {});
  }
}

const shortError = (err: unknown): string => {
  const message = (err as Error)?.message ?? String(err);
  return message.length > 200 ? `${message.slice(0, 200)}...` : message;
};

/** `resource_metadata` of a `WWW-Authenticate: Bearer` challenge (RFC 9728 section 5.1). */
export function resourceMetadataOf(header: string | null | undefined): string | null {
  if (!header) return null;
  const match =
    /resource_metadata\s*=\s*"([^"]*)"/i.exec(header) ?? /resource_metadata\s*=\s*([^\s,]+)/i.exec(header);
  return match?.[1] ?? null;
}

// --- OAuth ----------------------------------------------------------------------------------------

export interface OAuthStep {
  /** What was verified, in words. */
  check: string;
  url: string;
  ok: boolean;
  note: string | null;
}

export interface OAuthChain {
  steps: OAuthStep[];
  authorization_servers: string[];
}

/** A JSON body that is an object, or null (not JSON, or another value). */
export const jsonObject = (body: string): Record<string, unknown> | null => {
  try {
    const value = JSON.parse(body) as unknown;
    return value && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
};

/** `https://h/a/` and `https://h/a` name one resource; anything else must match exactly. */
const sameResource = (a: string, b: string): boolean => a.replace(/\/$/, '') === b.replace(/\/$/, '');

/** The resource a metadata URL describes: the path after `/.well-known/oauth-protected-resource`. */
export function resourceForMetadataUrl(metadataUrl: string): string {
  const u = new URL(metadataUrl);
  const marker = '/.well-known/oauth-protected-resource';
  const at = u.pathname.indexOf(marker);
  const rest = at >= 0 ? u.pathname.slice(at + marker.length) : '';
  return `${u.origin}${rest || '/'}`;
}

/** RFC 8414 section 3.1 (path inserted), the path-appended layout, and OpenID Connect Discovery. */
export function authorizationServerMetadataUrls(issuer: string): { layout: string; url: string }[] {
  const u = new URL(issuer);
  const path = u.pathname.replace(/\/$/, '');
  const urls = [
    { layout: 'RFC 8414 (path inserted)', url: `${u.origin}/.well-known/oauth-authorization-server${path}` },
    { layout: 'path appended', url: `${u.origin}${path}/.well-known/oauth-authorization-server` },
    { layout: 'OpenID Connect Discovery', url: `${u.origin}${path}/.well-known/openid-configuration` },
  ];
  return urls.filter((x, i) => urls.findIndex((y) => y.url === x.url) === i);
}

const MAX_AUTHORIZATION_SERVERS = 2;

/**
 * Follows the chain from the protected resource metadata documents found (`documents`: URL and
 * body) to each authorization server's metadata, and judges the 401 challenge if one was seen.
 */
export async function verifyOAuthChain(options: {
  documents: { url: string; body: string }[];
  challenge: { url: string; resource_metadata: string | null } | null;
  probe: Probe;
}): Promise<OAuthChain> {
  const steps: OAuthStep[] = [];
  const servers = new Set<string>();
  const byUrl = new Map<string, Record<string, unknown>>();
  for (const document of options.documents) {
    const doc = jsonObject(document.body);
    if (!doc) continue;
    byUrl.set(document.url, doc);
    const expected = resourceForMetadataUrl(document.url);
    const resource = typeof doc.resource === 'string' ? doc.resource : null;
    steps.push({
      check: 'protected resource metadata names the resource it was fetched for',
      url: document.url,
      ok: resource !== null && sameResource(resource, expected),
      note:
        resource === null
          ? 'no "resource"'
          : sameResource(resource, expected)
            ? null
            : `resource is ${resource}, expected ${expected}`,
    });
    for (const as of Array.isArray(doc.authorization_servers) ? doc.authorization_servers : []) {
      if (typeof as === 'string' && URL.canParse(as)) servers.add(as);
    }
  }
  if (options.challenge) {
    const target = options.challenge.resource_metadata;
    let ok = false;
    let note: string | null = 'the 401 has no resource_metadata';
    if (target) {
      let doc = byUrl.get(target) ?? null;
      if (!doc && URL.canParse(target)) {
        const got = await options.probe(target, {
          topic: 'oauth',
          accept: 'application/json',
          maxBytes: 64 * 1024,
        });
        doc = got.ok && got.status === 200 ? jsonObject(got.body) : null;
        if (doc) {
          for (const as of Array.isArray(doc.authorization_servers) ? doc.authorization_servers : []) {
            if (typeof as === 'string' && URL.canParse(as)) servers.add(as);
          }
        }
      }
      const resource = typeof doc?.resource === 'string' ? doc.resource : null;
      ok = resource !== null && sameResource(resource, options.challenge.url);
      note = !doc
        ? `resource_metadata ${target} is not a JSON document`
        : ok
          ? null
          : `the metadata names ${resource ?? 'no resource'}, not ${options.challenge.url}`;
    }
    steps.push({
      check: "a 401's resource_metadata points at the resource's metadata",
      url: options.challenge.url,
      ok,
      note,
    });
  }
  const issuers = [...servers].slice(0, MAX_AUTHORIZATION_SERVERS);
  await Promise.all(
    issuers.map(async (issuer) => {
      await Promise.all(
        authorizationServerMetadataUrls(issuer).map(async ({ layout, url }) => {
          const got = await options.probe(url, {
            topic: 'oauth',
            accept: 'application/json',
            maxBytes: 128 * 1024,
          });
          const doc = got.ok && got.status === 200 ? jsonObject(got.body) : null;
          const found = typeof doc?.issuer === 'string' ? doc.issuer : null;
          steps.push({
            check: `authorization server metadata (${layout}) has the issuer ${issuer}`,
            url,
            ok: found === issuer,
            note: !got.ok
              ? got.error
              : got.status !== 200
                ? `HTTP ${got.status}`
                : !doc
                  ? 'not a JSON object'
                  : found === issuer
                    ? null
                    : `issuer is ${found ?? 'missing'}`,
          });
        }),
      );
    }),
  );
  return { steps, authorization_servers: issuers };
}

// --- The door test --------------------------------------------------------------------------------

/** Who knocks: a browser and one agent of each class (tokens as robots.txt groups name them). */
export const doorVisitors: readonly { id: string; class: 'browser' | AgentCategory; userAgent: string }[] = [
  {
    id: 'browser',
    class: 'browser',
    userAgent:
      'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  },
  {
    id: 'GPTBot',
    class: 'training',
    userAgent:
      'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)',
  },
  {
    id: 'OAI-SearchBot',
    class: 'search',
    userAgent:
      'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; OAI-SearchBot/1.0; +https://openai.com/searchbot)',
  },
  {
    id: 'ChatGPT-User',
    class: 'user',
    userAgent:
      'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot',
  },
  {
    id: 'Claude-User',
    class: 'user',
    userAgent:
      'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Claude-User/1.0; +Claude-User@anthropic.com)',
  },
];

export interface DoorAnswer {
  visitor: string;
  class: 'browser' | AgentCategory;
  /** Status of the last try; null when none answered. */
  status: number | null;
  tries: number;
  /** served: answered like the browser; blocked: refused; unmeasured: rate limited or no answer. */
  verdict: 'served' | 'blocked' | 'unmeasured';
}

const DOOR_TRIES = 3;
/** The wait before another try when a 429 or 5xx names none: this many ms times the tries so far. */
const DOOR_BACKOFF_MS = 250;
/** The longest `Retry-After` the door test waits for; a site that asks for longer is left unmeasured. */
const DOOR_MAX_WAIT_MS = 2_000;
const blockStatuses = new Set([401, 403, 406, 407, 410, 451]);

/**
 * The home page as each visitor, up to three tries each while the answer is 429 or 5xx. Another try
 * comes no sooner than the answer's `Retry-After` asks (RFC 9110 section 10.2.3, RFC 6585 section
 * 4), and not at all when it asks for longer than a scan can wait; without one, after a short
 * backoff. A scan that ends (`signal`) stops waiting.
 */
export async function doorTest(home: string, probe: Probe, signal?: AbortSignal): Promise<DoorAnswer[]> {
  const knock = async (visitor: (typeof doorVisitors)[number]) => {
    let status: number | null = null;
    let tries = 0;
    while (tries < DOOR_TRIES) {
      tries++;
      const got = await probe(home, {
        topic: 'door',
        accept: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.8',
        maxBytes: 32 * 1024,
        userAgent: visitor.userAgent,
      });
      status = got.ok ? got.status : null;
      if ((status !== null && status !== 429 && status < 500) || tries === DOOR_TRIES) break;
      const asked = got.ok ? parseRetryAfter(got.headers['retry-after'], new Date()) : undefined;
      const wait = asked ?? DOOR_BACKOFF_MS * tries;
      if (wait > DOOR_MAX_WAIT_MS || signal?.aborted) break;
      try {
        await sleep(wait, undefined, signal ? { signal } : {});
      } catch {
        break; // the scan ended while waiting
      }
    }
    return { visitor, status, tries };
  };
  const answers = await Promise.all(doorVisitors.map(knock));
  const browser = answers.find((a) => a.visitor.class === 'browser');
  const browserOk = browser?.status != null && browser.status >= 200 && browser.status < 400;
  return answers.map(({ visitor, status, tries }): DoorAnswer => {
    let verdict: DoorAnswer['verdict'];
    if (status === null || status === 429) verdict = 'unmeasured';
    else if (status >= 200 && status < 400) verdict = 'served';
    else if (blockStatuses.has(status) || (browserOk && status >= 400)) verdict = 'blocked';
    else verdict = 'unmeasured';
    return { visitor: visitor.id, class: visitor.class, status, tries, verdict };
  });
}

/** The AI agent classes as robots.txt groups know them, for messages. */
export const agentClassOf = (token: string): AgentCategory | null =>
  aiAgents.find((a) => a.token === token)?.category ?? null;

// --- Text likeness --------------------------------------------------------------------------------

/** Words of a text, lower case, for comparing a markdown rendering with its HTML page. */
export function wordsOf(text: string): Set<string> {
  return new Set(
    text
      .toLowerCase()
      .replace(/[`*_#>[\]()!|-]/g, ' ')
      .split(/[^\p{L}\p{N}]+/u)
      .filter((w) => w.length > 2),
  );
}

/** Share of the smaller word set found in the other (0-1); 0 when either is empty. */
export function textOverlap(a: Set<string>, b: Set<string>): number {
  if (a.size === 0 || b.size === 0) return 0;
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  let shared = 0;
  for (const w of small) if (large.has(w)) shared++;
  return Math.round((shared / small.size) * 100) / 100;
}
