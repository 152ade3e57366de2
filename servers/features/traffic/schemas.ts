/**
 * Inputs and outputs of the traffic operations: collection (`POST /events`), install status
 * (`GET /pixel`), per-site statistics (`GET /site-stats`), network aggregates (`GET /ai-search-data`)
 * and the agent directory (`GET /ai-tools`). snake_case JSON; every field described for models.
 */
import { z } from 'zod';
import { calendarDate, dateTime } from '../../input.ts';
import { AgentCategory, RobotsRespect, TrafficCategory } from './agents.ts';

/** The most events one `POST /events` may carry (issue 3: "up to 1,000 events per request"). */
export const MAX_BATCH_EVENTS = 1000;
/** How far in the past an event may be (older ones are outside raw retention anyway). */
export const MAX_EVENT_AGE_DAYS = 30;

const dayString = calendarDate().describe('UTC calendar date, YYYY-MM-DD.');

export const ServerEvent = z.strictObject({
  ts: z
    .union([dateTime({ offset: true }), z.number().int().positive()])
    .describe('When the request reached your server: RFC 3339 timestamp or Unix epoch milliseconds.'),
  url: z
    .string()
    .min(1)
    .max(4096)
    .describe('The requested URL, absolute or a path as your server logs it. Only the path is stored.'),
  user_agent: z
    .string()
    .max(2048)
    .describe(
      'The User-Agent request header, as received (empty if none; then a User-Agent in `headers` is used).',
    ),
  ip: z
    .string()
    .max(64)
    .optional()
    .describe('Client address. Only its network prefix (/24, /48) is stored, never the address.'),
  referrer: z.string().max(4096).optional().describe('The Referer request header. Only its host is stored.'),
  status: z.number().int().min(100).max(599).optional().describe('HTTP status your server answered.'),
  headers: z
    .record(z.string().max(64), z.string().max(4096))
    .refine((h) => Object.keys(h).length <= 32, 'at most 32 headers')
    .optional()
    .describe(
      'Agent-identifying request headers, names in any case (HTTP field names are case-insensitive): ' +
        'Signature-Agent, Signature-Input, Signature (Web Bot Auth), and User-Agent when `user_agent` is empty. ' +
        'Other headers are ignored.',
    ),
});
export type ServerEvent = z.infer<typeof ServerEvent>;

export const IngestEventsInput = z.strictObject({
  site_id: z.uuid().describe('Site id from POST /pixel-install. The site must belong to the key’s account.'),
  events: z
    .array(ServerEvent)
    .min(1)
    .max(MAX_BATCH_EVENTS, `at most ${MAX_BATCH_EVENTS} events per request`)
    .describe(`Access-log entries, 1 to ${MAX_BATCH_EVENTS} per request.`),
});
export type IngestEventsInput = z.infer<typeof IngestEventsInput>;

const CategoryCounts = z
  .record(TrafficCategory, z.number().int())
  .describe(
    'Events per category: human, ai_referred, ai_user_agent, ai_search, ai_training, browser_agent, other_bot.',
  );

export const IngestEventsResult = z.object({
  site_id: z.uuid(),
  accepted: z.number().int().describe('Events stored (all of them: a batch is stored whole or refused).'),
  by_category: CategoryCounts,
});
export type IngestEventsResult = z.infer<typeof IngestEventsResult>;

export const PixelStatusInput = z.strictObject({
  site_id: z.uuid().optional().describe('Only this site (default: every site of the account).'),
});
export type PixelStatusInput = z.infer<typeof PixelStatusInput>;

const SourceCounts = z.object({
  beacon: z.number().int().describe('From the pixel (GET /beacon).'),
  server: z.number().int().describe('From server-side ingestion (POST /events).'),
});

export const SitePixelStatus = z.object({
  site_id: z.uuid(),
  domain: z.string(),
  verified: z.boolean().describe('Whether the domain ownership challenge was met.'),
  status: z
    .enum(['not_installed', 'receiving', 'idle'])
    .describe(
      'not_installed: no event ever; receiving: events in the last 24 hours; idle: none in 24 hours.',
    ),
  first_event_at: z.iso.datetime().nullable(),
  last_event_at: z.iso.datetime().nullable(),
  events_24h: z
    .object({ total: z.number().int(), ...SourceCounts.shape })
    .describe('Events received in the last 24 hours (whole hours, UTC), by source.'),
  events_total: SourceCounts.extend({ total: z.number().int() }).describe(
    'Events received since installation.',
  ),
});
export const PixelStatusResult = z.object({ sites: z.array(SitePixelStatus) });
export type PixelStatusResult = z.infer<typeof PixelStatusResult>;

export const PeriodInput = {
  from: dayString.optional().describe('First day (UTC), inclusive. Default: `days` before `to`.'),
  to: dayString.optional().describe('Last day (UTC), inclusive. Default: today.'),
  days: z.coerce
    .number()
    .int()
    .min(1)
    .max(400)
    .optional()
    .describe('Length of the period when `from` is not given (default 30).'),
};

