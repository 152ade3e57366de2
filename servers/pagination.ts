/**
 * Pagination of lists (listings, agents, a brand's return requests): keyset pagination over
 * `(created_at desc, id desc)`, stable while rows are added (new rows sort before every cursor) and
 * the same on both dialects. The cursor is opaque to callers (base64url JSON), so the order can
 * change without breaking their code. Lists in another order (the leaderboard's score and domain)
 * write their position with the same codec (`cursorCodec`), a tuple of their own.
 */
import { sql } from 'kysely';
import { z } from 'zod';
import { invalid } from './errors.ts';
import { dateTime } from './input.ts';

export interface Position {
  at: string;
  id: string;
}

export const DEFAULT_LIMIT = 20;

/**
 * Cursors holding a position as a base64url JSON tuple. Decoding is of client text that reaches a
 * query as is, so only a tuple `position` accepts passes; anything else is a 400 on `cursor`.
 */
export function cursorCodec<T extends z.ZodTuple>(position: T) {
  return {
    encode(values: z.output<T>): string {
      return Buffer.from(JSON.stringify(values)).toString('base64url');
    },
    /** The position a cursor names (null without one); 400 for anything this service did not issue. */
    decode(cursor: string | undefined): z.output<T> | null {
      if (cursor === undefined) return null;
      let raw: unknown;
      try {
        raw = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
      } catch {
        raw = null;
      }
      const parsed = position.safeParse(raw);
      if (!parsed.success)
        throw invalid([{ field: 'cursor', message: 'is not a cursor from a previous page' }]);
      return parsed.data;
    },
  };
}

const positions = cursorCodec(z.tuple([dateTime(), z.uuid()]));

export function encodeCursor(position: Position): string {
  return positions.encode([position.at, position.id]);
}

/** The position a cursor names; 400 on the `cursor` field for anything this service did not issue. */
export function decodeCursor(cursor: string | undefined): Position | null {
  const decoded = positions.decode(cursor);
  return decoded && { at: decoded[0], id: decoded[1] };
}

/** Rows of `table` after `after` in `(created_at desc, id desc)` order, spelled out for both dialects. */
export function rowsAfter(table: string, after: Position) {
  const at = sql.ref(`${table}.created_at`);
  const id = sql.ref(`${table}.id`);
  return sql<boolean>`(${at} < ${after.at} or (${at} = ${after.at} and ${id} < ${after.id}))`;
}

/** `%`, `_` and the escape character itself taken literally in `LIKE ... ESCAPE '\'`. */
export function likePattern(text: string): string {
  return `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** A JSON number literal (RFC 8259 section 6): what a JSON body could hold in the same field. */
const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/**
 * A number that may arrive as a query-string text (REST) or as a JSON number (MCP, JSON bodies).
 * Only text written as a JSON number is converted, so a query accepts exactly what a body would;
 * anything else (blank, hex, `Infinity`, padded) reaches the number schema and is refused there.
 * Defaults and `.optional()` go on the inner schema, so JSON Schema still shows them.
 */
export function queryNumber<T extends z.ZodType>(schema: T) {
  return z.preprocess(
    (v) => (typeof v === 'string' && JSON_NUMBER.test(v) && Number.isFinite(Number(v)) ? Number(v) : v),
    schema,
  );
}

/**
 * A boolean that may arrive as query-string text (REST GET, the paid routes) or as JSON `true` /
 * `false`. Only the texts `true` and `false` are converted: `z.coerce.boolean()` would read
 * `"false"` as true. Anything else reaches the boolean schema and is refused there. A default goes
 * on the inner schema (`queryBoolean(z.boolean().default(true))`), where the JSON Schema shows it.
 */
export function queryBoolean<T extends z.ZodType<boolean>>(schema: T) {
  return z.preprocess((v) => (v === 'true' ? true : v === 'false' ? false : v), schema);
}

export const Limit = queryNumber(
  z.number().int('must be a whole number').min(1, 'must be at least 1').max(100, 'must be at most 100'),
)
  .optional()
  .describe('Results per page, 1 to 100 (default 20).');

export const Cursor = z
  .string()
  .max(200)
  .optional()
  .describe('next_cursor of the previous page; omit for the first page. Opaque.');

export const NextCursor = z
  .string()
  .nullable()
  .describe('Pass as cursor to get the next page; null on the last page.');
