/**
 * Worker thread of `sqlite-checkpoints.ts`: a connection of its own that runs a PASSIVE WAL
 * checkpoint (copy committed frames into the database file, syncing the WAL before and the file
 * after, as SQLite's automatic checkpoint does) each time the main thread asks, and answers with
 * what it did. PASSIVE never waits for the writer or readers: it copies what it can.
 */
import { parentPort, workerData } from 'node:worker_threads';
import SQLite from 'better-sqlite3';

const { file } = workerData as { file: string };
const db = new SQLite(file);
db.pragma('busy_timeout = 5000');
db.pragma('synchronous = NORMAL');

parentPort?.on('message', (message: 'checkpoint' | 'close') => {
  if (message === 'close') {
    db.close();
    parentPort?.close();
    return;
  }
  try {
    const [result] = db.pragma('wal_checkpoint(PASSIVE)') as {
      busy: number;
      log: number;
      checkpointed: number;
    }[];
    parentPort?.postMessage({ ok: true, ...result });
  } catch (err) {
    parentPort?.postMessage({ ok: false, error: (err as Error).message });
  }
});
