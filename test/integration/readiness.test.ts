/**
 * Readiness is not liveness (both dialects): a database that lacks a migration this version ships
 * makes `GET {public_api_url}/health/ready` answer 503 `migrations_pending` while `/health` stays 200.
 * (Draining is covered with a real process in graceful-shutdown.test.ts.)
 */
import { afterEach, describe, expect, it } from 'vitest';
import { migrationNames } from '../../db/migrate.ts';
import { createTestDatabase, dialects, type TestDatabase } from '../helpers/databases.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

describe.each(dialects)('readiness (%s)', (dialect) => {
  let service: TestService | undefined;
  let database: TestDatabase | undefined;

  afterEach(async () => {
    await service?.close();
    await database?.drop();
  });

  it('answers 200 when ready and 503 migrations_pending when a shipped migration is not applied', async () => {
    database = await createTestDatabase(dialect);
    service = await startTestService(dialect, {}, { database });
    const api = service.config.public_api_url;

    const ready = await fetch(`${api}/health/ready`);
    expect(ready.status).toBe(200);
    expect((await ready.json()).failed).toEqual([]);

    const latest = (await migrationNames()).at(-1) as string;
    // biome-ignore lint/suspicious/noExplicitAny: the migrator's own table is not in the schema
    await (database.handle.db as any).deleteFrom('kysely_migration').where('name', '=', latest).execute();

    const pending = await fetch(`${api}/health/ready`);
    expect(pending.status).toBe(503);
    expect(await pending.json()).toEqual({
      ready: false,
      failed: ['migrations_pending'],
      checks: { database: true, migrations: false, draining: false },
    });
    expect((await fetch(`${api}/health`)).status).toBe(200);
  });
});
