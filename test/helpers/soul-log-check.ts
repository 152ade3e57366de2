/**
 * The client check of a soul's log, written from docs/guides/souls.md "Checking a log", step by step,
 * independently of servers/features/souls/ (only jose and node:crypto): what a reader who trusts
 * neither the database nor the service runs. Each step returns the first thing that fails, in
 * words a test can expect, or null when the log checks out.
 */
import { createHash } from 'node:crypto';
import {
  calculateJwkThumbprint,
  calculateJwkThumbprintUri,
  compactVerify,
  decodeProtectedHeader,
  importJWK,
  type JWK,
} from 'jose';

// biome-ignore lint/suspicious/noExplicitAny: documents and entries are read field by field, as a client would
type Json = any;

export interface Checkpoint {
  agent_id: string;
  sequence: number;
  digest: string | null;
  issued_at: string;
}

export interface LogToCheck {
  /** The identity document, read before the log. */
  document: Json;
  /** Every entry, from the first page on. */
  entries: Json[];
  /** The service's JWKS, as fetched (and kept) by the reader. */
  jwks: { keys: JWK[] };
  /** The newest checkpoint this reader verified earlier for this soul (step 5). */
  lastSeen?: Checkpoint;
}

const MIGRATION_KID = 'soul-log-migration';
const SKEW_SECONDS = 60;
const ALGORITHMS: Record<string, string[]> = { OKP: ['EdDSA', 'Ed25519'], EC: ['ES256'] };

const sha = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
const seconds = (iso: string) => Math.floor(Date.parse(iso) / 1000);

/** The payload of `jws` if it verifies with `jwk` (an algorithm of its kind) and has type `typ`. */
async function verified(jws: string, jwk: JWK, typ?: string): Promise<string | null> {
  try {
    const header = decodeProtectedHeader(jws);
    const allowed = ALGORITHMS[jwk.kty as string] ?? [];
    if (typeof header.alg !== 'string' || !allowed.includes(header.alg)) return null;
    if (typ !== undefined && header.typ !== typ) return null;
    const { payload } = await compactVerify(jws, await importJWK(jwk, header.alg), { algorithms: allowed });
    return new TextDecoder().decode(payload);
  } catch {
    return null;
  }
}

/** A JWS by the service: its key is the JWKS's `kid` (undefined when the JWKS has none). */
async function byService(
  jwks: { keys: JWK[] },
  kid: string,
  jws: string,
  typ: string,
): Promise<string | null | undefined> {
  const key = jwks.keys.find((k) => k.kid === kid);
  return key ? verified(jws, key, typ) : undefined;
}

/** Step 1: the keys, from the agent_id to the current one, each endorsed by the one before. */
async function checkKeys(doc: Json, jwks: { keys: JWK[] }): Promise<string | null> {
  const keys: Json[] = [...doc.keys].sort((a, b) => Date.parse(a.valid_from) - Date.parse(b.valid_from));
  for (const [i, key] of keys.entries()) {
    if ((await calculateJwkThumbprint(key.jwk, 'sha256')) !== key.thumbprint)
      return `thumbprint of key ${i + 1} does not match its jwk`;
    const last = i === keys.length - 1;
    if (last !== (key.valid_until === null)) return `validity of key ${i + 1} is not contiguous`;
    if (i === 0) {
      if ((await calculateJwkThumbprintUri(key.jwk, 'sha256')) !== doc.agent_id)
        return 'the first key is not the agent_id';
      if (key.endorsement !== null) return 'the first key carries an endorsement';
      continue;
    }
    const before = keys[i - 1];
    if (before.valid_until !== key.valid_from) return `validity of key ${i + 1} is not contiguous`;
    const e = key.endorsement;
    if (!e) return `key ${i + 1} is not endorsed`;
    if (e.origin === 'writer') {
      if (e.signer !== 'soul' || e.kid !== before.thumbprint)
        return `endorsement of key ${i + 1} is not by the key before`;
      const payload = await verified(e.jws, before.jwk);
      if (payload === null) return `endorsement of key ${i + 1} does not verify`;
      const claims = JSON.parse(payload);
      if (claims.iss !== doc.agent_id || claims.new_key !== key.thumbprint)
        return `endorsement of key ${i + 1} names another key`;
      const at = seconds(key.valid_from);
      if (!(claims.iat - SKEW_SECONDS <= at && at < claims.exp))
        return `endorsement of key ${i + 1} was not live when the key started`;
    } else {
      if (e.signer !== 'service' || e.kid !== MIGRATION_KID)
        return `endorsement of key ${i + 1} is not the migration's`;
      const payload = await byService(jwks, e.kid, e.jws, 'soul-key+jws');
      if (!payload) return `endorsement of key ${i + 1} does not verify`;
      const claims = JSON.parse(payload);
      if (
        claims.agent_id !== doc.agent_id ||
        claims.new_key !== key.thumbprint ||
        claims.valid_from !== key.valid_from
      )
        return `endorsement of key ${i + 1} names another key`;
    }
  }
  return null;
}

