/** Runs the service as `npm start` does (`node <its flags> servers/main.ts`) in a child process. */
import { type ChildProcess, spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { startFlags } from '../../scripts/start-command.ts';
import { projectRoot } from '../../servers/config.ts';
import { waitFor } from './receivers.ts';

/**
 * The environment every child process of the tests starts from: PATH, HOME and one V8 compile
 * cache shared by every process of the run (and the next run): each spawned service otherwise
 * compiled its ~500 modules anew, 1.4 of the 7 s of CPU a start took.
 */
export function childEnv(): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    NODE_COMPILE_CACHE: process.env.NODE_COMPILE_CACHE ?? path.join(tmpdir(), 'agent-service-compile-cache'),
  };
}

export interface ServiceProcess {
  url: string;
  child: ChildProcess;
  /** SIGKILL: no shutdown hooks run. */
  kill(): Promise<void>;
  /**
   * SIGKILL to the whole process group at once - the primary and every worker (`WORKERS=N`), as a
   * crash of the machine or the OOM killer of a container would - once every member is gone.
   * Only for a service spawned with `processGroup`.
   */
  killGroup(): Promise<void>;
  /** SIGTERM: graceful stop. */
  stop(): Promise<number | null>;
  /** The last 64 KiB the process wrote (log lines and stderr), for a failing test to show. */
  output(): string;
}

export async function spawnService(
  env: Record<string, string>,
  /** Another entry point than `servers/main.ts`, relative to the project root. */
  script = 'servers/main.ts',
  /** The service leads a process group of its own (its workers in it), for `killGroup`. */
  options: { processGroup?: boolean } = {},
): Promise<ServiceProcess> {
  const child = spawn(process.execPath, [...startFlags(), path.join(projectRoot, script)], {
    cwd: projectRoot,
    detached: options.processGroup === true,
    env: {
      ...childEnv(),
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
  // With WORKERS=N, each worker says it listens once its app is up; until then a worker answers
  // 503 (servers/server.ts), so the service is started when all N have said it.
  const workers = Number(env.WORKERS ?? 1);
  const url = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    // Generous: a loaded CI machine starting several workers (WORKERS=N) at once is slow.
    // A process that never said it listens (LOG_LEVEL above info, a hang) is not left running.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`service did not start (no "listening on" line at LOG_LEVEL info): ${stderr}`));
    }, 150_000);
    let listening = 0;
    lines.on('line', (line) => {
      const match = /listening on (http:\/\/[^"\s]+)/.exec(line);
      if (match?.[1] && ++listening >= workers) {
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
    async killGroup() {
      if (!options.processGroup) throw new Error('spawned without processGroup');
      const group = -(child.pid as number);
      /** Sends `signal` to the group; false once it has no member left. */
      const signal = (name: NodeJS.Signals | 0) => {
        try {
          process.kill(group, name);
          return true;
        } catch {
          return false;
        }
      };
      signal('SIGKILL');
      await exited;
      // The workers die with the primary; they are gone once the group has no member left.
      await waitFor(() => !signal(0));
    },
    async stop() {
      child.kill('SIGTERM');
      return exited;
    },
    output: () => output,
  };
}
