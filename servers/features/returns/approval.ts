/**
 * Verifies an approval proof against the request it claims to approve (format in `schemas.ts`).
 * A JWS binds to the request through `request_sha256`: SHA-256 over the RFC 8785 (JCS) canonical
 * form of the request body without `approval_proof`, so any change to the request breaks it.
 */
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import {
  calculateJwkThumbprint,
  compactVerify,
  decodeProtectedHeader,
  EmbeddedJWK,
  errors as joseErrors,
} from 'jose';
import { invalid } from '../../errors.ts';
import type { ApprovalProof, ApprovalSummary, StartReturnRequestInput } from './schemas.ts';

const algorithms = ['ES256', 'ES384', 'EdDSA', 'Ed25519', 'RS256', 'PS256'];
const MAX_AGE_S = 7 * 24 * 3600;
const CLOCK_SKEW_S = 300;

/** base64url(SHA-256(JCS(request without approval_proof))) - what a JWS approval must carry. */
export function requestDigest(request: StartReturnRequestInput): string {
  const { approval_proof: _omit, ...rest } = request;
  return createHash('sha256')
    .update(canonicalize(rest) ?? '')
    .digest('base64url');
}

export interface VerifiedApproval extends ApprovalSummary {
  /** Stored with the request and forwarded to the brand. */
  record: Record<string, unknown>;
}

const fail = (message: string) => invalid([{ field: 'approval_proof.jws', message }]);

export async function verifyApproval(
  proof: ApprovalProof,
  request: StartReturnRequestInput,
  audience: string,
  now = new Date(),
): Promise<VerifiedApproval> {
  if (proof.format === 'declaration') {
    return {
      format: 'declaration',
      verified: false,
      record: {
        format: 'declaration',
        verified: false,
        statement: proof.statement,
        approved_at: proof.approved_at,
        method: proof.method ?? null,
      },
    };
  }

  let header: ReturnType<typeof decodeProtectedHeader>;
  try {
    header = decodeProtectedHeader(proof.jws);
  } catch {
    throw fail('has an unreadable protected header');
  }
  if (!header.alg || !algorithms.includes(header.alg)) {
    throw fail(`alg must be one of ${algorithms.join(', ')}`);
  }
  if (!header.jwk) throw fail('protected header must carry the public key as jwk');

  let payload: Uint8Array;
  try {
    ({ payload } = await compactVerify(proof.jws, EmbeddedJWK, { algorithms }));
  } catch (err) {
    if (err instanceof joseErrors.JWSSignatureVerificationFailed) throw fail('signature does not verify');
    throw fail('could not be verified with the embedded key');
  }

  let claims: Record<string, unknown>;
  try {
    claims = JSON.parse(new TextDecoder().decode(payload)) as Record<string, unknown>;
  } catch {
    throw fail('payload is not a JSON object');
  }
  if (typeof claims !== 'object' || claims === null) throw fail('payload is not a JSON object');
  const nowS = Math.floor(now.getTime() / 1000);
  if (claims.request_sha256 !== requestDigest(request)) {
    throw fail(
      'request_sha256 does not match this request (SHA-256 of its RFC 8785 form without approval_proof)',
    );
  }
  if (typeof claims.iat !== 'number') throw fail('iat is required');
  if (claims.iat > nowS + CLOCK_SKEW_S) throw fail('iat is in the future');
  if (claims.iat < nowS - MAX_AGE_S) throw fail('iat is more than 7 days old');
  if (claims.exp !== undefined && (typeof claims.exp !== 'number' || claims.exp < nowS - CLOCK_SKEW_S)) {
    throw fail('has expired');
  }
  if (claims.aud !== undefined && claims.aud !== audience) throw fail(`aud must be ${audience}`);

  const keyThumbprint = await calculateJwkThumbprint(header.jwk, 'sha256');
  return {
    format: 'jws',
    verified: true,
    key_thumbprint: keyThumbprint,
    record: {
      format: 'jws',
      verified: true,
      alg: header.alg,
      key_thumbprint: keyThumbprint,
      iat: claims.iat,
      sub: typeof claims.sub === 'string' ? claims.sub : null,
      jws: proof.jws,
    },
  };
}
