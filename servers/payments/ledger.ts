/**
 * The payments ledger (`payments` table, db/schema.ts): functions of `(db | trx)`.
 *
 * The reservation is the row itself: `reservePayment` inserts it with `ON CONFLICT DO NOTHING` on
 * the unique (network, asset, payer, nonce), so of any number of concurrent requests carrying one
 * authorization - in one process or many, SQLite or PostgreSQL - exactly one inserts and runs; the
 * others read the row it wrote. Every later transition names the status it leaves, so a transition
 * never applies twice.
 */
import type { Kysely, Transaction, UpdateQueryBuilder, UpdateResult } from 'kysely';
import { type Dialect, isUniqueViolation } from '../../db/database.ts';
import { claimLeased, type Lease } from '../../db/leases.ts';
import type { Database, PaymentRow, PaymentsTable } from '../../db/schema.ts';

type Db = Kysely<Database> | Transaction<Database>;

export type NewPayment = Pick<
  PaymentsTable,
  | 'id'
  | 'sku'
  | 'network'
  | 'asset'
  | 'payer'
  | 'nonce'
  | 'amount'
  | 'pay_to'
  | 'x402_version'
  | 'facilitator'
  | 'referral_handle'
  | 'referral_credit'
  | 'request_hash'
  | 'payload'
  | 'requirements'
  | 'valid_before'
  | 'payment_identifier'
>;

/**
 * Who holds a reservation and until when: a token unique to the request running it (every
 * transition out of `reserved` names it, so a request that lost its reservation cannot write over
 * the next one) and the time after which the reservation counts as abandoned unless renewed.
 */
export interface ReservationLease {
  token: string;
  until: string;
}

/**
 * Reserves the authorization for one execution; false when the ledger already holds it - or holds a
 * live payment of this payer with the same payment identifier (the partial unique index of migration
 * 2026-11-28T0500Z): the caller reads which (`findByAuthorization`, `findByPaymentIdentifier`).
 */
