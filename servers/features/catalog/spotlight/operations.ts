/**
 * spotlight (SPEC "SKUs and their inputs"): 30 days of premium placement plus a full site scan.
 * The placements and their slot limit are in `placements.ts`.
 */
import { z } from 'zod';
import { ServiceError } from '../../../errors.ts';
import { defineSku, type Sku } from '../../../operation.ts';
import { domainPolicyOf, normalizeDomain } from '../../../public-address.ts';
import { Blurb, PageUrl, SkuDomain, urlOnDomain } from '../inputs.ts';
import { SPOTLIGHT_DAYS } from './placements.ts';

export const SpotlightInput = z
  .strictObject({
    domain: SkuDomain.describe('The domain to put in the spotlight, such as example.com.'),
    url: PageUrl.optional().describe(
      'The page the placement links to; default: the home page of the domain.',
    ),
    blurb: Blurb.optional().describe('The line shown with the placement.'),
    agent_handle: z
      .string()
      .min(1)
      .max(64)
      .optional()
      .describe("Handle of the business's agent, shown with the placement so other agents can reach it."),
    business_name: z.string().min(1).max(200).optional().describe('Name shown on the placement.'),
  })
  .superRefine(urlOnDomain);
export type SpotlightInput = z.infer<typeof SpotlightInput>;

export const Spotlight = z.object({
  spotlight_id: z.uuid().describe('Id of this placement.'),
  domain: z.string(),
  url: z.string(),
  blurb: z.string().nullable(),
  agent_handle: z.string().nullable(),
  business_name: z.string().nullable(),
  starts_at: z.string().describe('ISO 8601 start of the placement (the time of payment).'),
  ends_at: z.string().describe(`ISO 8601 end of the placement, ${SPOTLIGHT_DAYS} days later.`),
  placements: z
    .array(
      z.object({
        surface: z
          .enum(['agent_hub', 'scoreboard', 'catalog'])
          .describe(
            'agent_hub: the agent hub storefront; scoreboard: the public scoreboard (marked sponsored, ' +
              'apart from the ranking); catalog: the machine-readable catalog.',
          ),
        url: z.string().describe('Where the placement is shown.'),
      }),
    )
    .describe('Where the placement is pinned.'),
  scan: z
    .object({
      scan_id: z.uuid(),
      status_url: z.string().describe('GET this URL to follow the scan and read its result.'),
    })
    .describe('The full site scan that comes with the placement, queued at purchase.'),
});
export type Spotlight = z.infer<typeof Spotlight>;

const sku: Sku<SpotlightInput> = {
  id: 'spotlight',
  example: { domain: 'example.com', blurb: 'Example, ready for agents' },
  usdc: 25,
  admit: (services) => services.spotlights.admit(),
};

export const buySpotlight = defineSku({
  name: 'buySpotlight',
  title: '30-day spotlight placement',
  description:
    `${SPOTLIGHT_DAYS} days of premium placement pinned on the agent hub storefront, the public scoreboard ` +
    'and the machine-readable catalog, plus a full site scan of the domain. Paid with x402 in USDC on base. ' +
    'At most marketplace.spotlight_slots (12) are shown at once: when all are taken the call is refused with ' +
    '409 spotlight_full and next_opening_at, before any payment. Returns the placement with its start and ' +
    'end, where it is shown, and the scan id to follow.',
  input: SpotlightInput,
  output: Spotlight,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  sku,
  errors: ['validation_failed', 'sku_unavailable', 'spotlight_full'],
  handler: async (ctx, input) => {
    const { services } = ctx;
    const payment = ctx.payment;
    if (!payment?.id) throw new ServiceError('internal_error');
    const domain = normalizeDomain(input.domain, domainPolicyOf(services.config));
    if (!domain.ok) throw new ServiceError('internal_error'); // the schema checked it
    const placed = await services.spotlights.place({
      paymentId: payment.id,
      domain: domain.domain,
      url: input.url ?? `https://${domain.domain}/`,
      blurb: input.blurb ?? null,
      agentHandle: input.agent_handle ?? null,
      businessName: input.business_name ?? null,
    });
    // The full scan comes with the placement: queued now, public, followed at its status_url (the
    // one already queued when this payment's placement was made before).
    const scan = placed.scan_id
      ? await services.scans.reads.get(placed.scan_id, null, null, null)
      : await services.scans.requests.request({ domain: domain.domain, public: true }, null);
    if (!placed.scan_id) await services.spotlights.attachScan(placed.id, scan.scan_id);
    const { config } = services;
    return {
      spotlight_id: placed.id,
      domain: placed.domain,
      url: placed.url,
      blurb: placed.blurb,
      agent_handle: placed.agent_handle,
      business_name: placed.business_name,
      starts_at: placed.starts_at,
      ends_at: placed.ends_at,
      placements: [
        { surface: 'agent_hub' as const, url: `${config.public_api_url}/agenthub` },
        { surface: 'scoreboard' as const, url: `${config.public_api_url}/leaderboard` },
        { surface: 'catalog' as const, url: `${config.functions_url}/catalog` },
      ],
      scan: { scan_id: scan.scan_id, status_url: scan.status_url },
    };
  },
});

export const spotlightOperations = [buySpotlight];
