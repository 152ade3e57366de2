/**
 * The `signal` SKU (SPEC "SKUs and their inputs"): a fresh Signal Strength check of a domain, run
 * within the paid request - not the stored score GET /signal answers with for free.
 */
import { z } from 'zod';
import { ServiceError } from '../../../errors.ts';
import { defineSku } from '../../../operation.ts';
import { Component, DomainInput, Finding, Tier } from '../../scans/schemas.ts';
import { topRecommendations } from './recommendations.ts';

/** Recommendations returned: the few that matter most; the scan holds every finding. */
const RECOMMENDATIONS = 5;

export const SignalCheckInput = z.strictObject({ domain: DomainInput });

export const SignalCheck = z.object({
  domain: z.string(),
  scan_id: z.uuid().describe('The check, stored as a public quick scan: get_scan reads it in full'),
  depth: z.literal('quick').describe('A quick check: robots.txt, the site-level documents and a few pages'),
  checked_at: z.string().describe('When the check finished (during this request)'),
  score: z.number().int().min(0).max(100).describe('Signal Strength, 0-100'),
  tier: Tier,
  note: z
    .string()
    .nullable()
    .describe('Set when components had no data and the weights of the others were renormalized'),
  components: z
    .array(Component.omit({ checks: true }))
    .describe('The five components: weight in the overall score, scored or no_data, score 0-100'),
  recommendations: z
    .array(
      Finding.extend({
        points: z
          .number()
          .nullable()
          .describe(
            'Overall points the fix can add at most (check weight x component weight x shortfall); null for findings that are no scored check',
          ),
      }),
    )
    .describe(
      `Up to ${RECOMMENDATIONS} findings worth fixing first, most points first, each with what was seen and how to fix it`,
    ),
  recommended_next_tools: z.array(z.string()).describe('Tools of this service that help with the findings'),
  pages_read: z.number().int().describe('HTML pages the check read'),
  scan_url: z.string().describe('GET this URL for every check, every finding and what the crawler saw'),
});
export type SignalCheck = z.infer<typeof SignalCheck>;

export const signal = defineSku({
  name: 'buySignalCheck',
  title: 'Fresh Signal Strength check of a domain',
  description:
    "Check a domain's Signal Strength now, within this call, rather than read its stored score (the free get_signal). It runs a quick crawl of robots.txt (AI agent rules, Content-Signal), llms.txt, llms-full.txt, ai.txt, sitemaps, the discovery documents (api-catalog, OAuth, MCP server card, x402, OpenAPI), markdown negotiation and the first pages, scored with the rules of a full scan. Returns the 0-100 score, the tier (Dark, Faint, Emerging, Strong, Beacon), each of the five components' scores, the top recommendations (the findings whose fix adds the most points, each with what was seen, how to fix it and the evidence URL), recommended_next_tools and the scan_id. Paid per call with x402 (USDC on Base). A site that cannot be reached answers site_unreachable and is not charged. For every page of the site, use the scan tool.",
  input: SignalCheckInput,
  output: SignalCheck,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  sku: { id: 'signal', example: { domain: 'example.com' }, usdc: 0.1, unavailable: () => null },
  errors: ['validation_failed', 'site_unreachable'],
  handler: async (ctx, input) => {
    const scan = await ctx.services.scans.requests.freshQuickCheck(input.domain, ctx.signal);
    const result = scan.result;
    if (!result || !scan.finished_at) {
      throw new ServiceError('internal_error', {
        cause: new Error(`quick scan ${scan.scan_id} done without a result`),
      });
    }
    return {
      domain: scan.domain,
      scan_id: scan.scan_id,
      depth: 'quick' as const,
      checked_at: scan.finished_at,
      score: result.score,
      tier: result.tier,
      note: result.note,
      components: result.components.map(({ checks: _checks, ...component }) => component),
      recommendations: topRecommendations(result, RECOMMENDATIONS),
      recommended_next_tools: result.recommended_next_tools,
      pages_read: result.site.pages_read,
      scan_url: scan.status_url,
    };
  },
});

export const signalOperations = [signal];