export async function reservePayment(
  db: Db,
  payment: NewPayment,
  lease: ReservationLease,
  now: string,
): Promise<boolean> {
  const result = await db
    .insertInto('payments')
    .values({
      ...payment,
      status: 'reserved',
      lease_owner: lease.token,
      lease_expires_at: lease.until,
      created_at: now,
      updated_at: now,
    })
    .onConflict((oc) => oc.doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
}

export function findByAuthorization(
  db: Db,
  key: Pick<PaymentsTable, 'network' | 'asset' | 'payer' | 'nonce'>,
): Promise<PaymentRow | undefined> {
  return db
    .selectFrom('payments')
    .selectAll()
    .where('network', '=', key.network)
    .where('asset', '=', key.asset)
    .where('payer', '=', key.payer)
    .where('nonce', '=', key.nonce)
    .executeTakeFirst();
}

/** The live payment (not released, not failed) of this payer that holds this payment identifier. */
export function findByPaymentIdentifier(
  db: Db,
  payer: string,
  paymentIdentifier: string,
): Promise<PaymentRow | undefined> {
  return db
    .selectFrom('payments')
    .selectAll()
    .where('payer', '=', payer)
    .where('payment_identifier', '=', paymentIdentifier)
    .where('status', 'not in', ['released', 'failed'])
    .executeTakeFirst();
}

export function findPayment(db: Db, id: string): Promise<PaymentRow | undefined> {
  return db.selectFrom('payments').selectAll().where('id', '=', id).executeTakeFirst();
}

/**
 * Takes a released authorization (its earlier request failed, nothing was charged) for a new
 * execution; false when another request took it first.
 */
export async function reuseReleased(
  db: Db,
  id: string,
  payment: NewPayment,
  lease: ReservationLease,
  now: string,
): Promise<boolean> {
  const { id: _keep, ...fields } = payment;
  let result: UpdateResult;
  try {
    result = await db
      .updateTable('payments')
      .set({
        ...fields,
        status: 'reserved',
        result: null,
        error: null,
        lease_owner: lease.token,
        lease_expires_at: lease.until,
        updated_at: now,
      })
      .where('id', '=', id)
      .where('status', '=', 'released')
      .executeTakeFirst();
  } catch (err) {
    // Another live payment of this payer holds the payment identifier (a concurrent retry).
    if (isUniqueViolation(err)) return false;
    throw err;
  }
  return Number(result.numUpdatedRows) === 1;
}

/** Keeps a running request's reservation alive; false when it is no longer this request's. */
export async function renewReservation(db: Db, id: string, lease: ReservationLease): Promise<boolean> {
  const result = await db
    .updateTable('payments')
    .set({ lease_expires_at: lease.until })
    .where('id', '=', id)
    .where('status', '=', 'reserved')
    .where('lease_owner', '=', lease.token)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * Stores the result before settlement starts: a process that dies mid-settlement leaves a row to
 * reconcile. False when the reservation is no longer this request's (then nothing may be settled).
 */
export async function storeResult(
  db: Db,
  id: string,
  token: string,
  result: string,
  now: string,
): Promise<boolean> {
  const stored = await db
    .updateTable('payments')
    .set({ result, updated_at: now })
    .where('id', '=', id)
    .where('status', '=', 'reserved')
    .where('lease_owner', '=', token)
    .executeTakeFirst();
  return Number(stored.numUpdatedRows) === 1;
}

/**
 * Clears a delivered result (SKUs whose output is personal data: `Sku.keepsResult` false). Only
 * once the payment has its outcome: a reservation still needs its result to be reconciled.
 */
export async function forgetResult(db: Db, id: string, now: string): Promise<void> {
  await db
    .updateTable('payments')
    .set({ result: null, updated_at: now })
    .where('id', '=', id)
    .where('status', '<>', 'reserved')
    .execute();
}

export type Outcome =
  | { status: 'authorized'; result: string }
  | { status: 'settled'; result: string; transaction: string }
  | { status: 'reconciling'; result: string; transaction: string | null; error: string }
  | { status: 'failed'; error: string; transaction: string | null };

/** Records how a reserved payment ended; the result is kept only when it is delivered. */
export async function recordOutcome(
  db: Db,
  id: string,
  token: string,
  outcome: Outcome,
  now: string,
): Promise<boolean> {
  const result = await db
    .updateTable('payments')
    .set({
      status: outcome.status,
      lease_owner: null,
      lease_expires_at: null,
      updated_at: now,
      result: outcome.status === 'failed' ? null : outcome.result,
      transaction_hash: 'transaction' in outcome ? outcome.transaction : null,
      error: 'error' in outcome ? outcome.error : null,
      ...(outcome.status === 'settled' ? { settled_at: now } : {}),
    })
    .where('id', '=', id)
    .where('status', '=', 'reserved')
    .where('lease_owner', '=', token)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** The handler failed: nothing is charged and the authorization may pay for another request. */
export async function releasePayment(db: Db, id: string, token: string, now: string): Promise<void> {
  await db
    .updateTable('payments')
    .set({ status: 'released', result: null, lease_owner: null, lease_expires_at: null, updated_at: now })
    .where('id', '=', id)
    .where('status', '=', 'reserved')
    .where('lease_owner', '=', token)
    .execute();
}

/**
 * Claims payments the settler should work on: `authorized` ones (settle before they expire) and
 * `reconciling` ones (read the chain), each leased to `owner` so that one process works on it.
 */
export function claimForSettlement(db: Db, dialect: Dialect, lease: Lease): Promise<PaymentRow[]> {
  return claimLeased(db, dialect, 'payments', {
    ...lease,
    due: (eb) => eb('status', 'in', ['authorized', 'reconciling']),
    orderBy: 'updated_at',
  });
}

/** Moves a claimed payment from `from` to its new status and frees the lease; false if the lease was lost. */
export async function settleClaimed(
  db: Db,
  payment: Pick<PaymentRow, 'id' | 'lease_owner' | 'status'>,
  to:
    | { status: 'settled'; transaction: string | null }
    | { status: 'failed'; error: string }
    | { status: 'reconciling'; transaction: string | null; error: string },
  now: string,
): Promise<boolean> {
  const result = await db
    .updateTable('payments')
    .set({
      status: to.status,
      lease_owner: null,
      lease_expires_at: null,
      updated_at: now,
      ...(to.status === 'settled'
        ? { transaction_hash: to.transaction ?? null, settled_at: now, error: null }
        : to.status === 'reconciling'
          ? { transaction_hash: to.transaction, error: to.error }
          : { error: to.error }),
    })
    .where('id', '=', payment.id)
    .where('lease_owner', '=', payment.lease_owner)
    .where('status', '=', payment.status)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** A reservation made before leases existed, not updated for this long, belongs to a stopped process. */
export const STALE_RESERVATION_MS = 15 * 60_000;

/**
 * Reservations whose request stopped without an outcome (its process died): their lease ran out
 * without being renewed (rows reserved before leases existed: `legacyOlderThan` without an update).
 * With a stored result settlement may have been submitted, so they are reconciled (the settler
 * reads the chain, or submits again: the nonce makes a second transfer impossible); without one
 * nothing was delivered or submitted, and the authorization is released for the payer's retry.
 * `id` limits it to one payment (a retry that finds its reservation abandoned).
 */
export async function recoverStaleReservations(
  db: Db,
  now: string,
  legacyOlderThan: string,
  id?: string,
): Promise<number> {
  const abandoned = (q: WhereTarget) =>
    q
      .where('status', '=', 'reserved')
      .where((w) =>
        w.or([
          w('lease_expires_at', '<', now),
          w.and([w('lease_expires_at', 'is', null), w('updated_at', '<', legacyOlderThan)]),
        ]),
      )
      .$if(id !== undefined, (w) => w.where('id', '=', id as string));
  const reconcile = await abandoned(
    db.updateTable('payments').set({
      status: 'reconciling',
      error: 'request stopped during settlement',
      lease_owner: null,
      lease_expires_at: null,
      updated_at: now,
    }),
  )
    .where('result', 'is not', null)
    .executeTakeFirst();
  const release = await abandoned(
    db
      .updateTable('payments')
      .set({ status: 'released', lease_owner: null, lease_expires_at: null, updated_at: now }),
  )
    .where('result', 'is', null)
    .executeTakeFirst();
  return Number(reconcile.numUpdatedRows) + Number(release.numUpdatedRows);
}

type WhereTarget = UpdateQueryBuilder<Database, 'payments', 'payments', UpdateResult>;

// --- Referral handles ----------------------------------------------------------------------------

export function findHandle(db: Db, handle: string) {
  return db.selectFrom('referral_handles').selectAll().where('handle', '=', handle).executeTakeFirst();
}

export function handleOfAccount(db: Db, accountId: string) {
  return db.selectFrom('referral_handles').selectAll().where('account_id', '=', accountId).executeTakeFirst();
}

/** Registers the handle for the account; false when the handle or the account already has one. */
export async function insertHandle(db: Db, handle: string, accountId: string, now: string): Promise<boolean> {
  const result = await db
    .insertInto('referral_handles')
    .values({ handle, account_id: accountId, created_at: now })
    .onConflict((oc) => oc.doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
}

/** Credits of a handle in atomic USDC: settled (balance), verified but not settled (pending), count. */
export async function referralTotals(
  db: Db,
  handle: string,
): Promise<{ settled: number; pending: number; count: number }> {
  const row = await db
    .selectFrom('payments')
    .select((eb) => [
      eb.fn
        .sum<number | string | null>(
          eb.case().when('status', '=', 'settled').then(eb.ref('referral_credit')).else(0).end(),
        )
        .as('settled'),
      eb.fn
        .sum<number | string | null>(
          eb
            .case()
            .when('status', 'in', ['authorized', 'reconciling'])
            .then(eb.ref('referral_credit'))
            .else(0)
            .end(),
        )
        .as('pending'),
      eb.fn.count<number | string>(eb.case().when('status', '=', 'settled').then(1).end()).as('count'),
    ])
    .where('referral_handle', '=', handle)
    .executeTakeFirst();
  return {
    settled: Number(row?.settled ?? 0),
    pending: Number(row?.pending ?? 0),
    count: Number(row?.count ?? 0),
  };
}
