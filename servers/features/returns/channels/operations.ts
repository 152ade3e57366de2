import { defineOperation } from '../../../operation.ts';
import { BrandChannelsResult, GetBrandChannelsInput } from './schemas.ts';

export const getBrandChannels = defineOperation({
  name: 'getBrandChannels',
  title: 'How to reach a brand about a return or refund',
  description:
    'Every channel the service knows for a brand, before filing a return or refund request: the agent the brand ' +
    'registered with this service, its own A2A agent or MCP server, role email addresses, contact form, phone, ' +
    "chat, help pages and return policy - each with where it came from (registered, the brand registry, the brand's " +
    'own site), how it was found, its place in the delivery order and what your agent can do with it. Channels are ' +
    "read from the brand's site (robots.txt obeyed) when nothing fresh is stored; a read waits a short time and " +
    'answers status running while the rest goes on (ask again after retry_after_s). delivery_channel says how ' +
    'start_return_request would deliver now; null means the request would wait, and the other channels are what ' +
    'the person can use meanwhile.',
  input: GetBrandChannelsInput,
  output: BrandChannelsResult,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: true },
  access: 'public',
  http: { surface: 'cs', method: 'GET', path: '/brands/:domain', input: 'query' },
  mcp: ['public'],
  errors: ['validation_failed', 'rate_limited'],
  tags: ['customer service'],
  handler: async (ctx, input) => {
    const { channels, returns, config, rateLimits } = ctx.services;
    return channels.describe(input.domain, {
      budgetMs: config.returns.discovery.request_budget_ms,
      // Reading a stored answer is free; making the service crawl a site counts as a write.
      beforeStart: async () => {
        if (!ctx.account) await rateLimits.consume('unauthenticated_writes', ctx.request.ip);
      },
      deliverableNow: (channel) => returns.deliversOn(channel),
    });
  },
});

export const brandChannelOperations = [getBrandChannels];
