/**
 * Inputs and outputs of the scanner's operations (schema and type share one name, STYLE.md 9).
 * Field meanings are in the `.describe()` texts, which the OpenAPI documents and MCP tool schemas
 * carry; the scoring rules behind the numbers are in docs/reference/scoring.md.
 */
import { z } from 'zod';
import { addressField } from '../../public-address.ts';

export const DomainInput = addressField(
  z
    .string()
    .min(1)
    .max(300)
    .describe(
      'Domain name such as example.com (a URL is accepted and its host used). In development mode (scanner.allow_local_sites) or with scanner.allow_private_networks on, also localhost:PORT or 127.0.0.1:PORT.',
    ),
  'domain',
);

export const Tier = z
  .object({
    id: z.enum(['dark', 'faint', 'emerging', 'strong', 'beacon']),
    name: z.string(),
    min: z.number().int().describe('Lowest score of the tier'),
    max: z.number().int().describe('Highest score of the tier'),
  })
  .describe('Tier by overall score: Dark 0-24, Faint 25-49, Emerging 50-69, Strong 70-84, Beacon 85-100');
export type Tier = z.infer<typeof Tier>;

export const ComponentId = z.enum([
  'technical_foundation',
  'live_ai_traffic',
  'content_depth',
  'citation_signals',
  'engagement_velocity',
]);

export const ProfileId = z
  .enum(['content', 'shop', 'api'])
  .describe(
    'Site profile (docs/reference/scoring.md "Profiles"): content (a blog, news, docs), shop (sells products), api (an API or SaaS product with machine interfaces). Checks that do not fit a profile are not_applicable and their weight is renormalized away.',
  );

export const RequestEvidence = z
  .object({
    topic: z.string().describe('What the request was for (robots, llms_txt, mcp, oauth, door ...)'),
    method: z.string(),
    url: z.string(),
    status: z.number().int().nullable().describe('null when no answer came'),
    headers: z.record(z.string(), z.string()).describe('The answer headers the judgement reads'),
    body_preview: z.string().nullable().describe('The first 200 characters of the body'),
    duration_ms: z.number().int(),
    error: z.string().nullable(),
    user_agent: z.string().optional().describe("The User-Agent sent, when not the scanner's own (door test)"),
  })
  .describe('One request the scan made');

export const Check = z.object({
  id: z.string().describe('Check id, as listed in docs/reference/scoring.md'),
  title: z.string(),
  weight: z.number().describe('Weight within its component (weights of a component sum to 100)'),
  score: z
    .number()
    .min(0)
    .max(1)
    .nullable()
    .describe('0..1; null when there was nothing to judge, it does not apply, or it could not be checked'),
  status: z
    .enum(['pass', 'partial', 'fail', 'no_data', 'not_applicable', 'unable_to_check'])
    .describe(
      'not_applicable: the profile does not call for it; unable_to_check: unmeasured (e.g. rate limited)',
    ),
  seen: z.string().describe('What the scan saw'),
  evidence: z.array(RequestEvidence).describe('The requests the judgement rests on'),
});

export const Component = z.object({
  id: ComponentId,
  name: z.string(),
  weight: z.number().describe('Weight in the overall score'),
  status: z
    .enum(['scored', 'no_data'])
    .describe('no_data: nothing to judge (Live AI Traffic without the pixel); left out of the overall score'),
  score: z.number().int().min(0).max(100).nullable(),
  checks: z.array(Check),
});

export const Finding = z.object({
  id: z
    .string()
    .describe(
      'The check that fell short, or no_pixel, or soft_404 (the site answers unknown paths with 2xx)',
    ),
  component: ComponentId,
  severity: z.enum(['critical', 'warning', 'info']),
  title: z.string().describe("The check's title"),
  goal: z.string().describe('What the check is for'),
  seen: z.string().describe('What was seen: the issue'),
  fix: z.string().describe('How to fix it'),
  spec_url: z.string().nullable().describe('The specification behind the check'),
  agent_prompt: z.string().describe('A ready prompt for a coding agent working on the site'),
  evidence_url: z.string().nullable().describe('The URL the evidence comes from'),
  evidence: z.array(RequestEvidence).describe('The requests behind the finding (up to four)'),
});
export type Finding = z.infer<typeof Finding>;

