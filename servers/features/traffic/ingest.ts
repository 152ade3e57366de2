/**
 * The ingestion pipeline, the service's highest-volume write path.
 *
 * Events wait in a bounded in-memory queue and are written in batches: one transaction inserts
 * the raw events and upserts every rollup they touch, so a reader never sees one without the
 * other. A batch is flushed when `flush_max_events` are waiting, after `flush_interval_ms`, or at
 * once when a caller waits for durability.
 *
 * Durability, decided per caller:
 * - the beacon is acknowledged when its event is queued (a page must never wait on our database);
 *   a clean shutdown (SIGTERM, `stop()`) drains the queue before the database closes, so no
 *   acknowledged event is lost then - only a crash of the process can lose the events of the
 *   last `flush_interval_ms`;
 * - server-side batches (`POST /events`) are answered 2xx only after their transaction committed;
 *   a batch is never split across transactions.
 *
 * Overload: the queue holds at most `queue_max_events` (queued plus being written). Beyond that
 * the caller gets 503 with `Retry-After` and the event is not taken: memory stays bounded and
 * the process keeps serving everything else.
 */

import { randomUUID } from 'node:crypto';
import type { Database as SQLiteClient, Statement as SQLiteStatement } from 'better-sqlite3';
import { CompiledQuery, type Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { DatabaseHandle, Dialect } from '../../../db/database.ts';
import type { Database } from '../../../db/schema.ts';
import { ServiceError } from '../../errors.ts';
import { claimKey, type IdempotencyRecord } from '../../idempotency.ts';

/** One classified event, ready to store. */
export interface PreparedEvent {
  site_id: string;
  occurred_at: string;
  received_at: string;
  source: 'beacon' | 'server';
  category: string;
  agent: string | null;
  operator: string | null;
  path: string;
  referrer_host: string | null;
  status: number | null;
  ip_prefix: string | null;
  user_agent: string;
}

export interface IngestOptions {
  /** How rows are written (`batchWriter`). */
  write: BatchWriter;
  queueMaxEvents: number;
  flushMaxEvents: number;
  flushIntervalMs: number;
}

interface Group {
  events: PreparedEvent[];
  done?: { resolve: (outcome: DurableOutcome) => void; reject: (err: unknown) => void };
  /**
   * A `POST /events` sent with an `Idempotency-Key`: its key is recorded in the transaction that
   * writes its events, and a group whose key a concurrent request committed first is left out.
   */
  claim?: IdempotencyRecord;
  /**
   * The batch this group was last written in, when that write's outcome is unknown (the
   * connection was lost, perhaps during its COMMIT): retried as the same batch, which its id
   * keeps from being written twice.
   */
  batch?: string;
}

/** What a durable enqueue came to: written, or left out since its idempotency key was taken. */
export type DurableOutcome = 'written' | 'duplicate';

/** Rows per unnest() INSERT on PostgreSQL (array parameters, so only memory bounds it). */
const PG_CHUNK = 5000;
const HUMAN_CATEGORIES = new Set(['human', 'ai_referred']);

export class IngestQueue {
  readonly #db: Kysely<Database>;
  readonly #log: Logger;
  readonly #options: IngestOptions;
  #groups: Group[] = [];
  #queued = 0;
  #inFlight = 0;
  #flushing: Promise<void> | null = null;
  #timer: NodeJS.Timeout | null = null;
  #immediate = false;
  #closed = false;

  constructor(db: Kysely<Database>, log: Logger, options: IngestOptions) {
    this.#db = db;
    this.#log = log;
    this.#options = options;
  }

  /** Events held in memory (queued and being written). */
  get size(): number {
    return this.#queued + this.#inFlight;
  }

  /** Queues events; they are written in a later batch. Throws 503 when full or shutting down. */
  enqueue(events: PreparedEvent[]): void {
    this.#admit(events.length);
    this.#groups.push({ events });
    this.#queued += events.length;
    this.#schedule(this.#queued >= this.#options.flushMaxEvents);
  }

  /**
   * Queues events and resolves once the transaction holding them committed; with `claim`, that
   * transaction records the idempotency key too, or leaves the events out (`duplicate`) when a
   * concurrent request with the key committed first.
   */
  enqueueDurable(events: PreparedEvent[], claim?: IdempotencyRecord): Promise<DurableOutcome> {
    this.#admit(events.length);
    return new Promise<DurableOutcome>((resolve, reject) => {
      this.#groups.push({ events, done: { resolve, reject }, ...(claim ? { claim } : {}) });
      this.#queued += events.length;
      this.#schedule(true);
    });
  }

  /** Stops taking events and writes everything queued. Retries a failing database a few times. */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    for (let attempt = 0; this.#groups.length > 0 || this.#flushing; attempt++) {
      if (this.#flushing) {
        await this.#flushing;
        continue;
      }
      await this.#flush();
      if (this.#groups.length > 0 && attempt >= 5) {
        this.#log.error(
          { events: this.#queued },
          'traffic: could not drain the ingestion queue; events lost',
        );
        break;
      }
      if (this.#groups.length > 0) await new Promise((resolve) => setTimeout(resolve, 200 * (attempt + 1)));
    }
  }

  /** Writes what is queued now (tests and benchmarks). */
  async flushNow(): Promise<void> {
    while (this.#flushing) await this.#flushing;
    while (this.#groups.length > 0) await this.#flush();
  }

  #admit(count: number): void {
    if (this.#closed) {
      throw new ServiceError('service_unavailable', {
        detail: 'The service is shutting down; send the events again shortly',
        headers: { 'Retry-After': '5' },
      });
    }
    if (this.size + count > this.#options.queueMaxEvents) {
      throw new ServiceError('service_unavailable', {
        detail: 'Event ingestion is over capacity; retry shortly',
        headers: { 'Retry-After': '1' },
      });
    }
  }

  #schedule(now: boolean): void {
    if (this.#closed) return;
    if (now) this.#immediate = true;
    if (this.#flushing) return;
    if (now) {
      if (this.#timer) clearTimeout(this.#timer);
      this.#timer = null;
      this.#flushing = this.#flush().finally(() => this.#afterFlush());
      return;
    }
    this.#timer ??= setTimeout(() => {
      this.#timer = null;
      if (!this.#flushing) this.#flushing = this.#flush().finally(() => this.#afterFlush());
    }, this.#options.flushIntervalMs);
  }

  #afterFlush(): void {
    this.#flushing = null;
    if (this.#groups.length === 0 || this.#closed) return;
    const urgent = this.#immediate || this.#queued >= this.#options.flushMaxEvents;
    this.#schedule(urgent);
  }

  /**
   * Takes whole groups up to `flush_max_events` (at least one) - or, first, the acknowledged groups
   * of a batch whose write had an unknown outcome, exactly - and writes them in one transaction.
   * The transaction records the batch's id (`traffic_batches`), so a batch whose COMMIT succeeded
   * although the connection was lost before its answer is not written again when retried.
   */
  async #flush(): Promise<void> {
    this.#immediate = false;
    const taken: Group[] = [];
    let count = 0;
    const retried = this.#groups[0]?.batch;
    while (this.#groups.length > 0) {
      const next = this.#groups[0] as Group;
      if (
        retried !== undefined
          ? next.batch !== retried
          : count > 0 && count + next.events.length > this.#options.flushMaxEvents
      )
        break;
      taken.push(next);
      this.#groups.shift();
      count += next.events.length;
      if (next.done) this.#immediate = true;
    }
    if (taken.length === 0) return;
    const batch = retried ?? randomUUID();
    this.#queued -= count;
    this.#inFlight += count;
    /** Groups the write left out: their idempotency key was already taken. */
    const duplicates = new Set<Group>();
    try {
      await this.#db.transaction().execute(async (trx) => {
        const recorded = await trx
          .insertInto('traffic_batches')
          .values({ id: batch, written_at: new Date().toISOString() })
          .onConflict((oc) => oc.column('id').doNothing())
          .executeTakeFirst();
        // Already written: the attempt whose answer was lost had committed.
        if (Number(recorded.numInsertedOrUpdatedRows ?? 0n) === 0) return;
        for (const group of taken) {
          if (group.claim && !(await claimKey(trx, group.claim, () => new Date()))) duplicates.add(group);
        }
        const kept = duplicates.size > 0 ? taken.filter((g) => !duplicates.has(g)) : taken;
        const events = kept.length === 1 ? (kept[0] as Group).events : kept.flatMap((g) => g.events);
        if (events.length > 0) await writeEvents(trx, events, this.#options.write);
      });
      for (const group of taken) group.done?.resolve(duplicates.has(group) ? 'duplicate' : 'written');
    } catch (err) {
      this.#log.error({ err, events: count }, 'traffic: batch write failed');
      const failure = new ServiceError('service_unavailable', {
        detail: 'The events could not be stored; send them again',
        headers: { 'Retry-After': '5' },
        cause: err,
      });
      // Waiting callers get the failure and resend; acknowledged beacons go back to the front, as
      // this same batch: its write may have committed all the same (its answer lost with the
      // connection), which the batch id tells on the next attempt.
      const retry = taken.filter((g) => !g.done).map((g) => ({ events: g.events, batch }));
      for (const group of taken) group.done?.reject(failure);
      this.#groups.unshift(...retry);
      this.#queued += retry.reduce((n, g) => n + g.events.length, 0);
    } finally {
      this.#inFlight -= count;
    }
  }
}

function dayOf(iso: string): string {
  return iso.slice(0, 10);
}

/** A table a batch writes, and for a rollup how a row already there takes the batch's row. */
interface TableWrite {
  table: string;
  /** Every column written, in order, with its PostgreSQL type (for `unnest`). */
  columns: Readonly<Record<string, string>>;
  /** A rollup's primary key: a row with the same key is merged (`ON CONFLICT ... DO UPDATE`). */
  key?: readonly string[];
  /** How the other columns of a merged row change; a column not named keeps its value. */
  merge?: Readonly<Record<string, 'add' | 'least' | 'greatest'>>;
}

const RAW_EVENTS: TableWrite = {
  table: 'traffic_events',
  columns: {
    site_id: 'uuid',
    occurred_at: 'timestamptz',
    received_at: 'timestamptz',
    source: 'text',
    category: 'text',
    agent: 'text',
    path: 'text',
    referrer_host: 'text',
    status: 'int',
    ip_prefix: 'text',
    user_agent: 'text',
  },
};

/** The rollups every read is served from (migration 2026-11-21T1500Z_traffic). */
const ROLLUPS = {
  daily: {
    table: 'traffic_daily',
    columns: {
      site_id: 'uuid',
      day: 'text',
      category: 'text',
      agent: 'text',
      operator: 'text',
      events: 'bigint',
    },
    key: ['site_id', 'day', 'category', 'agent'],
    merge: { events: 'add' },
  },
  pages: {
    table: 'traffic_pages_daily',
    columns: { site_id: 'uuid', day: 'text', category: 'text', path: 'text', events: 'bigint' },
    key: ['site_id', 'day', 'category', 'path'],
    merge: { events: 'add' },
  },
  hourly: {
    table: 'traffic_hourly',
    columns: { site_id: 'uuid', hour: 'text', source: 'text', events: 'bigint' },
    key: ['site_id', 'hour', 'source'],
    merge: { events: 'add' },
  },
  sources: {
    table: 'traffic_site_sources',
    columns: {
      site_id: 'uuid',
      source: 'text',
      first_event_at: 'timestamptz',
      last_event_at: 'timestamptz',
      events: 'bigint',
    },
    key: ['site_id', 'source'],
    merge: { events: 'add', first_event_at: 'least', last_event_at: 'greatest' },
  },
  network: {
    table: 'traffic_network_daily',
    columns: { day: 'text', category: 'text', agent: 'text', operator: 'text', events: 'bigint' },
    key: ['day', 'category', 'agent'],
    merge: { events: 'add' },
  },
  agentSites: {
    table: 'traffic_agent_sites',
    columns: { agent: 'text', site_id: 'uuid', first_seen_at: 'timestamptz', last_seen_at: 'timestamptz' },
    key: ['agent', 'site_id'],
    merge: { last_seen_at: 'greatest' },
  },
} as const satisfies Record<string, TableWrite>;

/**
 * Writes rows of a table (raw events, or a rollup's rows, merged into the rows already there) the
 * cheapest way each dialect allows, with SQL made once per table (`batchWriter`): on SQLite one
 * prepared statement run per row on the connection the surrounding transaction holds (synchronous);
 * on PostgreSQL one `INSERT ... SELECT FROM unnest(...)` per chunk, one array parameter per column
 * whatever the number of rows. Building and compiling the rollups' upserts with kysely cost about
 * twice the rest of a batch's work: with a beacon answered after its batch, that was most of it.
 */
export type BatchWriter = (
  trx: Kysely<Database>,
  table: TableWrite,
  rows: readonly object[],
) => Promise<void>;

/** `INSERT INTO <table> (<columns>) <rows>`, merging rows met again for a rollup. */
function insertSql(table: TableWrite, dialect: Dialect, rows: string): string {
  const insert = `insert into ${table.table} (${Object.keys(table.columns).join(', ')}) ${rows}`;
  if (!table.key) return insert;
  const set = Object.entries(table.merge ?? {}).map(([column, how]) => {
    const both = `${table.table}.${column}, excluded.${column}`;
    if (how === 'add') return `${column} = ${table.table}.${column} + excluded.${column}`;
    if (how === 'least') return `${column} = ${dialect === 'postgres' ? 'least' : 'min'}(${both})`;
    return `${column} = ${dialect === 'postgres' ? 'greatest' : 'max'}(${both})`;
  });
  return `${insert} on conflict (${table.key.join(', ')}) do update set ${set.join(', ')}`;
}

function sqliteWriter(client: SQLiteClient): BatchWriter {
  const statements = new Map<TableWrite, SQLiteStatement>();
  return async (_trx, table, rows) => {
    let statement = statements.get(table);
    if (!statement) {
      const columns = Object.keys(table.columns);
      statement = client.prepare(insertSql(table, 'sqlite', `values (${columns.map(() => '?').join(', ')})`));
      statements.set(table, statement);
    }
    const columns = Object.keys(table.columns);
    // Runs inside the kysely transaction: SQLite has one connection, and it is holding the BEGIN.
    for (const row of rows) statement.run(columns.map((c) => (row as Record<string, unknown>)[c]));
  };
}

function postgresWriter(): BatchWriter {
  const statements = new Map<TableWrite, string>();
  return async (trx, table, rows) => {
    let text = statements.get(table);
    if (!text) {
      const arrays = Object.values(table.columns).map((type, i) => `$${i + 1}::${type}[]`);
      text = insertSql(table, 'postgres', `select * from unnest(${arrays.join(', ')})`);
      statements.set(table, text);
    }
    const columns = Object.keys(table.columns);
    for (let i = 0; i < rows.length; i += PG_CHUNK) {
      const chunk = rows.slice(i, i + PG_CHUNK) as Record<string, unknown>[];
      await trx.executeQuery(
        CompiledQuery.raw(
          text,
          columns.map((c) => chunk.map((row) => row[c])),
        ),
      );
    }
  };
}

/** The writer for the database the service runs on. */
export function batchWriter(raw: DatabaseHandle['raw']): BatchWriter {
  return raw.kind === 'sqlite' ? sqliteWriter(raw.client) : postgresWriter();
}

/** Inserts raw events and upserts every rollup they touch. Call inside a transaction. */
export async function writeEvents(
  trx: Kysely<Database>,
  events: PreparedEvent[],
  write: BatchWriter,
): Promise<void> {
  await write(trx, RAW_EVENTS, events);

  const daily = new Map<
    string,
    { site_id: string; day: string; category: string; agent: string; operator: string | null; events: number }
  >();
  const pages = new Map<
    string,
    { site_id: string; day: string; category: string; path: string; events: number }
  >();
  const hourly = new Map<
    string,
    { site_id: string; hour: string; source: 'beacon' | 'server'; events: number }
  >();
  const sources = new Map<
    string,
    {
      site_id: string;
      source: 'beacon' | 'server';
      first_event_at: string;
      last_event_at: string;
      events: number;
    }
  >();
  const network = new Map<
    string,
    { day: string; category: string; agent: string; operator: string | null; events: number }
  >();
  const agentSites = new Map<
    string,
    { agent: string; site_id: string; first_seen_at: string; last_seen_at: string }
  >();

  for (const e of events) {
    const day = dayOf(e.occurred_at);
    const agent = e.agent ?? '';
    const bump = <T extends { events: number }>(map: Map<string, T>, key: string, make: () => T) => {
      const found = map.get(key);
      if (found) found.events++;
      else map.set(key, make());
    };
    bump(daily, `${e.site_id}|${day}|${e.category}|${agent}`, () => ({
      site_id: e.site_id,
      day,
      category: e.category,
      agent,
      operator: e.operator,
      events: 1,
    }));
    bump(pages, `${e.site_id}|${day}|${e.category}|${e.path}`, () => ({
      site_id: e.site_id,
      day,
      category: e.category,
      path: e.path,
      events: 1,
    }));
    const hour = e.received_at.slice(0, 13);
    bump(hourly, `${e.site_id}|${hour}|${e.source}`, () => ({
      site_id: e.site_id,
      hour,
      source: e.source,
      events: 1,
    }));
    const source = sources.get(`${e.site_id}|${e.source}`);
    if (source) {
      source.events++;
      if (e.received_at < source.first_event_at) source.first_event_at = e.received_at;
      if (e.received_at > source.last_event_at) source.last_event_at = e.received_at;
    } else {
      sources.set(`${e.site_id}|${e.source}`, {
        site_id: e.site_id,
        source: e.source,
        first_event_at: e.received_at,
        last_event_at: e.received_at,
        events: 1,
      });
    }
    bump(network, `${day}|${e.category}|${agent}`, () => ({
      day,
      category: e.category,
      agent,
      operator: e.operator,
      events: 1,
    }));
    if (e.agent && !HUMAN_CATEGORIES.has(e.category)) {
      const key = `${e.agent}|${e.site_id}`;
      const seen = agentSites.get(key);
      if (!seen) {
        agentSites.set(key, {
          agent: e.agent,
          site_id: e.site_id,
          first_seen_at: e.occurred_at,
          last_seen_at: e.occurred_at,
        });
      } else if (e.occurred_at > seen.last_seen_at) {
        seen.last_seen_at = e.occurred_at;
      }
    }
  }

  // Rows are written in key order so concurrent writers (several processes on PostgreSQL) take
  // row locks in the same order and cannot deadlock.
  const sorted = <T>(map: Map<string, T>) =>
    [...map.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, v]) => v);

  await write(trx, ROLLUPS.daily, sorted(daily));
  await write(trx, ROLLUPS.pages, sorted(pages));
  await write(trx, ROLLUPS.hourly, sorted(hourly));
  await write(trx, ROLLUPS.sources, sorted(sources));
  await write(trx, ROLLUPS.network, sorted(network));
  await write(trx, ROLLUPS.agentSites, sorted(agentSites));
}
