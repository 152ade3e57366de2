/**
 * The one reader of JSON request bodies, for every adapter: the REST routes, both MCP endpoints,
 * A2A and the authorization server's JSON endpoints. `JSON.parse` on Node's decoding is lenient
 * where the standards are not, and each leniency lets two readers of one body see two requests:
 * - bytes that are not UTF-8 (RFC 8259 section 8.1) become U+FFFD;
 * - a `\uD800`-style escape with no partner decodes to a lone surrogate (RFC 8259 section 8.2:
 *   "the behavior of software that receives JSON texts containing such values is unpredictable";
 *   RFC 7493 section 2.1: I-JSON messages MUST NOT include them);
 * - a name given twice in one object keeps its last value (RFC 8259 section 4: names SHOULD be
 *   unique; RFC 7493 section 2.3: MUST).
 * Each is refused as `malformed_json`, naming the byte of the body where the fault starts and the
 * member it is in. A UTF-8 byte order mark is ignored (RFC 8259 section 8.1 allows it).
 */
import express, { type RequestHandler } from 'express';
import { ServiceError } from './errors.ts';

/** Where and why a body is not the JSON this service accepts. */
export interface MalformedJson {
  /** Byte offset in the body where the fault starts (absent where the parser names no position). */
  offset?: number;
  reason: string;
  /** The member the fault is in, named as validation errors name fields (`params.arguments.charge`). */
  field?: string;
}

export type ParsedJson = { ok: true; value: unknown } | { ok: false; fault: MalformedJson };

/** A `JSON.parse` reviver (with ECMAScript's JSON.parse source text access). */
export type Reviver = (this: object, key: string, value: unknown, context?: { source?: string }) => unknown;

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * `bytes` as a JSON value, or the first fault in it. `reviverFor` sees the decoded text and may
 * return a reviver for `JSON.parse` that looks at the values and returns each as it is (the MCP
 * adapter's check of inexact numeric ids): the count of members below reads what it parsed.
 *
 * The common body costs a fatal decode, `JSON.parse` and a count of its members
 * (`mayHoldFault`); a body that may hold a fault is read once more outside its strings
 * (`firstFault`).
 */
export function parseJsonBody(
  bytes: Uint8Array,
  reviverFor?: (text: string) => Reviver | undefined,
): ParsedJson {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return { ok: false, fault: { offset: firstInvalidUtf8(bytes), reason: 'invalid UTF-8' } };
  }
  let value: unknown;
  try {
    const reviver = reviverFor?.(text);
    value = reviver === undefined ? JSON.parse(text) : JSON.parse(text, reviver as never);
  } catch (err) {
    return { ok: false, fault: syntaxFault(bytes, text, err) };
  }
  const fault = mayHoldFault(text, value) ? firstFault(text) : undefined;
  if (fault === undefined) return { ok: true, value };
  return {
    ok: false,
    fault: {
      offset: byteOffset(bytes, text, fault.index),
      reason: fault.reason,
      field: fault.path.join('.'),
    },
  };
}

/** The fault as a client reads it: `duplicate name (RFC 7493 section 2.3) at byte 57, in amount`. */
export function describeFault(fault: MalformedJson): string {
  const at = fault.offset === undefined ? '' : ` at byte ${fault.offset}`;
  return `${fault.reason}${at}${fault.field ? `, in ${fault.field}` : ''}`;
}

/** The REST error of a refused body: 400 `malformed_json`, naming the position and the member. */
export function malformedJson(fault: MalformedJson): ServiceError {
  return new ServiceError('malformed_json', {
    detail: `The body is not valid JSON: ${describeFault(fault)}`,
    errors: [
      {
        field: fault.field || '(body)',
        message: `${fault.reason}${fault.offset === undefined ? '' : ` at byte ${fault.offset}`}`,
      },
    ],
  });
}

/** RFC 8259 section 8.1: JSON exchanged between systems is UTF-8; a `charset` naming another is refused. */
const charsetParameter = /;\s*charset\s*=\s*"?([^";\s]*)/i;

