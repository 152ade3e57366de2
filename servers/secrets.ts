/**
 * Secrets the service needs but nobody has to configure: generated on first start, stored in the
 * database so every process sharing it uses the same value, never logged or shown.
 */
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.ts';

export async function serviceSecret(db: Kysely<Database>, name: string, bytes = 32): Promise<string> {
  await db
    .insertInto('service_secrets')
    .values({ name, value: randomBytes(bytes).toString('base64url'), created_at: new Date().toISOString() })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
  const row = await db
    .selectFrom('service_secrets')
    .select('value')
    .where('name', '=', name)
    .executeTakeFirstOrThrow();
  return row.value;
}
