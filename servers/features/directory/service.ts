/**
 * The public directory: listings of verified domains, the agents brands register for their
 * domains, and the agent hub storefront built from both. Scores come from `scores.ts` only.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { isUniqueViolation } from '../../../db/database.ts';
import type { BrandAgentRow, Database, ListingRow, SoulRow } from '../../../db/schema.ts';
import type { Config } from '../../config.ts';
import { ServiceError } from '../../errors.ts';
import { DEFAULT_LIMIT, decodeCursor, encodeCursor } from '../../pagination.ts';
import type { BrandMatcher } from '../charges/matcher.ts';
import type { ReturnsService } from '../returns/service.ts';
import { soulPage } from '../souls/repository.ts';
import { soulDocumentUrl } from '../souls/service.ts';
import {
  brandAgentPage,
  countBrandAgents,
  findBrandAgent,
  findListing,
  insertBrandAgent,
  insertListing,
  isListed,
  type ListingFilter,
  listedCountsByCategory,
  listedPage,
  topListed,
  updateBrandAgent,
  updateListing,
} from './repository.ts';
import type {
  AgentProtocol,
  Contact,
  ListingCategory,
  RegisterBrandAgentInput,
  SubmitListingInput,
} from './schemas.ts';
import { listingCategories } from './schemas.ts';
import { latestScores } from './scores.ts';

const TOP_LISTINGS = 12;

export interface DirectoryDeps {
  db: Kysely<Database>;
  config: Config;
  brands: BrandMatcher;
  returns: ReturnsService;
  now: () => Date;
}

export interface ListingView {
  listing_id: string;
  domain: string;
  name: string;
  description: string;
  category: ListingCategory;
  url: string;
  tags: string[];
  contact: Contact;
  score: number | null;
  created_at: string;
  updated_at: string;
}

export interface AgentView {
  kind: 'brand' | 'soul';
  agent_id: string;
  handle: string | null;
  name: string;
  domain: string | null;
  endpoint: string;
  protocols: AgentProtocol[];
  support_contact: Contact;
  return_policy: NonNullable<RegisterBrandAgentInput['return_policy']> | null;
  created_at: string;
  updated_at: string;
}

export class DirectoryService {
  readonly #deps: DirectoryDeps;

  constructor(deps: DirectoryDeps) {
    this.#deps = deps;
  }

  /** Creates or updates the account's listing of `domain` (already normalized and checked). */
  async submitListing(
    accountId: string,
    domain: string,
    input: SubmitListingInput,
  ): Promise<{ listing: ListingView; listed: boolean; created: boolean }> {
    const { db, now } = this.#deps;
    const at = now().toISOString();
    const tags = [...new Set(input.tags ?? [])];
    const fields = {
      account_id: accountId,
      domain,
      name: input.name,
      description: input.description,
      category: input.category,
      url: input.url,
      tags: JSON.stringify(tags),
      contact: JSON.stringify(input.contact),
      search_text: [input.name, input.description, domain, ...tags].join('\n').toLowerCase(),
    };
    let existing = await findListing(db, accountId, domain);
    let created = false;
    if (!existing) {
      try {
        await insertListing(db, { id: randomUUID(), ...fields, created_at: at, updated_at: at });
        created = true;
      } catch (err) {
        // Two concurrent first submissions for one domain: the other one created it; update it.
        if (!isUniqueViolation(err)) throw err;
      }
      existing = await findListing(db, accountId, domain);
    }
    if (!existing) throw new Error(`listing of ${domain} vanished after insert`);
    if (!created) await updateListing(db, existing.id, fields, at);
    const row = { ...existing, ...fields, ...(created ? {} : { updated_at: at }) };
    const scores = await latestScores(db, [domain]);
    return {
      listing: listingView(row, scores.get(domain) ?? null),
      listed: await isListed(db, row.id),
      created,
    };
  }

  /** Listed listings matching the filter, newest first, one page per call. */
  async searchListings(
    filter: ListingFilter & { cursor?: string | undefined; limit?: number | undefined },
  ): Promise<{ listings: ListingView[]; next_cursor: string | null }> {
    const limit = filter.limit ?? DEFAULT_LIMIT;
    const rows = await listedPage(this.#deps.db, filter, decodeCursor(filter.cursor), limit + 1);
    const page = rows.slice(0, limit).map((row) => listingView(row, row.score));
    const last = page[page.length - 1];
    return {
      listings: page,
      next_cursor:
        rows.length > limit && last ? encodeCursor({ at: last.created_at, id: last.listing_id }) : null,
    };
  }

  async agentHub(): Promise<{
    top_listings: ListingView[];
    categories: { category: ListingCategory; listings: number }[];
    total_listings: number;
    brand_agents: number;
  }> {
    const { db } = this.#deps;
    const [top, counts, brandAgents] = await Promise.all([
      topListed(db, TOP_LISTINGS),
      listedCountsByCategory(db),
      countBrandAgents(db),
    ]);
    const ranked = top.map((row) => listingView(row, row.score));
    return {
      top_listings: ranked.slice(0, TOP_LISTINGS),
      categories: listingCategories.map((category) => ({ category, listings: counts.get(category) ?? 0 })),
      total_listings: [...counts.values()].reduce((sum, n) => sum + n, 0),
      brand_agents: brandAgents,
    };
  }

  /**
   * Registers (or updates) the brand agent of a verified registrable domain and connects the
   * brand's delivery channel, which queues every request that was waiting for one. The webhook
   * secret lives only in the channel; a generated one is returned once.
   */
  async registerBrandAgent(
    accountId: string,
    domain: string,
    input: RegisterBrandAgentInput,
  ): Promise<{
    agent: AgentView;
    created: boolean;
    webhook_secret: string | null;
    channel: 'webhook' | 'email' | 'a2a' | 'mcp' | null;
    queued: number;
  }> {
    const { db, brands, returns, now } = this.#deps;
    const at = now().toISOString();
    const existing = await findBrandAgent(db, domain);
    if (existing && existing.account_id !== accountId) {
      throw new ServiceError('brand_agent_taken', {
        detail: `Another account registered the agent of ${domain}; its owner can update or hand it over`,
      });
    }
    const protocols = new Set(input.protocols);
    const returnContact = input.return_contact ?? input.support_contact;
    const fields = {
      name: input.name ?? brands.brandByDomain(domain)?.name ?? domain,
      endpoint: input.endpoint,
      protocols: JSON.stringify(input.protocols),
      support_contact: JSON.stringify(input.support_contact),
      return_contact: JSON.stringify(returnContact),
      return_policy: input.return_policy ? JSON.stringify(input.return_policy) : null,
    };
    let row: BrandAgentRow;
    let created = false;
    if (existing) {
      await updateBrandAgent(db, existing.id, fields, at);
      row = { ...existing, ...fields, updated_at: at };
    } else {
      row = { id: randomUUID(), account_id: accountId, domain, ...fields, created_at: at, updated_at: at };
      try {
        await insertBrandAgent(db, row);
        created = true;
      } catch (err) {
        if (isUniqueViolation(err)) {
          throw new ServiceError('brand_agent_taken', {
            detail: `The agent of ${domain} was registered concurrently; send the registration again`,
          });
        }
        throw err;
      }
    }

    let secret: string | null = null;
    let generated: string | null = null;
    if (protocols.has('webhook')) {
      secret = input.webhook_secret ?? (await returns.registeredWebhookSecret(domain));
      if (!secret) {
        generated = `whsec_${randomBytes(32).toString('base64')}`;
        secret = generated;
      }
    }
    const email = protocols.has('email') ? (returnContact.email ?? null) : null;
    const { channel, queued } = await returns.connectBrandChannel({
      brand_domain: domain,
      webhook_url: protocols.has('webhook') ? input.endpoint : null,
      webhook_secret: secret,
      email,
    });
    return { agent: agentView(row), created, webhook_secret: generated, channel, queued };
  }

  async listAgents(input: {
    kind?: 'brand' | 'soul' | undefined;
    cursor?: string | undefined;
    limit?: number | undefined;
  }): Promise<{ agents: AgentView[]; next_cursor: string | null }> {
    const limit = input.limit ?? DEFAULT_LIMIT;
    const after = decodeCursor(input.cursor);
    // Brand agents and souls share the keyset order (created_at desc, id desc): the next page of
    // each, merged, gives the next page of both.
    const [brands, souls] = await Promise.all([
      input.kind === 'soul' ? [] : brandAgentPage(this.#deps.db, after, limit + 1),
      input.kind === 'brand' ? [] : soulPage(this.#deps.db, null, after, limit + 1),
    ]);
    const rows = [
      ...brands.map((row) => ({ at: row.created_at, id: row.id, view: agentView(row) })),
      ...souls.map((row) => ({
        at: row.created_at,
        id: row.id,
        view: soulAgentView(row, this.#deps.config),
      })),
    ].sort((a, b) => (a.at === b.at ? (a.id < b.id ? 1 : -1) : a.at < b.at ? 1 : -1));
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return {
      agents: page.map((row) => row.view),
      next_cursor: rows.length > limit && last ? encodeCursor({ at: last.at, id: last.id }) : null,
    };
  }
}

function listingView(row: ListingRow, score: number | null): ListingView {
  return {
    listing_id: row.id,
    domain: row.domain,
    name: row.name,
    description: row.description,
    category: row.category as ListingCategory,
    url: row.url,
    tags: JSON.parse(row.tags) as string[],
    contact: JSON.parse(row.contact) as Contact,
    score,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/** A soul in the agent directory: its first endpoint (MCP, then A2A, then web), else its document. */
function soulAgentView(row: SoulRow, config: Config): AgentView {
  const endpoints = JSON.parse(row.endpoints) as { mcp?: string; a2a?: string; web?: string };
  const operator = row.operator ? (JSON.parse(row.operator) as { url?: string; email?: string }) : null;
  const protocols: AgentProtocol[] = [];
  if (endpoints.mcp) protocols.push('mcp');
  if (endpoints.a2a) protocols.push('a2a');
  return {
    kind: 'soul',
    agent_id: row.agent_id,
    handle: row.handle,
    name: row.name,
    domain: null,
    endpoint: endpoints.mcp ?? endpoints.a2a ?? endpoints.web ?? soulDocumentUrl(config, row.agent_id),
    protocols,
    support_contact: {
      ...(operator?.email ? { email: operator.email } : {}),
      ...(operator?.url ? { url: operator.url } : {}),
    },
    return_policy: null,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/** The public face of a brand agent: no secret, no return contact. */
function agentView(row: BrandAgentRow): AgentView {
  return {
    kind: 'brand',
    agent_id: row.id,
    handle: null,
    name: row.name,
    domain: row.domain,
    endpoint: row.endpoint,
    protocols: JSON.parse(row.protocols) as AgentProtocol[],
    support_contact: JSON.parse(row.support_contact) as Contact,
    return_policy: row.return_policy ? JSON.parse(row.return_policy) : null,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
