/**
 * Background delivery of return requests to brands, from the `deliveries` outbox.
 *
 * At-least-once with a stable delivery id: a worker claims due rows under a lease, sends, then
 * settles the row and moves the request to `delivered` in one transaction. A process killed between
 * claim and settle leaves the row leased; after the lease expires any process retries it with the
 * same `webhook-id`, so receivers that keep ids see each delivery exactly once. Failures back off
 * exponentially (with jitter, honouring `Retry-After`) until `max_attempts`, then the request
 * becomes `undeliverable`.
 */
import type { Kysely } from 'kysely';
import type { Transporter } from 'nodemailer';
import type { Logger } from 'pino';
import type { Dialect } from '../../../db/database.ts';
import type { Database, DeliveryRow } from '../../../db/schema.ts';
import type { Config } from '../../config.ts';
import { parseRetryAfter } from '../../outbound/retry-after.ts';
import type { SafeFetch } from '../../outbound/safe-fetch.ts';
import { PollingWorker } from '../../polling-worker.ts';
import type { SecretBox } from '../../secrets.ts';
import { buildNotice, noticeAsText, signWebhook } from './brand-notice.ts';
import {
  claimDueDeliveries,
  findBrandChannel,
  findReturnRequest,
  settleDelivery,
  transitionRequest,
} from './repository.ts';

export type Attempt = { ok: true } | { ok: false; retryable: boolean; error: string; retryAfterMs?: number };

export interface OutboxDeps {
  db: Kysely<Database>;
  dialect: Dialect;
  config: Config;
  log: Logger;
  fetch: SafeFetch;
  /** Opens brand webhook secrets (sealed at rest with `SECRETS_KEY`). */
  secrets: SecretBox;
  mailer: Transporter | null;
  statusUrl: (requestId: string) => string;
  now: () => Date;
}

export class DeliveryWorker extends PollingWorker {
  private readonly deps: OutboxDeps;
  protected readonly name = 'delivery';

  constructor(deps: OutboxDeps) {
    super();
    this.deps = deps;
  }

  protected get pollIntervalMs(): number {
    return this.deps.config.returns.delivery.poll_interval_ms;
  }

  protected get log(): Logger {
    return this.deps.log;
  }

  /** Claims and processes one batch; returns how many deliveries it handled. */
  async tick(): Promise<number> {
    const { db, dialect, config, now } = this.deps;
    const { batch_size, lease_ms } = config.returns.delivery;
    const at = now();
    const claimed = await claimDueDeliveries(
      db,
      dialect,
      this.owner,
      at.toISOString(),
      new Date(at.getTime() + lease_ms).toISOString(),
      batch_size,
    );
    await Promise.all(claimed.map((delivery) => this.process(delivery)));
    return claimed.length;
  }

  private async process(delivery: DeliveryRow): Promise<void> {
    const { log } = this.deps;
    let attempt: Attempt;
    try {
      attempt = await this.attempt(delivery);
    } catch (err) {
      log.error({ err, delivery_id: delivery.id }, 'delivery attempt crashed');
      attempt = { ok: false, retryable: true, error: 'internal error' };
    }
    try {
      await this.settle(delivery, attempt);
    } catch (err) {
      // The lease expires and another attempt follows; the receiver deduplicates by delivery id.
      log.error({ err, delivery_id: delivery.id }, 'could not record delivery outcome');
    }
  }

  private async attempt(delivery: DeliveryRow): Promise<Attempt> {
    const { db, now, statusUrl } = this.deps;
    const request = await findReturnRequest(db, delivery.request_id);
    if (!request) return { ok: false, retryable: false, error: 'request no longer exists' };
    const notice = buildNotice(request, delivery.id, statusUrl(request.id), now());
    if (delivery.channel === 'webhook') {
      const channel = await findBrandChannel(db, this.deps.secrets, request.brand_domain);
      if (!channel?.webhook_secret) return { ok: false, retryable: false, error: 'brand webhook removed' };
      return this.sendWebhook(delivery, channel.webhook_secret, JSON.stringify(notice));
    }
    return this.sendEmail(
      delivery,
      noticeAsText(notice),
      request.contact_kind === 'email' ? request.contact : null,
    );
  }

