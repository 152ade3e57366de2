/**
 * Prometheus metrics (`{site_url}/metrics` when `metrics.enabled`), in the text exposition format
 * written by prom-client. Operations are counted and timed where every adapter runs them
 * (`invokeOperation`); queue depths and ages are read from the database at scrape time, so they are
 * the deployment's, whichever process answers; event-loop lag and the process's own figures come
 * from prom-client's default collectors.
 */
import type { RequestHandler } from 'express';
import { type Kysely, sql } from 'kysely';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { Database } from '../db/schema.ts';

export interface MetricsDeps {
  db: Kysely<Database>;
  now: () => Date;
  /** Traffic events acknowledged and held in memory, not yet written. */
  trafficQueueDepth: () => number;
}

const PREFIX = 'agent_service_';

export class Metrics {
  readonly registry = new Registry();
  readonly #operations: Counter<'operation' | 'via' | 'status'>;
  readonly #durations: Histogram<'operation' | 'via' | 'status'>;

  constructor(deps: MetricsDeps) {
    const registers = [this.registry];
    // The process id tells workers apart (`WORKERS=N`): each scrape answers from one of them.
    this.registry.setDefaultLabels({ pid: String(process.pid) });
    collectDefaultMetrics({ register: this.registry, prefix: PREFIX });
    this.#operations = new Counter({
      name: `${PREFIX}operation_requests_total`,
      help: 'Operations run, by operation, adapter (rest, mcp) and HTTP status of the outcome.',
      labelNames: ['operation', 'via', 'status'],
      registers,
    });
    this.#durations = new Histogram({
      name: `${PREFIX}operation_duration_seconds`,
      help: 'Time to run an operation (access, input, payment, handler), by operation, adapter and status.',
      labelNames: ['operation', 'via', 'status'],
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    const { db, now } = deps;
    new Gauge({
      name: `${PREFIX}payments`,
      help: 'x402 payments in the ledger, by status (reserved, authorized, settled, failed, released, reconciling).',
      labelNames: ['status'],
      registers,
      async collect() {
        const rows = await db
          .selectFrom('payments')
          .select(['status', sql<number>`count(*)`.as('n')])
          .groupBy('status')
          .execute();
        this.reset();
        for (const row of rows) this.set({ status: row.status }, Number(row.n));
      },
    });
    new Gauge({
      name: `${PREFIX}queue_depth`,
      help:
        'Work waiting: traffic_ingest (events taken, in this process, waiting for their write), deliveries ' +
        '(brand outbox, pending), security_events (SET outbox, pending), scans (queued).',
      labelNames: ['queue'],
      registers,
      async collect() {
        const [deliveries, securityEvents, scans] = await Promise.all([
          countWhere(db, 'deliveries', 'state', 'pending'),
          countWhere(db, 'ssf_deliveries', 'state', 'pending'),
          countWhere(db, 'scans', 'status', 'queued'),
        ]);
        this.set({ queue: 'traffic_ingest' }, deps.trafficQueueDepth());
        this.set({ queue: 'deliveries' }, deliveries);
        this.set({ queue: 'security_events' }, securityEvents);
        this.set({ queue: 'scans' }, scans);
      },
    });
    new Gauge({
      name: `${PREFIX}outbox_lag_seconds`,
      help: 'How long the oldest pending delivery that is due has been waiting past its due time (0: none due).',
      labelNames: ['outbox'],
      registers,
      async collect() {
        const at = now().toISOString();
        const [deliveries, securityEvents] = await Promise.all([
          oldestDue(db, 'deliveries', at),
          oldestDue(db, 'ssf_deliveries', at),
        ]);
        this.set({ outbox: 'deliveries' }, secondsSince(deliveries, now()));
        this.set({ outbox: 'security_events' }, secondsSince(securityEvents, now()));
      },
    });
    new Gauge({
      name: `${PREFIX}scan_queue_age_seconds`,
      help: 'Age of the oldest queued scan (0: none queued).',
      registers,
      async collect() {
        const row = await db
          .selectFrom('scans')
          .select((eb) => eb.fn.min('requested_at').as('oldest'))
          .where('status', '=', 'queued')
          .executeTakeFirst();
        this.set(secondsSince((row?.oldest as string | null | undefined) ?? null, now()));
      },
    });
  }

  /** One operation run: its outcome's HTTP status and how long it took from `startedMs` (performance.now()). */
  observeOperation(operation: string, via: string, status: number, startedMs: number): void {
    const labels = { operation, via, status: String(status) };
    this.#operations.inc(labels);
    this.#durations.observe(labels, (performance.now() - startedMs) / 1000);
  }

  /** `GET {site_url}/metrics`. */
  handler(): RequestHandler {
    return (_req, res, next) => {
      this.registry.metrics().then((text) => {
        res.setHeader('Cache-Control', 'no-store');
        res.type(this.registry.contentType).send(text);
      }, next);
    };
  }
}

async function countWhere(
  db: Kysely<Database>,
  table: 'deliveries' | 'ssf_deliveries' | 'scans',
  column: 'state' | 'status',
  value: string,
): Promise<number> {
  const row = await db
    .selectFrom(table)
    .select(sql<number>`count(*)`.as('n'))
    .where(sql.ref(column), '=', value)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

async function oldestDue(
  db: Kysely<Database>,
  table: 'deliveries' | 'ssf_deliveries',
  at: string,
): Promise<string | null> {
  const row = await db
    .selectFrom(table)
    .select((eb) => eb.fn.min('next_attempt_at').as('oldest'))
    .where('state', '=', 'pending')
    .where('next_attempt_at', '<=', at)
    .executeTakeFirst();
  return (row?.oldest as string | null | undefined) ?? null;
}

function secondsSince(iso: string | null, now: Date): number {
  if (!iso) return 0;
  return Math.max(0, (now.getTime() - Date.parse(iso)) / 1000);
}
