import SQLite from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { stableParameters } from '../../db/sqlite-parameters.ts';

describe('stableParameters', () => {
  it('writes every parameter +? and leaves literals, quoted identifiers and comments alone', () => {
    expect(stableParameters('select * from "t" where "a" = ? and b in (?, ?) limit ?')).toBe(
      'select * from "t" where "a" = +? and b in (+?, +?) limit +?',
    );
    expect(stableParameters(`select '?', 'it''s ?', "col?", \`x?\`, [y?], ? -- why?\n/* ? */ , ?`)).toBe(
      `select '?', 'it''s ?', "col?", \`x?\`, [y?], +? -- why?\n/* ? */ , +?`,
    );
    expect(stableParameters('select 1')).toBe('select 1');
  });

  it('answers as the bare parameters do: values, affinity, NULL, IN, LIMIT, blobs and the index', () => {
    const db = new SQLite(':memory:');
    db.exec(`create table t (id integer primary key, n integer, s text, b blob);
             create index t_s on t (s, n);
             insert into t (n, s, b) values (1, '1', x'00'), (2, 'two', null), (null, 'x', x'ff');`);
    const cases: [string, unknown[]][] = [
      ['select id from t where n = ? order by id', ['1']], // text compared to an integer column: affinity applies
      ['select id from t where s = ? order by n', [1]], // integer compared to a text column
      ['select id from t where n is ? order by id', [null]],
      ['select id from t where s in (?, ?) order by n desc limit ?', ['x', 'two', 1]],
      ['select id from t where b = ?', [Buffer.from([0xff])]],
      ['select typeof(?) as t, ? + 1 as v', [2.5, 2]],
    ];
    for (const [sql, params] of cases) {
      expect(db.prepare(stableParameters(sql)).all(...params), sql).toEqual(db.prepare(sql).all(...params));
    }
    const plan = (sql: string) =>
      db
        .prepare(`explain query plan ${sql}`)
        .all('two')
        .map((row) => (row as { detail: string }).detail);
    const sql = 'select id from t where s = ? order by n';
    expect(plan(stableParameters(sql))).toEqual(plan(sql));
    expect(plan(stableParameters(sql)).join()).toMatch(/USING (COVERING )?INDEX t_s/);
  });
});
