import { localSitesAllowed } from '../../config.ts';
import { invalid } from '../../errors.ts';
import { idempotencyKeyFrom } from '../../idempotency.ts';
import { defineOperation } from '../../operation.ts';
import { requireCallableDestination } from '../../outbound/safe-fetch.ts';
import { isLocalDomain } from '../../public-address.ts';
import {
  CancelReturnRequestInput,
  ReturnStatusInput,
  ReturnStatusResult,
  SendReturnMessageInput,
  SendReturnMessageResult,
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
    'to the brand in the background on the best channel it has (its registered agent by webhook, A2A or MCP, its ' +
    "own A2A agent, or email; see get_brand_channels), and the brand's answers come back into the request's status " +
    'and thread; if the brand has no channel yet it waits as ' +
    'awaiting_channel, and next_step.kit lists every known way to reach the brand, a drafted message and the ' +
    'card-dispute route. Returns request_id, status_url and, once, a request_token: keep it to cancel ' +
    '(cancel_return_request) or add a message (send_return_message). With protocol webhook, a2a or email ' +
    '(and a callback_url for the first two) the agent is told of every status change and brand reply; follow ' +
    'progress with get_return_status in any case. Include approval_proof when the person signed off (a JWS ' +
    'over the request, or a declaration).',
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
    if (isLocalDomain(input.brand_domain) && !localSitesAllowed(ctx.services.config))
      throw invalid([{ field: 'brand_domain', message: 'must be a public domain name' }]);
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
    'whether it is final, every status change so far, the thread of messages with the brand, the delivery to ' +
    'the brand, and the next expected step (with a kit of ways to reach the brand while nothing can deliver ' +
    "the request). Never returns the person's name or contact details.",
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

export const cancelReturnRequest = defineOperation({
  name: 'cancelReturnRequest',
  title: 'Cancel a return or refund request',
  description:
    'Withdraw a return or refund request started with start_return_request, before the brand has decided ' +
    '(statuses received, awaiting_channel, delivered, acknowledged, undeliverable). Needs the request_token ' +
    'returned with the request (403 forbidden without it, and nothing changes). If the request already reached ' +
    'the brand, the cancellation is sent to it on the same channel. Returns the status as get_return_status does.',
  input: CancelReturnRequestInput,
  output: ReturnStatusResult,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  access: 'public',
  http: { surface: 'cs', method: 'POST', path: '/return/cancel', input: 'body' },
  mcp: ['public'],
  rateLimit: 'unauthenticated_writes',
  errors: ['validation_failed', 'forbidden', 'not_found', 'illegal_transition', 'rate_limited'],
  tags: ['customer service'],
  handler: async (ctx, input) => ctx.services.returns.cancel(input),
});

export const sendReturnMessage = defineOperation({
  name: 'sendReturnMessage',
  title: 'Add a message to a return or refund request',
  description:
    'Send the brand a follow-up on a return or refund request (at most 2,000 characters): it is added to the ' +
    "request's thread and sent on the channel the request went by; if the request has not reached the brand " +
    'yet, it goes with the request. Needs the request_token returned with the request (403 forbidden without ' +
    'it, and nothing changes). Not possible once the request is final (409 conflict).',
  input: SendReturnMessageInput,
  output: SendReturnMessageResult,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  access: 'public',
  http: {
    surface: 'cs',
    method: 'POST',
    path: '/return/message',
    input: 'body',
    headers: [
      {
        name: 'Idempotency-Key',
        description:
          'Makes retries safe: the same key with the same body returns the first response and sends the message ' +
          'once; the same key with a different body is refused with 409. Keys are kept for 24 hours.',
      },
    ],
  },
  mcp: ['public'],
  rateLimit: 'unauthenticated_writes',
  errors: [
    'validation_failed',
    'forbidden',
    'not_found',
    'conflict',
    'idempotency_key_reused',
    'rate_limited',
  ],
  tags: ['customer service'],
  handler: async (ctx, input) =>
    ctx.services.returns.sendMessage(input, idempotencyKeyFrom(ctx.request.headers)),
});

export const returnOperations = [startReturnRequest, getReturnStatus, cancelReturnRequest, sendReturnMessage];
