/**
 * Structured logs (pino), JSON lines on stdout. What gets logged is chosen at the call sites:
 * request lines carry id, method, path, status and duration (`request-log.ts`); errors carry type,
 * message, code and stack only - database errors can quote row values, so their other fields are
 * dropped.
 *
 * Lines are buffered and written asynchronously (pino's sonic-boom destination, "Asynchronous
 * Logging" in pino's documentation): a line costs its serialization, not a write(2) on the
 * request's path. The buffer is written once it holds `BUFFER_BYTES`, at least every
 * `FLUSH_INTERVAL_MS`, and synchronously when the process exits - on `process.exit`, a signal
 * handled by `main.ts`, an uncaught exception or an unhandled rejection (pino registers the exit
 * hook; `main.ts` logs a crash as a fatal line first). Only an abrupt end (SIGKILL, power loss)
 * can lose what the last interval buffered.
 */
import { type Logger, pino } from 'pino';
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

export function createLogger(config: Pick<Config, 'log_level'>): Logger {
  const destination = pino.destination({
    dest: 1,
    sync: false,
    minLength: BUFFER_BYTES,
    periodicFlush: FLUSH_INTERVAL_MS,
  });
  return pino(
    {
      level: config.log_level,
      base: { service: 'agent-service' },
      serializers: { err: serializeError },
    },
    destination,
  );
}
