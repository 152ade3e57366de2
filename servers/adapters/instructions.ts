/**
 * The `instructions` an MCP server sends in its `initialize` result (MCP 2025-11-25, lifecycle):
 * what the server is for and its tools by area, derived from the registry so the list cannot drift
 * from `tools/list`.
 */
import type { AnyOperation, McpServerName } from '../operation.ts';

const areaTitle = (tag: string): string => tag.charAt(0).toUpperCase() + tag.slice(1);

/**
 * `lead` says what the server is for; `workflows` are sentences that name tools (write them with
 * each operation's `toolName`, so a renamed tool changes them too).
 */
export function mcpInstructions(
  operations: readonly AnyOperation[],
  server: McpServerName,
  lead: string,
  workflows: string[] = [],
): string {
  const areas = new Map<string, string[]>();
  for (const op of operations.filter((o) => o.mcp?.includes(server))) {
    const area = op.tags?.[0] ?? 'other';
    const list = areas.get(area) ?? [];
    list.push(`${op.toolName} (${op.title.charAt(0).toLowerCase()}${op.title.slice(1)})`);
    areas.set(area, list);
  }
  const tools = [...areas].map(([area, list]) => `${areaTitle(area)}: ${list.join('; ')}.`);
  return [lead, ...workflows, 'Tools by area:', ...tools].join('\n');
}
