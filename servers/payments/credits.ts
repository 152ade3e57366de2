/**
 * Credits: USDC owed back to a payer (`marketplace_credits`, db/schema.ts) - the unused part of an
 * outbid featured bid, and the like. Functions of `(db | trx)`. A credit is written in the same
 * transaction as the change that owes it, once per (reason, subject); the settler pays it out as a
 * USDC transfer from the settler key once its source payment is settled (`settler.ts`), and voids
 * it when the source payment failed (nothing was collected, so nothing is owed back).
 */
import { randomUUID } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import { z } from 'zod';
import type { Dialect } from '../../db/database.ts';
import { claimLeased, type Lease } from '../../db/leases.ts';
import type { Database, MarketplaceCreditRow } from '../../db/schema.ts';
import { usdcOf } from './networks.ts';

type Db = Kysely<Database> | Transaction<Database>;

export type CreditReason = 'featured_outbid' | 'embodiment_deposit' | 'boost_remainder';

export interface NewCredit {
  payer: string;
  /** Atomic USDC; a credit of 0 is not written. */
  amount: number;
  reason: CreditReason;
  subjectId: string;
  sourcePaymentId: string;
}

/** Writes the credit (once per reason and subject); false when it was 0 or already written. */
export async function owe(db: Db, credit: NewCredit, now: string): Promise<boolean> {
  if (credit.amount <= 0) return false;
  const result = await db
    .insertInto('marketplace_credits')
    .values({
      id: randomUUID(),
      payer: credit.payer.toLowerCase(),
      amount: credit.amount,
      reason: credit.reason,
      subject_id: credit.subjectId,
      source_payment_id: credit.sourcePaymentId,
      status: 'owed',
      transaction_hash: null,
      raw_transaction: null,
      error: null,
      lease_owner: null,
      lease_expires_at: null,
      created_at: now,
      updated_at: now,
      paid_at: null,
    })
    .onConflict((oc) => oc.columns(['reason', 'subject_id']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
}

/** Credits whose source payment failed: nothing was collected, so nothing is given back. */
export async function voidUncollected(db: Db, now: string): Promise<number> {
  const result = await db
    .updateTable('marketplace_credits')
    .set({ status: 'void', updated_at: now, error: 'the source payment was never collected' })
    .where('status', '=', 'owed')
    .where('source_payment_id', 'in', (eb) =>
      eb.selectFrom('payments').select('id').where('status', 'in', ['failed', 'released']),
    )
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/**
 * Claims credits to pay: `owed` ones whose source payment is settled, and `sending` ones whose lease
 * ran out (their process stopped before reading the receipt), leased to `owner`.
 */
export function claimCredits(db: Db, dialect: Dialect, lease: Lease): Promise<MarketplaceCreditRow[]> {
  return claimLeased(db, dialect, 'marketplace_credits', {
    ...lease,
    due: (w) =>
      w.or([
        w.and([
          w('status', '=', 'owed'),
          w(
            'source_payment_id',
            'in',
            w.selectFrom('payments').select('payments.id').where('payments.status', '=', 'settled'),
          ),
        ]),
        w('status', '=', 'sending'),
      ]),
    orderBy: 'created_at',
  });
}

/** Moves a claimed credit on, if this process still holds its lease. */
export async function moveCredit(
  db: Db,
  credit: Pick<MarketplaceCreditRow, 'id' | 'lease_owner' | 'status'>,
  to:
    | { status: 'sending'; transaction_hash: string; raw_transaction: string }
    | { status: 'paid'; transaction_hash: string }
    | { status: 'owed'; error: string },
  now: string,
  keepLease = false,
): Promise<boolean> {
  const result = await db
    .updateTable('marketplace_credits')
    .set({
      status: to.status,
      updated_at: now,
      ...(keepLease ? {} : { lease_owner: null, lease_expires_at: null }),
      ...(to.status === 'sending'
        ? { transaction_hash: to.transaction_hash, raw_transaction: to.raw_transaction, error: null }
        : to.status === 'paid'
          ? { transaction_hash: to.transaction_hash, paid_at: now, error: null }
          : { transaction_hash: null, raw_transaction: null, error: to.error }),
    })
    .where('id', '=', credit.id)
    .where('lease_owner', '=', credit.lease_owner)
    .where('status', '=', credit.status)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export const Credit = z.object({
  credit_id: z.uuid(),
  amount_usdc: z.number(),
  reason: z
    .string()
    .describe(
      'featured_outbid: the unused part of a featured bid that was outbid; embodiment_deposit: the deposit ' +
        'of a booking that was declined or cancelled; boost_remainder: the unspent budget of a cancelled campaign.',
    ),
  subject_id: z
    .string()
    .describe('What it is for: the bid id (featured_outbid), the booking id (embodiment_deposit).'),
  status: z
    .enum(['owed', 'sending', 'paid', 'void'])
    .describe(
      'owed: waiting to be paid (the source payment must be settled and a settler key configured); ' +
        'sending: the USDC transfer is on its way; paid: transferred (transaction_hash); void: the source ' +
        'payment was never collected, so nothing is owed.',
    ),
  transaction_hash: z.string().nullable().describe('The USDC transfer, once sent.'),
  created_at: z.string(),
  paid_at: z.string().nullable(),
});
export type Credit = z.infer<typeof Credit>;

export const CreditsOfPayer = z.object({
  payer: z.string().describe('The payer address, lower-case.'),
  owed_usdc: z.number().describe('Credited and not yet transferred (owed or sending).'),
  paid_usdc: z.number().describe('Transferred back.'),
  credits: z.array(Credit).describe('Newest first, at most 100.'),
});
export type CreditsOfPayer = z.infer<typeof CreditsOfPayer>;

/** Public read of what is owed and paid back to an address. */
export async function creditsOf(db: Db, payer: string): Promise<CreditsOfPayer> {
  const address = payer.toLowerCase();
  const rows = await db
    .selectFrom('marketplace_credits')
    .selectAll()
    .where('payer', '=', address)
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .limit(100)
    .execute();
  const totals = await db
    .selectFrom('marketplace_credits')
    .select((eb) => [
      eb.fn
        .sum<number | string | null>(
          eb.case().when('status', 'in', ['owed', 'sending']).then(eb.ref('amount')).else(0).end(),
        )
        .as('owed'),
      eb.fn
        .sum<number | string | null>(
          eb.case().when('status', '=', 'paid').then(eb.ref('amount')).else(0).end(),
        )
        .as('paid'),
    ])
    .where('payer', '=', address)
    .executeTakeFirst();
  return {
    payer: address,
    owed_usdc: usdcOf(Number(totals?.owed ?? 0)),
    paid_usdc: usdcOf(Number(totals?.paid ?? 0)),
    credits: rows.map((row) => ({
      credit_id: row.id,
      amount_usdc: usdcOf(row.amount),
      reason: row.reason,
      subject_id: row.subject_id,
      status: row.status,
      transaction_hash: row.transaction_hash,
      created_at: row.created_at,
      paid_at: row.paid_at,
    })),
  };
}
