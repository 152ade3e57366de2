/**
 * Frozen: never edit a migration that has shipped; add a new one.
 * Signal Strength with evidence, fixes, profiles and scoring versions (issue 16):
 * - `scans.scoring_version`: the version that computed the stored score (null: version 1, before
 *   versions were kept); `scans.scoring_inputs`: what the score was computed from besides the
 *   facts (live traffic, the previous score), so a stored scan can be re-scored by a newer version;
 *   `scans.profile`: the profile the caller asked for (null: the detected one).
 * - `scan_findings`: the check's title and goal, the specification link, a prompt for a coding
 *   agent, and the evidence (JSON) of each finding.
 * - `domain_scores.scoring_version`: the leaderboard shows one version at a time.
 * - An index to find the scans a newer scoring version has to re-score.
 */
import type { Kysely } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations are typed loosely (kysely recommendation)
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('scans').addColumn('scoring_version', 'integer').execute();
  await db.schema.alterTable('scans').addColumn('scoring_inputs', 'text').execute();
  await db.schema.alterTable('scans').addColumn('profile', 'text').execute();
  for (const column of ['title', 'goal', 'spec_url', 'agent_prompt', 'evidence']) {
    await db.schema.alterTable('scan_findings').addColumn(column, 'text').execute();
  }
  await db.schema.alterTable('domain_scores').addColumn('scoring_version', 'integer').execute();
  await db.schema
    .createIndex('scans_scoring_version')
    .on('scans')
    .columns(['status', 'scoring_version'])
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('scans_scoring_version').execute();
  await db.schema.alterTable('domain_scores').dropColumn('scoring_version').execute();
  for (const column of ['title', 'goal', 'spec_url', 'agent_prompt', 'evidence']) {
    await db.schema.alterTable('scan_findings').dropColumn(column).execute();
  }
  for (const column of ['scoring_version', 'scoring_inputs', 'profile']) {
    await db.schema.alterTable('scans').dropColumn(column).execute();
  }
}
