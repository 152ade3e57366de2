/**
 * Real local Shared Signals peers on loopback: a transmitter with its own jose keys that serves
 * its JWKS and signs Security Event Tokens (RFC 8417), and a push receiver (RFC 8935) that
 * collects the SETs our transmitter sends and verifies them against our published JWKS with
 * jose's `createRemoteJWKSet`, independent of our signing code.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  type CryptoKey,
  createRemoteJWKSet,
  exportJWK,
  generateKeyPair,
  type JWTPayload,
  jwtVerify,
  SignJWT,
} from 'jose';

export interface LocalTransmitter {
  issuer: string;
  jwksUri: string;
  /** How many times the JWKS was fetched. */
  jwksFetches: number;
  /** A SET with `events` = { [type]: event } about `subject`; `overrides` replace claims or the header. */
  sign(
    type: string,
    event: Record<string, unknown>,
    subject: Record<string, unknown> | undefined,
    options?: {
      audience?: string;
      jti?: string;
      claims?: Record<string, unknown>;
      typ?: string;
      key?: CryptoKey;
      kid?: string;
    },
  ): Promise<string>;
  close(): Promise<void>;
}

/** `audience` is the default `aud` of the SETs (the receiver's issuer). */
export async function startTransmitter(audience: () => string): Promise<LocalTransmitter> {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const kid = randomUUID();
  const jwks = { keys: [{ ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' }] };
  const transmitter: LocalTransmitter = {
    issuer: '',
    jwksUri: '',
    jwksFetches: 0,
    async sign(type, event, subject, options = {}) {
      return new SignJWT({
        ...(subject ? { sub_id: subject } : {}),
        events: { [type]: event },
        ...options.claims,
      })
        .setProtectedHeader({ alg: 'ES256', typ: options.typ ?? 'secevent+jwt', kid: options.kid ?? kid })
        .setIssuer(transmitter.issuer)
        .setAudience(options.audience ?? audience())
        .setJti(options.jti ?? randomUUID())
        .setIssuedAt(typeof options.claims?.iat === 'number' ? options.claims.iat : undefined)
        .sign(options.key ?? privateKey);
    },
    close: () => close(server),
  };
  const server = http.createServer((req, res) => {
    if (req.url === '/jwks.json') {
      transmitter.jwksFetches += 1;
      res.setHeader('content-type', 'application/jwk-set+json');
      res.end(JSON.stringify(jwks));
      return;
    }
    res.statusCode = 404;
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  transmitter.issuer = `http://127.0.0.1:${port}/ssf`;
  transmitter.jwksUri = `http://127.0.0.1:${port}/jwks.json`;
  return transmitter;
}

export interface ReceivedSet {
  token: string;
  contentType: string | undefined;
  authorization: string | undefined;
  /** The verified payload, or the verification error's code. */
  payload?: JWTPayload;
  header?: { typ?: string; kid?: string; alg?: string };
  error?: string;
}

export interface LocalSetReceiver {
  url: string;
  /** Every push, in order, with what verification found. */
  received: ReceivedSet[];
  /** HTTP status for the n-th push (1-based); 202 by default; `hang`: never answer it. */
  respond: (attempt: number) => number | 'hang';
  close(): Promise<void>;
}

/** Verifies each pushed SET with `issuer`'s keys from `jwksUri` (and `audience`, if given). */
export async function startSetReceiver(
  verification: () => { issuer: string; jwksUri: string; audience?: string },
  respond: (attempt: number) => number | 'hang' = () => 202,
): Promise<LocalSetReceiver> {
  let jwks: ReturnType<typeof createRemoteJWKSet> | undefined;
  const receiver: LocalSetReceiver = { url: '', received: [], respond, close: () => close(server) };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const token = Buffer.concat(chunks).toString('utf8');
      const entry: ReceivedSet = {
        token,
        contentType: req.headers['content-type'],
        authorization: req.headers.authorization,
      };
      const { issuer, jwksUri, audience } = verification();
      jwks ??= createRemoteJWKSet(new URL(jwksUri));
      try {
        const verified = await jwtVerify(token, jwks, {
          issuer,
          typ: 'secevent+jwt',
          ...(audience ? { audience } : {}),
        });
        entry.payload = verified.payload;
        entry.header = verified.protectedHeader;
      } catch (err) {
        entry.error = (err as { code?: string }).code ?? String(err);
      }
      receiver.received.push(entry);
      const answer = receiver.respond(receiver.received.length);
      if (answer === 'hang') return; // a slow receiver: the sender gives up first
      res.statusCode = answer;
      if (res.statusCode >= 400) res.setHeader('content-type', 'application/json');
      res.end(
        res.statusCode >= 400 ? JSON.stringify({ err: 'invalid_request', description: 'try again' }) : '',
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/events`;
  return receiver;
}

async function close(server: http.Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}
