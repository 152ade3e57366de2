/**
 * Parties whose name precedes the real merchant on a statement line: payment facilitators, marketplaces
 * and merchants of record, app and game stores, payment links, wallets and buy-now-pay-later lenders.
 *
 * Card networks let a payment facilitator put a short code of its own, `*`, then the sub-merchant's name
 * in the 22-25 character name field of ISO 8583 DE43 (Visa Merchant Data Standards; Mastercard
 * Transaction Processing Rules 5.x), so `SQ *BLUE BOTTLE` is Square processing for Blue Bottle. The
 * table below is data: each processor with its known prefixes and where each was seen. A short code
 * before `*` that is not in the table is read the same way (`detectProcessor` reports it as an
 * unrecognised facilitator); the matcher undoes that when the code is itself a brand's name (`UBER *TRIP`,
 * `CKE*CARLS JR`: CKE Restaurants, not a processor).
 *
 * `merchantOfRecord`: the processor itself sold and refunds (app stores, Paddle, FastSpring, marketplaces).
 * When the merchant after such a prefix is unknown, or absent (`APPLE.COM/BILL`), it is the party to
 * contact and is returned as the match; when a developer or seller is named (`GOOGLE *Duolingo`), that
 * name is the merchant and the store is the processor.
 */
export type ProcessorKind =
  | 'facilitator'
  | 'marketplace'
  | 'merchant_of_record'
  | 'app_store'
  | 'payment_link'
  | 'wallet'
  | 'bnpl'
  | 'unrecognised';

export interface Processor {
  id: string;
  name: string;
  /** Null for a short code that is not in the table. */
  domain: string | null;
  kind: ProcessorKind;
  merchantOfRecord: boolean;
  /**
   * Upper-case literal prefixes. `*` matches a star with optional spaces around it; a trailing space
   * requires a space; a trailing `+` means the merchant follows glued (`TOCK ATFRASCA`). Otherwise a
   * prefix ending in a letter or digit must be followed by a non-alphanumeric.
   */
  prefixes: readonly string[];
  /** Where the prefix forms were seen: a public page, or a real line in the long-tail fixture. */
  source: string;
}

const longtail = 'real lines in test/fixtures/descriptors-longtail.json';

