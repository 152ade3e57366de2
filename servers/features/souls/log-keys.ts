/**
 * The service's keys that sign the soul log (docs/guides/souls.md "Checking a log"): the entries an
 * account or a payer writes, the checkpoints, and nothing else. ES256 keys made and sealed as the
 * authorization server's are (`auth/keys.ts`), but a set of their own, published at
 * `{site_url}/api/soul/jwks.json`: a log signature must verify for as long as the log exists,
 * while the authorization server unpublishes a retired key a day after rotation - keeping an
 * access-token key trusted for years would let a leaked one mint tokens - and a key has one use.
 *
 * At most one key is unretired (index `soul_log_keys_one_active`), so processes starting together
 * on an empty database converge on the first one inserted. A process signs with the key that was
 * unretired when it started; a rotation (`npm run rotate-soul-log-key`) reaches it at its next
 * start. Every key stays published, the retired ones and the migration's.
 */
import { CompactSign, type CryptoKey, importJWK } from 'jose';
import type { Kysely } from 'kysely';
import { newSigningJwk, publicJwk, type SigningJwk } from '../../../auth/keys.ts';
import type { Database } from '../../../db/schema.ts';
import { type SecretBox, soulLogKeyPlace } from '../../secrets.ts';

type Db = Kysely<Database>;

/** The JWS `typ` of each thing the service signs in a soul log (RFC 8725 section 3.11). */
export const SIGNED_TYPES = {
  memory: 'soul-memory+jws',
  checkpoint: 'soul-checkpoint+jws',
  key: 'soul-key+jws',
} as const;

export interface LogSigner {
  kid: string;
  key: CryptoKey;
}

/** The checkpoint a soul's identity document carries: the head of its log, as the service saw it. */
export interface Checkpoint {
  agent_id: string;
  sequence: number;
  digest: string | null;
  issued_at: string;
}

export async function loadLogSigner(db: Db, box: SecretBox, now: () => Date): Promise<LogSigner> {
  const unretired = () =>
    db
      .selectFrom('soul_log_keys')
      .select(['kid', 'private_jwk'])
      .where('retired_at', 'is', null)
      .executeTakeFirst();
  let row = await unretired();
  if (!row) {
    // Another process may insert one at the same moment: only one insert takes effect.
    await db
      .insertInto('soul_log_keys')
      .values(await newKeyRow(box, now()))
      .onConflict((oc) => oc.doNothing())
      .execute();
    row = await unretired();
  }
  if (!row?.private_jwk) throw new Error('soul_log_keys: the unretired key has no private half');
  const jwk = JSON.parse(box.open(row.private_jwk, soulLogKeyPlace(row.kid))) as SigningJwk;
  return { kid: row.kid, key: (await importJWK(jwk, 'ES256')) as CryptoKey };
}

/**
 * Retires the signing key and makes a new one; returns its kid. The old key stays published. Two
 * rotations at once cannot leave two signing keys: the second insert breaks the one-unretired index
 * and that rotation changes nothing.
 */
export async function rotateLogKey(db: Db, box: SecretBox, now: () => Date): Promise<string> {
  const row = await newKeyRow(box, now());
  await db.transaction().execute(async (trx) => {
    await trx
      .updateTable('soul_log_keys')
      .set({ retired_at: row.created_at })
      .where('retired_at', 'is', null)
      .execute();
    await trx.insertInto('soul_log_keys').values(row).execute();
  });
  return row.kid;
}

/** Every key that ever signed a soul log, oldest first (RFC 7517 section 5). */
export async function publishedLogKeys(db: Db): Promise<SigningJwk[]> {
  const rows = await db
    .selectFrom('soul_log_keys')
    .select('public_jwk')
    .orderBy('created_at', 'asc')
    .orderBy('kid', 'asc')
    .execute();
  return rows.map((row) => JSON.parse(row.public_jwk) as SigningJwk);
}

/** An entry written by an account or a payer: the service signs its `digest`. */
export const signEntry = (signer: LogSigner, digest: string): Promise<string> =>
  sign(signer, SIGNED_TYPES.memory, digest);

export const signCheckpoint = (signer: LogSigner, checkpoint: Checkpoint): Promise<string> =>
  sign(signer, SIGNED_TYPES.checkpoint, JSON.stringify(checkpoint));

function sign(signer: LogSigner, typ: string, payload: string): Promise<string> {
  return new CompactSign(new TextEncoder().encode(payload))
    .setProtectedHeader({ alg: 'ES256', kid: signer.kid, typ })
    .sign(signer.key);
}

async function newKeyRow(box: SecretBox, at: Date) {
  const jwk = await newSigningJwk();
  return {
    kid: jwk.kid,
    public_jwk: JSON.stringify(publicJwk(jwk)),
    private_jwk: box.seal(JSON.stringify(jwk), soulLogKeyPlace(jwk.kid)),
    created_at: at.toISOString(),
    retired_at: null,
  };
}
