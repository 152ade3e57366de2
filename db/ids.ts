/**
 * Keys of rows that are written often and mostly read by key: UUIDv7 (RFC 9562 section 5.7), the
 * Unix time in milliseconds then 74 random bits.
 *
 * A random UUIDv4 key lands on a random leaf of the primary-key index, so every insert dirties a
 * page of its own that the commit must write (and, once the index outgrows the page cache, read
 * first); time-ordered keys append at the right edge of the B-tree, SQLite's and PostgreSQL's
 * alike. Measured on `POST /return` (a request and two history rows, SQLite, durable): 375-514 ->
 * 296-368 us of CPU per request on the same machine.
 *
 * Made from `randomUUID()` (Node draws its random bytes in batches; a 16-byte draw per id costs
 * about 7 us): its first 48 bits are replaced by the time and its version nibble by 7. Ids of one
 * millisecond keep a random order among themselves (RFC 9562 section 6.2 leaves that to the
 * implementation), which changes nothing for where they land in the index.
 *
 * What a UUIDv7 tells its holder beyond a v4: when it was made, which the rows keyed by it already
 * say (`created_at`). Guessing one takes 2^74 tries even knowing the millisecond.
 */
import { randomUUID } from 'node:crypto';

export function timeOrderedId(now: number = Date.now()): string {
  const time = now.toString(16).padStart(12, '0');
  // randomUUID(): xxxxxxxx-xxxx-4xxx-Vxxx-xxxxxxxxxxxx, V already the RFC 9562 variant.
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${randomUUID().slice(15)}`;
}
