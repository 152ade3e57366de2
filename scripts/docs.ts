/**
 * `npm run docs`: rewrites the README's generated blocks (the MCP tool lists) from the registry.
 * `test/unit/readme.test.ts` fails when they are out of date.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { generatedBlocks, withGeneratedBlocks } from '../servers/adapters/tool-table.ts';
import { loadConfig, projectRoot } from '../servers/config.ts';
import { operations } from '../servers/registry.ts';

const file = path.join(projectRoot, 'README.md');
const before = readFileSync(file, 'utf8');
// The documented defaults, whatever this shell's environment says.
const after = withGeneratedBlocks(before, generatedBlocks(operations, loadConfig({ env: {} })));
if (after !== before) writeFileSync(file, after);
process.stdout.write(after === before ? 'README.md is up to date\n' : 'README.md updated\n');
