/**
 * The scan worker: a worker in every process claims queued scans under a lease (PostgreSQL:
 * `FOR UPDATE SKIP LOCKED`) and runs them (`runner.ts`). A process that dies mid-scan leaves the
 * lease to expire and another process runs the scan again (up to `scanner.max_attempts`). Each tick
 * first re-scores scans an older scoring version stored and takes the period's snapshot when due.
 */
import type { Logger } from 'pino';
import { PollingWorker } from '../../polling-worker.ts';
import type { ScansDeps } from './deps.ts';
import { claimScans, failScan, takeSnapshots } from './repository.ts';
import { runScan } from './runner.ts';
import { periodOf, rescoreStale } from './scores.ts';

/** Runs queued scans in the background, `scanner.workers` at a time, and takes period snapshots. */
export class ScanWorker extends PollingWorker {
  private readonly inFlight = new Set<Promise<void>>();
  private readonly abort = new AbortController();
  private readonly deps: ScansDeps;
  private lastSnapshotPeriod = '';
  protected readonly name = 'scan';

  constructor(deps: ScansDeps) {
    super();
    this.deps = deps;
  }

  protected get pollIntervalMs(): number {
    return this.deps.config.scanner.poll_interval_ms;
  }

  protected get log(): Logger {
    return this.deps.log;
  }

  /** Stops claiming, cancels scans in flight (their lease expires and another process retries). */
  override async stop(): Promise<void> {
    this.abort.abort();
    await super.stop();
    await Promise.allSettled(this.inFlight);
  }

  /** Takes the period's snapshots if no process has yet. */
  private async snapshot(): Promise<void> {
    const at = this.deps.now();
    const period = periodOf(at);
    if (period === this.lastSnapshotPeriod) return;
    await takeSnapshots(this.deps.db, periodOf(at), at.toISOString());
    this.lastSnapshotPeriod = period;
  }

  /** Takes the period snapshot when due, then claims as many scans as there are free slots. */
  async tick(): Promise<number> {
    // Stored scans of an older scoring version first, so snapshots never mix versions.
    await rescoreStale(this.deps);
    await this.snapshot();
    const { db, dialect, config, now, log } = this.deps;
    const free = config.scanner.workers - this.inFlight.size;
    if (free <= 0) return 0;
    const at = now();
    const claimed = await claimScans(
      db,
      dialect,
      this.owner,
      at.toISOString(),
      new Date(at.getTime() + config.scanner.lease_ms).toISOString(),
      free,
    );
    for (const scan of claimed) {
      const job = (async () => {
        if (scan.attempts > config.scanner.max_attempts) {
          await failScan(
            db,
            scan.id,
            this.owner,
            'The scan was interrupted too many times',
            now().toISOString(),
          );
          return;
        }
        await runScan(this.deps, scan, this.owner, this.abort.signal);
      })()
        .catch((err) => log.error({ err, scan_id: scan.id }, 'scan failed to run'))
        .finally(() => {
          this.inFlight.delete(job);
          this.nudge();
        });
      this.inFlight.add(job);
    }
    return claimed.length;
  }
}
