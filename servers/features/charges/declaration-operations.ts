/**
 * Brands declare the statement descriptors their charges carry, for a site of theirs whose domain
 * they verified (rules in `declarations.ts`). Also a field of POST /brand-agent.
 */
import { getDomain } from 'tldts';
import type { SiteRow } from '../../../db/schema.ts';
import { invalid, ServiceError } from '../../errors.ts';
import { defineOperation, type OperationContext, requireAccount } from '../../operation.ts';
import { isLocalDomain } from '../../public-address.ts';
import { DeclareDescriptorsInput, DeclaredDescriptors, ListDescriptorsInput } from './declaration-schemas.ts';

/** The account's verified site, whose domain can carry declarations (a registrable one). */
async function declaringSite(ctx: OperationContext, siteId: string): Promise<SiteRow> {
  const site = await ctx.services.sites.getOwned(requireAccount(ctx).id, siteId);
  if (!site.verified_at) {
    throw new ServiceError('domain_not_verified', {
      detail: `Verify ${site.domain} first: POST /sites/${site.id}/verify`,
    });
  }
  return site;
}

/** Declarations name the domain return requests use: a registrable one (or a local test site). */
export function requireDeclarableDomain(domain: string, field: string): void {
  if (!isLocalDomain(domain) && getDomain(domain) !== domain) {
    throw invalid([
      {
        field,
        message: `must be a site on a registrable domain (${getDomain(domain) ?? 'e.g. shop.com'}) to declare descriptors`,
      },
    ]);
  }
}

export const declareStatementDescriptors = defineOperation({
  name: 'declareStatementDescriptors',
  title: 'Declare the statement descriptors of your brand',
  description:
    'Declare the statement descriptors that your charges carry on card statements, for a site of yours whose ' +
    'domain you verified. The card charge lookup then names your brand for those lines at very_high confidence, ' +
    'shown as brand_declared. The list replaces the previous one.',
  input: DeclareDescriptorsInput,
  output: DeclaredDescriptors,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  access: 'service_key',
  http: { surface: 'public_api', method: 'POST', path: '/sites/:site_id/descriptors', input: 'body' },
  errors: ['validation_failed', 'not_found', 'domain_not_verified', 'descriptor_taken'],
  tags: ['sites'],
  handler: async (ctx, input) => {
    const site = await declaringSite(ctx, input.site_id);
    requireDeclarableDomain(site.domain, 'site_id');
    const set = await ctx.services.declarations.replace(
      requireAccount(ctx).id,
      site.domain,
      input.descriptors,
      'descriptors',
    );
    return { site_id: site.id, ...set };
  },
});

export const listStatementDescriptors = defineOperation({
  name: 'listStatementDescriptors',
  title: 'The statement descriptors declared for your site',
  description: 'The statement descriptors declared for the domain of one of your sites.',
  input: ListDescriptorsInput,
  output: DeclaredDescriptors,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  access: 'service_key',
  http: { surface: 'public_api', method: 'GET', path: '/sites/:site_id/descriptors', input: 'query' },
  errors: ['validation_failed', 'not_found'],
  tags: ['sites'],
  handler: async (ctx, input) => {
    const site = await ctx.services.sites.getOwned(requireAccount(ctx).id, input.site_id);
    return { site_id: site.id, ...(await ctx.services.declarations.list(site.domain)) };
  },
});

export const declarationOperations = [declareStatementDescriptors, listStatementDescriptors];
