/**
 * Agent commerce, judged from what was fetched (the crawler does the fetching, `crawl/commerce.ts`):
 *
 * - x402 terms in a live 402: v2 in the `PAYMENT-REQUIRED` header, v1 in the JSON body, validated
 *   with `@x402/core`'s own schemas (x402 specification, "PaymentRequired").
 * - MPP challenges: `WWW-Authenticate: Payment id=, realm=, method=, intent=, request=` on a 402
 *   (draft-httpauth-payment, the Machine Payments Protocol core). Parsed here by the RFC 9110
 *   section 11 grammar: the specification authors' SDK (`mppx`) cannot be installed beside our
 *   viem, whose optional peer range asks for an `mppx` newer than the registry has.
 * - UCP: the business profile at `/.well-known/ucp` (Universal Commerce Protocol, "Profile"):
 *   `ucp.version` (a date), `ucp.services` (each with a transport and an endpoint) and
 *   `ucp.capabilities`.
 * - ACP: the discovery document at `/.well-known/acp.json` (Agentic Commerce Protocol RFC
 *   "Discovery", conformance checklist): `protocol.name` "acp", a date `protocol.version`,
 *   non-empty `protocol.supported_versions`, `api_base_url`, `transports` with "rest" and
 *   `capabilities.services`.
 * - AP2: the A2A agent card's `capabilities.extensions` entry for the AP2 extension URI, whose
 *   `params.roles` names at least one AP2 role (AP2 "A2A Extension").
 */
import { decodePaymentRequiredHeader } from '@x402/core/http';
import { parsePaymentRequired } from '@x402/core/schemas';
import type { DiscoveryCheck } from './discovery.ts';
import { jsonDocument } from './discovery.ts';
import type { AnswerFingerprint, Fetched } from './soft-404.ts';

export const commercePaths = {
  ucp: '/.well-known/ucp',
  acp: '/.well-known/acp.json',
  /** The compatibility name the ACP discovery RFC also allows. */
  acp_plain: '/.well-known/acp',
} as const;

const scalar = (v: unknown): v is string | number | boolean =>
  typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';

/**
 * The resources an x402 discovery document lists (`resources` of strings or objects, `items`), as
 * an unpaid GET asks for them: one that gives an example input (`input_example` of flat values)
 * is asked with it as the query, because a resource that checks its input before it names a price
 * answers a bare GET 400. Resources marked `available: false` are left out.
 */
export function x402ProbeUrls(body: string, docUrl: string): string[] {
  let doc: unknown;
  try {
    doc = JSON.parse(body);
  } catch {
    return [];
  }
  if (!isObject(doc)) return [];
  const list = [
    ...(Array.isArray(doc.resources) ? doc.resources : []),
    ...(Array.isArray(doc.items) ? doc.items : []),
  ];
  const urls: string[] = [];
  for (const entry of list) {
    if (isObject(entry) && entry.available === false) continue;
    const raw = typeof entry === 'string' ? entry : isObject(entry) ? (entry.resource ?? entry.url) : null;
    if (typeof raw !== 'string' || !URL.canParse(raw, docUrl)) continue;
    const url = new URL(raw, docUrl);
    const example = isObject(entry) && isObject(entry.input_example) ? entry.input_example : null;
    if (example && Object.values(example).every(scalar))
      for (const [k, v] of Object.entries(example)) url.searchParams.set(k, String(v));
    urls.push(url.href);
  }
  return [...new Set(urls)];
}

/** x402 terms in an answer: valid when the 402 carries a PaymentRequired the x402 schemas accept. */
export interface X402Terms {
  valid: boolean;
  version: number | null;
  /** `scheme network` of each payment option offered. */
  options: string[];
  note: string | null;
}