export const processors: readonly Processor[] = [
  // Point-of-sale and online facilitators (the merchant follows).
  {
    id: 'square',
    name: 'Square',
    domain: 'squareup.com',
    kind: 'facilitator',
    merchantOfRecord: false,
    prefixes: ['SQ *', 'SQU*', 'GOSQ.COM*'],
    source: `https://didibuyit.com/descriptors/sq; ${longtail}`,
  },
  {
    id: 'toast',
    name: 'Toast',
    domain: 'toasttab.com',
    kind: 'facilitator',
    merchantOfRecord: false,
    prefixes: ['TST*'],
    source: `https://charges.renlab.ai/prefix/tst; ${longtail}`,
  },
  {
    id: 'paypal',
    name: 'PayPal',
    domain: 'paypal.com',
    kind: 'facilitator',
    merchantOfRecord: false,
    prefixes: ['PAYPAL *', 'PP*', 'PP *'],
    source: longtail,
  },
  {
    id: 'zettle',
    name: 'Zettle by PayPal',
    domain: 'zettle.com',
    kind: 'facilitator',
    merchantOfRecord: false,
    prefixes: ['IZ *', 'ZETTLE_*', 'ZETTLE *', 'IZETTLE *', 'SETL*'],
    source: 'https://www.londonbusinessmag.co.uk/what-is-zettle-on-my-bank-statement/',
  },
  {
    id: 'sumup',
    name: 'SumUp',
    domain: 'sumup.com',
    kind: 'facilitator',
    merchantOfRecord: false,
    prefixes: ['SUMUP *', 'SUM UP *'],
    source: 'shared/notes/domain.md (SumUp descriptor convention)',
  },
  {
    id: 'shopify',
    name: 'Shopify',
    domain: 'shopify.com',
    kind: 'facilitator',
    merchantOfRecord: false,
    prefixes: ['SP *', 'SP '],
    source: `shared/notes/domain.md (SP, configurable); ${longtail}`,
  },
  {
    id: 'stripe',
    name: 'Stripe',
    domain: 'stripe.com',
    kind: 'facilitator',
    merchantOfRecord: false,
    prefixes: ['STRIPE *', 'STR*', 'LINK.COM*'],
    source: 'Stripe Docs, statement descriptors (prefix and suffix joined by *)',
  },
  {
    id: 'clover',
    name: 'Clover',
    domain: 'clover.com',
    kind: 'facilitator',
    merchantOfRecord: false,
    prefixes: ['CLV*', 'CLOVER *'],
    source: 'https://didibuyit.com/descriptors/clover',
  },
  {
    id: 'lightspeed',
    name: 'Lightspeed',
    domain: 'lightspeedhq.com',
    kind: 'facilitator',
    merchantOfRecord: false,
    prefixes: ['LSP*', 'LS *', 'LS '],
    source: longtail,
  },
  {
    id: 'intuit',
    name: 'QuickBooks Payments',
    domain: 'intuit.com',
    kind: 'facilitator',
    merchantOfRecord: false,
    prefixes: ['IN *', 'INTUIT *'],
    source: longtail,
  },
  {
    id: 'paystand',
    name: 'Paystand',
    domain: 'paystand.com',
    kind: 'facilitator',
    merchantOfRecord: false,
    prefixes: ['PST*'],
    source: 'shared/notes/domain.md',
  },
  {
    id: 'checkout',
    name: 'Checkout.com',
    domain: 'checkout.com',
    kind: 'facilitator',
    merchantOfRecord: false,
    prefixes: ['CKO*'],
    source: longtail,
  },
  {
    id: 'adyen',
    name: 'Adyen',
    domain: 'adyen.com',
    kind: 'facilitator',
    merchantOfRecord: false,
    prefixes: ['ADY*', 'ADYEN *'],
    source: 'not yet seen on a public page',
  },
  {
    id: 'worldpay',
    name: 'Worldpay',
    domain: 'worldpay.com',
    kind: 'facilitator',
    merchantOfRecord: false,
    prefixes: ['WPY*', 'WP*'],
    source: 'not yet seen on a public page',
  },
  {
    id: 'paylease',
    name: 'Zego (PayLease)',
    domain: 'zego.io',
    kind: 'facilitator',
    merchantOfRecord: false,
    prefixes: ['PYL*'],
    source: longtail,
  },
  {
    id: 'ticketweb',
    name: 'TicketWeb',
    domain: 'ticketweb.com',
    kind: 'facilitator',
    merchantOfRecord: false,
    prefixes: ['TCKTWEB*'],
    source: longtail,
  },
  {
    id: 'tock',
    name: 'Tock',
    domain: 'exploretock.com',
    kind: 'facilitator',
    merchantOfRecord: false,
    prefixes: ['TOCK AT+', 'TOCK *'],
    source: longtail,
  },
  // Merchants of record for software and digital goods.
  {
    id: 'paddle',
    name: 'Paddle',
    domain: 'paddle.com',
    kind: 'merchant_of_record',
    merchantOfRecord: true,
    prefixes: ['PADDLE.NET*', 'PADDLE.COM*', 'PADDLE *'],
    source: 'https://getsubcut.pages.dev/why-subscription-shows-different-name-on-statement',
  },
  {
    id: 'fastspring',
    name: 'FastSpring',
    domain: 'fastspring.com',
    kind: 'merchant_of_record',
    merchantOfRecord: true,
    prefixes: ['FS *', 'FSPRG.COM*', 'FSPRG.COM', 'FSPRG*', 'FSPRG'],
    source: 'https://fastspring.com/consumer-support/topics/billing-and-refunds/',
  },
  {
    id: '2checkout',
    name: '2Checkout (Verifone)',
    domain: '2checkout.com',
    kind: 'merchant_of_record',
    merchantOfRecord: true,
    prefixes: ['2CO.COM*', '2CO *', '2CHECKOUT.COM*', '2CHECKOUT *', 'VERIFONE *'],
    source: 'not yet seen on a public page',
  },
  {
    id: 'digitalriver',
    name: 'Digital River',
    domain: 'digitalriver.com',
    kind: 'merchant_of_record',
    merchantOfRecord: true,
    prefixes: ['DRI*'],
    source: 'https://getsubcut.pages.dev/why-subscription-shows-different-name-on-statement',
  },
  {
    id: 'gumroad',
    name: 'Gumroad',
    domain: 'gumroad.com',
    kind: 'merchant_of_record',
    merchantOfRecord: true,
    prefixes: ['GUMROAD.COM*', 'GUM.CO/CC*', 'GUMROAD *'],
    source: 'not yet seen on a public page',
  },
  // Marketplaces that sell on a seller's behalf.
  {
    id: 'amazon_marketplace',
    name: 'Amazon Marketplace',
    domain: 'amazon.com',
    kind: 'marketplace',
    merchantOfRecord: true,
    prefixes: [
      'AMZN MKTP US*',
      'AMZN MKTP UK*',
      'AMZN MKTP DE*',
      'AMZN MKTP FR*',
      'AMZN MKTP ES*',
      'AMZN MKTP IT*',
      'AMZN MKTP NL*',
      'AMZN MKTP CA*',
      'AMZN MKTP US',
      'AMZN MKTP UK',
      'AMZN MKTP DE',
    ],
    source: `https://mybankstatementanalysis.com/blog/what-does-x-appear-on-bank-statement; ${longtail}`,
  },
  {
    id: 'etsy',
    name: 'Etsy',
    domain: 'etsy.com',
    kind: 'marketplace',
    merchantOfRecord: true,
    prefixes: ['ETSY.COM - ', 'ETSY.COM*', 'ETSY *'],
    source: longtail,
  },
  {
    id: 'ebay',
    name: 'eBay',
    domain: 'ebay.com',
    kind: 'marketplace',
    merchantOfRecord: true,
    prefixes: ['EBAY O*', 'EBAY *', 'EB *'],
    source: 'not yet seen on a public page',
  },
  // App and game stores: the developer or game follows when given.
  {
    id: 'google',
    name: 'Google Play',
    domain: 'google.com',
    kind: 'app_store',
    merchantOfRecord: true,
    prefixes: ['GOOGLE *', 'GOOGLE*'],
    source:
      'https://www.mymoneyleak.com/blog/unknown-charge-on-your-bank-statement-heres-what-every-mystery-merchant-name-means',
  },
  {
    id: 'apple',
    name: 'Apple',
    domain: 'apple.com',
    kind: 'app_store',
    merchantOfRecord: true,
    prefixes: ['APPLE.COM/BILL', 'APPLE.COM/US', 'ITUNES.COM/BILL', 'APPLE COM BILL', 'APPLE.COM*'],
    source: `https://www.mymoneyleak.com/blog/unknown-charge-on-your-bank-statement-heres-what-every-mystery-merchant-name-means; ${longtail}`,
  },
  {
    id: 'steam',
    name: 'Steam',
    domain: 'steampowered.com',
    kind: 'app_store',
    merchantOfRecord: true,
    prefixes: ['STEAM PURCHASE', 'STEAMGAMES.COM', 'VALVE *'],
    source: 'not yet seen on a public page',
  },
  {
    id: 'playstation',
    name: 'PlayStation Store',
    domain: 'playstation.com',
    kind: 'app_store',
    merchantOfRecord: true,
    prefixes: ['PLAYSTATION NETWORK', 'PLAYSTATIONNETWORK', 'SONY PLAYSTATION', 'PLAYSTATION *'],
    source: longtail,
  },
  {
    id: 'xbox',
    name: 'Xbox',
    domain: 'xbox.com',
    kind: 'app_store',
    merchantOfRecord: true,
    prefixes: ['XBOX *', 'MICROSOFT*XBOX', 'MICROSOFT *XBOX'],
    source: 'shared/notes/domain.md (MICROSOFT *XBOX)',
  },
  // After Xbox: MICROSOFT *XBOX is the Xbox store.
  {
    id: 'microsoft',
    name: 'Microsoft',
    domain: 'microsoft.com',
    kind: 'app_store',
    merchantOfRecord: true,
    prefixes: ['MSFT *', 'MICROSOFT *'],
    source: 'shared/notes/domain.md (MICROSOFT *XBOX)',
  },
  {
    id: 'nintendo',
    name: 'Nintendo eShop',
    domain: 'nintendo.com',
    kind: 'app_store',
    merchantOfRecord: true,
    prefixes: ['NINTENDO *'],
    source: longtail,
  },
  // Creator platforms and payment links: the creator or seller follows.
  {
    id: 'patreon',
    name: 'Patreon',
    domain: 'patreon.com',
    kind: 'payment_link',
    merchantOfRecord: true,
    prefixes: ['PATREON*', 'PATREON *'],
    source: longtail,
  },
  {
    id: 'kofi',
    name: 'Ko-fi',
    domain: 'ko-fi.com',
    kind: 'payment_link',
    merchantOfRecord: false,
    prefixes: ['KO-FI *', 'KOFI *', 'KO-FI.COM*'],
    source: 'not yet seen on a public page',
  },
  // Wallets and buy-now-pay-later lenders: the shop follows.
  {
    id: 'venmo',
    name: 'Venmo',
    domain: 'venmo.com',
    kind: 'wallet',
    merchantOfRecord: false,
    prefixes: ['VENMO *', 'VENMO*'],
    source: 'https://mybankstatementanalysis.com/blog/what-does-x-appear-on-bank-statement',
  },
  {
    id: 'cashapp',
    name: 'Cash App',
    domain: 'cash.app',
    kind: 'wallet',
    merchantOfRecord: false,
    prefixes: ['CASH APP*', 'CASH APP *', 'SQC*'],
    source: 'not yet seen on a public page',
  },
  {
    id: 'klarna',
    name: 'Klarna',
    domain: 'klarna.com',
    kind: 'bnpl',
    merchantOfRecord: false,
    prefixes: ['KLARNA*', 'KLARNA *'],
    source: 'not yet seen on a public page',
  },
  {
    id: 'afterpay',
    name: 'Afterpay',
    domain: 'afterpay.com',
    kind: 'bnpl',
    merchantOfRecord: false,
    prefixes: ['AFTERPAY *', 'AFTERPAY*', 'AFTPY*'],
    source: 'not yet seen on a public page',
  },
  {
    id: 'affirm',
    name: 'Affirm',
    domain: 'affirm.com',
    kind: 'bnpl',
    merchantOfRecord: false,
    prefixes: ['AFFIRM *', 'AFFIRM*', 'AFF*'],
    source: 'not yet seen on a public page',
  },
];

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

