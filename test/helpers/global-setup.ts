/**
 * Once per run: the migrated SQLite template every test database is copied from, and, under CI, an
 * unreachable PostgreSQL is a failure, not a skip: CI must set TEST_DATABASE_URL and the database
 * must answer before any suite runs.
 */
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { createSqliteTemplate } from './databases.ts';

export default async function setup(project: TestProject): Promise<() => void> {
  const template = await createSqliteTemplate();
  project.provide('sqliteTemplate', template.file);
  await checkPostgres();
  return template.remove;
}

async function checkPostgres(): Promise<void> {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) {
    if (process.env.CI === 'true')
      throw new Error('CI=true but TEST_DATABASE_URL is not set: the PostgreSQL suites must run');
    return;
  }
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
    await client.query('select 1');
  } catch (err) {
    throw new Error(`TEST_DATABASE_URL is set but PostgreSQL is unreachable: ${(err as Error).message}`);
  } finally {
    await client.end().catch(() => {});
  }
}
