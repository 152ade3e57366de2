/**
 * Applies pending migrations. Runs on every start (`servers/main.ts`) and as `npm run migrate`.
 * Kysely's migrator takes a lock table, so concurrent processes on PostgreSQL apply each migration once.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Kysely, PostgresAdapter, sql } from 'kysely';
import { FileMigrationProvider, type MigrationResultSet, Migrator } from 'kysely/migration';
import { loadConfig, sqliteFile } from '../servers/config.ts';
import { openDatabase } from './database.ts';

const migrationFolder = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');

// biome-ignore lint/suspicious/noExplicitAny: the migrator works on any schema
export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
  return migrate(db, (migrator) => migrator.migrateToLatest());
}

/** Applies migrations up to and including `name` (tests of a migration's conversion of older rows). */
// biome-ignore lint/suspicious/noExplicitAny: the migrator works on any schema
export async function migrateUpTo(db: Kysely<any>, name: string): Promise<string[]> {
  return migrate(db, (migrator) => migrator.migrateTo(name));
}

/** The names of every migration, in the order they apply. */
export async function migrationNames(): Promise<string[]> {
  return (await fs.readdir(migrationFolder))
    .filter((f) => f.endsWith('.ts'))
    .map((f) => f.slice(0, -3))
    .sort();
}

async function migrate(
  // biome-ignore lint/suspicious/noExplicitAny: the migrator works on any schema
  db: Kysely<any>,
  run: (migrator: Migrator) => Promise<MigrationResultSet>,
): Promise<string[]> {
  const migrator = new Migrator({
    db,
    provider: new FileMigrationProvider({ fs, path, migrationFolder }),
    ...(await migrationTableSchema(db)),
  });
  for (let attempt = 1; ; attempt++) {
    const { error, results } = await run(migrator);
    if (!error) return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
    if (attempt < 3 && isIntrospectionRace(error)) continue;
    throw error instanceof Error ? error : new Error(String(error));
  }
}

/**
 * kysely checks for its tables by introspecting every schema of the database; a schema, table or
 * column dropped by someone else during that query (another deployment's cleanup, a parallel test
 * run) fails it with "schema/relation/column does not exist" (seen: `column "created_at" of
 * relation "listings" does not exist`, another suite's schema going away). Nothing was migrated
 * then, so it is retried.
 */
function isIntrospectionRace(error: unknown): boolean {
  const code = (error as { code?: string } | undefined)?.code;
  return code === '3F000' || code === '42P01' || code === '42703';
}

/**
 * PostgreSQL: the migrator's own tables live in the current schema, named explicitly. Without a
 * schema kysely looks for them in every schema of the database, so another schema's
 * `kysely_migration_lock` (a second deployment, a test or benchmark run beside this one) would be
 * taken for this one's and the migration would fail.
 */
// biome-ignore lint/suspicious/noExplicitAny: the migrator works on any schema
async function migrationTableSchema(db: Kysely<any>): Promise<{ migrationTableSchema?: string }> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return {};
  const { rows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(db);
  const schema = rows[0]?.schema;
  return schema ? { migrationTableSchema: schema } : {};
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const config = loadConfig();
  const handle = openDatabase({ url: config.database_url, sqliteFile: sqliteFile(config) });
  try {
    const applied = await migrateToLatest(handle.db);
    process.stdout.write(
      `${handle.dialect}: ${applied.length ? `applied ${applied.join(', ')}` : 'already up to date'}\n`,
    );
  } finally {
    await handle.close();
  }
}
