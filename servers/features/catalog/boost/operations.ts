/**
 * boost (SPEC "SKUs and their inputs"): paid distribution of one URL; the caller sends the budget.
 * Also the account's own route (`POST /boost` with its key: a campaign for a verified domain and the
 * payment URL that funds it), the campaign's status, its cancellation, the ad networks' signed
 * impression reports and the click redirect. The campaigns' rules are in `campaigns.ts`.
 */
import { z } from 'zod';
import { ServiceError } from '../../../errors.ts';
import { defineOperation, defineSku, requireAccount, type Sku } from '../../../operation.ts';
import type { OperationServices } from '../../../operation-services.ts';
import { atomicUsdc } from '../../../payments/networks.ts';
import { signInErrors, signInHeader } from '../../../payments/sign-in.ts';
import { domainPolicyOf, normalizeDomain } from '../../../public-address.ts';
import { requireVerifiedDomain } from '../../sites/operations.ts';
import { PageUrl, SkuDomain, urlOnDomain, usdc, usdcInput, usdcText } from '../inputs.ts';
import type { CampaignView } from './campaigns.ts';

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
    campaign_id: z
      .uuid()
      .optional()
      .describe(
        'Fund this campaign made with POST /boost (its payment_url carries it) instead of a new one.',
      ),
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

const domainOf = (raw: string, services: Pick<OperationServices, 'config'>): string => {
  const result = normalizeDomain(raw, domainPolicyOf(services.config));
  if (!result.ok) throw new ServiceError('internal_error'); // the schema checked it
  return result.domain;
};

const sku: Sku<BoostInput> = {
  id: 'boost',
  example: { domain: 'example.com', url: 'https://example.com/launch', amount_usdc: 5 },
  usdc: MINIMUM_BUDGET_USDC,
  amount: (input) => Math.max(MINIMUM_BUDGET_USDC, usdc(input.amount_usdc)),
  readLater: 'the campaign',
  admit: async (services, input) => {
    if (input.campaign_id) {
      await services.boost.pending(input.campaign_id, {
        domain: domainOf(input.domain, services),
        url: input.url,
        budget: Number(atomicUsdc(input.amount_usdc)),
      });
    }
  },
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
  errors: ['validation_failed', 'sku_unavailable', 'not_found', 'illegal_transition'],
  handler: async (ctx, input) => {
    const payment = ctx.payment;
    if (!payment?.id || !payment.payer) throw new ServiceError('internal_error');
    const { boost } = ctx.services;
    const domain = domainOf(input.domain, ctx.services);
    const budget = Number(atomicUsdc(input.amount_usdc));
    const paid = { id: payment.id, payer: payment.payer };
    if (input.campaign_id) {
      await boost.pending(input.campaign_id, { domain, url: input.url, budget });
      return paidView(boost.view(await boost.fund(input.campaign_id, paid), null));
    }
    const { row, token } = await boost.create({
      accountId: ctx.account?.id ?? null,
      domain,
      url: input.url,
      note: input.note ?? null,
      budget,
      payment: paid,
    });
    return paidView(boost.view(row, token));
  },
});

/** A paid campaign's view: never pending_payment (it was just paid). */
function paidView(
  view: CampaignView,
): CampaignView & { status: Exclude<CampaignView['status'], 'pending_payment'> } {
  if (view.status === 'pending_payment') throw new ServiceError('internal_error');
  return { ...view, status: view.status };
}

export const BoostCampaign = Boost.extend({
  status: z
    .enum(['pending_payment', 'active', 'completed', 'cancelled'])
    .describe(
      'pending_payment: made with POST /boost, waiting for payment_url to be paid; active: distributing; ' +
        'completed: the budget is spent; cancelled: the remainder was credited back.',
    ),
  remaining_usdc: z.number().describe('Budget not yet spent.'),
  click_url: z.string().describe('Links to the URL go through here: counted, then redirected.'),
  payment_url: z
    .string()
    .nullable()
    .describe('While pending_payment: pay it (x402, GET or POST) to fund and start the campaign.'),
  created_at: z.string(),
  ended_at: z.string().nullable(),
});

const CampaignId = z.uuid().describe('The campaign id.');

export const createBoostCampaign = defineOperation({
  name: 'createBoostCampaign',
  title: 'Create a boost campaign for your domain',
  description:
    "The account's route to boost: a campaign for one of its verified domains (url on the domain, " +
    `amount_usdc at least ${usdcText(MINIMUM_BUDGET_USDC)}), waiting for payment. Answers payment_url: pay it ` +
    'with x402 to fund and start the campaign; GET /boost/{campaign_id} with the same key follows it.',
  input: z
    .strictObject({
      domain: SkuDomain.describe('One of your verified domains.'),
      url: PageUrl.describe('The page to distribute, on the domain.'),
      amount_usdc: usdcInput(MINIMUM_BUDGET_USDC, MAX_BUDGET_USDC).describe('The budget to fund.'),
      note: z.string().min(1).max(500).optional().describe('A line to show with the URL.'),
    })
    .superRefine(urlOnDomain),
  output: BoostCampaign,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  access: 'service_key',
  http: { surface: 'public_api', method: 'POST', path: '/boost', input: 'body', successStatus: 201 },
  errors: ['validation_failed', 'domain_not_verified'],
  tags: ['marketplace'],
  handler: async (ctx, input) => {
    const account = requireAccount(ctx);
    const domain = domainOf(input.domain, ctx.services);
    await requireVerifiedDomain(ctx, domain);
    const { row } = await ctx.services.boost.create({
      accountId: account.id,
      domain,
      url: input.url,
      note: input.note ?? null,
      budget: Number(atomicUsdc(input.amount_usdc)),
      payment: null,
    });
    return ctx.services.boost.view(row, null);
  },
});

