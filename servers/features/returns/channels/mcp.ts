/**
 * The brand's MCP server: found through the MCP Catalog `/.well-known/mcp/catalog.json` (SEP-2127;
 * read by the scanner's `readMcpCatalog`) and the server cards it lists (`<url>/server-card`), or
 * the older single card `/.well-known/mcp/server-card.json` (SEP-1649). A card names the server's
 * Streamable HTTP URL (`remotes`); its live `tools/list` - the MCP SDK's client, over the safe
 * fetcher with the response size capped - must have a tool for returns, refunds or support, by
 * name, title or description. A card alone promises nothing: the tools are what the server lists.
 */
import { Client, type FetchLike, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { serviceName, serviceVersion } from '../../../config.ts';
import type { FoundChannel } from './schemas.ts';

const toolWords: [RegExp, number][] = [
  [/\breturns?\b|\brefunds?\b|\bexchanges?\b|(?:^|_)(?:return|refund)s?(?:_|$)/i, 3],
  [
    /\bcustomer[\s_-]?(?:service|support|care)\b|\bsupport\b|\btickets?\b|(?:^|_)(?:support|ticket)s?(?:_|$)/i,
    2,
  ],
  [/\bcomplaints?\b|\border[\s_-]?(?:issues?|problems?)\b/i, 1],
];

export interface McpServerOfCard {
  url: string;
  name: string | null;
}

/** The Streamable HTTP URL a server card names (SEP-2127 `remotes`, or SEP-1649's `url`/`endpoint`). */
export function serverOfCard(json: unknown, cardUrl: string): McpServerOfCard | null {
  if (!json || typeof json !== 'object' || Array.isArray(json)) return null;
  const card = json as Record<string, unknown>;
  const remotes = Array.isArray(card.remotes) ? (card.remotes as Record<string, unknown>[]) : [];
  const remote =
    remotes.find((r) => r?.type === 'streamable-http' && typeof r.url === 'string') ??
    remotes.find((r) => typeof r?.url === 'string');
  const raw =
    (remote?.url as string | undefined) ??
    (typeof card.url === 'string' ? card.url : undefined) ??
    (typeof card.endpoint === 'string' ? card.endpoint : undefined);
  if (!raw || !URL.canParse(raw, cardUrl)) return null;
  const info = (card.serverInfo ?? card) as Record<string, unknown>;
  return { url: new URL(raw, cardUrl).href, name: typeof info.name === 'string' ? info.name : null };
}

export interface ListedTool {
  name: string;
  title?: string | undefined;
  description?: string | undefined;
}

/** The tool best suited to a return or refund request, or null. */
export function supportTool(tools: readonly ListedTool[]): ListedTool | null {
  let best: { tool: ListedTool; score: number } | undefined;
  for (const tool of tools) {
    const said = [tool.name, tool.title ?? '', tool.description ?? ''].join(' ');
    const score = Math.max(0, ...toolWords.filter(([words]) => words.test(said)).map(([, s]) => s));
    if (score > (best?.score ?? 0)) best = { tool, score };
  }
  return best?.tool ?? null;
}

/** Pages of `tools/list` read at most: a server that paginates forever costs this many requests. */
const MAX_TOOL_PAGES = 3;

/**
 * The server's tools, from `server/discover` (2026-07-28) or `initialize` (2025-11-25 and before)
 * and `tools/list`, with the MCP SDK client over `fetch`.
 */
export async function listTools(url: string, fetch: FetchLike, signal: AbortSignal): Promise<ListedTool[]> {
  const client = new Client(
    { name: serviceName, version: serviceVersion },
    { versionNegotiation: { mode: 'auto' } },
  );
  const transport = new StreamableHTTPClientTransport(new URL(url), { fetch });
  try {
    await client.connect(transport, { signal });
    const tools: ListedTool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_TOOL_PAGES; page++) {
      const listed = await client.listTools(cursor ? { cursor } : {}, { signal });
      tools.push(...listed.tools);
      cursor = listed.nextCursor;
      if (!cursor) break;
    }
    return tools;
  } finally {
    await client.close().catch(() => {});
  }
}

/** The channel of a server whose tools were listed, or why it is none. */
export function mcpChannel(
  server: McpServerOfCard,
  tools: readonly ListedTool[],
  cardUrl: string,
): { ok: true; channel: FoundChannel } | { ok: false; reason: string } {
  const tool = supportTool(tools);
  if (!tool) {
    const names = tools.map((t) => t.name).slice(0, 10);
    return {
      ok: false,
      reason: `the MCP server lists no tool for returns, refunds or support (tools: ${names.join(', ') || 'none'})`,
    };
  }
  return {
    ok: true,
    channel: {
      kind: 'mcp',
      address: server.url,
      detail: {
        tool_name: tool.name,
        ...(tool.description ? { tool_description: tool.description.slice(0, 300) } : {}),
        ...(server.name ? { server_name: server.name } : {}),
        card_url: cardUrl,
      },
      source_url: cardUrl,
      found_by: 'mcp_server_card',
    },
  };
}
