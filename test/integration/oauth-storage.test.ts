/**
 * The authorization server's storage on both dialects: oidc-provider's adapter contract (expired
 * rows absent, consume, lookups by uid and user code, revocation by grant, the sweep) and signing
 * keys that persist and rotate without dropping the old key from the JWKS.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KyselyAdapter, sweepOauthRecords } from '../../auth/adapter.ts';
import { loadAuthorizationKeys, RETIRED_KEY_PUBLISHED_MS, rotateSigningKey } from '../../auth/keys.ts';
import { SecretBox } from '../../servers/secrets.ts';
import { createTestDatabase, dialects, type TestDatabase } from '../helpers/databases.ts';

/** Keys stored in clear, as without SECRETS_KEY (sealing is tested in secrets-at-rest.test.ts). */
const clear = new SecretBox(null);

describe.each(dialects)('OAuth storage (%s)', (dialect) => {
  let database: TestDatabase;
  let clock = new Date('2026-11-21T12:00:00.000Z');
  const now = () => clock;

  beforeAll(async () => {
    database = await createTestDatabase(dialect);
  });
  afterAll(async () => {
    await database?.drop();
  });

  it('stores, finds, consumes and expires models', async () => {
    const db = database.handle.db;
    const codes = new KyselyAdapter(db, 'AuthorizationCode', now);
    const sessions = new KyselyAdapter(db, 'Session', now);
    await codes.upsert('code-1', { grantId: 'g1', accountId: 'a1', kind: 'AuthorizationCode' }, 60);
    await sessions.upsert('code-1', { uid: 'u1', kind: 'Session' }, 3600);
    expect(await codes.find('code-1')).toMatchObject({ grantId: 'g1', accountId: 'a1' });
    expect(await sessions.findByUid('u1')).toMatchObject({ kind: 'Session' });
    expect(await codes.findByUid('u1')).toBeUndefined();

    await codes.consume('code-1');
    expect((await codes.find('code-1'))?.consumed).toBeTypeOf('number');

    await codes.upsert('code-1', { grantId: 'g1', kind: 'AuthorizationCode' }, 60);
    expect((await codes.find('code-1'))?.consumed).toBeUndefined();

    const devices = new KyselyAdapter(db, 'DeviceCode', now);
    await devices.upsert('d1', { userCode: 'ABCD-EFGH', grantId: 'g2' }, 60);
    expect(await devices.findByUserCode('ABCD-EFGH')).toMatchObject({ grantId: 'g2' });

    clock = new Date(clock.getTime() + 61_000);
    expect(await codes.find('code-1')).toBeUndefined();
    expect(await sessions.find('code-1')).toBeDefined();
    expect(await sweepOauthRecords(db, clock)).toBe(2);
    expect(await sessions.find('code-1')).toBeDefined();
  });

  it('revokes every token of a grant and nothing else', async () => {
    const db = database.handle.db;
    const refresh = new KyselyAdapter(db, 'RefreshToken', now);
    const access = new KyselyAdapter(db, 'AccessToken', now);
    await refresh.upsert('r1', { grantId: 'g9' }, 600);
    await access.upsert('t1', { grantId: 'g9' }, 600);
    await refresh.upsert('r2', { grantId: 'g10' }, 600);
    await refresh.revokeByGrantId('g9');
    expect(await refresh.find('r1')).toBeUndefined();
    expect(await access.find('t1')).toBeUndefined();
    expect(await refresh.find('r2')).toBeDefined();
    await refresh.destroy('r2');
    expect(await refresh.find('r2')).toBeUndefined();
  });

  it('converges on one signing key when several processes start together on an empty database', async () => {
    const empty = await createTestDatabase(dialect);
    try {
      const loaded = await Promise.all(
        Array.from({ length: 5 }, () => loadAuthorizationKeys(empty.handle.db, clear)),
      );
      const signing = new Set(loaded.map((keys) => keys.jwks.keys[0]?.kid));
      expect(signing.size).toBe(1);
      const rows = await empty.handle.db.selectFrom('oauth_signing_keys').select('kid').execute();
      expect(rows.map((r) => r.kid)).toEqual([...signing]);

      const rotated = await Promise.all([
        rotateSigningKey(empty.handle.db, clear),
        rotateSigningKey(empty.handle.db, clear),
      ]);
      // Overlapping rotations may also run one after the other (then the second retires the
      // first's key): either way exactly one key signs afterwards, and it is one they reported.
      const active = await empty.handle.db
        .selectFrom('oauth_signing_keys')
        .select('kid')
        .where('retired_at', 'is', null)
        .execute();
      expect(active).toHaveLength(1);
      expect(rotated).toContain(active[0]?.kid);
      expect(rotated).not.toContain([...signing][0]);
    } finally {
      await empty.drop();
    }
  });

  it('keeps signing keys across starts and publishes a retired key until its tokens are gone', async () => {
    const db = database.handle.db;
    const first = await loadAuthorizationKeys(db, clear, now);
    const again = await loadAuthorizationKeys(db, clear, now);
    expect(again).toEqual(first);
    expect(first.jwks.keys).toHaveLength(1);
    expect(first.jwks.keys[0]).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' });

    const kid = await rotateSigningKey(db, clear, now);
    const rotated = await loadAuthorizationKeys(db, clear, now);
    expect(rotated.jwks.keys.map((k) => k.kid)).toEqual([kid, first.jwks.keys[0]?.kid]);
    expect(rotated.cookieKeys).toEqual(first.cookieKeys);

    clock = new Date(clock.getTime() + RETIRED_KEY_PUBLISHED_MS + 1000);
    const later = await loadAuthorizationKeys(db, clear, now);
    expect(later.jwks.keys.map((k) => k.kid)).toEqual([kid]);
  });
});
