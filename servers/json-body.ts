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
import type { RequestHandler } from 'express';
import express from 'express';
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
 * return a reviver for `JSON.parse` (the MCP adapter's check of inexact numeric ids).
 *
 * The common body costs a fatal decode, `JSON.parse` and one pass over the text outside its
 * strings (`firstFault`): strings are skipped with `indexOf`, and only those holding an escape
 * are looked into.
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
  const fault = firstFault(text);
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

interface Fault {
  index: number;
  reason: string;
  path: (string | number)[];
}

/** An object's names seen so far: an array while there are few, then a set. */
type Names = string[] | Set<string>;
const SET_FROM = 8;

/**
 * The first name repeated in an object, or string holding a lone surrogate escape, in `text` -
 * valid JSON, as `JSON.parse` accepted it. One pass outside the strings, tracking each open
 * object's names and each container's current name or index (for the path of the fault).
 */
function firstFault(text: string): Fault | undefined {
  /** Per open container: the names of an object, null for an array. */
  const names: (Names | null)[] = [];
  /** Per open container: its current member name or element index. */
  const steps: (string | number)[] = [];
  let depth = -1;
  let nameNext = false;
  // The next backslash, and the next escape that may be a surrogate's, at or after `i` (-1: none
  // left): each is searched for once per stretch of text, however many strings hold escapes.
  let backslash = text.indexOf('\\');
  let surrogate = backslash === -1 ? -1 : nextSurrogateEscape(text, backslash);
  for (let i = 0, n = text.length; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      let end = text.indexOf('"', i + 1);
      const escaped = backslash !== -1 && backslash < end;
      if (escaped) {
        while (escapedQuote(text, end)) end = text.indexOf('"', end + 1);
        backslash = text.indexOf('\\', end + 1);
        let lone = -1;
        if (surrogate !== -1 && surrogate < end) {
          lone = loneSurrogate(text, i, end);
          surrogate = nextSurrogateEscape(text, end + 1);
        }
        if (lone !== -1) {
          const path = steps.slice(0, depth + 1);
          if (nameNext) path.pop();
          return { index: lone, reason: 'lone surrogate escape (RFC 7493 section 2.1)', path };
        }
      }
      if (nameNext) {
        const name = escaped ? (JSON.parse(text.slice(i, end + 1)) as string) : text.slice(i + 1, end);
        if (seenBefore(names, depth, name)) {
          return {
            index: i,
            reason: 'duplicate name (RFC 7493 section 2.3)',
            path: [...steps.slice(0, depth), name],
          };
        }
        steps[depth] = name;
        nameNext = false;
      }
      i = end;
    } else if (c === 0x7b) {
      names[++depth] = [];
      steps[depth] = '';
      nameNext = true;
    } else if (c === 0x5b) {
      names[++depth] = null;
      steps[depth] = 0;
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
      nameNext = false;
    } else if (c === 0x2c) {
      if (names[depth] === null) (steps[depth] as number)++;
      else nameNext = true;
    }
  }
  return undefined;
}

/** Whether the quote at `at` is escaped: an odd run of backslashes before it. */
function escapedQuote(text: string, at: number): boolean {
  let i = at - 1;
  while (text.charCodeAt(i) === 0x5c) i--;
  return (at - 1 - i) % 2 === 1;
}

function seenBefore(names: (Names | null)[], depth: number, name: string): boolean {
  const seen = names[depth] as Names;
  if (Array.isArray(seen)) {
    if (seen.includes(name)) return true;
    if (seen.length < SET_FROM) seen.push(name);
    else names[depth] = new Set([...seen, name]);
    return false;
  }
  if (seen.has(name)) return true;
  seen.add(name);
  return false;
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
