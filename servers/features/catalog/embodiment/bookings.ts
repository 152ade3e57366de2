/**
 * Embodiment bookings (issue 12). The 650.00 USDC deposit opens a booking `requested`; it is
 * delivered to the robot operator configured in `marketplace.embodiment` (signed webhook and/or
 * email) through the marketplace outbox (`../marketplace-outbox.ts`); the operator moves it with a service key of its
 * account; the requester follows it at a keyless status URL holding a secret token (only its SHA-256
 * is stored, compared in constant time; the contact is never shown there).
 *
 *   requested -> quoted -> scheduled -> active -> completed
 *   requested | quoted -> declined;  requested | quoted | scheduled -> cancelled
 *
 * declined and cancelled credit the deposit back to the payer (`credits.ts`), in the same
 * transaction as the change.
 */
import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Dialect } from '../../../../db/database.ts';
import type { Database, EmbodimentBookingRow } from '../../../../db/schema.ts';
import type { Config } from '../../../config.ts';
import { notFound, ServiceError } from '../../../errors.ts';
import { owe } from '../../../payments/credits.ts';
import { atomicUsdc, usdcOf } from '../../../payments/networks.ts';
import { DELIVERED_PAYMENT_STATUSES, type PaidResource } from '../../../payments/sign-in.ts';
import { queueMarketplaceDelivery } from '../marketplace-outbox.ts';

export type BookingStatus = EmbodimentBookingRow['status'];

/** The moves the operator may make from each status. */
export const TRANSITIONS: Record<BookingStatus, readonly BookingStatus[]> = {
  requested: ['quoted', 'declined', 'cancelled'],
  quoted: ['scheduled', 'declined', 'cancelled'],
  scheduled: ['active', 'cancelled'],
  active: ['completed'],
  completed: [],
  declined: [],
  cancelled: [],
};

const TOKEN_PREFIX = 'agsvc_booking_';
const hashToken = (token: string): string => createHash('sha256').update(token).digest('hex');

/** Why the SKU cannot run here (no operator account, or no channel to reach it), or null. */
export function embodimentUnavailable(config: Config): string | null {
  const e = config.marketplace.embodiment;
  if (!e.operator_account_email) return 'no robot operator configured (marketplace.embodiment)';
  if (!e.webhook_url && !(e.email && config.smtp.url)) {
    return 'the robot operator has no channel (marketplace.embodiment.webhook_url, or email with smtp.url)';
  }
  return null;
}

export interface BookingsDeps {
  db: Kysely<Database>;
  dialect: Dialect;
  config: Config;
  now: () => Date;
}

export class EmbodimentBookings {
  readonly deps: BookingsDeps;
  readonly #nudge: () => void;

  constructor(deps: BookingsDeps, nudge: () => void) {
    this.deps = deps;
    this.#nudge = nudge;
  }

  statusUrl(id: string, token: string): string {
    return `${this.deps.config.public_api_url}/embodiment/bookings/${id}?token=${token}`;
  }

