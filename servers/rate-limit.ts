/**
 * Per-client limits (rate-limiter-flexible). Keys (a client address, an email) are stored as an
 * HMAC, so no raw address or email is kept. On PostgreSQL the counters live in the shared
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

/** Keys whose HMAC is remembered at most. */
const HASHED_KEYS_KEPT = 10_000;

export type RateLimitKind = keyof Config['rate_limits'];

export interface RateLimits {
  /**
   * Counts one request of `key` (a client address unless the kind says otherwise); throws
   * `rate_limited` (429 with Retry-After) once the kind's points for the window are spent. A request
   * that counts as several (a batch of domains) spends `points` at once.
   */
  consume(kind: RateLimitKind, key: string, points?: number): Promise<void>;
  /** Gives back what one `consume` took (an attempt that turned out not to count). */
  refund(kind: RateLimitKind, key: string): Promise<void>;
  /** Forgets the key's count (a success ends a run of failures). */
  reset(kind: RateLimitKind, key: string): Promise<void>;
}

/** What a refused caller reads, per kind. */
const refusal: Partial<Record<RateLimitKind, string>> = {
  sign_in_failures_per_account: 'Too many failed sign-ins for this account',
  sign_in_failures_per_address: 'Too many failed sign-ins from this address',
  authorization_requests: 'Too many authorization requests from this address',
  email_codes_per_email: 'Too many codes were sent to this email',
  email_codes_per_address: 'Too many code requests or checks from this address',
  scan_batch_domains: 'Too many domains queued in batch scans by this account',
};

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
      limiters.set(
        kind,
        new RateLimiterPostgres({
          ...options,
          storeClient: database.raw.pool,
          tableName: 'rate_limits',
          // Made by a migration (2026-11-23T1300Z_rate_limits_table): creating it here raced
          // between processes starting together ("type rate_limits already exists").
          tableCreated: true,
          clearExpiredByTimeout: true,
        }),
      );
    } else {
      limiters.set(kind, new RateLimiterMemory(options));
    }
  }
  // The same few addresses ask again and again: their HMACs are remembered (in memory only, where
  // the raw keys already are while a request runs), the map emptied whenever it fills.
  const hashed = new Map<string, string>();
  const keyOf = (key: string): string => {
    let digest = hashed.get(key);
    if (digest === undefined) {
      digest = createHmac('sha256', secret).update(key).digest('base64url').slice(0, 22);
      if (hashed.size >= HASHED_KEYS_KEPT) hashed.clear();
      hashed.set(key, digest);
    }
    return digest;
  };

  return {
    async consume(kind, key, points = 1) {
      const limiter = limiters.get(kind);
      if (!limiter) return;
      try {
        await limiter.consume(keyOf(key), points);
      } catch (rejection) {
        if (!(rejection instanceof RateLimiterRes)) throw rejection;
        const seconds = Math.max(1, Math.ceil(rejection.msBeforeNext / 1000));
        throw new ServiceError('rate_limited', {
          detail: `${refusal[kind] ?? 'Too many requests from this address'}; retry in ${seconds} s`,
          headers: { 'Retry-After': String(seconds) },
        });
      }
    },
    async refund(kind, key) {
      await limiters.get(kind)?.reward(keyOf(key), 1);
    },
    async reset(kind, key) {
      await limiters.get(kind)?.delete(keyOf(key));
    },
  };
}