export const SiteSummary = z
  .object({
    origin: z.string().describe('Where the crawl ran, after redirects'),
    https: z.boolean(),
    pages_read: z.number().int(),
    robots_txt: z.object({
      present: z.boolean(),
      ai_agents: z
        .array(z.object({ token: z.string(), named: z.boolean(), allowed_root: z.boolean() }))
        .describe('Per AI agent token: named by a group, and allowed to fetch /'),
      content_signals: z.array(z.string()).describe('Content-Signal lines as written'),
    }),
    llms_txt: z.object({
      present: z.boolean(),
      valid: z.boolean(),
      title: z.string().nullable(),
      links: z.number().int(),
    }),
    llms_full_txt: z.boolean(),
    ai_txt: z.boolean(),
    sitemap_urls: z.number().int(),
    markdown_negotiation: z.boolean().describe('Accept: text/markdown answered with markdown'),
    json_ld_types: z.array(z.string()).describe('schema.org types declared on the pages read'),
    discovery: z
      .object({
        api_catalog: z.boolean(),
        oauth_protected_resource: z.boolean(),
        oauth_authorization_server: z.boolean(),
        mcp_server_card: z.boolean(),
        openapi: z.boolean(),
        x402: z.boolean(),
      })
      .describe('Valid discovery documents found'),
  })
  .describe('What the crawler saw, in brief');
export type SiteSummary = z.infer<typeof SiteSummary>;

export const Profile = z.object({
  id: ProfileId.describe('The profile the score was computed for'),
  detected: ProfileId.describe('The profile detected from the site'),
  source: z.enum(['detected', 'requested']).describe('requested: the caller chose the profile'),
  reasons: z.array(z.string()).describe('What the detection saw'),
});

export const NextLevel = z
  .object({
    tier: Tier,
    points_needed: z.number().int(),
    checks: z
      .array(
        z.object({
          id: z.string(),
          title: z.string(),
          component: ComponentId,
          gain: z.number().int().describe('Points the overall score gains when this check passes'),
        }),
      )
      .describe('The checks that, passed in full, reach the tier; largest gain first'),
  })
  .describe('The next tier and how to reach it; null in the top tier');

export const ScoreBreakdown = z.object({
  score: z.number().int().min(0).max(100).describe('Signal Strength, 0-100'),
  tier: Tier,
  scoring_version: z
    .number()
    .int()
    .describe(
      'The scoring version (docs/reference/scoring.md "Versions"); stored scans of older versions are re-scored',
    ),
  profile: Profile,
  next_level: NextLevel.nullable(),
  note: z
    .string()
    .nullable()
    .describe('Set when components had no data and the weights of the others were renormalized'),
  components: z.array(Component).describe('The five components with the checks behind each'),
  findings: z.array(Finding).describe('What to fix, critical first'),
  recommended_next_tools: z.array(z.string()).describe('Tools of this service that help with the findings'),
  site: SiteSummary,
});
export type ScoreBreakdown = z.infer<typeof ScoreBreakdown>;

export const ScanStatus = z.enum(['queued', 'running', 'done', 'failed']);

export const Scan = z.object({
  scan_id: z.uuid(),
  domain: z.string(),
  public: z.boolean().describe('Public scans feed the leaderboard and GET /scan-score'),
  depth: z.enum(['full', 'quick']),
  status: ScanStatus,
  progress: z.object({
    phase: z.string().nullable(),
    done: z.number().int().describe('Requests completed'),
    total: z.number().int().describe('Requests expected so far (grows as pages are discovered)'),
    message: z.string().nullable(),
  }),
  requested_at: z.string(),
  started_at: z.string().nullable(),
  finished_at: z.string().nullable(),
  error: z.string().nullable().describe('Why a failed scan failed'),
  status_url: z.string().describe('GET this URL to follow the scan'),
  result: ScoreBreakdown.nullable().describe('Present once the scan is done'),
});
export type Scan = z.infer<typeof Scan>;

const ProfileInput = ProfileId.optional().describe(
  'Score as this profile instead of the detected one (content, shop, api)',
);

export const RequestScanInput = z.strictObject({
  domain: DomainInput,
  profile: ProfileInput,
  public: z
    .boolean()
    .default(true)
    .describe(
      'false keeps the result private to your account (needs x-service-key); public results appear on the leaderboard',
    ),
});
export type RequestScanInput = z.infer<typeof RequestScanInput>;

export const GetScanInput = z.strictObject({
  scan_id: z.uuid().describe('Scan id from request_scan or the scan SKU'),
  token: z
    .string()
    .max(200)
    .optional()
    .describe('read_token of a private scan bought through the scan SKU (agsvc_scan_...)'),
  profile: ProfileInput,
});

export const GetScanFixesInput = GetScanInput;

