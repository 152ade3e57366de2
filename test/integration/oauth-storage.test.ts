/**
 * The authorization server's storage on both dialects: oidc-provider's adapter contract (expired
 * rows absent, consume, lookups by uid and user code, revocation by grant, the sweep), secret ids
 * kept only as digests, clients that expire unless used, and signing keys that persist and rotate
 * without dropping the old key from the JWKS.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { digestOf, KyselyAdapter, sweepOauthRecords, UNUSED_CLIENT_TTL_S } from '../../auth/adapter.ts';
import { loadAuthorizationKeys, RETIRED_KEY_PUBLISHED_MS, rotateSigningKey } from '../../auth/keys.ts';
import { migrateToLatest, migrateUpTo, migrationNames } from '../../db/migrate.ts';
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

  it('keeps a bearer secret id only as its digest, and finds, consumes and destroys it by its value', async () => {
    const db = database.handle.db;
    const refresh = new KyselyAdapter(db, 'RefreshToken', now);
    const secret = 'refresh-token-value-that-a-database-reader-must-not-learn';
    await refresh.upsert(secret, { jti: secret, grantId: 'g20', clientId: 'c20', kind: 'RefreshToken' }, 600);
    const rows = await db
      .selectFrom('oauth_records')
      .selectAll()
      .where('model', '=', 'RefreshToken')
      .execute();
    expect(JSON.stringify(rows)).not.toContain(secret);
    expect(rows.map((r) => r.id)).toContain(digestOf(secret));
    expect(await refresh.find(secret)).toMatchObject({ jti: secret, grantId: 'g20' });
    expect(await refresh.find(digestOf(secret))).toBeUndefined();
    await refresh.consume(secret);
    expect((await refresh.find(secret))?.consumed).toBeTypeOf('number');
    await refresh.destroy(secret);
    expect(await refresh.find(secret)).toBeUndefined();

    // An Interaction keeps its id (the sign-in page's path) but not the session cookie it copies.
    const interactions = new KyselyAdapter(db, 'Interaction', now);
    await interactions.upsert(
      'interaction-1',
      { jti: 'interaction-1', session: { accountId: 'a1', uid: 'su1', cookie: 'session-cookie-value' } },
      600,
    );
    const stored = await db
      .selectFrom('oauth_records')
      .select('payload')
      .where('model', '=', 'Interaction')
      .executeTakeFirstOrThrow();
    expect(stored.payload).not.toContain('session-cookie-value');
    expect(await interactions.find('interaction-1')).toMatchObject({
      session: { accountId: 'a1', uid: 'su1' },
    });
  });

  it('lets a client nobody approved expire with its registration access token, and keeps a used one', async () => {
    const db = database.handle.db;
    const clients = new KyselyAdapter(db, 'Client', now);
    const tokens = new KyselyAdapter(db, 'RegistrationAccessToken', now);
    const grants = new KyselyAdapter(db, 'Grant', now);
    for (const id of ['unused-client', 'used-client']) {
      await clients.upsert(id, { client_id: id, redirect_uris: ['http://127.0.0.1/cb'] }, 0);
      await tokens.upsert(
        `rat-of-${id}`,
        { jti: `rat-of-${id}`, clientId: id, kind: 'RegistrationAccessToken' },
        0,
      );
    }
    clock = new Date(clock.getTime() + 3_600_000);
    await grants.upsert('grant-of-used-client', { clientId: 'used-client', accountId: 'a1' }, 30 * 86_400);
    // Stored again (metadata updated), the unused client does not gain time.
    await clients.upsert(
      'unused-client',
      { client_id: 'unused-client', redirect_uris: ['http://127.0.0.1/cb'] },
      0,
    );

    clock = new Date(clock.getTime() + UNUSED_CLIENT_TTL_S * 1000);
    expect(await clients.find('unused-client')).toBeUndefined();
    expect(await tokens.find('rat-of-unused-client')).toBeUndefined();
    expect(await clients.find('used-client')).toBeDefined();
    expect(await tokens.find('rat-of-used-client')).toBeDefined();
    await sweepOauthRecords(db, clock);
    const left = await db
      .selectFrom('oauth_records')
      .select('client_id')
      .where('model', 'in', ['Client', 'RegistrationAccessToken'])
      .execute();
    expect(left.map((r) => r.client_id)).toEqual(['used-client', 'used-client']);
  });

  it('converts the rows of the earlier version: secret ids to digests, clients to a lifetime', async () => {
    const earlier = await createTestDatabase(dialect, { migrate: false });
    try {
      const db = earlier.handle.db;
      const names = await migrationNames();
      const conversion = names.indexOf('2026-11-22T1200Z_oauth_secrets_at_rest');
      await migrateUpTo(db, names[conversion - 1] as string);
      const future = new Date(Date.now() + 3_600_000).toISOString();
      const row = (id: string, model: string, payload: object, expires_at: string | null) => ({
        id,
        model,
        grant_id: null,
        uid: null,
        user_code: null,
        account_id: null,
        payload: JSON.stringify(payload),
        expires_at,
        consumed_at: null,
      });
      await db
        .insertInto('oauth_records')
        .values([
          row('old-refresh-token', 'RefreshToken', { jti: 'old-refresh-token', clientId: 'c1' }, future),
          row('old-rat', 'RegistrationAccessToken', { jti: 'old-rat', clientId: 'c1' }, null),
          row('c1', 'Client', { client_id: 'c1' }, null),
          row(
            'i1',
            'Interaction',
            { jti: 'i1', session: { uid: 'u1', cookie: 'old-session-cookie' } },
            future,
          ),
          row('expired-code', 'AuthorizationCode', { jti: 'expired-code' }, new Date(0).toISOString()),
        ])
        .execute();
      await migrateToLatest(db);

      const rows = await db.selectFrom('oauth_records').selectAll().execute();
      const everything = JSON.stringify(rows);
      for (const secret of ['old-refresh-token', 'old-rat', 'old-session-cookie', 'expired-code'])
        expect(everything).not.toContain(secret);
      expect(await new KyselyAdapter(db, 'RefreshToken').find('old-refresh-token')).toMatchObject({
        jti: 'old-refresh-token',
        clientId: 'c1',
      });
      expect(await new KyselyAdapter(db, 'RegistrationAccessToken').find('old-rat')).toBeDefined();
      expect(await new KyselyAdapter(db, 'Interaction').find('i1')).toMatchObject({ session: { uid: 'u1' } });
      const clientBound = rows.filter((r) => r.model === 'Client' || r.model === 'RegistrationAccessToken');
      expect(clientBound.map((r) => r.client_id)).toEqual(['c1', 'c1']);
      for (const r of clientBound) expect(Date.parse(r.expires_at as string)).toBeGreaterThan(Date.now());
    } finally {
      await earlier.drop();
    }
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
