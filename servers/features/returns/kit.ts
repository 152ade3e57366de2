/**
 * No channel is not a dead end (issue 29 part 6): while nothing can deliver a request
 * (`awaiting_channel`, `undeliverable`), its next step carries a kit the person's agent can act on
 * at once - every way of reaching the brand that is known, a message drafted from the request, the
 * return policy, and the card-dispute route with the time limits that usually apply. The request
 * stays open meanwhile and is delivered the moment a channel appears.
 */
import { z } from 'zod';
import type { ReturnRequestRow } from '../../../db/schema.ts';
import type { RankedChannel } from './channels/schemas.ts';

export const ContactChannelKind = z
  .enum(['agent_a2a', 'agent_mcp', 'email', 'form', 'support_page', 'phone', 'chat', 'return_policy'])
  .describe(
    "agent_a2a / agent_mcp: the brand's own agent (A2A endpoint, MCP server); email: a support or returns " +
      'address; form: a web form or returns portal; support_page: a help or contact page; phone: E.164 number; ' +
      'chat: a live chat page; return_policy: the return policy page.',
  );

export const ContactChannel = z.object({
  kind: ContactChannelKind,
  address: z.string().describe('URL, email address or E.164 phone number.'),
  source: z
    .enum(['brand_agent', 'registry', 'discovered'])
    .describe(
      "brand_agent: the brand registered it with this service; registry: the service's curated brand " +
        "registry; discovered: read from the brand's own site.",
    ),
});
export type ContactChannel = z.infer<typeof ContactChannel>;

const contactKinds: Partial<Record<RankedChannel['kind'], ContactChannel['kind']>> = {
  a2a: 'agent_a2a',
  mcp: 'agent_mcp',
  email: 'email',
  form: 'form',
  support_page: 'support_page',
  phone: 'phone',
  chat: 'chat',
  return_policy: 'return_policy',
};
const contactSources: Record<RankedChannel['source'], ContactChannel['source']> = {
  registered: 'brand_agent',
  registry: 'registry',
  site: 'discovered',
};

/**
 * Every channel known for reaching the brand directly, best first, from the one ranking of its
 * channels (`channels/ranking.ts` `rankedChannelsOf`: what the brand registered and publishes with
 * its agent, the registry's contacts, what discovery found on its site). What the brand registered
 * privately with the service (its webhook, its return address) is never listed; a returns portal
 * is a form the person fills in.
 */
export function knownContactChannels(ranked: readonly RankedChannel[]): ContactChannel[] {
  return ranked.flatMap((channel) => {
    const kind =
      channel.kind === 'support_page' && channel.detail.purpose === 'returns portal'
        ? 'form'
        : contactKinds[channel.kind];
    if (!kind || channel.private) return [];
    return [{ kind, address: channel.address, source: contactSources[channel.source] }];
  });
}

export const DraftMessage = z
  .object({
    subject: z.string(),
    body: z.string(),
    personal_data: z
      .enum(['filled', 'placeholders'])
      .describe(
        "filled: the person's name, contact and card's last 4 are in the text (the reply to start_return_request); " +
          'placeholders: they are left as [bracketed] blanks to fill in (get_return_status, which shows no personal data).',
      ),
  })
  .describe('A message to send the brand through one of the channels, drafted from the request.');
export type DraftMessage = z.infer<typeof DraftMessage>;

type DraftSource = Pick<
  ReturnRequestRow,
  | 'brand_domain'
  | 'brand_name'
  | 'requester_name'
  | 'contact'
  | 'order_number'
  | 'card_last4'
  | 'purchase_date'
  | 'amount_cents'
  | 'currency'
  | 'message'
  | 'id'
>;

/** A message for the brand from the request; without personal data unless `filled`. */
export function draftMessage(
  request: DraftSource,
  filled: boolean,
  redact: (text: string) => string,
): DraftMessage {
  const brand = request.brand_name ?? request.brand_domain;
  const amount =
    request.amount_cents === null
      ? null
      : `${(request.amount_cents / 100).toFixed(2)}${request.currency ? ` ${request.currency}` : ''}`;
  const card = request.card_last4 ? (filled ? request.card_last4 : '[last 4 digits of the card]') : null;
  const purchase = [
    amount ? `of ${amount}` : null,
    request.purchase_date ? `made on ${request.purchase_date}` : null,
    request.order_number ? `(order ${request.order_number})` : null,
    card ? `paid with the card ending in ${card}` : null,
  ].filter((part) => part !== null);
  const message = request.message ? (filled ? request.message : redact(request.message)) : null;
  const lines = [
    `Hello ${brand} customer service,`,
    '',
    `I am asking for a return or refund of my purchase${purchase.length ? ` ${purchase.join(' ')}` : ''}.`,
    ...(message ? ['', message] : []),
    '',
    `Please reply to me at ${filled ? request.contact : '[your email or phone]'}.`,
    '',
    'Thank you,',
    filled ? request.requester_name : '[your name]',
  ];
  return {
    subject: `Return or refund request${request.order_number ? ` for order ${request.order_number}` : ''}`,
    body: lines.join('\n'),
    personal_data: filled ? 'filled' : 'placeholders',
  };
}

