/**
 * `npm run docs`: rewrites the generated blocks of the reference pages (configuration, error codes,
 * MCP tools, REST operations, data model, scoring) from the code they describe.
 * `test/unit/docs-generated.test.ts` fails when they are out of date.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../servers/config.ts';
import { generatedFiles } from './reference/index.ts';
import { withGeneratedBlocks } from './reference/markdown.ts';

for (const [file, blocks] of Object.entries(generatedFiles())) {
  const full = path.join(projectRoot, file);
  const before = readFileSync(full, 'utf8');
  const after = withGeneratedBlocks(before, blocks, file);
  if (after !== before) writeFileSync(full, after);
  process.stdout.write(`${file}: ${after === before ? 'up to date' : 'updated'}\n`);
}
