/**
 * boost (SPEC "SKUs and their inputs"): paid distribution of one URL; the caller sends the budget.
 * Sold from now on with its inputs and price; the campaigns are issue 12.
 */
import { z } from 'zod';
import { defineSku, type Sku } from '../../../operation.ts';
import { notBuiltYet, PageUrl, SkuDomain, urlOnDomain, usdc, usdcInput, usdcText } from '../inputs.ts';

/** SPEC Limits: "amount_usdc minimum 5.00". */
const MINIMUM_BUDGET_USDC = 5;
/** Our limit (SPEC sets none): one campaign's budget. */
const MAX_BUDGET_USDC = 1_000_000;

export const BoostInput = z
  .strictObject({
    domain: SkuDomain.describe('The domain the URL belongs to, such as example.com.'),
    url: PageUrl.describe('The page to distribute, on the domain.'),
    amount_usdc: usdcInput(MINIMUM_BUDGET_USDC, MAX_BUDGET_USDC).describe(
      `The budget to spend, in USDC, at least ${usdcText(MINIMUM_BUDGET_USDC)}: what you pay.`,
    ),
    note: z
      .string()
      .min(1)
      .max(500)
      .optional()
      .describe('A line to show with the URL, or for the people running the campaign.'),
  })
  .superRefine(urlOnDomain);
export type BoostInput = z.infer<typeof BoostInput>;

export const Boost = z.object({
  campaign_id: z.uuid().describe('Id of the campaign.'),
  domain: z.string(),
  url: z.string(),
  note: z.string().nullable(),
  budget_usdc: z.number().describe('What was paid, the budget the campaign spends.'),
  spent_usdc: z.number().describe('Spent so far (0 at start).'),
  status: z
    .enum(['active', 'completed', 'cancelled'])
    .describe(
      'active: distributing; completed: the budget is spent; cancelled: the remainder was credited back.',
    ),
  channels: z
    .array(z.enum(['brand_agents', 'agent_interface_pages', 'ad_networks']))
    .describe('Where the URL is distributed.'),
  impressions: z.number().int(),
  clicks: z.number().int(),
  status_url: z.string().describe('GET this URL to follow impressions, clicks and spend.'),
});
export type Boost = z.infer<typeof Boost>;

const unbuilt = notBuiltYet(12);

const sku: Sku<BoostInput> = {
  id: 'boost',
  usdc: MINIMUM_BUDGET_USDC,
  amount: (input) => Math.max(MINIMUM_BUDGET_USDC, usdc(input.amount_usdc)),
  unavailable: unbuilt.unavailable,
};

export const boostUrl = defineSku({
  name: 'boostUrl',
  title: 'Boost a URL across agent surfaces',
  description:
    'Paid distribution of one URL across brand agents, agent interface pages and ad networks; minimum ' +
    `${usdcText(MINIMUM_BUDGET_USDC)} USDC; the caller sends the budget to spend as amount_usdc and pays ` +
    'exactly that with x402, in USDC on base. Returns the campaign, its channels and a status_url for ' +
    'impressions, clicks and spend.',
  input: BoostInput,
  output: Boost,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  sku,
  errors: ['validation_failed', 'sku_unavailable'],
  handler: unbuilt.handler,
});

export const boostOperations = [boostUrl];
