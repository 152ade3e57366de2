/**
 * The marketplace outbox (`marketplace_deliveries`), delivered as the return outbox delivers to
 * brands: claimed under a lease, at least once with a stable `webhook-id` (Standard Webhooks
 * signature) or email Message-ID, retried with backoff (`marketplace.delivery.*`), by the outbox
 * worker every outbox shares (`servers/outbox-worker.ts`). It carries
 * new embodiment bookings to the robot operator and boost campaigns to each ad network.
 */
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Transporter } from 'nodemailer';
import type { Database, MarketplaceDeliveryRow } from '../../../db/schema.ts';
import type { Config } from '../../config.ts';
import type { SafeFetch } from '../../outbound/safe-fetch.ts';
import {
  type Attempt,
  OutboxWorker,
  type OutboxWorkerDeps,
  postSignedWebhook,
  sendMail,
} from '../../outbox-worker.ts';
import { usdcOf } from '../../payments/networks.ts';

export interface OutboxDeps extends OutboxWorkerDeps {
  config: Config;
  fetch: SafeFetch;
  mailer: Transporter | null;
}

interface Notice {
  notice: unknown;
  secret: string | null;
  subject: string;
  text: string;
}

/**
 * A delivery queued in the caller's transaction, beside what it announces (a booking, a funded
 * campaign), so both are written or neither; the worker is nudged after the commit.
 */
export async function queueMarketplaceDelivery(
  trx: Kysely<Database>,
  delivery: Pick<MarketplaceDeliveryRow, 'kind' | 'subject_id' | 'network' | 'channel' | 'target'>,
  now: string,
): Promise<void> {
  await trx
    .insertInto('marketplace_deliveries')
    .values({
      id: randomUUID(),
      ...delivery,
      state: 'pending',
      attempts: 0,
      next_attempt_at: now,
      lease_owner: null,
      lease_expires_at: null,
      last_error: null,
      created_at: now,
      delivered_at: null,
    })
    .execute();
}

/** Where a click on a campaign goes first: counted, then redirected to the campaign's URL only. */
export const clickUrl = (config: Config, campaignId: string): string => `${config.site_url}/r/${campaignId}`;

export class MarketplaceDeliveryWorker extends OutboxWorker<'marketplace_deliveries'> {
  private readonly deps: OutboxDeps;

  constructor(deps: OutboxDeps) {
    super(deps, {
      name: 'marketplace delivery',
      table: 'marketplace_deliveries',
      settings: deps.config.marketplace.delivery,
    });
    this.deps = deps;
  }

  protected async attempt(delivery: MarketplaceDeliveryRow): Promise<Attempt> {
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

  private sendEmail(delivery: MarketplaceDeliveryRow, subject: string, text: string): Promise<Attempt> {
    const { config, mailer } = this.deps;
    return sendMail(mailer, {
      from: config.smtp.from,
      to: delivery.target,
      subject,
      text,
      messageId: `<${delivery.id}@${new URL(config.site_url).hostname}>`,
    });
  }

  private async sendWebhook(
    delivery: MarketplaceDeliveryRow,
    secret: string | null,
    notice: unknown,
  ): Promise<Attempt> {
    if (!secret) return { ok: false, retryable: false, error: 'no webhook secret' };
    return postSignedWebhook(
      this.deps.fetch,
      delivery.target,
      { id: delivery.id, body: JSON.stringify(notice), secret },
      this.deps.now(),
    );
  }
}
