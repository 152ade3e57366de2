/**
 * Directory payloads: listings, agents, the agent hub storefront and the index of services. The
 * specification names the endpoints only; every field here is the design, and the OpenAPI document
 * and the MCP tool schemas are generated from these schemas.
 */

import { isValidPhoneNumber } from 'libphonenumber-js/min';
import { z } from 'zod';
import { Cursor, Limit, NextCursor, queryNumber } from '../../pagination.ts';
import { addressField } from '../../public-address.ts';
import { SponsoredEntry } from '../catalog/boost/campaigns.ts';
import { StatementDescriptors } from '../charges/declaration-schemas.ts';
import { DomainInput } from '../sites/schemas.ts';

const e164 = /^\+[1-9]\d{6,14}$/;

export const Contact = z
  .strictObject({
    email: z.email('must be an email address').max(254).optional(),
    url: addressField(
      z.url({ protocol: /^https?$/, error: 'must be an absolute http(s) URL' }).max(2048),
      'url',
    ).optional(),
    phone: z
      .string()
      .refine(
        (v) => e164.test(v) && isValidPhoneNumber(v),
        'must be an E.164 phone number such as +14155550123',
      )
      .optional()
      .describe('E.164, e.g. +14155550123.'),
  })
  .refine((c) => c.email !== undefined || c.url !== undefined || c.phone !== undefined, {
    message: 'needs at least one of email, url, phone',
  });
export type Contact = z.infer<typeof Contact>;

export const ContactOut = z.object({
  email: z.string().optional(),
  url: z.string().optional(),
  phone: z.string().optional().describe('E.164.'),
});

// --- Listings ------------------------------------------------------------------------------------

export const ListingCategory = z
  .enum([
    'ai_tools',
    'developer_tools',
    'ecommerce',
    'marketing',
    'productivity',
    'finance',
    'media',
    'education',
    'health',
    'travel',
    'local_services',
    'other',
  ])
  .describe(
    'ai_tools: AI products and agents; developer_tools: APIs, SDKs, infrastructure; ecommerce: shops and ' +
      'marketplaces; marketing: marketing, SEO and analytics; productivity: work and collaboration software; ' +
      'finance: payments, banking, crypto; media: news, publishing, entertainment; education: courses and ' +
      'learning; health: health and wellness; travel: travel and hospitality; local_services: businesses ' +
      'serving a place; other: anything else.',
  );
export type ListingCategory = z.infer<typeof ListingCategory>;
export const listingCategories = ListingCategory.options;

const Tag = z
  .string()
  .trim()
  .toLowerCase()
  .min(1)
  .max(32, 'must be at most 32 characters')
  .regex(/^[\p{L}\p{N}][\p{L}\p{N} ._+-]*$/u, 'must be letters, digits, spaces and . _ + -');

export const SubmitListingInput = z.strictObject({
  domain: DomainInput.describe(
    'The domain to list, verified by your account (POST /pixel-install, then POST /sites/{site_id}/verify). ' +
      'An unverified domain is accepted and stays pending until it is verified.',
  ),
  name: z
    .string()
    .trim()
    .min(1, 'must not be blank')
    .max(100)
    .describe('Display name of the product or business.'),
  description: z
    .string()
    .trim()
    .min(1, 'must not be blank')
    .max(500, 'must be at most 500 characters')
    .describe('What it is and who it is for, at most 500 characters.'),
  category: ListingCategory,
  url: addressField(
    z.url({ protocol: /^https?$/, error: 'must be an absolute http(s) URL' }).max(2048),
    'url',
  ).describe('Landing page; its host must be the domain or one of its subdomains.'),
  tags: z
    .array(Tag)
    .max(10, 'must hold at most 10 tags')
    .optional()
    .describe('Up to 10 search tags (stored lowercase), e.g. ["crm", "email"].'),
  contact: Contact.describe('Published contact for the listing: at least one of email, url, phone.'),
});
export type SubmitListingInput = z.infer<typeof SubmitListingInput>;

export const ListingStatus = z
  .enum(['listed', 'pending'])
  .describe('listed: public in GET /listings; pending: waits until the account verifies the domain.');

