/**
 * Directory operations on the public API. Every read is also a public MCP tool with the same
 * schema; writes are REST only and need a service key (a Bearer token of the authorization server
 * once it exists).
 */

import { getDomain } from 'tldts';
import { localSitesAllowed } from '../../config.ts';
import { invalid } from '../../errors.ts';
import { defineOperation, type OperationContext, requireAccount } from '../../operation.ts';
import { requireCallableDestination } from '../../outbound/safe-fetch.ts';
import { isLocalDomain } from '../../public-address.ts';
import { featuredSlot } from '../catalog/featured-bid/operations.ts';
import { domainField, requireVerifiedDomain } from '../sites/operations.ts';
import {
  AgentHubInput,
  AgentHubResult,
  ListAgentsInput,
  ListAgentsResult,
  RegisterBrandAgentInput,
  RegisterBrandAgentResult,
  SearchListingsInput,
  SearchListingsResult,
  SubmitListingInput,
  SubmitListingResult,
} from './schemas.ts';

export const submitListing = defineOperation({
  name: 'submitListing',
  title: 'List your site in the directory',
  description:
    'Submit or update the directory listing of a domain of your account: name, description (at most 500 ' +
    'characters), category, landing page URL on the domain, tags and a published contact. It is listed at once ' +
    'when your account has verified the domain, and pending until then (it appears as soon as the domain is ' +
    'verified). One listing per account and domain: sending it again updates it. Authenticate with an access ' +
    'token of the authorization server issued for this API (Authorization: Bearer) or with your service key.',
  input: SubmitListingInput,
  output: SubmitListingResult,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  access: 'bearer',
  http: { surface: 'public_api', method: 'POST', path: '/listings', input: 'body' },
  errors: ['validation_failed'],
  tags: ['directory'],
  handler: async (ctx, input) => {
    const domain = domainField(ctx, input.domain);
    const host = new URL(input.url).host;
    if (host !== domain && !host.endsWith(`.${domain}`)) {
      throw invalid([{ field: 'url', message: `must be on ${domain} or one of its subdomains` }]);
    }
    const { listing, listed, created } = await ctx.services.directory.submitListing(
      requireAccount(ctx).id,
      domain,
      input,
    );
    return { ...listing, status: listed ? ('listed' as const) : ('pending' as const), created };
  },
});

export const searchListings = defineOperation({
  name: 'searchListings',
  title: 'Search the directory of listed sites',
  description:
    'Search the public directory of sites whose owners verified their domain. Filter by text (q, matched ' +
    'case-insensitively in name, description, domain and tags), category and min_score (latest Signal ' +
    'Strength score, 0-100; unscored domains are left out). Newest first; pass next_cursor as cursor for more.',
  input: SearchListingsInput,
  output: SearchListingsResult,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  access: 'public',
  http: { surface: 'public_api', method: 'GET', path: '/listings', input: 'query' },
  mcp: ['public'],
  errors: ['validation_failed'],
  tags: ['directory'],
  handler: async (ctx, input) => ctx.services.directory.searchListings(input),
});

/**
 * The brand agent's endpoint: https to a public host, unless outbound calls may reach private
 * networks (tests, self-hosting) or it is on this machine in development mode (`localhost:PORT`,
 * where local sites are allowed). Deliveries are checked again at connect time by the safe fetch.
 */
async function endpointField(ctx: OperationContext, raw: string): Promise<string> {
  const url = new URL(raw);
  const local = localSitesAllowed(ctx.services.config) && isLocalDomain(url.host);
  if (!ctx.services.config.outbound.allow_private_networks && !local && url.protocol !== 'https:') {
    throw invalid([{ field: 'endpoint', message: 'must be an https URL' }]);
  }
  await requireCallableDestination(ctx.services.fetch, raw, 'endpoint');
  return raw;
}

