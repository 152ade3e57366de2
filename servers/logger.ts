/**
 * Structured logs (pino), JSON lines on stdout. What gets logged is chosen at the call sites:
 * request lines carry id, method, path, status and duration (`request-log.ts`); errors carry type,
 * message, code and stack only - database errors can quote row values, so their other fields are
 * dropped.
 *
 * Lines are buffered (`LineBatch`, in front of pino's sonic-boom destination): a line costs its
 * serialization, not a write(2) on the request's path. The buffer is written once it holds
 * `BATCH_CHARS` (about twenty request lines), at least every `FLUSH_INTERVAL_MS`, and when the
 * process exits - on `process.exit`, a signal handled by `main.ts`, an uncaught exception or an
 * unhandled rejection (`main.ts` logs a crash as a fatal line first). Only an abrupt end (SIGKILL, power loss) can lose
 * what the last interval buffered.
 *
 * Each write of the buffer is synchronous, one write(2) per twenty lines on the main thread, as
 * Node writes its own stdout to files and pipes on Linux. sonic-boom's asynchronous mode handed each
 * write to the thread pool instead, which cost more per line (2.0-2.1 against 1.6-1.7 us, the same
 * loop) and lost the write under way when the process exited: a test that exits while logging saw
 * lines missing from the middle of the output. The cost of writing at once: a reader that stops
 * reading a full pipe holds up the process, as it would `console.log`.
 *
 * Lines are gathered in one string (`LineBatch`) and handed to sonic-boom once they reach
 * `BATCH_CHARS`, as one string it measures and writes at once: per line, one string append. Before,
 * each line was encoded into a Buffer of its own for sonic-boom's byte mode (sonic-boom's text mode
 * measures its whole pending string on every line, which flattens it: every line copied up to
 * 4 KB), and the buffers were joined once per write - about 2,000 instructions a line, and
 * Node's buffer pool and the joined buffers outside the JS heap for the collector to track.
 */
import { type DestinationStream, type Logger, pino } from 'pino';
import type { Config } from './config.ts';

/** Characters buffered before a write: about twenty request lines. */
const BATCH_CHARS = 4096;
/** Longest a line waits in the buffer of an idle process. */
const FLUSH_INTERVAL_MS = 250;

function serializeError(err: unknown): unknown {
  if (!(err instanceof Error)) return err;
  const e = err as Error & { code?: unknown; cause?: unknown };
  return {
    type: e.name,
    message: e.message,
    ...(e.code !== undefined ? { code: e.code } : {}),
    stack: e.stack,
    ...(e.cause !== undefined ? { cause: serializeError(e.cause) } : {}),
  };
}

type Destination = ReturnType<typeof pino.destination>;

/**
 * Lines appended to one pending string, handed to the destination as one write once the string
 * holds `BATCH_CHARS` characters, at least every `FLUSH_INTERVAL_MS` (`flush`), and when the process
 * exits or logs a fatal line (`flushSync`). `destination.write` is looked up on each hand-off: pino
 * replaces it with a no-op once stdout is a broken pipe.
 */
class LineBatch implements DestinationStream {
  private pending = '';
  private readonly destination: Destination;

  constructor(destination: Destination) {
    this.destination = destination;
  }

  write(line: string): void {
    this.pending += line;
    if (this.pending.length >= BATCH_CHARS) this.handOff();
  }

  flush(done?: (err?: Error) => void): void {
    this.handOff();
    this.destination.flush(done);
  }

  flushSync(): void {
    this.handOff();
    this.destination.flushSync();
  }

  private handOff(): void {
    if (this.pending === '') return;
    const lines = this.pending;
    this.pending = '';
    this.destination.write(lines);
  }
}

/**
 * The line batches of this process's loggers (a test process builds one per service), written out
 * when the process exits: pino registers an exit hook for asynchronous destinations only.
 */
const batches = new Set<LineBatch>();

function flushOnExit(batch: LineBatch): void {
  if (batches.size === 0) {
    process.on('exit', () => {
      for (const each of batches) {
        try {
          each.flushSync();
        } catch {
          // stdout closed: nothing more can be written
        }
      }
    });
  }
  batches.add(batch);
}

export function createLogger(config: Pick<Config, 'log_level'>): Logger {
  // The batch does the buffering: each string it hands over is written at once.
  const batch = new LineBatch(pino.destination({ dest: 1, sync: true, minLength: 0 }));
  setInterval(() => batch.flush(), FLUSH_INTERVAL_MS).unref();
  flushOnExit(batch);
  return loggerOn(config, batch);
}

