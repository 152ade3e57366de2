import { z } from 'zod';
import { addressField } from '../../public-address.ts';
import { Email, IssuedServiceKey, Password } from '../accounts/schemas.ts';

export const DomainInput = addressField(
  z
    .string()
    .min(1)
    .max(300)
    .describe("The site's domain, e.g. example.com (a URL is accepted; its host is used)."),
  'domain',
);

export const InstallPixelInput = z.strictObject({
  domain: DomainInput,
  email: Email.optional().describe(
    'Without an x-service-key header: the email of the account to create for this site (its key is returned once).',
  ),
  password: Password.optional(),
  share_network: z
    .boolean()
    .optional()
    .describe('Opt in to naming this site in network-wide data (GET /ai-search-data). Default false.'),
});

export const VerificationInstructions = z.object({
  token: z.string().describe('The ownership token of this site registration.'),
  http: z.object({
    url: z
      .string()
      .describe('Serve the token as plain text at this URL (either the token alone or name=token).'),
    content: z.string().describe('Exact content to serve.'),
  }),
  dns: z.object({
    type: z.literal('TXT'),
    name: z.string().describe('Record name: the domain itself.'),
    value: z.string().describe('Record value.'),
  }),
  verify_url: z.string().describe('POST here (with your x-service-key) once either proof is in place.'),
});

export const SiteInfo = z.object({
  site_id: z.uuid().describe('Public id of the site; it appears in the beacon snippet.'),
  domain: z.string(),
  verified: z.boolean(),
  verified_at: z.iso.datetime().nullable(),
  verification_method: z.enum(['http', 'dns']).nullable(),
  share_network: z.boolean(),
  created_at: z.iso.datetime(),
});

export const InstallPixelResult = SiteInfo.extend({
  account_id: z.uuid(),
  created: z.boolean().describe('False when this account had already registered the domain.'),
  key: IssuedServiceKey.nullable().describe(
    "The new account's service key (only when this call created the account).",
  ),
  verification: VerificationInstructions,
  collect: z.object({
    beacon_url: z
      .string()
      .describe('GET, from browsers: site, url, ref query parameters; 204 (img=1: 1x1 GIF).'),
    events_url: z
      .string()
      .describe(
        'POST, from your servers, with x-service-key: { site_id, events: [...] }, at most 1,000 events.',
      ),
  }),
  snippets: z.object({
    script: z
      .string()
      .describe('Paste before </body>: sends one beacon per page view, never blocks the page.'),
    noscript: z.string().describe('Image fallback for visitors without JavaScript.'),
    express: z
      .string()
      .describe('Node/Express middleware that ships server-side hits (the only way to see AI crawlers).'),
    nginx: z.string().describe('nginx log_format plus a cron recipe that ships the access log in batches.'),
  }),
});

export const ListSitesResult = z.object({ sites: z.array(SiteInfo) });

export const VerifySiteInput = z.strictObject({ site_id: z.uuid().describe('Id of the site to verify.') });

export const VerifySiteResult = SiteInfo.extend({
  checks: z
    .array(
      z.object({
        method: z.enum(['http', 'dns']),
        passed: z.boolean(),
        detail: z.string().describe('What was seen.'),
      }),
    )
    .describe('The proofs tried in this call, file first.'),
});
