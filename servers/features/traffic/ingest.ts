/**
 * The ingestion pipeline, the service's highest-volume write path.
 *
 * Every caller - a beacon hit, a server-side batch (`POST /events`) - is answered after the
 * transaction holding its events committed, so nothing answered 2xx is lost when a service process
 * crashes. How far past the commit a caller waits is its `Acknowledgement`: a server-side batch
 * waits for the disk (on SQLite the WAL sync, `db/sqlite-group-commit.ts`; on PostgreSQL its
 * synchronous commit), so it survives a crash of the machine too; a pixel hit is answered at commit
 * (SQLite: COMMIT wrote the WAL; PostgreSQL: asynchronous commit), and only a crash of the
 * database's machine within the next sync may lose it. One transaction inserts the raw events and upserts every rollup they
 * touch, so a reader never sees one without the other; a batch is never split across transactions.
 *
 * Group commit: events wait in a bounded in-memory queue. When one arrives and no write is running,
 * a write starts as soon as the requests read in the same turn of the event loop are queued too
 * (`setImmediate`), and takes everything queued, up to `flush_max_events`; what arrives meanwhile
 * goes into the next write, which starts when this one ends. A lone hit waits for one transaction;
 * under load the writes grow and their cost per event falls.
 *
 * Failure: a write that fails, or has not committed within `write_timeout_ms` (a database that
 * does not answer), is answered 503 with `Retry-After` to each of its callers, never retried
 * behind their back: a hit is counted and acknowledged, or refused. A write that timed out may
 * still commit later - its events are then counted without having been acknowledged, never the
 * other way round; the next write does not wait for it.
 *
 * Overload: the queue holds at most `queue_max_events` (queued plus being written). Beyond that
 * the caller gets 503 with `Retry-After` and the events are not taken: memory stays bounded and
 * the process keeps serving everything else. A clean shutdown (`close()`) stops taking events and
 * waits for the writes of those already taken.
 */

import type { Database as SQLiteClient, Statement as SQLiteStatement } from 'better-sqlite3';
import { CompiledQuery, type Kysely } from 'kysely';
import type pg from 'pg';
import type { Logger } from 'pino';
import type { DatabaseHandle, Dialect } from '../../../db/database.ts';
import type { Database } from '../../../db/schema.ts';
import { acknowledgeAtCommit } from '../../../db/sqlite-group-commit.ts';
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
  /** How rows are written in a transaction that also records idempotency keys (`batchWriter`). */
  write: BatchWriter;
  /** How a write none of whose callers carries an idempotency key runs (`standaloneWriter`). */
  standalone: StandaloneWriter;
  queueMaxEvents: number;
  flushMaxEvents: number;
  /** Longest a write may take before its callers are answered 503. */
  writeTimeoutMs: number;
}

/** The events of one caller, and how it is answered. */
interface Group {
  events: PreparedEvent[];
  resolve: (outcome: DurableOutcome) => void;
  reject: (err: unknown) => void;
  /**
   * A `POST /events` sent with an `Idempotency-Key`: its key is recorded in the transaction that
   * writes its events, and a group whose key a concurrent request committed first is left out.
   */
  claim: IdempotencyRecord | undefined;
  /** Answered once its write committed, without waiting for the commit to reach the disk. */
  atCommit: boolean;
}

/**
 * When a caller is answered: `disk` once its write is on disk (a crash of the machine keeps it),
 * `commit` once its write committed - in the database's log, which a crash of any service process
 * keeps, with the sync to disk following at once for the whole group. A tracking pixel's hit is
 * answered at commit (a browser sends it once and waits for nothing, and a 32-connection pixel
 * load would otherwise be bound by the disk's sync latency: 0.3x of bare Express here against ~1x);
 * everything else on disk.
 */
export type Acknowledgement = 'disk' | 'commit';

/** What an enqueue came to: written, or left out since its idempotency key was taken. */
export type DurableOutcome = 'written' | 'duplicate';

const HUMAN_CATEGORIES = new Set(['human', 'ai_referred']);
/** Seconds a caller whose events could not be written is asked to wait before sending them again. */
const RETRY_AFTER_S = '5';

