/**
 * featured-bid (SPEC "SKUs and their inputs"): a daily bid for the Featured Brand slot, and
 * `GET {public_api_url}/featured`, the slot as it stands. The auction's rules are in `auction.ts`.
 */
import { z } from 'zod';
import { ServiceError } from '../../../errors.ts';
import { defineOperation, defineSku, type Sku } from '../../../operation.ts';
import type { OperationServices } from '../../../operation-services.ts';
import { queryNumber } from '../../../pagination.ts';
import { atomicUsdc, usdcOf } from '../../../payments/networks.ts';
import { domainPolicyOf, normalizeDomain } from '../../../public-address.ts';
import { Blurb, daysInput, PageUrl, SkuDomain, urlOnDomain, usdc, usdcInput, usdcText } from '../inputs.ts';
import {
  BID_INCREMENT_USDC,
  bidTooLow,
  currentHolder,
  minimumNextBid,
  OPENING_BID_USDC,
  placeBid,
  recentBids,
} from './auction.ts';

/** Our limits (SPEC sets none): a year of the slot at most 1,000,000 USDC a day stays exact. */
const MAX_DAYS = 365;
const MAX_BID_USDC = 1_000_000;

export const FeaturedBidInput = z
  .strictObject({
    domain: SkuDomain.describe('The brand domain to feature, such as example.com.'),
    bid_usdc: usdcInput(OPENING_BID_USDC, MAX_BID_USDC).describe(
      `Your bid in USDC per day, at least ${usdcText(OPENING_BID_USDC)}; the highest daily bid holds the slot.`,
    ),
    days: queryNumber(daysInput(MAX_DAYS).default(1)).describe(
      'Days to hold the slot for (unused days are credited back when you are outbid).',
    ),
    url: PageUrl.optional().describe('The page the slot links to, on the domain; default: its home page.'),
    blurb: Blurb.optional().describe('The line shown in the slot.'),
  })
  .superRefine(urlOnDomain);
export type FeaturedBidInput = z.infer<typeof FeaturedBidInput>;

export const FeaturedBid = z.object({
  bid_id: z.uuid().describe('Id of this bid.'),
  domain: z.string(),
  url: z.string().describe('The page the slot links to.'),
  blurb: z.string().nullable(),
  bid_usdc: z.number().describe('Daily bid in USDC.'),
  days: z.number().int(),
  amount_usdc: z.number().describe('What was paid: bid_usdc x days.'),
  status: z
    .enum(['holding', 'outbid'])
    .describe('holding: this bid holds the slot now; outbid: a higher daily bid holds it.'),
  holds_from: z.string().nullable().describe('ISO 8601 time the bid took the slot.'),
  holds_until: z
    .string()
    .nullable()
    .describe('ISO 8601 time the paid days end, unless outbid first; null once outbid.'),
  minimum_next_bid_usdc: z.number().describe('The daily bid that would take the slot from the holder now.'),
  credited_usdc: z
    .number()
    .describe('USDC credited back to the payer for unused days after being outbid (0 while holding).'),
  featured_url: z.string().describe('The page that shows the Featured Brand slot.'),
});
export type FeaturedBid = z.infer<typeof FeaturedBid>;

/** The minimum next bid now (atomic USDC). */
async function minimumNow(services: Pick<OperationServices, 'db' | 'now'>): Promise<number> {
  return minimumNextBid(await currentHolder(services.db, services.now().toISOString()));
}

const sku: Sku<FeaturedBidInput> = {
  id: 'featured-bid',
  example: {
    domain: 'example.com',
    bid_usdc: 2,
    days: 3,
    url: 'https://example.com/spring',
    blurb: 'Example, ready for agents',
  },
  usdc: OPENING_BID_USDC,
  amount: (input) => Math.max(OPENING_BID_USDC, usdc(input.bid_usdc * input.days)),
  admit: async (services, input) => {
    const holder = await currentHolder(services.db, services.now().toISOString());
    const minimum = minimumNextBid(holder);
    if (Number(atomicUsdc(input.bid_usdc)) < minimum) throw bidTooLow(minimum, holder);
  },
  currentMinimum: async (services) => usdcOf(await minimumNow(services)),
};

const featuredUrl = (services: Pick<OperationServices, 'config'>): string =>
  `${services.config.public_api_url}/featured`;

