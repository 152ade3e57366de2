/**
 * Scans: queue them durably, run them in the background, answer the public reads. The service is
 * its three sides, each its own module: `requests` (free, anonymous and paid scan requests, quick
 * checks; `requests.ts`), `reads` (scans as their viewers see them, fix sheets, scores, the
 * leaderboard and readiness index; `reads.ts`) and the `worker` that claims and runs queued scans
 * (`worker.ts`, running them through `runner.ts`), with a domain's `history` and the diff of two
 * scans (`history.ts`) and `batches` of scans (`batches.ts`). How scores are stored and re-scored is
 * `scores.ts`.
 */
import { ScanBatches } from './batches.ts';
import type { CrawlLimits, CrawlRequest } from './crawler.ts';
import type { ScansDeps } from './deps.ts';
import { ScanHistoryReads } from './history.ts';
import { ScanReads } from './reads.ts';
import { ScanRequests } from './requests.ts';
import { crawlOnly } from './runner.ts';
import type { SiteFacts } from './site-facts.ts';
import { ScanWorker } from './worker.ts';

export type { ScansDeps } from './deps.ts';

export class ScansService {
  readonly reads: ScanReads;
  readonly requests: ScanRequests;
  readonly worker: ScanWorker;
  readonly history: ScanHistoryReads;
  readonly batches: ScanBatches;
  private readonly deps: ScansDeps;

  constructor(deps: ScansDeps) {
    this.deps = deps;
    this.reads = new ScanReads(deps);
    this.worker = new ScanWorker(deps);
    this.requests = new ScanRequests(deps, this.reads, this.worker);
    this.history = new ScanHistoryReads(deps, this.reads);
    this.batches = new ScanBatches(deps, this.reads, this.history, this.worker);
  }

  /** `domain` as the scanner accepts it, or a 400 naming the field. */
  normalize(raw: string): string {
    return this.reads.normalize(raw);
  }

  /**
   * Crawls a domain as a full scan would and stores nothing, for SKUs that build something from
   * the pages (llms-txt, the entity audit); `site_unreachable` when it cannot be crawled.
   */
  crawl(
    rawDomain: string,
    observe: Pick<CrawlRequest, 'onPage' | 'onProgress'>,
    signal: AbortSignal,
    limits: Partial<Pick<CrawlLimits, 'max_pages' | 'scan_timeout_ms'>> = {},
  ): Promise<SiteFacts> {
    return crawlOnly(this.deps, this.normalize(rawDomain), observe, signal, limits);
  }
}
