/**
 * Parameters that do not re-prepare their statement: every `?` of a statement is written `+?`
 * before SQLite prepares it.
 *
 * Why: when SQLite's query planner looks at the value bound to a parameter (an indexed `col = ?`
 * next to an ORDER BY, a `LIMIT ?`, a LIKE pattern), it marks the parameter so that binding it
 * again expires the statement, and the next step prepares it anew (`sqlite3VdbeReprepareOnBind`,
 * skipped only under SQLITE_DBCONFIG_ENABLE_QPSG, which better-sqlite3 does not expose). A
 * statement kept prepared then costs a whole prepare on every run: with better-sqlite3 13.2
 * (SQLite 3.54.1) `select * from sites where account_id = ? order by created_at` took 44 us a run,
 * the same with `+?` 9 us, the featured slot's join 80 us against 7 us - the same plan each time.
 *
 * Unary plus is a no-op on any value (SQL As Understood By SQLite, "Operators": "it can be applied
 * to strings, numbers, blobs or NULL and it always returns a result with the same value"), and
 * like a bare parameter `+?` has no affinity, so comparisons apply the column's affinity to it as
 * before; an index on the column is used as before (a `+` on the column's side is what disables
 * one). The planner cannot use a bound value to pick a partial index any more; this database's
 * partial indexes are chosen without one (`col = ?` implies `col is not null` whatever `?` holds).
 *
 * Only parameters change: string literals, quoted identifiers and comments are copied unchanged.
 */
export function stableParameters(sql: string): string {
  let out = '';
  let i = 0;
  let copied = 0;
  while (i < sql.length) {
    const c = sql[i] as string;
    if (c === "'" || c === '"' || c === '`') {
      i = closingQuote(sql, i, c);
    } else if (c === '[') {
      const end = sql.indexOf(']', i + 1);
      i = end === -1 ? sql.length : end + 1;
    } else if (c === '-' && sql[i + 1] === '-') {
      const end = sql.indexOf('\n', i + 2);
      i = end === -1 ? sql.length : end + 1;
    } else if (c === '/' && sql[i + 1] === '*') {
      const end = sql.indexOf('*/', i + 2);
      i = end === -1 ? sql.length : end + 2;
    } else if (c === '?') {
      out += `${sql.slice(copied, i)}+?`;
      i++;
      copied = i;
    } else {
      i++;
    }
  }
  return copied === 0 ? sql : out + sql.slice(copied);
}

/** Index just past the quote that closes the one at `start` (a doubled quote escapes itself). */
function closingQuote(sql: string, start: number, quote: string): number {
  let i = start + 1;
  while (i < sql.length) {
    if (sql[i] === quote) {
      if (sql[i + 1] !== quote) return i + 1;
      i += 2;
    } else {
      i++;
    }
  }
  return sql.length;
}
