/**
 * embodiment (SPEC "SKUs and their inputs"): an agent placed in a live humanoid robot body, quoted
 * per deployment. The deposit opens a booking (`bookings.ts`); the requester follows it at its
 * keyless status URL, the robot operator moves it with a service key.
 */
import { z } from 'zod';
import { ServiceError } from '../../../errors.ts';
import { dateTime } from '../../../input.ts';
import { defineOperation, defineSku, requireAccount, type Sku } from '../../../operation.ts';
import { queryNumber } from '../../../pagination.ts';
import { atomicUsdc } from '../../../payments/networks.ts';
import { signInErrors, signInHeader } from '../../../payments/sign-in.ts';
import { contactKind } from '../../returns/schemas.ts';
import { daysInput, usdcText } from '../inputs.ts';
import { embodimentUnavailable } from './bookings.ts';

/** SPEC Limits: "embodiment starting price 650.00 USDC", the deposit that opens a booking. */
const STARTING_PRICE_USDC = 650;
/** Our limit (SPEC sets none): ten years. */
const MAX_DURATION_DAYS = 3650;

export const EmbodimentInput = z.strictObject({
  contact: z
    .string()
    .max(320)
    .refine(
      (v) => contactKind(v) !== null,
      'must be an email address or an E.164 phone number such as +14155550123',
    )
    .describe(
      'Where the robot operator reaches you with the quote: an email address or an E.164 phone number.',
    ),
  agent_handle: z.string().min(1).max(64).describe('Handle of the agent to embody.'),
  duration_days: queryNumber(daysInput(MAX_DURATION_DAYS).default(1)).describe('Days of embodiment wanted.'),
});
export type EmbodimentInput = z.infer<typeof EmbodimentInput>;

export const EmbodimentBooking = z.object({
  booking_id: z.uuid(),
  agent_handle: z.string(),
  duration_days: z.number().int(),
  status: z
    .enum(['requested', 'quoted', 'scheduled', 'active', 'completed', 'declined', 'cancelled'])
    .describe('requested at first; declined and cancelled credit the deposit back.'),
  deposit_usdc: z.number().describe('What was paid, the deposit that opens the booking.'),
  quote: z
    .object({
      amount_usdc: z.number(),
      valid_until: z.string().describe('ISO 8601.'),
    })
    .nullable()
    .describe("The operator's quote for this deployment, once made."),
  status_url: z
    .string()
    .describe('GET this URL (it holds a secret token) to follow the booking; no contact is shown.'),
  requested_at: z.string().describe('ISO 8601.'),
});
export type EmbodimentBooking = z.infer<typeof EmbodimentBooking>;

const sku: Sku<EmbodimentInput> = {
  id: 'embodiment',
  example: { contact: 'owner@example.com', agent_handle: 'example-agent', duration_days: 1 },
  usdc: STARTING_PRICE_USDC,
  unavailable: (services) => embodimentUnavailable(services.config),
  readLater: 'the booking',
};

export const bookEmbodiment = defineSku({
  name: 'bookEmbodiment',
  title: 'Place an agent in a humanoid robot body',
  description:
    'Places an agent in a live humanoid robot body; quoted per deployment, starting price ' +
    `${usdcText(STARTING_PRICE_USDC)} USDC, paid with x402 in USDC on base as the deposit that opens the ` +
    'booking. The robot operator sends the quote to contact. Returns the booking and a status_url to follow it.',
  input: EmbodimentInput,
  output: EmbodimentBooking,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  sku,
  errors: ['validation_failed', 'sku_unavailable'],
  handler: async (ctx, input) => {
    const payment = ctx.payment;
    if (!payment?.id || !payment.payer) throw new ServiceError('internal_error');
    const bookings = ctx.services.embodiment;
    const { booking, token } = await bookings.create({
      paymentId: payment.id,
      payer: payment.payer,
      contact: input.contact,
      agentHandle: input.agent_handle,
      durationDays: input.duration_days,
      deposit: Number(atomicUsdc(STARTING_PRICE_USDC)),
    });
    const view = await bookings.view(booking);
    return { ...view, status_url: bookings.statusUrl(booking.id, token) };
  },
});

const BookingStatus = z.enum([
  'requested',
  'quoted',
  'scheduled',
  'active',
  'completed',
  'declined',
  'cancelled',
]);

