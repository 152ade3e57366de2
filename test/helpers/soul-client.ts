/**
 * What an agent with a soul does over HTTP, as docs/guides/souls.md tells it: keys made with jose, the
 * challenge and registration, the short JWTs that sign its writes (with the `memory` and `new_key`
 * claims that bind what they change), and a reader's fetch of everything the log check reads.
 */
import { createHash, randomUUID } from 'node:crypto';
import {
  CompactSign,
  type CryptoKey,
  calculateJwkThumbprint,
  exportJWK,
  generateKeyPair,
  type JWK,
  SignJWT,
} from 'jose';
import type { LogToCheck } from './soul-log-check.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are checked field by field
type Json = any;

export interface TestKey {
  alg: 'EdDSA' | 'ES256';
  privateKey: CryptoKey;
  publicJwk: JWK;
}

export async function newKey(alg: 'EdDSA' | 'ES256'): Promise<TestKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return { alg, privateKey, publicJwk: await exportJWK(publicKey) };
}

/** A JSON request; the answer's status, headers and parsed body. */
export async function send(method: string, url: string, body?: unknown, token?: string) {
  const res = await fetch(url, {
    method,
    headers: {
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? (JSON.parse(text) as Json) : null };
}

export const signText = (key: TestKey, text: string): Promise<string> =>
  new CompactSign(new TextEncoder().encode(text)).setProtectedHeader({ alg: key.alg }).sign(key.privateKey);

export interface JwtOptions {
  iat?: number;
  exp?: number;
  jti?: string;
  aud?: string;
  claims?: Record<string, unknown>;
}

export class SoulClient {
  /** `{site_url}/api/soul`: the audience of soul JWTs. */
  readonly soulApi: string;
  readonly #publicApi: string;

  constructor(config: { site_url: string; public_api_url: string }) {
    this.soulApi = `${config.site_url}/api/soul`;
    this.#publicApi = config.public_api_url;
  }

  async challenge(key: TestKey) {
    return send('POST', `${this.#publicApi}/soul/challenge`, { public_key: key.publicJwk });
  }

  /** Registers `key` with the profile in `fields` (handle, name, description, ...). */
  async register(key: TestKey, fields: Record<string, unknown>, token?: string) {
    const { challenge } = (await this.challenge(key)).body;
    const body = {
      public_key: key.publicJwk,
      challenge,
      signature: await signText(key, challenge),
      ...fields,
    };
    return send('POST', `${this.soulApi}/agents`, body, token);
  }

  /** A JWT the soul signs for one write. */
  soulJwt(key: TestKey, agentId: string, options: JwtOptions = {}): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT(options.claims ?? {})
      .setProtectedHeader({ alg: key.alg, typ: 'JWT' })
      .setIssuer(agentId)
      .setAudience(options.aud ?? this.soulApi)
      .setIssuedAt(options.iat ?? now)
      .setExpirationTime(options.exp ?? now + 120)
      .setJti(options.jti ?? randomUUID())
      .sign(key.privateKey);
  }

  /** The JWT of a memory write: its `memory` claim signs what the body writes. */
  memoryJwt(
    key: TestKey,
    agentId: string,
    body: { content: string; layer?: string; kind?: string; previous_digest?: string | null },
    options: JwtOptions = {},
  ): Promise<string> {
    const memory = {
      content_digest: createHash('sha256').update(body.content, 'utf8').digest('hex'),
      layer: body.layer ?? 'episodic',
      kind: body.kind ?? 'memory',
      ...(body.previous_digest === undefined ? {} : { previous_digest: body.previous_digest }),
    };
    return this.soulJwt(key, agentId, { ...options, claims: { memory } });
  }

  /** A memory written as the soul: the body without previous_digest, the JWT signing all of it. */
  async write(key: TestKey, agentId: string, entry: { content: string; layer?: string; kind?: string }) {
    const token = await this.memoryJwt(key, agentId, entry);
    return send('POST', `${this.soulApi}/agents/${agentId}/memories`, entry, token);
  }

  /** The rotation's Bearer JWT, by the current key, naming the new key (its endorsement). */
  async rotationJwt(current: TestKey, agentId: string, next: TestKey): Promise<string> {
    const newKey = await calculateJwkThumbprint(next.publicJwk);
    return this.soulJwt(current, agentId, { claims: { new_key: newKey } });
  }

  /** Every entry, page by page from the first. */
  async allMemories(agentId: string, pageSize = 3): Promise<Json[]> {
    const out: Json[] = [];
    let cursor: string | null = null;
    do {
      const page = await send(
        'GET',
        `${this.soulApi}/agents/${agentId}/memories?limit=${pageSize}${cursor ? `&cursor=${cursor}` : ''}`,
      );
      if (page.status !== 200) throw new Error(`memories answered ${page.status}`);
      out.push(...page.body.memories);
      cursor = page.body.next_cursor;
    } while (cursor);
    return out;
  }

  /** Everything the documented check reads: the document first, then the log, and the JWKS. */
  async readLog(agentId: string): Promise<LogToCheck> {
    const document = (await send('GET', `${this.soulApi}/agents/${agentId}`)).body;
    const entries = await this.allMemories(agentId);
    const jwks = (await send('GET', `${this.soulApi}/jwks.json`)).body;
    return { document, entries, jwks };
  }
}
