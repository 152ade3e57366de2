#!/usr/bin/env node
/**
 * `npx agent-service-scan`: starts cli/main.ts (the guide: docs/guides/site-owners/ci-gate.md).
 *
 * Plain JavaScript because the package is TypeScript run by Node's type stripping, which Node
 * refuses under node_modules (ERR_UNSUPPORTED_NODE_MODULES_TYPE_STRIPPING) - where an installed
 * package lives. So the command runs in a child Node with a load hook (strip-types-hook.mjs) that
 * strips types wherever the file is, through node:module's stripTypeScriptTypes. The child's exit
 * code is the command's.
 */
import { spawn } from 'node:child_process';

// undici 8, the scanner's HTTP client, needs 22.19 (its engines; it decompresses zstd); by then
// node:module has stripTypeScriptTypes too.
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 19)) {
  console.error(`agent-service-scan needs Node.js 22.19 or newer (24 recommended), found ${process.version}`);
  process.exit(3);
}
const hook = new URL('./strip-types-hook.mjs', import.meta.url).href;
const entry = new URL('../cli/main.ts', import.meta.url).pathname;
const child = spawn(
  process.execPath,
  ['--disable-warning=ExperimentalWarning', '--import', hook, entry, ...process.argv.slice(2)],
  { stdio: 'inherit' },
);
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 3 : 0)));
child.on('error', (err) => {
  console.error(`agent-service-scan: could not start Node: ${err.message}`);
  process.exit(3);
});
