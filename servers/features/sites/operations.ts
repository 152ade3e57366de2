import type { SiteRow } from '../../../db/schema.ts';
import { invalid, ServiceError } from '../../errors.ts';
import { defineOperation, type OperationContext, requireAccount } from '../../operation.ts';
import { domainPolicyOf, normalizeDomain } from '../../public-address.ts';
import { siteOrigin } from './domain.ts';
import {
  InstallPixelInput,
  InstallPixelResult,
  ListSitesResult,
  VerifySiteInput,
  VerifySiteResult,
} from './schemas.ts';
import { VERIFICATION_NAME, VERIFICATION_PATH } from './service.ts';
import { collectionUrls, installSnippets } from './snippets.ts';

export const siteInfo = (site: SiteRow) => ({
  site_id: site.id,
  domain: site.domain,
  verified: site.verified_at !== null,
  verified_at: site.verified_at,
  verification_method: site.verification_method as 'http' | 'dns' | null,
  share_network: site.share_network === 1,
  created_at: site.created_at,
});

/** A `domain` field checked against the configured policy, as a 400 naming the field. */
export function domainField(ctx: OperationContext, raw: string, field = 'domain'): string {
  const result = normalizeDomain(raw, domainPolicyOf(ctx.services.config));
  if (!result.ok) throw invalid([{ field, message: result.message }]);
  return result.domain;
}

export const installPixel = defineOperation({
  name: 'installPixel',
  title: 'Register a site and get the traffic pixel',
  description:
    'Register a site for the calling account (x-service-key), or - without a key - create an account from ' +
    '`email` and register the site for it. Returns the site id, how to prove ownership of the domain (a file or ' +
    'a DNS TXT record), the collection endpoints, and install snippets: a browser beacon plus a server-side ' +
    'feed (Express middleware, nginx recipe) - AI crawlers only show up in the server-side feed. Registering ' +
    'the same domain again returns the same site.',
  input: InstallPixelInput,
  output: InstallPixelResult,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  access: 'public',
  http: {
    surface: 'public_api',
    method: 'POST',
    path: '/pixel-install',
    input: 'body',
    headers: [
      { name: 'x-service-key', description: 'Your service key; omit it to create an account from `email`.' },
    ],
  },
  rateLimit: 'unauthenticated_writes',
  errors: ['validation_failed', 'unauthorized', 'account_exists', 'rate_limited'],
  tags: ['sites'],
  handler: async (ctx, input) => {
    const domain = domainField(ctx, input.domain);
    const { sites, accounts, config } = ctx.services;
    let accountId: string;
    let registration: { site: SiteRow; created: boolean };
    let key = null;
    if (ctx.account) {
      if (input.email !== undefined || input.password !== undefined) {
        throw invalid([
          {
            field: input.email !== undefined ? 'email' : 'password',
            message: 'is only used without an x-service-key header',
          },
        ]);
      }
      accountId = ctx.account.id;
      registration = await sites.register(accountId, domain, { shareNetwork: input.share_network });
    } else {
      if (!input.email)
        throw invalid([{ field: 'email', message: 'is required without an x-service-key header' }]);
      const created = await accounts.create(
        { email: input.email, password: input.password },
        (trx, account) => sites.register(account.id, domain, { shareNetwork: input.share_network, db: trx }),
      );
      accountId = created.account.id;
      registration = created.extra;
      key = created.key;
    }
    const { site, created } = registration;
    return {
      ...siteInfo(site),
      account_id: accountId,
      created,
      key,
      verification: {
        token: site.verification_token,
        http: { url: siteOrigin(site.domain) + VERIFICATION_PATH, content: site.verification_token },
        dns: {
          type: 'TXT' as const,
          name: site.domain,
          value: `${VERIFICATION_NAME}=${site.verification_token}`,
        },
        verify_url: `${config.public_api_url}/sites/${site.id}/verify`,
      },
      collect: collectionUrls(config.public_api_url),
      snippets: installSnippets(config.public_api_url, site.id),
    };
  },
});

export const listSites = defineOperation({
  name: 'listSites',
  title: "List the account's sites",
  description: 'Every site registered by the calling account, with its verification state.',
  input: VerifySiteInput.pick({}),
  output: ListSitesResult,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  access: 'service_key',
  http: { surface: 'public_api', method: 'GET', path: '/sites', input: 'query' },
  tags: ['sites'],
  handler: async (ctx) => ({
    sites: (await ctx.services.sites.listForAccount(requireAccount(ctx).id)).map(siteInfo),
  }),
});

export const verifySite = defineOperation({
  name: 'verifySite',
  title: 'Verify ownership of a site',
  description:
    'Check the ownership proof of one of your sites now: the token file at /.well-known/' +
    `${VERIFICATION_NAME}.txt, then the DNS TXT record. Verified domains can be listed, scanned as your own and ` +
    'given a brand agent. Returns the site and what each check saw.',
  input: VerifySiteInput,
  output: VerifySiteResult,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  access: 'service_key',
  http: { surface: 'public_api', method: 'POST', path: '/sites/:site_id/verify', input: 'query' },
  errors: ['validation_failed', 'not_found'],
  tags: ['sites'],
  handler: async (ctx, input) => {
    const { site, checks } = await ctx.services.sites.verify(requireAccount(ctx).id, input.site_id);
    return { ...siteInfo(site), checks };
  },
});

/** 403 unless the caller has verified `domain` (listings, brand agents, owned scans). */
export async function requireVerifiedDomain(ctx: OperationContext, domain: string): Promise<SiteRow> {
  const site = await ctx.services.sites.verifiedSite(requireAccount(ctx).id, domain);
  if (!site) {
    throw new ServiceError('domain_not_verified', {
      detail: `Verify ${domain} first: POST /pixel-install, then POST /sites/{site_id}/verify`,
    });
  }
  return site;
}

export const siteOperations = [installPixel, listSites, verifySite];
