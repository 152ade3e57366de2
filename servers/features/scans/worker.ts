/**
 * The scan worker: a worker in every process claims queued scans under a lease (PostgreSQL:
 * `FOR UPDATE SKIP LOCKED`) and runs them (`runner.ts`). A process that dies mid-scan leaves the
 * lease to expire and another process runs the scan again (up to `scanner.max_attempts`). Each tick
 * first re-scores scans an older scoring version stored and takes the period's snapshot when due.
 * The worker also bounds each domain's history (`scanner.history_per_domain`): after it runs a scan
 * it prunes that domain, and now and then it sweeps every domain (scans run inline in a request,
 * quick checks, add to a history too) - off the request path either way.
 */
import type { Logger } from 'pino';
import { PollingWorker } from '../../polling-worker.ts';
import type { ScansDeps } from './deps.ts';
import { domainsOverHistory, pruneHistory } from './history-repository.ts';
import { claimScans, failScan, takeSnapshots } from './repository.ts';
import { runScan } from './runner.ts';
import { periodOf, rescoreStale } from './scores.ts';

/** How often the worker sweeps every domain's history, and how many domains one sweep prunes. */
const HISTORY_SWEEP_MS = 10 * 60_000;
const HISTORY_SWEEP_DOMAINS = 100;

/** Runs queued scans in the background, `scanner.workers` at a time, and takes period snapshots. */
export class ScanWorker extends PollingWorker {
  private readonly inFlight = new Set<Promise<void>>();
  private readonly abort = new AbortController();
  private readonly deps: ScansDeps;
  private lastSnapshotPeriod = '';
  private lastHistorySweep = 0;
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

  /** Prunes the finished scans of `domain` past the ones its history keeps. */
  async pruneDomain(domain: string): Promise<number> {
    return pruneHistory(this.deps.db, domain, this.deps.config.scanner.history_per_domain);
  }

  /** Prunes every domain over its bound, at most every HISTORY_SWEEP_MS. */
  private async sweepHistory(): Promise<void> {
    const t = this.deps.now().getTime();
    if (t - this.lastHistorySweep < HISTORY_SWEEP_MS) return;
    this.lastHistorySweep = t;
    const keep = this.deps.config.scanner.history_per_domain;
    for (const domain of await domainsOverHistory(this.deps.db, keep, HISTORY_SWEEP_DOMAINS)) {
      await this.pruneDomain(domain);
    }
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
    await this.sweepHistory();
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
        await this.pruneDomain(scan.domain);
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