const Source = z.object({ name: z.string(), url: z.url() });

export const DisputeTimeLimit = z.object({
  rule: z.string(),
  days: z.number().int(),
  counted_from: z.string(),
  approximate_last_day: z
    .string()
    .nullable()
    .describe(
      'The purchase date plus `days` (YYYY-MM-DD) when the purchase date is known; the rule counts from its own date.',
    ),
  source: Source,
});

export const CardDispute = z
  .object({
    action: z.string(),
    time_limits: z.array(DisputeTimeLimit),
    note: z.string(),
  })
  .describe('The card-dispute route (a chargeback through the card issuer), as information, not advice.');
export type CardDispute = z.infer<typeof CardDispute>;

/**
 * The limits that usually apply, each with where the figure comes from (verified 2026-11-28):
 * the card networks' rules are not public in full, so their figures are cited from dispute
 * specialists' summaries of them; the US statute is cited directly.
 */
const timeLimits = [
  {
    rule: 'Visa chargeback, most dispute reasons',
    days: 120,
    counted_from:
      'the transaction processing date, or the expected delivery date for goods or services not received',
    source: {
      name: 'Chargebacks911, Visa chargeback time limits (summarising the Visa Core Rules)',
      url: 'https://chargebacks911.com/visa-chargeback-time-limit/',
    },
  },
  {
    rule: 'Mastercard chargeback, most dispute reasons',
    days: 120,
    counted_from: 'the transaction date, or the expected delivery date',
    source: {
      name: 'Chargebacks911, Mastercard chargeback time limits (summarising the Mastercard Chargeback Guide)',
      url: 'https://chargebacks911.com/mastercard-chargeback-time-limit/',
    },
  },
  {
    rule: 'US Fair Credit Billing Act: written billing-error notice to the card issuer (credit cards)',
    days: 60,
    counted_from: 'the day the issuer sent the first statement showing the charge',
    source: {
      name: '15 U.S.C. § 1666(a) (Fair Credit Billing Act)',
      url: 'https://law.justia.com/us/codes/title15/15usc1666.html',
    },
  },
] as const;

export function cardDispute(purchaseDate: string | null): CardDispute {
  const plus = (days: number): string | null =>
    purchaseDate
      ? new Date(Date.parse(`${purchaseDate}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10)
      : null;
  return {
    action:
      'If the brand cannot be reached or refuses, the person can ask the bank that issued the card for a ' +
      'chargeback (a card dispute), showing this request and its history as the attempt to settle it with the ' +
      'merchant first.',
    time_limits: timeLimits.map((limit) => ({
      ...limit,
      source: { ...limit.source },
      approximate_last_day: limit.days === 60 ? null : plus(limit.days),
    })),
    note:
      'Information, not legal or financial advice: limits differ by card network, issuer, country and dispute ' +
      'reason, and some reasons allow longer; the card issuer decides.',
  };
}

export const ContactKit = z
  .object({
    channels: z.array(ContactChannel).describe('Every known way to reach the brand directly, best first.'),
    draft: DraftMessage,
    return_policy_url: z.string().nullable(),
    card_dispute: CardDispute,
  })
  .describe(
    'What the person’s agent can do now while no channel delivers the request (awaiting_channel, undeliverable). ' +
      'The request stays open and is delivered the moment a channel appears.',
  );
export type ContactKit = z.infer<typeof ContactKit>;

/** The kit of a request, from the brand's channels as ranked now. */
export function contactKit(
  ranked: readonly RankedChannel[],
  request: DraftSource,
  filled: boolean,
  redact: (text: string) => string,
): ContactKit {
  const channels = knownContactChannels(ranked);
  return {
    channels,
    draft: draftMessage(request, filled, redact),
    return_policy_url: channels.find((c) => c.kind === 'return_policy')?.address ?? null,
    card_dispute: cardDispute(request.purchase_date),
  };
}
