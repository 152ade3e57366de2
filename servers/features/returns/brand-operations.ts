/**
 * The brand's side of return requests: the requests addressed to the domains an account has
 * verified, and the status changes the state machine lets a brand make. Registering the brand's
 * agent (and so its delivery channel) is POST /brand-agent in the directory.
 */
import { defineOperation, requireAccount } from '../../operation.ts';
import {
  ListBrandRequestsInput,
  ListBrandRequestsResult,
  ReturnStatusResult,
  UpdateBrandRequestStatusInput,
} from './schemas.ts';

export const listBrandRequests = defineOperation({
  name: 'listBrandRequests',
  title: 'Return requests addressed to your brand',
  description:
    'The return and refund requests addressed to the domains your account has verified, newest first, with ' +
    'the customer, order and reply details you need to act on each, and the statuses you may set next. ' +
    'Filter by status or domain; paginate with cursor.',
  input: ListBrandRequestsInput,
  output: ListBrandRequestsResult,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  access: 'service_key',
  http: { surface: 'public_api', method: 'GET', path: '/brand-agent/requests', input: 'query' },
  errors: ['validation_failed'],
  tags: ['brand agents'],
  handler: async (ctx, input) => ctx.services.returns.listForBrand(requireAccount(ctx).id, input),
});

export const updateBrandRequestStatus = defineOperation({
  name: 'updateBrandRequestStatus',
  title: 'Move a return request addressed to your brand',
  description:
    'Record your progress on a return request addressed to one of your verified domains: acknowledged, ' +
    'approved, denied, refunded or closed, with an optional note the requester sees. Only moves the state ' +
    "machine allows from the current status are accepted (409 illegal_transition otherwise); another brand's " +
    'request is not found (404). Returns the status as the requester sees it.',
  input: UpdateBrandRequestStatusInput,
  output: ReturnStatusResult,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  access: 'service_key',
  http: {
    surface: 'public_api',
    method: 'POST',
    path: '/brand-agent/requests/:request_id/status',
    input: 'body',
  },
  errors: ['validation_failed', 'not_found', 'illegal_transition'],
  tags: ['brand agents'],
  handler: async (ctx, input) =>
    ctx.services.returns.advanceAsBrand(
      requireAccount(ctx).id,
      input.request_id,
      input.status,
      input.note ?? null,
    ),
});

export const brandRequestOperations = [listBrandRequests, updateBrandRequestStatus];