export const Listing = z.object({
  listing_id: z.uuid(),
  domain: z.string(),
  name: z.string(),
  description: z.string(),
  category: ListingCategory,
  url: z.string(),
  tags: z.array(z.string()),
  contact: ContactOut.describe('Published contact of the listing.'),
  score: z
    .number()
    .nullable()
    .describe('Latest Signal Strength score of the domain (0-100); null when it has not been scanned.'),
  created_at: z.iso.datetime().describe('When the listing was first submitted.'),
  updated_at: z.iso.datetime(),
});

export const SubmitListingResult = Listing.extend({
  status: ListingStatus,
  created: z
    .boolean()
    .describe('False when this call updated the listing the account already had for the domain.'),
});

export const SearchListingsInput = z.strictObject({
  q: z
    .string()
    .trim()
    .min(1)
    .max(100)
    .optional()
    .describe('Case-insensitive text found in the name, description, domain or tags.'),
  category: ListingCategory.optional().describe('Only listings of this category.'),
  min_score: queryNumber(z.number().min(0, 'must be at least 0').max(100, 'must be at most 100'))
    .optional()
    .describe(
      'Only domains whose latest Signal Strength score is at least this (0-100); unscored domains are left out.',
    ),
  cursor: Cursor,
  limit: Limit,
});
export type SearchListingsInput = z.infer<typeof SearchListingsInput>;

export const SearchListingsResult = z.object({
  listings: z
    .array(Listing)
    .describe('Newest first. A page may be shorter than limit when min_score filters.'),
  next_cursor: NextCursor,
});

// --- Agents ------------------------------------------------------------------------------------

export const AgentProtocol = z
  .enum(['webhook', 'email', 'mcp', 'a2a'])
  .describe(
    'webhook: return requests are POSTed to the endpoint, signed (Standard Webhooks); email: they are mailed ' +
      'to the return contact email; mcp: the endpoint is an MCP server whose tool for returns, refunds or support ' +
      'is called with each request; a2a: the endpoint is an A2A agent (its base URL or its card URL) that is sent ' +
      'each request as a message.',
  );
export type AgentProtocol = z.infer<typeof AgentProtocol>;

export const ReturnPolicy = z
  .strictObject({
    window_days: z
      .number()
      .int('must be a whole number')
      .min(0)
      .max(3650)
      .optional()
      .describe('Days after purchase or delivery within which returns are accepted.'),
    conditions: z.string().trim().min(1).max(2000).optional().describe('Conditions, in plain words.'),
    url: addressField(
      z.url({ protocol: /^https?$/, error: 'must be an absolute http(s) URL' }).max(2048),
      'url',
    )
      .optional()
      .describe('Page with the full policy.'),
  })
  .describe('The return policy published with the agent.');

export const ReturnPolicyOut = z.object({
  window_days: z.number().int().optional(),
  conditions: z.string().optional(),
  url: z.string().optional(),
});

/** `whsec_` + base64 of 24 to 64 random bytes (Standard Webhooks secret format). */
const webhookSecretPattern = /^whsec_[A-Za-z0-9+/]+={0,2}$/;
export const WebhookSecret = z
  .string()
  .max(200)
  .refine((s) => {
    if (!webhookSecretPattern.test(s)) return false;
    const bytes = Buffer.from(s.slice('whsec_'.length), 'base64').length;
    return bytes >= 24 && bytes <= 64;
  }, 'must be whsec_ followed by base64 of 24 to 64 random bytes')
  .describe(
    'Secret for the Standard Webhooks signatures on deliveries (whsec_ + base64 of 24-64 random bytes). Omit it ' +
      'to keep the current one, or to have one generated on first registration (returned once).',
  );

export const RegisterBrandAgentInput = z.strictObject({
  domain: DomainInput.describe(
    'Your verified, registrable brand domain (shop.com, not www.shop.com): return requests name it as brand_domain.',
  ),
  name: z
    .string()
    .trim()
    .min(1)
    .max(100)
    .optional()
    .describe('Brand name shown with the agent (default: the brand registry name, else the domain).'),
  endpoint: z
    .url({ protocol: /^https?$/, error: 'must be an absolute https URL' })
    .max(2048)
    .describe(
      "The brand agent's endpoint: https (http and private addresses only on self-hosted test setups). With " +
        'protocol webhook, return requests are POSTed here.',
    ),
  protocols: z
    .array(AgentProtocol)
    .min(1, 'must name at least one protocol')
    .max(4)
    .refine((p) => new Set(p).size === p.length, 'must not repeat a protocol')
    .describe('How the agent is reached; webhook and email decide how return requests are delivered.'),
  webhook_secret: WebhookSecret.optional(),
  support_contact: Contact.describe('Published customer support contact: at least one of email, url, phone.'),
  return_contact: Contact.optional().describe(
    'Where return requests go when the agent takes email (its email). Never published. Default: support_contact.',
  ),
  return_policy: ReturnPolicy.optional(),
  statement_descriptors: StatementDescriptors.optional().describe(
    'The statement descriptors your charges carry (as in POST /sites/{site_id}/descriptors, which it replaces): ' +
      'card charge lookups then name your brand for them at very_high, shown as brand_declared. Omit to keep ' +
      'the declared ones.',
  ),
});
export type RegisterBrandAgentInput = z.infer<typeof RegisterBrandAgentInput>;

