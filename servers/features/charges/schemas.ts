import { z } from 'zod';
import { BrandContact, BrandReturns } from './brand-registry.ts';

export const ChargeLookupInput = z.strictObject({
  charge: z
    .string()
    .trim()
    .min(1, 'must not be empty')
    .max(200, 'must be at most 200 characters')
    .describe(
      'The text of one card statement line, as the bank shows it, e.g. "SQ *BLUE BOTTLE COFFEE Oakland CA".',
    ),
});
export type ChargeLookupInput = z.infer<typeof ChargeLookupInput>;

export const ConfidenceLevel = z
  .enum(['very_high', 'high', 'medium', 'low'])
  .describe('very_high >= 0.95, high >= 0.85, medium >= 0.7, low below.');
export type ConfidenceLevel = z.infer<typeof ConfidenceLevel>;

export const MatchedOn = z
  .enum(['descriptor', 'name', 'alias', 'domain', 'fuzzy', 'processor'])
  .describe(
    'What matched: a known statement descriptor of the brand, its name, another alias (a billing entity the ' +
      'registry records with its source among them), a domain in the line, a near spelling (fuzzy), or the ' +
      'payment processor that is itself the merchant of record. A name found among other words of the line, ' +
      "or glued to them, is at most medium unless the rest is a legal form, country or the brand's own billing entity.",
  );

export const Processor = z
  .object({
    name: z.string().describe('Processor name, or the short code as printed when it is not a known one.'),
    domain: z.string().nullable().describe('Null for a short code before "*" that is not a known processor.'),
    kind: z
      .enum([
        'facilitator',
        'marketplace',
        'merchant_of_record',
        'app_store',
        'payment_link',
        'wallet',
        'bnpl',
        'unrecognised',
      ])
      .describe('What the processor is; unrecognised: a short code before "*" read as a facilitator.'),
    merchant_of_record: z
      .boolean()
      .describe('True when the processor itself sold the item and handles refunds (app stores, Paddle).'),
  })
  .describe(
    'Payment facilitator, marketplace or store whose prefix preceded the merchant (Square "SQ *", Toast "TST*", ' +
      'PayPal "PAYPAL *", "GOOGLE *", "APPLE.COM/BILL").',
  );
export type Processor = z.infer<typeof Processor>;

export const Merchant = z
  .object({
    name: z
      .string()
      .describe(
        'The merchant as read from the line, after the processor prefix (the developer in "GOOGLE *Duolingo"); ' +
          'the processor name when the line names no one else.',
      ),
    city: z.string().nullable().describe('City field, when the line ends with a state or country code.'),
    region: z.string().nullable().describe('US state or Canadian province code.'),
    country: z.string().nullable().describe('ISO 3166-1 alpha-2 country.'),
    phone: z.string().nullable().describe('Phone number printed in the line, E.164 when valid.'),
    website_hint: z
      .string()
      .nullable()
      .describe('Registrable domain printed in the line (NETFLIX.COM, HELP.UBER.COM -> uber.com).'),
  })
  .describe('What the line itself says about the merchant, whether or not a brand matched.');
export type Merchant = z.infer<typeof Merchant>;

export const MatchSource = z
  .enum(['registry', 'brand_declared', 'live_resolution', 'line'])
  .describe(
    "Where the match comes from: the service's brand registry; a descriptor the brand itself declared for its " +
      'verified domain; live resolution, a website found for the merchant whose home page names it (a guess: ' +
      'never above medium); or the line itself, a website printed on it that the registry does not hold and whose ' +
      'name agrees with the merchant name on the line (medium; its brand is the domain).',
  );

export const CardChargeMatch = z.object({
  brand: z.string().describe('Brand name.'),
  domain: z
    .string()
    .describe(
      "The brand's registrable domain; pass it as brand_domain to start_return_request. For a brand with " +
        "sites for several countries, the site the line printed, else the one for the line's country when the " +
        'line names a country and the brand has a site there, else its main site.',
    ),
  alternate_domains: z
    .array(z.string())
    .optional()
    .describe(
      "The brand's other sites (its main site and its sites for other countries, e.g. brand.co.uk, brand.it), " +
        'from its official websites on Wikidata; present only for a brand with sites for several countries.',
    ),
  category: z.string(),
  confidence: z.number().min(0).max(1),
  level: ConfidenceLevel,
  matched_on: MatchedOn,
  matched_text: z.string().describe('The alias or descriptor form that matched.'),
  processor: Processor.optional(),
  contact: BrandContact.describe('Public support contacts of the brand, where known.'),
  returns: BrandReturns.describe('Public returns information of the brand, where known.'),
  source: MatchSource.optional(),
});
export type CardChargeMatch = z.infer<typeof CardChargeMatch>;

export const ResolutionEvidence = z.object({
  url: z.string().describe('The home page read.'),
  signals: z
    .array(z.enum(['title', 'site_name', 'organization']))
    .describe(
      'Which of its claims named the merchant: <title>, og:site_name or the JSON-LD WebSite name, a JSON-LD ' +
        'Organization or LocalBusiness name.',
    ),
  city: z
    .enum(['agrees', 'absent', 'unknown'])
    .describe("agrees: the line's city is on the page; absent: it is not; unknown: the line has no city."),
  source: z
    .enum(['website_hint', 'search', 'name'])
    .describe('How the domain was found: printed on the line, a web search, or made from the name.'),
});

export const Resolution = z
  .discriminatedUnion('status', [
    z.object({
      status: z.literal('resolved'),
      domain: z.string(),
      name: z.string().describe('The name the site gives itself.'),
      category: z
        .string()
        .describe('From its JSON-LD type where it gives one (restaurant, coffee...), else other.'),
      confidence: z.number().min(0).max(0.84),
      level: ConfidenceLevel,
      checked_at: z.iso.datetime(),
      evidence: ResolutionEvidence,
    }),
    z.object({
      status: z.literal('not_found'),
      checked_at: z.iso.datetime(),
      candidates_checked: z
        .number()
        .int()
        .describe('Domains checked; none had a home page naming the merchant.'),
    }),
    z.object({
      status: z.literal('pending'),
      retry_after_s: z.number().int().describe('Ask again after about this many seconds.'),
    }),
    z.object({ status: z.literal('off') }),
  ])
  .describe(
    'Live resolution of a merchant the registry does not name confidently: resolved (its website was found and ' +
      'is among the matches, at most medium), not_found (no candidate site names it; kept for a while), pending ' +
      '(still being checked: ask again), off (not done on this deployment).',
  );
export type Resolution = z.infer<typeof Resolution>;

export const ChargeLookupResult = z.object({
  charge: z.string().describe('The statement line as received.'),
  normalized: z.string().describe('The merchant part after removing issuer noise, references and location.'),
  processor: Processor.nullable().describe('The payment facilitator recognised in the line, if any.'),
  merchant: Merchant,
  matches: z
    .array(CardChargeMatch)
    .describe('Candidate brands, best first; empty when no known brand matches (merchant still says who).'),
  resolution: Resolution.optional().describe(
    'Present when no match is high or very_high: what live resolution found for the merchant.',
  ),
});
export type ChargeLookupResult = z.infer<typeof ChargeLookupResult>;
