/**
 * The resource server remembers what a token's signature proved until the token's `exp`
 * (`auth/bearer.ts`), never whether it still stands: on both dialects, a token accepted (and so
 * remembered) is refused on the very next request once its grant is deleted or its account's
 * tokens are revoked by someone else writing to the database, and refused as expired past `exp`.
 */
import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { KyselyAdapter } from '../../auth/adapter.ts';
import { BearerVerifier, revokeAccountTokens } from '../../auth/bearer.ts';
import type { SigningJwk } from '../../auth/keys.ts';
import { GRANT_CLAIM } from '../../auth/provider.ts';
import { SecretBox } from '../../servers/secrets.ts';
import { createTestDatabase, dialects, type TestDatabase } from '../helpers/databases.ts';

const ISSUER = 'https://as.example/auth/v1';
const AUDIENCE = 'https://as.example/mcp/auth';

describe.each(dialects)('bearer verification cache (%s)', (dialect) => {
  let db: TestDatabase | undefined;
  afterEach(async () => {
    await db?.drop();
    db = undefined;
  });

  async function setUp() {
    db = await createTestDatabase(dialect);
    const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
    const kid = randomUUID();
    const jwk = { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' } as SigningJwk;
    let clock = new Date('2026-11-26T12:00:00Z');
    const verifier = new BearerVerifier({
      db: db.handle.db,
      issuer: ISSUER,
      audience: AUDIENCE,
      keys: [jwk],
      secrets: new SecretBox(null),
      now: () => clock,
    });
    const accountId = randomUUID();
    const clientId = 'client-1';
    const grantId = randomUUID();
    await new KyselyAdapter(db.handle.db, 'Grant', () => clock).upsert(
      grantId,
      { accountId, clientId, kind: 'Grant' } as never,
      3600,
    );
    const iat = Math.floor(clock.getTime() / 1000);
    const token = await new SignJWT({
      client_id: clientId,
      scope: 'agent-service',
      [GRANT_CLAIM]: grantId,
      jti: randomUUID(),
    })
      .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setSubject(accountId)
      .setIssuedAt(iat)
      .setExpirationTime(iat + 600)
      .sign(privateKey);
    return {
      verifier,
      accountId,
      grantId,
      token,
      advance: (ms: number) => {
        clock = new Date(clock.getTime() + ms);
      },
      verify: () => verifier.verify(`Bearer ${token}`, undefined),
    };
  }

  it('refuses a remembered token at once when its grant is deleted', async () => {
    const t = await setUp();
    expect(await t.verify()).toMatchObject({ ok: true, grant: { accountId: t.accountId } });
    expect(await t.verify()).toMatchObject({ ok: true });
    await (db as TestDatabase).handle.db.deleteFrom('oauth_records').where('id', '=', t.grantId).execute();
    expect(await t.verify()).toEqual({
      ok: false,
      status: 401,
      error: 'invalid_token',
      description: 'The grant of this access token was revoked',
    });
  });

  it("refuses a remembered token at once when the account's tokens are revoked", async () => {
    const t = await setUp();
    expect(await t.verify()).toMatchObject({ ok: true });
    t.advance(2_000);
    await revokeAccountTokens((db as TestDatabase).handle.db, t.accountId, new Date('2026-11-26T12:00:01Z'));
    expect(await t.verify()).toMatchObject({
      ok: false,
      description: 'The account revoked its access tokens',
    });
  });

  it('refuses a remembered token once it expires', async () => {
    const t = await setUp();
    expect(await t.verify()).toMatchObject({ ok: true });
    t.advance(599_000);
    expect(await t.verify()).toMatchObject({ ok: true });
    t.advance(1_000);
    expect(await t.verify()).toMatchObject({ ok: false, description: 'The access token has expired' });
  });

  it('does not take another text for a remembered token', async () => {
    const t = await setUp();
    expect(await t.verify()).toMatchObject({ ok: true });
    const tampered = `${t.token.slice(0, -4)}AAAA`;
    expect(await t.verifier.verify(`Bearer ${tampered}`, undefined)).toMatchObject({
      ok: false,
      description: 'The access token is not valid for this resource',
    });
  });
});
