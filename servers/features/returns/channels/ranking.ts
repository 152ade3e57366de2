/**
 * A brand's channels in one order, from three sources - what the brand registered with us
 * (`brand_agents`, `brand_channels`), the curated registry's contacts, and what discovery found on
 * its site - the registered seeding and outranking the registry, the registry the site.
 *
 * What a registered agent publishes (its support contact and policy page) is listed as registered
 * too, for the person, not for delivery.
 *
 * Delivery order (issue 29): the registered agent (webhook, then A2A, MCP, email as it registered)
 * > the brand's own A2A agent > email (the registry's, then the site's: `ContactPoint`s for returns,
 * then customer service, then billing, then untyped, then `mailto:` links) > none. Every other
 * channel - an MCP server found on the site, the contact form, chat, phone, help pages, the return
 * policy - is for the person's kit, in that order. A channel that failed a delivery and is still
 * held (`channel_failures`) keeps its place in the list but not in the delivery order.
 */
import type { Kysely } from 'kysely';
import type {
  BrandAgentRow,
  BrandChannelRow,
  ChannelFailureRow,
  Database,
  DiscoveredChannelRow,
} from '../../../../db/schema.ts';
import type { SecretBox } from '../../../secrets.ts';
import type { Brand } from '../../charges/brand-registry.ts';
import { findBrandAgent } from '../../directory/repository.ts';
import { findBrandChannel } from '../repository.ts';
import { activeFailures, discoveredChannels } from './repository.ts';
import type { ChannelDetail, ChannelKind, ChannelSource, FoundBy, RankedChannel } from './schemas.ts';

export interface ChannelSources {
  registered: BrandChannelRow | undefined;
  agent: BrandAgentRow | undefined;
  brand: Pick<Brand, 'contact' | 'returns'> | undefined;
  found: readonly DiscoveredChannelRow[];
  failures: readonly ChannelFailureRow[];
}

/** A channel before ranking; `delivers` tells a registered delivery channel from a published contact. */
type Unranked = Omit<RankedChannel, 'delivery_rank' | 'failed'> & { delivers: boolean };

const registered = (
  kind: ChannelKind,
  address: string,
  isPrivate: boolean,
  delivers = true,
  detail: ChannelDetail = {},
): Unranked => ({
  kind,
  address,
  private: isPrivate,
  detail,
  source: 'registered',
  found_by: 'registered_agent',
  source_url: null,
  found_at: null,
  delivers,
});

const fromRegistry = (kind: ChannelKind, address: string, detail: ChannelDetail = {}): Unranked => ({
  kind,
  address,
  private: false,
  detail,
  source: 'registry',
  found_by: 'registry_contact',
  source_url: null,
  found_at: null,
  delivers: true,
});

/** `{email?, url?, phone?}` as a brand agent publishes its support contact (`brand_agents`). */
interface PublishedContact {
  email?: string;
  url?: string;
  phone?: string;
}

/** What the brand's registered agent publishes: its support contact and policy page, for the person. */
function publishedBy(agent: BrandAgentRow): Unranked[] {
  const support = JSON.parse(agent.support_contact) as PublishedContact;
  const policy = agent.return_policy ? (JSON.parse(agent.return_policy) as { url?: string }) : null;
  const out: Unranked[] = [];
  if (support.email) out.push(registered('email', support.email, false, false));
  if (support.phone) out.push(registered('phone', support.phone, false, false));
  if (support.url) out.push(registered('support_page', support.url, false, false, { purpose: 'help' }));
  if (policy?.url) out.push(registered('return_policy', policy.url, false, false));
  return out;
}

/** Every channel of the sources, sorted, with delivery ranks. Pure. */
export function rankChannels(sources: ChannelSources): RankedChannel[] {
  return withFailures(orderChannels(sources), sources.failures);
}

