/**
 * Kysely on better-sqlite3 with group commit: the transactions that run one after another within a
 * tick share one COMMIT and one fsync of the WAL, and each caller's `transaction().execute()`
 * resolves only once that fsync returned - so a reply sent after it announces a write that is on
 * disk, and the event loop never waits for the disk.
 *
 * How a batch runs on the one write connection:
 * - the first transaction of a batch opens it with `BEGIN IMMEDIATE`; every transaction, the first
 *   included, runs inside a SAVEPOINT of its own, holding the write connection alone (a FIFO lock,
 *   as kysely's own SQLite driver does) from its SAVEPOINT to its RELEASE;
 * - a transaction that succeeds is RELEASEd into the batch, gives the connection to the next one
 *   and waits; one that fails is rolled back to its savepoint, so its writes never land and the
 *   batch's other members are untouched;
 * - the batch commits once nobody is inside a transaction any more: in `setImmediate` after a
 *   member finished (the transactions already queued for the connection join first), or as soon as
 *   it holds `MAX_BATCH` members - or at once after a member answered at COMMIT
 *   (`acknowledgeAtCommit`), which is a group of its own already: a pixel's hits, gathered by the
 *   ingestion queue. An error after which SQLite rolled the whole transaction back
 *   itself (SQLITE_FULL, IOERR, ...) fails the members released before it: none was acknowledged.
 *
 * Durability: the write connection runs `synchronous = NORMAL`, so COMMIT writes the WAL frames
 * without waiting for the disk; the driver then flushes the WAL file with `fdatasync` on libuv's
 * thread pool (`syncWal`) and only then resolves the batch's members. This is the sync SQLite makes
 * itself at each commit under `synchronous = FULL` (WAL mode: "an additional sync of the WAL file
 * after each transaction commit"), taken once for all the commits before it and off the event loop,
 * so the next batch runs while the disk works. SQLite still syncs the WAL header on its own when the
 * WAL restarts, and syncs the WAL and the database around each checkpoint. A failed sync fails the
 * batches it covered and every later write (the kernel may have dropped the pages: nothing may be
 * acknowledged any more; restart the process).
 *
 * Nothing in the process sees a commit before it is durable:
 * - reads outside a transaction (kysely `select` queries) go to a second, read-only connection;
 *   while a batch is open or a commit is not yet synced they wait for it first, so that they see
 *   what every transaction begun before them wrote, as without grouping (the open batch then takes
 *   no transaction begun after the read: one that awaits the read would wait for itself);
 * - anything else outside a transaction takes the write connection, commits the open batch, runs on
 *   its own (autocommit) and, when it wrote, gives the connection back and waits for the WAL sync
 *   like a transaction.
 *
 * Statements are prepared once per connection and kept (SQLite re-prepares them itself after a
 * schema change), their parameters written so that binding them never re-prepares them
 * (`sqlite-parameters.ts`). An in-memory database has no second connection and no WAL: each transaction
 * commits on its own.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type SQLite from 'better-sqlite3';
import {
  type CompiledQuery,
  type DatabaseConnection,
  type DatabaseIntrospector,
  DeleteQueryNode,
  type Dialect,
  type DialectAdapter,
  type Driver,
  InsertQueryNode,
  type Kysely,
  type QueryCompiler,
  type QueryResult,
  SelectQueryNode,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  UpdateQueryNode,
} from 'kysely';
import { stableParameters } from './sqlite-parameters.ts';

/** Most transactions one COMMIT carries: bounds how long the first of them waits. */
export const MAX_BATCH = 256;
const STATEMENT_CACHE_SIZE = 1000;
const SAVEPOINT = 'group_commit_member';

export interface CommitCounts {
  /** Transactions committed (each `transaction().execute()` that succeeded). */
  transactions: number;
  /** COMMITs they took (autocommit writes outside transactions included). */
  commits: number;
  /** WAL syncs those commits waited for. */
  syncs: number;
}

/** Flushes the WAL file to stable storage; calls back once it is (or failed). */
export type WalSync = (done: (err: Error | null) => void) => void;

