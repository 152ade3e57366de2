/**
 * Background delivery of return requests to brands, from the `deliveries` outbox
 * (`servers/outbox-worker.ts`: lease, at least once with a stable delivery id, backoff), on the
 * channel each row names: a signed webhook, an email, an A2A message to the brand's agent
 * (`a2a-delivery.ts`) or a call of a registered MCP server's tool (`mcp-delivery.ts`).
 *
 * A worker claims due rows, sends, then settles the row and moves the request to `delivered` in one
 * transaction, with what the brand's agent answered (its messages, a question or a decision:
 * `brand-answer.ts`) and the task it opened to follow (`brand-tasks.ts`). A process killed between
 * claim and settle leaves the row leased; after the lease expires any process retries it with the
 * same `webhook-id` (A2A `messageId`, Message-ID), so receivers that keep ids see each delivery
 * exactly once. After `max_attempts` (or a refusal that no retry changes) the channel is marked
 * failed and the request goes to the brand's next channel (`channel-fallback.ts`); with none left
 * it becomes `undeliverable`.
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
import { a2aFailure, type BrandA2aClient, isTask, readA2aAnswer } from './a2a-delivery.ts';
import { type BrandAnswer, recordAnswer } from './brand-answer.ts';
import {
  brandA2aMessage,
  buildNotice,
  buildUpdateNotice,
  followUpOf,
  noticeAsText,
  type RequestUpdateNotice,
  type ReturnRequestNotice,
  updateAsText,
} from './brand-notice.ts';
import { followTask, openTaskOf, type TaskReading } from './brand-tasks.ts';
import { type FallbackDeps, fallBack } from './channel-fallback.ts';
import type { ReplyAddresses } from './inbound/reply-address.ts';
import type { BrandMcpClient } from './mcp-delivery.ts';
import { findBrandChannel, findReturnRequest, requestReach, transitionRequest } from './repository.ts';
import { appendMessage, unsentFollowUps } from './thread.ts';

export interface OutboxDeps extends OutboxWorkerDeps, FallbackDeps {
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
  a2a: BrandA2aClient;
  mcp: BrandMcpClient;
  statusUrl: (requestId: string) => string;
  /** Wakes the workers a settled delivery may have queued for (notifications, a task to follow). */
  notified: () => void;
}

/** What one delivery sends: a JSON event for a webhook or an agent, or a mail's subject and text. */
interface Outgoing {
  json: ReturnRequestNotice | RequestUpdateNotice;
  subject: string;
  text: string;
  /** The Message-ID this mail answers (a follow-up or cancellation threads under the request). */
  inReplyTo: string | null;
}

/** What the brand's agent answered a delivery: its reading, and the task it opened or moved. */
export interface DeliveryAnswer {
  answer: BrandAnswer;
  task: TaskReading['task'] | null;
}

export class DeliveryWorker extends OutboxWorker<'deliveries', DeliveryAnswer> {
  private readonly deps: OutboxDeps;

  constructor(deps: OutboxDeps) {
    super(deps, { name: 'brand delivery', table: 'deliveries', settings: deps.config.returns.delivery });
    this.deps = deps;
  }

  protected override afterSettle(): void {
    this.deps.notified();
  }

  protected async attempt(delivery: DeliveryRow): Promise<OutboxAttempt<DeliveryAnswer>> {
    const { db } = this.deps;
    const request = await findReturnRequest(db, delivery.request_id);
    if (!request) return { ok: false, retryable: false, error: 'request no longer exists' };
    const outgoing = await this.outgoing(delivery, request);
    if ('ok' in outgoing) return outgoing;
    if (delivery.channel === 'a2a') return this.#a2a(delivery, outgoing);
    if (delivery.channel === 'mcp') {
      const sent = await this.deps.mcp.deliver(delivery.target, outgoing.json, outgoing.text, delivery.id);
      return sent.ok ? { ok: true, result: { answer: sent.answer, task: null } } : sent;
    }
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

  /**
   * The event as an A2A message to the brand's agent: a follow-up or the cancellation goes to the
   * task the agent has open for the request, if any. An agent that fails or cancels the task at
   * once has not taken it: retried like a network error.
   */
  async #a2a(delivery: DeliveryRow, outgoing: Outgoing): Promise<OutboxAttempt<DeliveryAnswer>> {
    const open =
      delivery.kind === 'request' ? undefined : await openTaskOf(this.deps.db, delivery.request_id);
    let answer: Awaited<ReturnType<BrandA2aClient['send']>>;
    try {
      answer = await this.deps.a2a.send(delivery.target, brandA2aMessage(outgoing.json, open?.task_id));
    } catch (err) {
      return a2aFailure(err);
    }
    const reading = readA2aAnswer(answer);
    if (reading.outcome === 'gave_up') return { ok: false, retryable: true, error: reading.note };
    return { ok: true, result: { answer: reading, task: isTask(answer) ? answer : null } };
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

  protected override async settled(
    trx: Kysely<Database>,
    delivery: DeliveryRow,
    outcome: Settled<DeliveryAnswer>,
  ): Promise<void> {
    const { dialect } = this.deps;
    const request = await findReturnRequest(trx, delivery.request_id);
    if (!request) return;
    if (outcome.state === 'delivered') {
      // A follow-up is in the thread already, written by the requester.
      if (delivery.kind !== 'message') await this.#sent(trx, delivery, request, outcome.at);
      if (delivery.kind === 'request' && request.status === 'received') {
        await transitionRequest(
          trx,
          dialect,
          delivery.request_id,
          'delivered',
          'service',
          `Delivered by ${delivery.channel}`,
          outcome.at,
        );
      }
      if (outcome.result) await this.#answered(trx, delivery, outcome.result, outcome.at);
      return;
    }
    if (delivery.kind !== 'request' || request.status !== 'received') return;
    const why = `${delivery.channel} delivery failed after ${delivery.attempts} attempt(s): ${outcome.error}`;
    const next = await fallBack(
      trx,
      this.deps,
      request,
      { channel: delivery.channel, target: delivery.target, reason: why, key: delivery.id },
      new Date(outcome.at),
    );
    if (next) return;
    await transitionRequest(trx, dialect, delivery.request_id, 'undeliverable', 'service', why, outcome.at);
  }

  /** The request or the cancellation as sent, in the thread (with the follow-ups that went with it). */
  async #sent(trx: Kysely<Database>, delivery: DeliveryRow, request: ReturnRequestRow, at: string) {
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
      at,
    });
  }

  /** What the brand's agent answered, recorded; the task it opened followed until it finishes. */
  async #answered(trx: Kysely<Database>, delivery: DeliveryRow, result: DeliveryAnswer, at: string) {
    const { dialect, config } = this.deps;
    await recordAnswer(
      trx,
      dialect,
      delivery.request_id,
      delivery.channel,
      delivery.target,
      result.answer,
      at,
    );
    if (!result.task) return;
    await followTask(
      trx,
      config.returns.brand_tasks,
      {
        request_id: delivery.request_id,
        delivery_id: delivery.id,
        agent_url: delivery.target,
        task: result.task,
      },
      new Date(at),
    );
  }
}
