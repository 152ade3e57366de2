/**
 * Background delivery of return requests to brands, from the `deliveries` outbox
 * (`servers/outbox-worker.ts`: lease, at least once with a stable delivery id, backoff).
 *
 * A worker claims due rows, sends, then settles the row and moves the request to `delivered` in one
 * transaction. A process killed between claim and settle leaves the row leased; after the lease
 * expires any process retries it with the same `webhook-id`, so receivers that keep ids see each
 * delivery exactly once. After `max_attempts` the request becomes `undeliverable`.
 *
 * A requester's follow-up or cancellation goes by the channel the request went by, once the
 * request has reached the brand; while the request's own delivery is still pending it waits
 * (uncounted), and if the request never reached the brand there is nothing to follow up: a
 * follow-up then travels with the request when a channel appears (`unsentFollowUps`).
 */
import type { Kysely } from 'kysely';
import type { Transporter } from 'nodemailer';
import type { Dialect } from '../../../db/database.ts';
import type { Database, DeliveryRow, ReturnRequestRow } from '../../../db/schema.ts';
import type { Config } from '../../config.ts';
import type { SafeFetch } from '../../outbound/safe-fetch.ts';
import {
  type OutboxAttempt,
  OutboxWorker,
  type OutboxWorkerDeps,
  postSignedWebhook,
  type Settled,
  sendMail,
} from '../../outbox-worker.ts';
import type { SecretBox } from '../../secrets.ts';
import { buildNotice, buildUpdateNotice, followUpOf, noticeAsText, updateAsText } from './brand-notice.ts';
import type { ReplyAddresses } from './inbound/reply-address.ts';
import { findBrandChannel, findReturnRequest, requestReach, transitionRequest } from './repository.ts';
import { appendMessage, unsentFollowUps } from './thread.ts';

export interface OutboxDeps extends OutboxWorkerDeps {
  dialect: Dialect;
  config: Config;
  fetch: SafeFetch;
  /** Opens brand webhook secrets (sealed at rest with `SECRETS_KEY`). */
  secrets: SecretBox;
  mailer: Transporter | null;
  /**
   * The per-request addresses brands' replies and bounces come back to (`returns.inbound_mail`),
   * or null: no inbound mail, the person's own address is the `Reply-To`.
   */
  replyAddresses: ReplyAddresses | null;
  statusUrl: (requestId: string) => string;
  /** Wakes the requester notifications a settled delivery may have queued (a status change). */
  notified: () => void;
}

/** What one delivery sends: a JSON event for a webhook, or a mail's subject and text. */
interface Outgoing {
  json: unknown;
  subject: string;
  text: string;
  /** The Message-ID this mail answers (a follow-up or cancellation threads under the request). */
  inReplyTo: string | null;
}

export class DeliveryWorker extends OutboxWorker<'deliveries'> {
  private readonly deps: OutboxDeps;
  protected readonly name = 'brand delivery';
  protected readonly table = 'deliveries';

  constructor(deps: OutboxDeps) {
    super(deps);
    this.deps = deps;
  }

  protected get settings() {
    return this.deps.config.returns.delivery;
  }

  protected override afterSettle(): void {
    this.deps.notified();
  }

  protected async attempt(delivery: DeliveryRow): Promise<OutboxAttempt> {
    const { db } = this.deps;
    const request = await findReturnRequest(db, delivery.request_id);
    if (!request) return { ok: false, retryable: false, error: 'request no longer exists' };
    const outgoing = await this.outgoing(delivery, request);
    if ('ok' in outgoing) return outgoing;
    if (delivery.channel === 'webhook') {
      const channel = await findBrandChannel(db, this.deps.secrets, request.brand_domain);
      if (!channel?.webhook_secret) return { ok: false, retryable: false, error: 'brand webhook removed' };
      return postSignedWebhook(
        this.deps.fetch,
        delivery.target,
        { id: delivery.id, body: JSON.stringify(outgoing.json), secret: channel.webhook_secret },
        this.deps.now(),
      );
    }
    const { config, replyAddresses } = this.deps;
    // With inbound mail, replies and bounces come back to the request (`inbound/`); the person's
    // contact stays in the body. Without it, the brand replies to the person directly.
    const requestAddress = replyAddresses?.addressOf(request.id) ?? null;
    const replyTo = requestAddress ?? (request.contact_kind === 'email' ? request.contact : null);
    return sendMail(this.deps.mailer, {
      from: config.smtp.from,
      to: delivery.target,
      ...(replyTo ? { replyTo } : {}),
      ...(requestAddress ? { envelope: { from: requestAddress, to: delivery.target } } : {}),
      subject: outgoing.subject,
      text: outgoing.text,
      messageId: this.messageId(delivery.id),
      ...(outgoing.inReplyTo ? { inReplyTo: outgoing.inReplyTo, references: [outgoing.inReplyTo] } : {}),
      headers: { 'X-Return-Request-Id': delivery.request_id, 'X-Delivery-Id': delivery.id },
    });
  }

