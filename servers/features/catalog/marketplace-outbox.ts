/**
 * The marketplace outbox (`marketplace_deliveries`), delivered as the return outbox delivers to
 * brands: claimed under a lease, at least once with a stable `webhook-id` (Standard Webhooks
 * signature) or email Message-ID, retried with the same backoff (`returns.delivery.*`). It carries
 * new embodiment bookings to the robot operator and boost campaigns to each ad network.
 */
import type { Kysely } from 'kysely';
import type { Transporter } from 'nodemailer';
import type { Logger } from 'pino';
import type { Dialect } from '../../../db/database.ts';
import type { Database, MarketplaceDeliveryRow } from '../../../db/schema.ts';
import type { Config } from '../../config.ts';
import type { SafeFetch } from '../../outbound/safe-fetch.ts';
import { type Attempt, backoffMs } from '../../outbox-worker.ts';
import { usdcOf } from '../../payments/networks.ts';
import { PollingWorker } from '../../polling-worker.ts';
import { signWebhook } from '../returns/brand-notice.ts';

export interface OutboxDeps {
  db: Kysely<Database>;
  dialect: Dialect;
  config: Config;
  log: Logger;
  fetch: SafeFetch;
  mailer: Transporter | null;
  now: () => Date;
}

interface Notice {
  notice: unknown;
  secret: string | null;
  subject: string;
  text: string;
}

/** Where a click on a campaign goes first: counted, then redirected to the campaign's URL only. */
export const clickUrl = (config: Config, campaignId: string): string => `${config.site_url}/r/${campaignId}`;

export class MarketplaceDeliveryWorker extends PollingWorker {
  protected readonly name = 'marketplace delivery';
  private readonly deps: OutboxDeps;

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

  async tick(): Promise<number> {
    const { db, dialect, config, now } = this.deps;
    const { batch_size, lease_ms } = config.returns.delivery;
    const at = now().toISOString();
    const claimed = await db
      .updateTable('marketplace_deliveries')
      .set((eb) => ({
        lease_owner: this.owner,
        lease_expires_at: new Date(Date.parse(at) + lease_ms).toISOString(),
        attempts: eb('attempts', '+', 1),
      }))
      .where('id', 'in', (eb) =>
        eb
          .selectFrom('marketplace_deliveries')
          .select('id')
          .where('state', '=', 'pending')
          .where('next_attempt_at', '<=', at)
          .where((w) => w.or([w('lease_expires_at', 'is', null), w('lease_expires_at', '<', at)]))
          .orderBy('next_attempt_at')
          .limit(batch_size)
          .$if(dialect === 'postgres', (q) => q.forUpdate().skipLocked()),
      )
      .returningAll()
      .execute();
    await Promise.all(claimed.map((d) => this.process(d)));
    return claimed.length;
  }

  private async process(delivery: MarketplaceDeliveryRow): Promise<void> {
    let attempt: Attempt;
    try {
      attempt = await this.attempt(delivery);
    } catch (err) {
      this.deps.log.error({ err, delivery_id: delivery.id }, 'marketplace delivery attempt crashed');
      attempt = { ok: false, retryable: true, error: 'internal error' };
    }
    const { db, config, now } = this.deps;
    const at = now();
    const settle = (set: Partial<MarketplaceDeliveryRow>) =>
      db
        .updateTable('marketplace_deliveries')
        .set({ ...set, lease_owner: null, lease_expires_at: null })
        .where('id', '=', delivery.id)
        .where('lease_owner', '=', this.owner)
        .execute();
    if (attempt.ok) {
      await settle({ state: 'delivered', delivered_at: at.toISOString(), last_error: null });
    } else if (attempt.retryable && delivery.attempts < config.returns.delivery.max_attempts) {
      await settle({
        last_error: attempt.error,
        next_attempt_at: new Date(
          at.getTime() + backoffMs(delivery.attempts, config.returns.delivery, attempt.retryAfterMs),
        ).toISOString(),
      });
    } else {
      await settle({ state: 'failed', last_error: attempt.error });
      this.deps.log.warn({ delivery_id: delivery.id, error: attempt.error }, 'marketplace delivery gave up');
    }
  }

  private async attempt(delivery: MarketplaceDeliveryRow): Promise<Attempt> {
    const built =
      delivery.kind === 'boost_campaign'
        ? await this.campaignNotice(delivery)
        : await this.bookingNotice(delivery);
    if ('ok' in built) return built;
    if (delivery.channel === 'email') return this.sendEmail(delivery, built.subject, built.text);
    return this.sendWebhook(delivery, built.secret, built.notice);
  }

