/**
 * `Idempotency-Key` (draft-ietf-httpapi-idempotency-key-header): a retried write with the same key
 * and the same input returns the first response; the same key with another input is refused (409).
 * The record is written in the transaction that performs the write, so a key is never bound to a
 * write that did not commit, and two concurrent requests with one key produce one write.
 */
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import type { Kysely, Transaction } from 'kysely';
import { isUniqueViolation } from '../db/database.ts';
import type { Database } from '../db/schema.ts';
import { invalid, ServiceError } from './errors.ts';
import { idempotencyResponsePlace, openJson, type SecretBox, sealJson } from './secrets.ts';

export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
const keyPattern = /^[\x21-\x7e]{1,255}$/;

/** Reads and checks the header value; undefined when absent. */
export function idempotencyKeyFrom(headers: Record<string, string | undefined>): string | undefined {
  const key = headers['idempotency-key'];
  if (key === undefined) return undefined;
  const unquoted = key.replace(/^"(.*)"$/, '$1');
  if (!keyPattern.test(unquoted)) {
    throw invalid([{ field: IDEMPOTENCY_HEADER, message: 'must be 1 to 255 visible ASCII characters' }]);
  }
  return unquoted;
}

export function fingerprint(input: unknown): string {
  return createHash('sha256')
    .update(canonicalize(input) ?? '')
    .digest('base64url');
}

/** What a keyed write leaves behind: the response a retry with the same key and body gets. */
export interface IdempotencyRecord {
  operation: string;
  key: string;
  fingerprint: string;
  response: string;
}

/**
 * The response stored for `operation` and `key`, if any; 409 `idempotency_key_reused` when it was
 * stored for another request body (`print`).
 */
export async function storedResponse<T>(
  db: Kysely<Database>,
  operation: string,
  key: string,
  print: string,
  box?: SecretBox,
): Promise<T | undefined> {
  const found = await db
    .selectFrom('idempotency_keys')
    .select(['fingerprint', 'response'])
    .where('operation', '=', operation)
    .where('key', '=', key)
    .executeTakeFirst();
  if (!found) return undefined;
  if (found.fingerprint !== print) {
    throw new ServiceError('idempotency_key_reused', {
      detail: `${IDEMPOTENCY_HEADER} was already used with a different request body`,
    });
  }
  const response = box
    ? openJson(box, found.response, idempotencyResponsePlace(operation, key))
    : found.response;
  return JSON.parse(response) as T;
}

/**
 * Records a keyed write in the transaction that performs it; false, writing nothing, when a
 * concurrent request with the same key committed first (the caller then leaves its write out).
 */
export async function claimKey(
  trx: Kysely<Database>,
  record: IdempotencyRecord,
  now: () => Date,
): Promise<boolean> {
  const result = await trx
    .insertInto('idempotency_keys')
    .values({ ...record, created_at: now().toISOString() })
    .onConflict((oc) => oc.columns(['operation', 'key']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
}

/**
 * Runs `write` once per key and input. With `sealWith`, the stored response is sealed
 * (`sealJson`): for a response carrying a secret shown once (a capability token), so the copy kept
 * for retries is no easier to read than the secret's other stored forms.
 */
export async function withIdempotency<T>(
  db: Kysely<Database>,
  operation: string,
  key: string | undefined,
  input: unknown,
  write: (trx: Transaction<Database>) => Promise<T>,
  now: () => Date,
  sealWith?: SecretBox,
): Promise<T> {
  if (key === undefined) return db.transaction().execute(write);
  const print = fingerprint(input);

  const earlier = await storedResponse<T>(db, operation, key, print, sealWith);
  if (earlier !== undefined) return earlier;
  try {
    return await db.transaction().execute(async (trx) => {
      const result = await write(trx);
      const response = JSON.stringify(result);
      await trx
        .insertInto('idempotency_keys')
        .values({
          operation,
          key,
          fingerprint: print,
          response: sealWith
            ? sealJson(sealWith, response, idempotencyResponsePlace(operation, key))
            : response,
          created_at: now().toISOString(),
        })
        .execute();
      return result;
    });
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    // A concurrent request with the same key committed first.
    const winner = await storedResponse<T>(db, operation, key, print, sealWith);
    if (winner === undefined) throw new ServiceError('idempotency_in_progress');
    return winner;
  }
}

/** Keys are kept for a day (the draft's suggested minimum is "long enough for retries"). */
export async function sweepIdempotencyKeys(db: Kysely<Database>, olderThan: Date): Promise<number> {
  const result = await db
    .deleteFrom('idempotency_keys')
    .where('created_at', '<', olderThan.toISOString())
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