function prefixSource(written: string): string {
  const glued = written.endsWith('+');
  const prefix = glued ? written.slice(0, -1) : written;
  const parts = prefix.split('*').map((part) => escapeRegExp(part.trimEnd()).replace(/ /g, '[ ]?'));
  // Any separator a processor prints between its name and the merchant: `*`, `_`, `_*`, with or
  // without spaces (`PAYPAL *GAME`, `PAYPAL*GAME`, `PAYPAL_GAME`).
  let source = parts.join('[ ]*(?:_?\\*|_)[ ]*');
  if (glued) return source;
  if (prefix.endsWith(' ') && !prefix.endsWith('* ')) source += ' +';
  else if (/[A-Z0-9]$/.test(prefix)) source += '(?=[^A-Z0-9]|$)';
  return source;
}

/**
 * Every processor's prefixes in one expression: a group per processor, in table order, each the
 * alternation of its prefixes, longest first. Alternatives are tried in order at the start of the
 * line and the tail (`[ ]*`) always matches, so the first group that matches is the processor the
 * table lists first among those that match, as trying each processor's own expression in turn would
 * find - in one pass instead of forty.
 */
const anyPrefix = new RegExp(
  `^(?:${processors
    .map(
      (processor) =>
        `(${[...processor.prefixes]
          .sort((a, b) => b.length - a.length)
          .map(prefixSource)
          .join('|')})`,
    )
    .join('|')})[ ]*`,
);

