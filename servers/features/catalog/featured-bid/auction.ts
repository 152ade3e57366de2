/**
 * The Featured Brand auction (issue 12). One slot, held by the highest daily bid from the moment of
 * payment for `days` days or until outbid. A new bid must reach the minimum next bid: the opening
 * bid (1.00 USDC a day) while the slot is free, else the holder's daily bid plus the increment
 * (0.01 USDC). An outbid holder is credited the unused part of what it paid, pro rata by the
 * second:
 *
 *   credit = floor(amount x remaining_seconds / (days x 86 400))   (atomic USDC, 6 decimals)
 *
 * where remaining_seconds = whole seconds from the outbidding payment to the end of the paid days.
 *
 * Bids are decided one at a time: each takes the `marketplace_locks` row first (an UPDATE, which is a row
 * lock on PostgreSQL and the single writer's lock on SQLite) and reads the holder under it, so two
 * bids paid at the same moment never both hold the slot. A bid that no longer wins when its turn
 * comes fails with 409 `bid_too_low` and is not charged (its authorization is released by the
 * payment core). A bid whose payment later fails holds nothing and its history is not shown.
 */
import { randomUUID } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import type { Database, FeaturedBidRow } from '../../../../db/schema.ts';
import { ServiceError } from '../../../errors.ts';
import { owe } from '../../../payments/credits.ts';
import { atomicUsdc, usdcOf } from '../../../payments/networks.ts';

type Db = Kysely<Database> | Transaction<Database>;

/** SPEC: "the open auction starts at 1.00 USDC per day". */
export const OPENING_BID_USDC = 1;
/** Our rule: a bid beats the holder by at least one cent a day. */
export const BID_INCREMENT_USDC = 0.01;
export const DAY_SECONDS = 86_400;

/** Payments that stand: a bid paid by one of these may hold the slot. */
const STANDING = ['reserved', 'authorized', 'settled', 'reconciling'] as const;

/** The bid holding the slot at `now`, or undefined when the slot is free. */
export function currentHolder(db: Db, now: string): Promise<FeaturedBidRow | undefined> {
  return db
    .selectFrom('featured_bids as b')
    .innerJoin('payments as p', 'p.id', 'b.payment_id')
    .selectAll('b')
    .where('b.status', '=', 'holding')
    .where('b.holds_until', '>', now)
    .where('p.status', 'in', STANDING)
    .orderBy('b.bid', 'desc')
    .orderBy('b.created_at')
    .executeTakeFirst();
}

/** The lowest daily bid that takes the slot from `holder` (atomic USDC). */
export const minimumNextBid = (holder: Pick<FeaturedBidRow, 'bid'> | undefined): number =>
  holder ? holder.bid + Number(atomicUsdc(BID_INCREMENT_USDC)) : Number(atomicUsdc(OPENING_BID_USDC));

export function bidTooLow(minimum: number, holder: FeaturedBidRow | undefined): ServiceError {
  const text = usdcOf(minimum).toFixed(2);
  return new ServiceError('bid_too_low', {
    detail: holder
      ? `The slot is held at ${usdcOf(holder.bid)} USDC a day until ${holder.holds_until}; bid at least ${text} USDC a day`
      : `The open auction starts at ${text} USDC a day`,
    errors: [{ field: 'bid_usdc', message: `must be at least ${text} to win the slot now` }],
    extensions: { minimum_bid_usdc: usdcOf(minimum) },
  });
}

/** The unused part of `bid`'s payment at `at` (pro rata by the whole second; see the file comment). */
export function unusedCredit(bid: Pick<FeaturedBidRow, 'amount' | 'days' | 'holds_until'>, at: Date): number {
  const remaining = Math.max(0, Math.floor((Date.parse(bid.holds_until) - at.getTime()) / 1000));
  const total = bid.days * DAY_SECONDS;
  return Number((BigInt(bid.amount) * BigInt(Math.min(remaining, total))) / BigInt(total));
}

export interface PlacedBid {
  bid: FeaturedBidRow;
  /** The bid it took the slot from, with what that one was credited. */
  outbid: { bid: FeaturedBidRow; credited: number } | null;
}

/**
 * Decides one paid bid: it takes the slot or, overtaken while it was being paid, is refused
 * (`bid_too_low`, nothing written). Runs in one transaction holding the slot's lock.
 */
export async function placeBid(
  db: Kysely<Database>,
  bid: {
    paymentId: string;
    payer: string;
    domain: string;
    url: string;
    blurb: string | null;
    bidUsdc: number;
    days: number;
  },
  at: Date,
): Promise<PlacedBid> {
  const now = at.toISOString();
  return db.transaction().execute(async (trx) => {
    await trx
      .updateTable('marketplace_locks')
      .set({ updated_at: now })
      .where('id', '=', 'featured')
      .execute();
    // One bid per payment: a payment released after its bid was placed (its process died before
    // the result was kept) and sent again answers that bid, deciding nothing twice.
    const placed = await trx
      .selectFrom('featured_bids')
      .selectAll()
      .where('payment_id', '=', bid.paymentId)
      .executeTakeFirst();
    if (placed) return { bid: placed, outbid: null };
    const holder = await currentHolder(trx, now);
    const daily = Number(atomicUsdc(bid.bidUsdc));
    const minimum = minimumNextBid(holder);
    if (daily < minimum) throw bidTooLow(minimum, holder);

    let outbid: PlacedBid['outbid'] = null;
    if (holder) {
      const credited = unusedCredit(holder, at);
      await trx
        .updateTable('featured_bids')
        .set({ status: 'outbid', ended_at: now, credited })
        .where('id', '=', holder.id)
        .where('status', '=', 'holding')
        .execute();
      await owe(
        trx,
        {
          payer: holder.payer,
          amount: credited,
          reason: 'featured_outbid',
          subjectId: holder.id,
          sourcePaymentId: holder.payment_id,
        },
        now,
      );
      outbid = { bid: { ...holder, status: 'outbid', ended_at: now, credited }, credited };
    }
    const row: FeaturedBidRow = {
      id: randomUUID(),
      payment_id: bid.paymentId,
      payer: bid.payer.toLowerCase(),
      domain: bid.domain,
      url: bid.url,
      blurb: bid.blurb,
      bid: daily,
      days: bid.days,
      amount: daily * bid.days,
      status: 'holding',
      holds_from: now,
      holds_until: new Date(at.getTime() + bid.days * DAY_SECONDS * 1000).toISOString(),
      ended_at: null,
      credited: 0,
      created_at: now,
    };
    await trx.insertInto('featured_bids').values(row).execute();
    return { bid: row, outbid };
  });
}

/** The latest bids whose payment stands, newest first. */
export function recentBids(db: Db, limit: number): Promise<FeaturedBidRow[]> {
  return db
    .selectFrom('featured_bids as b')
    .innerJoin('payments as p', 'p.id', 'b.payment_id')
    .selectAll('b')
    .where('p.status', 'in', STANDING)
    .orderBy('b.created_at', 'desc')
    .orderBy('b.id')
    .limit(limit)
    .execute();
}
