/**
 * MCP protocol eras (issue 35): a server of late 2026 answers a 2026-07-28 client (`server/discover`,
 * stateless, the per-request `_meta` envelope) and a 2025-11-25 client (`initialize`) on the same
 * URL, and publishes its server card where the 2026-07-28 extension puts it.
 */
import type { McpEras } from '../verify.ts';
import { apiOnly, notCollected } from './judging.ts';
import type { CheckDef, Evaluation } from './model.ts';

export function mcpEraEvaluation(endpoint: string, eras: McpEras): Evaluation {
  const card = eras.server_card;
  const score = (eras.modern.speaks ? 0.4 : 0) + (eras.legacy.speaks ? 0.4 : 0) + (card?.found ? 0.2 : 0);
  const parts = [
    eras.modern.speaks
      ? `2026-07-28: server/discover offers ${eras.modern.versions.join(', ') || 'no versions'}`
      : `2026-07-28: no (${eras.modern.error ?? 'server/discover failed'})`,
    eras.legacy.speaks
      ? `2025-11-25: initialize answers ${eras.legacy.version ?? ''}`.trim()
      : `2025-11-25: no (${eras.legacy.error ?? 'initialize failed'})`,
    card?.found
      ? `server card at ${card.url}`
      : `no server card at ${card?.url ?? `${endpoint}/server-card`}${card?.note ? ` (${card.note})` : ''}`,
  ];
  return { score, seen: parts.join('; '), evidence_url: endpoint };
}

export const mcpEraChecks: readonly CheckDef[] = [
  {
    id: 'mcp_era',
    component: 'technical_foundation',
    title: 'The MCP server speaks both protocol eras',
    weight: 2,
    severity: 'info',
    rule: "[the MCP server](#the-mcp-server) the card names, asked as each era's client connects: 0.4 when `server/discover` offers 2026-07-28 (the stateless era), 0.4 when `initialize` answers a 2025-11-25 client, 0.2 for a server card at `<endpoint>/server-card` (the SEP-2127 server card extension); no value without a valid card on this site or when the server asks for a token",
    goal: 'Let both the 2026 clients (stateless, server/discover) and the clients of 2025 (initialize) connect, and find the server card where the 2026-07-28 extension puts it.',
    fix: "Serve MCP 2026-07-28 (answer server/discover; read the protocol version from each request's _meta) beside 2025-11-25 (initialize) on the same URL - the official SDK v2 packages speak both - and publish the server card at <endpoint>/server-card.",
    spec: 'https://modelcontextprotocol.io/specification/2026-07-28/basic/lifecycle',
    evidence: ['mcp'],
    applies: apiOnly,
    evaluate: ({ facts }) => {
      if (!facts.verification) return notCollected;
      const v = facts.verification.mcp;
      if (!v) return { score: null, seen: 'no MCP server card on this site to verify' };
      if (v.auth_required)
        return {
          score: null,
          seen: `${v.endpoint ?? v.card_url} asks for a token (401): its eras cannot be asked`,
        };
      if (!v.eras)
        return v.endpoint ? notCollected : { score: 0, seen: v.error ?? 'the card names no endpoint' };
      return mcpEraEvaluation(v.endpoint ?? v.card_url, v.eras);
    },
  },
];