export const registerBrandAgent = defineOperation({
  name: 'registerBrandAgent',
  title: "Register your brand's agent",
  description:
    "Register (or update) the agent of a brand for its verified, registrable domain: the agent's endpoint and " +
    'protocols, a webhook secret (generated and returned once when omitted), the published support contact, a ' +
    'private return contact and the return policy. Return requests for the domain are then delivered to it - ' +
    'by signed webhook to the endpoint (protocol webhook) or by email to the return contact (protocol email) - ' +
    'including those that were waiting. Read them with GET /brand-agent/requests and move them with POST ' +
    '/brand-agent/requests/{request_id}/status.',
  input: RegisterBrandAgentInput,
  output: RegisterBrandAgentResult,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  access: 'service_key',
  http: { surface: 'public_api', method: 'POST', path: '/brand-agent', input: 'body' },
  errors: ['validation_failed', 'domain_not_verified', 'brand_agent_taken', 'descriptor_taken'],
  tags: ['brand agents'],
  handler: async (ctx, input) => {
    const domain = domainField(ctx, input.domain);
    if (!isLocalDomain(domain) && getDomain(domain) !== domain) {
      throw invalid([
        {
          field: 'domain',
          message: `must be the registrable domain (${getDomain(domain) ?? 'e.g. shop.com'}) that return requests name`,
        },
      ]);
    }
    const endpoint = await endpointField(ctx, input.endpoint);
    if (input.webhook_secret !== undefined && !input.protocols.includes('webhook')) {
      throw invalid([{ field: 'webhook_secret', message: 'is only used with protocol webhook' }]);
    }
    if (input.protocols.includes('email') && !(input.return_contact ?? input.support_contact).email) {
      throw invalid([{ field: 'return_contact.email', message: 'is required with protocol email' }]);
    }
    await requireVerifiedDomain(ctx, domain);
    const accountId = requireAccount(ctx).id;
    // Declared first: a refused descriptor leaves the agent as it was.
    const declared =
      input.statement_descriptors === undefined
        ? await ctx.services.declarations.list(domain)
        : await ctx.services.declarations.replace(
            accountId,
            domain,
            input.statement_descriptors,
            'statement_descriptors',
          );
    const result = await ctx.services.directory.registerBrandAgent(accountId, domain, { ...input, endpoint });
    return {
      ...result.agent,
      created: result.created,
      statement_descriptors: declared.descriptors.map((d) => d.descriptor),
      webhook_secret: result.webhook_secret,
      delivery: { channel: result.channel, queued_requests: result.queued },
    };
  },
});

export const listAgents = defineOperation({
  name: 'listAgents',
  title: 'List agents in the directory',
  description:
    'Agents in the public directory, newest first: brand agents (registered by brands for their verified ' +
    'domains, with endpoint, protocols, published support contact and return policy) and registered agent ' +
    'identities. Pass next_cursor as cursor for more.',
  input: ListAgentsInput,
  output: ListAgentsResult,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  access: 'public',
  http: { surface: 'public_api', method: 'GET', path: '/agents', input: 'query' },
  mcp: ['public'],
  errors: ['validation_failed'],
  tags: ['directory'],
  handler: async (ctx, input) => ({
    ...(await ctx.services.directory.listAgents(input)),
    sponsored: await ctx.services.boost.sponsored(),
  }),
});

export const getAgentHub = defineOperation({
  name: 'getAgentHub',
  title: 'The agent hub storefront',
  description:
    'The storefront of the directory: top listed sites (by Signal Strength score, then newest), the number of ' +
    'listings per category, and the paid featured and spotlight placements.',
  input: AgentHubInput,
  output: AgentHubResult,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  access: 'public',
  http: { surface: 'public_api', method: 'GET', path: '/agenthub', input: 'query' },
  mcp: ['public'],
  tags: ['directory'],
  handler: async (ctx) => {
    const [hub, featured, spotlights, boosted] = await Promise.all([
      ctx.services.directory.agentHub(),
      featuredSlot(ctx.services),
      ctx.services.spotlights.active(),
      ctx.services.boost.sponsored(),
    ]);
    return {
      featured: featured.holder
        ? [
            {
              domain: featured.holder.domain,
              url: featured.holder.url,
              blurb: featured.holder.blurb,
              ends_at: featured.holder.until,
            },
          ]
        : [],
      spotlight: spotlights.map((p) => ({
        domain: p.domain,
        url: p.url,
        blurb: p.blurb,
        ends_at: p.ends_at,
      })),
      top_listings: hub.top_listings,
      categories: hub.categories,
      total_listings: hub.total_listings,
      agents: { brand: hub.brand_agents },
      boosted,
      updated: ctx.services.now().toISOString(),
    };
  },
});

export const directoryOperations = [
  searchListings,
  submitListing,
  listAgents,
  registerBrandAgent,
  getAgentHub,
];
