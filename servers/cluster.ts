/**
 * `WORKERS=N npm start`: this process becomes the primary of N workers (node:cluster), each a whole
 * service on the one port (the primary accepts connections and hands them round-robin to the
 * workers). It serves nothing itself: it forks, replaces a worker that dies, and on SIGTERM/SIGINT
 * passes the signal on, waits for every worker's drain, and exits 0 when all of them did.
 *
 * Only on PostgreSQL: the workers share nothing but the database, and a SQLite file has one writer
 * at a time (WAL lets readers in, writers queue on its lock and fail past `busy_timeout`).
 */
import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';
import { isPostgresUrl } from '../db/database.ts';
import type { Config } from './config.ts';

/** Why this configuration cannot run `server.workers` workers, or null when it can. */
export function workersRefusal(config: Config): string | null {
  if (config.server.workers <= 1 || isPostgresUrl(config.database_url)) return null;
  return (
    `WORKERS=${config.server.workers} needs PostgreSQL (DATABASE_URL=postgres://...): SQLite has one writer ` +
    'at a time, so several processes on one file would queue on its lock and fail under load. Use WORKERS=1 ' +
    'with SQLite (see docs/operations/scale-out.md).'
  );
}

export async function runPrimary(config: Config, log: Logger): Promise<void> {
  const count = config.server.workers;
  let stopping = false;
  const listening = new WeakSet<Worker>();

  const fork = () => {
    const worker = cluster.fork();
    worker.once('listening', () => listening.add(worker));
    worker.once('exit', (code, signal) => {
      if (stopping) return;
      if (!listening.has(worker)) {
        // It never served: the same start would fail again (configuration, database). Stop all.
        log.error({ pid: worker.process.pid, code, signal }, 'worker failed to start; stopping');
        void shutDown('worker start failure', 1);
        return;
      }
      log.error({ pid: worker.process.pid, code, signal }, 'worker died; starting a replacement');
      fork();
    });
  };

  const shutDown = async (reason: string, failure = 0) => {
    if (stopping) return;
    stopping = true;
    const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => !!w && !w.isDead());
    log.info({ reason, workers: workers.length }, 'stopping workers');
    // Each worker drains for up to shutdown_timeout_ms, then its background work as long again.
    const deadline = setTimeout(
      () => {
        log.error('workers did not stop within twice server.shutdown_timeout_ms; killing them');
        for (const w of workers) w.process.kill('SIGKILL');
      },
      2 * config.server.shutdown_timeout_ms + 5_000,
    );
    deadline.unref();
    const codes = await Promise.all(
      workers.map(
        (w) =>
          new Promise<number | null>((resolve) => {
            w.once('exit', (code) => resolve(code));
            w.process.kill('SIGTERM');
          }),
      ),
    );
    clearTimeout(deadline);
    const clean = codes.every((c) => c === 0);
    log.info({ codes }, clean ? 'all workers stopped' : 'a worker did not stop cleanly');
    process.exit(failure || (clean ? 0 : 1));
  };

  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => void shutDown(signal));
  log.info({ workers: count, pid: process.pid }, `agent-service primary starting ${count} workers`);
  for (let i = 0; i < count; i++) fork();
}