/**
 * Express middleware reading an `application/json` body of up to `limit` bytes into `req.body`,
 * as body-parser's `express.json({ strict: true })` did (the body read, inflated and limited by
 * body-parser, whose failures keep their types for the error handlers; an empty body is `{}`; the
 * top level must be an object or an array), through `parseJsonBody`. A refused body is passed on
 * as a `malformed_json` ServiceError; other content types are left unread.
 */
export function jsonBody(limit: number | string): RequestHandler {
  const read = express.raw({ type: 'application/json', limit });
  return (req, res, next) => {
    const contentType = req.headers['content-type'];
    const charset = contentType?.includes('charset') ? charsetParameter.exec(contentType)?.[1] : undefined;
    if (charset !== undefined && !/^utf-?8$/i.test(charset)) {
      next(
        new ServiceError('unsupported_media_type', {
          detail: `JSON is UTF-8 (RFC 8259 section 8.1); charset ${charset} is not accepted`,
        }),
      );
      return;
    }
    read(req, res, (err?: unknown) => {
      if (err !== undefined) return next(err);
      const bytes: unknown = req.body;
      if (!Buffer.isBuffer(bytes)) return next();
      if (bytes.length === 0) {
        req.body = {};
        return next();
      }
      const parsed = parseJsonBody(bytes);
      if (!parsed.ok) return next(malformedJson(parsed.fault));
      if (typeof parsed.value !== 'object' || parsed.value === null) {
        return next(
          malformedJson({
            offset: leadingSpace(bytes),
            reason: 'a value other than an object or array at the top level',
          }),
        );
      }
      req.body = parsed.value;
      next();
    });
  };
}

const leadingSpace = (bytes: Uint8Array): number => {
  let i = 0;
  while (bytes[i] === 0x20 || bytes[i] === 0x09 || bytes[i] === 0x0a || bytes[i] === 0x0d) i++;
  return i;
};

/** Bytes the decoder dropped in front of the text: a UTF-8 byte order mark. */
const bomLength = (bytes: Uint8Array): number =>
  bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;

/** The byte offset in `bytes` of the character at `index` of `text`, its decoding. */
const byteOffset = (bytes: Uint8Array, text: string, index: number): number =>
  bomLength(bytes) + Buffer.byteLength(text.slice(0, index));

/**
 * The offset of the first byte that does not decode. The lossy decoder puts U+FFFD where each
 * ill-formed sequence was, and everything before the first one is well-formed and re-encodes to
 * the same bytes; a U+FFFD that was sent as such (EF BF BD) is passed over.
 */
function firstInvalidUtf8(bytes: Uint8Array): number {
  const lossy = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  let offset = 0;
  let from = 0;
  for (;;) {
    const i = lossy.indexOf('\uFFFD', from);
    if (i === -1) return bytes.length;
    offset += Buffer.byteLength(lossy.slice(from, i));
    if (bytes[offset] !== 0xef || bytes[offset + 1] !== 0xbf || bytes[offset + 2] !== 0xbd) return offset;
    offset += 3;
    from = i + 1;
  }
}

/** V8's SyntaxError, with the character position it names as a byte offset. */
function syntaxFault(bytes: Uint8Array, text: string, err: unknown): MalformedJson {
  const message = err instanceof Error ? err.message : String(err);
  const at = / in JSON at position (\d+)/.exec(message);
  if (at) {
    return {
      offset: byteOffset(bytes, text, Number(at[1])),
      reason: message.slice(0, at.index),
    };
  }
  if (message.startsWith('Unexpected end of JSON input'))
    return { offset: bytes.length, reason: 'unexpected end of input' };
  return { reason: message };
}

/** Objects and arrays of a parsed body still to count (`membersOf`), kept from call to call. */
const pending: unknown[] = [];

/**
 * Whether `text`, which JSON.parse read as `value`, may hold a repeated name or a lone surrogate
 * escape. Without a backslash it has no escape at all, so each of its colons is a name separator
 * or a character of a string: when there are only as many colons as `value` has members, no
 * member was lost to a repeated name.
 */
