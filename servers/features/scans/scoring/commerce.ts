/**
 * Agent commerce (issue 35), one check with a sub-finding per protocol: the protocols are
 * alternatives (a shop needs one way for an agent to buy, not all five), so the score asks for at
 * least one spoken well and nothing published broken, and `seen` names each protocol's state.
 * Scored on a shop; informational on content and API sites, as the public readiness scanners do.
 */
import type { CommerceFacts } from '../site-facts.ts';
import { notCollected } from './judging.ts';
import type { CheckDef, Evaluation } from './model.ts';

/** Each protocol's specification (cited in the rule; a finding points at the one to fix). */
export const commerceSpecs = {
  x402: 'https://github.com/coinbase/x402/blob/main/specs/x402-specification.md',
  MPP: 'https://datatracker.ietf.org/doc/draft-httpauth-payment/',
  UCP: 'https://ucp.dev/specification/overview',
  ACP: 'https://github.com/agentic-commerce-protocol/agentic-commerce-protocol/blob/main/rfcs/rfc.discovery.md',
  AP2: 'https://ap2-protocol.org/a2a-extension',
} as const;

interface ProtocolState {
  protocol: keyof typeof commerceSpecs;
  spoken: string[];
  broken: string[];
}

const pathOf = (url: string) => {
  try {
    return new URL(url).pathname;
  } catch {
    return url;
  }
};

/** x402 and MPP, from the paid resources' unpaid answers. */
function paidStates(commerce: CommerceFacts): ProtocolState[] {
  const x402: ProtocolState = { protocol: 'x402', spoken: [], broken: [] };
  const mpp: ProtocolState = { protocol: 'MPP', spoken: [], broken: [] };
  for (const p of commerce.paid) {
    const where = pathOf(p.url);
    if (p.x402.valid)
      x402.spoken.push(`${where} answers 402 with v${p.x402.version} terms (${p.x402.options.join(', ')})`);
    if (p.mpp.valid)
      mpp.spoken.push(
        `${where} challenges with ${p.mpp.challenges.map((c) => `${c.method} ${c.intent}`).join(', ')}`,
      );
    if (p.mpp.offered && !p.mpp.valid)
      mpp.broken.push(`${where}: ${p.mpp.note ?? 'invalid Payment challenge'}`);
    // Input asked for first (400, 422) says nothing either way; anything else without terms is broken.
    const asksInput = p.status === 400 || p.status === 422;
    if (!p.x402.valid && !p.mpp.valid && !p.mpp.offered && !asksInput)
      (p.source === 'x402' ? x402 : mpp).broken.push(
        `${where}: ${p.status === null ? (p.x402.note ?? 'no answer') : (p.x402.note ?? `HTTP ${p.status}`)}`,
      );
  }
  return [x402, mpp];
}

function manifestStates(commerce: CommerceFacts): ProtocolState[] {
  const states: ProtocolState[] = [];
  for (const [protocol, m] of [
    ['UCP', commerce.ucp],
    ['ACP', commerce.acp],
  ] as const) {
    const state: ProtocolState = { protocol, spoken: [], broken: [] };
    if (m.valid)
      state.spoken.push(`${pathOf(m.url)} version ${m.version} (${m.names.slice(0, 4).join(', ')})`);
    else if (m.present) state.broken.push(`${pathOf(m.url)}: ${m.note ?? 'invalid'}`);
    states.push(state);
  }
  const ap2: ProtocolState = { protocol: 'AP2', spoken: [], broken: [] };
  if (commerce.ap2?.valid)
    ap2.spoken.push(`the A2A card's AP2 extension (roles ${commerce.ap2.roles.join(', ')})`);
  else if (commerce.ap2?.declared) ap2.broken.push(`the A2A card's AP2 extension: ${commerce.ap2.note}`);
  states.push(ap2);
  return states;
}

export function commerceEvaluation(commerce: CommerceFacts): Evaluation {
  const states = [...paidStates(commerce), ...manifestStates(commerce)];
  const spoken = states.filter((s) => s.spoken.length);
  const broken = states.filter((s) => s.broken.length);
  const said = states
    .filter((s) => s.spoken.length || s.broken.length)
    .map((s) => `${s.protocol}: ${[...s.spoken, ...s.broken.map((b) => `broken - ${b}`)].join('; ')}`);
  const silent = states.filter((s) => !s.spoken.length && !s.broken.length).map((s) => s.protocol);
  const score = spoken.length ? (broken.length ? 0.75 : 1) : broken.length ? 0.25 : 0;
  const firstBroken = broken[0]?.protocol;
  return {
    score,
    ...(firstBroken ? { spec_url: commerceSpecs[firstBroken] } : {}),
    seen: said.length
      ? `${said.join(' | ')}${silent.length ? ` | not offered: ${silent.join(', ')}` : ''}`
      : 'no agent commerce protocol: no paid resource answers 402 with x402 terms or an MPP challenge, and no UCP, ACP or AP2 manifest',
    evidence_url:
      firstBroken === 'UCP'
        ? commerce.ucp.url
        : firstBroken === 'ACP'
          ? commerce.acp.url
          : (commerce.paid[0]?.url ?? commerce.ucp.url),
  };
}

export const commerceChecks: readonly CheckDef[] = [
  {
    id: 'commerce',
    component: 'technical_foundation',
    title: 'Agents can buy: x402, MPP, UCP, ACP or AP2',
    weight: 3,
    severity: 'warning',
    rule: 'each protocol judged live or from its manifest: [x402](https://github.com/coinbase/x402/blob/main/specs/x402-specification.md) (a paid resource - listed in the x402 document, or an OpenAPI GET marked `x-payment-info` - answers an unpaid GET with 402 and terms `@x402/core` accepts, v1 or v2), [MPP](https://datatracker.ietf.org/doc/draft-httpauth-payment/) (the same answer carries `WWW-Authenticate: Payment` with `id`, `realm`, `method`, `intent` and a base64url JSON `request`), [UCP](https://ucp.dev/specification/overview) (`/.well-known/ucp`: a date `ucp.version`, a service with transport and endpoint, capabilities), [ACP](https://github.com/agentic-commerce-protocol/agentic-commerce-protocol/blob/main/rfcs/rfc.discovery.md) (`/.well-known/acp.json`: `protocol.name` acp, date version, `supported_versions`, `api_base_url`, `transports` with rest, `capabilities.services`), [AP2](https://ap2-protocol.org/a2a-extension) (the A2A card lists the AP2 extension with at least one role). 1 when at least one is spoken and none published is broken; 0.75 when one is spoken and another is broken; 0.25 when only broken ones are published; 0 when none',
    goal: "Let an agent buy from the site on its user's behalf through a protocol it speaks, and find out how before it tries.",
    fix: 'Offer at least one agent commerce protocol, completely: answer unpaid requests for paid resources with 402 and x402 terms (PAYMENT-REQUIRED) or an MPP challenge (WWW-Authenticate: Payment), or publish a UCP profile at /.well-known/ucp, an ACP discovery document at /.well-known/acp.json, or the AP2 extension on your A2A agent card; fix any of them that is published but incomplete.',
    spec: commerceSpecs.x402,
    evidence: ['x402', 'commerce', 'a2a'],
    informationalFor: ['content', 'api'],
    evaluate: ({ facts }) => (facts.commerce ? commerceEvaluation(facts.commerce) : notCollected),
  },
];