/** Codes that look like a facilitator's but are a merchant's own: CKE Restaurants (Carl's Jr., Hardee's). */
const notProcessors = new Set(['CKE']);

/** A short code before `*`, as card networks let facilitators print (`CNK*`, `DNH*`, `FLO* `). */
const shortCode = /^([A-Z0-9]{2,5}) *(?:_?\*|_) *(?=[A-Z0-9#])/;

export interface DetectedProcessor {
  processor: Processor;
  /** The prefix as it appeared. */
  prefix: string;
  /** The line after the prefix. */
  rest: string;
}

export function detectProcessor(line: string): DetectedProcessor | null {
  const m = anyPrefix.exec(line);
  if (m) {
    const processor = processors[m.findIndex((group, i) => i > 0 && group !== undefined) - 1] as Processor;
    return { processor, prefix: m[0], rest: line.slice(m[0].length).trim() };
  }
  const code = shortCode.exec(line);
  if (code && !notProcessors.has(code[1] as string)) {
    const name = code[1] as string;
    return {
      processor: {
        id: `code:${name}`,
        name,
        domain: null,
        kind: 'unrecognised',
        merchantOfRecord: false,
        prefixes: [],
        source: 'short code before * (card-network facilitator convention)',
      },
      prefix: code[0],
      rest: line.slice(code[0].length).trim(),
    };
  }
  return null;
}
