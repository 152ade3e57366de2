/**
 * A real identity provider on loopback for the ID-JAG tests: its own keys (jose), its JWKS served
 * over HTTP, and an issuer URL; it mints Identity Assertion JWT Authorization Grants
 * (draft-ietf-oauth-identity-assertion-authz-grant-04 section 3) the way an enterprise IdP would
 * after a token exchange, and can also mint what a careless or hostile one would.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type JWTPayload, SignJWT } from 'jose';

export interface LocalIdentityProvider {
  issuer: string;
  jwksUri: string;
  /** Times the JWKS was fetched. */
  jwksFetches: number;
  /** Signs an ID-JAG; `claims` and `header` override the defaults. */
  mint(claims: JWTPayload, header?: Record<string, unknown>): Promise<string>;
  /** The same claims in an unsigned JWT (`alg: none`). */
  unsigned(claims: JWTPayload): string;
  close(): Promise<void>;
}

export async function startIdentityProvider(
  defaults: { audience: string; clientId: string },
  alg: 'ES256' | 'RS256' = 'ES256',
): Promise<LocalIdentityProvider> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const kid = randomUUID();
  const jwks = { keys: [{ ...(await exportJWK(publicKey)), kid, alg, use: 'sig' }] };
  const server = http.createServer((req, res) => {
    if (req.url === '/jwks.json') {
      idp.jwksFetches++;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(jwks));
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const claimsOf = (claims: JWTPayload): JWTPayload => {
    const now = Math.floor(Date.now() / 1000);
    return {
      iss: issuer,
      sub: `user-${randomUUID()}`,
      aud: defaults.audience,
      client_id: defaults.clientId,
      jti: randomUUID(),
      iat: now,
      exp: now + 300,
      ...claims,
    };
  };
  const idp: LocalIdentityProvider = {
    issuer,
    jwksUri: `${issuer}/jwks.json`,
    jwksFetches: 0,
    mint: (claims, header = {}) =>
      new SignJWT(claimsOf(claims))
        .setProtectedHeader({ alg, kid, typ: 'oauth-id-jag+jwt', ...header })
        .sign(privateKey),
    unsigned(claims) {
      const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
      return `${part({ alg: 'none', typ: 'oauth-id-jag+jwt' })}.${part(claimsOf(claims))}.`;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  return idp;
}
