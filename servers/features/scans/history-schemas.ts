/**
 * Inputs and outputs of a domain's scan history, the diff of two scans and batch scans (issue 35
 * items 2-3). Same conventions as `schemas.ts`: a schema and its type share one name, field
 * meanings in `.describe()` (they reach OpenAPI and the MCP tool schemas).
 */
import { z } from 'zod';
import { Cursor, Limit, NextCursor } from '../../pagination.ts';
import { ComponentId, DomainInput, ProfileId, RequestEvidence, ScanStatus, Tier } from './schemas.ts';

const ProfileInput = ProfileId.optional().describe(
  "Score both scans as this profile (content, shop, api) instead of the later scan's own",
);

export const ScanHistoryInput = z.strictObject({
  domain: DomainInput,
  limit: Limit,
  cursor: Cursor,
});

export const HistoryEntry = z.object({
  scan_id: z.uuid(),
  public: z.boolean().describe('false: a private scan of your account (x-service-key)'),
  status: ScanStatus,
  depth: z.enum(['full', 'quick']),
  requested_at: z.string(),
  finished_at: z.string().nullable(),
  score: z
    .number()
    .int()
    .nullable()
    .describe('Signal Strength with the current scoring version; null unless done'),
  tier: Tier.shape.id.nullable(),
  error: z.string().nullable().describe('Why a failed scan failed'),
  status_url: z.string().describe('GET this URL for the full scan'),
  diff_url: z
    .string()
    .nullable()
    .describe('What changed since the previous complete scan (GET /scans/{id}/diff); null unless done'),
});
export type HistoryEntry = z.infer<typeof HistoryEntry>;

export const ScanHistory = z.object({
  domain: z.string(),
  scans: z
    .array(HistoryEntry)
    .describe(
      "The domain's public scans, with your account's private ones (x-service-key), newest request first",
    ),
  kept_per_domain: z
    .number()
    .int()
    .describe('Finished scans kept per domain (scanner.history_per_domain); older ones are pruned'),
  next_cursor: NextCursor,
});
export type ScanHistory = z.infer<typeof ScanHistory>;

export const ScanDiffInput = z.strictObject({
  scan_id: z.uuid().describe('The later scan'),
  against: z
    .uuid()
    .optional()
    .describe(
      'The scan to compare with; default: the previous complete scan of the same domain and depth you can see',
    ),
  token: z
    .string()
    .max(200)
    .optional()
    .describe('read_token of a private scan bought through the scan SKU (reads scan_id only)'),
  profile: ProfileInput,
});
export type ScanDiffInput = z.infer<typeof ScanDiffInput>;

const ScanPoint = z.object({
  scan_id: z.uuid(),
  finished_at: z.string(),
  score: z.number().int(),
  tier: Tier,
});

const CheckState = z.object({
  status: z.enum(['pass', 'partial', 'fail', 'no_data', 'not_applicable', 'unable_to_check']),
  score: z.number().nullable(),
  seen: z.string(),
  evidence: z.array(RequestEvidence),
});

export const CheckChange = z.object({
  id: z.string(),
  title: z.string(),
  component: ComponentId,
  change: z
    .enum(['improved', 'regressed', 'changed'])
    .describe('improved / regressed: the check score rose / fell; changed: only status or what was seen did'),
  before: CheckState.nullable().describe('null: the check did not exist for the earlier scan'),
  after: CheckState.nullable().describe('null: the check does not exist for the later scan'),
});
export type CheckChange = z.infer<typeof CheckChange>;

export const ComponentChange = z.object({
  id: ComponentId,
  name: z.string(),
  before: z.object({ status: z.enum(['scored', 'no_data']), score: z.number().int().nullable() }),
  after: z.object({ status: z.enum(['scored', 'no_data']), score: z.number().int().nullable() }),
  score_change: z.number().int().nullable().describe('null when either side had no data'),
});

export const ScanDiff = z.object({
  domain: z.string(),
  scoring_version: z.number().int().describe('Both scans are scored by this (the current) version'),
  profile: ProfileId.describe('Both scans are scored as this profile'),
  before: ScanPoint.describe('The earlier scan'),
  after: ScanPoint.describe('The later scan'),
  score_change: z.number().int(),
  tier_changed: z.boolean(),
  components: z.array(ComponentChange),
  checks: z
    .array(CheckChange)
    .describe('The checks whose status, score or finding changed, largest move first'),
  unchanged_checks: z.number().int(),
  summary: z.string().describe('The change in one line'),
});
export type ScanDiff = z.infer<typeof ScanDiff>;

export const StartScanBatchInput = z.strictObject({
  domains: z
    .array(DomainInput)
    .min(1)
    .max(100)
    .describe('1 to 100 domains, each as POST /scans takes it; each is scanned once (no repeats)'),
  profile: ProfileId.optional().describe('Score every scan as this profile instead of each detected one'),
  public: z
    .boolean()
    .default(true)
    .describe('false keeps the results private to your account; public results appear on the leaderboard'),
});
export type StartScanBatchInput = z.infer<typeof StartScanBatchInput>;

export const ScanBatchInput = z.strictObject({
  batch_id: z.uuid().describe('batch_id from POST /scans/batch'),
});

export const BatchItem = z.object({
  domain: z.string(),
  scan_id: z.uuid().nullable().describe('null once the scan was pruned from the domain history'),
  status: z
    .enum(['queued', 'running', 'done', 'failed', 'pruned'])
    .describe('pruned: the scan left the domain history (scanner.history_per_domain)'),
  score: z.number().int().nullable(),
  tier: Tier.shape.id.nullable(),
  error: z.string().nullable(),
  status_url: z.string().nullable(),
});

export const ScanBatch = z.object({
  batch_id: z.uuid(),
  public: z.boolean(),
  profile: ProfileId.nullable(),
  created_at: z.string(),
  complete: z.boolean().describe('Every scan of the batch is done or failed'),
  counts: z.object({
    queued: z.number().int(),
    running: z.number().int(),
    done: z.number().int(),
    failed: z.number().int(),
    pruned: z.number().int(),
  }),
  items: z.array(BatchItem).describe('One per domain, in the order given'),
  status_url: z.string().describe('GET this URL to follow the batch'),
});
export type ScanBatch = z.infer<typeof ScanBatch>;
