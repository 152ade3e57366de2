/**
 * What the paid SKUs' inputs have in common (SPEC "SKUs and their inputs"). Every input is a scalar,
 * because a SKU is also sold at GET `{site_url}/api/public/x402/<sku>` with query parameters: numbers
 * and booleans are read from query text exactly as a JSON body would hold them (`queryNumber`,
 * `queryBoolean`). Everything a schema can check is checked here, so a bad input is a 400 naming the
 * field before any 402 or 503 - even for a SKU that cannot run here.
 */
import { z } from 'zod';
import { queryNumber } from '../../pagination.ts';
import { addressField, normalizeDomain } from '../../public-address.ts';

/**
 * A domain (a URL gives its host), held to the public-address rule for every SKU (`parseInput`,
 * `servers/public-address.ts`).
 */
export const SkuDomain = addressField(
  z
    .string()
    .min(1)
    .max(300)
    .describe('Domain name such as example.com (a URL is accepted and its host used).'),
  'domain',
);

/** An absolute http(s) URL on a public host (the public-address rule). */
export const PageUrl = addressField(
  z.url({ protocol: /^https?$/, error: 'must be an absolute http(s) URL' }).max(2048),
  'url',
);

/** SPEC Limits: "blurb length: at most 280 characters" (featured-bid, spotlight). */
export const Blurb = z.string().min(1).max(280);

/** USDC has 6 decimals: an amount with more cannot be paid exactly. */
export const USDC_DECIMALS = 6;

/**
 * A USDC amount the caller sets, at least `min` (the SKU's catalog price, its floor) and at most
 * `max`: our limit, which keeps every amount a SKU computes exact in atomic units (below 2^53).
 */
export const usdcInput = (min: number, max: number) =>
  queryNumber(
    z
      .number()
      .min(min, `must be at least ${usdcText(min)}`)
      .max(max, `must be at most ${usdcText(max)}`)
      .multipleOf(10 ** -USDC_DECIMALS, `must have at most ${USDC_DECIMALS} decimal places (USDC)`),
  );

/** A whole number of days, 1 to `max`. */
export const daysInput = (max: number) =>
  z
    .number()
    .int('must be a whole number of days')
    .min(1, 'must be at least 1')
    .max(max, `must be at most ${max}`);

/** An amount in USDC rounded to USDC's precision, so `1.1 x 3` is 3.3 and not 3.3000000000000003. */
export const usdc = (amount: number): number =>
  Math.round(amount * 10 ** USDC_DECIMALS) / 10 ** USDC_DECIMALS;

/** `650.00`: prices and floors as the catalog's prose writes them. */
export const usdcText = (amount: number): string =>
  amount.toFixed(Math.max(2, (String(amount).split('.')[1] ?? '').length));

/**
 * Whether `url` is on `domain` (its host is the domain or a subdomain of it): the page a paid
 * placement shows must belong to the site that bought it (issue 12).
 */
export function isOnDomain(url: string, domain: string): boolean {
  const normalized = normalizeDomain(domain, { allowLocal: true });
  if (!normalized.ok) return true; // the domain field reports its own problem
  let host: string;
  try {
    host = new URL(url).host.toLowerCase().replace(/\.$/, '');
  } catch {
    return true; // the url field reports its own problem
  }
  const name = normalized.domain;
  return host === name || host.endsWith(`.${name}`);
}

/** Adds the issue "url must be on the domain" to an input holding both. */
export function urlOnDomain(input: { domain: string; url?: string | undefined }, ctx: z.RefinementCtx): void {
  if (input.url !== undefined && !isOnDomain(input.url, input.domain)) {
    ctx.addIssue({ code: 'custom', path: ['url'], message: 'must be a page of the domain (or a subdomain)' });
  }
}
