/**
 * Keys of the authorization server, generated on first start and kept in the database so every
 * process sharing it signs and verifies with the same keys and tokens survive restarts
 * (ARCHITECTURE.md section 4, OAuth).
 *
 * Access tokens are signed ES256 by the newest unretired key. Rotation adds a key and retires the
 * others; a retired key stays in the JWKS for `RETIRED_KEY_PUBLISHED_MS`, longer than any access
 * token lives, so tokens signed before a rotation keep verifying until they expire. Processes pick
 * up a rotation when they restart.
 */
import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.ts';
import { serviceSecret } from '../servers/secrets.ts';

/** How long a retired signing key stays published: a day, far beyond the access-token TTL. */
export const RETIRED_KEY_PUBLISHED_MS = 24 * 3_600_000;

export interface SigningJwk extends JWK {
  kid: string;
  alg: 'ES256';
  use: 'sig';
}

export interface AuthorizationKeys {
  /** Private JWKs, the signing key first, for oidc-provider's `jwks`. */
  jwks: { keys: SigningJwk[] };
  /** Keys that sign and verify oidc-provider's cookies (`cookies.keys`). */
  cookieKeys: string[];
}

export async function loadAuthorizationKeys(
  db: Kysely<Database>,
  now: () => Date = () => new Date(),
): Promise<AuthorizationKeys> {
  let keys = await publishedKeys(db, now());
  if (!keys.some((k) => k.retired_at === null)) {
    await insertKey(db, now());
    keys = await publishedKeys(db, now());
  }
  const ordered = [...keys].sort(
    (a, b) =>
      Number(a.retired_at !== null) - Number(b.retired_at !== null) || (a.created_at < b.created_at ? 1 : -1),
  );
  return {
    jwks: { keys: ordered.map((k) => JSON.parse(k.private_jwk) as SigningJwk) },
    cookieKeys: [await serviceSecret(db, 'oauth_cookie_key')],
  };
}

/** Makes a new signing key and retires the others; returns its key id. */
export async function rotateSigningKey(
  db: Kysely<Database>,
  now: () => Date = () => new Date(),
): Promise<string> {
  const at = now();
  return db.transaction().execute(async (trx) => {
    await trx
      .updateTable('oauth_signing_keys')
      .set({ retired_at: at.toISOString() })
      .where('retired_at', 'is', null)
      .execute();
    return insertKey(trx, at);
  });
}

async function publishedKeys(db: Kysely<Database>, at: Date) {
  const oldest = new Date(at.getTime() - RETIRED_KEY_PUBLISHED_MS).toISOString();
  return db
    .selectFrom('oauth_signing_keys')
    .selectAll()
    .where((eb) => eb.or([eb('retired_at', 'is', null), eb('retired_at', '>', oldest)]))
    .execute();
}

async function insertKey(db: Kysely<Database>, at: Date): Promise<string> {
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const kid = randomUUID();
  const jwk: SigningJwk = { ...(await exportJWK(privateKey)), kid, alg: 'ES256', use: 'sig' };
  await db
    .insertInto('oauth_signing_keys')
    .values({ kid, private_jwk: JSON.stringify(jwk), created_at: at.toISOString(), retired_at: null })
    .execute();
  return kid;
}
