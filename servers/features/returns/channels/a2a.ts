/**
 * The brand's own A2A agent: its Agent Card at `/.well-known/agent-card.json` (A2A 1.0 "Agent
 * Discovery"; an A2A 0.3 card is read through the SDK's compatibility layer) with a skill for
 * customer service, returns or refunds - by its id, name, tags or description. The card is read
 * into the SDK's `AgentCard` (`@a2a-js/sdk`: its resolver's normalisation, then `AgentCard.fromJSON`),
 * so whatever the brand wrote, only the fields A2A defines are looked at. The channel's address is
 * the card's URL (a client reads the card again and picks its transport); the interface the card
 * names first goes in its detail.
 */
import { AgentCard } from '@a2a-js/sdk';
import { DefaultAgentCardResolver } from '@a2a-js/sdk/client';
import type { FoundChannel } from './schemas.ts';

/** What a skill must be about, strongest first: returns or refunds, then customer service. */
const skillWords: [RegExp, number][] = [
  [/\breturns?\b|\brefunds?\b|\bexchanges?\b|\bchargebacks?\b/i, 3],
  [/\bcustomer[\s_-]?(?:service|support|care)\b|\bsupport\b|\bhelp[\s_-]?desk\b/i, 2],
  [/\border[\s_-]?(?:issues?|problems?|help)\b|\bcomplaints?\b|\bcustomer\b/i, 1],
];

const resolver = new DefaultAgentCardResolver({ legacyCompat: { enabled: true } });

export type AgentCardReading = { ok: true; channel: FoundChannel } | { ok: false; reason: string };

/** The channel an agent card offers, or why it offers none. `cardUrl`: where it was read. */
export function readAgentCard(json: unknown, cardUrl: string): AgentCardReading {
  let card: AgentCard;
  try {
    card = AgentCard.fromJSON(resolver.normalizeAgentCard(json));
  } catch {
    return { ok: false, reason: 'not an A2A agent card' };
  }
  const endpoint = card.supportedInterfaces.find((i) => typeof i.url === 'string' && i.url !== '');
  if (!card.name || !endpoint) return { ok: false, reason: 'the agent card names no agent or no interface' };
  let best: { skill: (typeof card.skills)[number]; score: number } | undefined;
  for (const skill of card.skills) {
    const said = [skill.id, skill.name, ...skill.tags, skill.description].join(' ');
    const score = Math.max(0, ...skillWords.filter(([words]) => words.test(said)).map(([, s]) => s));
    if (score > (best?.score ?? 0)) best = { skill, score };
  }
  if (!best) {
    const names = card.skills.map((s) => s.id || s.name).slice(0, 10);
    return {
      ok: false,
      reason: `the agent card lists no skill for customer service, returns or refunds (skills: ${names.join(', ') || 'none'})`,
    };
  }
  return {
    ok: true,
    channel: {
      kind: 'a2a',
      address: cardUrl,
      detail: {
        skill_id: best.skill.id,
        skill_name: best.skill.name,
        agent_name: card.name,
        interface_url: endpoint.url,
        protocol_binding: endpoint.protocolBinding,
        protocol_version: endpoint.protocolVersion,
      },
      source_url: cardUrl,
      found_by: 'a2a_agent_card',
    },
  };
}
