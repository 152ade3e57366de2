#!/usr/bin/env node
/**
 * `npx agent-service-scan`: starts cli/scan.ts (the guide: docs/guides/site-owners/ci-gate.md).
 *
 * Plain JavaScript because the package is TypeScript run by Node's type stripping, which Node
 * refuses under node_modules - where an installed package lives. So the command runs in a child
 * Node with a module hook (strip-types-hook.mjs) that strips types wherever the file is, through
 * node:module's stripTypeScriptTypes (Node 22.13+); on Node 22.12 it falls back to
 * --experimental-strip-types, which serves a checkout. The child's exit code is the command's.
 */
import { spawn } from 'node:child_process';
import * as nodeModule from 'node:module';

const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 12)) {
  console.error(`agent-service-scan needs Node.js 22.12 or newer (24 recommended), found ${process.version}`);
  process.exit(3);
}
const hook = new URL('./strip-types-hook.mjs', import.meta.url).href;
const entry = new URL('../cli/main.ts', import.meta.url).pathname;
const flags = [
  '--disable-warning=ExperimentalWarning',
  ...(typeof nodeModule.stripTypeScriptTypes === 'function'
    ? ['--import', hook]
    : ['--experimental-strip-types']),
];
const child = spawn(process.execPath, [...flags, entry, ...process.argv.slice(2)], { stdio: 'inherit' });
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 3 : 0)));
child.on('error', (err) => {
  console.error(`agent-service-scan: could not start Node: ${err.message}`);
  process.exit(3);
});
