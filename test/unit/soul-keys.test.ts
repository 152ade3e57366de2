/**
 * A soul's keys and tokens without a server: agent_id against the RFC 8037 appendix A.3 thumbprint,
 * the public-key rules, the challenge JWS and each rule of the soul JWT (keys made with jose).
 */
import { CompactSign, exportJWK, generateKeyPair, SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { agentIdOf, PublicJwk, signsText, verifySoulJwt } from '../../servers/features/souls/keys.ts';

const AUD = 'https://example.com/api/soul';

describe('soul keys', () => {
  it('derives agent_id as the RFC 9278 URI of the RFC 7638 thumbprint (RFC 8037 A.3 vector)', async () => {
    const jwk = PublicJwk.parse({
      kty: 'OKP',
      crv: 'Ed25519',
      x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo',
    });
    expect(await agentIdOf(jwk)).toBe(
      'urn:ietf:params:oauth:jwk-thumbprint:sha-256:kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k',
    );
  });

  it('keeps only the thumbprint members and refuses private keys and other key types', async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
    const pub = { ...(await exportJWK(publicKey)), kid: 'k1', use: 'sig' };
    expect(Object.keys(PublicJwk.parse(pub)).sort()).toEqual(['crv', 'kty', 'x', 'y']);
    expect(PublicJwk.safeParse(await exportJWK(privateKey)).success).toBe(false);
    expect(PublicJwk.safeParse({ kty: 'OKP', crv: 'X25519', x: 'A'.repeat(43) }).success).toBe(false);
  });

  it('accepts a challenge JWS only from the matching key and only over the exact text', async () => {
    const { privateKey, publicKey } = await generateKeyPair('EdDSA', { extractable: true });
    const other = await generateKeyPair('EdDSA', { extractable: true });
    const jwk = PublicJwk.parse(await exportJWK(publicKey));
    const sign = (text: string, key = privateKey) =>
      new CompactSign(new TextEncoder().encode(text)).setProtectedHeader({ alg: 'EdDSA' }).sign(key);
    expect(await signsText(jwk, await sign('soul-challenge.abc'), 'soul-challenge.abc')).toBe(true);
    expect(await signsText(jwk, await sign('soul-challenge.abd'), 'soul-challenge.abc')).toBe(false);
    expect(
      await signsText(jwk, await sign('soul-challenge.abc', other.privateKey), 'soul-challenge.abc'),
    ).toBe(false);
    expect(await signsText(jwk, 'not.a.jws', 'soul-challenge.abc')).toBe(false);
  });

  it('checks every rule of the soul JWT', async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
    const jwk = PublicJwk.parse(await exportJWK(publicKey));
    const agentId = await agentIdOf(jwk);
    const now = new Date('2026-11-25T10:00:00Z');
    const t = Math.floor(now.getTime() / 1000);
    const token = (claims: {
      iss?: string;
      aud?: string;
      iat?: number;
      exp?: number;
      jti?: string | null;
    }) => {
      const jwt = new SignJWT({})
        .setProtectedHeader({ alg: 'ES256' })
        .setIssuer(claims.iss ?? agentId)
        .setAudience(claims.aud ?? AUD)
        .setIssuedAt(claims.iat ?? t)
        .setExpirationTime(claims.exp ?? t + 60);
      if (claims.jti !== null) jwt.setJti(claims.jti ?? 'j-1');
      return jwt.sign(privateKey);
    };
    const check = async (claims: Parameters<typeof token>[0]) =>
      verifySoulJwt(await token(claims), jwk, { agentId, audience: AUD, now });

    expect(await check({})).toEqual({
      ok: true,
      jti: 'j-1',
      exp: t + 60,
      claims: { iss: agentId, aud: AUD, iat: t, exp: t + 60, jti: 'j-1' },
    });
    expect((await check({ exp: t + 300 })).ok).toBe(true);
    expect((await check({ exp: t + 301 })).ok).toBe(false);
    expect((await check({ iat: t - 400, exp: t - 1 })).ok).toBe(false);
    expect((await check({ iat: t + 120, exp: t + 180 })).ok).toBe(false);
    expect((await check({ aud: 'https://elsewhere.example/api/soul' })).ok).toBe(false);
    // Another agent's id: the last character changed (to one it is not, whatever the key drew).
    const otherId = `${agentId.slice(0, -1)}${agentId.endsWith('A') ? 'B' : 'A'}`;
    expect((await check({ iss: otherId })).ok).toBe(false);
    expect((await check({ jti: null })).ok).toBe(false);
  });
});
