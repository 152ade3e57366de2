/**
 * Data access for listings and brand agents. Functions of `(db | trx)` (STYLE.md 10).
 *
 * A listing is public while its account has verified its domain: every public read joins `sites`
 * on (account_id, domain) with `verified_at` set, so verification lists it with no second write.
 */
import { type Kysely, type SelectQueryBuilder, sql } from 'kysely';
import { prepared } from '../../../db/prepared.ts';
import type { BrandAgentRow, Database, ListingRow } from '../../../db/schema.ts';
import { likePattern, type Position, rowsAfter } from '../../pagination.ts';

type Db = Kysely<Database>;

export type NewListing = Omit<ListingRow, 'id' | 'created_at' | 'updated_at'>;

export function findListing(db: Db, accountId: string, domain: string): Promise<ListingRow | undefined> {
  return db
    .selectFrom('listings')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('domain', '=', domain)
    .executeTakeFirst();
}

export async function insertListing(db: Db, row: ListingRow): Promise<void> {
  await db.insertInto('listings').values(row).execute();
}

export async function updateListing(db: Db, id: string, fields: NewListing, at: string): Promise<void> {
  await db
    .updateTable('listings')
    .set({ ...fields, updated_at: at })
    .where('id', '=', id)
    .execute();
}

/** Listings whose account has verified their domain, with the listing columns only. */
function listed(db: Db): SelectQueryBuilder<Database, 'listings' | 'sites', ListingRow> {
  return db
    .selectFrom('listings')
    .innerJoin('sites', (join) =>
      join
        .onRef('sites.account_id', '=', 'listings.account_id')
        .onRef('sites.domain', '=', 'listings.domain'),
    )
    .where('sites.verified_at', 'is not', null)
    .selectAll('listings');
}

export async function isListed(db: Db, listingId: string): Promise<boolean> {
  const row = await listed(db).where('listings.id', '=', listingId).executeTakeFirst();
  return row !== undefined;
}

export interface ListingFilter {
  q?: string | undefined;
  category?: string | undefined;
  /** Keeps domains whose latest public Signal Strength score is at least this (unscored never pass). */
  min_score?: number | undefined;
}

export type ScoredListingRow = ListingRow & { score: number | null };

/** Listed listings with the latest public score of their domain (`domain_scores`, scans feature). */
function listedWithScores(db: Db) {
  return listed(db)
    .leftJoin('domain_scores', 'domain_scores.domain', 'listings.domain')
    .select('domain_scores.score');
}

/** One page of listed listings, newest first, strictly after `after`. */
export function listedPage(
  db: Db,
  filter: ListingFilter,
  after: Position | null,
  limit: number,
): Promise<ScoredListingRow[]> {
  return listedWithScores(db)
    .$if(filter.q !== undefined, (q) =>
      q.where(sql<boolean>`listings.search_text like ${likePattern(filter.q ?? '')} escape '\\'`),
    )
    .$if(filter.category !== undefined, (q) => q.where('listings.category', '=', filter.category ?? ''))
    .$if(filter.min_score !== undefined, (q) => q.where('domain_scores.score', '>=', filter.min_score ?? 0))
    .$if(after !== null, (q) => q.where(rowsAfter('listings', after as Position)))
    .orderBy('listings.created_at', 'desc')
    .orderBy('listings.id', 'desc')
    .limit(limit)
    .execute();
}

/** The storefront's top listings: highest score first (unscored last), then newest. */
export function topListed(db: Db, limit: number): Promise<ScoredListingRow[]> {
  return listedWithScores(db)
    .orderBy(sql`coalesce(domain_scores.score, -1)`, 'desc')
    .orderBy('listings.created_at', 'desc')
    .orderBy('listings.id', 'desc')
    .limit(limit)
    .execute();
}

export async function listedCountsByCategory(db: Db): Promise<Map<string, number>> {
  const rows = await db
    .selectFrom('listings')
    .innerJoin('sites', (join) =>
      join
        .onRef('sites.account_id', '=', 'listings.account_id')
        .onRef('sites.domain', '=', 'listings.domain'),
    )
    .where('sites.verified_at', 'is not', null)
    .select((eb) => ['listings.category', eb.fn.countAll<number>().as('n')])
    .groupBy('listings.category')
    .execute();
  return new Map(rows.map((r) => [r.category, Number(r.n)]));
}

// --- Brand agents --------------------------------------------------------------------------------

const brandAgentOf = prepared('brand agent', (db: Db, domain: string) =>
  db.selectFrom('brand_agents').selectAll().where('domain', '=', domain),
);

/** The agent registered for `domain`; a prepared statement, as return requests read it for their channel. */
export function findBrandAgent(db: Db, domain: string): Promise<BrandAgentRow | undefined> {
  return brandAgentOf.first(db, domain);
}

export async function insertBrandAgent(db: Db, row: BrandAgentRow): Promise<void> {
  await db.insertInto('brand_agents').values(row).execute();
}

export async function updateBrandAgent(
  db: Db,
  id: string,
  fields: Omit<BrandAgentRow, 'id' | 'account_id' | 'domain' | 'created_at' | 'updated_at'>,
  at: string,
): Promise<void> {
  await db
    .updateTable('brand_agents')
    .set({ ...fields, updated_at: at })
    .where('id', '=', id)
    .execute();
}

export function brandAgentPage(db: Db, after: Position | null, limit: number): Promise<BrandAgentRow[]> {
  return db
    .selectFrom('brand_agents')
    .selectAll()
    .$if(after !== null, (query) => query.where(rowsAfter('brand_agents', after as Position)))
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

export async function countBrandAgents(db: Db): Promise<number> {
  const row = await db
    .selectFrom('brand_agents')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
