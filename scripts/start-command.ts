/**
 * How `npm start` runs Node, read from package.json's start script (`node <flags> servers/main.ts`),
 * so that the benches and the tests that start the service in a child process run it with the
 * same flags - `--no-memory-reducer` among them (docs/development/performance.md).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../servers/config.ts';

/** The Node flags of the start script, in order. */
export function startFlags(): string[] {
  const { scripts } = JSON.parse(readFileSync(path.join(projectRoot, 'package.json'), 'utf8')) as {
    scripts: { start: string };
  };
  const words = scripts.start.trim().split(/\s+/);
  if (words[0] !== 'node' || words.at(-1) !== 'servers/main.ts')
    throw new Error(`package.json start script is not "node <flags> servers/main.ts": ${scripts.start}`);
  return words.slice(1, -1);
}
