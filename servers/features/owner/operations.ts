/**
 * The owner-scoped MCP tools (SPEC.md: "returns only the approved account's own sites,
 * agent-versus-human traffic and stored scan findings"). They are tools of the owner MCP server
 * only - no REST route, never on the public server - and read the account the token was issued
 * for (`ctx.account`), under row-level security (`db/scoped.ts`).
 */
import { withOwnerScope } from '../../../db/scoped.ts';
import { defineOperation, type OperationContext, requireAccount } from '../../operation.ts';
import { domainField } from '../sites/operations.ts';
import { SiteStatsResult } from '../traffic/schemas.ts';
import { myFindings, myScans, mySites, myTraffic } from './queries.ts';
import {
  GetMyTrafficInput,
  ListMyFindingsInput,
  ListMyFindingsResult,
  ListMyScansInput,
  ListMyScansResult,
  ListMySitesInput,
  ListMySitesResult,
} from './schemas.ts';

const readOnly = { readOnlyHint: true, idempotentHint: true, openWorldHint: false };

/** Runs a read for the token's account, inside its row-level-security scope. */
const asOwner = <T>(ctx: OperationContext, read: Parameters<typeof withOwnerScope<T>>[2]) =>
  withOwnerScope(ctx.services, requireAccount(ctx).id, read);

export const listMySites = defineOperation({
  name: 'listMySites',
  title: 'Your sites',
  description:
    'Every site registered by your account: domain, whether ownership is verified (and how), whether it is ' +
    'named in network-wide data, and the traffic pixel status - not_installed, receiving (events in the last ' +
    '24 hours) or idle - with first and last event and event counts by source (browser beacon, server feed).',
  input: ListMySitesInput,
  output: ListMySitesResult,
  annotations: readOnly,
  access: 'owner',
  mcp: ['owner'],
  errors: ['unauthorized'],
  tags: ['owner'],
  handler: async (ctx) => asOwner(ctx, (scope) => mySites(scope, ctx.services.now())),
});

export const getMyTraffic = defineOperation({
  name: 'getMyTraffic',
  title: 'Agent-versus-human traffic of your sites',
  description:
    'For one site of your account (site_id from list_my_sites) or all of them, over a period (default: the ' +
    'last 30 days, UTC): totals and shares of people versus each AI agent category, every agent seen, a series ' +
    'per day, top pages per category, and visitors referred by AI assistants. The same figures as GET /site-stats.',
  input: GetMyTrafficInput,
  output: SiteStatsResult,
  annotations: readOnly,
  access: 'owner',
  mcp: ['owner'],
  errors: ['validation_failed', 'unauthorized', 'not_found'],
  tags: ['owner'],
  handler: async (ctx, input) => asOwner(ctx, (scope) => myTraffic(scope, input, ctx.services.now())),
});

export const listMyFindings = defineOperation({
  name: 'listMyFindings',
  title: 'Stored scan findings of your sites',
  description:
    'What the finished scans your account requested found to fix: per finding the check, its Signal Strength ' +
    'component, severity, what was seen and how to fix it, with the scan and domain it came from. Filter by ' +
    'site_id or domain, component and severity; newest scan first.',
  input: ListMyFindingsInput,
  output: ListMyFindingsResult,
  annotations: readOnly,
  access: 'owner',
  mcp: ['owner'],
  errors: ['validation_failed', 'unauthorized', 'not_found'],
  tags: ['owner'],
  handler: async (ctx, input) => {
    const domain = input.domain === undefined ? undefined : domainField(ctx, input.domain);
    return asOwner(ctx, (scope) => myFindings(scope, { ...input, domain }));
  },
});

export const listMyScans = defineOperation({
  name: 'listMyScans',
  title: 'Your latest scans',
  description:
    'The latest scans your account requested, newest first: domain, public or private, depth, status, and ' +
    'once done the Signal Strength score, tier and number of findings (list_my_findings reads them).',
  input: ListMyScansInput,
  output: ListMyScansResult,
  annotations: readOnly,
  access: 'owner',
  mcp: ['owner'],
  errors: ['validation_failed', 'unauthorized'],
  tags: ['owner'],
  handler: async (ctx, input) => {
    const domain = input.domain === undefined ? undefined : domainField(ctx, input.domain);
    return asOwner(ctx, (scope) => myScans(scope, { ...input, domain }));
  },
});

export const ownerOperations = [listMySites, getMyTraffic, listMyFindings, listMyScans];