export const AgentKind = z
  .enum(['brand', 'soul'])
  .describe(
    'brand: the agent a brand registered for its verified domain (POST /brand-agent); soul: a registered agent ' +
      'identity from the soul registry (GET /soul).',
  );

export const Agent = z.object({
  kind: AgentKind,
  agent_id: z
    .string()
    .describe("A brand agent's UUID, or a soul's agent_id (its key's RFC 9278 thumbprint URI)."),
  handle: z.string().nullable().describe("A soul's handle; null for brand agents."),
  name: z.string(),
  domain: z.string().nullable().describe('The verified domain a brand agent speaks for.'),
  endpoint: z.string(),
  protocols: z.array(AgentProtocol),
  support_contact: ContactOut.describe('Published support contact.'),
  return_policy: ReturnPolicyOut.nullable(),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
});

export const RegisterBrandAgentResult = Agent.extend({
  created: z.boolean().describe('False when this call updated the agent already registered for the domain.'),
  statement_descriptors: z
    .array(z.string())
    .describe('The statement descriptors declared for the domain after this call.'),
  webhook_secret: z
    .string()
    .nullable()
    .describe(
      'The generated webhook secret, shown only in this response: store it to verify deliveries. Null when you ' +
        'sent one, or one already existed.',
    ),
  delivery: z.object({
    channel: z
      .enum(['webhook', 'email', 'a2a', 'mcp'])
      .nullable()
      .describe(
        "How return requests for the domain are delivered from now on: the brand's best channel that delivers " +
          '(this agent as registered: webhook, a2a, mcp, email; else its own A2A agent or email found on its site); ' +
          'null when none does.',
      ),
    queued_requests: z
      .number()
      .int()
      .describe('Requests that waited for a channel (or had failed) and are now queued for delivery.'),
  }),
});

export const ListAgentsInput = z.strictObject({
  kind: AgentKind.optional().describe('Only agents of this kind.'),
  cursor: Cursor,
  limit: Limit,
});

export const ListAgentsResult = z.object({
  agents: z.array(Agent).describe('Newest first.'),
  sponsored: z
    .array(SponsoredEntry)
    .describe(
      'Boosted URLs of active campaigns (boost SKU), marked sponsored and kept apart from the agents.',
    ),
  next_cursor: NextCursor,
});

// --- Agent hub -----------------------------------------------------------------------------------

export const Placement = z
  .object({
    domain: z.string(),
    url: z.string().nullable(),
    blurb: z.string().nullable().describe('At most 280 characters.'),
    ends_at: z.iso.datetime().describe('When the paid placement ends.'),
  })
  .describe('A paid placement (sold through the x402 catalog).');

export const AgentHubInput = z.strictObject({});

export const AgentHubResult = z.object({
  featured: z
    .array(Placement)
    .describe(
      'The Featured Brand slot held by the highest daily bid (featured-bid SKU); empty while it is free.',
    ),
  spotlight: z
    .array(Placement)
    .describe('30-day spotlight placements pinned on the storefront (spotlight SKU), oldest first.'),
  top_listings: z
    .array(Listing)
    .describe('Listed domains by Signal Strength score (unscored last), then newest first; at most 12.'),
  categories: z
    .array(z.object({ category: ListingCategory, listings: z.number().int() }))
    .describe('Every category with its number of listed listings.'),
  total_listings: z.number().int().describe('Number of listed listings.'),
  agents: z.object({ brand: z.number().int().describe('Registered brand agents.') }),
  boosted: z
    .array(SponsoredEntry)
    .describe('Boosted URLs of active campaigns (boost SKU), marked sponsored, newest first (at most 5).'),
  updated: z.iso.datetime().describe('When this storefront was computed.'),
});
