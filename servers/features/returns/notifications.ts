/**
 * What the requester's agent is told, and when: every status change after the request was made
 * (`return.status_changed`) and every message of the brand or the service in its thread
 * (`return.message`), each queued in the `return_notifications` outbox by the transaction that
 * makes the change (`transitionRequest`, `appendMessage`), so a change is never told twice or
 * lost. Nothing is queued for a request whose `notify_channel` is null (protocols `mcp`, `poll`,
 * `phone`, or `email` without SMTP): its agent reads `GET /status`.
 *
 * The event is a Standard Webhooks payload (`type`, `timestamp`, `data`); its data is fixed when
 * queued and `timestamp` is the time of the change, so every attempt sends the same bytes.
 */
import type { Kysely } from 'kysely';
import { timeOrderedId } from '../../../db/ids.ts';
import { newOutboxRow } from '../../../db/leases.ts';
import type { Database, ReturnNotificationRow, ReturnRequestRow } from '../../../db/schema.ts';
import type { ThreadEntry } from './schemas.ts';
import type { Actor, ReturnStatus } from './state-machine.ts';

export type NotificationType = ReturnNotificationRow['type'];

export interface StatusChangedData {
  request_id: string;
  status: ReturnStatus;
  previous_status: ReturnStatus;
  by: Actor;
  note: string | null;
  at: string;
}

export interface MessageData {
  request_id: string;
  message: ThreadEntry;
}

export interface RequesterEvent {
  type: NotificationType;
  timestamp: string;
  data: (StatusChangedData | MessageData) & { status_url: string };
}

/** Queues one notification if the request's agent is told anything; returns its id, or null. */
export async function queueNotification(
  trx: Kysely<Database>,
  request: Pick<ReturnRequestRow, 'id' | 'notify_channel'>,
  type: NotificationType,
  data: StatusChangedData | MessageData,
  at: string,
): Promise<string | null> {
  if (!request.notify_channel) return null;
  const id = timeOrderedId();
  await trx
    .insertInto('return_notifications')
    .values({
      id,
      request_id: request.id,
      type,
      channel: request.notify_channel,
      data: JSON.stringify(data),
      ...newOutboxRow(at),
    })
    .execute();
  return id;
}

/** The event a notification row sends, the same on every attempt. */
export function requesterEvent(row: ReturnNotificationRow, statusUrl: string): RequesterEvent {
  return {
    type: row.type,
    timestamp: row.created_at,
    data: { ...(JSON.parse(row.data) as StatusChangedData | MessageData), status_url: statusUrl },
  };
}

/** One line a person (or a model) reads first: what happened. */
export function eventSummary(event: RequesterEvent, brand: string): string {
  if (event.type === 'return.message') {
    const { message } = event.data as MessageData;
    return message.direction === 'from_brand'
      ? `${brand} replied to your return request${message.subject ? `: ${message.subject}` : '.'}`
      : `A note on your return request with ${brand}.`;
  }
  const data = event.data as StatusChangedData;
  return `Your return request with ${brand} is now ${data.status.replace('_', ' ')} (was ${data.previous_status.replace('_', ' ')}).`;
}

/** The event as a plain-text mail to the person. */
export function eventAsText(event: RequesterEvent, brand: string): string {
  const lines = [eventSummary(event, brand), ''];
  if (event.type === 'return.message') {
    const { message } = event.data as MessageData;
    if (message.excerpt) lines.push(message.excerpt, '');
    if (message.attachments.length) lines.push(`Attachments: ${message.attachments.join(', ')}`, '');
  } else {
    const data = event.data as StatusChangedData;
    if (data.note) lines.push(`Note: ${data.note}`, '');
  }
  lines.push(`Follow the request: ${event.data.status_url}`, `Request: ${event.data.request_id}`);
  return lines.join('\n');
}
