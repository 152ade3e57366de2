/**
 * Machine-readable discovery documents an agent looks for, and markdown content negotiation.
 * Each check is a pure judgement of what was fetched; the crawler does the fetching.
 *
 * - `/.well-known/api-catalog`: RFC 9727, an RFC 9264 linkset (`application/linkset+json`) whose
 *   entries carry `service-desc`, `service-doc`, `status` links.
 * - `/.well-known/oauth-protected-resource`: RFC 9728 (needs `resource`).
 * - `/.well-known/oauth-authorization-server`: RFC 8414 (needs `issuer`).
 * - MCP server card: `/.well-known/mcp/server-card.json` (SEP-1649) or `/.well-known/mcp.json`;
 *   either is accepted when it names the server and how to reach it. Without either, the SEP-2127
 *   MCP Catalog `/.well-known/mcp/catalog.json` (which superseded them: cards now live at
 *   `<streamable-http-url>/server-card`) and the first card it lists on the same site.
 * - `/.well-known/x402.json`: x402 resources with payment requirements.
 * - Markdown negotiation: `Accept: text/markdown` answered with a markdown representation.
 *
 * A document is `present` (worth partial credit when incomplete) only when it is one: a 2xx answer
 * that is not an HTML page, is not the same as the site's answer to a made-up path (a soft 404,
 * see soft-404.ts), and parses as the document's syntax (a JSON object; OpenAPI: JSON or YAML).
 * A single-page app answering every path with its HTML shell has none of them.
 */
import { parse as parseYaml } from 'yaml';
import {
  type AnswerFingerprint,
  answersLikeUnknownPath,
  type Fetched,
  isHtmlAnswer,
  mediaType,
} from './soft-404.ts';

export type { Fetched } from './soft-404.ts';

export interface DiscoveryCheck {
  present: boolean;
  /** The document was found and has the shape its specification requires. */
  valid: boolean;
  url: string;
  note: string | null;
}

export const discoveryPaths = {
  api_catalog: '/.well-known/api-catalog',
  oauth_protected_resource: '/.well-known/oauth-protected-resource',
  oauth_authorization_server: '/.well-known/oauth-authorization-server',
  mcp_server_card: '/.well-known/mcp/server-card.json',
  mcp_json: '/.well-known/mcp.json',
  mcp_catalog: '/.well-known/mcp/catalog.json',
  x402: '/.well-known/x402.json',
} as const;

