/**
 * "This channel failed for this request": the one place a delivery found broken after the fact (a
 * bounce of an email the brand's server had accepted) is recorded, in the caller's transaction.
 *
 * The delivery is marked failed (so follow-ups no longer go by it), the channel is held
 * (`markChannelFailed`: skipped by delivery for `failed_channel_hold_hours`, the brand discovered
 * again at its next read), and a request still in the service's hands (`received`, `delivered`
 * by that delivery) goes to the brand's next channel (`channel-fallback.ts`), as when a delivery
 * runs out of attempts; with none left it becomes `undeliverable`, and is queued again on the next
 * channel that appears (`queueWaiting`).
 */
import type { Kysely } from 'kysely';
import type { Dialect } from '../../../db/database.ts';
import type { Database } from '../../../db/schema.ts';
import { fallBack, type NextChannel } from './channel-fallback.ts';
import { markChannelFailed } from './channels/repository.ts';
import type { ChannelKind } from './channels/schemas.ts';
import { findReturnRequest, latestDelivery, transitionRequest } from './repository.ts';

export interface ChannelFailedDeps {
  dialect: Dialect;
  /** The brand's best channel left (`ReturnsService.nextChannel`): the request goes there next. */
  nextChannel: NextChannel;
  /** How long delivery skips the channel (`returns.discovery.failed_channel_hold_hours`). */
  holdMs: number;
  /** The domain channels are kept under (`BrandChannels.keyOf`), or null when it has none. */
  channelDomain: (brandDomain: string) => string | null;
}

export interface FailedChannel {
  requestId: string;
  /** The delivery that failed (its id), or null when it is not known. */
  deliveryId: string | null;
  kind: ChannelKind;
  /** The channel's address as delivered to (the email address, webhook URL, agent URL). */
  address: string;
  /** Short technical reason, shown in the history and the channel's view; no personal data. */
  reason: string;
}

/** Records the failure; true when the request became `undeliverable`. */
export async function channelFailedForRequest(
  trx: Kysely<Database>,
  deps: ChannelFailedDeps,
  failure: FailedChannel,
  at: Date,
): Promise<boolean> {
  const request = await findReturnRequest(trx, failure.requestId);
  if (!request) return false;
  const reason = failure.reason.slice(0, 300);
  if (failure.deliveryId) {
    await trx
      .updateTable('deliveries')
      .set({ state: 'failed', last_error: reason, lease_owner: null, lease_expires_at: null })
      .where('id', '=', failure.deliveryId)
      .where('request_id', '=', failure.requestId)
      .execute();
  }
  const domains = new Set([deps.channelDomain(request.brand_domain) ?? request.brand_domain]);
  // The outbox ranks a request's channels under the domain it was filed with.
  domains.add(request.brand_domain);
  for (const domain of domains) {
    await markChannelFailed(
      trx,
      { domain, kind: failure.kind, address: failure.address, reason },
      at,
      deps.holdMs,
    );
  }
  if (request.status !== 'received' && request.status !== 'delivered') return false;
  const latest = await latestDelivery(trx, failure.requestId);
  if (failure.deliveryId && latest?.id !== failure.deliveryId) return false;
  // The brand's next channel takes the request, as when a delivery runs out of attempts
  // (`channel-fallback.ts`); only with none left is it undeliverable.
  if (
    failure.kind === 'email' ||
    failure.kind === 'webhook' ||
    failure.kind === 'a2a' ||
    failure.kind === 'mcp'
  ) {
    const next = await fallBack(
      trx,
      { nextChannel: deps.nextChannel, holdMs: deps.holdMs },
      request,
      {
        channel: failure.kind,
        target: failure.address,
        reason,
        key: failure.deliveryId ?? `${failure.kind}:${failure.address}`,
      },
      at,
    );
    if (next) return false;
  }
  await transitionRequest(
    trx,
    deps.dialect,
    failure.requestId,
    'undeliverable',
    'service',
    `${failure.kind} delivery failed: ${reason}`,
    at.toISOString(),
  );
  return true;
}