export interface GroupCommitOptions {
  /** The write connection (WAL; `synchronous = NORMAL` when `syncWal` is given, else FULL). */
  writer: SQLite.Database;
  /** A second connection to the same file for reads outside transactions; none: no grouping. */
  reader?: SQLite.Database;
  /** Syncs the WAL after COMMIT; none: COMMIT is durable itself (`synchronous = FULL`). */
  syncWal?: WalSync;
  /** Called after each COMMIT, outside any transaction (the checkpointer counts them). */
  afterCommit?: () => void;
}

/** Kysely's SQLite dialect with the driver above. */
export class GroupCommitSqliteDialect implements Dialect {
  readonly driver: GroupCommitDriver;

  constructor(options: GroupCommitOptions) {
    this.driver = new GroupCommitDriver(options);
  }

  createDriver(): Driver {
    return this.driver;
  }

  createQueryCompiler(): QueryCompiler {
    return new SqliteQueryCompiler();
  }

  createAdapter(): DialectAdapter {
    return new SerialisedSqliteAdapter();
  }

  // biome-ignore lint/suspicious/noExplicitAny: kysely's Dialect signature
  createIntrospector(db: Kysely<any>): DatabaseIntrospector {
    return new SqliteIntrospector(db);
  }
}

/**
 * Kysely serialises every use of a SQLite connection with a lock of its own, released only after
 * a transaction's COMMIT; the driver serialises the write connection itself (it must let the next
 * transaction in before the batch commits), so kysely is told not to.
 */
class SerialisedSqliteAdapter extends SqliteAdapter {
  override get supportsMultipleConnections(): boolean {
    return true;
  }
}

/** FIFO lock of the write connection. */
class WriterLock {
  #held = false;
  readonly #queue: (() => void)[] = [];

  /** Undefined when taken at once; else a promise resolved when it is this caller's turn. */
  acquire(): Promise<void> | undefined {
    if (!this.#held) {
      this.#held = true;
      return undefined;
    }
    return new Promise((resolve) => this.#queue.push(resolve));
  }

  release(): void {
    const next = this.#queue.shift();
    if (next) next();
    else this.#held = false;
  }
}

interface Member {
  resolve(): void;
  reject(err: unknown): void;
}

/** Transactions committed together, and what waits for them to be durable. */
class Batch {
  readonly members: Member[] = [];
  /** Members answered at COMMIT, before the WAL sync (`acknowledgeAtCommit`). */
  readonly #atCommit: Member[] = [];
  /**
   * A read waits for this batch: transactions begun after the read must not join it, or a
   * transaction that awaits the read (it started first) would wait for itself.
   */
  sealed = false;
  /** Durable, or failed: readers need not wait any more. */
  settled = false;
  /** Settles when the batch is durable or failed (reads outside transactions wait for it). */
  readonly ended: Promise<void>;
  #end!: () => void;

  constructor() {
    this.ended = new Promise((resolve) => {
      this.#end = resolve;
    });
  }

  join(): Promise<void> {
    return new Promise((resolve, reject) => this.members.push({ resolve, reject }));
  }

