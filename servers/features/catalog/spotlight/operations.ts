/**
 * spotlight (SPEC "SKUs and their inputs"): 30 days of premium placement plus a full site scan.
 * Sold from now on with its inputs and price; the placement itself is issue 12.
 */
import { z } from 'zod';
import { defineSku, type Sku } from '../../../operation.ts';
import { Blurb, notBuiltYet, PageUrl, SkuDomain } from '../inputs.ts';

/** SPEC: "30 days of premium placement". */
const SPOTLIGHT_DAYS = 30;

export const SpotlightInput = z.strictObject({
  domain: SkuDomain.describe('The domain to put in the spotlight, such as example.com.'),
  url: PageUrl.optional().describe('The page the placement links to; default: the home page of the domain.'),
  blurb: Blurb.optional().describe('The line shown with the placement.'),
  agent_handle: z
    .string()
    .min(1)
    .max(64)
    .optional()
    .describe("Handle of the business's agent, shown with the placement so other agents can reach it."),
  business_name: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe('Name shown on the placement; default: the name found on the site.'),
});
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

const unbuilt = notBuiltYet(12);

const sku: Sku<SpotlightInput> = { id: 'spotlight', usdc: 25, unavailable: unbuilt.unavailable };

export const buySpotlight = defineSku({
  name: 'buySpotlight',
  title: '30-day spotlight placement',
  description:
    `${SPOTLIGHT_DAYS} days of premium placement pinned on the agent hub storefront, the public scoreboard ` +
    'and the machine-readable catalog, plus a full site scan of the domain. Paid with x402 in USDC on base. ' +
    'Returns the placement with its start and end, where it is shown, and the scan id to follow.',
  input: SpotlightInput,
  output: Spotlight,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  sku,
  errors: ['validation_failed', 'sku_unavailable'],
  handler: unbuilt.handler,
});

export const spotlightOperations = [buySpotlight];
