/**
 * Return requests: accept (durably, idempotently), report status with the thread, let the requester
 * cancel and follow up with its request token, connect brand channels.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Dialect } from '../../../db/database.ts';
import { timeOrderedId } from '../../../db/ids.ts';
import type { Database, DeliveryRow, ReturnRequestRow } from '../../../db/schema.ts';
import type { Config } from '../../config.ts';
import { notFound, ServiceError } from '../../errors.ts';
import { withIdempotency } from '../../idempotency.ts';
import { DEFAULT_LIMIT, decodeCursor, encodeCursor } from '../../pagination.ts';
import { callbackSecretPlace, type SecretBox } from '../../secrets.ts';
import { sameDigest } from '../accounts/credentials.ts';
import type { Brand } from '../charges/brand-registry.ts';
import type { BrandMatcher } from '../charges/matcher.ts';
import { type VerifiedApproval, verifyApproval } from './approval.ts';
import type { DeliveryTarget } from './channel-fallback.ts';
import type { BrandChannels } from './channels/brand-channels.ts';
import type { RankedChannel } from './channels/schemas.ts';
import { contactKit } from './kit.ts';
import type { NotificationWorker } from './notification-outbox.ts';
import type { DeliveryWorker } from './outbox.ts';
import {
  brandRequestsPage,
  findBrandChannel,
  findBrandRequest,
  findReturnRequest,
  insertReturnRequest,
  latestDelivery,
  listHistory,
  type OpeningStep,
  queueDelivery,
  requestReach,
  requestsWithoutChannel,
  transitionRequest,
  upsertBrandChannel,
} from './repository.ts';
import {
  type ApprovalSummary,
  type BrandRequest,
  type CancelReturnRequestInput,
  contactKind,
  type ListBrandRequestsInput,
  type RequesterNextStep,
  type ReturnStatusResult,
  type SendReturnMessageInput,
  type SendReturnMessageResult,
  type StartReturnRequestInput,
  type StartReturnRequestResult,
} from './schemas.ts';
import { type Actor, isFinal, nextStatusesFor, nextStep, type ReturnStatus } from './state-machine.ts';
import { appendMessage, listThread, redactPersonal, threadEntryOf } from './thread.ts';

export interface ReturnsDeps {
  db: Kysely<Database>;
  dialect: Dialect;
  config: Config;
  brands: BrandMatcher;
  /** The brand's channels: registered, from the registry, and found on its site (`channels/`). */
  channels: BrandChannels;
  worker: DeliveryWorker;
  /** Tells requesters' agents (`notification-outbox.ts`); nudged when a change queued a notification. */
  notifications: NotificationWorker;
  smtpConfigured: boolean;
  /** Seals brand webhook secrets at rest (`SECRETS_KEY`). */
  secrets: SecretBox;
  now: () => Date;
}

type Channel = DeliveryTarget;

/** The requester's capability: 256 random bits, recognisable by its prefix; only its SHA-256 is stored. */
const REQUEST_TOKEN_PREFIX = 'rrt_';
const digestOf = (token: string): string => createHash('sha256').update(token).digest('hex');

/** Kinds the outbox delivers on whatever the configuration (email needs SMTP). */
const deliveryKinds = new Set<RankedChannel['kind']>(['webhook', 'a2a', 'mcp']);

/** How the history names a channel that appeared (`A channel appeared: an A2A agent`). */
const channelPhrase: Record<Channel['channel'], string> = {
  webhook: 'a webhook',
  email: 'an email address',
  a2a: 'an A2A agent',
  mcp: 'an MCP server',
};

/** Statuses in which nothing delivers the request: the next step carries the kit. */
const stalled = new Set<ReturnStatus>(['awaiting_channel', 'undeliverable']);

/** Absolute URL of get_return_status for a request. */
export function statusUrl(config: Pick<Config, 'base_url'>, requestId: string): string {
  return `${config.base_url}/status?request_id=${requestId}`;
}