  /** Settles at COMMIT (or its failure), without waiting for the WAL sync. */
  joinAtCommit(): Promise<void> {
    return new Promise((resolve, reject) => this.#atCommit.push({ resolve, reject }));
  }

  /** Someone waits for this batch's COMMIT, not its sync: it commits without waiting for one. */
  get awaitsCommit(): boolean {
    return this.#atCommit.length > 0;
  }

  /** COMMIT returned: the members answered at commit are. */
  committed(): void {
    for (const member of this.#atCommit.splice(0)) member.resolve();
  }

  succeed(): void {
    for (const member of this.members) member.resolve();
    this.#settle();
  }

  fail(err: unknown): void {
    for (const member of this.#atCommit.splice(0)) member.reject(err);
    for (const member of this.members) member.reject(err);
    this.#settle();
  }

  #settle(): void {
    this.settled = true;
    this.#end();
  }
}

class StatementCache {
  readonly #db: SQLite.Database;
  readonly #statements = new Map<string, SQLite.Statement>();

  constructor(db: SQLite.Database) {
    this.#db = db;
  }

  get(sql: string): SQLite.Statement {
    let statement = this.#statements.get(sql);
    if (!statement) {
      statement = this.#db.prepare(stableParameters(sql));
      if (this.#statements.size >= STATEMENT_CACHE_SIZE)
        this.#statements.delete(this.#statements.keys().next().value as string);
      this.#statements.set(sql, statement);
    }
    return statement;
  }
}

function run<R>(statement: SQLite.Statement, query: CompiledQuery): QueryResult<R> {
  const parameters = query.parameters as unknown[];
  if (statement.reader) return { rows: statement.all(parameters) as R[] };
  const { changes, lastInsertRowid } = statement.run(parameters);
  return { insertId: BigInt(lastInsertRowid), numAffectedRows: BigInt(changes), rows: [] };
}

export class GroupCommitDriver implements Driver {
  readonly #writer: SQLite.Database;
  readonly #reader: SQLite.Database | undefined;
  readonly #syncWal: WalSync | undefined;
  readonly #afterCommit: (() => void) | undefined;
  readonly #writes: StatementCache;
  readonly #reads: StatementCache | undefined;
  readonly #lock = new WriterLock();
  /** The batch open on the write connection (its BEGIN done, its COMMIT not yet). */
  #batch: Batch | undefined;
  /** Committed batches waiting for the next WAL sync to start. */
  #unsynced: Batch[] = [];
  #syncing = false;
  /** The latest committed batch: reads wait until it is durable. */
  #lastCommitted: Batch | undefined;
  /** Why the WAL can no longer be trusted (a sync failed): every later write fails. */
  #broken: Error | undefined;
  /** The lease inside a transaction (between its SAVEPOINT and its RELEASE or rollback). */
  #active: Lease | undefined;
  #flushScheduled = false;
  #flushWanted = false;
  readonly counts: CommitCounts = { transactions: 0, commits: 0, syncs: 0 };

  constructor(options: GroupCommitOptions) {
    this.#writer = options.writer;
    this.#reader = options.reader;
    this.#syncWal = options.syncWal;
    this.#afterCommit = options.afterCommit;
    this.#writes = new StatementCache(options.writer);
    this.#reads = options.reader ? new StatementCache(options.reader) : undefined;
  }

  get #grouping(): boolean {
    return this.#reader !== undefined;
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    return new Lease(this);
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    const lease = connection as Lease;
    if (this.#broken) throw this.#broken;
    await lease.lockWriter();
    lease.transaction = true;
    if (!this.#grouping) {
      this.#exec('begin immediate');
      return;
    }
    while (this.#batch?.sealed) await this.#batch.ended;
    if (!this.#batch) {
      this.#exec('begin immediate');
      this.#batch = new Batch();
    }
    try {
      this.#exec(`savepoint ${SAVEPOINT}`);
    } catch (err) {
      lease.transaction = false;
      this.#afterTransaction();
      throw err;
    }
    this.#active = lease;
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const lease = connection as Lease;
    if (!this.#grouping) {
      this.#exec('commit');
      lease.transaction = false;
      this.counts.transactions++;
      this.counts.commits++;
      return;
    }
    const batch = this.#batch as Batch;
    // One name for every member: each is released or rolled back before the next one begins, and
    // a fixed text keeps the three statements prepared once.
    this.#exec(`release ${SAVEPOINT}`);
    lease.transaction = false;
    this.#active = undefined;
    const durable = commitAcknowledged.getStore() ? batch.joinAtCommit() : batch.join();
    // The next transaction may run now; this one is answered once the batch is durable (or, under
    // `acknowledgeAtCommit`, committed).
    lease.unlockWriter();
    this.#afterTransaction();
    await durable;
    this.counts.transactions++;
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const lease = connection as Lease;
    // Not in a transaction: released into the batch already, whose COMMIT or sync failed.
    if (!lease.transaction) return;
    lease.transaction = false;
    if (!this.#grouping) {
      if (this.#writer.inTransaction) this.#exec('rollback');
      return;
    }
    this.#active = undefined;
    try {
      if (this.#writer.inTransaction) {
        this.#exec(`rollback to ${SAVEPOINT}`);
        this.#exec(`release ${SAVEPOINT}`);
      }
    } finally {
      if (!this.#writer.inTransaction && this.#batch) {
        // SQLite ended the whole transaction after an error: what the batch held is gone.
        const batch = this.#batch;
        this.#batch = undefined;
        batch.fail(new Error('SQLite rolled back the group commit after an error in another transaction'));
      }
      this.#afterTransaction();
    }
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    (connection as Lease).unlockWriter();
  }

  async destroy(): Promise<void> {
    if (this.#batch && !this.#active) this.#flush();
    while (this.#lastCommitted && !this.#lastCommitted.settled) await this.#lastCommitted.ended;
    this.#reader?.close();
    this.#writer.close();
  }

  /** Runs a statement for a lease. */
  async execute<R>(lease: Lease, query: CompiledQuery): Promise<QueryResult<R>> {
    if (lease.transaction) return run(this.#writes.get(query.sql), query);
    if (this.#reads && !lease.locked && SelectQueryNode.is(query.query)) {
      await this.#settledCommits();
      return run(this.#reads.get(query.sql), query);
    }
    // Outside a transaction: the open batch commits first, then the statement commits on its own.
    await lease.lockWriter();
    if (this.#batch) this.#flush();
    const statement = this.#writes.get(query.sql);
    if (statement.readonly) {
      await this.#settledCommits();
      return run(statement, query);
    }
    if (this.#broken) throw this.#broken;
    // Its own sync, below, covers the commits before it.
    const result = run<R>(statement, query);
    // An insert, update or delete that changed no row wrote nothing (a polling worker's claim when
    // nothing is due): nothing to sync. Schema changes report no rows and are synced.
    const dml =
      InsertQueryNode.is(query.query) || UpdateQueryNode.is(query.query) || DeleteQueryNode.is(query.query);
    const changed = statement.reader ? result.rows.length > 0 : result.numAffectedRows !== 0n;
    if (this.#syncWal && (changed || !dml)) {
      const autocommit = new Batch();
      const durable = autocommit.join();
      this.#committed(autocommit);
      // Committed: later writers may go on; their syncs cover this commit too.
      lease.unlockWriter();
      await durable;
    }
    return result;
  }

  async *stream<R>(lease: Lease, query: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
    if (!SelectQueryNode.is(query.query)) throw new Error('SQLite streams select queries only');
    let db = this.#reader ?? this.#writer;
    if (lease.transaction || lease.locked || !this.#reader) {
      await lease.lockWriter();
      db = this.#writer;
    }
    if (!lease.transaction) {
      if (this.#batch && db === this.#writer) this.#flush();
      await this.#settledCommits();
    }
    for (const row of db.prepare(stableParameters(query.sql)).iterate(query.parameters as unknown[])) {
      yield { rows: [row as R] };
    }
  }

  acquireLock(): Promise<void> | undefined {
    return this.#lock.acquire();
  }

  releaseLock(): void {
    this.#lock.release();
  }

  /** Resolves once every transaction begun so far is durable (or failed): reads wait here. */
  async #settledCommits(): Promise<void> {
    const open = this.#batch;
    if (open) {
      open.sealed = true;
      if (!this.#active) this.#scheduleFlush();
      await open.ended;
    }
    const last = this.#lastCommitted;
    if (last && !last.settled) await last.ended;
  }

  #exec(sql: string): void {
    this.#writes.get(sql).run();
  }

  /**
   * A transaction ended: commit now if the batch is full or waited for, or holds a member answered
   * at COMMIT, else soon. Such a member waits for nothing else: in the next turn the transactions
   * queued behind it would join, and its answer would wait for the slowest of them (under a pixel
   * load, committing at once took 48-49 us of CPU a hit instead of 52-53 and answered 6-10% more
   * hits a second).
   */
  #afterTransaction(): void {
    if (!this.#batch) return;
    const batch = this.#batch;
    if (this.#flushWanted || batch.sealed || batch.awaitsCommit || batch.members.length >= MAX_BATCH) {
      this.#flush();
      return;
    }
    this.#scheduleFlush();
  }

  /**
   * The batch commits in `setImmediate` - or, while the WAL sync of the previous batch is under way,
   * when that sync returns: the transactions arriving meanwhile join this batch and share the next
   * sync, rather than each small batch paying a COMMIT of its own and waiting for the sync anyway. (A
   * batch holding a transaction answered at COMMIT never waits here: `#afterTransaction` commits it.)
   */
  #scheduleFlush(): void {
    if (this.#flushScheduled || (this.#syncing && !this.#batch?.sealed)) return;
    this.#flushScheduled = true;
    setImmediate(() => {
      this.#flushScheduled = false;
      if (!this.#batch) return;
      if (this.#active) this.#flushWanted = true;
      else this.#flush();
    });
  }

  /** COMMIT of the open batch. Never inside a transaction. */
  #flush(): void {
    const batch = this.#batch as Batch;
    this.#batch = undefined;
    this.#flushWanted = false;
    try {
      this.#exec('commit');
    } catch (err) {
      if (this.#writer.inTransaction) this.#exec('rollback');
      batch.fail(err);
      return;
    }
    this.#committed(batch);
  }

  /** A batch committed: durable now (FULL) or once the next WAL sync returns. */
  #committed(batch: Batch): void {
    this.counts.commits++;
    this.#afterCommit?.();
    this.#lastCommitted = batch;
    if (this.#broken) {
      batch.fail(this.#broken);
      return;
    }
    batch.committed();
    if (!this.#syncWal) {
      batch.succeed();
      return;
    }
    this.#unsynced.push(batch);
    this.#startSync();
  }

  /** One sync at a time; it covers every commit made before it started. */
  #startSync(): void {
    if (this.#syncing || this.#unsynced.length === 0) return;
    const covered = this.#unsynced;
    this.#unsynced = [];
    this.#syncing = true;
    (this.#syncWal as WalSync)((err) => {
      this.#syncing = false;
      this.counts.syncs++;
      if (err) {
        this.#broken ??= new Error(`WAL sync failed; writes are refused until restart: ${err.message}`, {
          cause: err,
        });
        for (const batch of covered) batch.fail(this.#broken);
      } else {
        for (const batch of covered) batch.succeed();
      }
      if (this.#unsynced.length > 0) this.#startSync();
      else if (this.#batch) this.#scheduleFlush();
    });
  }
}

const commitAcknowledged = new AsyncLocalStorage<true>();

/**
 * Runs `work` so that the transactions it commits are answered at COMMIT - once SQLite wrote them to
 * the WAL, which any process that opens the database reads, so they survive the crash of this
 * process - instead of after the WAL sync that makes them survive a power loss too, which follows
 * at once for the whole group. For writes worth their loss in a power failure's last milliseconds
 * but not in a crash (a tracking pixel's hits: `features/traffic/ingest.ts`); reads still see only
 * what is synced. Without grouping (an in-memory database) COMMIT is all there is.
 */
export function acknowledgeAtCommit<T>(work: () => Promise<T>): Promise<T> {
  return commitAcknowledged.run(true, work);
}

/** One kysely connection acquisition: a transaction, or the statements of one query. */
class Lease implements DatabaseConnection {
  readonly #driver: GroupCommitDriver;
  #locked = false;
  /** Between this lease's SAVEPOINT (or BEGIN) and its RELEASE (or COMMIT) or rollback. */
  transaction = false;

  constructor(driver: GroupCommitDriver) {
    this.#driver = driver;
  }

  get locked(): boolean {
    return this.#locked;
  }

  async lockWriter(): Promise<void> {
    if (this.#locked) return;
    const turn = this.#driver.acquireLock();
    if (turn) await turn;
    this.#locked = true;
  }

  unlockWriter(): void {
    if (!this.#locked) return;
    this.#locked = false;
    this.#driver.releaseLock();
  }

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    return this.#driver.execute(this, query);
  }

  streamQuery<R>(query: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
    return this.#driver.stream(this, query);
  }
}
