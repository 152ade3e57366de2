/** How an agent builds an approval proof (the documented format), for tests. */
import { CompactSign, exportJWK, generateKeyPair } from 'jose';
import { requestDigest } from '../../servers/features/returns/approval.ts';
import type { StartReturnRequestInput } from '../../servers/features/returns/schemas.ts';

export async function signApproval(
  request: Omit<StartReturnRequestInput, 'approval_proof'>,
  claims: Record<string, unknown> = {},
  alg: 'ES256' | 'EdDSA' = 'ES256',
): Promise<string> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const jwk = await exportJWK(publicKey);
  const payload = {
    request_sha256: requestDigest(request as StartReturnRequestInput),
    iat: Math.floor(Date.now() / 1000),
    sub: 'person-123',
    ...claims,
  };
  return new CompactSign(new TextEncoder().encode(JSON.stringify(payload)))
    .setProtectedHeader({ alg, jwk, typ: 'approval+jwt' })
    .sign(privateKey);
}