export class ReturnsService {
  private readonly deps: ReturnsDeps;

  constructor(deps: ReturnsDeps) {
    this.deps = deps;
  }

  async start(
    input: StartReturnRequestInput,
    idempotencyKey: string | undefined,
  ): Promise<StartReturnRequestResult> {
    const { db, config, brands, channels, worker, now } = this.deps;
    const approval = input.approval_proof
      ? await verifyApproval(input.approval_proof, input, `${config.base_url}/return`, now())
      : null;
    const brand = brands.brandByDomain(input.brand_domain);
    const facts = requestFacts(input, brand);
    // Outside the transaction, and within a short budget: a slow brand site never holds the
    // request; its discovery goes on in the background and queues the request when it finds a channel.
    const budget = config.returns.discovery.request_budget_ms;
    const settled = await channels.ensureFresh(input.brand_domain, budget, { trustRecent: true });
    let ranked: RankedChannel[] | undefined;

    const result = await withIdempotency(
      db,
      'startReturnRequest',
      idempotencyKey,
      input,
      async (trx) => {
        // Every channel, read once in the transaction's view: the first that delivers takes the
        // request, and the kit (below) is read off the same list.
        ranked = await this.deps.channels.rankedNow(trx, input.brand_domain);
        return this.openRequest(trx, { input, facts, brand, approval }, this.firstDelivering(ranked));
      },
      now,
      // The response holds the request token and the callback secret: the copy kept for
      // retries is sealed like the other stored secrets (SECRETS_KEY) and swept after 24 hours.
      this.deps.secrets,
    );
    if (result.delivery.channel) worker.nudge();
    // A run that finished between this request's read of the channels and its commit queued what
    // was waiting without this request: it is looked at again now that it is committed.
    else if (!settled && result.status === 'awaiting_channel') await this.queueWaiting(input.brand_domain);
    if (!result.next_step || !stalled.has(result.status)) return result;
    // The kit, from the channels the transaction read (a replay read none: they are read now).
    // The requester is reading its own request here: the drafted message is filled in.
    ranked ??= await this.deps.channels.rankedNow(db, input.brand_domain);
    const kit = contactKit(ranked, { id: result.request_id, ...facts }, true, (text) => text);
    return { ...result, next_step: { ...result.next_step, kit } };
  }

  /**
   * Inserts a new request (received, then awaiting a channel when `channel` is null) with its
   * request token and callback secret, queues its delivery on `channel`, and answers what
   * `start_return_request` returns.
   */
  private async openRequest(
    trx: Kysely<Database>,
    opening: {
      input: StartReturnRequestInput;
      facts: RequestFacts;
      brand: Brand | undefined;
      approval: VerifiedApproval | null;
    },
    channel: Channel | null,
  ): Promise<StartReturnRequestResult> {
    const { input, facts, brand, approval } = opening;
    const id = timeOrderedId();
    const at = this.deps.now().toISOString();
    const kind = contactKind(input.contact) as 'email' | 'phone';
    const protocol = input.protocol ?? kind;
    const notifyChannel = notifyChannelOf(protocol, this.deps.smtpConfigured);
    const token = REQUEST_TOKEN_PREFIX + randomBytes(32).toString('base64url');
    const callbackSecret = notifyChannel === 'webhook' ? `whsec_${randomBytes(32).toString('base64')}` : null;
    const steps: [OpeningStep, ...OpeningStep[]] = [{ to: 'received', note: 'Request received' }];
    if (!channel) {
      steps.push({ to: 'awaiting_channel', note: 'The brand has no channel for return requests yet' });
    }
    const row = {
      id,
      ...facts,
      contact_kind: kind,
      agent_id: input.agent_id ?? null,
      protocol,
      callback_url: input.callback_url ?? null,
      approval: approval ? JSON.stringify(approval.record) : null,
      created_at: at,
      updated_at: at,
      request_token_hash: digestOf(token),
      notify_channel: notifyChannel,
      callback_secret: callbackSecret
        ? this.deps.secrets.seal(callbackSecret, callbackSecretPlace(id))
        : null,
    };
    const status = await insertReturnRequest(trx, row, steps, 'service');
    if (channel) await queueDelivery(trx, id, channel.channel, channel.target, at);
    return {
      request_id: id,
      status_url: statusUrl(this.deps.config, id),
      status,
      brand: {
        domain: input.brand_domain,
        name: brand?.name ?? null,
        known: brand !== undefined,
        contact: brand?.contact ?? {},
        returns: brand?.returns ?? {},
      },
      delivery: { channel: channel?.channel ?? null },
      approval: approval ? approvalSummaryOf(approval) : null,
      next_step: requesterNextStep(status, null),
      created_at: at,
      request_token: token,
      notifications: { channel: notifyChannel, callback_secret: callbackSecret },
    } satisfies StartReturnRequestResult;
  }

