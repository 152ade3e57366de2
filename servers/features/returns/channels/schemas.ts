/**
 * A brand's channels as the service knows them (issue 29 part 1): what each is, where it came from,
 * how it was found, whether and in which order delivery uses it, and what a person's agent can do
 * with it. `GET {base_url}/brands/{domain}` answers `BrandChannelsResult`; the delivery worker reads
 * the same ranking (`ranking.ts`).
 */
import { z } from 'zod';
import { addressField } from '../../../public-address.ts';

/**
 * An enum whose description gives each value's meaning, both written once: `{value: meaning}`. What
 * a model reads in the tool's schema is the same table the code switches on.
 */
function describedEnum<const K extends string>(meanings: Record<K, string>, lead = '') {
  const values = Object.keys(meanings) as [K, ...K[]];
  return z.enum(values).describe(`${lead}${values.map((v) => `${v}: ${meanings[v]}`).join('; ')}.`);
}

export const ChannelKind = describedEnum({
  webhook: 'an endpoint the brand registered with this service',
  a2a: "an A2A agent (address: its agent card's URL)",
  mcp: 'an MCP server (address: its Streamable HTTP URL)',
  email: 'a role address',
  form: 'the page that holds a contact form',
  phone: 'an E.164 number',
  chat: 'the page that opens a chat widget',
  support_page: 'a help or returns page',
  return_policy: "the brand's return policy page",
});
export type ChannelKind = z.infer<typeof ChannelKind>;

export const ChannelDetail = z
  .object({
    skill_id: z.string().describe('a2a: the id of the skill for customer service, returns or refunds.'),
    skill_name: z.string().describe('a2a: that skill as the card names it.'),
    agent_name: z.string().describe("a2a: the agent's name on its card."),
    interface_url: z.string().describe('a2a: the first interface of the card (where messages go).'),
    protocol_binding: z.string().describe('a2a: JSONRPC, HTTP+JSON or GRPC, as the card says.'),
    protocol_version: z.string().describe('a2a: the A2A version of that interface.'),
    tool_name: z.string().describe('mcp: the tool for returns, refunds or support, from tools/list.'),
    tool_description: z.string().describe('mcp: what the tool says it does.'),
    server_name: z.string().describe('mcp: the server name on its card.'),
    card_url: z.string().describe('mcp: the server card it was found through.'),
    contact_type: z
      .string()
      .describe('email, phone: the ContactPoint contactType ("customer service", "returns", ...).'),
    vendor: z.string().describe('chat: the chat product recognised (Zendesk, Intercom, ...).'),
    purpose: z.string().describe('support_page: what the page is for (help, returns portal).'),
  })
  .partial()
  .describe('What identifies the channel beyond its address; only the fields that apply are present.');
export type ChannelDetail = z.infer<typeof ChannelDetail>;

export const ChannelSource = describedEnum(
  {
    registered: 'the brand registered it with this service (POST /brand-agent)',
    registry: 'the curated brand registry',
    site: "found on the brand's own site",
  },
  'Registered outranks the registry, which outranks the site. ',
);
export type ChannelSource = z.infer<typeof ChannelSource>;

export const FoundBy = describedEnum(
  {
    registered_agent: 'POST /brand-agent',
    registry_contact: 'the brand registry',
    a2a_agent_card: '/.well-known/agent-card.json and a skill in it',
    mcp_server_card: 'the MCP catalog or server card, then the live tools/list',
    json_ld_contact_point: 'a schema.org ContactPoint in JSON-LD',
    json_ld_return_policy: 'a schema.org MerchantReturnPolicy',
    mailto_link: 'a mailto: link',
    tel_link: 'a tel: link',
    contact_form: 'a form with a message field',
    chat_widget: 'a known chat vendor script',
    page_link: 'a link named for returns or help',
  },
  'How the channel was found: ',
);
export type FoundBy = z.infer<typeof FoundBy>;

/** A channel as a discovery found it, before storage. */
export interface FoundChannel {
  kind: ChannelKind;
  address: string;
  detail: ChannelDetail;
  source_url: string;
  found_by: FoundBy;
}

/** A channel in the one ranking of a brand's channels (`ranking.ts`), which delivery and the kit read. */
export interface RankedChannel {
  kind: ChannelKind;
  /** Always the real address; `private` says whether it may be shown. */
  address: string;
  /** Registered webhooks and return emails are the brand's private arrangement with us. */
  private: boolean;
  detail: ChannelDetail;
  source: ChannelSource;
  found_by: FoundBy;
  source_url: string | null;
  found_at: string | null;
  /** 1-based place in the delivery order; null for kit-only or failed channels. */
  delivery_rank: number | null;
  failed: { at: string; reason: string; until: string } | null;
}

export const AttemptOutcome = describedEnum({
  read: 'fetched and read',
  robots: 'robots.txt disallows it for our crawler',
  blocked: 'not a public address',
  http: 'an error status',
  not_text: 'not a page or document',
  failed: 'network error, timeout, redirect loop',
  skipped: 'not fetched (time budget or page cap reached)',
});

