/**
 * WAL checkpoints off the event loop. SQLite's automatic checkpoint runs inside the COMMIT that
 * takes the WAL past 1,000 pages, on the committing connection: it copies those pages into the
 * database file and syncs the WAL and the file, and the thread waits for all of it - with group
 * commit that thread is the event loop, and under a stream of POST /return a checkpoint came every
 * hundred or so requests. Once commits keep coming (`COMMITS_BEFORE_WORKER`), the automatic
 * checkpoint of the write connection is turned off and a worker thread with a connection of its
 * own (`sqlite-checkpoint-worker.ts`) runs a PASSIVE checkpoint after every `COMMITS_PER_CHECKPOINT`
 * commits, one at a time. Should the worker fail, the automatic checkpoint is turned back on.
 *
 * Durability does not depend on it: a commit is durable once the WAL is synced
 * (`sqlite-group-commit.ts`), and SQLite syncs the WAL before it copies frames and the file after.
 */
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import type SQLite from 'better-sqlite3';

/** Commits a process makes before checkpoints move to a worker (a quiet process never starts one). */
const COMMITS_BEFORE_WORKER = 64;
/** Commits between two checkpoint requests. */
const COMMITS_PER_CHECKPOINT = 16;
/** SQLite's default `wal_autocheckpoint`, restored if the worker fails. */
const AUTOCHECKPOINT_PAGES = 1000;

export class Checkpointer {
  readonly #file: string;
  readonly #writer: SQLite.Database;
  #worker: Worker | undefined;
  #commits = 0;
  #inFlight = false;
  #failed = false;
  /** Checkpoints the worker ran (for tests and diagnostics). */
  checkpoints = 0;

  constructor(file: string, writer: SQLite.Database) {
    this.#file = file;
    this.#writer = writer;
  }

  /** Called by the driver after each COMMIT, outside any transaction. */
  committed(): void {
    if (this.#failed) return;
    this.#commits++;
    if (!this.#worker) {
      if (this.#commits < COMMITS_BEFORE_WORKER) return;
      this.#start();
    }
    if (this.#inFlight || this.#commits < COMMITS_PER_CHECKPOINT) return;
    this.#commits = 0;
    this.#inFlight = true;
    this.#worker?.postMessage('checkpoint');
  }

  #start(): void {
    const worker = new Worker(new URL('./sqlite-checkpoint-worker.ts', import.meta.url), {
      workerData: { file: this.#file },
    });
    worker.unref();
    worker.on('message', (result: { ok: boolean; error?: string }) => {
      this.#inFlight = false;
      if (result.ok) this.checkpoints++;
      else this.#fail(new Error(result.error));
    });
    worker.on('error', (err) => this.#fail(err));
    this.#worker = worker;
    this.#writer.pragma('wal_autocheckpoint = 0');
    this.#commits = COMMITS_PER_CHECKPOINT;
  }

  #fail(err: Error): void {
    if (this.#failed) return;
    this.#failed = true;
    this.#writer.pragma(`wal_autocheckpoint = ${AUTOCHECKPOINT_PAGES}`);
    process.emitWarning(`SQLite checkpoint worker failed (${err.message}); checkpoints run on commit again`);
    void this.#worker?.terminate();
  }

  /** Lets a running checkpoint finish, then stops the worker (before the connections close). */
  async close(): Promise<void> {
    const worker = this.#worker;
    this.#worker = undefined;
    if (!worker || this.#failed) return;
    const exited = once(worker, 'exit');
    // Unref'd while it serves, the worker must hold the process open now: a script whose last
    // step is closing the database would otherwise end before the worker did, mid-close.
    worker.ref();
    worker.postMessage('close');
    await exited;
  }
}
