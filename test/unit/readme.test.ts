import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { generatedBlocks, withGeneratedBlocks } from '../../servers/adapters/tool-table.ts';
import { loadConfig, projectRoot } from '../../servers/config.ts';
import { operations } from '../../servers/registry.ts';

describe('README', () => {
  it('lists every MCP tool of both servers as the registry declares them (run `npm run docs` to update)', () => {
    const readme = readFileSync(path.join(projectRoot, 'README.md'), 'utf8');
    const blocks = generatedBlocks(operations, loadConfig({ env: {} }));
    expect(withGeneratedBlocks(readme, blocks)).toBe(readme);
    for (const op of operations.filter((o) => o.mcp?.length)) {
      expect(readme).toContain(`| \`${op.toolName}\` |`);
    }
  });
});
