/**
 * Frozen: never edit a migration that has shipped; add a new one.
 * Scan history and batch scans (issue 35 items 2-3): the index a domain's history is read through
 * (newest request first), the scan each leaderboard entry showed before (its movement since the
 * last scan), and batches of scans an account
 * asked for in one request (`scan_batches`, with one `scan_batch_items` row per domain naming the
 * scan it queued or joined). An item's scan may be pruned from the history later (bounded per
 * domain): its `scan_id` is then null.
 */
import { type Kysely, sql } from 'kysely';
import { columnTypes } from '../column-types.ts';

// biome-ignore lint/suspicious/noExplicitAny: migrations are typed loosely (kysely recommendation)
export async function up(db: Kysely<any>): Promise<void> {
  const { ts, uuid } = columnTypes(db);
  await db.schema
    .createIndex('scans_domain_history')
    .on('scans')
    .columns(['domain', 'requested_at', 'id'])
    .execute();
  // The scan a domain's leaderboard entry showed before the one it shows now (a full scan replaced
  // by a full scan), and its score: the entry's movement since the last scan, read with the row.
  await db.schema.alterTable('domain_scores').addColumn('previous_scan_id', uuid).execute();
  await db.schema.alterTable('domain_scores').addColumn('previous_score', 'integer').execute();
  // Filled for the domains scanned before: the public full scan finished last before the one shown.
  await sql`update domain_scores set previous_scan_id = (
      select s.id from scans s
      where s.domain = domain_scores.domain and s.status = 'done' and s.is_public = 1
        and s.depth = 'full' and domain_scores.depth = 'full' and s.id <> domain_scores.scan_id
        and s.finished_at <= domain_scores.scanned_at and s.score is not null
      order by s.finished_at desc, s.id desc limit 1)`.execute(db);
  await sql`update domain_scores set previous_score = (
      select s.score from scans s where s.id = domain_scores.previous_scan_id)
      where previous_scan_id is not null`.execute(db);
  await db.schema
    .createTable('scan_batches')
    .addColumn('id', uuid, (c) => c.primaryKey())
    .addColumn('account_id', uuid, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('is_public', 'integer', (c) => c.notNull())
    .addColumn('profile', 'text')
    .addColumn('created_at', ts, (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('scan_batch_items')
    .addColumn('batch_id', uuid, (c) => c.notNull().references('scan_batches.id').onDelete('cascade'))
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('domain', 'text', (c) => c.notNull())
    .addColumn('scan_id', uuid, (c) => c.references('scans.id').onDelete('set null'))
    .addPrimaryKeyConstraint('scan_batch_items_pk', ['batch_id', 'seq'])
    .execute();
  await db.schema.createIndex('scan_batch_items_scan').on('scan_batch_items').column('scan_id').execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('scan_batch_items').execute();
  await db.schema.dropTable('scan_batches').execute();
  await db.schema.alterTable('domain_scores').dropColumn('previous_score').execute();
  await db.schema.alterTable('domain_scores').dropColumn('previous_scan_id').execute();
  await db.schema.dropIndex('scans_domain_history').execute();
}
