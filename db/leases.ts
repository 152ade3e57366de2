/**
 * Leased queues: tables whose rows are work items claimed by one worker at a time. A row is due when
 * it is `pending`, its `next_attempt_at` has come and no live lease holds it; claiming sets the
 * lease and counts the attempt; settling is conditional on still holding the lease, so a worker
 * whose lease expired (a slow attempt, a paused process) cannot overwrite what another recorded.
 *
 * Used by both outboxes of return requests (`deliveries`, `return_notifications`) and the brand
 * tasks they follow (`brand_tasks`); the other
 * outboxes keep their own copies until issue 34 moves them here.
 */
import type { Kysely, Selectable } from 'kysely';
import type { Dialect } from './database.ts';
import type { Database, OutboxColumns } from './schema.ts';

/** Tables with the leased-queue columns (`state`, `next_attempt_at`, `lease_owner`, `lease_expires_at`, `attempts`). */
export type LeasedTable = 'deliveries' | 'return_notifications' | 'brand_tasks';

/** The columns every leased queue has. */
export interface LeasedColumns {
  id: string;
  attempts: number;
  lease_owner: string | null;
}
export type LeasedRow<T extends LeasedTable> = Selectable<Database[T]> & LeasedColumns;

/** A row's queue columns as it is queued: due at `at`, unleased, not yet tried. */
export function newOutboxRow(at: string): OutboxColumns {
  return {
    state: 'pending',
    attempts: 0,
    next_attempt_at: at,
    lease_owner: null,
    lease_expires_at: null,
    last_error: null,
    created_at: at,
    delivered_at: null,
  };
}

// biome-ignore lint/suspicious/noExplicitAny: the leased columns are the same on each table of LeasedTable
type Loose = Kysely<any>;

/**
 * Claims up to `limit` due rows for `owner` until `leaseUntil`, counting the attempt.
 * PostgreSQL skips rows other processes hold (`FOR UPDATE SKIP LOCKED`); SQLite has one writer.
 */
export async function claimLeased<T extends LeasedTable>(
  db: Kysely<Database>,
  dialect: Dialect,
  table: T,
  claim: { owner: string; now: string; leaseUntil: string; limit: number },
): Promise<LeasedRow<T>[]> {
  const loose = db as unknown as Loose;
  const name: string = table;
  const due = loose
    .selectFrom(name)
    .select('id')
    .where('state', '=', 'pending')
    .where('next_attempt_at', '<=', claim.now)
    .where((w) => w.or([w('lease_expires_at', 'is', null), w('lease_expires_at', '<', claim.now)]))
    .orderBy('next_attempt_at')
    .limit(claim.limit)
    .$if(dialect === 'postgres', (q) => q.forUpdate().skipLocked());
  const rows = await loose
    .updateTable(name)
    .set((eb) => ({
      lease_owner: claim.owner,
      lease_expires_at: claim.leaseUntil,
      attempts: eb('attempts', '+', 1),
    }))
    .where('id', 'in', due)
    .returningAll()
    .execute();
  return rows as LeasedRow<T>[];
}

/** How a claimed row ends its attempt. `pending` puts it back for `nextAttemptAt`. */
export type LeaseOutcome =
  | { state: 'delivered'; at: string }
  | { state: 'failed'; error: string }
  | { state: 'pending'; error: string; nextAttemptAt: string; attempts?: number };

/** Settles a claimed row and releases its lease; false when the lease was lost to another worker meanwhile. */
export async function settleLeased(
  trx: Kysely<Database>,
  table: LeasedTable,
  row: { id: string; lease_owner: string | null },
  outcome: LeaseOutcome,
): Promise<boolean> {
  const loose = trx as unknown as Loose;
  const name: string = table;
  const result = await loose
    .updateTable(name)
    .set({
      state: outcome.state,
      lease_owner: null,
      lease_expires_at: null,
      ...(outcome.state === 'delivered' ? { delivered_at: outcome.at } : { last_error: outcome.error }),
      ...(outcome.state === 'pending' ? { next_attempt_at: outcome.nextAttemptAt } : {}),
      ...(outcome.state === 'pending' && outcome.attempts !== undefined
        ? { attempts: outcome.attempts }
        : {}),
    })
    .where('id', '=', row.id)
    .where('lease_owner', '=', row.lease_owner)
    .where('state', '=', 'pending')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}
