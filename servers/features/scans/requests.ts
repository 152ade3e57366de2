/**
 * The scan service's request side: free scans for the REST and MCP routes (`request`), those of
 * anonymous sessions against their quota, the x402 `scan` SKU's scans once per payment
 * (`requestPaid`, the private ones read back with a token), and quick checks run in the request
 * (`signal` for a domain never scanned, `freshQuickCheck` for the x402 `signal` SKU). A request
 * writes a `queued` row and nudges the worker; `wait` and `waitUntil` follow the row, whichever
 * process runs the scan.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { AnonymousPrincipal } from '../../../auth/anonymous/sessions.ts';
import type { ScanRow } from '../../../db/schema.ts';
import { invalid, ServiceError } from '../../errors.ts';
import type { AccountPrincipal } from '../accounts/service.ts';
import type { ScansDeps } from './deps.ts';
import { digestOf, READ_TOKEN_PREFIX, type ScanReads } from './reads.ts';
import {
  findActiveScan,
  findActiveScanOfSession,
  findDomainScore,
  findPaidScan,
  findScan,
  insertScan,
  recordPaidScan,
  setReadTokenHash,
} from './repository.ts';
import { runScan } from './runner.ts';
import type { Scan, Signal } from './schemas.ts';
import type { ProfileId } from './scoring.ts';
import type { ScanWorker } from './worker.ts';

const WAIT_POLL_MS = 200;

export class ScanRequests {
  private readonly deps: ScansDeps;
  private readonly reads: ScanReads;
  private readonly worker: ScanWorker;
  /** Quick first checks running in this process, by domain (their scan id): callers join, not repeat. */
  private readonly quickChecks = new Map<string, string>();

  constructor(deps: ScansDeps, reads: ScanReads, worker: ScanWorker) {
    this.deps = deps;
    this.reads = reads;
    this.worker = worker;
  }

  /**
   * Queues a scan (or joins one of the same domain and visibility already queued or running).
   * Private scans belong to an account or an anonymous session; without either a scan is public.
   * A scan of an anonymous session (and no account) counts against its quota and is attributed to
   * it, so a claim can move it to an account; it joins only the session's own running scans.
   */
  async request(
    input: { domain: string; public: boolean; profile?: ProfileId | undefined },
    account: AccountPrincipal | null,
    depth: 'full' | 'quick' = 'full',
    anonymous: AnonymousPrincipal | null = null,
  ): Promise<Scan> {
    const domain = this.reads.normalize(input.domain);
    if (!input.public && !account && !anonymous) {
      throw invalid(
        [
          {
            field: 'public',
            message:
              'false needs an x-service-key or an anonymous session token: private scans have an owner',
          },
        ],
        'public: false needs an x-service-key or an anonymous session token',
      );
    }
    const isPublic = input.public ? 1 : 0;
    const { db, now } = this.deps;
    const profile = input.profile ?? null;
    if (!account && anonymous) return this.requestAnonymous(domain, isPublic, depth, anonymous, profile);
    const active = await findActiveScan(db, domain, isPublic, account?.id ?? null);
    if (active && active.depth === depth && active.profile === profile)
      return this.reads.view(active, account);
    const id = randomUUID();
    await insertScan(db, {
      id,
      domain,
      account_id: account?.id ?? null,
      is_public: isPublic,
      depth,
      requested_at: now().toISOString(),
      profile,
    });
    this.worker.nudge();
    return this.reads.get(id, account);
  }
  /**
   * Starts the scan a payment of the x402 `scan` SKU buys. A public scan joins one of the domain
   * already queued or running, as `request()` does; a private one is queued alone, read back with a
   * token that is returned once and stored only as a digest, so the token reads this scan alone.
   *
   * Each payment keeps the scan it bought (`paid_scans`, written in the transaction that queues
   * it). A payment released after its scan was queued (its process died while the handler waited
   * on the scan) and sent again answers that scan, queued, running or done, instead of queueing
   * another. A private scan then gets a new token: the first one was never handed out, since the
   * reply comes only after the result is stored, and a stored result is replayed, not run again.
   * When the earlier scan failed, or the authorization now pays for another scan (released by a
   * failure, then spent on another request), a new scan is started.
   */
  async requestPaid(
    input: { domain: string; public: boolean },
    account: AccountPrincipal | null,
    paymentId: string | undefined,
  ): Promise<{ scan: Scan; readToken: string | null }> {
    const domain = this.reads.normalize(input.domain);
    const isPublic = input.public ? 1 : 0;
    const { db, now } = this.deps;
    const readToken = input.public ? null : READ_TOKEN_PREFIX + randomBytes(32).toString('base64url');
    const at = now().toISOString();
    let queued = false;
    const id = await db.transaction().execute(async (trx) => {
      const bought = paymentId === undefined ? undefined : await findPaidScan(trx, paymentId);
      if (bought && bought.domain === domain && bought.is_public === isPublic && bought.status !== 'failed') {
        if (readToken) await setReadTokenHash(trx, bought.id, digestOf(readToken));
        return bought.id;
      }
      const active = isPublic ? await findActiveScan(trx, domain, 1, null) : undefined;
      let scanId = active && active.depth === 'full' && active.profile === null ? active.id : undefined;
      if (!scanId) {
        scanId = randomUUID();
        await insertScan(trx, {
          id: scanId,
          domain,
          account_id: account?.id ?? null,
          is_public: isPublic,
          depth: 'full',
          requested_at: at,
          ...(readToken ? { read_token_hash: digestOf(readToken) } : {}),
        });
        queued = true;
      }
      if (paymentId !== undefined) await recordPaidScan(trx, paymentId, scanId, at);
      return scanId;
    });
    if (queued) this.worker.nudge();
    return { scan: await this.reads.get(id, account, null, readToken), readToken };
  }
  private async requestAnonymous(
    domain: string,
    isPublic: number,
    depth: 'full' | 'quick',
    anonymous: AnonymousPrincipal,
    profile: ProfileId | null,
  ): Promise<Scan> {
    const { db, now } = this.deps;
    const active = await findActiveScanOfSession(db, domain, isPublic, anonymous.sessionId);
    if (active && active.depth === depth && active.profile === profile)
      return this.reads.view(active, null, anonymous);
    const id = randomUUID();
    await db.transaction().execute(async (trx) => {
      await this.deps.anonymous.reserveScan(trx, anonymous);
      await insertScan(trx, {
        id,
        domain,
        account_id: null,
        anonymous_session_id: anonymous.sessionId,
        is_public: isPublic,
        depth,
        requested_at: now().toISOString(),
        profile,
      });
    });
    this.worker.nudge();
    return this.reads.get(id, null, anonymous);
  }
  /**
   * Waits until the scan finishes, calling `onProgress` whenever the stored progress moves. Reads
   * the row, so it works whichever process runs the scan.
   */
  async wait(
    scanId: string,
    account: AccountPrincipal | null,
    onProgress: (scan: Scan) => Promise<void> | void,
    signal: AbortSignal,
    anonymous: AnonymousPrincipal | null = null,
  ): Promise<Scan> {
    return this.waitUntil(scanId, { account, anonymous }, Number.POSITIVE_INFINITY, onProgress, signal);
  }
  /**
   * Like `wait`, but gives up at `deadline` (epoch ms) and returns the scan as it stands then
   * (queued or running): callers that promise an answer within a time answer 202 with it.
   */
  async waitUntil(
    scanId: string,
    viewer: {
      account: AccountPrincipal | null;
      anonymous?: AnonymousPrincipal | null;
      readToken?: string | null;
    },
    deadline: number,
    onProgress: (scan: Scan) => Promise<void> | void,
    signal: AbortSignal,
  ): Promise<Scan> {
    let last = '';
    for (;;) {
      const scan = await this.reads.get(
        scanId,
        viewer.account,
        viewer.anonymous ?? null,
        viewer.readToken ?? null,
      );
      const mark = `${scan.status}:${scan.progress.done}:${scan.progress.total}`;
      if (mark !== last) {
        last = mark;
        await onProgress(scan);
      }
      if (scan.status === 'done' || scan.status === 'failed') return scan;
      if (signal.aborted) throw new ServiceError('service_unavailable', { detail: 'request cancelled' });
      const left = deadline - Date.now();
      if (left <= 0) return scan;
      await new Promise((resolve) => setTimeout(resolve, Math.min(WAIT_POLL_MS, left)));
    }
  }
  /**
   * The latest public score. A domain never scanned gets a quick check now (home page and site-level
   * documents), run inline; the caller has already been rate limited for it.
   */
  async signal(
    rawDomain: string,
    allowQuickCheck: () => Promise<void>,
    signal: AbortSignal,
    profile: ProfileId | null = null,
  ): Promise<Signal> {
    const domain = this.reads.normalize(rawDomain);
    const { db } = this.deps;
    const latest = await findDomainScore(db, domain);
    if (latest) return this.reads.signalOf(domain, latest, profile);
    const scanning = (scanId: string): Signal => ({
      ...this.reads.emptySignal(domain, 'scanning'),
      scan_id: scanId,
      detail: 'A first scan is running; ask again shortly',
    });
    const active = this.quickChecks.get(domain) ?? (await findActiveScan(db, domain, 1, null))?.id;
    if (active) return scanning(active);
    // Looked up again after the await above and claimed before the next one, so of the calls
    // arriving together in this process exactly one runs the check.
    const joined = this.quickChecks.get(domain);
    if (joined) return scanning(joined);
    const id = randomUUID();
    this.quickChecks.set(domain, id);
    try {
      await allowQuickCheck();
      return await this.quickCheck(domain, id, signal, profile);
    } finally {
      this.quickChecks.delete(domain);
    }
  }
  private async quickCheck(
    domain: string,
    id: string,
    signal: AbortSignal,
    profile: ProfileId | null,
  ): Promise<Signal> {
    const { db } = this.deps;
    await this.runQuickScan(domain, id, signal);
    const scored = await findDomainScore(db, domain);
    if (scored) return this.reads.signalOf(domain, scored, profile);
    const failed = await findScan(db, id);
    return {
      ...this.reads.emptySignal(domain, 'unreachable'),
      scan_id: id,
      detail: failed?.error ?? 'The site could not be scanned',
    };
  }
  /** Crawls and scores a public quick scan inline, in this request; returns the stored row. */
  private async runQuickScan(domain: string, id: string, signal: AbortSignal): Promise<ScanRow> {
    const { db, now, config } = this.deps;
    const at = now();
    // Inserted running, under a lease of this request: a queued row would also be claimed by a
    // background worker and crawled twice.
    await insertScan(
      db,
      { id, domain, account_id: null, is_public: 1, depth: 'quick', requested_at: at.toISOString() },
      {
        owner: `quick:${this.worker.owner}`,
        leaseUntil: new Date(at.getTime() + config.scanner.lease_ms).toISOString(),
      },
    );
    await runScan(this.deps, (await findScan(db, id)) as ScanRow, null, signal);
    return (await findScan(db, id)) as ScanRow;
  }
  /**
   * A fresh quick check of the domain now, whatever score is stored (the x402 `signal` SKU): run in
   * this request, stored as a public scan of depth `quick` (which never replaces a full scan's score).
   * A site that cannot be crawled is a `site_unreachable` error, so nothing is sold for it.
   */
  async freshQuickCheck(rawDomain: string, signal: AbortSignal): Promise<Scan> {
    const domain = this.reads.normalize(rawDomain);
    const row = await this.runQuickScan(domain, randomUUID(), signal);
    if (row.status !== 'done') {
      throw new ServiceError('site_unreachable', { detail: row.error ?? `${domain} could not be scanned` });
    }
    return this.reads.view(row, null);
  }
}
