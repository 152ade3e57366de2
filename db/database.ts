/**
 * Kysely<Database> for SQLite (default, a file in DATA_DIR) or PostgreSQL (`DATABASE_URL=postgres://`).
 * Both dialects hand the application the same value shapes: timestamps as ISO 8601 strings,
 * JSON columns as text (repositories parse them), 64-bit integers as numbers.
 */
import { closeSync, fdatasync, mkdirSync, openSync } from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import type { Database } from './schema.ts';
import { Checkpointer } from './sqlite-checkpoints.ts';
import { type CommitCounts, GroupCommitSqliteDialect, type WalSync } from './sqlite-group-commit.ts';

export type Dialect = 'sqlite' | 'postgres';

export interface DatabaseHandle {
  db: Kysely<Database>;
  dialect: Dialect;
  /**
   * The underlying client, for libraries that need their own (rate limiter stores). On SQLite it is
   * the write connection, to be used only inside a kysely transaction (which holds it); `commits`
   * counts the transactions and the durable COMMITs that carried them (group commit).
   */
  raw:
    | { kind: 'sqlite'; client: SQLite.Database; commits: CommitCounts; checkpointer?: Checkpointer }
    | { kind: 'postgres'; pool: pg.Pool };
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  /** `postgres://...`; otherwise SQLite at `sqliteFile`. */
  url?: string | null;
  sqliteFile?: string;
  /** PostgreSQL schema to use (tests give each suite its own). */
  schema?: string;
  poolSize?: number;
}

export function isPostgresUrl(url: string | null | undefined): url is string {
  return !!url && /^postgres(ql)?:\/\//.test(url);
}

export function openDatabase(options: OpenDatabaseOptions): DatabaseHandle {
  if (isPostgresUrl(options.url)) return openPostgres(options.url, options);
  const file = options.sqliteFile ?? ':memory:';
  return openSqlite(file);
}

/**
 * SQLite: one write connection and, for a file, one connection for reads outside transactions
 * (`sqlite-group-commit.ts`: transactions arriving together share one COMMIT and one fsync of the
 * WAL, each answered once that fsync returned) and, once commits keep coming, a worker thread that
 * checkpoints the WAL (`sqlite-checkpoints.ts`).
 */
function openSqlite(file: string): DatabaseHandle {
  const memory = file === ':memory:';
  if (!memory) mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  const client = new SQLite(file);
  client.pragma('journal_mode = WAL');
  client.pragma('foreign_keys = ON');
  client.pragma('busy_timeout = 5000');
  // Savepoint and statement journals in memory: every transaction runs inside a savepoint of the
  // group commit, and a journal file would cost a write for each page it first touches.
  client.pragma('temp_store = MEMORY');
  let reader: SQLite.Database | undefined;
  let syncWal: (WalSync & { close(): void }) | undefined;
  let checkpointer: Checkpointer | undefined;
  if (memory) {
    client.pragma('synchronous = FULL');
  } else {
    // NORMAL: COMMIT writes the WAL without waiting for the disk; the driver syncs the WAL before
    // any transaction that committed is answered or any read sees it, so a commit is on disk
    // before the reply that announces it, as under FULL (WAL + NORMAL alone can lose the last
    // commits on power loss).
    client.pragma('synchronous = NORMAL');
    syncWal = walSync(`${file}-wal`);
    reader = new SQLite(file);
    reader.pragma('query_only = ON');
    reader.pragma('busy_timeout = 5000');
    checkpointer = new Checkpointer(file, client);
  }
  const dialect = new GroupCommitSqliteDialect({
    writer: client,
    ...(reader ? { reader } : {}),
    ...(syncWal ? { syncWal } : {}),
    ...(checkpointer ? { afterCommit: () => checkpointer.committed() } : {}),
  });
  const db = new Kysely<Database>({ dialect });
  return {
    db,
    dialect: 'sqlite',
    raw: {
      kind: 'sqlite',
      client,
      commits: dialect.driver.counts,
      ...(checkpointer ? { checkpointer } : {}),
    },
    close: async () => {
      await checkpointer?.close();
      await db.destroy();
      syncWal?.close();
    },
  };
}

/**
 * `fdatasync` of the WAL file on libuv's thread pool. The file exists once the first transaction
 * ran (the driver syncs only after a COMMIT) and is never replaced while this process holds the
 * database open (SQLite deletes it only when the last connection closes).
 */