/** An entry's digest by the documented formula. */
export const digestOf = (e: Json): string =>
  sha(
    JSON.stringify([
      'soul-memory/1',
      e.agent_id,
      e.sequence,
      e.layer,
      e.kind,
      e.content_digest,
      e.writer.kind,
      e.writer.id,
      e.recorded_at,
      e.previous_digest,
    ]),
  );

/** Step 2: the hash chain. */
function checkChain(entries: Json[]): string | null {
  let previous: string | null = null;
  for (const [i, e] of entries.entries()) {
    if (e.sequence !== i + 1) return `gap at ${i + 1}`;
    if (sha(e.content) !== e.content_digest) return `content of ${e.sequence} changed`;
    if (e.previous_digest !== previous) return `link of ${e.sequence} broken`;
    if (digestOf(e) !== e.digest) return `digest of ${e.sequence} does not match`;
    previous = e.digest;
  }
  return null;
}

/** Step 3: each entry's signature, by its writer's key (or the migration's). */
async function checkSignature(doc: Json, jwks: { keys: JWK[] }, e: Json): Promise<string | null> {
  const s = e.signature;
  const n = e.sequence;
  if (!s) return `signature of ${n} is missing`;
  if (e.writer.kind === 'soul' && s.origin === 'writer') {
    if (s.signer !== 'soul') return `signature of ${n} is not the soul's`;
    const at = Date.parse(e.recorded_at);
    const key = doc.keys.find((k: Json) => k.thumbprint === s.kid);
    if (!key) return `signature of ${n} names a key the soul never had`;
    if (!(Date.parse(key.valid_from) <= at && (key.valid_until === null || at < Date.parse(key.valid_until))))
      return `signature of ${n} is by a key not valid when it was recorded`;
    const payload = await verified(s.jws, key.jwk);
    if (payload === null) return `signature of ${n} does not verify`;
    const claims = JSON.parse(payload);
    const m = claims.memory ?? {};
    if (
      claims.iss !== doc.agent_id ||
      m.content_digest !== e.content_digest ||
      m.layer !== e.layer ||
      m.kind !== e.kind ||
      (m.previous_digest !== undefined && m.previous_digest !== e.previous_digest)
    )
      return `signature of ${n} signs another entry`;
    if (!(claims.iat - SKEW_SECONDS <= seconds(e.recorded_at) && seconds(e.recorded_at) < claims.exp))
      return `signature of ${n} was not live when it was recorded`;
    return null;
  }
  if (s.signer !== 'service') return `signature of ${n} is not the service's`;
  if ((s.origin === 'migration') !== (s.kid === MIGRATION_KID))
    return `signature of ${n} has the wrong origin`;
  const payload = await byService(jwks, s.kid, s.jws, 'soul-memory+jws');
  if (payload === undefined) return `signature of ${n} names a key not in the service's JWKS`;
  if (payload === null) return `signature of ${n} does not verify`;
  if (payload !== e.digest) return `signature of ${n} signs another entry`;
  return null;
}

/** Step 4 (and 5): the checkpoint covers the log's head. */
async function checkCheckpoint(
  doc: Json,
  entries: Json[],
  jwks: { keys: JWK[] },
  lastSeen: Checkpoint | undefined,
): Promise<string | null> {
  const c = doc.checkpoint;
  if (!c) return 'no checkpoint';
  const payload = await byService(jwks, c.kid, c.jws, 'soul-checkpoint+jws');
  if (payload === undefined) return "checkpoint names a key not in the service's JWKS";
  if (payload === null) return 'checkpoint does not verify';
  const signed = JSON.parse(payload) as Checkpoint;
  if (signed.agent_id !== doc.agent_id) return 'checkpoint is of another soul';
  const at = (sequence: number) => (sequence === 0 ? null : (entries[sequence - 1]?.digest ?? undefined));
  if (entries.length < signed.sequence)
    return `log cut: it ends at ${entries.length}, the checkpoint names ${signed.sequence}`;
  if (at(signed.sequence) !== signed.digest)
    return `entry ${signed.sequence} is not the one the checkpoint signs`;
  if (lastSeen) {
    if (signed.sequence < lastSeen.sequence || signed.issued_at < lastSeen.issued_at)
      return 'checkpoint is older than one seen before';
    if (at(lastSeen.sequence) !== lastSeen.digest)
      return `entry ${lastSeen.sequence} changed since it was seen`;
  }
  return null;
}

export async function checkSoulLog({
  document,
  entries,
  jwks,
  lastSeen,
}: LogToCheck): Promise<string | null> {
  const keys = await checkKeys(document, jwks);
  if (keys) return keys;
  const chain = checkChain(entries);
  if (chain) return chain;
  for (const entry of entries) {
    const signature = await checkSignature(document, jwks, entry);
    if (signature) return signature;
  }
  return checkCheckpoint(document, entries, jwks, lastSeen);
}

/** The verified checkpoint of a document that passed the check, to pass as `lastSeen` later. */
export function checkpointOf(document: Json): Checkpoint {
  const [, payload] = (document.checkpoint.jws as string).split('.');
  return JSON.parse(Buffer.from(payload as string, 'base64url').toString('utf8')) as Checkpoint;
}
