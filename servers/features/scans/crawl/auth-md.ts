/**
 * auth.md (https://workos.com/auth-md/docs/auth-md): how an agent registers here. Read as an agent
 * does: `/auth.md` (a Markdown guide), the protected resource metadata's `authorization_servers`
 * (RFC 9728; the site's own, else those the OAuth chain found behind the MCP server's 401), the
 * first authorization server's metadata (RFC 8414, each layout clients use) and its `agent_auth`
 * block, then the endpoints that block names, each asked with GET: a registration endpoint that
 * takes POST answers 405 or 400, and is there; 404 or no answer says it is not. Nothing is POSTed:
 * registering is not a scanner's business (a passive scan, as isitagentready.com's skill says too).
 */
import type { AuthMdFacts } from '../site-facts.ts';
import { authorizationServerMetadataUrls, jsonObject, type OAuthChain } from '../verify.ts';
import type { SiteDocuments, UnknownPathJudge } from './documents.ts';
import { type FetchOutcome, textOf } from './session.ts';
import type { Site } from './site.ts';

export const AUTH_MD_PATH = '/auth.md';
const ENDPOINTS_CHECKED = 4;

/** The phase: never throws; what could not be read is said in the facts. */
export async function readAuthMd(
  site: Site,
  docs: SiteDocuments,
  judge: UnknownPathJudge,
  chain: OAuthChain | null,
): Promise<AuthMdFacts> {
  const { session } = site;
  const guideUrl = site.at(AUTH_MD_PATH);
  const prm = protectedResourceOf(site, docs.prm, judge, chain);
  const issuer = prm.authorization_servers[0];
  // The guide and the authorization server's metadata are independent: asked side by side.
  const [guideOutcome, server] = await Promise.all([
    site.mayFetch(guideUrl)
      ? session.get(guideUrl, 'text/markdown, text/plain;q=0.9, */*;q=0.1', 256 * 1024, { topic: 'auth_md' })
      : Promise.resolve(null),
    issuer && !session.signal.aborted ? readAgentAuth(site, issuer) : Promise.resolve(null),
  ]);
  const guide = judgeGuide(guideUrl, guideOutcome, judge);
  const block = server?.agent_auth ? judgeAgentAuth(server.agent_auth) : null;
  const endpoints = block ? await askEndpoints(site, block.endpoints) : [];
  return {
    guide,
    protected_resource: prm,
    authorization_server: server
      ? {
          issuer: server.issuer,
          url: server.url,
          has_agent_auth: server.agent_auth !== null,
          note: server.note,
        }
      : null,
    agent_auth: block ? { ...block.facts } : null,
    endpoints,
  };
}

const headingLine = /^#{1,6}\s+\S/m;
const aboutRegistration = /\b(regist|authenticat|oauth|token|credential|sign[\s-]?(?:up|in))/i;

/** A Markdown guide: 2xx, not HTML, not the answer to any path, with a heading, about registering. */
export function judgeGuide(
  url: string,
  outcome: FetchOutcome | null,
  judge: Pick<UnknownPathJudge, 'like' | 'plainText'>,
): AuthMdFacts['guide'] {
  if (!outcome) return { url, status: null, valid: false, note: 'disallowed for the scanner by robots.txt' };
  if (!outcome.ok) return { url, status: null, valid: false, note: outcome.error };
  const { status } = outcome.result;
  const answer = textOf(outcome);
  if (!answer) return { url, status, valid: false, note: `HTTP ${status}` };
  if (judge.like(outcome)) return { url, status, valid: false, note: 'the same answer as any unknown path' };
  if (!judge.plainText(outcome)) return { url, status, valid: false, note: 'an HTML page, not Markdown' };
  if (!headingLine.test(answer.body)) return { url, status, valid: false, note: 'no Markdown heading' };
  if (!aboutRegistration.test(answer.body))
    return { url, status, valid: false, note: 'says nothing about registering or authenticating' };
  return { url: answer.final_url, status, valid: true, note: null };
}

function protectedResourceOf(
  site: Site,
  prm: FetchOutcome,
  judge: UnknownPathJudge,
  chain: OAuthChain | null,
): AuthMdFacts['protected_resource'] {
  const url = prm.ok ? prm.result.final_url : site.at('/.well-known/oauth-protected-resource');
  const answer = textOf(prm);
  const doc = answer && !judge.like(prm) ? jsonObject(answer.body) : null;
  const own = doc && Array.isArray(doc.authorization_servers) ? urlsOf(doc.authorization_servers) : [];
  if (own.length) return { url, authorization_servers: own, note: null };
  const found = chain?.authorization_servers ?? [];
  return {
    url,
    authorization_servers: found,
    note: found.length
      ? "no authorization_servers at the site root; taken from the MCP server's protected resource metadata"
      : doc
        ? 'no authorization_servers'
        : 'no protected resource metadata',
  };
}

