import { describe, expect, it } from 'vitest';
import type { ServiceError } from '../../servers/errors.ts';
import { requestDigest, verifyApproval } from '../../servers/features/returns/approval.ts';
import type { StartReturnRequestInput } from '../../servers/features/returns/schemas.ts';
import { signApproval } from '../helpers/approval.ts';

const audience = 'https://agents.example.com/cs/return';
const request: StartReturnRequestInput = {
  brand_domain: 'netflix.com',
  name: 'Jane Doe',
  contact: 'jane@example.com',
  amount: 15.49,
  date: '2026-11-02',
};

async function rejection(promise: Promise<unknown>): Promise<ServiceError> {
  try {
    await promise;
  } catch (err) {
    return err as ServiceError;
  }
  throw new Error('expected a rejection');
}

describe('approval proofs', () => {
  it('digests the RFC 8785 form, independent of key order and of approval_proof', () => {
    const reordered = {
      date: '2026-11-02',
      amount: 15.49,
      contact: 'jane@example.com',
      name: 'Jane Doe',
      brand_domain: 'netflix.com',
    };
    expect(requestDigest(reordered)).toBe(requestDigest(request));
    expect(requestDigest({ ...request, approval_proof: { format: 'jws', jws: 'a.b.c' } })).toBe(
      requestDigest(request),
    );
    expect(requestDigest({ ...request, amount: 15.5 })).not.toBe(requestDigest(request));
  });

  it.each(['ES256', 'EdDSA'] as const)(
    'verifies a %s JWS over the request and records the key thumbprint',
    async (alg) => {
      const jws = await signApproval(request, {}, alg);
      const result = await verifyApproval(
        { format: 'jws', jws },
        { ...request, approval_proof: { format: 'jws', jws } },
        audience,
      );
      expect(result.verified).toBe(true);
      expect(result.key_thumbprint).toMatch(/^[A-Za-z0-9_-]{43}$/);
    },
  );

  it('refuses a proof for another request, a bad signature, an old or future iat, a wrong audience', async () => {
    const cases: [Promise<string>, RegExp, StartReturnRequestInput?][] = [
      [signApproval({ ...request, amount: 99 }), /request_sha256 does not match/],
      [signApproval(request, { iat: Math.floor(Date.now() / 1000) - 8 * 86400 }), /more than 7 days/],
      [signApproval(request, { iat: Math.floor(Date.now() / 1000) + 3600 }), /in the future/],
      [signApproval(request, { exp: Math.floor(Date.now() / 1000) - 3600 }), /expired/],
      [signApproval(request, { aud: 'https://elsewhere.example/return' }), /aud must be/],
    ];
    for (const [jwsPromise, message] of cases) {
      const jws = await jwsPromise;
      const err = await rejection(verifyApproval({ format: 'jws', jws }, request, audience));
      expect(err.code).toBe('validation_failed');
      expect(err.errors?.[0]?.field).toBe('approval_proof.jws');
      expect(err.errors?.[0]?.message).toMatch(message);
    }
    const jws = await signApproval(request);
    const [h, p, s] = jws.split('.') as [string, string, string];
    const tampered = `${h}.${p}.${s.slice(0, -4)}AAAA`;
    expect(
      (await rejection(verifyApproval({ format: 'jws', jws: tampered }, request, audience))).errors?.[0]
        ?.message,
    ).toMatch(/signature|verified/);
    const noKey = `${Buffer.from(JSON.stringify({ alg: 'ES256' })).toString('base64url')}.${p}.${s}`;
    expect(
      (await rejection(verifyApproval({ format: 'jws', jws: noKey }, request, audience))).errors?.[0]
        ?.message,
    ).toMatch(/jwk/);
    const none = `${Buffer.from(JSON.stringify({ alg: 'none' })).toString('base64url')}.${p}.${s}`;
    expect(
      (await rejection(verifyApproval({ format: 'jws', jws: none }, request, audience))).errors?.[0]?.message,
    ).toMatch(/alg/);
  });

  it('records a declaration as unverified', async () => {
    const result = await verifyApproval(
      {
        format: 'declaration',
        statement: 'Jane said yes in chat',
        approved_at: '2026-11-20T10:00:00Z',
        method: 'chat',
      },
      request,
      audience,
    );
    expect(result).toMatchObject({ format: 'declaration', verified: false });
  });
});