/**
 * The service's logger writing to `stream`: its level, `service` field and error serializer, and
 * the request line written without pino's generic serialization (`requestLineWriter`).
 * `createLogger` gives it the buffered stdout; tests give it a stream they read.
 */
export function loggerOn(config: Pick<Config, 'log_level'>, stream: DestinationStream): Logger {
  const log = pino(
    {
      level: config.log_level,
      base: { service: 'agent-service' },
      serializers: { err: serializeError },
    },
    stream,
  );
  requestLineWriters.set(log, directRequestLine(log, stream));
  return log;
}

/** The fields of a request's line (`request-log.ts`), in the order they are written. */
export interface RequestLineFields {
  req_id: string;
  method: string;
  path: string;
  status: number;
  ms: number;
}

/** Writes a request's line at `level`; the caller has checked that the level is enabled. */
export type RequestLineWriter = (
  level: 'info' | 'warn' | 'error',
  fields: RequestLineFields,
  msg: string,
) => void;

const requestLineWriters = new WeakMap<Logger, RequestLineWriter>();

/**
 * How request lines reach `log`'s output: for a logger from `loggerOn`, the line pino would write,
 * byte for byte, composed directly; for any other logger, through the logger.
 */
export function requestLineWriter(log: Logger): RequestLineWriter {
  return requestLineWriters.get(log) ?? ((level, fields, msg) => log[level](fields, msg));
}

/**
 * Every request writes one line of the same five fields, and pino's generic path spends most of its
 * ~0.9 us a line looping over them (serializer and stringifier lookups per key, a string escaper per
 * value); composing the line from pino's own parts - the level's opening, the time, the bindings,
 * the closing - costs ~0.2 us. It is the line pino writes only while the logger has nothing that
 * reshapes lines (mixin, formatters, hooks, redaction, a nested key), and `loggerOn` configures
 * none; test/unit/logger.test.ts compares the two lines byte for byte.
 *
 * Within the service the generic pieces cost more than in a loop (callgrind, per public MCP call):
 * four `JSON.stringify` calls about 3,300 instructions, the time and the duration as numbers about
 * 1,600. Strings that need no escaping - a request id, a method, most paths - are quoted as they
 * are (`jsonString`), the time's text is made once per millisecond rather than once per line, and
 * the duration, a number of tenths, is written from its integer parts (`tenthsText`).
 */
function directRequestLine(log: Logger, stream: DestinationStream): RequestLineWriter {
  const own = log as unknown as Record<symbol, unknown>;
  const { lsCacheSym, timeSym, chindingsSym, endSym } = pino.symbols;
  const time = sameTimeText(own[timeSym] as () => string);
  return (level, f, msg) => {
    stream.write(
      `${(own[lsCacheSym] as Record<number, string>)[log.levels.values[level] as number]}${time()}${own[chindingsSym] as string},"req_id":${jsonString(f.req_id)},"method":${jsonString(f.method)},"path":${jsonString(f.path)},"status":${f.status},"ms":${tenthsText(f.ms)},"msg":${jsonString(msg)}${own[endSym] as string}`,
    );
  };
}

/**
 * pino's epoch time (`,"time":<ms>`), its text made again only when the millisecond changed: a
 * time above 2^31 is a heap number, and writing one out is the dearest part of a line. Any other
 * time function is called for each line.
 */
function sameTimeText(time: () => string): () => string {
  if (time !== pino.stdTimeFunctions.epochTime) return time;
  let at = Number.NaN;
  let text = '';
  return () => {
    const now = Date.now();
    if (now !== at) {
      at = now;
      text = `,"time":${now}`;
    }
    return text;
  };
}

/**
 * `value` as a JSON string, as `JSON.stringify` writes it: quoted as it is when no character in it
 * needs escaping (a quote, a backslash, a control character, a surrogate - a lone one is escaped).
 */
export function jsonString(value: string): string {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 0x20 || c === 0x22 || c === 0x5c || (c >= 0xd800 && c <= 0xdfff)) return JSON.stringify(value);
  }
  return `"${value}"`;
}

/**
 * A number as JavaScript writes it (`String(ms)`); for a whole number of tenths, the common case of
 * a duration rounded to 0.1 ms, from its integer parts. `whole.tenth` is the shortest text that
 * reads back as the double nearest to it, which is `tenths / 10` - so it is `String(ms)` exactly.
 */
export function tenthsText(ms: number): string {
  const tenths = Math.round(ms * 10);
  if (tenths / 10 !== ms || tenths < 0 || tenths > 0x3fffffff) return `${ms}`;
  const whole = Math.floor(tenths / 10);
  const tenth = tenths - whole * 10;
  return tenth === 0 ? `${whole}` : `${whole}.${tenth}`;
}