export const DiscoveryAttempt = z.object({
  url: z.string(),
  what: z
    .enum(['home', 'page', 'agent_card', 'mcp_catalog', 'mcp_server_card', 'mcp_server', 'sitemap'])
    .describe('What the URL was read as.'),
  outcome: AttemptOutcome,
  detail: z.string().nullable().describe('The status, error or what it held.'),
});
export type DiscoveryAttempt = z.infer<typeof DiscoveryAttempt>;

export const RefusedCandidate = z
  .object({
    kind: ChannelKind,
    address: z.string().describe('The address as the page gave it (an email address is shown as found).'),
    source_url: z.string(),
    reason: z.string().describe('Why it is not a channel.'),
  })
  .describe('Something that looked like a channel and was not kept.');
export type RefusedCandidate = z.infer<typeof RefusedCandidate>;

export const DiscoveryReport = z.object({
  tried: z.array(DiscoveryAttempt).describe('Every URL fetched or skipped, in order.'),
  refused: z.array(RefusedCandidate),
  notes: z.array(z.string()).describe('Why the run stopped early, or what it could not check.'),
  pages_read: z.number().int(),
  duration_ms: z.number().int(),
});
export type DiscoveryReport = z.infer<typeof DiscoveryReport>;

export const DiscoveryOutcome = describedEnum({
  complete: 'every page planned was read',
  partial: 'the time budget ran out, or pages did not answer',
  unreachable: "the brand's home page could not be read",
});
export type DiscoveryOutcome = z.infer<typeof DiscoveryOutcome>;

export const GetBrandChannelsInput = z.strictObject({
  domain: addressField(
    z
      .string()
      .min(1)
      .max(300)
      .describe(
        "The brand's domain, such as netflix.com (a URL or a subdomain is accepted; its registrable domain is used).",
      )
      .meta({ examples: ['netflix.com'] }),
    'domain',
  ),
});

export const BrandChannelView = z.object({
  kind: ChannelKind,
  address: z
    .string()
    .nullable()
    .describe(
      'URL, email address or E.164 number; null for what the brand registered privately with this service.',
    ),
  detail: ChannelDetail,
  source: ChannelSource,
  found_by: FoundBy,
  source_url: z
    .string()
    .nullable()
    .describe('The page or document it was read on (null unless found on the site).'),
  found_at: z.iso
    .datetime()
    .nullable()
    .describe('When a discovery first found it (null unless found on the site).'),
  delivery_rank: z
    .number()
    .int()
    .positive()
    .nullable()
    .describe(
      "Its place in the order delivery tries (1 first): registered agent, then the brand's own A2A agent, then " +
        'email; null for channels only the person can use (form, phone, chat, pages, MCP found on the site) or ' +
        'one that failed.',
    ),
  failed: z
    .object({
      at: z.iso.datetime(),
      reason: z.string(),
      until: z.iso.datetime().describe('Delivery skips it until then.'),
    })
    .nullable()
    .describe('A delivery that could not use it.'),
  use: z.string().describe("What the person's agent can do with it."),
});
export type BrandChannelView = z.infer<typeof BrandChannelView>;

export const DiscoveryStatus = describedEnum({
  fresh: 'the last discovery holds until next_run_at',
  stale: 'it is due again',
  running: 'a discovery is under way (ask again after retry_after_s)',
  never: 'no discovery ran yet',
  off: 'discovery is off on this deployment (returns.discovery.enabled)',
  not_public: 'the domain is not a public name, nothing is fetched',
});
export type DiscoveryStatus = z.infer<typeof DiscoveryStatus>;

export const BrandDiscoveryView = z.object({
  status: DiscoveryStatus,
  outcome: DiscoveryOutcome.nullable().describe('What the last finished discovery concluded.'),
  ran_at: z.iso.datetime().nullable().describe('When the last discovery finished.'),
  next_run_at: z.iso.datetime().nullable().describe('When the next one is due (null: at the next read).'),
  refresh_reason: z.string().nullable().describe('Why it is due early (a delivery failed).'),
  retry_after_s: z.number().int().nullable().describe('With running: when to ask again.'),
  report: DiscoveryReport.nullable().describe('What the last discovery tried, refused and noted.'),
});

export const BrandChannelsResult = z
  .object({
    domain: z.string().describe('The registrable domain the channels belong to.'),
    name: z.string().nullable().describe('The brand name from the registry.'),
    known: z.boolean().describe('Whether the brand is in the registry.'),
    channels: z
      .array(BrandChannelView)
      .describe('Every channel, delivery channels first in delivery order, then the others.'),
    delivery_channel: ChannelKind.nullable().describe(
      'The kind of the first channel delivery would use now (start_return_request), or null: the request would wait.',
    ),
    discovery: BrandDiscoveryView,
  })
  .describe("A brand's channels for return and refund requests, and how they were found.");
export type BrandChannelsResult = z.infer<typeof BrandChannelsResult>;
