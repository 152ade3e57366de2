/**
 * Signal Strength scores of domains, as the directory reads them: the latest public score per
 * domain that the scans feature keeps in `domain_scores`. A domain never scanned has no score.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../../../db/schema.ts';

/** Latest score (0-100) of each domain asked for; absent when the domain was never scanned. */
export async function latestScores(
  db: Kysely<Database>,
  domains: readonly string[],
): Promise<Map<string, number | null>> {
  if (domains.length === 0) return new Map();
  const rows = await db
    .selectFrom('domain_scores')
    .select(['domain', 'score'])
    .where('domain', 'in', [...new Set(domains)])
    .execute();
  return new Map(rows.map((row) => [row.domain, row.score]));
}
