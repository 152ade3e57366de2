/** The load hook strip-types-hook.mjs registers: .ts files as ES modules with their types stripped. */
import { readFile } from 'node:fs/promises';
import { stripTypeScriptTypes } from 'node:module';

export async function load(url, context, nextLoad) {
  if (!url.startsWith('file:') || !url.endsWith('.ts')) return nextLoad(url, context);
  const source = await readFile(new URL(url), 'utf8');
  return { format: 'module', source: stripTypeScriptTypes(source, { mode: 'strip' }), shortCircuit: true };
}
