import { z } from 'zod';
import { defineOperation, type OperationContext } from '../../operation.ts';
import { signInErrors, signInHeader } from '../../payments/sign-in.ts';
import { SpotlightPlacement } from '../catalog/spotlight/placements.ts';
import {
  DomainProfileQuery,
  DomainQuery,
  GetScanFixesInput,
  GetScanInput,
  Leaderboard,
  LeaderboardInput,
  ReadinessIndex,
  RequestScanInput,
  Scan,
  ScanFixes,
  ScanScore,
  Signal,
} from './schemas.ts';

const tags = ['signal strength'];

export const requestScan = defineOperation({
  name: 'requestScan',
  title: 'Scan a website for AI agent readiness',
  description:
    'Crawl a website the way AI agents see it (robots.txt AI rules and Content-Signal, llms.txt, ai.txt, ' +
    'sitemaps, page content and JSON-LD, markdown negotiation, api-catalog, OAuth, MCP and x402 discovery) and ' +
    'compute its Signal Strength: a 0-100 score from five components with a tier, findings (what was seen, ' +
    'how to fix it, evidence URL) and recommended_next_tools. Over MCP the tool waits for the scan and reports ' +
    'progress; over REST it answers 202 at once with scan_id and status_url (poll get_scan). Public scans ' +
    '(the default) feed the leaderboard; public: false keeps the result to your account (x-service-key). ' +
    'Without an account, an anonymous session token (POST /signup on the authorization server, sent as ' +
    'Authorization: Bearer) runs a limited number of scans that a person can later claim. ' +
    'A scan of the same domain already running is joined, not repeated.',
  input: RequestScanInput,
  output: Scan,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  access: 'public',
  http: { surface: 'public_api', method: 'POST', path: '/scans', input: 'body', successStatus: 202 },
  mcp: ['public'],
  rateLimit: 'unauthenticated_writes',
  errors: [
    'validation_failed',
    'rate_limited',
    'unauthorized',
    'invalid_token',
    'anonymous_scan_limit_reached',
  ],
  tags,
  handler: async (ctx, input) => {
    const scans = ctx.services.scans;
    const account = ctx.account ?? null;
    const anonymous = ctx.anonymous ?? null;
    const scan = await scans.requests.request(input, account, 'full', anonymous);
    if (ctx.request.via !== 'mcp') return scan;
    return scans.requests.wait(
      scan.scan_id,
      account,
      async (s) => {
        await ctx.reportProgress?.(
          s.progress.done,
          s.progress.total || undefined,
          s.progress.message ?? s.status,
        );
      },
      ctx.signal,
      anonymous,
    );
  },
});

export const getScan = defineOperation({
  name: 'getScan',
  title: 'Status and result of a scan',
  description:
    'Read a scan started with request_scan: status (queued, running, done, failed), progress, and once done ' +
    'the full Signal Strength breakdown. Private scans are visible only with the x-service-key of the account ' +
    'that requested them, with the read_token the scan SKU returned for them (token), or to the wallet that ' +
    'paid for them, signed in with x402 sign-in-with-x: without either, a private scan bought with the SKU ' +
    'answers 402 sign_in_required with the challenge to sign (SIGN-IN-WITH-X header; over MCP ' +
    '_meta["x402/sign-in-with-x"]).',
  input: GetScanInput,
  output: Scan,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  access: 'public',
  http: {
    surface: 'public_api',
    method: 'GET',
    path: '/scans/:scan_id',
    input: 'query',
    headers: [signInHeader],
  },
  mcp: ['public'],
  errors: ['validation_failed', 'not_found', ...signInErrors],
  tags,
  handler: async (ctx, input) =>
    readScan(ctx, input, (payer) =>
      ctx.services.scans.reads.get(
        input.scan_id,
        ctx.account ?? null,
        ctx.anonymous ?? null,
        input.token ?? null,
        input.profile ?? null,
        payer,
      ),
    ),
});

/**
 * A scan read as the caller is (account, anonymous session, or the read token of its link), or - no
 * token sent - as the wallet that paid for it, signed in with x402 sign-in-with-x (`payments/sign-in.ts`).
 */
export function readScan<T>(
  ctx: OperationContext,
  input: { scan_id: string; token?: string | undefined },
  read: (payer: string | null) => Promise<T>,
): Promise<T> {
  return ctx.services.signIn.read(ctx.signIn, {
    linkGiven: input.token !== undefined,
    paid: () => ctx.services.scans.reads.paidResource(input.scan_id),
    read,
  });
}

