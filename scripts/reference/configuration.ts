/**
 * docs/reference/configuration.md: every setting from the one schema (`Config` in servers/config.ts,
 * its `.describe()` texts), its environment variables (`envBindings`) and its default
 * (`mcp.config.json`, as written there: placeholders unexpanded).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { Config, envBindings, loadConfig, projectRoot } from '../../servers/config.ts';
import { code, table } from './markdown.ts';

interface JsonSchemaNode {
  description?: string;
  properties?: Record<string, JsonSchemaNode>;
  anyOf?: JsonSchemaNode[];
}

/** An object's own properties, whether it is nullable (`anyOf`) or not. */
function propertiesOf(node: JsonSchemaNode): Record<string, JsonSchemaNode> | undefined {
  return node.properties ?? node.anyOf?.find((n) => n.properties)?.properties;
}

function describedWithin(node: JsonSchemaNode): boolean {
  const props = propertiesOf(node);
  return Object.values(props ?? {}).some(
    (child) => child.description !== undefined || describedWithin(child),
  );
}

function valueAt(root: unknown, dotted: string): unknown {
  let node = root;
  for (const part of dotted.split('.')) {
    if (node === null || typeof node !== 'object' || !(part in node)) return undefined;
    node = (node as Record<string, unknown>)[part];
  }
  return node;
}

function showDefault(value: unknown): string {
  if (value === null || value === undefined) return 'none';
  if (typeof value === 'string') return value === '' ? '""' : code(value);
  return code(JSON.stringify(value));
}

export interface SettingRow {
  key: string;
  /** Environment variables, each with the member it sets when that is below this setting. */
  variables: { name: string; member: string | null }[];
  defaultValue: unknown;
  description: string;
}

/** One row per described setting, in schema order; throws naming any setting without a description. */
export function settingRows(): SettingRow[] {
  const schema = z.toJSONSchema(Config, { io: 'input', unrepresentable: 'any' }) as JsonSchemaNode;
  const file = JSON.parse(readFileSync(path.join(projectRoot, 'mcp.config.json'), 'utf8')) as unknown;
  const loaded = loadConfig({ env: {} }) as unknown;
  const rows: SettingRow[] = [];
  const missing: string[] = [];
  const walk = (node: JsonSchemaNode, key: string): void => {
    const props = propertiesOf(node);
    if (props && (node.description === undefined || describedWithin(node))) {
      for (const [name, child] of Object.entries(props)) walk(child, key ? `${key}.${name}` : name);
      return;
    }
    if (node.description === undefined) {
      missing.push(key);
      return;
    }
    const fromFile = valueAt(file, key);
    rows.push({
      key,
      variables: Object.entries(envBindings)
        .filter(([, b]) => b.key === key || b.key.startsWith(`${key}.`))
        .map(([name, b]) => ({ name, member: b.key === key ? null : b.key.slice(key.length + 1) })),
      defaultValue: fromFile === undefined ? valueAt(loaded, key) : fromFile,
      description: node.description,
    });
  };
  walk(schema, '');
  if (missing.length)
    throw new Error(`settings without a description in servers/config.ts: ${missing.join(', ')}`);
  return rows;
}

/** The tables, one section per top-level group (the top-level settings first, as "General"). */
export function configurationBlock(): string {
  const rows = settingRows();
  const groups = new Map<string, SettingRow[]>();
  for (const row of rows) {
    const group = row.key.includes('.') ? (row.key.split('.')[0] as string) : 'general';
    groups.set(group, [...(groups.get(group) ?? []), row]);
  }
  const sections: string[] = [];
  for (const [group, list] of groups) {
    sections.push(
      `## ${group}`,
      '',
      table(
        ['key', 'environment', 'default', 'what it does'],
        list.map((r) => [
          code(r.key),
          r.variables
            .map((v) => (v.member ? `${code(v.name)} (${code(v.member)})` : code(v.name)))
            .join(', ') || '-',
          showDefault(r.defaultValue),
          r.description,
        ]),
      ),
      '',
    );
  }
  return sections.join('\n').trimEnd();
}
