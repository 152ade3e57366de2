/**
 * Password hashing runs in bounded lanes: a burst of password checks (sign-in guesses) beyond the
 * waiting slots is refused at once instead of piling up on the libuv thread pool, and hashing a
 * new password (account creation) does not wait behind it.
 */
import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../servers/errors.ts';
import {
  hashPassword,
  SCRYPT_MAX_WAITING,
  verifyPassword,
} from '../../servers/features/accounts/credentials.ts';

/** A stored hash at a chosen cost; the password never matches. */
const storedAt = (ln: number) =>
  `$scrypt$ln=${ln},r=8,p=1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA`;

describe('password hashing lanes', () => {
  it('refuses checks beyond the waiting slots with 503 and Retry-After', async () => {
    const burst = SCRYPT_MAX_WAITING + 11;
    const results = await Promise.allSettled(
      Array.from({ length: burst }, () => verifyPassword('a guess', storedAt(4))),
    );
    const refused = results.filter((r) => r.status === 'rejected');
    // One running and SCRYPT_MAX_WAITING waiting at most; the rest refused without hashing.
    expect(results.length - refused.length).toBeLessThanOrEqual(1 + SCRYPT_MAX_WAITING);
    expect(refused.length).toBeGreaterThanOrEqual(10);
    for (const r of refused) {
      const err = (r as PromiseRejectedResult).reason as ServiceError;
      expect(err).toBeInstanceOf(ServiceError);
      expect(err.code).toBe('service_unavailable');
      expect(Number(err.headers['Retry-After'])).toBeGreaterThan(0);
    }
    expect(await verifyPassword('a guess', storedAt(4))).toBe(false);
  });

  it('hashes a new password while a burst of checks waits in its own lane', async () => {
    const finished: string[] = [];
    // Sixteen checks at a quarter of the real cost each: four times the work of the one hash, so
    // the order holds however busy the machine is (each lane runs on its own thread).
    const checks = Array.from({ length: 16 }, (_, i) =>
      verifyPassword('a guess', storedAt(15)).then(() => finished.push(`check ${i}`)),
    );
    const hash = hashPassword('correct horse battery staple').then(() => finished.push('hash'));
    await Promise.all([...checks, hash]);
    expect(finished.indexOf('hash')).toBeLessThan(finished.indexOf('check 15'));
  });
});
