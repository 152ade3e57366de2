/**
 * Batch scans (issue 35 item 3): up to 100 domains queued for an account in one request. The batch,
 * its items and their queued scans are written in one transaction before the 202, so a batch that
 * was answered exists; the scans run on the scan worker's queue like any other (a domain already
 * queued or running with the same visibility and profile is joined, as `POST /scans` does). Progress
 * is read off the items' scans.
 */
import { randomUUID } from 'node:crypto';
import { invalid, notFound } from '../../errors.ts';
import type { AccountPrincipal } from '../accounts/service.ts';
import type { ScansDeps } from './deps.ts';
import type { ScanHistoryReads } from './history.ts';
import { batchItems, findBatch, insertBatch } from './history-repository.ts';
import type { ScanBatch, StartScanBatchInput } from './history-schemas.ts';
import type { ScanReads } from './reads.ts';
import { findActiveScan, insertScan } from './repository.ts';
import type { ProfileId } from './scoring.ts';
import type { ScanWorker } from './worker.ts';

type ItemStatus = ScanBatch['items'][number]['status'];

export class ScanBatches {
  private readonly deps: ScansDeps;
  private readonly reads: ScanReads;
  private readonly history: ScanHistoryReads;
  private readonly worker: ScanWorker;

  constructor(deps: ScansDeps, reads: ScanReads, history: ScanHistoryReads, worker: ScanWorker) {
    this.deps = deps;
    this.reads = reads;
    this.history = history;
    this.worker = worker;
  }

  batchUrl(id: string): string {
    return `${this.deps.config.public_api_url}/scans/batch/${id}`;
  }

  /** The domains as the scanner takes them; a domain given twice is a 400 naming the repeat. */
  private domainsOf(raw: readonly string[]): string[] {
    const seen = new Map<string, number>();
    return raw.map((text, i) => {
      const domain = this.reads.normalize(text);
      const first = seen.get(domain);
      if (first !== undefined) {
        throw invalid([{ field: `domains.${i}`, message: `repeats domains.${first} (${domain})` }]);
      }
      seen.set(domain, i);
      return domain;
    });
  }

  /**
   * Queues the batch (one transaction: batch, items, new scans) and answers its progress. `admit`
   * (the rate limit) is asked for the number of domains once they are known to be valid.
   */
  async start(
    input: StartScanBatchInput,
    account: AccountPrincipal,
    admit: (domains: number) => Promise<void>,
  ): Promise<ScanBatch> {
    const domains = this.domainsOf(input.domains);
    await admit(domains.length);
    const { db, now } = this.deps;
    const id = randomUUID();
    const at = now().toISOString();
    const isPublic = input.public ? 1 : 0;
    const profile = input.profile ?? null;
    let queued = 0;
    await db.transaction().execute(async (trx) => {
      const items: { domain: string; scan_id: string }[] = [];
      for (const domain of domains) {
        const active = await findActiveScan(trx, domain, isPublic, account.id);
        if (active && active.depth === 'full' && active.profile === profile) {
          items.push({ domain, scan_id: active.id });
          continue;
        }
        const scanId = randomUUID();
        await insertScan(trx, {
          id: scanId,
          domain,
          account_id: account.id,
          is_public: isPublic,
          depth: 'full',
          requested_at: at,
          profile,
        });
        queued += 1;
        items.push({ domain, scan_id: scanId });
      }
      await insertBatch(
        trx,
        { id, account_id: account.id, is_public: isPublic, profile, created_at: at },
        items,
      );
    });
    if (queued > 0) this.worker.nudge();
    return this.progress(id, account);
  }

  /** The batch's progress, per domain; 404 for a batch of another account. */
  async progress(batchId: string, account: AccountPrincipal): Promise<ScanBatch> {
    const { db } = this.deps;
    const batch = await findBatch(db, batchId, account.id);
    if (!batch) throw notFound(`No batch ${batchId}`);
    const rows = await batchItems(db, batchId);
    const items = await Promise.all(
      rows.map(async (r) => {
        const status: ItemStatus = r.scan_id === null || r.status === null ? 'pruned' : r.status;
        const current =
          r.scan_id !== null && r.status !== null
            ? await this.history.currentScore({
                id: r.scan_id,
                status: r.status,
                score: r.score,
                tier: r.tier,
                scoring_version: r.scoring_version,
              })
            : null;
        return {
          domain: r.domain,
          scan_id: r.scan_id,
          status,
          score: current?.score ?? null,
          tier: current?.tier ?? null,
          error: r.error ?? null,
          status_url: r.scan_id === null ? null : this.reads.statusUrl(r.scan_id),
        };
      }),
    );
    const counts = { queued: 0, running: 0, done: 0, failed: 0, pruned: 0 };
    for (const item of items) counts[item.status] += 1;
    return {
      batch_id: batch.id,
      public: batch.is_public === 1,
      profile: batch.profile as ProfileId | null,
      created_at: batch.created_at,
      complete: counts.queued === 0 && counts.running === 0,
      counts,
      items,
      status_url: this.batchUrl(batch.id),
    };
  }
}
