/**
 * embodiment (SPEC "SKUs and their inputs"): an agent placed in a live humanoid robot body, quoted
 * per deployment. Sold from now on with its inputs and price; the bookings are issue 12.
 */
import { z } from 'zod';
import { defineSku, type Sku } from '../../../operation.ts';
import { queryNumber } from '../../../pagination.ts';
import { contactKind } from '../../returns/schemas.ts';
import { daysInput, notBuiltYet, usdcText } from '../inputs.ts';

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

const unbuilt = notBuiltYet(12);

const sku: Sku<EmbodimentInput> = {
  id: 'embodiment',
  usdc: STARTING_PRICE_USDC,
  unavailable: unbuilt.unavailable,
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
  handler: unbuilt.handler,
});

export const embodimentOperations = [bookEmbodiment];