  async status(requestId: string): Promise<ReturnStatusResult> {
    const { db } = this.deps;
    const { delivery, request, history, thread } = await consistentStatusReads(db, requestId);
    if (!request) throw notFound(`No return request ${requestId}`);
    const status = request.status as ReturnStatus;
    const kit = stalled.has(status)
      ? contactKit(await this.deps.channels.rankedNow(db, request.brand_domain), request, false, (text) =>
          redactPersonal(text, request, 'requester'),
        )
      : null;
    return {
      ...statusOf(request, history, delivery, kit),
      thread: thread.map((message) => threadEntryOf(message, request)),
    };
  }

  /**
   * The requester withdraws its request (state machine: before the brand's decision). A delivery
   * of the request not yet under way is stopped; if the request reached the brand, or may be
   * reaching it now, the cancellation follows it on the same channel.
   */
  async cancel(input: CancelReturnRequestInput): Promise<ReturnStatusResult> {
    const { db, dialect, now } = this.deps;
    const told = await db.transaction().execute(async (trx) => {
      await this.requireRequester(trx, input.request_id, input.request_token);
      const at = now().toISOString();
      await transitionRequest(
        trx,
        dialect,
        input.request_id,
        'cancelled',
        'requester',
        input.reason ?? 'Cancelled by the requester',
        at,
      );
      await trx
        .updateTable('deliveries')
        .set({ state: 'failed', last_error: 'cancelled by the requester before delivery' })
        .where('request_id', '=', input.request_id)
        .where('kind', '=', 'request')
        .where('state', '=', 'pending')
        .where((w) => w.or([w('lease_expires_at', 'is', null), w('lease_expires_at', '<', at)]))
        .execute();
      const reach = await requestReach(trx, input.request_id);
      if (reach.state === 'never') return false;
      await queueDelivery(trx, input.request_id, reach.delivery.channel, reach.delivery.target, at, {
        kind: 'cancel',
      });
      return true;
    });
    if (told) this.deps.worker.nudge();
    this.deps.notifications.nudge();
    return this.status(input.request_id);
  }

  /**
   * A follow-up of the requester: added to the thread and sent to the brand by the channel the
   * request went by; before the request has reached the brand it goes with the request.
   */
  async sendMessage(
    input: SendReturnMessageInput,
    idempotencyKey: string | undefined,
  ): Promise<SendReturnMessageResult> {
    const { db, now } = this.deps;
    const result = await withIdempotency(
      db,
      'sendReturnMessage',
      idempotencyKey,
      input,
      async (trx) => {
        const request = await this.requireRequester(trx, input.request_id, input.request_token);
        if (isFinal(request.status as ReturnStatus)) {
          throw new ServiceError('conflict', {
            detail: `The request is ${request.status}: a follow-up can no longer be sent`,
          });
        }
        const at = now().toISOString();
        const reach = await requestReach(trx, input.request_id);
        const channel = reach.state === 'never' ? null : reach.delivery.channel;
        const message = {
          request_id: input.request_id,
          direction: 'from_requester' as const,
          channel,
          sender: 'requester',
          sender_verified: true,
          subject: null,
          text: input.message,
          attachments: [],
          external_id: null,
          at,
        };
        const { id } = await appendMessage(trx, message);
        if (reach.state !== 'never') {
          await queueDelivery(trx, input.request_id, reach.delivery.channel, reach.delivery.target, at, {
            kind: 'message',
            messageId: id,
          });
        }
        return {
          request_id: input.request_id,
          message: threadEntryOf(
            { ...message, id, sender_verified: 1, excerpt: input.message, attachments: '[]' },
            request,
          ),
          delivery: { channel, sent_as: reach.state === 'never' ? 'with_request' : 'follow_up' },
        } satisfies SendReturnMessageResult;
      },
      now,
    );
    if (result.delivery.sent_as === 'follow_up') this.deps.worker.nudge();
    return result;
  }

