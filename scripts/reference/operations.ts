/**
 * docs/reference/mcp-tools.md and rest-operations.md: the MCP tools of both servers and the REST
 * routes of every surface, from the registry (`servers/registry.ts`).
 */
import { argumentsOf, restRouteOf, summaryOf, toolTable } from '../../servers/adapters/tool-table.ts';
import type { Config } from '../../servers/config.ts';
import { type AnyOperation, pathParamsOf, type Surface } from '../../servers/operation.ts';
import { code, table } from './markdown.ts';

export function toolBlocks(operations: readonly AnyOperation[], config: Config): Record<string, string> {
  return {
    'public-tools': toolTable(operations, 'public', config),
    'owner-tools': toolTable(operations, 'owner', config),
  };
}

const surfaceTitles: Record<Surface, string> = {
  cs: 'Customer service agent (`base_url`)',
  public_api: 'Public API (`public_api_url`)',
  site: 'Main site (`site_url`)',
  functions: 'Live catalog host (`functions_url`)',
};

/** Where the arguments go: `body {a, b?}`, `query {a}`, and the ones the path carries. */
function inputOf(op: AnyOperation): string {
  const inPath = pathParamsOf(op.http?.path ?? '');
  const where = `${op.http?.input ?? 'query'} ${code(argumentsOf(op))}`;
  return inPath.length ? `${where}, in the path: ${inPath.map(code).join(', ')}` : where;
}

const accessOf = (op: AnyOperation): string =>
  op.sku ? `paid: ${op.sku.usdc} USDC${op.sku.amount ? ' at least' : ''}` : op.access;

export function restOperationsBlock(operations: readonly AnyOperation[], config: Config): string {
  const sections: string[] = [];
  for (const surface of Object.keys(surfaceTitles) as Surface[]) {
    const ops = operations.filter((op) => op.http?.surface === surface);
    if (!ops.length) continue;
    sections.push(
      `## ${surfaceTitles[surface]}`,
      '',
      table(
        ['route', 'operation', 'input', 'access', 'MCP tool', 'what it does'],
        ops.map((op) => [
          code(restRouteOf(op, config)),
          code(op.name),
          inputOf(op),
          accessOf(op),
          op.mcp?.length ? code(op.toolName) : '-',
          summaryOf(op),
        ]),
      ),
      '',
    );
  }
  return sections.join('\n').trimEnd();
}
