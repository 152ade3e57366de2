import { z } from 'zod';
import { pingDatabase } from '../../../db/database.ts';
import { serviceVersion } from '../../config.ts';
import { defineOperation } from '../../operation.ts';

export const HealthReport = z.object({
  status: z.enum(['ok', 'degraded']).describe('degraded when the database cannot be reached.'),
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
  description: 'Version of the service and whether its database is reachable. Answers 503 when degraded.',
  input: z.strictObject({}),
  output: HealthReport,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  access: 'public',
  http: {
    surface: 'public_api',
    method: 'GET',
    path: '/health',
    input: 'query',
    status: (report) => (report.status === 'ok' ? 200 : 503),
    otherStatuses: { 503: 'Degraded (same body as 200).' },
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

export const healthOperations = [getHealth];