function mayHoldFault(text: string, value: unknown): boolean {
  if (text.indexOf('\\') !== -1 || inheritsEnumerable()) return true;
  let colons = 0;
  for (let at = text.indexOf(':'); at !== -1; at = text.indexOf(':', at + 1)) colons++;
  return colons !== membersOf(value);
}

/** Whether objects inherit an enumerable property (a polluted prototype), which `membersOf` would count. */
function inheritsEnumerable(): boolean {
  for (const _ in empty) return true;
  return false;
}
const empty = {};

/** The members of every object in `value`. */
function membersOf(value: unknown): number {
  let members = 0;
  let top = 0;
  if (typeof value === 'object' && value !== null) pending[top++] = value;
  while (top > 0) {
    const node = pending[--top] as Record<string, unknown> | unknown[];
    pending[top] = undefined;
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        const item = node[i];
        if (typeof item === 'object' && item !== null) pending[top++] = item;
      }
    } else {
      for (const name in node) {
        members++;
        const item = node[name];
        if (typeof item === 'object' && item !== null) pending[top++] = item;
      }
    }
  }
  if (pending.length > KEPT) pending.length = KEPT;
  return members;
}

interface Fault {
  index: number;
  reason: string;
  path: (string | number)[];
}

/**
 * What `firstFault` keeps while it reads, held from call to call so that a common body allocates
 * nothing there (the pass is synchronous, one body at a time):
 * - per open container, by depth: where its object's names start on the name stack (-1: an
 *   array), and its current member (the index of its name on the stack) or element index;
 * - the name stack: the names of the open objects, as offsets in the text, and decoded when they
 *   hold an escape;
 * - the names of an object past SET_FROM of them, as a set.
 * Trimmed back to KEPT entries after a body nested or named beyond that.
 */
const firstName: number[] = [];
const current: number[] = [];
const nameStart: number[] = [];
const nameEnd: number[] = [];
const decodedName: (string | undefined)[] = [];
const nameSets: (Set<string> | undefined)[] = [];
const SET_FROM = 8;
const KEPT = 256;

/**
 * The first name repeated in an object, or string holding a lone surrogate escape, in `text` -
 * valid JSON, as `JSON.parse` accepted it. One pass outside the strings (skipped with `indexOf`),
 * comparing each name with the others of its object where it stands in the text.
 */
function firstFault(text: string): Fault | undefined {
  let depth = -1;
  let top = 0;
  let nameNext = false;
  let fault: Fault | undefined;
  // The next backslash, and the next escape that may be a surrogate's, at or after `i` (-1: none
  // left): each is searched for once per stretch of text, however many strings hold escapes.
  let backslash = text.indexOf('\\');
  let surrogate = backslash === -1 ? -1 : nextSurrogateEscape(text, backslash);
  for (let i = 0, n = text.length; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      let end = text.indexOf('"', i + 1);
      let decoded: string | undefined;
      if (backslash !== -1 && backslash < end) {
        while (escapedQuote(text, end)) end = text.indexOf('"', end + 1);
        backslash = text.indexOf('\\', end + 1);
        if (surrogate !== -1 && surrogate < end) {
          const lone = loneSurrogate(text, i, end);
          if (lone !== -1) {
            const reason = 'lone surrogate escape (RFC 7493 section 2.1)';
            fault = { index: lone, reason, path: pathTo(text, nameNext ? depth : depth + 1) };
            break;
          }
          surrogate = nextSurrogateEscape(text, end + 1);
        }
        if (nameNext) decoded = JSON.parse(text.slice(i, end + 1)) as string;
      }
      if (nameNext) {
        if (repeated(text, depth, top, i + 1, end, decoded)) {
          const name = decoded ?? text.slice(i + 1, end);
          const reason = 'duplicate name (RFC 7493 section 2.3)';
          fault = { index: i, reason, path: [...pathTo(text, depth), name] };
          break;
        }
        nameStart[top] = i + 1;
        nameEnd[top] = end;
        decodedName[top] = decoded;
        current[depth] = top++;
        nameNext = false;
      }
      i = end;
    } else if (c === 0x7b) {
      firstName[++depth] = top;
      current[depth] = -1;
      if (nameSets[depth] !== undefined) nameSets[depth] = undefined;
      nameNext = true;
    } else if (c === 0x5b) {
      firstName[++depth] = -1;
      current[depth] = 0;
    } else if (c === 0x7d || c === 0x5d) {
      if ((firstName[depth] as number) >= 0) top = firstName[depth] as number;
      depth--;
      nameNext = false;
    } else if (c === 0x2c) {
      if ((firstName[depth] as number) < 0) (current[depth] as number)++;
      else nameNext = true;
    }
  }
  if (firstName.length > KEPT) firstName.length = current.length = KEPT;
  if (nameStart.length > KEPT) nameStart.length = nameEnd.length = decodedName.length = KEPT;
  if (nameSets.length > 0) nameSets.length = 0;
  return fault;
}

