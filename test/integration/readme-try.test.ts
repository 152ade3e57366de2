/**
 * Issue 33, how it is checked: the README's "Try every surface", command by command, against the
 * service started as a newcomer starts it (`npm start`'s command, development mode, nothing set
 * but PORT and DATA_DIR). Each shell block of the section runs in one bash session, as a reader
 * pastes them in order (variables carry over); a command whose line ends in `# <answer>` must print
 * that answer (compared without whitespace, so jq's pretty print matches the one-line form).
 *
 * The README names port 8787; the test's service listens on a free port, and the commands are
 * rewritten to it. Blocks that need more than a shell are covered where they can be run for real:
 * the inspector one-liner by `.ci/run` (the same command, pinned), the owner server's consent by
 * `oauth-consent-browser.test.ts`, and the soul script here by running what `/robot-soul` shows,
 * as step 7 says.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../servers/config.ts';
import { childEnv, type ServiceProcess, spawnService } from '../helpers/process.ts';

interface Command {
  /** The command as the README prints it (continuation lines joined). */
  text: string;
  /** What the README says it prints (`# ...` at the end of its last line), if anything. */
  answer?: string;
}

/** The shell blocks of the README's "Try every surface" section, each a list of commands. */
function tryBlocks(): Command[][] {
  const readme = readFileSync(path.join(projectRoot, 'README.md'), 'utf8');
  const section = /^## Try every surface\n([\s\S]*?)^## /m.exec(readme)?.[1];
  if (!section) throw new Error('README.md has no "## Try every surface" section');
  return [...section.matchAll(/^```sh\n([\s\S]*?)^```/gm)].map((block) => {
    const commands: Command[] = [];
    let pending = '';
    for (const line of (block[1] as string).split('\n')) {
      if (line.trim() === '') continue;
      if (line.startsWith('#')) {
        // An answer on its own line belongs to the command above it.
        const last = commands.at(-1);
        if (last) last.answer = line.replace(/^#\s*/, '');
        continue;
      }
      pending += pending ? `\n${line}` : line;
      if (line.endsWith('\\')) continue;
      // `  # answer` at the end of a line: two or more spaces before it, outside quotes by convention.
      const answer = /\s{2,}#\s+(.+)$/.exec(pending);
      commands.push({
        text: answer ? pending.slice(0, answer.index).trimEnd() : pending,
        ...(answer ? { answer: answer[1] } : {}),
      });
      pending = '';
    }
    return commands;
  });
}

const squeeze = (text: string): string => text.replace(/\s+/g, '');

/** Runs `script` in bash from the project root with only `env` set; resolves with its output. */
function bash(script: string, env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  const child = spawn('bash', ['-c', script], {
    cwd: projectRoot,
    env: { ...childEnv(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr.on('data', (d: Buffer) => {
    out += d.toString();
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, out }));
  });
}

describe('README: try every surface, against npm start in development mode', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'agent-service-readme-'));
  let service: ServiceProcess;
  let port: string;

  beforeAll(async () => {
    service = await spawnService({ DATA_DIR: dataDir });
    port = new URL(service.url).port;
  }, 180_000);
  afterAll(async () => {
    await service?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('every command answers what the README shows', async () => {
    const blocks = tryBlocks();
    expect(blocks.length).toBeGreaterThanOrEqual(5);
    const commands = blocks.flat().filter((c) => !c.text.startsWith('npx @modelcontextprotocol/inspector'));
    // One session, a marker line before each command (after a newline: an answer may not end in
    // one), so each command's output can be told apart.
    const script = commands
      .map((c, i) => `printf '\\n@@${i}\\n'\n${c.text.replaceAll('8787', port)}`)
      .join('\n');
    const { code, out } = await bash(`set -u\n${script}\nprintf '\\n@@end\\n'`, {
      PORT: port,
      DATA_DIR: dataDir,
    });
    expect(out, out).toContain('@@end');
    expect(code).toBe(0);
    const outputs = out.split(/\n@@(?:\d+|end)\n/).slice(1);
    commands.forEach((command, i) => {
      if (command.answer === undefined) return;
      const expected = squeeze(command.answer.replaceAll('8787', port));
      expect(squeeze(outputs[i] ?? ''), `${command.text}\nprinted:\n${outputs[i]}`).toContain(expected);
    });
    // Step 6: the paid call printed its receipt.
    const paid = commands.findIndex((c) => c.text.startsWith('npm run pay'));
    expect(paid).toBeGreaterThanOrEqual(0);
    expect(outputs[paid]).toMatch(/"success": true/);
  }, 240_000);

  it('step 7: the script /robot-soul shows registers a soul the soul list then shows', async () => {
    const site = `http://localhost:${port}`;
    const markdown = await (
      await fetch(`${site}/robot-soul`, { headers: { accept: 'text/markdown' } })
    ).text();
    const script = /```js\n([\s\S]*?)```/.exec(markdown)?.[1];
    expect(script).toBeDefined();
    // In this folder, as the README says, so `jose` resolves from the project's node_modules.
    const file = path.join(projectRoot, `.readme-soul-${process.pid}.mjs`);
    writeFileSync(file, script as string);
    try {
      const ran = await bash(`node ${JSON.stringify(file)}`, {});
      expect(ran.code, ran.out).toBe(0);
    } finally {
      rmSync(file, { force: true });
    }
    const step7 = tryBlocks()
      .flat()
      .find((c) => c.text.includes('/api/public/soul'));
    expect(step7).toBeDefined();
    const listed = await bash((step7 as Command).text.replaceAll('8787', port), { S: site });
    expect(listed.out).toMatch(/"agent_id": "[^"]+"/);
  }, 120_000);
});
