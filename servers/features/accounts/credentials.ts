/**
 * Secrets that identify an account: service keys and passwords. Keys are random and long, so they
 * are stored as a SHA-256 digest and compared in constant time; passwords are guessable, so they
 * are stored with scrypt at OWASP's recommended cost (N=2^17, r=8, p=1).
 */
import { createHash, randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import pLimit from 'p-limit';
import { ServiceError } from '../../errors.ts';

const scryptRaw = promisify(scrypt) as (
  password: string,
  salt: Buffer,
  keylen: number,
  options: { N: number; r: number; p: number; maxmem: number },
) => Promise<Buffer>;

/**
 * One scrypt at N=2^17 holds 128 MiB and one of libuv's four worker threads (shared with file, DNS
 * and zlib work) for a few hundred milliseconds, and anyone can ask for one by signing in. So
 * scrypt runs in two lanes of one computation each, shared by every caller in the process: one
 * hashes new passwords (POST /account, an account made on the claim page), the other checks
 * passwords (the OAuth sign-in, the claim page's sign-in). At most two run at once (256 MiB, two
 * threads left to the rest of the service), and a burst of sign-in guesses waits in its own lane,
 * never ahead of an account being created. A lane holds at most `SCRYPT_MAX_WAITING` callers;
 * past that a caller is refused at once (503 with Retry-After), since queued longer it would only
 * time out.
 */
export const SCRYPT_MAX_WAITING = 16;
const lanes = { hash: pLimit(1), check: pLimit(1) };

function scryptIn(lane: keyof typeof lanes, ...args: Parameters<typeof scryptRaw>): Promise<Buffer> {
  const queue = lanes[lane];
  if (queue.pendingCount >= SCRYPT_MAX_WAITING) {
    return Promise.reject(
      new ServiceError('service_unavailable', {
        detail: `password ${lane} queue full`,
        headers: { 'Retry-After': '2' },
      }),
    );
  }
  return queue(() => scryptRaw(...args));
}

/**
 * Every service key starts with this, so secret scanners (and people) can recognise a leaked one;
 * `sk` marks it as secret, unlike the public site ids embedded in pages.
 */
export const SERVICE_KEY_PREFIX = 'agsvc_sk_';
/** Characters of a key kept in clear (`agsvc_sk_` + 6) to tell keys apart in listings. */
const DISPLAY_PREFIX_LENGTH = SERVICE_KEY_PREFIX.length + 6;
const SERVICE_KEY_PATTERN = /^agsvc_sk_[A-Za-z0-9_-]{43}$/;

export interface NewServiceKey {
  key: string;
  hash: string;
  prefix: string;
}

export function generateServiceKey(): NewServiceKey {
  const key = SERVICE_KEY_PREFIX + randomBytes(32).toString('base64url');
  return { key, hash: hashServiceKey(key), prefix: key.slice(0, DISPLAY_PREFIX_LENGTH) };
}

export function hashServiceKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** Cheap shape check before any lookup, so random strings never reach the database. */
export function looksLikeServiceKey(value: string): boolean {
  return SERVICE_KEY_PATTERN.test(value);
}

/** Constant-time equality of two hex digests of the same length. */
export function sameDigest(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && timingSafeEqual(left, right);
}

const SCRYPT = { ln: 17, r: 8, p: 1 } as const;
const KEY_LENGTH = 32;
/** scrypt needs 128 * N * r bytes; allow that plus headroom. */
const maxmem = (ln: number, r: number) => 256 * 2 ** ln * r;

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scryptIn('hash', password.normalize('NFKC'), salt, KEY_LENGTH, {
    N: 2 ** SCRYPT.ln,
    r: SCRYPT.r,
    p: SCRYPT.p,
    maxmem: maxmem(SCRYPT.ln, SCRYPT.r),
  });
  return `$scrypt$ln=${SCRYPT.ln},r=${SCRYPT.r},p=${SCRYPT.p}$${salt.toString('base64url')}$${hash.toString('base64url')}`;
}

/** Checks a password against a stored `$scrypt$...` string; false for anything malformed. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const match = /^\$scrypt\$ln=(\d+),r=(\d+),p=(\d+)\$([\w-]+)\$([\w-]+)$/.exec(stored);
  if (!match) return false;
  const [ln, r, p] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const expected = Buffer.from(match[5] as string, 'base64url');
  const actual = await scryptIn(
    'check',
    password.normalize('NFKC'),
    Buffer.from(match[4] as string, 'base64url'),
    expected.length,
    {
      N: 2 ** ln,
      r,
      p,
      maxmem: maxmem(ln, r),
    },
  );
  return timingSafeEqual(actual, expected);
}