  /** Opens a booking for a paid deposit and queues its delivery to the operator, in one transaction. */
  async create(input: {
    paymentId: string;
    payer: string;
    contact: string;
    agentHandle: string;
    durationDays: number;
    deposit: number;
  }): Promise<{ booking: EmbodimentBookingRow; token: string }> {
    const { db, config } = this.deps;
    const now = this.deps.now().toISOString();
    const token = `${TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
    const booking: EmbodimentBookingRow = {
      id: randomUUID(),
      payment_id: input.paymentId,
      payer: input.payer.toLowerCase(),
      token_hash: hashToken(token),
      contact: input.contact,
      agent_handle: input.agentHandle,
      duration_days: input.durationDays,
      deposit: input.deposit,
      status: 'requested',
      quote_amount: null,
      quote_valid_until: null,
      scheduled_for: null,
      created_at: now,
      updated_at: now,
    };
    const e = config.marketplace.embodiment;
    const channels: { channel: 'webhook' | 'email'; target: string }[] = [];
    if (e.webhook_url) channels.push({ channel: 'webhook', target: e.webhook_url });
    if (e.email && config.smtp.url) channels.push({ channel: 'email', target: e.email });
    const made = await db.transaction().execute(async (trx) => {
      // One booking per payment: a payment released after its booking was made (its process died
      // before the result was kept) and sent again answers that booking. Its status token was never
      // delivered, so it is replaced by the one answered now.
      const earlier = await trx
        .selectFrom('embodiment_bookings')
        .selectAll()
        .where('payment_id', '=', input.paymentId)
        .executeTakeFirst();
      if (earlier) {
        await trx
          .updateTable('embodiment_bookings')
          .set({ token_hash: booking.token_hash })
          .where('id', '=', earlier.id)
          .execute();
        return { ...earlier, token_hash: booking.token_hash };
      }
      await trx.insertInto('embodiment_bookings').values(booking).execute();
      await trx
        .insertInto('embodiment_events')
        .values({
          id: randomUUID(),
          booking_id: booking.id,
          from_status: null,
          to_status: 'requested',
          note: null,
          at: now,
        })
        .execute();
      for (const { channel, target } of channels) {
        await queueMarketplaceDelivery(
          trx,
          { kind: 'embodiment_booking', subject_id: booking.id, network: null, channel, target },
          now,
        );
      }
      return booking;
    });
    this.#nudge();
    return { booking: made, token };
  }

  /**
   * The booking its status URL names, or that `payer` (signed in with x402 sign-in-with-x) paid
   * for; 404 for an unknown id or a wrong token alike.
   */
  async read(id: string, who: { token?: string | undefined; payer?: string | null }): Promise<BookingView> {
    const row = await this.deps.db
      .selectFrom('embodiment_bookings')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirst();
    const given = Buffer.from(hashToken(who.token ?? ''), 'hex');
    const stored = Buffer.from(row?.token_hash ?? '00'.repeat(32), 'hex');
    const tokenOk = who.token !== undefined && timingSafeEqual(given, stored);
    const paidBy = !!row && !!who.payer && row.payer === who.payer.toLowerCase();
    if (!row || !(tokenOk || paidBy)) throw notFound(`No booking ${id} with this token`);
    return this.view(row);
  }

  /**
   * A booking as x402 sign-in-with-x reads it: its status URL (without the token) and the wallet
   * whose deposit opened it, once that payment was delivered; undefined for an unknown booking.
   */
  async paidResource(id: string): Promise<PaidResource | undefined> {
    const row = await this.deps.db
      .selectFrom('embodiment_bookings')
      .innerJoin('payments', 'payments.id', 'embodiment_bookings.payment_id')
      .select(['embodiment_bookings.payer'])
      .where('embodiment_bookings.id', '=', id)
      .where('payments.status', 'in', [...DELIVERED_PAYMENT_STATUSES])
      .executeTakeFirst();
    if (!row) return undefined;
    return {
      url: `${this.deps.config.public_api_url}/embodiment/bookings/${id}`,
      description: `the embodiment booking ${id}`,
      payers: [row.payer.toLowerCase()],
    };
  }

  /** Whether this account is the configured robot operator. */
  async isOperator(accountId: string, accounts: { get(id: string): Promise<{ email: string } | undefined> }) {
    const email = this.deps.config.marketplace.embodiment.operator_account_email;
    const account = await accounts.get(accountId);
    return !!email && !!account && account.email.toLowerCase() === email.toLowerCase();
  }

  /** The operator moves a booking; declined and cancelled credit the deposit back. */
  async move(
    id: string,
    to: BookingStatus,
    details: {
      quote_usdc?: number | undefined;
      quote_valid_until?: string | undefined;
      scheduled_for?: string | undefined;
      note?: string | undefined;
    },
  ): Promise<BookingView> {
    const { db, dialect } = this.deps;
    const now = this.deps.now().toISOString();
    const moved = await db.transaction().execute(async (trx) => {
      const row = await trx
        .selectFrom('embodiment_bookings')
        .selectAll()
        .where('id', '=', id)
        .$if(dialect === 'postgres', (q) => q.forUpdate())
        .executeTakeFirst();
      if (!row) throw notFound(`No booking ${id}`);
      if (!TRANSITIONS[row.status].includes(to)) {
        throw new ServiceError('illegal_transition', {
          detail: `A booking ${row.status} cannot become ${to} (allowed: ${TRANSITIONS[row.status].join(', ') || 'none'})`,
          errors: [{ field: 'status', message: `is not allowed from ${row.status}` }],
        });
      }
      const update: Partial<EmbodimentBookingRow> = { status: to, updated_at: now };
      if (to === 'quoted') {
        if (details.quote_usdc === undefined || details.quote_valid_until === undefined) {
          throw new ServiceError('validation_failed', {
            detail: 'A quote needs quote_usdc and quote_valid_until',
            errors: [
              ...(details.quote_usdc === undefined
                ? [{ field: 'quote_usdc', message: 'is required to quote' }]
                : []),
              ...(details.quote_valid_until === undefined
                ? [{ field: 'quote_valid_until', message: 'is required to quote' }]
                : []),
            ],
          });
        }
        update.quote_amount = Number(atomicUsdc(details.quote_usdc));
        update.quote_valid_until = details.quote_valid_until;
      }
      if (to === 'scheduled') {
        if (details.scheduled_for === undefined) {
          throw new ServiceError('validation_failed', {
            detail: 'Scheduling needs scheduled_for',
            errors: [{ field: 'scheduled_for', message: 'is required to schedule' }],
          });
        }
        update.scheduled_for = details.scheduled_for;
      }
      const done = await trx
        .updateTable('embodiment_bookings')
        .set(update)
        .where('id', '=', id)
        .where('status', '=', row.status)
        .executeTakeFirst();
      if (Number(done.numUpdatedRows) !== 1) {
        throw new ServiceError('illegal_transition', {
          detail: 'The booking changed meanwhile; read it and retry',
        });
      }
      await trx
        .insertInto('embodiment_events')
        .values({
          id: randomUUID(),
          booking_id: id,
          from_status: row.status,
          to_status: to,
          note: details.note ?? null,
          at: now,
        })
        .execute();
      if (to === 'declined' || to === 'cancelled') {
        await owe(
          trx,
          {
            payer: row.payer,
            amount: row.deposit,
            reason: 'embodiment_deposit',
            subjectId: id,
            sourcePaymentId: row.payment_id,
          },
          now,
        );
      }
      return { ...row, ...update } as EmbodimentBookingRow;
    });
    return this.view(moved);
  }

  async view(row: EmbodimentBookingRow): Promise<BookingView> {
    const events = await this.deps.db
      .selectFrom('embodiment_events')
      .selectAll()
      .where('booking_id', '=', row.id)
      .orderBy('at')
      .orderBy('id')
      .execute();
    return {
      booking_id: row.id,
      agent_handle: row.agent_handle,
      duration_days: row.duration_days,
      status: row.status,
      deposit_usdc: usdcOf(row.deposit),
      quote:
        row.quote_amount !== null && row.quote_valid_until !== null
          ? { amount_usdc: usdcOf(row.quote_amount), valid_until: row.quote_valid_until }
          : null,
      scheduled_for: row.scheduled_for,
      deposit_credited: row.status === 'declined' || row.status === 'cancelled',
      requested_at: row.created_at,
      updated_at: row.updated_at,
      history: events.map((e) => ({ from: e.from_status, to: e.to_status, note: e.note, at: e.at })),
    };
  }
}

export interface BookingView {
  booking_id: string;
  agent_handle: string;
  duration_days: number;
  status: BookingStatus;
  deposit_usdc: number;
  quote: { amount_usdc: number; valid_until: string } | null;
  scheduled_for: string | null;
  deposit_credited: boolean;
  requested_at: string;
  updated_at: string;
  history: { from: string | null; to: string; note: string | null; at: string }[];
}
