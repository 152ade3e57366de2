/**
 * Data access for a domain's scan history (the page of its public scans, the previous complete
 * scan a diff compares with, pruning past `scanner.history_per_domain`) and for batch scans.
 * Functions of `(db | trx)` (STYLE.md 10); callers own the transaction.
 */
import type { Kysely } from 'kysely';
import type { Database, ScanRow } from '../../../db/schema.ts';

type Db = Kysely<Database>;

/** A scan row without its facts (the large column), for lists. */
export type ScanHead = Omit<ScanRow, 'facts'>;

const headColumns = [
  'id',
  'domain',
  'account_id',
  'is_public',
  'depth',
  'status',
  'phase',
  'progress_done',
  'progress_total',
  'progress_message',
  'attempts',
  'lease_owner',
  'lease_expires_at',
  'requested_at',
  'started_at',
  'finished_at',
  'error',
  'score',
  'tier',
  'note',
  'components',
  'recommended_next_tools',
  'anonymous_session_id',
  'read_token_hash',
  'scoring_version',
  'scoring_inputs',
  'profile',
] as const satisfies readonly (keyof ScanHead)[];

/**
 * One page of a domain's scans after `after`, newest request first (`scans_domain_history`): the
 * public ones, and the private ones of `accountId` when given.
 */
export function domainScansPage(
  db: Db,
  domain: string,
  accountId: string | null,
  after: { at: string; id: string } | null,
  limit: number,
): Promise<ScanHead[]> {
  return db
    .selectFrom('scans')
    .select(headColumns)
    .where('domain', '=', domain)
    .where((w) =>
      accountId === null
        ? w('is_public', '=', 1)
        : w.or([w('is_public', '=', 1), w('account_id', '=', accountId)]),
    )
    .$if(after !== null, (q) => {
      const { at, id } = after as { at: string; id: string };
      return q.where((w) =>
        w.or([w('requested_at', '<', at), w.and([w('requested_at', '=', at), w('id', '<', id)])]),
      );
    })
    .orderBy('requested_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

/** Who may see a scan besides the public: an account, an anonymous session (either may be null). */
export interface HistoryViewer {
  accountId: string | null;
  sessionId: string | null;
}

/**
 * The latest complete scan of `scan`'s domain and depth finished before it that `viewer` may see
 * (public, the viewer account's, or its anonymous session's): what a diff compares with by default.
 */
export function previousCompleteScan(
  db: Db,
  scan: Pick<ScanRow, 'id' | 'domain' | 'depth' | 'finished_at'>,
  viewer: HistoryViewer,
): Promise<ScanRow | undefined> {
  return db
    .selectFrom('scans')
    .selectAll()
    .where('domain', '=', scan.domain)
    .where('depth', '=', scan.depth)
    .where('status', '=', 'done')
    .where('facts', 'is not', null)
    .where('id', '!=', scan.id)
    .where('finished_at', '<=', scan.finished_at as string)
    .where((w) =>
      w.or([
        w('is_public', '=', 1),
        ...(viewer.accountId !== null ? [w('account_id', '=', viewer.accountId)] : []),
        ...(viewer.sessionId !== null
          ? [w.and([w('account_id', 'is', null), w('anonymous_session_id', '=', viewer.sessionId)])]
          : []),
      ]),
    )
    .orderBy('finished_at', 'desc')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/** Domains with more than `keep` finished scans (up to `limit` of them), for the worker's sweep. */
export async function domainsOverHistory(db: Db, keep: number, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('scans')
    .select('domain')
    .where('status', 'in', ['done', 'failed'])
    .groupBy('domain')
    .having((eb) => eb.fn.countAll(), '>', keep)
    .limit(limit)
    .execute();
  return rows.map((r) => r.domain);
}

/**
 * Deletes the finished scans of `domain` past its `keep` newest (their findings go with them),
 * except the one the leaderboard shows, the one it compares with, and those a payment bought. Returns how many it deleted.
 */
export async function pruneHistory(db: Db, domain: string, keep: number): Promise<number> {
  const old = await db
    .selectFrom('scans')
    .select('id')
    .where('domain', '=', domain)
    .where('status', 'in', ['done', 'failed'])
    .orderBy('finished_at', 'desc')
    .orderBy('id', 'desc')
    .offset(keep)
    .limit(500)
    .execute();
  if (old.length === 0) return 0;
  const result = await db
    .deleteFrom('scans')
    .where(
      'id',
      'in',
      old.map((r) => r.id),
    )
    .where('id', 'not in', (eb) =>
      eb.selectFrom('domain_scores').select('scan_id').where('domain', '=', domain),
    )
    .where('id', 'not in', (eb) =>
      eb
        .selectFrom('domain_scores')
        .select('previous_scan_id')
        .where('domain', '=', domain)
        .where('previous_scan_id', 'is not', null),
    )
    .where('id', 'not in', (eb) => eb.selectFrom('paid_scans').select('scan_id'))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

export async function insertBatch(
  trx: Db,
  batch: { id: string; account_id: string; is_public: number; profile: string | null; created_at: string },
  items: readonly { domain: string; scan_id: string }[],
): Promise<void> {
  await trx.insertInto('scan_batches').values(batch).execute();
  await trx
    .insertInto('scan_batch_items')
    .values(items.map((item, i) => ({ batch_id: batch.id, seq: i + 1, ...item })))
    .execute();
}

/** An account's batch (undefined for anyone else's). */
export function findBatch(db: Db, id: string, accountId: string) {
  return db
    .selectFrom('scan_batches')
    .selectAll()
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
}

/** A batch's items in the order given, each with its scan (no facts) when it is still kept. */
export function batchItems(db: Db, batchId: string) {
  return db
    .selectFrom('scan_batch_items')
    .leftJoin('scans', 'scans.id', 'scan_batch_items.scan_id')
    .select([
      'scan_batch_items.domain',
      'scan_batch_items.scan_id',
      'scans.status',
      'scans.score',
      'scans.tier',
      'scans.error',
      'scans.scoring_version',
      'scans.profile',
    ])
    .where('scan_batch_items.batch_id', '=', batchId)
    .orderBy('scan_batch_items.seq')
    .execute();
}