  private async sendWebhook(delivery: DeliveryRow, secret: string, body: string): Promise<Attempt> {
    const timestamp = Math.floor(this.deps.now().getTime() / 1000);
    let response: Awaited<ReturnType<SafeFetch>>;
    try {
      response = await this.deps.fetch(delivery.target, {
        method: 'POST',
        redirect: 'manual',
        headers: {
          'content-type': 'application/json',
          'webhook-id': delivery.id,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': signWebhook(secret, delivery.id, timestamp, body),
        },
        body,
      });
    } catch (err) {
      const e = err as Error & { cause?: { code?: string; name?: string } };
      const blocked = e.name === 'BlockedDestinationError' || e.cause?.name === 'BlockedDestinationError';
      return {
        ok: false,
        retryable: !blocked,
        error: blocked ? 'destination not allowed' : (e.cause?.code ?? e.name),
      };
    }
    await response.body?.cancel();
    if (response.status >= 200 && response.status < 300) return { ok: true };
    const retryable = response.status >= 500 || [408, 409, 425, 429].includes(response.status);
    const retryAfter = parseRetryAfter(response.headers.get('retry-after'), this.deps.now());
    return {
      ok: false,
      retryable,
      error: `HTTP ${response.status}`,
      ...(retryAfter !== undefined ? { retryAfterMs: retryAfter } : {}),
    };
  }

  private async sendEmail(delivery: DeliveryRow, text: string, replyTo: string | null): Promise<Attempt> {
    const { mailer, config } = this.deps;
    if (!mailer) return { ok: false, retryable: true, error: 'SMTP not configured' };
    try {
      await mailer.sendMail({
        from: config.smtp.from,
        to: delivery.target,
        ...(replyTo ? { replyTo } : {}),
        subject: `Return request ${delivery.request_id}`,
        text,
        messageId: `<${delivery.id}@${new URL(config.site_url).hostname}>`,
        headers: { 'X-Return-Request-Id': delivery.request_id, 'X-Delivery-Id': delivery.id },
      });
      return { ok: true };
    } catch (err) {
      const e = err as Error & { responseCode?: number; code?: string };
      const permanent = typeof e.responseCode === 'number' && e.responseCode >= 500;
      return {
        ok: false,
        retryable: !permanent,
        error: e.responseCode ? `SMTP ${e.responseCode}` : (e.code ?? 'SMTP error'),
      };
    }
  }

  private async settle(delivery: DeliveryRow, attempt: Attempt): Promise<void> {
    const { db, dialect, config, log, now } = this.deps;
    const at = now();
    const { max_attempts } = config.returns.delivery;
    await db.transaction().execute(async (trx) => {
      const request = await findReturnRequest(trx, delivery.request_id);
      const waiting = request?.status === 'received';
      if (attempt.ok) {
        if (!(await settleDelivery(trx, delivery, { state: 'delivered', at: at.toISOString() }))) return;
        if (waiting) {
          await transitionRequest(
            trx,
            dialect,
            delivery.request_id,
            'delivered',
            'service',
            `Delivered by ${delivery.channel}`,
            at.toISOString(),
          );
        }
        log.info(
          { delivery_id: delivery.id, channel: delivery.channel, attempts: delivery.attempts },
          'return request delivered',
        );
        return;
      }
      if (attempt.retryable && delivery.attempts < max_attempts) {
        const nextAttemptAt = new Date(
          at.getTime() + backoffMs(delivery.attempts, config, attempt.retryAfterMs),
        );
        await settleDelivery(trx, delivery, {
          state: 'pending',
          error: attempt.error,
          nextAttemptAt: nextAttemptAt.toISOString(),
        });
        log.warn(
          { delivery_id: delivery.id, attempts: delivery.attempts, error: attempt.error },
          'delivery failed, will retry',
        );
        return;
      }
      if (!(await settleDelivery(trx, delivery, { state: 'failed', error: attempt.error }))) return;
      if (waiting) {
        await transitionRequest(
          trx,
          dialect,
          delivery.request_id,
          'undeliverable',
          'service',
          `${delivery.channel} delivery failed after ${delivery.attempts} attempt(s): ${attempt.error}`,
          at.toISOString(),
        );
      }
      log.warn(
        { delivery_id: delivery.id, attempts: delivery.attempts, error: attempt.error },
        'delivery gave up',
      );
    });
  }
}

/** Exponential backoff with jitter: base * 2^(attempt-1), up to max, never sooner than Retry-After. */
export function backoffMs(attempts: number, config: Config, retryAfterMs?: number): number {
  const { base_delay_ms, max_delay_ms } = config.returns.delivery;
  const exponential = Math.min(max_delay_ms, base_delay_ms * 2 ** Math.max(0, attempts - 1));
  const jittered = exponential * (0.8 + Math.random() * 0.4);
  return Math.min(max_delay_ms, Math.max(jittered, retryAfterMs ?? 0));
}