const nameAt = (text: string, k: number): string =>
  decodedName[k] ?? text.slice(nameStart[k] as number, nameEnd[k] as number);

/** The member path of the containers open at depths below `depth`. */
function pathTo(text: string, depth: number): (string | number)[] {
  const path: (string | number)[] = [];
  for (let d = 0; d < depth; d++) {
    path.push((firstName[d] as number) < 0 ? (current[d] as number) : nameAt(text, current[d] as number));
  }
  return path;
}

/**
 * Whether the object open at `depth` already has the name at `start`..`end` of `text` (`decoded`
 * when it holds an escape). A few names are compared in place, character by character; past
 * SET_FROM, the object's names go into a set.
 */
function repeated(
  text: string,
  depth: number,
  top: number,
  start: number,
  end: number,
  decoded: string | undefined,
): boolean {
  const first = firstName[depth] as number;
  if (top - first >= SET_FROM) {
    let names = nameSets[depth];
    if (names === undefined) {
      names = new Set();
      for (let k = first; k < top; k++) names.add(nameAt(text, k));
      nameSets[depth] = names;
    }
    const name = decoded ?? text.slice(start, end);
    if (names.has(name)) return true;
    names.add(name);
    return false;
  }
  const length = end - start;
  for (let k = first; k < top; k++) {
    if (decoded !== undefined || decodedName[k] !== undefined) {
      if (nameAt(text, k) === (decoded ?? text.slice(start, end))) return true;
      continue;
    }
    const from = nameStart[k] as number;
    if ((nameEnd[k] as number) - from !== length) continue;
    let j = 0;
    while (j < length && text.charCodeAt(from + j) === text.charCodeAt(start + j)) j++;
    if (j === length) return true;
  }
  return false;
}

/** Whether the quote at `at` is escaped: an odd run of backslashes before it. */
function escapedQuote(text: string, at: number): boolean {
  let i = at - 1;
  while (text.charCodeAt(i) === 0x5c) i--;
  return (at - 1 - i) % 2 === 1;
}

const surrogateEscape = /\\u[dD][89a-fA-F]/g;
/** Every escape of a JSON string in order, so that `\\` is never read as the start of one. */
const escapes = /\\(?:u([0-9a-fA-F]{4})|.)/gs;

/** Where the next `\uD800`-`\uDFFF` escape may start from `from` on (it may be an escaped backslash's `u`). */
function nextSurrogateEscape(text: string, from: number): number {
  surrogateEscape.lastIndex = from;
  return surrogateEscape.exec(text)?.index ?? -1;
}

/**
 * The index of the first escape in the string from `start` to `end` (its quotes) that decodes to
 * a lone surrogate: a high one not followed at once by an escaped low one, or a low one alone.
 * -1 if none.
 */
function loneSurrogate(text: string, start: number, end: number): number {
  escapes.lastIndex = start;
  let high = -1;
  for (let m = escapes.exec(text); m !== null && m.index < end; m = escapes.exec(text)) {
    const unit = m[1] === undefined ? -1 : Number.parseInt(m[1], 16);
    const isLow = unit >= 0xdc00 && unit <= 0xdfff;
    if (high !== -1) {
      if (!isLow || m.index !== high + 6) return high;
      high = -1;
    } else if (isLow) return m.index;
    else if (unit >= 0xd800 && unit <= 0xdbff) high = m.index;
  }
  return high;
}
