/**
 * What every input must satisfy whatever its schema says, so that both databases store it alike:
 * text without NUL characters, and dates inside the range both databases and JavaScript print and
 * read back. `parseInput` applies the first to every operation's input; the date schemas are the
 * only ones an input schema uses for dates.
 */
import { z } from 'zod';
import type { FieldError } from './errors.ts';

/**
 * PostgreSQL text (and jsonb) cannot hold U+0000 - it answers `invalid byte sequence for encoding
 * "UTF8": 0x00` - while SQLite stores it. No field of this service has a use for it.
 */
export const NUL_MESSAGE = 'must not contain NUL characters (U+0000)';

/**
 * Every string in `value` - values and object keys, at any depth - that holds a NUL character,
 * named by its path as validation errors name fields (`events.0.url`). A key is named escaped, so
 * the field never carries the NUL itself. Iterative: a deeply nested body cannot exhaust the stack.
 */
export function nulFields(value: unknown, root?: string): FieldError[] {
  return holdsNul(value) ? nulPaths(value, root) : [];
}

/** Whether any string in `value` holds NUL: the common case, without building a single path. */
function holdsNul(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const current = stack.pop();
    if (typeof current === 'string') {
      if (current.includes('\u0000')) return true;
    } else if (Array.isArray(current)) {
      for (const item of current) stack.push(item);
    } else if (typeof current === 'object' && current !== null) {
      for (const key of Object.keys(current)) {
        if (key.includes('\u0000')) return true;
        stack.push((current as Record<string, unknown>)[key]);
      }
    }
  }
  return false;
}

function nulPaths(value: unknown, root: string | undefined): FieldError[] {
  const found: FieldError[] = [];
  const stack: { value: unknown; path: string | undefined; key?: true }[] = [{ value, path: root }];
  const join = (path: string | undefined, key: string) => (path === undefined ? key : `${path}.${key}`);
  while (stack.length > 0) {
    const { value: current, path, key } = stack.pop() as (typeof stack)[number];
    if (key) {
      found.push({ field: path as string, message: `name ${NUL_MESSAGE}` });
    } else if (typeof current === 'string') {
      if (current.includes('\u0000')) found.push({ field: path ?? '(body)', message: NUL_MESSAGE });
    } else if (Array.isArray(current)) {
      for (let i = current.length - 1; i >= 0; i--)
        stack.push({ value: current[i], path: join(path, String(i)) });
    } else if (typeof current === 'object' && current !== null) {
      const entries = Object.entries(current);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [name, item] = entries[i] as [string, unknown];
        stack.push(
          name.includes('\u0000')
            ? { value: undefined, path: join(path, JSON.stringify(name).slice(1, -1)), key: true }
            : { value: item, path: join(path, name) },
        );
      }
    }
  }
  return found;
}

/**
 * The instants both databases store and JavaScript prints back in the same form: PostgreSQL has
 * no year 0 (`0000-01-01` is "out of range" for date and timestamptz), and `Date#toISOString`
 * writes years after 9999 as `+010000`, which neither database reads as a date.
 */
const EARLIEST = Date.parse('0001-01-01T00:00:00.000Z');
const LATEST = Date.parse('9999-12-31T23:59:59.999Z');
export const DATE_RANGE_MESSAGE = 'must be between 0001-01-01 and 9999-12-31 (UTC)';

/** Whether the instant (epoch milliseconds) lies in the range both databases store. */
export const isStorableInstant = (ms: number): boolean => ms >= EARLIEST && ms <= LATEST;

/** Text that is no date at all is left to the format check, which reports it on its own. */
const storable = (text: string): boolean => {
  const ms = Date.parse(text);
  return Number.isNaN(ms) || isStorableInstant(ms);
};

/** An ISO 8601 calendar date (`YYYY-MM-DD`) from 0001-01-01 to 9999-12-31. */
export function calendarDate(message?: string) {
  return z.iso.date(message).refine(storable, DATE_RANGE_MESSAGE);
}

/**
 * An RFC 3339 date-time whose instant lies from 0001-01-01 to 9999-12-31 UTC (an offset can move
 * `0001-01-01T00:00:00+01:00` into year 0).
 */
export function dateTime(options?: Parameters<typeof z.iso.datetime>[0]) {
  return z.iso.datetime(options).refine(storable, DATE_RANGE_MESSAGE);
}

/** zod issues -> field errors that name the field and never echo the value (it may be personal data). */
export function fieldErrors(error: z.ZodError): FieldError[] {
  const out: FieldError[] = [];
  for (const issue of error.issues) {
    const field = issue.path.map(String).join('.') || '(body)';
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        out.push({ field: issue.path.length ? `${field}.${key}` : key, message: 'is not a known field' });
      }
    } else if (issue.code === 'invalid_type' && issue.input === undefined) {
      out.push({ field, message: 'is required' });
    } else {
      out.push({ field, message: issue.message });
    }
  }
  return out;
}