export const bidFeaturedSlot = defineSku({
  name: 'bidFeaturedSlot',
  title: 'Bid for the Featured Brand slot',
  description:
    'Bid for the Featured Brand slot in the site header and on the featured page. The highest daily bid ' +
    `holds the slot until outbid; unused days are credited back; the open auction starts at ` +
    `${usdcText(OPENING_BID_USDC)} USDC per day; a bid must beat the holder's daily bid by at least ` +
    `${usdcText(BID_INCREMENT_USDC)} (GET /featured and the live catalog say the minimum next bid; a lower ` +
    'bid is refused with 409 bid_too_low before any payment). You pay bid_usdc x days (days default 1) with ' +
    'x402, in USDC on base. Returns the bid, whether it holds the slot, until when, and the minimum next bid.',
  input: FeaturedBidInput,
  output: FeaturedBid,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  sku,
  errors: ['validation_failed', 'sku_unavailable', 'bid_too_low'],
  handler: async (ctx, input) => {
    const { services } = ctx;
    const payment = ctx.payment;
    if (!payment?.id || !payment.payer) throw new ServiceError('internal_error');
    const domain = normalizeDomain(input.domain, domainPolicyOf(services.config));
    if (!domain.ok) throw new ServiceError('internal_error'); // the schema checked it
    const at = services.now();
    const placed = await placeBid(
      services.db,
      {
        paymentId: payment.id,
        payer: payment.payer,
        domain: domain.domain,
        url: input.url ?? `https://${domain.domain}/`,
        blurb: input.blurb ?? null,
        bidUsdc: input.bid_usdc,
        days: input.days,
      },
      at,
    );
    const bid = placed.bid;
    return {
      bid_id: bid.id,
      domain: bid.domain,
      url: bid.url,
      blurb: bid.blurb,
      bid_usdc: usdcOf(bid.bid),
      days: bid.days,
      amount_usdc: usdcOf(bid.amount),
      status: 'holding' as const,
      holds_from: bid.holds_from,
      holds_until: bid.holds_until,
      minimum_next_bid_usdc: usdcOf(minimumNextBid(bid)),
      credited_usdc: 0,
      featured_url: featuredUrl(services),
    };
  },
});

// --- GET /featured -------------------------------------------------------------------------------

export const FeaturedHolder = z.object({
  bid_id: z.uuid(),
  domain: z.string(),
  url: z.string().describe('The page the slot links to.'),
  blurb: z.string().nullable(),
  bid_usdc: z.number().describe('The daily bid holding the slot.'),
  since: z.string().describe('ISO 8601 time the bid took the slot (its payment).'),
  until: z.string().describe('ISO 8601 end of the paid days, unless outbid first.'),
});

export const FeaturedSlot = z.object({
  holder: FeaturedHolder.nullable().describe(
    'The bid holding the Featured Brand slot now; null while it is free.',
  ),
  minimum_next_bid_usdc: z
    .number()
    .describe(
      `The daily bid that takes the slot now: ${usdcText(OPENING_BID_USDC)} while it is free, else the ` +
        `holder's daily bid plus ${usdcText(BID_INCREMENT_USDC)}.`,
    ),
  opening_bid_usdc: z.number(),
  bid_increment_usdc: z.number(),
  bid_url: z.string().describe('Where to bid (x402): POST {domain, bid_usdc, days, url, blurb}.'),
  history: z
    .array(
      z.object({
        bid_id: z.uuid(),
        domain: z.string(),
        bid_usdc: z.number(),
        days: z.number().int(),
        status: z
          .enum(['holding', 'outbid', 'expired'])
          .describe('holding: holds the slot now; outbid: a higher bid took it; expired: its days ran out.'),
        since: z.string(),
        until: z.string().describe('When it stopped (or stops) holding the slot.'),
        credited_usdc: z.number().describe('Credited back to its payer for the unused time when outbid.'),
      }),
    )
    .describe('The latest bids, newest first (at most 20).'),
  updated: z.string().describe('ISO 8601 time of this answer.'),
});
export type FeaturedSlot = z.infer<typeof FeaturedSlot>;

/** The slot as it stands at the services' clock (GET /featured, the agent hub). */
export async function featuredSlot(
  services: Pick<OperationServices, 'db' | 'now' | 'config'>,
): Promise<FeaturedSlot> {
  const at = services.now();
  const now = at.toISOString();
  const [holder, history] = await Promise.all([currentHolder(services.db, now), recentBids(services.db, 20)]);
  return {
    holder: holder
      ? {
          bid_id: holder.id,
          domain: holder.domain,
          url: holder.url,
          blurb: holder.blurb,
          bid_usdc: usdcOf(holder.bid),
          since: holder.holds_from,
          until: holder.holds_until,
        }
      : null,
    minimum_next_bid_usdc: usdcOf(minimumNextBid(holder)),
    opening_bid_usdc: OPENING_BID_USDC,
    bid_increment_usdc: BID_INCREMENT_USDC,
    bid_url: `${services.config.site_url}/api/public/x402/featured-bid`,
    history: history.map((bid) => ({
      bid_id: bid.id,
      domain: bid.domain,
      bid_usdc: usdcOf(bid.bid),
      days: bid.days,
      status:
        bid.status === 'outbid'
          ? ('outbid' as const)
          : bid.id === holder?.id
            ? ('holding' as const)
            : ('expired' as const),
      since: bid.holds_from,
      until: bid.ended_at ?? bid.holds_until,
      credited_usdc: usdcOf(bid.credited),
    })),
    updated: now,
  };
}

export const getFeatured = defineOperation({
  name: 'getFeatured',
  title: 'The Featured Brand slot',
  description:
    'Who holds the Featured Brand slot now (domain, url, blurb, daily bid, since, until), the minimum next ' +
    'daily bid that would take it, and the latest bids with what outbid holders were credited back.',
  input: z.strictObject({}),
  output: FeaturedSlot,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  access: 'public',
  http: { surface: 'public_api', method: 'GET', path: '/featured', input: 'query' },
  mcp: ['public'],
  tags: ['marketplace'],
  handler: async (ctx) => featuredSlot(ctx.services),
});

export const featuredBidOperations = [bidFeaturedSlot, getFeatured];
