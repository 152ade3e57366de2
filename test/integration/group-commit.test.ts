/**
 * Group commit (`db/sqlite-group-commit.ts`): transactions begun together share one durable COMMIT,
 * each resolves only once that COMMIT returned, and a transaction that fails takes none of the
 * others with it. Over HTTP, on both dialects: a service process killed with SIGKILL while return
 * requests pour in has every request it acknowledged in its database, and none of the requests it
 * refused inside a transaction (an Idempotency-Key raced with another body).
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely } from 'kysely';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { openDatabase } from '../../db/database.ts';
import { acknowledgeAtCommit, GroupCommitSqliteDialect } from '../../db/sqlite-group-commit.ts';
import { createTestDatabase, dialects, type TestDatabase } from '../helpers/databases.ts';
import { type ServiceProcess, spawnService } from '../helpers/process.ts';

function keyRow(key: string) {
  return {
    operation: 'group-commit-test',
    key,
    fingerprint: 'f',
    response: '{}',
    created_at: new Date().toISOString(),
  };
}

/** A WAL database file with table `t`, its writer (`synchronous = NORMAL`) and a read-only reader. */
function walFile() {
  const dir = mkdtempSync(path.join(tmpdir(), 'group-commit-'));
  const file = path.join(dir, 'x.db');
  const writer = new SQLite(file);
  writer.pragma('journal_mode = WAL');
  writer.pragma('synchronous = NORMAL');
  writer.exec('create table t (v text primary key)');
  const reader = new SQLite(file);
  reader.pragma('query_only = ON');
  return { dir, file, writer, reader };
}

/** Values of table `t` committed to the file, read by a connection of its own. */
function committedKeysOf(file: string): string[] {
  const other = new SQLite(file, { readonly: true });
  try {
    return (other.prepare('select v from t order by v').all() as { v: string }[]).map((r) => r.v);
  } finally {
    other.close();
  }
}

