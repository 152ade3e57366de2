/**
 * Payment facilitators whose prefix precedes the real merchant on a statement line
 * (e.g. `SQ *BLUE BOTTLE`, `TST* JOES DINER`, `PAYPAL *NETFLIX`). The merchant after the prefix is
 * what gets matched; the facilitator is reported separately as the processor.
 *
 * `merchantOfRecord`: the facilitator itself sells and refunds (app stores, Paddle, FastSpring). When
 * the merchant after such a prefix is unknown, or there is none (`APPLE.COM/BILL`), the facilitator
 * is the party to contact and is returned as the match.
 *
 * Not processors, although they look like one: `CKE*` (CKE Restaurants: Carl's Jr., Hardee's),
 * `UBER *`, `LYFT *`, `DD *` (DoorDash) - brands using Stripe-style `PREFIX* SUFFIX` descriptors.
 */
export interface Processor {
  id: string;
  name: string;
  domain: string;
  merchantOfRecord: boolean;
  /** Matches at the start of the upper-cased, noise-stripped line; the merchant follows. */
  prefix: RegExp;
}

export const processors: readonly Processor[] = [
  { id: 'square', name: 'Square', domain: 'squareup.com', merchantOfRecord: false, prefix: /^SQ ?\* ?/ },
  { id: 'toast', name: 'Toast', domain: 'toasttab.com', merchantOfRecord: false, prefix: /^TST ?\* ?/ },
  {
    id: 'paypal',
    name: 'PayPal',
    domain: 'paypal.com',
    merchantOfRecord: false,
    prefix: /^(?:PAYPAL ?\*|PP ?\*) ?/,
  },
  {
    id: 'shopify',
    name: 'Shopify',
    domain: 'shopify.com',
    merchantOfRecord: false,
    prefix: /^(?:SP ?\* ?|SP (?=[A-Z0-9]))/,
  },
  {
    id: 'google',
    name: 'Google Play',
    domain: 'google.com',
    merchantOfRecord: true,
    prefix: /^GOOGLE ?\* ?/,
  },
  {
    id: 'apple',
    name: 'Apple',
    domain: 'apple.com',
    merchantOfRecord: true,
    prefix: /^(?:APPLE\.COM\/BILL|APPLE\.COM\/US|ITUNES\.COM\/BILL)\b ?/,
  },
  {
    id: 'amazon_marketplace',
    name: 'Amazon Marketplace',
    domain: 'amazon.com',
    merchantOfRecord: true,
    prefix: /^AMZN MKTP (?:US|UK|DE|FR|ES|IT|NL|CA)\b ?\*? ?/,
  },
  {
    id: 'paddle',
    name: 'Paddle',
    domain: 'paddle.com',
    merchantOfRecord: true,
    prefix: /^PADDLE(?:\.NET|\.COM)? ?\* ?/,
  },
  {
    id: 'fastspring',
    name: 'FastSpring',
    domain: 'fastspring.com',
    merchantOfRecord: true,
    prefix: /^FS ?\* ?/,
  },
  {
    id: '2checkout',
    name: '2Checkout (Verifone)',
    domain: '2checkout.com',
    merchantOfRecord: true,
    prefix: /^(?:2CO|2CHECKOUT)(?:\.COM)? ?\* ?/,
  },
  { id: 'paystand', name: 'Paystand', domain: 'paystand.com', merchantOfRecord: false, prefix: /^PST ?\* ?/ },
  {
    id: 'zettle',
    name: 'Zettle by PayPal',
    domain: 'zettle.com',
    merchantOfRecord: false,
    prefix: /^(?:IZ|ZETTLE_?) ?\* ?/,
  },
  { id: 'sumup', name: 'SumUp', domain: 'sumup.com', merchantOfRecord: false, prefix: /^SUMUP ?\* ?/ },
  {
    id: 'intuit',
    name: 'QuickBooks Payments',
    domain: 'intuit.com',
    merchantOfRecord: false,
    prefix: /^IN ?\* ?/,
  },
];

export function detectProcessor(line: string): { processor: Processor; prefix: string; rest: string } | null {
  for (const processor of processors) {
    const m = processor.prefix.exec(line);
    if (m) return { processor, prefix: m[0], rest: line.slice(m[0].length).trim() };
  }
  return null;
}
