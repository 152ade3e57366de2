/**
 * docs/reference/data-model.md: every table of `db/schema.ts` (the `Database` interface) with its
 * columns, their types and the comments written beside them. The schema is one interface per table,
 * one line per column (Biome keeps it so), which this reads line by line: TypeScript 7's compiler
 * has no JavaScript API to parse it with.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../../servers/config.ts';
import { code, table } from './markdown.ts';

interface Declared {
  about: string;
  /** Interfaces it extends, whose columns it has too (`OutboxColumns`). */
  bases: string[];
  columns: { name: string; type: string; about: string }[];
}

/** `/** text *\/` lines to text. */
const docText = (lines: string[]): string =>
  lines
    .map((l) =>
      l
        .trim()
        .replace(/^\/\*\*\s?/, '')
        .replace(/\s*\*\/$/, '')
        .replace(/^\*\s?/, ''),
    )
    .filter(Boolean)
    .join(' ');

export function parseSchema(text: string): { interfaces: Map<string, Declared>; tables: [string, string][] } {
  const interfaces = new Map<string, Declared>();
  const tables: [string, string][] = [];
  let doc: string[] | null = null;
  let pendingDoc = '';
  let section = '';
  let current: Declared | null = null;
  let inDatabase = false;
  for (const line of text.split('\n')) {
    const trimmed = line.trim();
    if (doc) {
      doc.push(trimmed);
      if (trimmed.endsWith('*/')) {
        pendingDoc = docText(doc);
        doc = null;
      }
      continue;
    }
    if (trimmed.startsWith('/**')) {
      if (trimmed.endsWith('*/')) pendingDoc = docText([trimmed]);
      else doc = [trimmed];
      continue;
    }
    if (line.startsWith('//')) {
      const note = line
        .replace(/^\/\/\s*/, '')
        .replace(/-{3,}/g, '')
        .trim();
      if (note) section = section ? `${section} ${note}` : note;
      continue;
    }
    const opened = /^export interface (\w+)(?: extends ([\w, ]+))? \{$/.exec(line);
    if (opened) {
      if (opened[1] === 'Database') inDatabase = true;
      else {
        current = {
          about: [section, pendingDoc].filter(Boolean).join(' '),
          bases: opened[2]?.split(',').map((b) => b.trim()) ?? [],
          columns: [],
        };
        interfaces.set(opened[1] as string, current);
      }
      section = '';
      pendingDoc = '';
      continue;
    }
    if (line === '}') {
      current = null;
      inDatabase = false;
      continue;
    }
    const member = /^ {2}(\w+)(\?)?: (.+);$/.exec(line);
    if (member && inDatabase) tables.push([member[1] as string, member[3] as string]);
    else if (member && current) {
      current.columns.push({ name: member[1] as string, type: member[3] as string, about: pendingDoc });
    }
    pendingDoc = '';
  }
  return { interfaces, tables };
}

export function dataModelBlock(): string {
  const { interfaces, tables } = parseSchema(readFileSync(path.join(projectRoot, 'db/schema.ts'), 'utf8'));
  if (!tables.length) throw new Error('db/schema.ts has no Database interface');
  const sections: string[] = [];
  for (const [tableName, typeName] of tables) {
    const declared = interfaces.get(typeName);
    if (!declared) throw new Error(`db/schema.ts: ${tableName} has no interface ${typeName}`);
    const columns = [...declared.columns, ...declared.bases.flatMap((b) => interfaces.get(b)?.columns ?? [])];
    sections.push(
      `## ${tableName}`,
      '',
      ...(declared.about ? [declared.about, ''] : []),
      table(
        ['column', 'type', 'notes'],
        columns.map((c) => [code(c.name), code(c.type), c.about]),
      ),
      '',
    );
  }
  return sections.join('\n').trimEnd();
}
