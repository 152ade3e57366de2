/**
 * Data access for resolved merchants and declared descriptors. Functions of `(db | trx)` (STYLE.md 10).
 */
import type { Kysely } from 'kysely';
import type {
  Database,
  DeclaredDescriptorRow,
  ResolvedMerchantRow,
  ResolvedMerchantsTable,
} from '../../../db/schema.ts';

type Db = Kysely<Database>;

// --- Resolved merchants ------------------------------------------------------------------------

/** The stored verdict for a merchant, unless it has expired. */
export function findResolvedMerchant(
  db: Db,
  nameKey: string,
  cityKey: string,
  now: string,
): Promise<ResolvedMerchantRow | undefined> {
  return db
    .selectFrom('resolved_merchants')
    .selectAll()
    .where('name_key', '=', nameKey)
    .where('city_key', '=', cityKey)
    .where('expires_at', '>', now)
    .executeTakeFirst();
}

export async function saveResolvedMerchant(db: Db, row: ResolvedMerchantsTable): Promise<void> {
  const { name_key: _n, city_key: _c, ...rest } = row;
  await db
    .insertInto('resolved_merchants')
    .values(row)
    .onConflict((oc) => oc.columns(['name_key', 'city_key']).doUpdateSet(rest))
    .execute();
}

/** Deletes verdicts that have expired (they would be checked again anyway). */
export async function deleteExpiredResolutions(db: Db, now: string): Promise<number> {
  const result = await db.deleteFrom('resolved_merchants').where('expires_at', '<=', now).executeTakeFirst();
  return Number(result.numDeletedRows);
}

// --- Declared descriptors ----------------------------------------------------------------------

export interface DeclaredHit extends DeclaredDescriptorRow {
  /** The brand agent's name and published support contact (JSON), when the domain registered one. */
  agent_name: string | null;
  agent_contact: string | null;
}

/**
 * Declarations whose key is one of `keys`, while the declaring account still holds a verified
 * site for the domain.
 */
export function declaredByKeys(db: Db, keys: string[]): Promise<DeclaredHit[]> {
  if (keys.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('declared_descriptors as d')
    .innerJoin('sites as s', (join) =>
      join.onRef('s.account_id', '=', 'd.account_id').onRef('s.domain', '=', 'd.domain'),
    )
    .leftJoin('brand_agents as a', 'a.domain', 'd.domain')
    .where('d.descriptor_key', 'in', keys)
    .where('s.verified_at', 'is not', null)
    .selectAll('d')
    .select(['a.name as agent_name', 'a.support_contact as agent_contact'])
    .execute();
}

/** Keys declared at or after `since` (all of them without it), with when each was declared. */
export function declaredKeysSince(
  db: Db,
  since: string | null,
): Promise<{ descriptor_key: string; created_at: string }[]> {
  return db
    .selectFrom('declared_descriptors')
    .select(['descriptor_key', 'created_at'])
    .$if(since !== null, (q) => q.where('created_at', '>=', since as string))
    .execute();
}

export function declaredForDomain(db: Db, domain: string): Promise<DeclaredDescriptorRow[]> {
  return db
    .selectFrom('declared_descriptors')
    .selectAll()
    .where('domain', '=', domain)
    .orderBy('created_at')
    .orderBy('descriptor')
    .execute();
}

/** Who holds each of `keys` now: key -> domain. */
export async function holdersOf(db: Db, keys: string[]): Promise<Map<string, string>> {
  if (keys.length === 0) return new Map();
  const rows = await db
    .selectFrom('declared_descriptors')
    .select(['descriptor_key', 'domain'])
    .where('descriptor_key', 'in', keys)
    .execute();
  return new Map(rows.map((r) => [r.descriptor_key, r.domain]));
}

export async function replaceDeclared(db: Db, domain: string, rows: DeclaredDescriptorRow[]): Promise<void> {
  await db.deleteFrom('declared_descriptors').where('domain', '=', domain).execute();
  if (rows.length > 0) await db.insertInto('declared_descriptors').values(rows).execute();
}
