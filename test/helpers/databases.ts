/**
 * Runs suites once per dialect (STYLE.md 10): SQLite always, PostgreSQL when TEST_DATABASE_URL is
 * set. Each opened database is private to its test file: a temporary SQLite file, or a fresh
 * PostgreSQL schema dropped afterwards.
 */
import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { inject } from 'vitest';
import { type DatabaseHandle, type Dialect, openDatabase, quoteIdent } from '../../db/database.ts';
import { migrateToLatest } from '../../db/migrate.ts';

export const postgresUrl = process.env.TEST_DATABASE_URL;

export const dialects: Dialect[] = postgresUrl ? ['sqlite', 'postgres'] : ['sqlite'];

export interface TestDatabase {
  dialect: Dialect;
  handle: DatabaseHandle;
  /** Environment that points a child process at the same database. */
  env: Record<string, string>;
  /** Closes the handle and removes the data. */
  drop(): Promise<void>;
}

export async function createTestDatabase(
  dialect: Dialect,
  options: { migrate?: boolean } = {},
): Promise<TestDatabase> {
  let db: TestDatabase;
  if (dialect === 'postgres') {
    if (!postgresUrl) throw new Error('TEST_DATABASE_URL is not set');
    const schema = `t_${randomBytes(6).toString('hex')}`;
    const admin = new pg.Client({ connectionString: postgresUrl });
    await admin.connect();
    await admin.query(`create schema ${quoteIdent(schema)}`);
    await admin.end();
    const handle = openDatabase({ url: postgresUrl, schema, poolSize: 5 });
    const url = new URL(postgresUrl);
    url.searchParams.set('options', `-c search_path=${schema}`);
    db = {
      dialect,
      handle,
      env: { DATABASE_URL: url.toString() },
      async drop() {
        await handle.close();
        const cleanup = new pg.Client({ connectionString: postgresUrl });
        await cleanup.connect();
        await cleanup.query(`drop schema ${quoteIdent(schema)} cascade`);
        await cleanup.end();
      },
    };
  } else {
    const dir = mkdtempSync(path.join(tmpdir(), 'agent-service-test-'));
    const file = path.join(dir, 'service.db');
    if (options.migrate !== false) copyFileSync(await migratedSqliteTemplate(), file);
    const handle = openDatabase({ sqliteFile: file });
    db = {
      dialect,
      handle,
      env: { DATA_DIR: dir },
      async drop() {
        await handle.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  if (options.migrate !== false && dialect === 'postgres') await migrateToLatest(db.handle.db);
  return db;
}

/**
 * A SQLite file migrated once for the whole run (`global-setup.ts` provides it), copied for each
 * migrated test database: the bytes `migrateToLatest` writes (closing its handle checkpoints the
 * WAL into the file), without 30-odd committed, fsynced migrations for each of the suite's ~150
 * SQLite databases. Outside a vitest run, one is made for the process. `migrate: false` databases
 * still see every migration run (the migration tests use them).
 */
function migratedSqliteTemplate(): Promise<string> {
  const provided = inject('sqliteTemplate');
  if (provided) return Promise.resolve(provided);
  sqliteTemplate ??= createSqliteTemplate().then(({ file, remove }) => {
    process.once('exit', remove);
    return file;
  });
  return sqliteTemplate;
}
let sqliteTemplate: Promise<string> | undefined;

/** Migrates a fresh SQLite file to the latest schema; `remove` deletes it. */
export async function createSqliteTemplate(): Promise<{ file: string; remove: () => void }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'agent-service-template-'));
  const file = path.join(dir, 'service.db');
  const handle = openDatabase({ sqliteFile: file });
  await migrateToLatest(handle.db);
  await handle.close();
  return { file, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

declare module 'vitest' {
  export interface ProvidedContext {
    /** The migrated SQLite file test databases are copied from (`createSqliteTemplate`). */
    sqliteTemplate: string;
  }
}
