/**
 * Boost campaigns (issue 12). A campaign spends its budget distributing one URL: on our own
 * surfaces (the `/agents` directory and `/agenthub` carry active campaigns as sponsored entries) and
 * on the ad networks of `marketplace.ad_networks`, which receive it as a signed webhook through the
 * marketplace outbox and report impressions back, signed with the same secret. Reported impressions
 * are charged at `marketplace.boost_cpm_usdc` per thousand:
 *
 *   charge = min(remaining, floor(impressions x cpm_atomic / 1000))   (atomic USDC)
 *
 * and the campaign is `completed` when nothing remains. Clicks go through `{site_url}/r/{id}`:
 * counted, then a 302 to the campaign's own URL - the only target there is. A cancelled campaign's
 * remainder is credited back to its payer (`credits.ts`).
 */
import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import canonicalize from 'canonicalize';
import type { Kysely } from 'kysely';
import { z } from 'zod';
import type { Dialect } from '../../../../db/database.ts';
import type { BoostCampaignRow, Database } from '../../../../db/schema.ts';
import type { Config } from '../../../config.ts';
import { notFound, ServiceError } from '../../../errors.ts';
import { owe } from '../../../payments/credits.ts';
import { atomicUsdc, usdcOf } from '../../../payments/networks.ts';
import { DELIVERED_PAYMENT_STATUSES, type PaidResource } from '../../../payments/sign-in.ts';
import { signWebhook } from '../../returns/brand-notice.ts';
import { clickUrl, queueMarketplaceDelivery } from '../marketplace-outbox.ts';

const TOKEN_PREFIX = 'agsvc_boost_';
const hashToken = (token: string): string => createHash('sha256').update(token).digest('hex');
/** Standard Webhooks: a report signed more than this long ago (or ahead) is refused. */
const REPORT_TOLERANCE_S = 300;

export const CHANNELS = ['brand_agents', 'agent_interface_pages', 'ad_networks'] as const;

export interface CampaignsDeps {
  db: Kysely<Database>;
  dialect: Dialect;
  config: Config;
  now: () => Date;
}

export interface CampaignView {
  campaign_id: string;
  domain: string;
  url: string;
  note: string | null;
  budget_usdc: number;
  spent_usdc: number;
  remaining_usdc: number;
  status: BoostCampaignRow['status'];
  channels: (typeof CHANNELS)[number][];
  impressions: number;
  clicks: number;
  click_url: string;
  status_url: string;
  payment_url: string | null;
  created_at: string;
  ended_at: string | null;
}

export class BoostCampaigns {
  readonly #deps: CampaignsDeps;
  readonly #nudge: () => void;

  constructor(deps: CampaignsDeps, nudge: () => void) {
    this.#deps = deps;
    this.#nudge = nudge;
  }

  statusUrl(id: string, token: string | null): string {
    return `${this.#deps.config.public_api_url}/boost/${id}${token ? `?token=${token}` : ''}`;
  }

  paymentUrl(row: Pick<BoostCampaignRow, 'id' | 'domain' | 'url' | 'budget'>): string {
    const query = new URLSearchParams({
      domain: row.domain,
      url: row.url,
      amount_usdc: String(usdcOf(row.budget)),
      campaign_id: row.id,
    });
    return `${this.#deps.config.site_url}/api/public/x402/boost?${query}`;
  }

