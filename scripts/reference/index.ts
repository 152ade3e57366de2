/**
 * Every generated block of the documentation, by file: `npm run docs` writes them and
 * `test/unit/docs-generated.test.ts` fails when a file differs from what the code says now.
 */
import { loadConfig } from '../../servers/config.ts';
import { operations } from '../../servers/registry.ts';
import { configurationBlock } from './configuration.ts';
import { dataModelBlock } from './data-model.ts';
import { errorCodesBlock } from './errors.ts';
import { restOperationsBlock, toolBlocks } from './operations.ts';
import { scoringBlocks } from './scoring.ts';

export function generatedFiles(): Record<string, Record<string, string>> {
  // The documented defaults, whatever this shell's environment says.
  const config = loadConfig({ env: {} });
  return {
    'docs/reference/configuration.md': { configuration: configurationBlock() },
    'docs/reference/errors.md': { 'error-codes': errorCodesBlock() },
    'docs/reference/mcp-tools.md': toolBlocks(operations, config),
    'docs/reference/rest-operations.md': { 'rest-operations': restOperationsBlock(operations, config) },
    'docs/reference/data-model.md': { 'data-model': dataModelBlock() },
    'docs/reference/scoring.md': scoringBlocks(),
  };
}
