/**
 * Structured logs (pino), JSON lines on stdout. What gets logged is chosen at the call sites:
 * request lines carry id, method, path, status and duration (`request-log.ts`); errors carry type,
 * message, code and stack only - database errors can quote row values, so their other fields are
 * dropped.
 *
 * Lines are buffered (pino's sonic-boom destination): a line costs its serialization, not a
 * write(2) on the request's path. The buffer is written once it holds `BUFFER_BYTES` (about twenty
 * request lines), at least every `FLUSH_INTERVAL_MS`, and when the process exits - on
 * `process.exit`, a signal handled by `main.ts`, an uncaught exception or an unhandled rejection
 * (`main.ts` logs a crash as a fatal line first). Only an abrupt end (SIGKILL, power loss) can lose
 * what the last interval buffered.
 *
 * Each write of the buffer is synchronous, one write(2) per twenty lines on the main thread, as
 * Node writes its own stdout to files and pipes on Linux. sonic-boom's asynchronous mode handed each
 * write to the thread pool instead, which cost more per line (2.0-2.1 against 1.6-1.7 us, the same
 * loop) and lost the write under way when the process exited: a test that exits while logging saw
 * lines missing from the middle of the output. The cost of writing at once: a reader that stops
 * reading a full pipe holds up the process, as it would `console.log`.
 *
 * The destination buffers bytes, not text (`contentMode: 'buffer'`): in its text mode sonic-boom
 * appends each line to one pending string and measures that string's UTF-8 length on every write,
 * which flattens it, so every request line copied up to `BUFFER_BYTES`: the largest single
 * allocation of a public MCP call, about 4.5 of its 33 KB (V8's sampling heap profiler). A line is
 * encoded once instead, into Node's shared buffer pool, and the lines are joined once per write.
 */
import { type DestinationStream, type Logger, pino } from 'pino';
import type { Config } from './config.ts';

/** Buffered before a write: about twenty request lines. */
const BUFFER_BYTES = 4096;
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
 * The destinations of this process's loggers (a test process builds one per service), written out
 * when the process exits: pino registers an exit hook for asynchronous destinations only. Each
 * lives as long as the process anyway, held by its own periodic flush timer.
 */
const destinations = new Set<Destination>();

function flushOnExit(destination: Destination): void {
  if (destinations.size === 0) {
    process.on('exit', () => {
      for (const each of destinations) {
        try {
          each.flushSync();
        } catch {
          // stdout closed: nothing more can be written
        }
      }
    });
  }
  destinations.add(destination);
}

export function createLogger(config: Pick<Config, 'log_level'>): Logger {
  const destination = pino.destination({
    dest: 1,
    sync: true,
    minLength: BUFFER_BYTES,
    periodicFlush: FLUSH_INTERVAL_MS,
    contentMode: 'buffer',
  });
  flushOnExit(destination);
  // pino writes strings; the destination, in buffer mode, takes bytes. `destination.write` is
  // looked up on each line: pino replaces it with a no-op once stdout is a broken pipe.
  const lines: DestinationStream & Pick<typeof destination, 'flush' | 'flushSync'> = {
    write: (line: string) => destination.write(Buffer.from(line) as unknown as string),
    flush: (done) => destination.flush(done),
    flushSync: () => destination.flushSync(),
  };
  return loggerOn(config, lines);
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
export type RequestLineWriter = (level: 'info' | 'error', fields: RequestLineFields, msg: string) => void;

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
 */
function directRequestLine(log: Logger, stream: DestinationStream): RequestLineWriter {
  const own = log as unknown as Record<symbol, unknown>;
  const { lsCacheSym, timeSym, chindingsSym, endSym } = pino.symbols;
  return (level, f, msg) => {
    stream.write(
      `${(own[lsCacheSym] as Record<number, string>)[log.levels.values[level] as number]}${(own[timeSym] as () => string)()}${own[chindingsSym] as string},"req_id":${JSON.stringify(f.req_id)},"method":${JSON.stringify(f.method)},"path":${JSON.stringify(f.path)},"status":${f.status},"ms":${f.ms},"msg":${JSON.stringify(msg)}${own[endSym] as string}`,
    );
  };
}
