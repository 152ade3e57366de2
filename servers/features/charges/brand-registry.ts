/**
 * The brand registry: real brands seen on US and European card statements, shipped as data in
 * `brands.json` (its header records the sources). Loaded and validated once at start.
 */
import { readFileSync } from 'node:fs';
import { isValidPhoneNumber } from 'libphonenumber-js/min';
import { getDomain } from 'tldts';
import { z } from 'zod';

const httpsUrl = z.url({ protocol: /^https$/, error: 'must be an https URL' });

/** Public support contacts of a brand, as returned by the API. */
export const BrandContact = z.strictObject({
  support_url: httpsUrl.optional(),
  email: z.email().optional(),
  phone: z.string().optional().describe('E.164, e.g. +18882804331.'),
});
export type BrandContact = z.infer<typeof BrandContact>;

/** The same, as the registry file must hold it: phone numbers checked against numbering plans. */
const BrandContactData = BrandContact.extend({
  phone: z
    .string()
    .refine((v) => /^\+[1-9]\d{6,14}$/.test(v) && isValidPhoneNumber(v), 'must be an E.164 phone number')
    .optional(),
});

export const BrandReturns = z.strictObject({
  policy_url: httpsUrl.optional(),
  portal_url: httpsUrl.optional(),
  window_days: z.number().int().positive().max(3650).optional(),
});
export type BrandReturns = z.infer<typeof BrandReturns>;

export const BrandCategory = z.enum([
  'retail',
  'grocery',
  'pharmacy',
  'fashion',
  'electronics',
  'home',
  'marketplace',
  'streaming',
  'music',
  'news',
  'gaming',
  'fitness',
  'software',
  'cloud',
  'ai',
  'travel',
  'airline',
  'hotel',
  'car_rental',
  'rail',
  'rideshare',
  'food_delivery',
  'restaurant',
  'coffee',
  'telecom',
  'utilities',
  'education',
  'dating',
  'finance',
  'other',
]);
export type BrandCategory = z.infer<typeof BrandCategory>;

export const Brand = z.strictObject({
  name: z.string().min(1),
  domain: z
    .string()
    .refine((d) => getDomain(d, { allowPrivateDomains: true }) === d, 'must be a registrable domain'),
  category: BrandCategory,
  regions: z.array(z.enum(['US', 'EU', 'UK'])).min(1),
  /** Statement descriptor forms the brand is known to use, upper case, without store numbers or cities. */
  descriptors: z.array(z.string().min(1)),
  aliases: z.array(z.string().min(1)).optional(),
  contact: BrandContactData,
  returns: BrandReturns,
});
export type Brand = z.infer<typeof Brand>;

export const BrandRegistryFile = z.strictObject({
  about: z.string(),
  updated: z.iso.date(),
  sources: z.array(z.string()).min(1),
  notes: z.string().optional(),
  brands: z.array(Brand),
});

export const defaultBrandFile = new URL('./brands.json', import.meta.url);

export function loadBrands(file: URL | string = defaultBrandFile): Brand[] {
  const parsed = BrandRegistryFile.safeParse(JSON.parse(readFileSync(file, 'utf8')));
  if (!parsed.success) throw new Error(`brand registry ${String(file)}: ${z.prettifyError(parsed.error)}`);
  const seen = new Set<string>();
  for (const brand of parsed.data.brands) {
    if (seen.has(brand.domain)) throw new Error(`brand registry: duplicate domain ${brand.domain}`);
    seen.add(brand.domain);
  }
  return parsed.data.brands;
}