  private messageId(deliveryId: string): string {
    return `<${deliveryId}@${new URL(this.deps.config.site_url).hostname}>`;
  }

  /** What the delivery carries, or why it is not sent now. */
  private async outgoing(
    delivery: DeliveryRow,
    request: ReturnRequestRow,
  ): Promise<Outgoing | OutboxAttempt> {
    const { db, now, statusUrl } = this.deps;
    const url = statusUrl(request.id);
    if (delivery.kind === 'request') {
      if (request.status === 'cancelled') {
        return { ok: false, retryable: false, error: 'cancelled by the requester before delivery' };
      }
      const followUps = (await unsentFollowUps(db, request.id)).map(followUpOf);
      const notice = buildNotice(request, delivery.id, url, now(), followUps);
      return {
        json: notice,
        subject: `Return request ${request.id}`,
        text: noticeAsText(notice),
        inReplyTo: null,
      };
    }
    const reach = await requestReach(db, request.id);
    if (reach.state === 'pending') {
      const wait = Date.parse(reach.delivery.next_attempt_at) - now().getTime();
      return {
        ok: false,
        deferMs: Math.max(this.settings.base_delay_ms, wait + 100),
        reason: 'waiting for the request to reach the brand',
      };
    }
    if (reach.state === 'never') {
      return { ok: false, retryable: false, error: 'the request never reached the brand' };
    }
    let update: { message: ReturnType<typeof followUpOf> } | { reason: string | null };
    if (delivery.kind === 'message') {
      const message = delivery.message_id
        ? await db
            .selectFrom('return_messages')
            .selectAll()
            .where('id', '=', delivery.message_id)
            .executeTakeFirst()
        : undefined;
      if (!message) return { ok: false, retryable: false, error: 'follow-up no longer exists' };
      update = { message: followUpOf(message) };
    } else {
      const cancelled = await db
        .selectFrom('return_events')
        .select('note')
        .where('request_id', '=', request.id)
        .where('to_status', '=', 'cancelled')
        .executeTakeFirst();
      update = { reason: cancelled?.note ?? null };
    }
    const notice = buildUpdateNotice(request, delivery.id, url, now(), update);
    return {
      json: notice,
      subject: `Re: Return request ${request.id}`,
      text: updateAsText(notice),
      inReplyTo: this.messageId(reach.delivery.id),
    };
  }

  protected async settled(trx: Kysely<Database>, delivery: DeliveryRow, outcome: Settled): Promise<void> {
    const { dialect } = this.deps;
    if (delivery.kind === 'message') return;
    const request = await findReturnRequest(trx, delivery.request_id);
    if (!request) return;
    if (outcome.state === 'delivered') {
      if (delivery.kind === 'request') {
        // The follow-ups written before any channel existed went with the request: by its channel.
        await trx
          .updateTable('return_messages')
          .set({ channel: delivery.channel })
          .where('request_id', '=', request.id)
          .where('direction', '=', 'from_requester')
          .where('channel', 'is', null)
          .execute();
      }
      await appendMessage(trx, {
        request_id: request.id,
        direction: 'to_brand',
        channel: delivery.channel,
        sender: 'service',
        sender_verified: true,
        subject:
          delivery.kind === 'request' ? 'Return or refund request' : 'The requester withdrew the request',
        text: delivery.kind === 'request' ? request.message : null,
        attachments: [],
        external_id: delivery.id,
        at: outcome.at,
      });
    }
    if (delivery.kind !== 'request' || request.status !== 'received') return;
    await transitionRequest(
      trx,
      dialect,
      delivery.request_id,
      outcome.state === 'delivered' ? 'delivered' : 'undeliverable',
      'service',
      outcome.state === 'delivered'
        ? `Delivered by ${delivery.channel}`
        : `${delivery.channel} delivery failed after ${delivery.attempts} attempt(s): ${outcome.error}`,
      outcome.at,
    );
  }
}