  /** The request, if `token` is its request token; 403 `forbidden` (nothing read or changed) otherwise. */
  private async requireRequester(
    trx: Kysely<Database>,
    requestId: string,
    token: string | undefined,
  ): Promise<ReturnRequestRow> {
    const request = await findReturnRequest(trx, requestId);
    if (!request) throw notFound(`No return request ${requestId}`);
    const stored = request.request_token_hash;
    if (!token || !stored || !sameDigest(digestOf(token), stored)) {
      throw new ServiceError('forbidden', {
        detail: 'request_token is missing or is not the token returned with this request',
      });
    }
    return request;
  }

  /** A status change by the brand or the requester; the state machine decides whether it is legal. */
  async advance(
    requestId: string,
    to: ReturnStatus,
    actor: Actor,
    note: string | null,
  ): Promise<ReturnStatusResult> {
    const { db, dialect, now } = this.deps;
    await db
      .transaction()
      .execute((trx) => transitionRequest(trx, dialect, requestId, to, actor, note, now().toISOString()));
    this.deps.notifications.nudge();
    return this.status(requestId);
  }

  /** The requests addressed to the account's verified domains: the brand's inbox. */
  async listForBrand(
    accountId: string,
    input: ListBrandRequestsInput,
  ): Promise<{ requests: BrandRequest[]; next_cursor: string | null }> {
    const limit = input.limit ?? DEFAULT_LIMIT;
    const rows = await brandRequestsPage(
      this.deps.db,
      accountId,
      { status: input.status, brandDomain: input.brand_domain },
      decodeCursor(input.cursor),
      limit + 1,
    );
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return {
      requests: page.map((row) => this.brandRequestOf(row)),
      next_cursor: rows.length > limit && last ? encodeCursor({ at: last.created_at, id: last.id }) : null,
    };
  }

  /**
   * A status change by the brand that owns the request (its domain is verified by the account).
   * Another brand's request is answered as not found, so request ids cannot be probed.
   */
  async advanceAsBrand(
    accountId: string,
    requestId: string,
    to: ReturnStatus,
    note: string | null,
  ): Promise<ReturnStatusResult> {
    const request = await findBrandRequest(this.deps.db, accountId, requestId);
    if (!request) throw notFound(`No return request ${requestId} addressed to your verified domains`);
    return this.advance(requestId, to, 'brand', note);
  }

  private brandRequestOf(row: ReturnRequestRow): BrandRequest {
    const status = row.status as ReturnStatus;
    const approval = row.approval ? (JSON.parse(row.approval) as ApprovalSummary) : null;
    return {
      request_id: row.id,
      brand_domain: row.brand_domain,
      status,
      final: isFinal(status),
      can_set: nextStatusesFor(status, 'brand') as BrandRequest['can_set'],
      status_url: statusUrl(this.deps.config, row.id),
      created_at: row.created_at,
      updated_at: row.updated_at,
      customer: { name: row.requester_name, contact: row.contact, contact_kind: row.contact_kind },
      order: {
        number: row.order_number,
        date: row.purchase_date,
        amount: row.amount_cents === null ? null : row.amount_cents / 100,
        currency: row.currency,
        card_last4: row.card_last4,
      },
      message: row.message,
      reply: { protocol: row.protocol, callback_url: row.callback_url, agent_id: row.agent_id },
      approval: approval
        ? {
            format: approval.format,
            verified: approval.verified,
            ...(approval.key_thumbprint ? { key_thumbprint: approval.key_thumbprint } : {}),
          }
        : null,
      next_step: nextStep(status),
    };
  }