export function x402TermsOf(status: number, paymentRequired: string | null, body: string): X402Terms {
  const none = (note: string, version: number | null = null): X402Terms => ({
    valid: false,
    version,
    options: [],
    note,
  });
  if (status !== 402) return none(`answered HTTP ${status}, not 402`);
  let value: unknown;
  if (paymentRequired) {
    try {
      value = decodePaymentRequiredHeader(paymentRequired);
    } catch {
      return none('PAYMENT-REQUIRED is not base64 JSON');
    }
  } else {
    try {
      value = JSON.parse(body);
    } catch {
      return none('no PAYMENT-REQUIRED header and no JSON body');
    }
  }
  const version =
    typeof (value as { x402Version?: unknown })?.x402Version === 'number'
      ? (value as { x402Version: number }).x402Version
      : null;
  const parsed = parsePaymentRequired(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? issue.path.join('.') : 'the document';
    return none(`x402 terms invalid at ${where}: ${issue?.message ?? 'does not match the schema'}`, version);
  }
  const options = parsed.data.accepts.map((a) => `${a.scheme} ${a.network}`);
  return { valid: true, version: parsed.data.x402Version, options, note: null };
}

/** One MPP challenge as the scan keeps it (the request's amounts are not kept). */
export interface MppChallenge {
  method: string;
  intent: string;
  realm: string;
  expires: string | null;
}

export interface MppAnswer {
  /** A `Payment` challenge was offered at all. */
  offered: boolean;
  valid: boolean;
  challenges: MppChallenge[];
  note: string | null;
}

/** `WWW-Authenticate: Payment` challenges of a 402 (draft-httpauth-payment section 5). */
export function mppChallengesOf(status: number, wwwAuthenticate: string | null): MppAnswer {
  const payment = wwwAuthenticate
    ? authChallenges(wwwAuthenticate).filter((c) => c.scheme === 'payment')
    : [];
  if (payment.length === 0) return { offered: false, valid: false, challenges: [], note: null };
  if (status !== 402)
    return {
      offered: true,
      valid: false,
      challenges: [],
      note: `a Payment challenge on HTTP ${status}, not 402`,
    };
  const problems: string[] = [];
  const challenges: MppChallenge[] = [];
  for (const { params } of payment) {
    const missing = ['id', 'realm', 'method', 'intent', 'request'].filter((k) => !params[k]);
    if (missing.length) {
      problems.push(`a Payment challenge lacks ${missing.join(', ')}`);
      continue;
    }
    if (!isObject(base64urlJson(params.request as string))) {
      problems.push("a Payment challenge's request is not base64url JSON");
      continue;
    }
    challenges.push({
      method: params.method as string,
      intent: params.intent as string,
      realm: params.realm as string,
      expires: params.expires ?? null,
    });
  }
  return {
    offered: true,
    valid: challenges.length > 0,
    challenges,
    note: problems.length ? problems.join('; ') : null,
  };
}