describe('group commit on SQLite', () => {
  let db: TestDatabase | undefined;
  afterEach(async () => {
    await db?.drop();
    db = undefined;
  });

  /** Keys committed to the file, read by a connection of its own (another process would see the same). */
  function committedKeys(file: string): string[] {
    const other = new SQLite(file, { readonly: true });
    try {
      return (
        other
          .prepare("select key from idempotency_keys where operation = 'group-commit-test' order by key")
          .all() as { key: string }[]
      ).map((r) => r.key);
    } finally {
      other.close();
    }
  }

  it('commits transactions begun together once, answers each after that COMMIT, and rolls back only the failing ones', async () => {
    db = await createTestDatabase('sqlite');
    const { handle } = db;
    if (handle.raw.kind !== 'sqlite') throw new Error('sqlite expected');
    const file = handle.raw.client.name;
    const commitsBefore = handle.raw.commits.commits;
    const seenOnDisk: boolean[] = [];

    const outcomes = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) =>
        handle.db
          .transaction()
          .execute(async (trx) => {
            const key = `k${String(i).padStart(2, '0')}`;
            await trx.insertInto('idempotency_keys').values(keyRow(key)).execute();
            // A handler that fails after writing: its row must not land.
            if (i === 7) throw new Error('handler failed');
            // A write that conflicts with another member's: the statement fails, the transaction too.
            if (i === 13) await trx.insertInto('idempotency_keys').values(keyRow('k03')).execute();
            await trx
              .insertInto('idempotency_keys')
              .values(keyRow(`${key}-second`))
              .execute();
            return key;
          })
          .then((key) => {
            // Resolved only after the COMMIT returned: another connection reads the row already.
            seenOnDisk.push(committedKeys(file).includes(key));
            return key;
          }),
      ),
    );

    const failed = outcomes.flatMap((o, i) => (o.status === 'rejected' ? [i] : []));
    expect(failed).toEqual([7, 13]);
    expect(seenOnDisk).toHaveLength(18);
    expect(seenOnDisk.every(Boolean)).toBe(true);
    const expected = Array.from({ length: 20 }, (_, i) => i)
      .filter((i) => i !== 7 && i !== 13)
      .flatMap((i) => {
        const key = `k${String(i).padStart(2, '0')}`;
        return [key, `${key}-second`];
      })
      .sort();
    expect(committedKeys(file)).toEqual(expected);
    // Twenty transactions begun in one turn of the event loop: one COMMIT, one fsync.
    expect(handle.raw.commits.commits - commitsBefore).toBe(1);
  });

  it('lets a read outside a transaction see a transaction released into the open batch', async () => {
    db = await createTestDatabase('sqlite');
    const { handle } = db;
    let released!: () => void;
    const callbackDone = new Promise<void>((resolve) => {
      released = resolve;
    });
    const write = handle.db.transaction().execute(async (trx) => {
      await trx.insertInto('idempotency_keys').values(keyRow('read-after')).execute();
      released();
    });
    await callbackDone;
    // The transaction's callback is over; its COMMIT is not yet done. The read waits for it.
    const read = await handle.db
      .selectFrom('idempotency_keys')
      .select('key')
      .where('key', '=', 'read-after')
      .execute();
    expect(read).toEqual([{ key: 'read-after' }]);
    await write;
  });

  it('answers a transaction, and shows it to reads, only once the WAL sync after its COMMIT returned', async () => {
    const { dir, writer, reader } = walFile();
    // The disk, held by the test: each sync waits until the test lets it return.
    const syncs: ((err: Error | null) => void)[] = [];
    const db = new Kysely<{ t: { v: string } }>({
      dialect: new GroupCommitSqliteDialect({ writer, reader, syncWal: (done) => syncs.push(done) }),
    });
    const turns = async (n: number) => {
      for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
    };
    try {
      let answered = false;
      const write = db
        .transaction()
        .execute((trx) => trx.insertInto('t').values({ v: 'a' }).execute())
        .then(() => {
          answered = true;
        });
      await turns(5);
      expect(syncs).toHaveLength(1); // committed, the sync asked for
      expect(answered).toBe(false);
      let rows: { v: string }[] | undefined;
      const read = db
        .selectFrom('t')
        .selectAll()
        .execute()
        .then((r) => {
          rows = r;
        });
      await turns(5);
      expect(rows).toBeUndefined(); // the commit is not on disk yet: no read sees it
      syncs.shift()?.(null);
      await Promise.all([write, read]);
      expect(answered).toBe(true);
      expect(rows).toEqual([{ v: 'a' }]);

      // A failed sync fails what it covered, and every later write: the kernel may have dropped the pages.
      const lost = db.transaction().execute((trx) => trx.insertInto('t').values({ v: 'b' }).execute());
      await turns(5);
      syncs.shift()?.(new Error('EIO'));
      await expect(lost).rejects.toThrow(/WAL sync failed/);
      await expect(
        db.transaction().execute((trx) => trx.insertInto('t').values({ v: 'c' }).execute()),
      ).rejects.toThrow(/WAL sync failed/);
    } finally {
      await db.destroy();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('answers a transaction run under acknowledgeAtCommit at its COMMIT, while the WAL sync is still under way', async () => {
    const { dir, file, writer, reader } = walFile();
    // The disk, held by the test until it lets go (closing syncs once more).
    const syncs: ((err: Error | null) => void)[] = [];
    let held = true;
    const db = new Kysely<{ t: { v: string } }>({
      dialect: new GroupCommitSqliteDialect({
        writer,
        reader,
        syncWal: (done) => (held ? syncs.push(done) : done(null)),
      }),
    });
    const insert = (v: string) =>
      db.transaction().execute((trx) => trx.insertInto('t').values({ v }).execute());
    try {
      // A durable write holds the disk: its sync is asked for and not answered.
      let durable = false;
      const first = insert('a').then(() => {
        durable = true;
      });
      await vi.waitFor(() => expect(syncs).toHaveLength(1));
      // Written at commit meanwhile: answered once COMMIT returned, without waiting for any sync.
      await acknowledgeAtCommit(() => insert('b'));
      expect(durable).toBe(false);
      expect(committedKeysOf(file)).toEqual(['a', 'b']); // in the WAL: another process reads both
      // Its sync follows: the write answered on disk is still answered only after its own sync.
      syncs.shift()?.(null);
      await first;
      await vi.waitFor(() => expect(syncs).toHaveLength(1));
      syncs.shift()?.(null);
      // A failed COMMIT fails the caller answered at commit too.
      await expect(acknowledgeAtCommit(() => insert('a'))).rejects.toThrow(/UNIQUE/);
    } finally {
      held = false;
      for (const done of syncs.splice(0)) done(null);
      await db.destroy();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('answers a transaction run under acknowledgeAtCommit without waiting for the transactions queued behind it', async () => {
    const { dir, file, writer, reader } = walFile();
    const db = new Kysely<{ t: { v: string } }>({
      dialect: new GroupCommitSqliteDialect({ writer, reader, syncWal: (done) => done(null) }),
    });
    try {
      const pixel = acknowledgeAtCommit(() =>
        db.transaction().execute((trx) => trx.insertInto('t').values({ v: 'pixel' }).execute()),
      );
      // Queued on the write connection behind it, and open until the pixel's write is answered: had
      // the two shared a COMMIT, each would wait for the other for ever.
      const behind = db.transaction().execute(async (trx) => {
        await trx.insertInto('t').values({ v: 'behind' }).execute();
        await pixel;
      });
      await pixel;
      expect(committedKeysOf(file)).toEqual(['pixel']);
      await behind;
      expect(committedKeysOf(file)).toEqual(['behind', 'pixel']);
    } finally {
      await db.destroy();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('checkpoints the WAL in a worker thread once commits keep coming, and closes cleanly', async () => {
    db = await createTestDatabase('sqlite');
    const { handle } = db;
    if (handle.raw.kind !== 'sqlite' || !handle.raw.checkpointer) throw new Error('sqlite file expected');
    const { client, checkpointer } = handle.raw;
    for (let i = 0; i < 120; i++) {
      await handle.db.transaction().execute((trx) =>
        trx
          .insertInto('idempotency_keys')
          .values(keyRow(`c${i}`))
          .execute(),
      );
    }
    // The commit's own automatic checkpoint is off; the worker's connection checkpoints instead.
    expect(client.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
    for (let i = 0; i < 200 && checkpointer.checkpoints === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(checkpointer.checkpoints).toBeGreaterThan(0);
    const rows = await handle.db.selectFrom('idempotency_keys').select('key').execute();
    expect(rows).toHaveLength(120);
    await db.drop(); // stops the worker after its running checkpoint, then closes the connections
    db = undefined;
  });

  it('commits each transaction on its own in memory (no second connection)', async () => {
    const memory = openDatabase({});
    try {
      await memory.db.schema
        .createTable('t')
        .addColumn('v', 'text', (c) => c.primaryKey())
        .execute();
      await Promise.allSettled(
        ['a', 'b', 'a'].map((v) =>
          memory.db.transaction().execute((trx) =>
            trx
              .insertInto('t' as never)
              .values({ v } as never)
              .execute(),
          ),
        ),
      );
      const rows = await memory.db
        .selectFrom('t' as never)
        .selectAll()
        .execute();
      expect(rows).toEqual([{ v: 'a' }, { v: 'b' }]);
    } finally {
      await memory.close();
    }
  });
});

describe.each(dialects)('acknowledged return requests survive SIGKILL (%s)', (dialect) => {
  let db: TestDatabase | undefined;
  let service: ServiceProcess | undefined;
  afterEach(async () => {
    await service?.kill();
    await db?.drop();
  });

  it('has every acknowledged request in the database, and no row of a request refused in its transaction', async () => {
    db = await createTestDatabase(dialect);
    service = await spawnService({ ...db.env, RATE_LIMIT_WRITES_PER_MINUTE: '1000000000' });
    const url = `${service.url}/cs/return`;
    const acknowledged = new Map<string, string>(); // request_id -> name
    const refused: string[] = []; // names of requests answered 409
    let stop = false;
    let killed: Promise<void> | undefined;

    const post = async (name: string, key?: string) => {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) },
        body: JSON.stringify({ brand_domain: 'netflix.com', name, contact: 'kill@example.com' }),
      });
      const body = (await res.json()) as { request_id?: string; code?: string };
      if (res.status === 200 && body.request_id) acknowledged.set(body.request_id, name);
      else if (res.status === 409) refused.push(name);
      else throw new Error(`unexpected ${res.status} ${JSON.stringify(body)}`);
      // Killed right after a reply, with others in flight: their transactions may be mid-batch.
      if (acknowledged.size >= 300 && !killed) {
        stop = true;
        killed = (service as ServiceProcess).kill();
      }
    };
    const worker = async (w: number) => {
      for (let n = 0; !stop; n++) {
        try {
          if (n % 4 === 3) {
            // One Idempotency-Key, two bodies at once: one is answered, the other refused 409 -
            // before its transaction, or inside it when both passed the check together.
            const key = randomUUID();
            await Promise.all([post(`pair-${key}-a`, key), post(`pair-${key}-b`, key)]);
          } else {
            await post(`w${w}-${n}`);
          }
        } catch (err) {
          if (!stop) throw err; // after the kill, requests in flight fail: not acknowledged
        }
      }
    };
    await Promise.all(Array.from({ length: 16 }, (_, w) => worker(w)));
    await killed;
    service = undefined;

    expect(acknowledged.size).toBeGreaterThanOrEqual(300);
    expect(refused.length).toBeGreaterThan(0);
    // A fresh connection reads what the dead process left (SQLite recovers its WAL on open).
    const reader = openDatabase(
      db.dialect === 'sqlite'
        ? { sqliteFile: (db.handle.raw as { client: SQLite.Database }).client.name }
        : { url: db.env.DATABASE_URL ?? null },
    );
    try {
      const rows = await reader.db.selectFrom('return_requests').select(['id', 'requester_name']).execute();
      const stored = new Map(rows.map((r) => [r.id, r.requester_name]));
      const missing = [...acknowledged].filter(([id, name]) => stored.get(id) !== name);
      expect(missing).toEqual([]);
      const names = new Set(rows.map((r) => r.requester_name));
      expect(refused.filter((name) => names.has(name))).toEqual([]);
    } finally {
      await reader.close();
    }
  }, 120_000);
});