  /**
   * Registers how a brand receives requests and queues every request that was waiting for it on the
   * brand's best channel now (its registered agent included). Returns that channel and how many
   * requests were queued.
   */
  async connectBrandChannel(channel: {
    brand_domain: string;
    webhook_url: string | null;
    webhook_secret: string | null;
    email: string | null;
  }): Promise<{ channel: Channel['channel'] | null; queued: number }> {
    const { db, worker, now } = this.deps;
    const connected = await db.transaction().execute(async (trx) => {
      const at = now().toISOString();
      await upsertBrandChannel(trx, this.deps.secrets, channel, at);
      const queued = await this.queueWaitingIn(trx, channel.brand_domain, 'The brand connected', at);
      return { channel: (await this.nextChannel(trx, channel.brand_domain))?.channel ?? null, queued };
    });
    if (connected.queued > 0) {
      worker.nudge();
      this.deps.notifications.nudge();
    }
    return connected;
  }

  /**
   * Queues the brand's requests that wait for a channel (or ran out of retries) on the best channel
   * it has now - after a discovery found one. Returns how many were queued.
   */
  async queueWaiting(domain: string): Promise<number> {
    const { db, worker, now } = this.deps;
    const queued = await db
      .transaction()
      .execute((trx) => this.queueWaitingIn(trx, domain, 'A channel appeared:', now().toISOString()));
    if (queued > 0) {
      worker.nudge();
      this.deps.notifications.nudge();
    }
    return queued;
  }

  private async queueWaitingIn(
    trx: Kysely<Database>,
    domain: string,
    why: string,
    at: string,
  ): Promise<number> {
    const target = await this.nextChannel(trx, domain);
    if (!target) return 0;
    const waiting = await requestsWithoutChannel(trx, domain);
    for (const { id } of waiting) {
      await transitionRequest(
        trx,
        this.deps.dialect,
        id,
        'received',
        'service',
        `${why} ${channelPhrase[target.channel]}`,
        at,
      );
      await queueDelivery(trx, id, target.channel, target.target, at);
    }
    return waiting.length;
  }

  /** The webhook secret the brand registered before, if any (kept when it registers again without one). */
  async registeredWebhookSecret(domain: string): Promise<string | null> {
    return (await findBrandChannel(this.deps.db, this.deps.secrets, domain))?.webhook_secret ?? null;
  }

  /**
   * Whether the outbox delivers on this kind of channel: a webhook, an A2A agent, an MCP server
   * (the ranking gives delivery ranks to registered ones only), email with SMTP configured.
   */
  deliversOn(channel: Pick<RankedChannel, 'kind'>): boolean {
    return deliveryKinds.has(channel.kind) || (channel.kind === 'email' && this.deps.smtpConfigured);
  }

  /**
   * The first channel of the brand's ranking (`channels/ranking.ts`: registered, then the brand's
   * own agent, then email from the registry or its site) that the outbox delivers on and that is
   * not held out after a failure - in `db`'s view (a transaction's).
   */
  async nextChannel(db: Kysely<Database>, domain: string): Promise<Channel | null> {
    return this.firstDelivering(
      await this.deps.channels.rankedNow(db, domain, (kind) => this.deliversOn({ kind })),
    );
  }

  private firstDelivering(ranked: readonly RankedChannel[]): Channel | null {
    const first = ranked.find((c) => c.delivery_rank !== null && this.deliversOn(c));
    return first ? { channel: first.kind as Channel['channel'], target: first.address } : null;
  }
}