function base64urlJson(value: string): unknown {
  try {
    return JSON.parse(Buffer.from(value, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
}

const token = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+/;

/**
 * The challenges of a `WWW-Authenticate` value (RFC 9110 section 11.6.1: `#challenge`, each
 * `auth-scheme [ 1*SP ( token68 / #auth-param ) ]`), schemes lower-cased, parameter names too.
 */
export function authChallenges(value: string): { scheme: string; params: Record<string, string> }[] {
  const out: { scheme: string; params: Record<string, string> }[] = [];
  let rest = value.trim();
  let current: { scheme: string; params: Record<string, string> } | null = null;
  while (rest.length) {
    rest = rest.replace(/^[\s,]+/, '');
    const name = token.exec(rest)?.[0];
    if (!name) break;
    const after = rest.slice(name.length).replace(/^\s*/, '');
    if (after.startsWith('=') && current && !after.startsWith('==')) {
      const [v, remaining] = paramValue(after.slice(1).replace(/^\s*/, ''));
      current.params[name.toLowerCase()] = v;
      rest = remaining;
      continue;
    }
    current = { scheme: name.toLowerCase(), params: {} };
    out.push(current);
    rest = after;
    // token68 after the scheme: kept as no parameter (Payment uses auth-params).
    const t68 = /^[A-Za-z0-9\-._~+/]+=*(?=\s*(,|$))/.exec(rest);
    if (t68 && !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+\s*=[^=]/.test(rest)) rest = rest.slice(t68[0].length);
  }
  return out;
}

/** An auth-param value: a quoted-string (with quoted-pairs) or a token. */
function paramValue(input: string): [string, string] {
  if (!input.startsWith('"')) {
    const v = /^[^\s,]*/.exec(input)?.[0] ?? '';
    return [v, input.slice(v.length)];
  }
  let v = '';
  for (let i = 1; i < input.length; i++) {
    const c = input[i] as string;
    if (c === '\\') {
      v += input[i + 1] ?? '';
      i++;
    } else if (c === '"') return [v, input.slice(i + 1)];
    else v += c;
  }
  return [v, ''];
}

const dateVersion = /^\d{4}-\d{2}-\d{2}$/;
const isObject = (v: unknown): v is Record<string, unknown> =>
  !!v && typeof v === 'object' && !Array.isArray(v);

export interface CommerceManifest extends DiscoveryCheck {
  /** The protocol version the manifest declares. */
  version: string | null;
  /** UCP: the services and capabilities named; ACP: the services. */
  names: string[];
  /** Where the protocol's API is (UCP service endpoints, ACP `api_base_url`). */
  endpoints: string[];
}

const absentManifest = (check: DiscoveryCheck): CommerceManifest => ({
  ...check,
  version: null,
  names: [],
  endpoints: [],
});

/** UCP entries are keyed by reverse-DNS name, each a list of versioned entries (or one entry). */
function ucpEntries(value: unknown): { name: string; entries: Record<string, unknown>[] }[] {
  if (Array.isArray(value))
    return value.filter(isObject).map((e) => ({ name: String(e.name ?? ''), entries: [e] }));
  if (!isObject(value)) return [];
  return Object.entries(value).map(([name, v]) => ({
    name,
    entries: (Array.isArray(v) ? v : [v]).filter(isObject),
  }));
}

/** The UCP business profile (ucp.dev "Profile": `ucp.version`, `ucp.services`, `ucp.capabilities`). */
export function checkUcpProfile(
  got: Fetched | null,
  url: string,
  unknown: AnswerFingerprint | null,
): CommerceManifest {
  const found = jsonDocument(got, url, unknown);
  if ('absent' in found) return absentManifest(found.absent);
  const ucp = found.doc.ucp;
  const at = found.fetched.url;
  if (!isObject(ucp))
    return { ...absentManifest({ present: true, valid: false, url: at, note: 'no "ucp" object' }) };
  const version = typeof ucp.version === 'string' ? ucp.version : null;
  const services = ucpEntries(ucp.services);
  const capabilities = ucpEntries(ucp.capabilities);
  const endpoints = services.flatMap((s) =>
    s.entries.flatMap((e) =>
      typeof e.endpoint === 'string' && URL.canParse(e.endpoint) ? [e.endpoint] : [],
    ),
  );
  const problems = [
    version && dateVersion.test(version) ? null : 'ucp.version is not a date (YYYY-MM-DD)',
    services.some((s) =>
      s.entries.some((e) => typeof e.transport === 'string' && typeof e.endpoint === 'string'),
    )
      ? null
      : 'no service with a transport and an endpoint',
    endpoints.length ? null : 'no service endpoint is a URL',
    capabilities.length ? null : 'no capabilities',
  ].filter((p): p is string => p !== null);
  return {
    present: true,
    valid: problems.length === 0,
    url: at,
    note: problems.length ? problems.join('; ') : null,
    version,
    names: [...services, ...capabilities].map((e) => e.name).filter(Boolean),
    endpoints,
  };
}

/** The ACP discovery document (ACP RFC "Discovery", section 10's conformance checklist). */
export function checkAcpDiscovery(
  got: Fetched | null,
  url: string,
  unknown: AnswerFingerprint | null,
): CommerceManifest {
  const found = jsonDocument(got, url, unknown);
  if ('absent' in found) return absentManifest(found.absent);
  const { doc } = found;
  const protocol = isObject(doc.protocol) ? doc.protocol : {};
  const version = typeof protocol.version === 'string' ? protocol.version : null;
  const base =
    typeof doc.api_base_url === 'string' && URL.canParse(doc.api_base_url) ? doc.api_base_url : null;
  const transports = Array.isArray(doc.transports) ? doc.transports : [];
  const services =
    isObject(doc.capabilities) && Array.isArray(doc.capabilities.services)
      ? doc.capabilities.services.filter((s): s is string => typeof s === 'string')
      : null;
  const problems = [
    protocol.name === 'acp' ? null : 'protocol.name is not "acp"',
    version && dateVersion.test(version) ? null : 'protocol.version is not a date (YYYY-MM-DD)',
    Array.isArray(protocol.supported_versions) && protocol.supported_versions.length
      ? null
      : 'no protocol.supported_versions',
    base ? null : 'no api_base_url',
    transports.includes('rest') ? null : 'transports lacks "rest"',
    services ? null : 'no capabilities.services array',
  ].filter((p): p is string => p !== null);
  return {
    present: true,
    valid: problems.length === 0,
    url: found.fetched.url,
    note: problems.length ? problems.join('; ') : null,
    version,
    names: services ?? [],
    endpoints: base ? [base] : [],
  };
}

/** The AP2 A2A extension URI (AP2 v0.1 "A2A Extension"); later versions keep the prefix. */
export const AP2_EXTENSION_URI = 'https://github.com/google-agentic-commerce/ap2/tree/v0.1';
const ap2Roles = new Set(['merchant', 'shopper', 'credentials-provider', 'payment-processor']);

export interface Ap2Declaration {
  card_url: string;
  /** The card lists the AP2 extension. */
  declared: boolean;
  valid: boolean;
  roles: string[];
  note: string | null;
}

/** AP2 as the A2A agent card declares it; null when the card is no JSON object. */
export function ap2OfAgentCard(body: string, cardUrl: string): Ap2Declaration | null {
  let card: unknown;
  try {
    card = JSON.parse(body);
  } catch {
    return null;
  }
  if (!isObject(card)) return null;
  const capabilities = isObject(card.capabilities) ? card.capabilities : {};
  const extensions = Array.isArray(capabilities.extensions) ? capabilities.extensions.filter(isObject) : [];
  const ap2 = extensions.find(
    (e) =>
      typeof e.uri === 'string' &&
      e.uri.toLowerCase().startsWith('https://github.com/google-agentic-commerce/ap2'),
  );
  if (!ap2) return { card_url: cardUrl, declared: false, valid: false, roles: [], note: null };
  const params = isObject(ap2.params) ? ap2.params : {};
  const roles = Array.isArray(params.roles)
    ? params.roles.filter((r): r is string => typeof r === 'string')
    : [];
  const unknownRoles = roles.filter((r) => !ap2Roles.has(r));
  const valid = roles.length > 0 && unknownRoles.length === 0;
  return {
    card_url: cardUrl,
    declared: true,
    valid,
    roles,
    note: valid
      ? null
      : roles.length === 0
        ? 'the AP2 extension names no params.roles'
        : `unknown AP2 role(s): ${unknownRoles.join(', ')}`,
  };
}

/**
 * Paid operations an OpenAPI document marks for MPP discovery (`x-payment-info`, mpp.dev
 * "Discovery") that can be asked for with a bare GET: no path parameters.
 */
export function mppPaidOperations(openapi: unknown, docUrl: string, serverUrl: string | null): string[] {
  if (!isObject(openapi) || !isObject(openapi.paths)) return [];
  const base = serverUrl ?? new URL(docUrl).origin;
  const urls: string[] = [];
  for (const [path, item] of Object.entries(openapi.paths)) {
    if (!isObject(item) || path.includes('{')) continue;
    const get = item.get;
    if (!isObject(get) || !isObject(get['x-payment-info'])) continue;
    const joined = `${base.replace(/\/$/, '')}${path.startsWith('/') ? path : `/${path}`}`;
    if (URL.canParse(joined)) urls.push(new URL(joined).href);
  }
  return urls;
}
