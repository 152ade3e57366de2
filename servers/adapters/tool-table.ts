/**
 * The MCP tool list of one server as a Markdown table, derived from the registry: the tool lists of
 * docs/reference/mcp-tools.md are this projection (`npm run docs` writes them; a test fails when
 * they drift).
 */
import type { Config } from '../config.ts';
import { jsonSchemaOf } from '../json-schema.ts';
import type { AnyOperation, McpServerName } from '../operation.ts';
import { surfaceUrl } from './openapi.ts';

/** `{charge, limit?}`: the tool's arguments, optional ones marked. */
export function argumentsOf(op: AnyOperation): string {
  const schema = jsonSchemaOf(op.input, 'input') as { properties?: object; required?: string[] };
  const required = new Set(schema.required ?? []);
  const names = Object.keys(schema.properties ?? {}).map((name) => (required.has(name) ? name : `${name}?`));
  return names.length ? `{${names.join(', ')}}` : '{}';
}

/** The REST route of an operation as a path from the site root (`GET /cs/agent`), or a dash. */
export function restRouteOf(op: AnyOperation, config: Config): string {
  if (!op.http) return '-';
  const prefix = new URL(surfaceUrl(config, op.http.surface)).pathname.replace(/\/+$/, '');
  return `${op.http.method} ${prefix}${op.http.path.replace(/:(\w+)/g, '{$1}')}`;
}

/** The first sentence of an operation's description (written for a model, read by people too). */
export const summaryOf = (op: AnyOperation): string => op.description.split(/(?<=\.)\s/)[0] ?? op.title;

const cell = (text: string): string => text.replace(/\|/g, '\\|');

export function toolTable(
  operations: readonly AnyOperation[],
  server: McpServerName,
  config: Config,
): string {
  const rest = server === 'public';
  const rows = operations
    .filter((op) => op.mcp?.includes(server))
    .map((op) => {
      const columns = [`\`${op.toolName}\``, `\`${cell(argumentsOf(op))}\``, cell(summaryOf(op))];
      if (rest) columns.push(`\`${restRouteOf(op, config)}\``);
      return `| ${columns.join(' | ')} |`;
    });
  const header = rest
    ? ['| tool | arguments | what it does | the same over REST |', '|---|---|---|---|']
    : ['| tool | arguments | what it does |', '|---|---|---|'];
  return [...header, ...rows].join('\n');
}
