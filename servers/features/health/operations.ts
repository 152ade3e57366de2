import { sql } from 'kysely';
import { z } from 'zod';
import { pingDatabase } from '../../../db/database.ts';
import { migrationNames } from '../../../db/migrate.ts';
import { serviceVersion } from '../../config.ts';
import { defineOperation, type OperationContext } from '../../operation.ts';

export const HealthReport = z.object({
  status: z
    .enum(['ok', 'degraded'])
    .describe('degraded when the database cannot be reached (still 200: the process itself is alive).'),
  version: z.string().describe('Service version (package.json).'),
  time: z.iso.datetime(),
  database: z.object({
    dialect: z.enum(['sqlite', 'postgres']),
    reachable: z.boolean(),
    latency_ms: z.number().nullable(),
  }),
});

export const getHealth = defineOperation({
  name: 'getHealth',
  title: 'Service health',
  description:
    'Liveness: the process answers, with its version and whether its database is reachable. Always 200 while ' +
    'the process runs - a database outage is `degraded`, not a reason to restart the process (it recovers by ' +
    'itself once the database is back); whether to send it traffic is GET /health/ready.',
  input: z.strictObject({}),
  output: HealthReport,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  access: 'public',
  http: {
    surface: 'public_api',
    method: 'GET',
    path: '/health',
    input: 'query',
  },
  tags: ['service'],
  handler: async (ctx) => {
    const started = performance.now();
    let reachable = true;
    try {
      await pingDatabase(ctx.services.db);
    } catch (err) {
      ctx.log.warn({ err }, 'health: database unreachable');
      reachable = false;
    }
    return {
      status: reachable ? ('ok' as const) : ('degraded' as const),
      version: serviceVersion,
      time: new Date().toISOString(),
      database: {
        dialect: ctx.services.dialect,
        reachable,
        latency_ms: reachable ? Math.round((performance.now() - started) * 100) / 100 : null,
      },
    };
  },
});

export const ReadinessReport = z.object({
  ready: z.boolean().describe('true: this process takes traffic (200); false: 503, `failed` says why.'),
  failed: z
    .array(z.enum(['database_unreachable', 'migrations_pending', 'draining']))
    .describe(
      'What is not ready: the database cannot be reached, migrations this version ships are not applied ' +
        'to it, or the process is draining after SIGTERM (finishing in-flight work before it exits).',
    ),
  checks: z.object({
    database: z.boolean().describe('A round trip to the database succeeded.'),
    migrations: z.boolean().describe("Every migration of this version is in the database's migration table."),
    draining: z.boolean().describe('The process received SIGTERM and takes no new work.'),
  }),
});
export type ReadinessReport = z.infer<typeof ReadinessReport>;

let shippedMigrations: Promise<string[]> | undefined;

/** Whether every migration this version ships is recorded as applied in the database. */
async function migrationsApplied(services: OperationContext['services']): Promise<boolean> {
  shippedMigrations ??= migrationNames();
  const shipped = await shippedMigrations;
  const { rows } = await sql<{ name: string }>`select name from kysely_migration`.execute(services.db);
  const applied = new Set(rows.map((r) => r.name));
  return shipped.every((name) => applied.has(name));
}

export const getReadiness = defineOperation({
  name: 'getReadiness',
  title: 'Service readiness',
  description:
    'Whether this process should get traffic: database reachable, migrations applied, not draining after ' +
    'SIGTERM. 200 when ready, 503 naming what failed. Liveness is GET /health (the process answers at all).',
  input: z.strictObject({}),
  output: ReadinessReport,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  access: 'public',
  http: {
    surface: 'public_api',
    method: 'GET',
    path: '/health/ready',
    input: 'query',
    status: (report) => (report.ready ? 200 : 503),
    otherStatuses: { 503: 'Not ready (same body as 200, `failed` lists why).' },
  },
  tags: ['service'],
  handler: async (ctx) => {
    const { services } = ctx;
    let database = true;
    let migrations = false;
    try {
      await pingDatabase(services.db);
      migrations = await migrationsApplied(services);
    } catch (err) {
      ctx.log.warn({ err }, 'readiness: database check failed');
      database = false;
    }
    const draining = services.lifecycle.draining;
    const failed: ReadinessReport['failed'] = [];
    if (!database) failed.push('database_unreachable');
    else if (!migrations) failed.push('migrations_pending');
    if (draining) failed.push('draining');
    return { ready: failed.length === 0, failed, checks: { database, migrations, draining } };
  },
});

export const healthOperations = [getHealth, getReadiness];
