/**
 * Signal Strength scores of domains, as the directory reads them. The scans feature keeps the
 * latest score per domain; this is the one place the directory asks for it, so wiring that table
 * in changes nothing else. Until then no domain has a score: `score` is null everywhere and a
 * `min_score` filter leaves every listing out (an unscored domain never passes a threshold).
 */
import type { Kysely } from 'kysely';
import type { Database } from '../../../db/schema.ts';

/** Latest score (0-100) of each domain asked for; absent or null when the domain was never scanned. */
export async function latestScores(
  _db: Kysely<Database>,
  domains: readonly string[],
): Promise<Map<string, number | null>> {
  return new Map(domains.map((domain) => [domain, null]));
}
