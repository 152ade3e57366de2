/** Runs the service as `npm start` does (`node <its flags> servers/main.ts`) in a child process. */
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { startFlags } from '../../scripts/start-command.ts';
import { projectRoot } from '../../servers/config.ts';

export interface ServiceProcess {
  url: string;
  child: ChildProcess;
  /** SIGKILL: no shutdown hooks run. */
  kill(): Promise<void>;
  /** SIGTERM: graceful stop. */
  stop(): Promise<number | null>;
  /** The last 64 KiB the process wrote (log lines and stderr), for a failing test to show. */
  output(): string;
}

export async function spawnService(
  env: Record<string, string>,
  /** Another entry point than `servers/main.ts`, relative to the project root. */
  script = 'servers/main.ts',
): Promise<ServiceProcess> {
  const child = spawn(process.execPath, [...startFlags(), path.join(projectRoot, script)], {
    cwd: projectRoot,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let stderr = '';
  let output = '';
  const keep = (d: Buffer) => {
    output = (output + d.toString()).slice(-65_536);
  };
  child.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString();
    keep(d);
  });
  child.stdout?.on('data', keep);
  const url = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    // Generous: a loaded CI machine starting several workers (WORKERS=N) at once is slow.
    // A process that never said it listens (LOG_LEVEL above info, a hang) is not left running.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`service did not start (no "listening on" line at LOG_LEVEL info): ${stderr}`));
    }, 150_000);
    lines.on('line', (line) => {
      const match = /listening on (http:\/\/[^"\s]+)/.exec(line);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.once('exit', (code) => reject(new Error(`service exited with ${code}: ${stderr}`)));
  });
  return {
    url,
    child,
    async kill() {
      child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      child.kill('SIGTERM');
      return exited;
    },
    output: () => output,
  };
}
