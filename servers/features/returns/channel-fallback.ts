/**
 * When a channel fails a request for good - its retries ran out, it refused it, or the brand's agent
 * gave its task up - the request goes to the brand's next channel (issue 29 part 2): the channel is
 * held out of delivery and the domain discovered again (`markChannelFailed`), and the request is
 * queued on the best channel left, all in the caller's transaction with its own outcome. The thread
 * says so (a note of the service, which tells the requester's agent).
 */
import type { Kysely } from 'kysely';
import type { Database, DeliveryRow, ReturnRequestRow } from '../../../db/schema.ts';
import { markChannelFailed } from './channels/repository.ts';
import { queueDelivery } from './repository.ts';
import type { ReturnStatus } from './state-machine.ts';
import { appendMessage } from './thread.ts';

/** A channel delivery can use: its kind and address. */
export interface DeliveryTarget {
  channel: DeliveryRow['channel'];
  target: string;
}

/** The best channel of a domain that delivery can use now, in a transaction's view. */
export type NextChannel = (trx: Kysely<Database>, domain: string) => Promise<DeliveryTarget | null>;

export interface FallbackDeps {
  nextChannel: NextChannel;
  /** How long the failed channel is skipped (`returns.discovery.failed_channel_hold_hours`). */
  holdMs: number;
}

/** Statuses in which a request still wants to reach the brand (nothing decided, not withdrawn). */
const reaching = new Set<ReturnStatus>(['received', 'delivered', 'acknowledged']);

const channelNames: Record<DeliveryRow['channel'], string> = {
  webhook: 'webhook',
  email: 'email address',
  a2a: 'A2A agent',
  mcp: 'MCP server',
};

/**
 * Marks `failed` failed for the request's brand and queues the request on the next channel, if the
 * request still wants to reach the brand and one is left. Returns that channel, or null. `key`
 * names the failure once (the failed delivery's or task's id): a note already written is not
 * written again.
 */
export async function fallBack(
  trx: Kysely<Database>,
  deps: FallbackDeps,
  request: Pick<ReturnRequestRow, 'id' | 'brand_domain' | 'status'>,
  failed: DeliveryTarget & { reason: string; key: string },
  at: Date,
): Promise<DeliveryTarget | null> {
  const iso = at.toISOString();
  await markChannelFailed(
    trx,
    { domain: request.brand_domain, kind: failed.channel, address: failed.target, reason: failed.reason },
    at,
    deps.holdMs,
  );
  if (!reaching.has(request.status as ReturnStatus)) return null;
  const next = await deps.nextChannel(trx, request.brand_domain);
  if (next) await queueDelivery(trx, request.id, next.channel, next.target, iso);
  // A request that never reached the brand and has nowhere left to go becomes undeliverable: the
  // caller's transition says so.
  if (!next && request.status === 'received') return null;
  const reason = failed.reason.replace(/[.\s]+$/, '');
  await appendMessage(trx, {
    request_id: request.id,
    direction: 'from_service',
    channel: failed.channel,
    sender: 'service',
    sender_verified: true,
    subject: `The brand's ${channelNames[failed.channel]} did not take the request`,
    text: next
      ? `${reason}. The request is sent again by the brand's ${channelNames[next.channel]}.`
      : `${reason}. No other channel of the brand can take it now.`,
    attachments: [],
    external_id: `fallback:${failed.key}`,
    at: iso,
  });
  return next;
}
