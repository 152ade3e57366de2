/**
 * Structured logs (pino), JSON lines on stdout. What gets logged is chosen at the call sites:
 * request lines carry id, method, path, status and duration (`request-log.ts`); errors carry type,
 * message, code and stack only - database errors can quote row values, so their other fields are
 * dropped.
 */
import { type Logger, pino } from 'pino';
import type { Config } from './config.ts';

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
  return pino({
    level: config.log_level,
    base: { service: 'agent-service' },
    serializers: { err: serializeError },
  });
}
