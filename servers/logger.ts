/**
 * Structured logs (pino). Request logs carry the request id, method, path, status and duration;
 * never query strings, bodies or credentials - they can hold personal data.
 */
import { type Logger, pino } from 'pino';
import type { Config } from './config.ts';

export function createLogger(config: Pick<Config, 'log_level'>): Logger {
  return pino({
    level: config.log_level,
    base: { service: 'agent-service' },
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers.cookie',
        'req.headers["x-service-key"]',
        '*.password',
        '*.secret',
      ],
      censor: '[redacted]',
    },
    timestamp: pino.stdTimeFunctions.isoTime,
  });
}
