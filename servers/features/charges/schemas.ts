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
    'What matched: a known statement descriptor of the brand, its name, another alias, a domain in the line, ' +
      'a near spelling (fuzzy), or the payment processor that is itself the merchant of record.',
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

export const CardChargeMatch = z.object({
  brand: z.string().describe('Brand name.'),
  domain: z
    .string()
    .describe("The brand's registrable domain; pass it as brand_domain to start_return_request."),
  category: z.string(),
  confidence: z.number().min(0).max(1),
  level: ConfidenceLevel,
  matched_on: MatchedOn,
  matched_text: z.string().describe('The alias or descriptor form that matched.'),
  processor: Processor.optional(),
  contact: BrandContact.describe('Public support contacts of the brand, where known.'),
  returns: BrandReturns.describe('Public returns information of the brand, where known.'),
});
export type CardChargeMatch = z.infer<typeof CardChargeMatch>;

export const ChargeLookupResult = z.object({
  charge: z.string().describe('The statement line as received.'),
  normalized: z.string().describe('The merchant part after removing issuer noise, references and location.'),
  processor: Processor.nullable().describe('The payment facilitator recognised in the line, if any.'),
  merchant: Merchant,
  matches: z
    .array(CardChargeMatch)
    .describe('Candidate brands, best first; empty when no known brand matches (merchant still says who).'),
});
export type ChargeLookupResult = z.infer<typeof ChargeLookupResult>;