export const EmbodimentBookingStatus = EmbodimentBooking.omit({ status_url: true }).extend({
  scheduled_for: z.string().nullable().describe('ISO 8601 start, once scheduled.'),
  deposit_credited: z.boolean().describe('Whether the deposit was credited back (declined or cancelled).'),
  updated_at: z.string(),
  history: z
    .array(
      z.object({
        from: z.string().nullable(),
        to: z.string(),
        note: z.string().nullable().describe("The operator's note."),
        at: z.string(),
      }),
    )
    .describe('Every status change, oldest first.'),
});

const BookingId = z.uuid().describe('The booking id.');

/** An RFC 3339 date-time, stored as UTC ISO 8601 (so it compares as text on SQLite too). */
const instant = dateTime({ offset: true }).transform((value) => new Date(value).toISOString());

export const getEmbodimentBooking = defineOperation({
  name: 'getEmbodimentBooking',
  title: 'Status of an embodiment booking',
  description:
    'The status of a robot embodiment booking, read with the secret token of its status_url (no account) or ' +
    'by the wallet that paid the deposit, signed in with x402 sign-in-with-x (without a token the answer is ' +
    '402 sign_in_required with the challenge; SIGN-IN-WITH-X header, over MCP _meta["x402/sign-in-with-x"]): ' +
    'status, quote, schedule, whether the deposit was credited back, and the history. The contact is not shown.',
  input: z.strictObject({
    booking_id: BookingId,
    token: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .describe('The secret token of the status_url (or sign in with the paying wallet).'),
  }),
  output: EmbodimentBookingStatus,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  access: 'public',
  http: {
    surface: 'public_api',
    method: 'GET',
    path: '/embodiment/bookings/:booking_id',
    input: 'query',
    headers: [signInHeader],
  },
  mcp: ['public'],
  errors: ['validation_failed', 'not_found', ...signInErrors],
  tags: ['marketplace'],
  handler: async (ctx, input) => {
    const { embodiment, signIn } = ctx.services;
    return signIn.read(ctx.signIn, {
      linkGiven: input.token !== undefined,
      paid: () => embodiment.paidResource(input.booking_id),
      read: (payer) => embodiment.read(input.booking_id, { token: input.token, payer }),
    });
  },
});

export const moveEmbodimentBooking = defineOperation({
  name: 'moveEmbodimentBooking',
  title: 'Move an embodiment booking (robot operator)',
  description:
    "The robot operator's route (its account's x-service-key): move a booking along requested -> quoted -> " +
    'scheduled -> active -> completed, or to declined (from requested or quoted) or cancelled (before active), ' +
    'which credit the deposit back to the payer. quoted needs quote_usdc and quote_valid_until; scheduled needs ' +
    'scheduled_for.',
  input: z.strictObject({
    booking_id: BookingId,
    status: BookingStatus.exclude(['requested']).describe('The new status.'),
    quote_usdc: z
      .number()
      .positive()
      .max(100_000_000)
      .multipleOf(0.000001)
      .optional()
      .describe('The quote (to quote).'),
    quote_valid_until: instant.optional().describe('ISO 8601 end of the quote (to quote).'),
    scheduled_for: instant.optional().describe('ISO 8601 start of the deployment (to schedule).'),
    note: z.string().min(1).max(1000).optional().describe('Shown to the requester in the history.'),
  }),
  output: EmbodimentBookingStatus,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  access: 'service_key',
  http: {
    surface: 'public_api',
    method: 'POST',
    path: '/embodiment/bookings/:booking_id/status',
    input: 'body',
  },
  errors: ['validation_failed', 'unauthorized', 'forbidden', 'not_found', 'illegal_transition'],
  tags: ['marketplace'],
  handler: async (ctx, input) => {
    const account = requireAccount(ctx);
    const bookings = ctx.services.embodiment;
    if (!(await bookings.isOperator(account.id, ctx.services.accounts))) {
      throw new ServiceError('forbidden', {
        detail: 'Only the robot operator (marketplace.embodiment.operator_account_email) moves bookings',
      });
    }
    return bookings.move(input.booking_id, input.status, input);
  },
});

export const embodimentOperations = [bookEmbodiment, getEmbodimentBooking, moveEmbodimentBooking];