  private async bookingNotice(delivery: MarketplaceDeliveryRow): Promise<Attempt | Notice> {
    const { db, config } = this.deps;
    const booking = await db
      .selectFrom('embodiment_bookings')
      .selectAll()
      .where('id', '=', delivery.subject_id)
      .executeTakeFirst();
    if (!booking) return { ok: false, retryable: false, error: 'booking no longer exists' };
    const statusChangeUrl = `${config.public_api_url}/embodiment/bookings/${booking.id}/status`;
    const notice = {
      type: 'embodiment.booking.requested',
      delivery_id: delivery.id,
      data: {
        booking_id: booking.id,
        agent_handle: booking.agent_handle,
        duration_days: booking.duration_days,
        deposit_usdc: usdcOf(booking.deposit),
        contact: booking.contact,
        requested_at: booking.created_at,
        status_change_url: statusChangeUrl,
      },
    };
    return {
      notice,
      secret: config.marketplace.embodiment.webhook_secret,
      subject: `Embodiment booking ${booking.id}`,
      text: [
        `A deposit of ${usdcOf(booking.deposit)} USDC opened a booking for agent ${booking.agent_handle}`,
        `(${booking.duration_days} day(s)). Reach the requester at ${booking.contact} with the quote.`,
        '',
        `Move it with your service key: POST ${statusChangeUrl}`,
        `Booking id: ${booking.id}`,
      ].join('\n'),
    };
  }

  private async campaignNotice(delivery: MarketplaceDeliveryRow): Promise<Attempt | Notice> {
    const { db, config } = this.deps;
    const campaign = await db
      .selectFrom('boost_campaigns')
      .selectAll()
      .where('id', '=', delivery.subject_id)
      .executeTakeFirst();
    if (!campaign) return { ok: false, retryable: false, error: 'campaign no longer exists' };
    const network = config.marketplace.ad_networks.find((n) => n.name === delivery.network);
    if (!network) return { ok: false, retryable: false, error: 'ad network no longer configured' };
    return {
      notice: {
        type: 'boost.campaign.started',
        delivery_id: delivery.id,
        data: {
          campaign_id: campaign.id,
          network: network.name,
          domain: campaign.domain,
          click_url: clickUrl(config, campaign.id),
          note: campaign.note,
          budget_usdc: usdcOf(campaign.budget),
          cpm_usdc: config.marketplace.boost_cpm_usdc,
          impressions_url: `${config.public_api_url}/boost/${campaign.id}/impressions`,
        },
      },
      secret: network.secret,
      subject: '',
      text: '',
    };
  }

  private async sendEmail(delivery: MarketplaceDeliveryRow, subject: string, text: string): Promise<Attempt> {
    const { config, mailer } = this.deps;
    if (!mailer) return { ok: false, retryable: true, error: 'SMTP not configured' };
    try {
      await mailer.sendMail({
        from: config.smtp.from,
        to: delivery.target,
        subject,
        text,
        messageId: `<${delivery.id}@${new URL(config.site_url).hostname}>`,
      });
      return { ok: true };
    } catch (err) {
      const e = err as Error & { responseCode?: number; code?: string };
      return {
        ok: false,
        retryable: !(typeof e.responseCode === 'number' && e.responseCode >= 500),
        error: e.code ?? 'SMTP error',
      };
    }
  }

  private async sendWebhook(
    delivery: MarketplaceDeliveryRow,
    secret: string | null,
    notice: unknown,
  ): Promise<Attempt> {
    const { now } = this.deps;
    if (!secret) return { ok: false, retryable: false, error: 'no webhook secret' };
    const body = JSON.stringify(notice);
    const timestamp = Math.floor(now().getTime() / 1000);
    try {
      const response = await this.deps.fetch(delivery.target, {
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
      await response.body?.cancel();
      if (response.status >= 200 && response.status < 300) return { ok: true };
      return {
        ok: false,
        retryable: response.status >= 500 || [408, 409, 425, 429].includes(response.status),
        error: `HTTP ${response.status}`,
      };
    } catch (err) {
      const e = err as Error & { cause?: { code?: string; name?: string } };
      const blocked = e.name === 'BlockedDestinationError' || e.cause?.name === 'BlockedDestinationError';
      return {
        ok: false,
        retryable: !blocked,
        error: blocked ? 'destination not allowed' : (e.cause?.code ?? e.name),
      };
    }
  }
}