export class IngestQueue {
  readonly #db: Kysely<Database>;
  readonly #log: Logger;
  readonly #options: IngestOptions;
  #groups: Group[] = [];
  #queued = 0;
  #inFlight = 0;
  /** The write running now (null: none); the next one starts when it ends. */
  #writing: Promise<void> | null = null;
  #scheduled = false;
  /** Writes that outlived `writeTimeoutMs`: their callers were answered; `close()` waits for them. */
  readonly #overdue = new Set<Promise<void>>();
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

  /**
   * Queues events and resolves once the transaction holding them committed; with `claim`, that
   * transaction records the idempotency key too, or leaves the events out (`duplicate`) when a
   * concurrent request with the key committed first. Throws 503 at once when the queue is full or
   * shutting down; rejects with 503 when the write failed or timed out.
   */
  enqueue(
    events: PreparedEvent[],
    claim?: IdempotencyRecord,
    acknowledgement: Acknowledgement = 'disk',
  ): Promise<DurableOutcome> {
    this.#admit(events.length);
    return new Promise<DurableOutcome>((resolve, reject) => {
      this.#groups.push({ events, resolve, reject, claim, atCommit: acknowledgement === 'commit' });
      this.#queued += events.length;
      this.#schedule();
    });
  }

  /** Stops taking events, writes those taken, and waits for every write still running. */
  async close(): Promise<void> {
    this.#closed = true;
    while (this.#groups.length > 0 || this.#writing) {
      this.#startWrite();
      await this.#writing;
    }
    await Promise.all(this.#overdue);
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

  /**
   * A write of what is queued, once the requests read in this turn of the event loop are queued
   * too - unless one is running: the next starts when it ends. One at a time: measured in process
   * (32 callers, SQLite), a second write started while the first waits for its WAL sync split the
   * waiting events into smaller writes and took a third as many events a second.
   */
  #schedule(): void {
    if (this.#scheduled || this.#writing) return;
    this.#scheduled = true;
    setImmediate(this.#startWrite);
  }

  readonly #startWrite = (): void => {
    this.#scheduled = false;
    if (this.#groups.length === 0 || this.#writing) return;
    this.#writing = this.#writeNext().finally(() => {
      this.#writing = null;
      if (this.#groups.length > 0) this.#schedule();
    });
  };

  /**
   * Takes whole groups up to `flush_max_events` (at least one) and writes them in one transaction,
   * answering each; gives up waiting for it after `writeTimeoutMs`, answering each 503.
   */
  async #writeNext(): Promise<void> {
    let count = 0;
    let end = 0;
    for (; end < this.#groups.length; end++) {
      const size = (this.#groups[end] as Group).events.length;
      if (count > 0 && count + size > this.#options.flushMaxEvents) break;
      count += size;
    }
    const taken = this.#groups.splice(0, end);
    this.#queued -= count;
    this.#inFlight += count;
    const write = this.#write(taken, count);
    let timer: NodeJS.Timeout | undefined;
    const overdue = new Promise<true>((resolve) => {
      timer = setTimeout(() => resolve(true), this.#options.writeTimeoutMs);
    });
    const late = await Promise.race([write, overdue]);
    clearTimeout(timer);
    if (late !== true) return;
    this.#log.error(
      { events: count, timeout_ms: this.#options.writeTimeoutMs },
      'traffic: batch write did not finish in time; its callers are answered 503',
    );
    const failure = unavailable(undefined);
    for (const group of taken) group.reject(failure);
    this.#overdue.add(write);
    void write.then(() => this.#overdue.delete(write));
  }

  /**
   * One transaction for `taken`; each group resolved once it committed, or rejected with 503 - after
   * its events left the queue's count, so a caller answered sees them gone.
   */
  async #write(taken: Group[], count: number): Promise<void> {
    /** Groups the write left out: their idempotency key was already taken. */
    const duplicates = new Set<Group>();
    // No idempotency key to record: one write of its own, answered at commit only when every
    // caller is (a pixel hit); one caller who must hear of the disk makes the whole write wait for it.
    const claimed = taken.some((group) => group.claim !== undefined);
    const acknowledgement: Acknowledgement = taken.every((group) => group.atCommit) ? 'commit' : 'disk';
    const transaction = () =>
      this.#db.transaction().execute(async (trx) => {
        for (const group of taken) {
          if (group.claim && !(await claimKey(trx, group.claim, () => new Date()))) duplicates.add(group);
        }
        const kept = duplicates.size > 0 ? taken.filter((g) => !duplicates.has(g)) : taken;
        const events = kept.length === 1 ? (kept[0] as Group).events : kept.flatMap((g) => g.events);
        if (events.length > 0) await writeEvents(trx, events, this.#options.write);
      });
    try {
      await (claimed ? transaction() : this.#options.standalone(this.#db, eventsOf(taken), acknowledgement));
      this.#inFlight -= count;
      for (const group of taken) group.resolve(duplicates.has(group) ? 'duplicate' : 'written');
    } catch (err) {
      this.#inFlight -= count;
      this.#log.error({ err, events: count }, 'traffic: batch write failed');
      const failure = unavailable(err);
      for (const group of taken) group.reject(failure);
    }
  }
}

const eventsOf = (groups: Group[]): PreparedEvent[] =>
  groups.length === 1 ? (groups[0] as Group).events : groups.flatMap((g) => g.events);

/** The 503 of events that were not (or not in time) written: the caller may send them again. */
function unavailable(cause: unknown): ServiceError {
  return new ServiceError('service_unavailable', {
    detail: 'The events could not be stored; send them again',
    headers: { 'Retry-After': RETRY_AFTER_S },
    ...(cause === undefined ? {} : { cause }),
  });
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
 * Writes a batch - its raw events and the rows of each rollup it touches, merged into the rows
 * already there - the cheapest way each dialect allows, with SQL made once (`batchWriter`): on
 * SQLite one prepared statement per table, run per row on the connection the surrounding
 * transaction holds (synchronous); on PostgreSQL one statement for the whole batch, an
 * `INSERT ... SELECT FROM unnest(...)` per table in a `WITH`, one array parameter per column
 * whatever the number of rows - one round trip instead of one per table. Building and compiling
 * the rollups' upserts with kysely cost more than the rest of a batch's work (in process on
 * SQLite, about 1.2 of 2 ms a write): with a beacon answered after its batch, that is paid per hit.
 */
export type BatchWriter = (trx: Kysely<Database>, rows: BatchRows) => Promise<void>;

/** The tables a batch writes, in the order every writer writes them. */
const BATCH_TABLES = [
  RAW_EVENTS,
  ROLLUPS.daily,
  ROLLUPS.pages,
  ROLLUPS.hourly,
  ROLLUPS.sources,
  ROLLUPS.network,
  ROLLUPS.agentSites,
] as const;

/** One list of rows per table of `tables`, in its order. */
type RowsOf<T extends readonly unknown[]> = { readonly [I in keyof T]: readonly object[] };
/** The rows of a batch, table by table in the order of `BATCH_TABLES`. */
type BatchRows = RowsOf<typeof BATCH_TABLES>;

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

const columnsOf = (table: TableWrite) => Object.keys(table.columns);

/** Most rows one SQLite INSERT statement carries (11 columns each: far below SQLite's 32,766 parameters). */
const SQLITE_ROWS_PER_INSERT = 64;

/** The SQLite writer of each connection: its statements are prepared once, whoever writes. */
const sqliteWriters = new WeakMap<SQLiteClient, BatchWriter>();

/**
 * SQLite: one multi-row `INSERT ... VALUES (...), (...)` per table and up to
 * `SQLITE_ROWS_PER_INSERT` rows, prepared once for each number of rows met (at most 64 statements a
 * table), run on the connection the surrounding transaction holds. A statement run per row -
 * better-sqlite3's call, bind, step and reset, once per row - was about a tenth of a pixel hit's CPU
 * under load; a batch of 16 hits now costs 512-574 us of CPU instead of 629-657 (in process).
 * One writer per connection (`sqliteWriters`): keyed and unkeyed writes share its statements.
 */
function sqliteWriter(client: SQLiteClient): BatchWriter {
  let writer = sqliteWriters.get(client);
  if (!writer) {
    writer = newSqliteWriter(client);
    sqliteWriters.set(client, writer);
  }
  return writer;
}

function newSqliteWriter(client: SQLiteClient): BatchWriter {
  const columns = BATCH_TABLES.map(columnsOf);
  /** Per table, its statement for each number of rows. */
  const statements = BATCH_TABLES.map(() => new Map<number, SQLiteStatement>());
  const statementFor = (i: number, rows: number): SQLiteStatement => {
    const cache = statements[i] as Map<number, SQLiteStatement>;
    let statement = cache.get(rows);
    if (statement === undefined) {
      const row = `(${(columns[i] as string[]).map(() => '?').join(', ')})`;
      const values = Array.from({ length: rows }, () => row).join(', ');
      statement = client.prepare(insertSql(BATCH_TABLES[i] as TableWrite, 'sqlite', `values ${values}`));
      cache.set(rows, statement);
    }
    return statement;
  };
  return async (_trx, batch) => {
    // Runs inside the kysely transaction: SQLite has one connection, and it is holding the BEGIN.
    for (let i = 0; i < BATCH_TABLES.length; i++) {
      const rows = batch[i] as readonly Record<string, unknown>[];
      const names = columns[i] as string[];
      for (let from = 0; from < rows.length; from += SQLITE_ROWS_PER_INSERT) {
        const to = Math.min(rows.length, from + SQLITE_ROWS_PER_INSERT);
        const values: unknown[] = [];
        for (let r = from; r < to; r++) {
          const row = rows[r] as Record<string, unknown>;
          for (const name of names) values.push(row[name]);
        }
        statementFor(i, to - from).run(values);
      }
    }
  };
}

/**
 * Given the `pool`, the statement runs as a transaction of its own (no BEGIN, no COMMIT: one round
 * trip), as a named prepared statement on whichever pooled connection runs it: PostgreSQL parses
 * and plans the seven-insert statement once per connection instead of once per batch (its planning
 * took about 0.6 of 1.8 ms a batch of 16 hits) - see `standaloneWriter`. With `asyncCommit`, it
 * sets `synchronous_commit = off` for itself (`set_config(..., true)`: local to the transaction,
 * read at its commit). Without the pool it runs on the connection of the surrounding transaction.
 */
function postgresWriter(asyncCommit = false, pool?: pg.Pool): BatchWriter {
  let n = 0;
  const writes = BATCH_TABLES.map((table, i) => {
    const arrays = Object.values(table.columns).map((type) => `$${++n}::${type}[]`);
    return `w${i} as (${insertSql(table, 'postgres', `select * from unnest(${arrays.join(', ')})`)})`;
  });
  // Every writer runs this one statement, whose inserts take their row locks in one order.
  const text = asyncCommit
    ? `with ${writes.join(', ')} select set_config('synchronous_commit', 'off', true)`
    : `with ${writes.join(', ')} select 1`;
  const name = `traffic batch ${asyncCommit ? 'at commit' : 'on disk'}`;
  return async (trx, batch) => {
    const parameters = BATCH_TABLES.flatMap((table, i) =>
      columnsOf(table).map((c) =>
        (batch[i] as readonly object[]).map((row) => (row as Record<string, unknown>)[c]),
      ),
    );
    if (pool) await pool.query({ name, text, values: parameters });
    else await trx.executeQuery(CompiledQuery.raw(text, parameters));
  };
}

/** The writer for the database the service runs on, inside a transaction the caller holds. */
export function batchWriter(raw: DatabaseHandle['raw']): BatchWriter {
  return raw.kind === 'sqlite' ? sqliteWriter(raw.client) : postgresWriter();
}

/**
 * Writes events that carry no idempotency key in a transaction of their own, and returns once it
 * is as durable as `acknowledgement` asks (`Acknowledgement`).
 */
export type StandaloneWriter = (
  db: Kysely<Database>,
  events: PreparedEvent[],
  acknowledgement: Acknowledgement,
) => Promise<void>;

/**
 * SQLite: a transaction through the group commit, which answers it once the WAL sync that follows
 * its COMMIT is done - or, at commit, when COMMIT wrote the WAL (`acknowledgeAtCommit`).
 * PostgreSQL: one statement, its own transaction, prepared once per connection (`postgresWriter`);
 * on disk, its COMMIT returns after the server's synchronous commit (one round trip instead of
 * BEGIN, the statement and COMMIT, and no planning per batch: unkeyed 100-event `POST /events`
 * batches went from 479-502 to 589-594 requests a second, alternating A/B); at commit, with
 * `synchronous_commit = off` for it alone - its COMMIT returns once the commit record is in the
 * server's WAL buffers, which the WAL writer flushes within `wal_writer_delay` (PostgreSQL
 * documentation, "Asynchronous Commit": never an inconsistency, only the last transactions at risk
 * if the database server itself crashes).
 */
export function standaloneWriter(raw: DatabaseHandle['raw']): StandaloneWriter {
  if (raw.kind === 'sqlite') {
    const write = sqliteWriter(raw.client);
    const transaction = (db: Kysely<Database>, events: PreparedEvent[]) =>
      db.transaction().execute((trx) => writeEvents(trx, events, write));
    return (db, events, acknowledgement) =>
      acknowledgement === 'commit'
        ? acknowledgeAtCommit(() => transaction(db, events))
        : transaction(db, events);
  }
  const atCommit = postgresWriter(true, raw.pool);
  const onDisk = postgresWriter(false, raw.pool);
  return (db, events, acknowledgement) =>
    writeEvents(db, events, acknowledgement === 'commit' ? atCommit : onDisk);
}

/** Inserts raw events and upserts every rollup they touch. Call inside a transaction. */
export async function writeEvents(
  trx: Kysely<Database>,
  events: PreparedEvent[],
  write: BatchWriter,
): Promise<void> {
  const rollups = emptyRollups();
  for (const e of events) rollUp(rollups, e);
  // Rows are written in key order so concurrent writers (several processes on PostgreSQL) take
  // row locks in the same order and cannot deadlock.
  const sorted = <T>(map: Map<string, T>) =>
    [...map.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, v]) => v);

  await write(trx, [
    events,
    sorted(rollups.daily),
    sorted(rollups.pages),
    sorted(rollups.hourly),
    sorted(rollups.sources),
    sorted(rollups.network),
    sorted(rollups.agentSites),
  ]);
}

/** The rollup rows a batch of events touches, keyed by their primary key. */
type Rollups = ReturnType<typeof emptyRollups>;

function emptyRollups() {
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

  return { daily, pages, hourly, sources, network, agentSites };
}

function bump<T extends { events: number }>(map: Map<string, T>, key: string, make: () => T): void {
  const found = map.get(key);
  if (found) found.events++;
  else map.set(key, make());
}

/** Counts one event in every rollup it touches. */
function rollUp(rollups: Rollups, e: PreparedEvent): void {
  const day = dayOf(e.occurred_at);
  const agent = e.agent ?? '';
  bump(rollups.daily, `${e.site_id}|${day}|${e.category}|${agent}`, () => ({
    site_id: e.site_id,
    day,
    category: e.category,
    agent,
    operator: e.operator,
    events: 1,
  }));
  bump(rollups.pages, `${e.site_id}|${day}|${e.category}|${e.path}`, () => ({
    site_id: e.site_id,
    day,
    category: e.category,
    path: e.path,
    events: 1,
  }));
  const hour = e.received_at.slice(0, 13);
  bump(rollups.hourly, `${e.site_id}|${hour}|${e.source}`, () => ({
    site_id: e.site_id,
    hour,
    source: e.source,
    events: 1,
  }));
  const source = rollups.sources.get(`${e.site_id}|${e.source}`);
  if (source) {
    source.events++;
    if (e.received_at < source.first_event_at) source.first_event_at = e.received_at;
    if (e.received_at > source.last_event_at) source.last_event_at = e.received_at;
  } else {
    rollups.sources.set(`${e.site_id}|${e.source}`, {
      site_id: e.site_id,
      source: e.source,
      first_event_at: e.received_at,
      last_event_at: e.received_at,
      events: 1,
    });
  }
  bump(rollups.network, `${day}|${e.category}|${agent}`, () => ({
    day,
    category: e.category,
    agent,
    operator: e.operator,
    events: 1,
  }));
  if (e.agent && !HUMAN_CATEGORIES.has(e.category)) {
    const key = `${e.agent}|${e.site_id}`;
    const seen = rollups.agentSites.get(key);
    if (!seen) {
      rollups.agentSites.set(key, {
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