export const getScanFixes = defineOperation({
  name: 'getScanFixes',
  title: 'Fix sheet of a scan',
  description:
    'The fix sheet of a done scan as markdown: the score, the next tier and the checks that reach it, then ' +
    'every finding with its goal, the issue seen, how to fix it, the specification link, the requests that ' +
    'showed it, and a ready prompt for a coding agent. Over REST GET /scans/{scan_id}/fixes.md answers ' +
    'text/markdown. Same visibility as get_scan (x-service-key, token, or the paying wallet signed in with ' +
    'x402 sign-in-with-x for private scans).',
  input: GetScanFixesInput,
  output: ScanFixes,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  access: 'public',
  http: {
    surface: 'public_api',
    method: 'GET',
    path: '/scans/:scan_id/fixes.md',
    input: 'query',
    headers: [signInHeader],
    representation: {
      contentType: 'text/markdown; charset=utf-8',
      body: (output: ScanFixes) => output.markdown,
    },
  },
  mcp: ['public'],
  errors: ['validation_failed', 'not_found', ...signInErrors],
  tags,
  handler: async (ctx, input) =>
    readScan(ctx, input, (payer) =>
      ctx.services.scans.reads.fixes(
        input.scan_id,
        {
          account: ctx.account ?? null,
          anonymous: ctx.anonymous ?? null,
          readToken: input.token ?? null,
          payer,
        },
        input.profile ?? null,
      ),
    ),
});

export const getSignal = defineOperation({
  name: 'getSignal',
  title: 'Signal Strength of a domain',
  description:
    "A domain's latest public Signal Strength score (0-100), its tier and how old it is. A domain never " +
    'scanned gets a quick first check now (home page, robots.txt, llms.txt, discovery documents), limited per ' +
    'client; for the full breakdown use get_scan_score, for a fresh full scan request_scan.',
  input: DomainProfileQuery,
  output: Signal,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: true },
  access: 'public',
  http: { surface: 'public_api', method: 'GET', path: '/signal', input: 'query' },
  mcp: ['public'],
  errors: ['validation_failed', 'rate_limited'],
  tags,
  handler: async (ctx, input) =>
    ctx.services.scans.requests.signal(
      input.domain,
      async () => {
        if (!ctx.account) await ctx.services.rateLimits.consume('unauthenticated_writes', ctx.request.ip);
      },
      ctx.signal,
      input.profile ?? null,
    ),
});

export const getScanScore = defineOperation({
  name: 'getScanScore',
  title: 'Full Signal Strength breakdown of a domain',
  description:
    'The latest public scan of a domain in full: score, tier, the five components (Technical Foundation, Live ' +
    'AI Traffic, Content Depth, Citation Signals, Engagement Velocity) with the checks behind each, findings ' +
    'with fixes and evidence URLs, recommended_next_tools, and a summary of what the crawler saw. 404 when the ' +
    'domain has no public scan yet.',
  input: DomainProfileQuery,
  output: ScanScore,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  access: 'public',
  http: { surface: 'public_api', method: 'GET', path: '/scan-score', input: 'query' },
  mcp: ['public'],
  errors: ['validation_failed', 'not_found'],
  tags,
  handler: async (ctx, input) => ctx.services.scans.reads.scanScore(input.domain, input.profile ?? null),
});

export const getLeaderboard = defineOperation({
  name: 'getLeaderboard',
  title: 'Signal Strength leaderboard',
  description:
    "Public domains by Signal Strength, highest first, with each entry's movement since the start of the " +
    'current period (UTC day). Paginate with limit and the next_cursor of the previous page.',
  input: LeaderboardInput,
  output: Leaderboard.extend({
    spotlight: z
      .array(SpotlightPlacement)
      .describe(
        'Sponsored: the spotlight placements shown now (spotlight SKU), kept apart from the ranked entries, ' +
          'which they do not affect.',
      ),
  }),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  access: 'public',
  http: { surface: 'public_api', method: 'GET', path: '/leaderboard', input: 'query' },
  mcp: ['public'],
  errors: ['validation_failed'],
  tags,
  handler: async (ctx, input) => ({
    ...(await ctx.services.scans.reads.leaderboard(input.limit, input.cursor)),
    spotlight: await ctx.services.spotlights.active(),
  }),
});

export const getReadinessIndex = defineOperation({
  name: 'getReadinessIndex',
  title: 'Agent readiness index of the network',
  description:
    'Network-wide agent readiness over every public scored domain: how many are in each tier, the average ' +
    'score, and adoption of llms.txt, AI rules in robots.txt, api-catalog, MCP server cards and markdown ' +
    'negotiation - now and at the start of each past period.',
  input: DomainQuery.pick({}),
  output: ReadinessIndex,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  access: 'public',
  http: { surface: 'public_api', method: 'GET', path: '/readiness-index', input: 'query' },
  mcp: ['public'],
  tags,
  handler: async (ctx) => ctx.services.scans.reads.readinessIndex(),
});

export const scanOperations = [
  requestScan,
  getScan,
  getScanFixes,
  getSignal,
  getScanScore,
  getLeaderboard,
  getReadinessIndex,
];