function json(fetched: Fetched): Record<string, unknown> | null {
  try {
    const value = JSON.parse(fetched.body) as unknown;
    return value && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

export const softNotFoundNote = 'answered like a made-up path (a soft 404)';

/** Why what was fetched is no document at all (no credit), or null when there is one to judge. */
function missing(
  fetched: Fetched | null,
  url: string,
  unknown: AnswerFingerprint | null,
): DiscoveryCheck | null {
  if (!fetched) return { present: false, valid: false, url, note: 'not fetched' };
  if (fetched.status < 200 || fetched.status >= 300)
    return { present: false, valid: false, url: fetched.url, note: `HTTP ${fetched.status}` };
  if (answersLikeUnknownPath(fetched, unknown))
    return { present: false, valid: false, url: fetched.url, note: softNotFoundNote };
  if (isHtmlAnswer(fetched))
    return { present: false, valid: false, url: fetched.url, note: 'an HTML page, not the document' };
  return null;
}

/** The JSON object a JSON document must be, or the check saying there is none. */
export function jsonDocument(
  fetched: Fetched | null,
  url: string,
  unknown: AnswerFingerprint | null,
): { doc: Record<string, unknown>; fetched: Fetched } | { absent: DiscoveryCheck } {
  const absent = missing(fetched, url, unknown);
  if (absent || !fetched) return { absent: absent as DiscoveryCheck };
  const doc = json(fetched);
  if (!doc) return { absent: { present: false, valid: false, url: fetched.url, note: 'not a JSON object' } };
  return { doc, fetched };
}

/** RFC 9727: a linkset whose entries each have an `anchor`; the service-desc targets are returned. */
export function checkApiCatalog(
  got: Fetched | null,
  url: string,
  unknown: AnswerFingerprint | null = null,
): DiscoveryCheck & { service_descs: string[]; apis: number } {
  const found = jsonDocument(got, url, unknown);
  if ('absent' in found) return { ...found.absent, service_descs: [], apis: 0 };
  const { doc, fetched } = found;
  const linkset = doc.linkset;
  if (!Array.isArray(linkset)) {
    return {
      present: true,
      valid: false,
      url: fetched.url,
      note: 'not an RFC 9264 linkset (no "linkset" array)',
      service_descs: [],
      apis: 0,
    };
  }
  const serviceDescs: string[] = [];
  let unparsable = 0;
  for (const entry of linkset as Record<string, unknown>[]) {
    const descs = entry?.['service-desc'];
    if (Array.isArray(descs)) {
      for (const d of descs as { href?: unknown }[]) {
        // A site's own document: an href that is not a URL is its problem, not a reason to fail the scan.
        if (typeof d?.href === 'string' && URL.canParse(d.href, fetched.url)) {
          serviceDescs.push(new URL(d.href, fetched.url).href);
        } else unparsable++;
      }
    }
  }
  const anchored = (linkset as Record<string, unknown>[]).every((e) => typeof e?.anchor === 'string');
  const typeOk = /application\/linkset\+json/i.test(fetched.content_type ?? '');
  return {
    present: true,
    valid: anchored && linkset.length > 0 && unparsable === 0,
    url: fetched.url,
    note: unparsable
      ? `${unparsable} service-desc href(s) are not URLs`
      : typeOk
        ? null
        : 'served without the application/linkset+json content type',
    service_descs: serviceDescs,
    apis: linkset.length,
  };
}

export function checkProtectedResource(
  got: Fetched | null,
  url: string,
  unknown: AnswerFingerprint | null = null,
): DiscoveryCheck {
  const found = jsonDocument(got, url, unknown);
  if ('absent' in found) return found.absent;
  const { doc, fetched } = found;
  const valid = typeof doc.resource === 'string';
  return { present: true, valid, url: fetched.url, note: valid ? null : 'no "resource" member (RFC 9728)' };
}

export function checkAuthorizationServer(
  got: Fetched | null,
  url: string,
  unknown: AnswerFingerprint | null = null,
): DiscoveryCheck {
  const found = jsonDocument(got, url, unknown);
  if ('absent' in found) return found.absent;
  const { doc, fetched } = found;
  const valid = typeof doc.issuer === 'string';
  return { present: true, valid, url: fetched.url, note: valid ? null : 'no "issuer" member (RFC 8414)' };
}

/** A server card names the server and says how to connect (a remote URL or transport endpoint). */
export function checkMcpCard(
  got: Fetched | null,
  url: string,
  unknown: AnswerFingerprint | null = null,
): DiscoveryCheck {
  const found = jsonDocument(got, url, unknown);
  if ('absent' in found) return found.absent;
  const { doc, fetched } = found;
  const info = (doc.serverInfo ?? doc.server ?? doc) as Record<string, unknown>;
  const named = typeof info?.name === 'string' || typeof doc.name === 'string';
  const reachable =
    typeof doc.url === 'string' ||
    typeof doc.endpoint === 'string' ||
    Array.isArray(doc.remotes) ||
    typeof (doc.transport as Record<string, unknown> | undefined)?.endpoint === 'string' ||
    typeof doc.mcp_url === 'string';
  const valid = named && reachable;
  return {
    present: true,
    valid,
    url: fetched.url,
    note: valid ? null : 'needs a server name and a URL (url, endpoint, remotes or transport.endpoint)',
  };
}

/**
 * The SEP-2127 MCP Catalog: a JSON object whose `entries` point at server cards
 * (`type: application/mcp-server-card+json`, `url`). `cards` are the absolute card URLs, in order.
 */
export function readMcpCatalog(
  got: Fetched | null,
  url: string,
  unknown: AnswerFingerprint | null = null,
): { check: DiscoveryCheck; cards: string[] } {
  const found = jsonDocument(got, url, unknown);
  if ('absent' in found) return { check: found.absent, cards: [] };
  const { doc, fetched } = found;
  const entries = Array.isArray(doc.entries) ? (doc.entries as Record<string, unknown>[]) : [];
  const cards = entries
    .filter(
      (e) =>
        typeof e?.url === 'string' && (e.type === undefined || e.type === 'application/mcp-server-card+json'),
    )
    .flatMap((e) =>
      URL.canParse(e.url as string, fetched.url) ? [new URL(e.url as string, fetched.url).href] : [],
    );
  return {
    check: {
      present: true,
      valid: false,
      url: fetched.url,
      note: cards.length
        ? 'no listed server card on this site names the server and a URL'
        : 'the MCP catalog lists no server card',
    },
    cards,
  };
}

/** x402 discovery: a JSON document listing payable resources (`resources`, `items` or `accepts`). */
export function checkX402(
  got: Fetched | null,
  url: string,
  unknown: AnswerFingerprint | null = null,
): DiscoveryCheck {
  const found = jsonDocument(got, url, unknown);
  if ('absent' in found) return found.absent;
  const { doc, fetched } = found;
  const valid =
    Array.isArray(doc.resources) ||
    Array.isArray(doc.items) ||
    Array.isArray(doc.accepts) ||
    'x402Version' in doc;
  return { present: true, valid, url: fetched.url, note: valid ? null : 'no resources listed' };
}

/**
 * An OpenAPI document: JSON or YAML with an `openapi` (or `swagger`) version field. The field is
 * found by pattern so a document cut at the byte limit still counts; without it, only a JSON
 * object or YAML mapping is an (incomplete) description.
 */
export function checkOpenApi(
  fetched: Fetched | null,
  url: string,
  unknown: AnswerFingerprint | null = null,
): DiscoveryCheck {
  const absent = missing(fetched, url, unknown);
  if (absent || !fetched) return absent as DiscoveryCheck;
  const valid =
    /^\s*["']?(openapi|swagger)["']?\s*:/m.test(fetched.body) || /"(openapi|swagger)"\s*:/.test(fetched.body);
  if (valid) return { present: true, valid, url: fetched.url, note: null };
  if (!json(fetched) && !yamlMapping(fetched.body))
    return {
      present: false,
      valid: false,
      url: fetched.url,
      note: 'neither a JSON object nor a YAML mapping',
    };
  return { present: true, valid: false, url: fetched.url, note: 'no openapi version field' };
}

function yamlMapping(body: string): boolean {
  try {
    const value = parseYaml(body, { logLevel: 'silent' }) as unknown;
    return !!value && typeof value === 'object' && !Array.isArray(value);
  } catch {
    return false;
  }
}

export interface MarkdownNegotiation {
  supported: boolean;
  url: string;
  content_type: string | null;
  note: string | null;
}

/** The page asked for with `Accept: text/markdown` came back as markdown, not HTML. */
export function checkMarkdownNegotiation(fetched: Fetched | null, url: string): MarkdownNegotiation {
  if (!fetched) return { supported: false, url, content_type: null, note: 'not fetched' };
  const type = mediaType(fetched.content_type);
  if (fetched.status < 200 || fetched.status >= 300)
    return { supported: false, url: fetched.url, content_type: type, note: `HTTP ${fetched.status}` };
  const markdownType = type === 'text/markdown' || type === 'text/x-markdown';
  const supported = markdownType && !isHtmlAnswer(fetched);
  return {
    supported,
    url: fetched.url,
    content_type: type,
    note: supported
      ? null
      : markdownType
        ? 'labelled markdown but the body is HTML'
        : `answered ${type ?? 'no content type'}`,
  };
}

/** Paths of the agent documents added with scoring version 2 (issue 16). */
export const agentDocumentPaths = {
  /** A2A Agent Card (A2A 1.0 "Agent Discovery", the well-known URI). */
  a2a_agent_card: '/.well-known/agent-card.json',
  /** Agent Skills Discovery (Cloudflare-led RFC, draft v0.2.0). */
  agent_skills: '/.well-known/agent-skills/index.json',
  /** Web Bot Auth key directory (draft-meunier-webbotauth-httpsig-directory). */
  web_bot_auth: '/.well-known/http-message-signatures-directory',
  /** The x402 discovery document without the `.json` suffix, which some servers use. */
  x402_plain: '/.well-known/x402',
} as const;

/** A2A Agent Card: names the agent, says where to reach it, and lists its skills. */
export function checkA2aCard(
  got: Fetched | null,
  url: string,
  unknown: AnswerFingerprint | null = null,
): DiscoveryCheck {
  const found = jsonDocument(got, url, unknown);
  if ('absent' in found) return found.absent;
  const { doc, fetched } = found;
  const named = typeof doc.name === 'string' && doc.name.trim() !== '';
  const reachable =
    typeof doc.url === 'string' ||
    (Array.isArray(doc.supportedInterfaces) && doc.supportedInterfaces.length > 0) ||
    (Array.isArray(doc.additionalInterfaces) && doc.additionalInterfaces.length > 0);
  const skills = Array.isArray(doc.skills);
  const valid = named && reachable && skills;
  return {
    present: true,
    valid,
    url: fetched.url,
    note: valid ? null : 'needs name, url (or supportedInterfaces) and a skills array',
  };
}

/** Agent Skills index: entries (`skills`) each with a name and the URL of its SKILL.md or archive. */
export function checkAgentSkills(
  got: Fetched | null,
  url: string,
  unknown: AnswerFingerprint | null = null,
): DiscoveryCheck {
  const absent = missing(got, url, unknown);
  if (absent || !got) return absent as DiscoveryCheck;
  let value: unknown;
  try {
    value = JSON.parse(got.body);
  } catch {
    return { present: false, valid: false, url: got.url, note: 'not JSON' };
  }
  const entries = Array.isArray(value)
    ? value
    : value && typeof value === 'object' && Array.isArray((value as { skills?: unknown }).skills)
      ? ((value as { skills: unknown[] }).skills as unknown[])
      : null;
  if (!entries) return { present: true, valid: false, url: got.url, note: 'no "skills" array' };
  const complete = entries.filter(
    (e) =>
      !!e &&
      typeof e === 'object' &&
      typeof (e as { name?: unknown }).name === 'string' &&
      typeof (e as { url?: unknown }).url === 'string',
  ).length;
  const valid = entries.length > 0 && complete === entries.length;
  return {
    present: true,
    valid,
    url: got.url,
    note: valid ? null : entries.length ? 'entries need a name and a url' : 'the index lists no skill',
  };
}

/** Web Bot Auth key directory: a JWKS (`keys`) of the keys a site's agents sign requests with. */
export function checkWebBotAuth(
  got: Fetched | null,
  url: string,
  unknown: AnswerFingerprint | null = null,
): DiscoveryCheck {
  const found = jsonDocument(got, url, unknown);
  if ('absent' in found) return found.absent;
  const { doc, fetched } = found;
  const keys = Array.isArray(doc.keys) ? (doc.keys as Record<string, unknown>[]) : null;
  const valid = !!keys && keys.length > 0 && keys.every((k) => typeof k?.kty === 'string');
  return { present: true, valid, url: fetched.url, note: valid ? null : 'no JWKS "keys" with kty' };
}

/** The streamable HTTP endpoint a server card names, and the tools it lists (null: lists none). */
export function mcpCardEndpoint(
  body: string,
  cardUrl: string,
): { endpoint: string | null; tools: string[] | null } {
  let doc: Record<string, unknown>;
  try {
    const value = JSON.parse(body) as unknown;
    if (!value || typeof value !== 'object' || Array.isArray(value)) return { endpoint: null, tools: null };
    doc = value as Record<string, unknown>;
  } catch {
    return { endpoint: null, tools: null };
  }
  const remotes = Array.isArray(doc.remotes) ? (doc.remotes as Record<string, unknown>[]) : [];
  const remote =
    remotes.find((r) => r?.type === 'streamable-http' && typeof r.url === 'string') ??
    remotes.find((r) => typeof r?.url === 'string');
  const candidates = [
    remote?.url,
    (doc.transport as Record<string, unknown> | undefined)?.endpoint,
    doc.endpoint,
    doc.url,
    doc.mcp_url,
  ];
  const raw = candidates.find((c): c is string => typeof c === 'string' && URL.canParse(c, cardUrl));
  const toolList = Array.isArray(doc.tools)
    ? (doc.tools as unknown[])
    : Array.isArray((doc.capabilities as Record<string, unknown> | undefined)?.tools)
      ? ((doc.capabilities as { tools: unknown[] }).tools as unknown[])
      : null;
  const tools = toolList
    ? toolList
        .map((t) => (typeof t === 'string' ? t : (t as { name?: unknown })?.name))
        .filter((n): n is string => typeof n === 'string')
    : null;
  return { endpoint: raw ? new URL(raw, cardUrl).href : null, tools };
}

/** `servers[].url` of an OpenAPI document (JSON or YAML), absolute against the document's URL. */
export function openApiServers(body: string, docUrl: string): { parsed: boolean; servers: string[] } {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    try {
      value = parseYaml(body, { logLevel: 'silent' });
    } catch {
      return { parsed: false, servers: [] };
    }
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) return { parsed: false, servers: [] };
  const doc = value as Record<string, unknown>;
  if (typeof doc.openapi !== 'string' && typeof doc.swagger !== 'string')
    return { parsed: false, servers: [] };
  const servers = (Array.isArray(doc.servers) ? (doc.servers as { url?: unknown }[]) : [])
    .map((s) => (typeof s?.url === 'string' ? s.url.replace(/\{[^}]*\}/g, '') : null))
    .filter((u): u is string => !!u && URL.canParse(u, docUrl))
    .map((u) => new URL(u, docUrl).href);
  return { parsed: true, servers: [...new Set(servers)] };
}