  /** A new campaign: `active` when paid now, `pending_payment` when made with POST /boost. */
  async create(input: {
    accountId: string | null;
    domain: string;
    url: string;
    note: string | null;
    budget: number;
    payment: { id: string; payer: string } | null;
  }): Promise<{ row: BoostCampaignRow; token: string }> {
    const now = this.#deps.now().toISOString();
    const token = `${TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
    const row: BoostCampaignRow = {
      id: randomUUID(),
      account_id: input.accountId,
      payment_id: input.payment?.id ?? null,
      payer: input.payment?.payer.toLowerCase() ?? null,
      token_hash: hashToken(token),
      domain: input.domain,
      url: input.url,
      note: input.note,
      budget: input.budget,
      spent: 0,
      impressions: 0,
      clicks: 0,
      status: input.payment ? 'active' : 'pending_payment',
      created_at: now,
      updated_at: now,
      ended_at: null,
    };
    await this.#deps.db.transaction().execute(async (trx) => {
      await trx.insertInto('boost_campaigns').values(row).execute();
      if (row.status === 'active') await this.#queueNetworks(trx, row.id, now);
    });
    if (row.status === 'active') this.#nudge();
    return { row, token };
  }

  /** The pending campaign a payment funds, checked before any 402. */
  async pending(
    id: string,
    input: { domain: string; url: string; budget: number },
  ): Promise<BoostCampaignRow> {
    const row = await this.#find(id);
    if (!row) throw notFound(`No campaign ${id}`);
    if (row.status !== 'pending_payment') {
      throw new ServiceError('illegal_transition', {
        detail: `Campaign ${id} is ${row.status}, not waiting for payment`,
      });
    }
    const mismatch = (
      [
        ['domain', row.domain === input.domain],
        ['url', row.url === input.url],
        ['amount_usdc', row.budget === input.budget],
      ] as const
    ).filter(([, same]) => !same);
    if (mismatch.length) {
      throw new ServiceError('validation_failed', {
        detail: 'Pay the campaign as its payment_url says',
        errors: mismatch.map(([field]) => ({ field, message: `must equal the campaign's ${field}` })),
      });
    }
    return row;
  }

  /** Activates a pending campaign with its payment (once) and sends it to the ad networks. */
  async fund(id: string, payment: { id: string; payer: string }): Promise<BoostCampaignRow> {
    const now = this.#deps.now().toISOString();
    const funded = await this.#deps.db.transaction().execute(async (trx) => {
      const done = await trx
        .updateTable('boost_campaigns')
        .set({
          status: 'active',
          payment_id: payment.id,
          payer: payment.payer.toLowerCase(),
          updated_at: now,
        })
        .where('id', '=', id)
        .where('status', '=', 'pending_payment')
        .executeTakeFirst();
      if (Number(done.numUpdatedRows) !== 1) {
        // Funded by this very payment already (released after the campaign was funded, its process
        // gone before the result was kept, then sent again): the campaign as it stands.
        const mine = await trx
          .selectFrom('boost_campaigns')
          .selectAll()
          .where('id', '=', id)
          .where('payment_id', '=', payment.id)
          .executeTakeFirst();
        if (mine) return mine;
        throw new ServiceError('illegal_transition', {
          detail: `Campaign ${id} is no longer waiting for payment`,
        });
      }
      await this.#queueNetworks(trx, id, now);
      return trx.selectFrom('boost_campaigns').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    });
    this.#nudge();
    return funded;
  }

  async #queueNetworks(trx: Kysely<Database>, campaignId: string, now: string): Promise<void> {
    for (const network of this.#deps.config.marketplace.ad_networks) {
      await queueMarketplaceDelivery(
        trx,
        {
          kind: 'boost_campaign',
          subject_id: campaignId,
          network: network.name,
          channel: 'webhook',
          target: network.webhook_url,
        },
        now,
      );
    }
  }

  #find(id: string): Promise<BoostCampaignRow | undefined> {
    return this.#deps.db.selectFrom('boost_campaigns').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** The campaign for its account (key) or the holder of its status token; 404 for anyone else. */
  async read(
    id: string,
    who: { accountId?: string | undefined; token?: string | undefined; payer?: string | null },
  ): Promise<CampaignView> {
    const row = await this.#find(id);
    const mine = !!row && !!who.accountId && row.account_id === who.accountId;
    const given = Buffer.from(hashToken(who.token ?? ''), 'hex');
    const stored = Buffer.from(row?.token_hash ?? '00'.repeat(32), 'hex');
    const tokenOk = who.token !== undefined && timingSafeEqual(given, stored);
    const paidBy = !!row && !!who.payer && row.payer === who.payer.toLowerCase();
    if (!row || !(mine || tokenOk || paidBy)) throw notFound(`No campaign ${id}`);
    return this.view(row, tokenOk ? (who.token ?? null) : null);
  }

  /**
   * A campaign as x402 sign-in-with-x reads it: its status URL (without the token) and the wallet
   * that paid for it, once that payment was delivered; undefined for a campaign not paid yet.
   */
  async paidResource(id: string): Promise<PaidResource | undefined> {
    const row = await this.#deps.db
      .selectFrom('boost_campaigns')
      .innerJoin('payments', 'payments.id', 'boost_campaigns.payment_id')
      .select(['boost_campaigns.payer'])
      .where('boost_campaigns.id', '=', id)
      .where('payments.status', 'in', [...DELIVERED_PAYMENT_STATUSES])
      .executeTakeFirst();
    if (!row?.payer) return undefined;
    return {
      url: this.statusUrl(id, null),
      description: `the boost campaign ${id}`,
      payers: [row.payer.toLowerCase()],
    };
  }

  /** Cancels the account's campaign; what it had not spent is credited back to its payer. */
  async cancel(id: string, accountId: string): Promise<CampaignView> {
    const { db, dialect } = this.#deps;
    const now = this.#deps.now().toISOString();
    const row = await db.transaction().execute(async (trx) => {
      const current = await trx
        .selectFrom('boost_campaigns')
        .selectAll()
        .where('id', '=', id)
        .$if(dialect === 'postgres', (q) => q.forUpdate())
        .executeTakeFirst();
      if (!current || current.account_id !== accountId) throw notFound(`No campaign ${id}`);
      if (current.status !== 'active' && current.status !== 'pending_payment') {
        throw new ServiceError('illegal_transition', {
          detail: `Campaign ${id} is already ${current.status}`,
        });
      }
      await trx
        .updateTable('boost_campaigns')
        .set({ status: 'cancelled', updated_at: now, ended_at: now })
        .where('id', '=', id)
        .execute();
      if (current.status === 'active' && current.payment_id && current.payer) {
        await owe(
          trx,
          {
            payer: current.payer,
            amount: current.budget - current.spent,
            reason: 'boost_remainder',
            subjectId: id,
            sourcePaymentId: current.payment_id,
          },
          now,
        );
      }
      return { ...current, status: 'cancelled' as const, updated_at: now, ended_at: now };
    });
    return this.view(row, null);
  }

  /**
   * An ad network's impressions report, signed as a Standard Webhook with the network's secret over
   * the RFC 8785 canonical JSON of `{network, report_id, impressions}`. Each report id is charged once.
   */
  async report(
    id: string,
    body: { network: string; report_id: string; impressions: number },
    headers: Record<string, string | undefined>,
  ): Promise<{ charged_usdc: number; campaign: CampaignView }> {
    const { config, db, dialect } = this.#deps;
    const network = config.marketplace.ad_networks.find((n) => n.name === body.network);
    const unsigned = () =>
      new ServiceError('unauthorized', {
        detail:
          'The report must be signed by the ad network (webhook-id, webhook-timestamp, webhook-signature)',
      });
    if (!network) throw unsigned();
    const webhookId = headers['webhook-id'];
    const timestamp = Number(headers['webhook-timestamp']);
    const signatures = (headers['webhook-signature'] ?? '').split(' ');
    const nowS = Math.floor(this.#deps.now().getTime() / 1000);
    if (!webhookId || !Number.isInteger(timestamp) || Math.abs(nowS - timestamp) > REPORT_TOLERANCE_S)
      throw unsigned();
    const expected = Buffer.from(signWebhook(network.secret, webhookId, timestamp, canonicalize(body) ?? ''));
    if (!signatures.some((s) => s.length === expected.length && timingSafeEqual(Buffer.from(s), expected))) {
      throw unsigned();
    }
    const now = this.#deps.now().toISOString();
    const cpm = Number(atomicUsdc(config.marketplace.boost_cpm_usdc));
    const { row, charged } = await db.transaction().execute(async (trx) => {
      const current = await trx
        .selectFrom('boost_campaigns')
        .selectAll()
        .where('id', '=', id)
        .$if(dialect === 'postgres', (q) => q.forUpdate())
        .executeTakeFirst();
      if (!current) throw notFound(`No campaign ${id}`);
      const seen = await trx
        .selectFrom('boost_reports')
        .select('charged')
        .where('campaign_id', '=', id)
        .where('network', '=', network.name)
        .where('report_id', '=', body.report_id)
        .executeTakeFirst();
      if (seen) return { row: current, charged: seen.charged };
      const remaining = current.budget - current.spent;
      const charge =
        current.status === 'active' ? Math.min(remaining, Math.floor((body.impressions * cpm) / 1000)) : 0;
      await trx
        .insertInto('boost_reports')
        .values({
          campaign_id: id,
          network: network.name,
          report_id: body.report_id,
          impressions: body.impressions,
          charged: charge,
          at: now,
        })
        .execute();
      if (current.status !== 'active') return { row: current, charged: 0 };
      const spent = current.spent + charge;
      const done = spent >= current.budget;
      const next = {
        spent,
        impressions: current.impressions + body.impressions,
        updated_at: now,
        ...(done ? { status: 'completed' as const, ended_at: now } : {}),
      };
      await trx.updateTable('boost_campaigns').set(next).where('id', '=', id).execute();
      return { row: { ...current, ...next }, charged: charge };
    });
    return { charged_usdc: usdcOf(charged), campaign: this.view(row, null) };
  }

  /** Counts a click on an active campaign (unless `count` is false) and answers its URL, the only target. */
  async click(id: string, count = true): Promise<string> {
    const { db } = this.#deps;
    const row = await this.#find(id);
    if (!row || row.status === 'pending_payment') throw notFound(`No campaign ${id}`);
    if (count && row.status === 'active') {
      await db
        .updateTable('boost_campaigns')
        .set((eb) => ({ clicks: eb('clicks', '+', 1) }))
        .where('id', '=', id)
        .where('status', '=', 'active')
        .execute();
    }
    return row.url;
  }

  /** Active campaigns as sponsored entries of our own surfaces, newest first. */
  async sponsored(limit = 5): Promise<SponsoredEntry[]> {
    const rows = await this.#deps.db
      .selectFrom('boost_campaigns')
      .selectAll()
      .where('status', '=', 'active')
      .orderBy('created_at', 'desc')
      .orderBy('id')
      .limit(limit)
      .execute();
    return rows.map((row) => ({
      campaign_id: row.id,
      domain: row.domain,
      url: clickUrl(this.#deps.config, row.id),
      note: row.note,
      sponsored: true as const,
    }));
  }

  view(row: BoostCampaignRow, token: string | null): CampaignView {
    return {
      campaign_id: row.id,
      domain: row.domain,
      url: row.url,
      note: row.note,
      budget_usdc: usdcOf(row.budget),
      spent_usdc: usdcOf(row.spent),
      remaining_usdc: usdcOf(row.budget - row.spent),
      status: row.status,
      channels: [...CHANNELS],
      impressions: Number(row.impressions),
      clicks: Number(row.clicks),
      click_url: clickUrl(this.#deps.config, row.id),
      status_url: this.statusUrl(row.id, token),
      payment_url: row.status === 'pending_payment' ? this.paymentUrl(row) : null,
      created_at: row.created_at,
      ended_at: row.ended_at,
    };
  }
}

export const SponsoredEntry = z
  .object({
    campaign_id: z.uuid(),
    domain: z.string(),
    url: z
      .string()
      .describe("The click URL ({site_url}/r/{id}): counted, then redirected to the campaign's page."),
    note: z.string().nullable(),
    sponsored: z.literal(true).describe('A paid boost campaign, not a directory entry.'),
  })
  .describe('A boosted URL (boost SKU), marked sponsored.');
export type SponsoredEntry = z.infer<typeof SponsoredEntry>;
