/**
 * Leased work: tables whose rows are claimed by one worker at a time. Claiming sets the lease
 * (`lease_owner`, `lease_expires_at`) and counts the attempt; a row whose lease ran out (its worker
 * died, or paused past it) can be claimed again. `claimLeased` is the one claim query of the
 * service: the outboxes (`deliveries`, `return_notifications`, `brand_tasks`, `marketplace_deliveries`,
 * `ssf_deliveries`), the scan queue, the settler's payments and the credits it pays back.
 *
 * An outbox row is due when it is `pending`, its `next_attempt_at` has come and no live lease holds
 * it; settling it (`settleLeased`) is conditional on still holding the lease, so a worker whose
 * lease expired (a slow attempt, a paused process) cannot overwrite what another recorded.
 */
import type { Expression, ExpressionBuilder, Kysely, Selectable, SqlBool, UpdateObject } from 'kysely';
import type { Dialect } from './database.ts';
import type { Database, OutboxColumns } from './schema.ts';

/** Tables whose rows are claimed under a lease (`lease_owner`, `lease_expires_at`, `attempts`). */
export type LeaseTable = {
  [K in keyof Database]: Database[K] extends { lease_owner: string | null; lease_expires_at: string | null }
    ? K
    : never;
}[keyof Database];

/** Tables with the leased-outbox columns (`OutboxColumns`: `state`, `next_attempt_at`, ...). */
export type LeasedTable =
  | 'deliveries'
  | 'return_notifications'
  | 'brand_tasks'
  | 'marketplace_deliveries'
  | 'ssf_deliveries';

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

// biome-ignore lint/suspicious/noExplicitAny: the leased columns are the same on each table of LeaseTable
type Loose = Kysely<any>;
// biome-ignore lint/suspicious/noExplicitAny: as above
type LooseBuilder = ExpressionBuilder<any, any>;

/** Who claims, as of when, until when, and how many rows at most. */
export interface Lease {
  owner: string;
  now: string;
  leaseUntil: string;
  limit: number;
}

/** A lease of `ms` from `at` for up to `limit` rows. */
export function leaseOf(owner: string, at: Date, ms: number, limit: number): Lease {
  return { owner, now: at.toISOString(), leaseUntil: new Date(at.getTime() + ms).toISOString(), limit };
}

export interface LeaseClaim<T extends LeaseTable> extends Lease {
  /**
   * Which rows are work, besides holding no live lease. Default: an outbox row that is `pending`
   * and whose `next_attempt_at` has come.
   */
  due?: (eb: ExpressionBuilder<Database, T>) => Expression<SqlBool>;
  /** Of the due rows, only these (an outbox's rows whose receiver is not paused). */
  where?: (eb: ExpressionBuilder<Database, T>) => Expression<SqlBool>;
  /** Oldest first by this column; default `next_attempt_at`. */
  orderBy?: keyof Database[T] & string;
  /** What else the claim sets on the row (a scan starts running). */
  set?: (eb: ExpressionBuilder<Database, T>) => UpdateObject<Database, T>;
}

/**
 * Claims up to `limit` due rows of `table` for `owner` until `leaseUntil`, counting the attempt.
 * PostgreSQL skips rows other processes hold (`FOR UPDATE SKIP LOCKED`); SQLite has one writer.
 */
export async function claimLeased<T extends LeaseTable>(
  db: Kysely<Database>,
  dialect: Dialect,
  table: T,
  claim: LeaseClaim<T>,
): Promise<Selectable<Database[T]>[]> {
  const loose = db as unknown as Loose;
  const name: string = table;
  const due = (claim.due ?? outboxDue(claim.now)) as unknown as (eb: LooseBuilder) => Expression<SqlBool>;
  const only = claim.where as unknown as ((eb: LooseBuilder) => Expression<SqlBool>) | undefined;
  const extra = claim.set as unknown as ((eb: LooseBuilder) => Record<string, unknown>) | undefined;
  const claimable = loose
    .selectFrom(name)
    .select('id')
    .where(due)
    .$if(only !== undefined, (q) => q.where(only as (eb: LooseBuilder) => Expression<SqlBool>))
    .where((w) => w.or([w('lease_expires_at', 'is', null), w('lease_expires_at', '<', claim.now)]))
    .orderBy(claim.orderBy ?? 'next_attempt_at')
    .limit(claim.limit)
    .$if(dialect === 'postgres', (q) => q.forUpdate().skipLocked());
  const rows = await loose
    .updateTable(name)
    .set((eb) => ({
      ...extra?.(eb),
      lease_owner: claim.owner,
      lease_expires_at: claim.leaseUntil,
      attempts: eb('attempts', '+', 1),
    }))
    .where('id', 'in', claimable)
    .returningAll()
    .execute();
  return rows as Selectable<Database[T]>[];
}

const outboxDue = (now: string) => (eb: LooseBuilder) =>
  eb.and([eb('state', '=', 'pending'), eb('next_attempt_at', '<=', now)]);

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
