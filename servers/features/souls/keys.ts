/**
 * A soul's keys: public JWKs (Ed25519 or P-256), their RFC 7638 thumbprints, the permanent
 * `agent_id` derived from the first key, and the two signatures a soul makes - a compact JWS over a
 * registration challenge, and the short JWTs that authorize its writes.
 *
 * `agent_id` is the RFC 9278 JWK Thumbprint URI of the first key:
 * `urn:ietf:params:oauth:jwk-thumbprint:sha-256:<base64url SHA-256 of the RFC 7638 JSON>`, so anyone
 * holding the key (or the identity document's first key) recomputes it and sees the identity is
 * bound to that key. It never changes, not even when the key is rotated.
 */
import {
  calculateJwkThumbprint,
  calculateJwkThumbprintUri,
  compactVerify,
  decodeJwt,
  importJWK,
  type JWK,
  type JWTPayload,
  errors as joseErrors,
  jwtVerify,
} from 'jose';
import { z } from 'zod';

/** RFC 9278 section 3: the prefix every agent_id carries (SHA-256 thumbprints only). */
export const AGENT_ID_PREFIX = 'urn:ietf:params:oauth:jwk-thumbprint:sha-256:';

/** A base64url SHA-256 thumbprint is 43 characters. */
export const AgentId = z
  .string()
  .max(200)
  .regex(
    /^urn:ietf:params:oauth:jwk-thumbprint:sha-256:[A-Za-z0-9_-]{43}$/,
    `must be an agent_id: ${AGENT_ID_PREFIX} followed by the key's 43-character thumbprint`,
  )
  .describe(
    "The soul's permanent id: the RFC 9278 thumbprint URI (SHA-256, RFC 7638) of its first public key.",
  );

const b64url = (length: number) => z.string().regex(new RegExp(`^[A-Za-z0-9_-]{${length}}$`));

/**
 * A public JWK of the two kinds a soul may hold. A private member (`d`) is refused outright: the
 * private key never leaves the agent. Other members (`kid`, `use`, `alg`) are accepted and dropped.
 */
export const PublicJwk = z
  .union([
    z.looseObject({ kty: z.literal('OKP'), crv: z.literal('Ed25519'), x: b64url(43) }),
    z.looseObject({ kty: z.literal('EC'), crv: z.literal('P-256'), x: b64url(43), y: b64url(43) }),
  ])
  .superRefine((jwk, ctx) => {
    if ('d' in jwk)
      ctx.addIssue({ code: 'custom', message: 'must be a public key: remove the private member d' });
  })
  .transform((jwk) => canonicalJwk(jwk as CanonicalJwk))
  .describe(
    'A public JWK (RFC 7517): Ed25519 {kty:"OKP", crv:"Ed25519", x} or P-256 {kty:"EC", crv:"P-256", x, y}. ' +
      'Never send the private key (d).',
  );
export type PublicJwk = z.infer<typeof PublicJwk>;
export type CanonicalJwk =
  | { kty: 'OKP'; crv: 'Ed25519'; x: string }
  | { kty: 'EC'; crv: 'P-256'; x: string; y: string };

/** The JWS algorithms a key of this kind signs with (RFC 8037 EdDSA / Ed25519; RFC 7518 ES256). */
export function algorithmsOf(jwk: PublicJwk): string[] {
  return jwk.kty === 'OKP' ? ['EdDSA', 'Ed25519'] : ['ES256'];
}

/** Only the members RFC 7638 hashes: what is stored and published. */
export function canonicalJwk(jwk: CanonicalJwk): CanonicalJwk {
  return jwk.kty === 'OKP'
    ? { kty: 'OKP', crv: 'Ed25519', x: jwk.x }
    : { kty: 'EC', crv: 'P-256', x: jwk.x, y: jwk.y };
}

export const thumbprintOf = (jwk: PublicJwk): Promise<string> => calculateJwkThumbprint(jwk as JWK, 'sha256');

export const agentIdOf = (jwk: PublicJwk): Promise<string> => calculateJwkThumbprintUri(jwk as JWK, 'sha256');

/** Whether `signature` is a compact JWS made by `jwk` whose payload is exactly `text`. */
export async function signsText(jwk: PublicJwk, signature: string, text: string): Promise<boolean> {
  try {
    const key = await importJWK(jwk as JWK, algorithmsOf(jwk)[0]);
    const { payload } = await compactVerify(signature, key, { algorithms: algorithmsOf(jwk) });
    return new TextDecoder().decode(payload) === text;
  } catch {
    return false;
  }
}

/** Longest life of a soul-signed JWT (`exp - iat`), and the clock skew allowed on `iat`. */
export const SOUL_JWT_MAX_SECONDS = 300;
export const CLOCK_SKEW_SECONDS = 60;

export type SoulJwtResult =
  | { ok: true; jti: string; exp: number; claims: JWTPayload }
  | { ok: false; description: string };

/**
 * A soul-signed JWT the adapter verified and spent: kept as the signature of what it authorized (a
 * memory entry, a rotated-in key), so `kid` is the thumbprint of the key that verified it.
 */
export interface SoulToken {
  agentId: string;
  jws: string;
  kid: string;
  claims: JWTPayload;
}

/**
 * Verifies a soul-signed JWT with one of the soul's keys: signature, `iss` = agent_id, `aud` = the
 * soul API URL, `iat` not in the future, `exp` at most 5 minutes after `iat` and not passed, `jti`
 * present. Single use of the `jti` is the caller's (it needs the database).
 */
export async function verifySoulJwt(
  token: string,
  jwk: PublicJwk,
  expected: { agentId: string; audience: string; now: Date },
): Promise<SoulJwtResult> {
  try {
    const key = await importJWK(jwk as JWK, algorithmsOf(jwk)[0]);
    const { payload } = await jwtVerify(token, key, {
      issuer: expected.agentId,
      audience: expected.audience,
      algorithms: algorithmsOf(jwk),
      requiredClaims: ['iat', 'exp', 'jti'],
      currentDate: expected.now,
      clockTolerance: 0,
    });
    const iat = payload.iat as number;
    const exp = payload.exp as number;
    const now = Math.floor(expected.now.getTime() / 1000);
    if (iat > now + CLOCK_SKEW_SECONDS) return { ok: false, description: 'iat is in the future' };
    if (exp - iat > SOUL_JWT_MAX_SECONDS) {
      return { ok: false, description: `exp must be at most ${SOUL_JWT_MAX_SECONDS} seconds after iat` };
    }
    const jti = payload.jti as string;
    if (jti.length === 0 || jti.length > 200)
      return { ok: false, description: 'jti must be 1 to 200 characters' };
    return { ok: true, jti, exp, claims: payload };
  } catch (err) {
    if (err instanceof joseErrors.JWTExpired) return { ok: false, description: 'The token has expired' };
    if (err instanceof joseErrors.JWTClaimValidationFailed) return { ok: false, description: err.message };
    return { ok: false, description: "The token is not signed by the soul's current key" };
  }
}

/** The `iss` of a JWT when it names a soul (read unverified, to choose the verifier), else null. */
export function soulIssuerOf(token: string): string | null {
  try {
    const { iss } = decodeJwt(token);
    return typeof iss === 'string' && iss.startsWith(AGENT_ID_PREFIX) ? iss : null;
  } catch {
    return null;
  }
}
