/**
 * A domain's scan history, the diff of two scans and batch scans (issue 35 items 2-3), as
 * operations: REST routes on the public API, tools of the public MCP server for the public reads,
 * and tools of the owner MCP server for batches (an account's own, as the service key is over REST).
 */
import { defineOperation, type OperationContext, requireAccount } from '../../operation.ts';
import { signInErrors, signInHeader } from '../../payments/sign-in.ts';
import {
  ScanBatch,
  ScanBatchInput,
  ScanDiff,
  ScanDiffInput,
  ScanHistory,
  ScanHistoryInput,
  StartScanBatchInput,
} from './history-schemas.ts';
import { readScan } from './operations.ts';

const tags = ['signal strength'];

export const listScans = defineOperation({
  name: 'listScans',
  title: 'Scan history of a domain',
  description:
    'Every public scan of a domain (with x-service-key, your private ones too), newest first: status, depth, ' +
    'when it was requested and finished, the Signal ' +
    'Strength score and tier (by the current scoring version) and, once done, diff_url - what changed since the ' +
    'scan before it (get_scan_diff). The newest scanner.history_per_domain finished scans are kept. Paginate ' +
    'with limit and the next_cursor of the previous page.',
  input: ScanHistoryInput,
  output: ScanHistory,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  access: 'public',
  http: { surface: 'public_api', method: 'GET', path: '/scans', input: 'query' },
  mcp: ['public'],
  errors: ['validation_failed', 'unauthorized'],
  tags,
  handler: async (ctx, input) =>
    ctx.services.scans.history.list(input.domain, ctx.account ?? null, input.limit, input.cursor),
});

export const getScanDiff = defineOperation({
  name: 'getScanDiff',
  title: 'What changed between two scans',
  description:
    'What changed between a scan and an earlier one of the same domain (against; default the previous complete ' +
    'scan of the same domain and depth you can see): the score and tier before and after, each component, and ' +
    'every check whose status, score or finding changed, with what was seen and the evidence (the requests) ' +
    'before and after. Both scans are scored now by the current scoring version as one profile, so a change ' +
    'is a change of the site. Same visibility as get_scan for private scans.',
  input: ScanDiffInput,
  output: ScanDiff,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  access: 'public',
  http: {
    surface: 'public_api',
    method: 'GET',
    path: '/scans/:scan_id/diff',
    input: 'query',
    headers: [signInHeader],
  },
  mcp: ['public'],
  errors: ['validation_failed', 'not_found', 'scan_not_complete', 'no_earlier_scan', ...signInErrors],
  tags,
  handler: async (ctx, input) =>
    readScan(ctx, input, (payer) =>
      ctx.services.scans.history.diff(input, {
        account: ctx.account ?? null,
        anonymous: ctx.anonymous ?? null,
        readToken: input.token ?? null,
        payer,
      }),
    ),
});

const batchDescription =
  'Scan up to 100 domains in one request: each is validated as request_scan validates a domain, the batch ' +
  'and its scans are stored before the answer, and the scans run in the background (a domain already being ' +
  'scanned the same way is joined). Answers the batch with batch_id and per domain its scan_id and status ' +
  '(queued, running, done, failed) and, once done, its score and tier. Limited per account by the number of ' +
  'domains (rate_limits.scan_batch_domains).';

/** Starts a batch for the caller's account, after its domains are charged to the account's limit. */
const startBatch = (ctx: OperationContext, input: StartScanBatchInput) => {
  const account = requireAccount(ctx);
  return ctx.services.scans.batches.start(input, account, (domains) =>
    ctx.services.rateLimits.consume('scan_batch_domains', account.id, domains),
  );
};

export const requestScanBatch = defineOperation({
  name: 'requestScanBatch',
  title: 'Scan a batch of websites',
  description: `${batchDescription} Follow it with GET /scans/batch/{batch_id}.`,
  input: StartScanBatchInput,
  output: ScanBatch,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  access: 'service_key',
  http: { surface: 'public_api', method: 'POST', path: '/scans/batch', input: 'body', successStatus: 202 },
  errors: ['validation_failed', 'unauthorized', 'rate_limited'],
  tags,
  handler: startBatch,
});

export const getScanBatch = defineOperation({
  name: 'getScanBatch',
  title: 'Progress of a batch of scans',
  description:
    'A batch started with POST /scans/batch: per domain its scan, status (queued, running, done, failed) and ' +
    'score once done; counts per status, and complete once every scan is done or failed.',
  input: ScanBatchInput,
  output: ScanBatch,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  access: 'service_key',
  http: { surface: 'public_api', method: 'GET', path: '/scans/batch/:batch_id', input: 'query' },
  errors: ['validation_failed', 'unauthorized', 'not_found'],
  tags,
  handler: async (ctx, input) => ctx.services.scans.batches.progress(input.batch_id, requireAccount(ctx)),
});

export const startMyScanBatch = defineOperation({
  name: 'startMyScanBatch',
  title: 'Scan a batch of websites for your account',
  description: `${batchDescription} Follow it with get_my_scan_batch.`,
  input: StartScanBatchInput,
  output: ScanBatch,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  access: 'owner',
  mcp: ['owner'],
  errors: ['validation_failed', 'unauthorized', 'rate_limited'],
  tags: ['owner'],
  handler: startBatch,
});

export const getMyScanBatch = defineOperation({
  name: 'getMyScanBatch',
  title: 'Progress of a batch of your scans',
  description:
    'A batch started with start_my_scan_batch (or POST /scans/batch with your service key): per domain its ' +
    'scan, status and score once done; complete once every scan is done or failed.',
  input: ScanBatchInput,
  output: ScanBatch,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  access: 'owner',
  mcp: ['owner'],
  errors: ['validation_failed', 'unauthorized', 'not_found'],
  tags: ['owner'],
  handler: async (ctx, input) => ctx.services.scans.batches.progress(input.batch_id, requireAccount(ctx)),
});

export const scanHistoryOperations = [
  listScans,
  getScanDiff,
  requestScanBatch,
  getScanBatch,
  startMyScanBatch,
  getMyScanBatch,
];
