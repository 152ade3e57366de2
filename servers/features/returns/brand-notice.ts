/**
 * What a brand receives: the return request as a Standard Webhooks event (`type`, `timestamp`,
 * `data`), or the same facts as a plain-text email. This is the only place the person's name and
 * contact leave the service.
 */
import { createHmac } from 'node:crypto';
import type { ReturnRequestRow } from '../../../db/schema.ts';

export const RETURN_REQUEST_EVENT = 'return_request.created';

export interface ReturnRequestNotice {
  type: typeof RETURN_REQUEST_EVENT;
  timestamp: string;
  data: {
    request_id: string;
    delivery_id: string;
    brand_domain: string;
    status_url: string;
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
  };
}

export function buildNotice(
  request: ReturnRequestRow,
  deliveryId: string,
  statusUrl: string,
  now: Date,
): ReturnRequestNotice {
  return {
    type: RETURN_REQUEST_EVENT,
    timestamp: now.toISOString(),
    data: {
      request_id: request.id,
      delivery_id: deliveryId,
      brand_domain: request.brand_domain,
      status_url: statusUrl,
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
    },
  };
}

/**
 * Standard Webhooks signature (standardwebhooks.com): `v1,` + base64 HMAC-SHA256 over
 * `{webhook-id}.{webhook-timestamp}.{raw body}` with the secret's bytes (`whsec_` + base64).
 */
export function signWebhook(secret: string, id: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`;
}

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
    `Preferred reply: ${data.reply.protocol}${data.reply.callback_url ? ` (${data.reply.callback_url})` : ''}`,
    data.approval ? `Approval proof: ${JSON.stringify(data.approval)}` : null,
    '',
    `Status of this request: ${data.status_url}`,
    `Delivery id: ${data.delivery_id}`,
  ];
  return lines.filter((l) => l !== null).join('\n');
}
