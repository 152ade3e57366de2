/** Starts the real service on port 0 against a test database. */
import { type Logger, pino } from 'pino';
import type { Dialect } from '../../db/database.ts';
import { loadBrands } from '../../servers/features/charges/brand-registry.ts';
import { BrandMatcher } from '../../servers/features/charges/matcher.ts';
import type { AnyOperation } from '../../servers/operation.ts';
import { type RunningService, startService } from '../../servers/server.ts';
import { createTestDatabase, type TestDatabase } from './databases.ts';

let sharedBrands: BrandMatcher | undefined;
/** The shipped registry, indexed once per test process. */
export function shippedBrands(): BrandMatcher {
  sharedBrands ??= new BrandMatcher(loadBrands());
  return sharedBrands;
}

export interface TestService extends RunningService {
  db: TestDatabase;
  close(): Promise<void>;
}

export async function startTestService(
  dialect: Dialect,
  overrides: Record<string, unknown> = {},
  options: {
    background?: boolean;
    database?: TestDatabase;
    operations?: readonly AnyOperation[];
    /** The environment providers' keys are read from (the variables the configuration names). */
    env?: NodeJS.ProcessEnv;
    /** The services' clock (move it instead of sleeping). */
    now?: () => Date;
    /** Where the service logs (default: nowhere, or TEST_LOG_LEVEL to stdout). */
    log?: Logger;
  } = {},
): Promise<TestService> {
  const db = options.database ?? (await createTestDatabase(dialect));
  const service = await startService({
    env: options.env ?? {},
    overrides: {
      port: 0,
      host: '127.0.0.1',
      data_dir: '/nonexistent',
      'outbound.allow_private_networks': true,
      'returns.delivery.poll_interval_ms': 50,
      'returns.delivery.base_delay_ms': 50,
      'marketplace.delivery.poll_interval_ms': 50,
      'marketplace.delivery.base_delay_ms': 50,
      ...overrides,
    },
    database: db.handle,
    brands: shippedBrands(),
    log: options.log ?? pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }),
    background: options.background ?? true,
    ...(options.operations ? { operations: options.operations } : {}),
    ...(options.now ? { now: options.now } : {}),
  });
  return {
    ...service,
    db,
    async close() {
      await service.stop();
      if (!options.database) await db.drop();
    },
  };
}
