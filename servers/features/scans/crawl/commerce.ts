/**
 * The commerce phase of a crawl (issue 35): the manifests of the agent commerce protocols (UCP,
 * ACP, AP2 in the A2A card) and the paid resources the site lists, each asked for once without
 * payment: the answer is judged for x402 terms and for MPP challenges alike, and the x402 check
 * reads the same answers (`x402VerificationOf`), so no resource is asked for twice.
 */
import {
  ap2OfAgentCard,
  checkAcpDiscovery,
  checkUcpProfile,
  commercePaths,
  mppChallengesOf,
  mppPaidOperations,
  x402ProbeUrls,
  x402TermsOf,
} from '../collectors/commerce.ts';
import { openApiServers } from '../collectors/discovery.ts';
import type { CommerceFacts, PaidResourceAnswer, X402Verification } from '../site-facts.ts';
import type { UnknownPathJudge } from './documents.ts';
import { asFetched, type FetchOutcome, type FetchResult, textOf } from './session.ts';
import type { Site } from './site.ts';

/** Paid resources asked for without payment, at most. */
const PAID_RESOURCES_CHECKED = 3;

export async function readCommerce(
  site: Site,
  found: {
    judge: UnknownPathJudge;
    a2aCard: FetchOutcome;
    x402Doc: FetchResult | null;
    openapi: { url: string; body: string } | null;
  },
): Promise<CommerceFacts> {
  const { session } = site;
  const get = (path: string) =>
    session.get(site.at(path), 'application/json, */*;q=0.1', 256 * 1024, { topic: 'commerce' });
  const [ucpOutcome, acpOutcome, paid] = await Promise.all([
    get(commercePaths.ucp),
    get(commercePaths.acp),
    askPaidResources(site, paidCandidates(site, found.x402Doc, found.openapi)),
  ]);
  found.judge.like(ucpOutcome);
  found.judge.like(acpOutcome);
  const unknown = found.judge.answer;
  let acp = checkAcpDiscovery(asFetched(acpOutcome), site.at(commercePaths.acp), unknown);
  if (!acp.present && !session.signal.aborted) {
    const plain = await get(commercePaths.acp_plain);
    found.judge.like(plain);
    const other = checkAcpDiscovery(asFetched(plain), site.at(commercePaths.acp_plain), unknown);
    if (other.present) acp = other;
  }
  const card = textOf(found.a2aCard);
  return {
    paid,
    ucp: checkUcpProfile(asFetched(ucpOutcome), site.at(commercePaths.ucp), unknown),
    acp,
    ap2: card && !found.judge.like(found.a2aCard) ? ap2OfAgentCard(card.body, card.final_url) : null,
  };
}

/** The x402 document's resources first, then OpenAPI operations marked for MPP discovery. */
function paidCandidates(
  site: Site,
  x402Doc: FetchResult | null,
  openapi: { url: string; body: string } | null,
): { url: string; source: PaidResourceAnswer['source'] }[] {
  const listed = x402Doc ? x402ProbeUrls(x402Doc.body, x402Doc.final_url) : [];
  let marked: string[] = [];
  if (openapi) {
    const { servers } = openApiServers(openapi.body, openapi.url);
    marked = mppPaidOperations(parsedOpenApi(openapi.body), openapi.url, servers[0] ?? null);
  }
  const seen = new Set<string>();
  return (
    [
      ...listed.map((url) => ({ url, source: 'x402' as const })),
      ...marked.map((url) => ({ url, source: 'openapi' as const })),
    ]
      // Not held to robots.txt: the site lists these for machine clients to call (a closed path
      // there keeps crawlers from wasting calls, not agents from paying), as the x402 check always did.
      .filter((c) => site.onSite(c.url) && !seen.has(c.url) && seen.add(c.url))
      .slice(0, PAID_RESOURCES_CHECKED)
  );
}

function parsedOpenApi(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return null; // a YAML document lists its x-payment-info the same way, but is read only as JSON here
  }
}

function askPaidResources(
  site: Site,
  candidates: { url: string; source: PaidResourceAnswer['source'] }[],
): Promise<PaidResourceAnswer[]> {
  return Promise.all(
    candidates.map(async ({ url, source }): Promise<PaidResourceAnswer> => {
      const got = await site.session.probe(url, {
        topic: source === 'x402' ? 'x402' : 'commerce',
        accept: 'application/json',
        maxBytes: 32 * 1024,
      });
      if (!got.ok)
        return {
          url,
          source,
          status: null,
          x402: { valid: false, version: null, options: [], note: got.error },
          mpp: { offered: false, valid: false, challenges: [], note: null },
        };
      return {
        url,
        source,
        status: got.status,
        x402: x402TermsOf(got.status, got.headers['payment-required'] ?? null, got.body),
        mpp: mppChallengesOf(got.status, got.headers['www-authenticate'] ?? null),
      };
    }),
  );
}

/** The x402 check's view of the same answers: the x402 document's resources. */
export function x402VerificationOf(
  doc: FetchResult | null,
  commerce: CommerceFacts,
): X402Verification | null {
  if (!doc) return null;
  const resources = commerce.paid
    .filter((p) => p.source === 'x402')
    .map((p) => ({
      url: p.url,
      status: p.status,
      // An answer that asks for input first (400, 422) says nothing about payment either way.
      verdict: p.x402.valid
        ? ('valid' as const)
        : p.status === 400 || p.status === 422
          ? ('needs_input' as const)
          : ('failed' as const),
      note: p.x402.note,
    }));
  return { url: doc.final_url, resources };
}