function walSync(walFile: string): WalSync & { close(): void } {
  let fd: number | undefined;
  const sync: WalSync & { close(): void } = (done) => {
    try {
      fd ??= openSync(walFile, 'r+');
    } catch (err) {
      done(err as Error);
      return;
    }
    fdatasync(fd, done);
  };
  sync.close = () => {
    if (fd !== undefined) closeSync(fd);
    fd = undefined;
  };
  return sync;
}

const pgTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    switch (oid) {
      case 20: // int8: counts and sums; values stay far below 2^53
        return (v: string) => Number(v);
      case 114: // json
      case 3802: // jsonb
        return (v: string) => v;
      case 1184: // timestamptz
      case 1114: {
        // timestamp
        const parse = pg.types.getTypeParser(oid, 'text') as (v: string) => Date;
        return (v: string) => parse(v).toISOString();
      }
      default:
        return pg.types.getTypeParser(oid, format ?? 'text');
    }
  },
};

/**
 * How long a request waits for a PostgreSQL connection - a new one, or a pooled one to come free
 * (pg-pool applies `connectionTimeoutMillis` to both) - before it is answered 503.
 */
const CONNECT_TIMEOUT_MS = 5_000;

function openPostgres(url: string, options: OpenDatabaseOptions): DatabaseHandle {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize ?? 10,
    // A database that does not answer (a partition, a server starting) fails the request in bounded
    // time instead of holding it forever (node-postgres waits without limit by default); TCP
    // keepalive finds connections whose peer vanished without a FIN.
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    keepAlive: true,
    types: pgTypes as unknown as pg.CustomTypesConfig,
    ...(options.schema ? { options: `-c search_path=${quoteIdent(options.schema)}` } : {}),
  });
  // An idle client that errors (server restart) must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  // Nor one that is checked out: pg-pool takes its own error listener off a client while it is
  // lent (kysely holds one for each query and transaction), and node-postgres emits a dead
  // socket's error on the client as well as failing its queries - unheard, that 'error' event
  // kills the process. The queries fail (503, servers/errors.ts) and the pool discards the client
  // when it comes back unqueryable.
  pool.on('connect', (client) => {
    client.on('error', () => {});
  });
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return {
    db,
    dialect: 'postgres',
    raw: { kind: 'postgres', pool },
    close: () => db.destroy(),
  };
}

export function quoteIdent(name: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`unsafe identifier: ${name}`);
  return `"${name}"`;
}

/** Round trip to the database; throws when it is unreachable. */
export async function pingDatabase(db: Kysely<Database>): Promise<void> {
  await sql`select 1`.execute(db);
}

/**
 * PostgreSQL SQLSTATEs that say the server cannot serve now, not that the statement is wrong:
 * class 08 (connection exception), 57P01-57P03 (admin or crash shutdown, cannot connect now) and
 * 53300 (too many connections). https://www.postgresql.org/docs/current/errcodes-appendix.html
 */
const PG_UNAVAILABLE = /^(08\d{3}|57P0[123]|53300)$/;
/** Socket errors of a connection that is refused, reset or cut. */
const SOCKET_UNAVAILABLE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);
/** What node-postgres says, without a code, about a connection that died or could not be made. */
const PG_CONNECTION_MESSAGE =
  /^(Connection terminated|Client has encountered a connection error|timeout exceeded when trying to connect|Client was closed and is not queryable)/;

/**
 * Whether `err` (or one of its causes) says the database cannot be reached or cannot take the work
 * now - a dead or refused connection, a server shutting down, SQLite's lock or a full disk - rather
 * than that the statement was wrong. Such a failure is answered 503 `service_unavailable`
 * (servers/errors.ts): the request may be sent again once the database is back.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  for (
    let e = err as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown } | undefined,
      depth = 0;
    e && depth < 5;
    depth++
  ) {
    const code = typeof e.code === 'string' ? e.code : '';
    if (PG_UNAVAILABLE.test(code) || SOCKET_UNAVAILABLE.has(code)) return true;
    if (/^SQLITE_(BUSY|LOCKED|FULL)/.test(code)) return true;
    if (typeof e.message === 'string' && PG_CONNECTION_MESSAGE.test(e.message)) return true;
    // net.connect to a name with several addresses rejects with an AggregateError of each attempt.
    if (Array.isArray(e.errors) && e.errors.some((inner) => isDatabaseUnavailable(inner))) return true;
    e = e.cause as typeof e;
  }
  return false;
}

/** Unique-constraint violation, on either dialect. */
export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string } | undefined;
  return (
    e?.code === '23505' ||
    e?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY' ||
    e?.code === 'SQLITE_CONSTRAINT_UNIQUE'
  );
}
