import { idempotencyKeyFrom } from '../../idempotency.ts';
import { defineOperation } from '../../operation.ts';
import { requireCallableDestination } from '../../outbound/safe-fetch.ts';
import {
  ReturnStatusInput,
  ReturnStatusResult,
  StartReturnRequestInput,
  StartReturnRequestResult,
} from './schemas.ts';

export const startReturnRequest = defineOperation({
  name: 'startReturnRequest',
  title: 'Start a return or refund request with a brand',
  description:
    "Ask a brand for a return or refund on behalf of a person, after the person approved it. Give the brand's " +
    "domain (from lookup_card_charge), the person's name and a contact (email or E.164 phone), and whatever " +
    'identifies the purchase (order number, date, amount, card last 4). The request is stored, then delivered ' +
    'to the brand in the background (signed webhook or email); if the brand has no channel yet it waits as ' +
    'awaiting_channel. Returns request_id and status_url; follow progress with get_return_status. ' +
    'Include approval_proof when the person signed off (a JWS over the request, or a declaration).',
  input: StartReturnRequestInput,
  output: StartReturnRequestResult,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  access: 'public',
  http: {
    surface: 'cs',
    method: 'POST',
    path: '/return',
    input: 'body',
    headers: [
      {
        name: 'Idempotency-Key',
        description:
          'Makes retries safe: the same key with the same body returns the first response; the same key with a ' +
          'different body is refused with 409. Keys are kept for 24 hours.',
      },
    ],
  },
  mcp: ['public'],
  rateLimit: 'unauthenticated_writes',
  errors: ['validation_failed', 'idempotency_key_reused', 'rate_limited'],
  tags: ['customer service'],
  handler: async (ctx, input) => {
    // Stored now, called later: refuse a callback our outbound calls could not (or must not) reach.
    if (input.callback_url)
      await requireCallableDestination(ctx.services.fetch, input.callback_url, 'callback_url');
    return ctx.services.returns.start(input, idempotencyKeyFrom(ctx.request.headers));
  },
});

export const getReturnStatus = defineOperation({
  name: 'getReturnStatus',
  title: 'Status of a return or refund request',
  description:
    'Read the status of a return or refund request started with start_return_request: current status, ' +
    'whether it is final, every status change so far, the delivery to the brand, and the next expected step. ' +
    "Never returns the person's name or contact details.",
  input: ReturnStatusInput,
  output: ReturnStatusResult,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  access: 'public',
  http: { surface: 'cs', method: 'GET', path: '/status', input: 'query' },
  mcp: ['public'],
  errors: ['validation_failed', 'not_found'],
  tags: ['customer service'],
  handler: async (ctx, input) => ctx.services.returns.status(input.request_id),
});

export const returnOperations = [startReturnRequest, getReturnStatus];