/** Every channel of the sources, one per kind and address, in order (failures not yet applied). */
function orderChannels(sources: Omit<ChannelSources, 'failures'>): Unranked[] {
  const list: Unranked[] = [];
  const { registered: channel, agent, brand } = sources;
  const protocols = agent ? (JSON.parse(agent.protocols) as string[]) : [];
  if (channel?.webhook_url && channel.webhook_secret)
    list.push(registered('webhook', channel.webhook_url, true));
  if (agent && protocols.includes('a2a')) list.push(registered('a2a', agent.endpoint, false));
  if (agent && protocols.includes('mcp')) list.push(registered('mcp', agent.endpoint, false));
  if (channel?.email) list.push(registered('email', channel.email, true));
  if (agent) list.push(...publishedBy(agent));
  if (brand?.contact.email) list.push(fromRegistry('email', brand.contact.email));
  if (brand?.contact.phone) list.push(fromRegistry('phone', brand.contact.phone));
  if (brand?.contact.support_url)
    list.push(fromRegistry('support_page', brand.contact.support_url, { purpose: 'help' }));
  if (brand?.returns.portal_url)
    list.push(fromRegistry('support_page', brand.returns.portal_url, { purpose: 'returns portal' }));
  if (brand?.returns.policy_url) list.push(fromRegistry('return_policy', brand.returns.policy_url));
  for (const row of sources.found) {
    list.push({
      kind: row.kind as ChannelKind,
      address: row.address,
      private: false,
      detail: JSON.parse(row.detail) as ChannelDetail,
      source: 'site',
      found_by: row.found_by as FoundBy,
      source_url: row.source_url,
      found_at: row.found_at,
      delivers: true,
    });
  }
  // One entry per kind and address: the first source (registered, registry, site) wins; an address
  // that any source shows openly is not private (a return address the brand also publishes).
  const same = (a: Unranked, b: Unranked) =>
    a.kind === b.kind && a.address.toLowerCase() === b.address.toLowerCase();
  const unique = list
    .filter((c, i) => list.findIndex((o) => same(o, c)) === i)
    .map((c) => (c.private && list.some((o) => !o.private && same(o, c)) ? { ...c, private: false } : c));
  return unique
    .map((c, i) => ({ c, i, key: sortKey(c) }))
    .sort((a, b) => a.key - b.key || a.i - b.i)
    .map(({ c }) => c);
}

/** The ordered channels with their failures and delivery ranks (a failed channel has none). */
function withFailures(sorted: readonly Unranked[], failures: readonly ChannelFailureRow[]): RankedChannel[] {
  let rank = 0;
  return sorted.map((c) => {
    const failure = failures.find(
      (f) => f.kind === c.kind && f.address.toLowerCase() === c.address.toLowerCase(),
    );
    const failed = failure
      ? { at: failure.failed_at, reason: failure.reason, until: failure.failed_until }
      : null;
    const delivers = deliveryGroup(c) !== null && !failed;
    const { delivers: _registeredToDeliver, ...channel } = c;
    return { ...channel, delivery_rank: delivers ? ++rank : null, failed };
  });
}

/** The delivery tier of a channel (lower first), or null for a kit-only channel. */
function deliveryGroup(c: Unranked): number | null {
  if (c.source === 'registered')
    return c.delivers ? ['webhook', 'a2a', 'mcp', 'email'].indexOf(c.kind) : null;
  if (c.kind === 'a2a') return 4;
  if (c.kind === 'email') return c.source === 'registry' ? 5 : 6 + emailOrder(c) / 10;
  return null;
}

const kitOrder: ChannelKind[] = ['email', 'mcp', 'form', 'chat', 'phone', 'support_page', 'return_policy'];
const sourceOrder: Record<ChannelSource, number> = { registered: 0, registry: 0.25, site: 0.5 };

function sortKey(c: Unranked): number {
  const group = deliveryGroup(c);
  if (group !== null) return group;
  return 10 + kitOrder.indexOf(c.kind) + sourceOrder[c.source];
}

/** Site emails: ContactPoints for returns, customer service, billing, untyped; then mailto links. */
function emailOrder(c: Unranked): number {
  if (c.found_by === 'mailto_link') return 4;
  const type = c.detail.contact_type ?? '';
  if (/return|refund|exchange/i.test(type)) return 0;
  if (/customer|support|service|care|help/i.test(type)) return 1;
  if (/billing|payment|account/i.test(type)) return 2;
  return 3;
}

/**
 * The channels of `domain` as stored now, ranked (no discovery runs here). With `only`, just the
 * channels of those kinds (delivery ranks counted among them), and only the sources that can hold
 * one are read; the failures only when there is a channel to hold out.
 */
export async function rankedChannelsOf(
  db: Kysely<Database>,
  secrets: SecretBox,
  brand: ChannelSources['brand'],
  domain: string,
  now: string,
  only: (kind: ChannelKind) => boolean = () => true,
): Promise<RankedChannel[]> {
  const agentKinds = only('a2a') || only('mcp');
  const siteKinds = siteKindsOf.some(only);
  const [registeredChannel, agent, found] = await Promise.all([
    findBrandChannel(db, secrets, domain),
    agentKinds ? findBrandAgent(db, domain) : undefined,
    siteKinds ? discoveredChannels(db, domain) : [],
  ]);
  const candidates = orderChannels({ registered: registeredChannel, agent, brand, found }).filter((c) =>
    only(c.kind),
  );
  // No channel, no failure to read: the hot path of a brand with nothing stored stops here.
  if (candidates.length === 0) return [];
  return withFailures(candidates, await activeFailures(db, domain, now));
}

/** Kinds a site can show (every kind but a registered webhook). */
const siteKindsOf: ChannelKind[] = [
  'a2a',
  'mcp',
  'email',
  'form',
  'phone',
  'chat',
  'support_page',
  'return_policy',
];