/** What a return request says, as stored and as its kit drafts it. */
type RequestFacts = ReturnType<typeof requestFacts>;

function requestFacts(input: StartReturnRequestInput, brand: Brand | undefined) {
  return {
    brand_domain: input.brand_domain,
    brand_name: brand?.name ?? null,
    requester_name: input.name,
    contact: input.contact,
    order_number: input.order_number ?? null,
    card_last4: input.card_last4 ?? null,
    purchase_date: input.date ?? null,
    amount_cents: input.amount === undefined ? null : Math.round(input.amount * 100),
    currency: input.currency ?? null,
    message: input.message ?? null,
  };
}

/** How the requester hears of changes: its webhook or agent, email when SMTP is configured, else not at all. */
function notifyChannelOf(
  protocol: NonNullable<StartReturnRequestInput['protocol']> | 'email' | 'phone',
  smtpConfigured: boolean,
): ReturnRequestRow['notify_channel'] {
  if (protocol === 'webhook' || protocol === 'a2a') return protocol;
  return protocol === 'email' && smtpConfigured ? 'email' : null;
}

function approvalSummaryOf(approval: VerifiedApproval): ApprovalSummary {
  return {
    format: approval.format,
    verified: approval.verified,
    ...(approval.key_thumbprint ? { key_thumbprint: approval.key_thumbprint } : {}),
  };
}

/** The state machine's next step, with the kit while nothing can deliver the request. */
function requesterNextStep(status: ReturnStatus, kit: RequesterNextStep['kit']): RequesterNextStep | null {
  const next = nextStep(status);
  return next ? { ...next, kit } : null;
}

function statusOf(
  request: ReturnRequestRow,
  history: { to_status: string; from_status: string | null; at: string; actor: Actor; note: string | null }[],
  delivery: DeliveryRow | undefined,
  kit: RequesterNextStep['kit'],
): Omit<ReturnStatusResult, 'thread'> {
  const status = request.status as ReturnStatus;
  return {
    request_id: request.id,
    status,
    final: isFinal(status),
    brand_domain: request.brand_domain,
    brand_name: request.brand_name,
    created_at: request.created_at,
    updated_at: request.updated_at,
    history: history.map((e) => ({
      status: e.to_status as ReturnStatus,
      from: e.from_status as ReturnStatus | null,
      at: e.at,
      by: e.actor,
      note: e.note,
    })),
    next_step: requesterNextStep(status, kit),
    delivery: {
      channel: delivery?.channel ?? null,
      state: delivery?.state ?? null,
      attempts: delivery?.attempts ?? 0,
      next_attempt_at: delivery?.state === 'pending' ? delivery.next_attempt_at : null,
      delivered_at: delivery?.delivered_at ?? null,
    },
  };
}

/** Compared to tell whether a delivery settled (or another began) between two reads. */
const sameDelivery = (a: DeliveryRow | undefined, b: DeliveryRow | undefined): boolean =>
  a?.id === b?.id && a?.state === b?.state && a?.attempts === b?.attempts;

/**
 * The request, its history, thread and latest delivery as of one moment. A delivery settles in one
 * transaction with its thread message, its status change and its history, but these are separate
 * statements, each seeing the commits made before it starts: a settle committing between them
 * showed an email delivered whose message was not yet in the thread, or the status `delivered`
 * beside a delivery still `pending`. So the delivery is read before and after the rest; when it
 * changed meanwhile, everything is read again (a settle is rare: at most two more rounds).
 */
async function consistentStatusReads(db: Kysely<Database>, requestId: string) {
  for (let round = 0; ; round++) {
    const delivery = await latestDelivery(db, requestId);
    const [request, history, thread] = await Promise.all([
      findReturnRequest(db, requestId),
      listHistory(db, requestId),
      listThread(db, requestId),
    ]);
    if (round === 2 || sameDelivery(delivery, await latestDelivery(db, requestId)))
      return { delivery, request, history, thread };
  }
}
