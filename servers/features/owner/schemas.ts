/**
 * Inputs and outputs of the owner-scoped MCP tools (schema and type share one name, STYLE.md 9).
 * No input names an account: the account is the one the access token was issued for
 * (STYLE.md 3), injected by the owner MCP endpoint as `ctx.account`.
 */
import { z } from 'zod';
import { ComponentId, DomainInput, Finding } from '../scans/schemas.ts';
import { SiteInfo } from '../sites/schemas.ts';
import { SitePixelStatus, SiteStatsInput } from '../traffic/schemas.ts';

export const ListMySitesInput = z.strictObject({});

export const MySite = SiteInfo.extend({
  pixel: SitePixelStatus.pick({
    status: true,
    first_event_at: true,
    last_event_at: true,
    events_24h: true,
    events_total: true,
  }).describe('Whether traffic arrives from the pixel or server-side feed, as GET /pixel reports it.'),
});
export type MySite = z.infer<typeof MySite>;

export const ListMySitesResult = z.object({
  sites: z.array(MySite).describe('Every site of your account, oldest registration first.'),
});
export type ListMySitesResult = z.infer<typeof ListMySitesResult>;

/** The same input as GET /site-stats, so the tool and the route answer one question alike. */
export const GetMyTrafficInput = SiteStatsInput;
export type GetMyTrafficInput = z.infer<typeof GetMyTrafficInput>;

export const Severity = z.enum(['critical', 'warning', 'info']);

export const ListMyFindingsInput = z.strictObject({
  site_id: z.uuid().optional().describe('Only findings for the domain of this site of your account.'),
  domain: DomainInput.optional().describe('Only findings of scans of this domain.'),
  component: ComponentId.optional().describe('Only findings of this Signal Strength component.'),
  severity: Severity.optional().describe('Only findings of this severity.'),
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(500)
    .default(100)
    .describe('Most findings to return, newest scan first (1-500, default 100).'),
});
export type ListMyFindingsInput = z.infer<typeof ListMyFindingsInput>;

export const MyFinding = Finding.extend({
  scan_id: z.uuid().describe('The scan that reported it.'),
  domain: z.string(),
  scanned_at: z.string().describe('When that scan finished.'),
});

export const ListMyFindingsResult = z.object({
  findings: z
    .array(MyFinding)
    .describe('Findings of the finished scans your account requested, newest scan first, critical first.'),
});
export type ListMyFindingsResult = z.infer<typeof ListMyFindingsResult>;

export const ListMyScansInput = z.strictObject({
  domain: DomainInput.optional().describe('Only scans of this domain.'),
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(100)
    .default(20)
    .describe('Most scans to return, newest first (1-100, default 20).'),
});
export type ListMyScansInput = z.infer<typeof ListMyScansInput>;

export const MyScan = z.object({
  scan_id: z.uuid(),
  domain: z.string(),
  public: z.boolean().describe('Public scans feed the leaderboard; private ones only your account sees.'),
  depth: z.enum(['full', 'quick']),
  status: z.enum(['queued', 'running', 'done', 'failed']),
  requested_at: z.string(),
  finished_at: z.string().nullable(),
  score: z.number().int().nullable().describe('Signal Strength 0-100 once done.'),
  tier: z.string().nullable().describe('Tier id once done (dark, faint, emerging, strong, beacon).'),
  error: z.string().nullable().describe('Why a failed scan failed.'),
  findings: z.number().int().describe('Number of findings stored for it (list_my_findings reads them).'),
});

export const ListMyScansResult = z.object({
  scans: z.array(MyScan).describe('Scans your account requested, newest first.'),
});
export type ListMyScansResult = z.infer<typeof ListMyScansResult>;
