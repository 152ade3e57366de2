import { idempotencyKeyFrom } from '../../idempotency.ts';
import { defineOperation, requireAccount } from '../../operation.ts';
import { EVENTS_PATH } from '../sites/snippets.ts';
import {
  AiSearchDataInput,
  AiSearchDataResult,
  AiToolsInput,
  AiToolsResult,
  IngestEventsInput,
  IngestEventsResult,
  MAX_BATCH_EVENTS,
  PixelStatusInput,
  PixelStatusResult,
  SiteStatsInput,
  SiteStatsResult,
} from './schemas.ts';

/** 1,000 access-log events with long URLs and user agents fit; anything larger is 413. */
const BATCH_BODY_LIMIT_BYTES = 4 * 1024 * 1024;

export const ingestEvents = defineOperation({
  name: 'ingestEvents',
  title: 'Send server-side traffic events',
  description:
    `Server-side ingestion for a site of your account: up to ${MAX_BATCH_EVENTS} access-log entries per request. ` +
    'Each event is classified (human, ai_referred, ai_user_agent, ai_search, ai_training, browser_agent, ' +
    'other_bot) and stored; the reply comes after the batch is durable, with the count per category. AI ' +
    'crawlers never run the browser beacon, so only this feed sees them. 503 with Retry-After when ingestion ' +
    'is over capacity: send the same batch again later, with an Idempotency-Key to make that safe.',
  input: IngestEventsInput,
  output: IngestEventsResult,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  access: 'service_key',
  http: {
    surface: 'public_api',
    method: 'POST',
    path: EVENTS_PATH,
    input: 'body',
    bodyLimitBytes: BATCH_BODY_LIMIT_BYTES,
    headers: [
      {
        name: 'Idempotency-Key',
        description:
          'Makes resending a batch safe (after a lost answer, or a 503): the same key with the same body returns ' +
          'the first response and stores nothing again; the same key with a different body is refused with 409. ' +
          'Keys are per account and kept for 24 hours.',
      },
    ],
  },
  errors: [
    'validation_failed',
    'unauthorized',
    'not_found',
    'payload_too_large',
    'idempotency_key_reused',
    'service_unavailable',
  ],
  tags: ['traffic'],
  handler: async (ctx, input) =>
    ctx.services.traffic.ingestBatch(requireAccount(ctx).id, input, idempotencyKeyFrom(ctx.request.headers)),
});

export const getPixelStatus = defineOperation({
  name: 'getPixelStatus',
  title: 'Pixel install status of your sites',
  description:
    'For each site of your account: whether the domain is verified, whether events arrive (not_installed, ' +
    'receiving, idle), first and last event, and events in the last 24 hours by source (beacon, server).',
  input: PixelStatusInput,
  output: PixelStatusResult,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  access: 'service_key',
  http: { surface: 'public_api', method: 'GET', path: '/pixel', input: 'query' },
  errors: ['validation_failed', 'unauthorized', 'not_found'],
  tags: ['traffic'],
  handler: async (ctx, input) => ctx.services.traffic.pixelStatus(requireAccount(ctx).id, input),
});

export const getSiteStats = defineOperation({
  name: 'getSiteStats',
  title: 'Agent-versus-human traffic of your sites',
  description:
    'Per site of your account and period (default: the last 30 days, UTC): totals and shares of people versus ' +
    'each agent category, every agent seen, a series per day, top pages per category, and visitors referred by ' +
    'AI assistants (ChatGPT, Perplexity, Claude, Gemini, Copilot, ...).',
  input: SiteStatsInput,
  output: SiteStatsResult,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  access: 'service_key',
  http: { surface: 'public_api', method: 'GET', path: '/site-stats', input: 'query' },
  errors: ['validation_failed', 'unauthorized', 'not_found'],
  tags: ['traffic'],
  handler: async (ctx, input) => ctx.services.traffic.siteStats(requireAccount(ctx).id, input),
});

export const getAiSearchData = defineOperation({
  name: 'getAiSearchData',
  title: 'AI agent traffic across the network',
  description:
    'Network-wide share of traffic per AI agent and category over time (default: the last 30 days), summed over ' +
    'every site sending traffic to this service. No per-site figures except for sites whose owners opted in.',
  input: AiSearchDataInput,
  output: AiSearchDataResult,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  access: 'public',
  http: { surface: 'public_api', method: 'GET', path: '/ai-search-data', input: 'query' },
  mcp: ['public'],
  errors: ['validation_failed'],
  tags: ['traffic'],
  handler: async (ctx, input) => ctx.services.traffic.networkStats(input),
});

export const getAiTools = defineOperation({
  name: 'getAiTools',
  title: 'Directory of AI agents and crawlers',
  description:
    'Known AI agents and crawlers: name, operator, category (ai_training, ai_search, ai_user_agent, ' +
    'browser_agent, other_bot), the robots.txt token to allow or block it, whether it respects robots.txt, and ' +
    'how many sites in this network saw it. Filter by category or by part of the name or operator.',
  input: AiToolsInput,
  output: AiToolsResult,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  access: 'public',
  http: { surface: 'public_api', method: 'GET', path: '/ai-tools', input: 'query' },
  mcp: ['public'],
  errors: ['validation_failed'],
  tags: ['traffic'],
  handler: async (ctx, input) => ctx.services.traffic.aiTools(input),
});

export const trafficOperations = [ingestEvents, getPixelStatus, getSiteStats, getAiSearchData, getAiTools];