interface AuthorizationServerRead {
  issuer: string;
  url: string;
  agent_auth: Record<string, unknown> | null;
  note: string | null;
}

/** The issuer's metadata at the first layout that answers with a JSON object. */
async function readAgentAuth(site: Site, issuer: string): Promise<AuthorizationServerRead> {
  const candidates = authorizationServerMetadataUrls(issuer);
  let note = 'no metadata document answered';
  for (const { url } of candidates) {
    if (site.session.signal.aborted) break;
    const outcome = await site.session.get(url, 'application/json', 128 * 1024, { topic: 'auth_md' });
    const answer = textOf(outcome);
    const doc = answer ? jsonObject(answer.body) : null;
    if (!doc) {
      note = outcome.ok ? `HTTP ${outcome.result.status} at ${url}` : `${url}: ${outcome.error}`;
      continue;
    }
    const block = doc.agent_auth;
    return block && typeof block === 'object' && !Array.isArray(block)
      ? { issuer, url, agent_auth: block as Record<string, unknown>, note: null }
      : { issuer, url, agent_auth: null, note: 'the metadata has no agent_auth object' };
  }
  return { issuer, url: candidates[0]?.url ?? issuer, agent_auth: null, note };
}

/** The `agent_auth` block as the auth.md protocol lays it out, and what it lacks. */
export function judgeAgentAuth(block: Record<string, unknown>): {
  facts: NonNullable<AuthMdFacts['agent_auth']>;
  endpoints: { name: string; url: string }[];
} {
  const url = (key: string) =>
    typeof block[key] === 'string' && URL.canParse(block[key]) ? block[key] : null;
  const types = Array.isArray(block.identity_types_supported)
    ? block.identity_types_supported.filter((t): t is string => typeof t === 'string')
    : [];
  const complete = types.filter((type) => methodComplete(type, block[type]));
  const problems = [
    url('skill') ? null : 'no skill URL',
    url('register_uri') ? null : 'no register_uri',
    types.length ? null : 'no identity_types_supported',
    types.length && !complete.length
      ? `no identity type has its block with credential_types_supported${types.includes('identity_assertion') ? ' (and assertion_types_supported)' : ''}`
      : null,
  ].filter((p): p is string => p !== null);
  const endpoints = ['skill', 'register_uri', 'claim_uri', 'revocation_uri']
    .map((name) => ({ name, url: url(name) }))
    .filter((e): e is { name: string; url: string } => e.url !== null && /^https?:/.test(e.url))
    .slice(0, ENDPOINTS_CHECKED);
  return {
    facts: {
      skill: url('skill'),
      register_uri: url('register_uri'),
      identity_types: types,
      complete_types: complete,
      problems,
    },
    endpoints,
  };
}

/** `anonymous: {credential_types_supported}`, `identity_assertion: {assertion_types_supported, credential_types_supported}`. */
function methodComplete(type: string, value: unknown): boolean {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return false;
  const v = value as Record<string, unknown>;
  const nonEmpty = (x: unknown) => Array.isArray(x) && x.length > 0;
  if (!nonEmpty(v.credential_types_supported)) return false;
  return type !== 'identity_assertion' || nonEmpty(v.assertion_types_supported);
}

/** Each endpoint with GET: the skill must answer 2xx; the others anything below 500 but 404. */
async function askEndpoints(
  site: Site,
  endpoints: { name: string; url: string }[],
): Promise<AuthMdFacts['endpoints']> {
  return Promise.all(
    endpoints.map(async ({ name, url }) => {
      const got = await site.session.probe(url, { topic: 'auth_md', accept: '*/*', maxBytes: 16 * 1024 });
      if (!got.ok) return { name, url, status: null, ok: false, note: got.error };
      const ok =
        name === 'skill' ? got.status >= 200 && got.status < 300 : got.status < 500 && got.status !== 404;
      return { name, url, status: got.status, ok, note: ok ? null : `HTTP ${got.status}` };
    }),
  );
}

const urlsOf = (list: unknown[]): string[] =>
  list.filter((x): x is string => typeof x === 'string' && URL.canParse(x));