export const getBoostCampaign = defineOperation({
  name: 'getBoostCampaign',
  title: 'Status of a boost campaign',
  description:
    'Impressions, clicks, spent and remaining budget of a campaign: with the x-service-key of the account ' +
    'that made it, the token of the status_url a direct purchase answered, or the wallet that paid, signed in with ' +
    'x402 sign-in-with-x (SIGN-IN-WITH-X header; without any of them a paid campaign answers 402 sign_in_required ' +
    "with the challenge). Another account's campaign is 404.",
  input: z.strictObject({
    campaign_id: CampaignId,
    token: z.string().min(1).max(200).optional().describe('The token of the status_url (direct purchases).'),
  }),
  output: BoostCampaign,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  access: 'public',
  http: {
    surface: 'public_api',
    method: 'GET',
    path: '/boost/:campaign_id',
    input: 'query',
    headers: [signInHeader],
  },
  errors: ['validation_failed', 'not_found', ...signInErrors],
  tags: ['marketplace'],
  handler: async (ctx, input) => {
    const { boost, signIn } = ctx.services;
    return signIn.read(ctx.signIn, {
      linkGiven: input.token !== undefined,
      paid: () => boost.paidResource(input.campaign_id),
      read: (payer) =>
        boost.read(input.campaign_id, { accountId: ctx.account?.id, token: input.token, payer }),
    });
  },
});

export const cancelBoostCampaign = defineOperation({
  name: 'cancelBoostCampaign',
  title: 'Cancel a boost campaign',
  description:
    "Cancels the account's campaign: distribution stops and the unspent budget is credited back to the " +
    'payer (GET /credits?payer=).',
  input: z.strictObject({ campaign_id: CampaignId }),
  output: BoostCampaign,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  access: 'service_key',
  http: { surface: 'public_api', method: 'POST', path: '/boost/:campaign_id/cancel', input: 'body' },
  errors: ['validation_failed', 'not_found', 'illegal_transition'],
  tags: ['marketplace'],
  handler: async (ctx, input) => ctx.services.boost.cancel(input.campaign_id, requireAccount(ctx).id),
});

export const reportBoostImpressions = defineOperation({
  name: 'reportBoostImpressions',
  title: 'Report impressions of a boost campaign (ad networks)',
  description:
    'For the ad networks of marketplace.ad_networks: report impressions served for a campaign, signed as a ' +
    'Standard Webhook (webhook-id, webhook-timestamp, webhook-signature) with the network secret over the ' +
    'RFC 8785 canonical JSON of {network, report_id, impressions}. Each report_id is charged once, at ' +
    'marketplace.boost_cpm_usdc per thousand, up to the remaining budget; the campaign completes when spent.',
  input: z.strictObject({
    campaign_id: CampaignId,
    network: z.string().min(1).max(40).describe('The network name, as configured.'),
    report_id: z.string().min(1).max(100).describe("The network's id of this report (charged once)."),
    impressions: z.number().int().min(1).max(1_000_000_000),
  }),
  output: z.object({
    charged_usdc: z.number().describe('Charged for this report (0 when the campaign had ended).'),
    campaign: BoostCampaign,
  }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  access: 'public',
  http: {
    surface: 'public_api',
    method: 'POST',
    path: '/boost/:campaign_id/impressions',
    input: 'body',
    headers: [
      { name: 'webhook-id', description: 'Standard Webhooks message id.', required: true },
      { name: 'webhook-timestamp', description: 'Unix seconds; within 5 minutes.', required: true },
      {
        name: 'webhook-signature',
        description: 'v1,<base64 HMAC-SHA256> with the network secret.',
        required: true,
      },
    ],
  },
  errors: ['validation_failed', 'unauthorized', 'not_found'],
  tags: ['marketplace'],
  handler: async (ctx, input) => {
    const { campaign_id, ...body } = input;
    return ctx.services.boost.report(campaign_id, body, ctx.request.headers);
  },
});

export const followBoostClick = defineOperation({
  name: 'followBoostClick',
  title: 'Follow a boosted link',
  description:
    "Counts a click on an active campaign, then redirects (302) to the campaign's own URL - never anywhere " +
    'else: the request names no target. Clicks past the per-address limit of unauthenticated writes are ' +
    'redirected without being counted.',
  input: z.strictObject({ campaign_id: CampaignId }),
  output: z.object({ location: z.string() }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  access: 'public',
  http: {
    surface: 'site',
    method: 'GET',
    path: '/r/:campaign_id',
    input: 'query',
    redirect: (output: { location: string }) => output.location,
  },
  errors: ['validation_failed', 'not_found'],
  tags: ['marketplace'],
  handler: async (ctx, input) => {
    // Clicks are unauthenticated writes: past the per-address limit the link still works, uncounted.
    const counted = await ctx.services.rateLimits.consume('unauthenticated_writes', ctx.request.ip).then(
      () => true,
      (err: unknown) => {
        if (err instanceof ServiceError && err.code === 'rate_limited') return false;
        throw err;
      },
    );
    return { location: await ctx.services.boost.click(input.campaign_id, counted) };
  },
});

export const boostOperations = [
  boostUrl,
  createBoostCampaign,
  getBoostCampaign,
  cancelBoostCampaign,
  reportBoostImpressions,
  followBoostClick,
];
