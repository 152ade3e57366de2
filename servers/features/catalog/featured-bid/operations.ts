/**
 * featured-bid (SPEC "SKUs and their inputs"): a daily bid for the Featured Brand slot. Sold from
 * now on with its inputs and price; the auction itself is issue 12.
 */
import { z } from 'zod';
import { defineSku, type Sku } from '../../../operation.ts';
import { queryNumber } from '../../../pagination.ts';
import {
  Blurb,
  daysInput,
  notBuiltYet,
  PageUrl,
  SkuDomain,
  urlOnDomain,
  usdc,
  usdcInput,
  usdcText,
} from '../inputs.ts';

/** The open auction's daily floor (SPEC: "the open auction starts at 1.00 USDC per day"). */
const OPENING_BID_USDC = 1;

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

const unbuilt = notBuiltYet(12);

const sku: Sku<FeaturedBidInput> = {
  id: 'featured-bid',
  usdc: OPENING_BID_USDC,
  amount: (input) => Math.max(OPENING_BID_USDC, usdc(input.bid_usdc * input.days)),
  unavailable: unbuilt.unavailable,
};

export const bidFeaturedSlot = defineSku({
  name: 'bidFeaturedSlot',
  title: 'Bid for the Featured Brand slot',
  description:
    'Bid for the Featured Brand slot in the site header and on the featured page. The highest daily bid ' +
    `holds the slot until outbid; unused days are credited back; the open auction starts at ` +
    `${usdcText(OPENING_BID_USDC)} USDC per day. You pay bid_usdc x days (days default 1) with x402, in ` +
    'USDC on base. Returns the bid, whether it holds the slot, until when, and the minimum next bid.',
  input: FeaturedBidInput,
  output: FeaturedBid,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  sku,
  errors: ['validation_failed', 'sku_unavailable'],
  handler: unbuilt.handler,
});

export const featuredBidOperations = [bidFeaturedSlot];