export const ScanFixes = z.object({
  scan_id: z.uuid(),
  domain: z.string(),
  score: z.number().int().nullable(),
  findings: z.number().int().describe('Findings on the sheet'),
  markdown: z
    .string()
    .describe('The fix sheet: every finding with goal, issue, fix, specification, agent prompt and evidence'),
});
export type ScanFixes = z.infer<typeof ScanFixes>;

export const DomainQuery = z.strictObject({ domain: DomainInput });
export const DomainProfileQuery = z.strictObject({ domain: DomainInput, profile: ProfileInput });

export const Signal = z.object({
  domain: z.string(),
  status: z
    .enum(['scored', 'scanning', 'unreachable'])
    .describe(
      'scored: a score is known; scanning: a first scan is running; unreachable: the quick check failed',
    ),
  score: z.number().int().nullable(),
  tier: Tier.nullable(),
  depth: z.enum(['full', 'quick']).nullable().describe('quick: from the first quick check, not a full scan'),
  scanned_at: z.string().nullable(),
  age_seconds: z.number().int().nullable().describe('How old the score is'),
  scan_id: z.uuid().nullable(),
  breakdown_url: z.string().nullable().describe('GET /scan-score for the full public breakdown'),
  scoring_version: z.number().int().nullable().describe('The scoring version of the score'),
  profile: ProfileId.nullable().describe('The profile the score was computed for'),
  detail: z.string().nullable().describe('Why there is no score, when there is none'),
});
export type Signal = z.infer<typeof Signal>;

export const ScanScore = ScoreBreakdown.extend({
  domain: z.string(),
  scan_id: z.uuid(),
  depth: z.enum(['full', 'quick']),
  scanned_at: z.string(),
});
export type ScanScore = z.infer<typeof ScanScore>;

export const LeaderboardInput = z.strictObject({
  limit: z.coerce.number().int().min(1).max(100).default(25).describe('Entries per page, 1-100'),
  cursor: z.string().max(500).optional().describe('next_cursor of the previous page'),
});

export const LeaderboardEntry = z.object({
  rank: z.number().int().describe('1 = highest score (ties broken by domain name)'),
  domain: z.string(),
  score: z.number().int(),
  tier: Tier.shape.id,
  depth: z.enum(['full', 'quick']),
  scanned_at: z.string(),
  scoring_version: z.number().int().describe('Every entry is scored with the current version'),
  movement: z
    .object({
      previous_rank: z.number().int().nullable().describe('Rank at the start of the period; null: new entry'),
      rank_change: z.number().int().nullable().describe('Places gained (positive) or lost since then'),
      score_change: z.number().int().nullable(),
      since_last_scan: z
        .object({
          previous_scan_id: z.uuid(),
          previous_score: z.number().int(),
          score_change: z.number().int(),
          diff_url: z.string().describe('Which checks changed between the two scans (GET /scans/{id}/diff)'),
        })
        .nullable()
        .describe("Against the domain's public full scan before the one shown; null: the first one"),
    })
    .describe('Movement since the start of the current period, and since the previous scan'),
});

export type LeaderboardEntry = z.infer<typeof LeaderboardEntry>;

export const Leaderboard = z.object({
  period: z.string().describe('The current period (UTC day); movement is measured from its start'),
  scoring_version: z.number().int().describe('The scoring version every entry is scored with'),
  entries: z.array(LeaderboardEntry),
  next_cursor: z.string().nullable().describe('Pass as cursor for the next page; null on the last page'),
});
export type Leaderboard = z.infer<typeof Leaderboard>;

const Adoption = z
  .object({
    llms_txt: z.number().describe('Share of domains with a valid llms.txt, 0..1'),
    robots_ai_rules: z.number().describe('Share whose robots.txt names AI agents'),
    api_catalog: z.number().describe('Share with an RFC 9727 api-catalog'),
    mcp: z.number().describe('Share with an MCP server card'),
    markdown: z.number().describe('Share answering Accept: text/markdown with markdown'),
  })
  .describe('Adoption of agent-readiness signals among scored public domains');

export const ReadinessPoint = z.object({
  period: z.string(),
  domains: z.number().int(),
  average_score: z.number().nullable(),
  tiers: z.record(z.string(), z.number().int()).describe('Domains per tier id'),
  adoption: Adoption,
});

export const ReadinessIndex = z.object({
  current: ReadinessPoint.describe('Now, over the latest public score of every domain'),
  history: z.array(ReadinessPoint).describe('At the start of each past period, newest first (up to 90)'),
});
export type ReadinessIndex = z.infer<typeof ReadinessIndex>;
export type ReadinessPoint = z.infer<typeof ReadinessPoint>;
