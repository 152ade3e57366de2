/** Traffic over the real service: an account with a site to send hits for, and what is stored. */
import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import { expect } from 'vitest';
import type { Database } from '../../db/schema.ts';
import type { TestDatabase } from './databases.ts';

/** A new account (`POST /account`) and a site of it (`POST /pixel-install`) on the service at `api`. */
export async function accountWithSite(
  api: string,
  domain: string,
  shareNetwork = false,
): Promise<{ key: string; siteId: string }> {
  const email = `owner-${domain}-${Math.random().toString(36).slice(2)}@example.com`;
  const account = await fetch(`${api}/account`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: 'correct horse battery' }),
  });
  expect(account.status).toBe(201);
  const key: string = (await account.json()).key.service_key;
  const install = await fetch(`${api}/pixel-install`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-service-key': key },
    body: JSON.stringify({ domain, share_network: shareNetwork }),
  });
  expect(install.status).toBeLessThan(300);
  return { key, siteId: (await install.json()).site_id };
}

/** The pages of the site's stored events, in order (one entry per event). */
export async function storedPaths(db: Kysely<Database>, siteId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('traffic_events')
    .select('path')
    .where('site_id', '=', siteId)
    .orderBy('path')
    .execute();
  return rows.map((r) => r.path);
}

/**
 * Holds every traffic write of a service sharing `database` until the returned function is
 * called: on SQLite a transaction holding the one write connection, on PostgreSQL one holding
 * `traffic_events` in EXCLUSIVE mode (inserts wait, reads do not). On SQLite reads outside
 * transactions wait for it too, so the service must need none meanwhile (a cached site).
 */
export async function holdTrafficWrites(database: TestDatabase): Promise<() => Promise<void>> {
  let release!: () => void;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let holding!: () => void;
  const held = new Promise<void>((resolve) => {
    holding = resolve;
  });
  const transaction = database.handle.db.transaction().execute(async (trx) => {
    if (database.dialect === 'postgres') await sql`lock table traffic_events in exclusive mode`.execute(trx);
    holding();
    await released;
  });
  await held;
  return async () => {
    release();
    await transaction;
  };
}