export const SiteStatsInput = z.strictObject({
  site_id: z.uuid().optional().describe('Only this site (default: every site of the account).'),
  ...PeriodInput,
  top: z.coerce.number().int().min(1).max(50).optional().describe('Top pages per category (default 10).'),
});
export type SiteStatsInput = z.infer<typeof SiteStatsInput>;

const Period = z.object({ from: dayString, to: dayString, days: z.number().int() });

const CategoryShare = z.object({
  category: TrafficCategory,
  events: z.number().int(),
  share: z.number().describe('Fraction of all events in the period, 0 to 1.'),
});
const AgentShare = z.object({
  agent: z.string().describe('Agent name (robots.txt token where there is one) or bot product name.'),
  operator: z.string().nullable(),
  category: TrafficCategory,
  events: z.number().int(),
  share: z.number().describe('Fraction of all events in the period, 0 to 1.'),
});
const DayCounts = z.object({
  day: dayString,
  events: z.number().int(),
  ai_share: z
    .number()
    .describe('Share of AI agent categories (ai_user_agent, ai_search, ai_training, browser_agent).'),
  by_category: CategoryCounts,
});

export const Totals = z.object({
  events: z.number().int(),
  human: z.number().int().describe('People, including those referred by an AI assistant.'),
  ai_agents: z.number().int().describe('ai_user_agent + ai_search + ai_training + browser_agent.'),
  other_bots: z.number().int(),
  ai_share: z.number().describe('ai_agents / events.'),
  human_share: z.number(),
});

export const SiteStats = z.object({
  site_id: z.uuid(),
  domain: z.string(),
  totals: Totals,
  by_category: z.array(CategoryShare),
  by_agent: z.array(AgentShare).describe('Every named agent or bot, most events first.'),
  by_day: z.array(DayCounts).describe('One entry per day of the period, zeros included.'),
  top_pages: z
    .record(TrafficCategory, z.array(z.object({ path: z.string(), events: z.number().int() })))
    .describe('Most visited paths per category.'),
  ai_referrals: z.object({
    events: z.number().int().describe('People who arrived from an AI assistant.'),
    by_source: z.array(
      z.object({ source: z.string(), operator: z.string().nullable(), events: z.number().int() }),
    ),
  }),
});
export const SiteStatsResult = z.object({ period: Period, sites: z.array(SiteStats) });
export type SiteStatsResult = z.infer<typeof SiteStatsResult>;

export const AiSearchDataInput = z.strictObject({
  ...PeriodInput,
  category: TrafficCategory.optional().describe('Only this category in by_agent.'),
});
export type AiSearchDataInput = z.infer<typeof AiSearchDataInput>;

export const AiSearchDataResult = z.object({
  period: Period,
  totals: Totals,
  by_category: z.array(CategoryShare),
  by_agent: z.array(AgentShare).describe('AI agents and other bots across the network, most events first.'),
  by_day: z.array(DayCounts),
  opted_in_sites: z
    .array(z.object({ domain: z.string(), events: z.number().int(), ai_share: z.number() }))
    .describe('Per-site figures, only for sites whose owners opted in to share them.'),
  note: z.string(),
});
export type AiSearchDataResult = z.infer<typeof AiSearchDataResult>;

export const AiToolsInput = z.strictObject({
  category: AgentCategory.optional().describe('Only agents of this category.'),
  q: z.string().trim().min(1).max(100).optional().describe('Case-insensitive part of the name or operator.'),
});
export type AiToolsInput = z.infer<typeof AiToolsInput>;

export const AiTool = z.object({
  name: z.string(),
  operator: z.string().nullable(),
  category: AgentCategory,
  category_source: z
    .string()
    .nullable()
    .describe("The operator's own page the category follows; null when it is read from the upstream list."),
  robots_token: z.string().describe('The User-agent token to use in robots.txt.'),
  respects_robots_txt: RobotsRespect.describe('yes, no, unclear, or discretion (left to whoever runs it).'),
  purpose: z.string().nullable(),
  sites_seen: z.number().int().describe('Sites in this network where it was seen.'),
});
export const AiToolsResult = z.object({
  agents: z.array(AiTool),
  total: z.number().int(),
  source: z
    .object({ name: z.string(), url: z.string(), license: z.string(), retrieved: z.string() })
    .describe('Where the list comes from (categories are ours, each with the operator page it follows).'),
});
export type AiToolsResult = z.infer<typeof AiToolsResult>;

/** 30-day aggregates of a domain's live traffic, for the site scanner. */
export interface LiveTraffic {
  domain: string;
  site_id: string;
  events_30d: number;
  ai_events_30d: number;
  ai_share: number;
  by_category: Record<TrafficCategory, number>;
  agents_seen: string[];
  ai_referrals_30d: number;
  /** The same counts over the 30 days before; null when collection had not started by then. */
  previous_ai_events_30d: number | null;
  previous_ai_referrals_30d: number | null;
  first_event_at: string | null;
  last_event_at: string | null;
  daily: { day: string; events: number; ai_events: number }[];
}
