/**
 * Per-client limits on unauthenticated writes (rate-limiter-flexible). Clients are keyed by an HMAC
 * of their address, so no raw address is stored. On PostgreSQL the counters live in the shared
 * database, so every process enforces one limit; on SQLite (one process) they live in memory.
 */
import { createHmac } from 'node:crypto';
import {
  type RateLimiterAbstract,
  RateLimiterMemory,
  RateLimiterPostgres,
  RateLimiterRes,
} from 'rate-limiter-flexible';
import type { DatabaseHandle } from '../db/database.ts';
import type { Config } from './config.ts';
import { ServiceError } from './errors.ts';

export type RateLimitKind = keyof Config['rate_limits'];

export interface RateLimits {
  consume(kind: RateLimitKind, clientAddress: string): Promise<void>;
}

export async function createRateLimits(
  config: Config,
  database: DatabaseHandle,
  secret: string,
): Promise<RateLimits> {
  const limiters = new Map<RateLimitKind, RateLimiterAbstract>();
  for (const [kind, limit] of Object.entries(config.rate_limits) as [
    RateLimitKind,
    { points: number; duration_s: number },
  ][]) {
    const options = { keyPrefix: kind, points: limit.points, duration: limit.duration_s };
    if (database.raw.kind === 'postgres') {
      const pool = database.raw.pool;
      limiters.set(
        kind,
        await new Promise<RateLimiterAbstract>((resolve, reject) => {
          const limiter: RateLimiterPostgres = new RateLimiterPostgres(
            { ...options, storeClient: pool, tableName: 'rate_limits', clearExpiredByTimeout: true },
            (err?: Error) => (err ? reject(err) : resolve(limiter)),
          );
        }),
      );
    } else {
      limiters.set(kind, new RateLimiterMemory(options));
    }
  }

  return {
    async consume(kind, clientAddress) {
      const limiter = limiters.get(kind);
      if (!limiter) return;
      const key = createHmac('sha256', secret).update(clientAddress).digest('base64url').slice(0, 22);
      try {
        await limiter.consume(key);
      } catch (rejection) {
        if (!(rejection instanceof RateLimiterRes)) throw rejection;
        const seconds = Math.max(1, Math.ceil(rejection.msBeforeNext / 1000));
        throw new ServiceError('rate_limited', {
          detail: `Too many requests from this address; retry in ${seconds} s`,
          headers: { 'Retry-After': String(seconds) },
        });
      }
    },
  };
}
