/**
 * What a brand receives: the return request as a Standard Webhooks event (`type`, `timestamp`,
 * `data`), or the same facts as a plain-text email; then, on the same channel, the requester's
 * follow-ups (`return_request.message`) and cancellation (`return_request.cancelled`). This is the
 * only place the person's name and contact leave the service.
 */
import type { Message } from '@a2a-js/sdk';
import type { ReturnMessageRow, ReturnRequestRow } from '../../../db/schema.ts';
import { requestMessage } from './a2a-message.ts';

export const RETURN_REQUEST_EVENT = 'return_request.created';
export const RETURN_MESSAGE_EVENT = 'return_request.message';
export const RETURN_CANCELLED_EVENT = 'return_request.cancelled';

/** A follow-up of the requester as the brand gets it: the text as written. */
export interface FollowUp {
  message_id: string;
  text: string;
  at: string;
}

/** What every notice to the brand names: the request, this delivery, and where its status is. */
interface NoticeSubject {
  request_id: string;
  delivery_id: string;
  brand_domain: string;
  status_url: string;
}

export interface ReturnRequestNotice {
  type: typeof RETURN_REQUEST_EVENT;
  timestamp: string;
  data: NoticeSubject & {
    created_at: string;
    customer: { name: string; contact: string; contact_kind: 'email' | 'phone' };
    order: {
      number: string | null;
      date: string | null;
      amount: number | null;
      currency: string | null;
      card_last4: string | null;
    };
    message: string | null;
    reply: { protocol: string; callback_url: string | null; agent_id: string | null };
    approval: unknown;
    /** Follow-ups the requester wrote before the request reached the brand. */
    follow_ups: FollowUp[];
  };
}

/** A follow-up (`return_request.message`) or the cancellation (`return_request.cancelled`) of a delivered request. */
export interface RequestUpdateNotice {
  type: typeof RETURN_MESSAGE_EVENT | typeof RETURN_CANCELLED_EVENT;
  timestamp: string;
  data: NoticeSubject & {
    /** The follow-up (`return_request.message`). */
    message?: FollowUp;
    /** Why the requester withdrew (`return_request.cancelled`), if they said. */
    reason?: string | null;
  };
}

const noticeSubject = (
  request: Pick<ReturnRequestRow, 'id' | 'brand_domain'>,
  deliveryId: string,
  statusUrl: string,
): NoticeSubject => ({
  request_id: request.id,
  delivery_id: deliveryId,
  brand_domain: request.brand_domain,
  status_url: statusUrl,
});

export const followUpOf = (row: ReturnMessageRow): FollowUp => ({
  message_id: row.id,
  text: row.excerpt ?? '',
  at: row.at,
});

export function buildNotice(
  request: ReturnRequestRow,
  deliveryId: string,
  statusUrl: string,
  now: Date,
  followUps: readonly FollowUp[] = [],
): ReturnRequestNotice {
  return {
    type: RETURN_REQUEST_EVENT,
    timestamp: now.toISOString(),
    data: {
      ...noticeSubject(request, deliveryId, statusUrl),
      created_at: request.created_at,
      customer: {
        name: request.requester_name,
        contact: request.contact,
        contact_kind: request.contact_kind,
      },
      order: {
        number: request.order_number,
        date: request.purchase_date,
        amount: request.amount_cents === null ? null : request.amount_cents / 100,
        currency: request.currency,
        card_last4: request.card_last4,
      },
      message: request.message,
      reply: { protocol: request.protocol, callback_url: request.callback_url, agent_id: request.agent_id },
      approval: request.approval ? JSON.parse(request.approval) : null,
      follow_ups: [...followUps],
    },
  };
}

/** The follow-up or cancellation notice of a request the brand already has. */
export function buildUpdateNotice(
  request: Pick<ReturnRequestRow, 'id' | 'brand_domain'>,
  deliveryId: string,
  statusUrl: string,
  now: Date,
  update: { message: FollowUp } | { reason: string | null },
): RequestUpdateNotice {
  return {
    type: 'message' in update ? RETURN_MESSAGE_EVENT : RETURN_CANCELLED_EVENT,
    timestamp: now.toISOString(),
    data: { ...noticeSubject(request, deliveryId, statusUrl), ...update },
  };
}

export function updateAsText(notice: RequestUpdateNotice): string {
  const { data } = notice;
  const lines =
    notice.type === RETURN_MESSAGE_EVENT
      ? [`The customer adds to return request ${data.request_id}:`, '', data.message?.text ?? '']
      : [
          `The customer withdraws return request ${data.request_id}: no return or refund is asked for any more.`,
          ...(data.reason ? ['', `Reason: ${data.reason}`] : []),
        ];
  return [
    ...lines,
    '',
    `Status of this request: ${data.status_url}`,
    `Delivery id: ${data.delivery_id}`,
  ].join('\n');
}

/** Kept importable from here for the brand-facing outboxes (marketplace, boost). */
export { signWebhook } from '../../outbound/standard-webhooks.ts';

export function noticeAsText(notice: ReturnRequestNotice): string {
  const { data } = notice;
  const lines = [
    `A customer asks for a return or refund (request ${data.request_id}).`,
    '',
    `Customer: ${data.customer.name}`,
    `Contact (${data.customer.contact_kind}): ${data.customer.contact}`,
    data.order.number ? `Order number: ${data.order.number}` : null,
    data.order.date ? `Purchase date: ${data.order.date}` : null,
    data.order.amount !== null
      ? `Amount: ${data.order.amount.toFixed(2)} ${data.order.currency ?? ''}`.trim()
      : null,
    data.order.card_last4 ? `Card ending in: ${data.order.card_last4}` : null,
    data.message ? `\nMessage:\n${data.message}\n` : null,
    ...data.follow_ups.map((f) => `\nFollow-up (${f.at}):\n${f.text}\n`),
    `Preferred reply: ${data.reply.protocol}${data.reply.callback_url ? ` (${data.reply.callback_url})` : ''}`,
    data.approval ? `Approval proof: ${JSON.stringify(data.approval)}` : null,
    '',
    `Status of this request: ${data.status_url}`,
    `Delivery id: ${data.delivery_id}`,
  ];
  return lines.filter((l) => l !== null).join('\n');
}

/**
 * A notice as the A2A message the service sends a brand's agent (`a2a-message.ts`): the delivery
 * id as `messageId`, the request id as `contextId`, the text form and the webhook body as parts.
 */
export function brandA2aMessage(notice: ReturnRequestNotice | RequestUpdateNotice, taskId?: string): Message {
  return requestMessage({
    messageId: notice.data.delivery_id,
    requestId: notice.data.request_id,
    ...(taskId ? { taskId } : {}),
    text:
      notice.type === RETURN_REQUEST_EVENT
        ? noticeAsText(notice)
        : updateAsText(notice as RequestUpdateNotice),
    data: notice,
  });
}
