/**
 * Frozen: never edit a migration that has shipped; add a new one.
 * Scanner storage: scans (a durable queue claimed with leases) and their findings, the latest public
 * score per domain (the leaderboard and GET /signal read it), and per-period snapshots for
 * leaderboard movement and the readiness index history.
 */
import { type Kysely, PostgresAdapter, sql } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations are typed loosely (kysely recommendation)
export async function up(db: Kysely<any>): Promise<void> {
  const pg = db.getExecutor().adapter instanceof PostgresAdapter;
  const ts = pg ? sql`timestamptz` : sql`text`;
  const json = pg ? sql`jsonb` : sql`text`;
  const uuid = pg ? sql`uuid` : sql`text`;

  await db.schema
    .createTable('scans')
    .addColumn('id', uuid, (c) => c.primaryKey())
    .addColumn('domain', 'text', (c) => c.notNull())
    .addColumn('account_id', uuid, (c) => c.references('accounts.id').onDelete('set null'))
    .addColumn('is_public', 'integer', (c) => c.notNull())
    .addColumn('depth', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('phase', 'text')
    .addColumn('progress_done', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('progress_total', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('progress_message', 'text')
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('lease_owner', 'text')
    .addColumn('lease_expires_at', ts)
    .addColumn('requested_at', ts, (c) => c.notNull())
    .addColumn('started_at', ts)
    .addColumn('finished_at', ts)
    .addColumn('error', 'text')
    .addColumn('score', 'integer')
    .addColumn('tier', 'text')
    .addColumn('note', 'text')
    .addColumn('components', json)
    .addColumn('recommended_next_tools', json)
    .addColumn('facts', json)
    .execute();
  await db.schema.createIndex('scans_due').on('scans').columns(['status', 'requested_at']).execute();
  await db.schema.createIndex('scans_domain').on('scans').columns(['domain', 'finished_at']).execute();
  await db.schema.createIndex('scans_account').on('scans').columns(['account_id', 'requested_at']).execute();

  await db.schema
    .createTable('scan_findings')
    .addColumn('scan_id', uuid, (c) => c.notNull().references('scans.id').onDelete('cascade'))
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('finding_id', 'text', (c) => c.notNull())
    .addColumn('component', 'text', (c) => c.notNull())
    .addColumn('severity', 'text', (c) => c.notNull())
    .addColumn('seen', 'text', (c) => c.notNull())
    .addColumn('fix', 'text', (c) => c.notNull())
    .addColumn('evidence_url', 'text')
    .addPrimaryKeyConstraint('scan_findings_pk', ['scan_id', 'seq'])
    .execute();

  await db.schema
    .createTable('domain_scores')
    .addColumn('domain', 'text', (c) => c.primaryKey())
    .addColumn('scan_id', uuid, (c) => c.notNull())
    .addColumn('depth', 'text', (c) => c.notNull())
    .addColumn('score', 'integer', (c) => c.notNull())
    .addColumn('tier', 'text', (c) => c.notNull())
    .addColumn('scanned_at', ts, (c) => c.notNull())
    .addColumn('has_llms_txt', 'integer', (c) => c.notNull())
    .addColumn('has_robots_ai_rules', 'integer', (c) => c.notNull())
    .addColumn('has_api_catalog', 'integer', (c) => c.notNull())
    .addColumn('has_mcp', 'integer', (c) => c.notNull())
    .addColumn('has_markdown', 'integer', (c) => c.notNull())
    .execute();
  // The leaderboard walks this index from the top: a page costs O(page), not O(domains).
  await db.schema
    .createIndex('domain_scores_rank')
    .on('domain_scores')
    .columns(['score desc', 'domain'])
    .execute();

  await db.schema
    .createTable('leaderboard_snapshots')
    .addColumn('period', 'text', (c) => c.notNull())
    .addColumn('domain', 'text', (c) => c.notNull())
    .addColumn('rank', 'integer', (c) => c.notNull())
    .addColumn('score', 'integer', (c) => c.notNull())
    .addColumn('tier', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('leaderboard_snapshots_pk', ['period', 'domain'])
    .execute();

  await db.schema
    .createTable('readiness_snapshots')
    .addColumn('period', 'text', (c) => c.primaryKey())
    .addColumn('taken_at', ts, (c) => c.notNull())
    .addColumn('domains', 'integer', (c) => c.notNull())
    .addColumn('tiers', json, (c) => c.notNull())
    .addColumn('adoption', json, (c) => c.notNull())
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  for (const table of [
    'readiness_snapshots',
    'leaderboard_snapshots',
    'domain_scores',
    'scan_findings',
    'scans',
  ]) {
    await db.schema.dropTable(table).execute();
  }
}
