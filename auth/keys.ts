/**
 * Keys of the authorization server, generated on first start and kept in the database so every
 * process sharing it signs and verifies with the same keys and tokens survive restarts
 * (ARCHITECTURE.md section 4, OAuth).
 *
 * Access tokens are signed ES256 by the one unretired key. The database holds at most one
 * (a unique index), so processes starting together on an empty database converge on the key the
 * first of them inserted. Rotation adds a key and retires the old one; a retired key stays
 * published for `RETIRED_KEY_PUBLISHED_MS`, longer than any access token lives, so tokens signed
 * before a rotation keep verifying until they expire. oidc-provider's key set is fixed when it is
 * constructed: a process signs with the new key once it restarts, while its bearer verifier
 * accepts tokens from processes that already do by reloading the keys (`bearer.ts`).
 */
import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.ts';
import { type SecretBox, serviceSecret, signingKeyPlace } from '../servers/secrets.ts';

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
  box: SecretBox,
  now: () => Date = () => new Date(),
): Promise<AuthorizationKeys> {
  let keys = await publishedKeys(db, box, now());
  if (!keys.some((k) => k.retired_at === null)) {
    // Another process may insert one at the same moment: only one insert takes effect.
    await insertKey(db, box, now());
    keys = await publishedKeys(db, box, now());
  }
  const ordered = [...keys].sort(
    (a, b) =>
      Number(a.retired_at !== null) - Number(b.retired_at !== null) || (a.created_at < b.created_at ? 1 : -1),
  );
  return {
    jwks: { keys: ordered.map((k) => k.jwk) },
    cookieKeys: [await serviceSecret(db, box, 'oauth_cookie_key')],
  };
}

/**
 * Makes a new signing key and retires the old one; returns the key id that signs afterwards. Two
 * overlapping rotations never leave two signing keys: if they collide, the later insert does
 * nothing; if one commits before the other starts, the second simply rotates again.
 */
export async function rotateSigningKey(
  db: Kysely<Database>,
  box: SecretBox,
  now: () => Date = () => new Date(),
): Promise<string> {
  const at = now();
  await db.transaction().execute(async (trx) => {
    await trx
      .updateTable('oauth_signing_keys')
      .set({ retired_at: at.toISOString() })
      .where('retired_at', 'is', null)
      .execute();
    await insertKey(trx, box, at);
  });
  const active = await db
    .selectFrom('oauth_signing_keys')
    .select('kid')
    .where('retired_at', 'is', null)
    .executeTakeFirstOrThrow();
  return active.kid;
}

/** Public parts of every published key, for verifiers and the JWKS (RFC 7517 section 5). */
export async function publishedPublicKeys(
  db: Kysely<Database>,
  box: SecretBox,
  now: () => Date = () => new Date(),
): Promise<SigningJwk[]> {
  return (await publishedKeys(db, box, now())).map((k) => publicJwk(k.jwk));
}

export function publicJwk({ kty, crv, x, y, kid, alg, use }: SigningJwk): SigningJwk {
  return { kty, crv, x, y, kid, alg, use };
}

async function publishedKeys(db: Kysely<Database>, box: SecretBox, at: Date) {
  const oldest = new Date(at.getTime() - RETIRED_KEY_PUBLISHED_MS).toISOString();
  const rows = await db
    .selectFrom('oauth_signing_keys')
    .selectAll()
    .where((eb) => eb.or([eb('retired_at', 'is', null), eb('retired_at', '>', oldest)]))
    .execute();
  return rows.map((row) => ({
    ...row,
    jwk: JSON.parse(box.open(row.private_jwk, signingKeyPlace(row.kid))) as SigningJwk,
  }));
}

/** A new ES256 private JWK with a random key id (the soul log's keys are made the same way). */
export async function newSigningJwk(): Promise<SigningJwk> {
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  return { ...(await exportJWK(privateKey)), kid: randomUUID(), alg: 'ES256', use: 'sig' };
}

/** Inserts an unretired key unless one exists (index `oauth_signing_keys_one_active`). */
async function insertKey(db: Kysely<Database>, box: SecretBox, at: Date): Promise<void> {
  const jwk = await newSigningJwk();
  const { kid } = jwk;
  await db
    .insertInto('oauth_signing_keys')
    .values({
      kid,
      private_jwk: box.seal(JSON.stringify(jwk), signingKeyPlace(kid)),
      created_at: at.toISOString(),
      retired_at: null,
    })
    .onConflict((oc) => oc.doNothing())
    .execute();
}
