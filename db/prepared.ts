/**
 * Statements of the hot paths that kysely builds and compiles once per dialect: later runs bind
 * their own values to the same SQL. Building and compiling a 20-column insert costs more than
 * SQLite takes to run it (`POST /return`'s profile: the builders and the compiler were a sixth of
 * the request).
 *
 * The first run of a shape compiles it and checks that the compiled parameters are exactly the
 * values it was given, in order: a builder that uses a value twice, drops one or adds one of its
 * own is refused at once, since its SQL replayed with other values would say something else.
 */
import type { Compilable, CompiledQuery, DialectAdapter, Insertable, Kysely } from 'kysely';
import type { Database } from './schema.ts';

type Db = Kysely<Database>;

const compiled = new WeakMap<DialectAdapter, Map<string | symbol, CompiledQuery>>();

function compiledFor(
  db: Db,
  key: string | symbol,
  values: readonly unknown[],
  build: () => Compilable,
): CompiledQuery {
  const adapter = db.getExecutor().adapter;
  let shapes = compiled.get(adapter);
  if (!shapes) {
    shapes = new Map();
    compiled.set(adapter, shapes);
  }
  let query = shapes.get(key);
  if (!query) {
    query = build().compile();
    const { parameters } = query;
    if (parameters.length !== values.length || parameters.some((p, i) => !Object.is(p, values[i])))
      throw new Error(
        `prepared statement ${String(key)}: its parameters are not exactly the values given, in order`,
      );
    shapes.set(key, query);
  }
  return query;
}

/**
 * A query of `values` built once: `build` must pass each value to kysely once, in order, and add
 * none of its own (literals go in the SQL: `sql.lit`, or a value kysely inlines). `name` only
 * names it in errors: each `prepared` keeps its own SQL, whatever its name.
 */
export function prepared<V extends unknown[], R>(
  name: string,
  build: (db: Db, ...values: V) => Compilable<R>,
): { all(db: Db, ...values: V): Promise<R[]>; first(db: Db, ...values: V): Promise<R | undefined> } {
  const key = Symbol(name);
  const all = async (db: Db, ...values: V): Promise<R[]> => {
    const query = compiledFor(db, key, values, () => build(db, ...values));
    const { rows } = await db.executeQuery<R>({ ...query, parameters: values } as CompiledQuery<R>);
    return rows;
  };
  return { all, first: async (db, ...values) => (await all(db, ...values))[0] };
}

/** `insert into table (columns) values (...), (...)` of rows that all name the same columns. */
export async function insertRows<T extends keyof Database & string>(
  db: Db,
  table: T,
  rows: readonly [Insertable<Database[T]>, ...Insertable<Database[T]>[]],
): Promise<void> {
  const columns = Object.keys(rows[0]) as (keyof Insertable<Database[T]> & string)[];
  const values: unknown[] = [];
  for (const row of rows) {
    if (Object.keys(row).length !== columns.length)
      throw new Error(`insertRows ${table}: every row must name the same columns`);
    for (const column of columns) {
      const value = row[column];
      if (value === undefined) throw new Error(`insertRows ${table}: ${column} is undefined (write null)`);
      values.push(value);
    }
  }
  const key = `insert ${table} (${columns.join(',')}) x${rows.length}`;
  const query = compiledFor(db, key, values, () =>
    // biome-ignore lint/suspicious/noExplicitAny: the rows are typed by the signature above
    db.insertInto(table).values(rows as any),
  );
  await db.executeQuery({ ...query, parameters: values });
}
