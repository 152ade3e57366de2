/**
 * The `scan` SKU (SPEC "SKUs and their inputs"): a full Signal Strength scan. The answer is the
 * full breakdown when the scan finishes within `payments.sync_wait_seconds`, else 202 with the
 * scan as it stands and its `status_url` (the payment settles once the scan is durably queued).
 *
 * A private scan (`public: false`) belongs to whoever paid, who may have no account: it comes with
 * a read token (stored only as a digest) that GET {public_api_url}/scans/{id}?token= accepts.
 * A payment buys one scan (`ScansService.requestPaid`): if its process dies while the handler waits,
 * the payer's retry of the same payment answers that scan rather than queueing a second one.
 */
import { z } from 'zod';
import { ServiceError } from '../../../errors.ts';
import { defineSku } from '../../../operation.ts';
import { queryBoolean } from '../../../pagination.ts';
import { DomainInput, Scan } from '../../scans/schemas.ts';

export const PaidScanInput = z.strictObject({
  domain: DomainInput,
  public: queryBoolean(z.boolean().default(true)).describe(
    'true (default): the result feeds the public leaderboard and GET /scan-score. false: private, read back with the read_token returned',
  ),
});

export const PaidScan = Scan.extend({
  read_token: z
    .string()
    .nullable()
    .describe(
      'Private scans only: the secret that reads this scan later without an account (GET status_url, which carries it, or get_scan with token). Shown once; keep it.',
    ),
});
export type PaidScan = z.infer<typeof PaidScan>;

export const scan = defineSku({
  name: 'buyFullScan',
  title: 'Full Signal Strength scan of a site',
  description:
    'Run a full Signal Strength scan of a website and get its full breakdown. It reads every page up to the crawl limit, robots.txt AI rules and Content-Signal, llms.txt, llms-full.txt, ai.txt, sitemaps, JSON-LD, markdown negotiation and the discovery documents (api-catalog, OAuth, MCP server card, x402, OpenAPI). It answers with the 0-100 score, the tier, the five components (Technical Foundation, Live AI Traffic, Content Depth, Citation Signals, Engagement Velocity) with every check behind each, findings with fixes and evidence URLs, and recommended_next_tools. When the scan takes longer than the wait this service allows, the answer is HTTP 202 with status queued or running and a status_url to poll (get_scan). public (default true) puts the result on the public leaderboard; public: false keeps it private and returns a read_token that reads it later without an account; the paying wallet reads it too by signing in (x402 sign-in-with-x: SIGN-IN-WITH-X header, MCP _meta["x402/sign-in-with-x"]). Paid per call with x402 (USDC on Base); a site that cannot be reached within the wait answers site_unreachable and is not charged.',
  input: PaidScanInput,
  output: PaidScan,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  sku: {
    id: 'scan',
    example: { domain: 'example.com', public: false },
    usdc: 0.1,
    unavailable: () => null,
    readLater: 'the private scan',
  },
  http: {
    status: (output: PaidScan) => (output.status === 'done' ? 200 : 202),
    otherStatuses: {
      202: 'The scan is queued or still running: poll status_url (the same body, result null until done).',
    },
  },
  errors: ['validation_failed', 'site_unreachable'],
  handler: async (ctx, input) => {
    const { scans, config } = ctx.services;
    const account = ctx.account ?? null;
    // Started before the wait is measured: the wait is what the caller is promised, not the queueing.
    // Once per payment: the same payment sent again after its process died answers the same scan.
    const started = await scans.requests.requestPaid(input, account, ctx.payment?.id);
    const deadline = Date.now() + config.payments.sync_wait_seconds * 1000;
    const current = await scans.requests.waitUntil(
      started.scan.scan_id,
      { account, readToken: started.readToken },
      deadline,
      async (s) => {
        await ctx.reportProgress?.(
          s.progress.done,
          s.progress.total || undefined,
          s.progress.message ?? s.status,
        );
      },
      ctx.signal,
    );
    if (current.status === 'failed') {
      throw new ServiceError('site_unreachable', {
        detail: current.error ?? `${current.domain} could not be scanned`,
      });
    }
    return { ...current, read_token: started.readToken };
  },
});

export const scanSkuOperations = [scan];
