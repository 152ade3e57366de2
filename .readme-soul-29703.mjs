// node register-soul.mjs  (npm install jose)
import { createHash, randomBytes } from 'node:crypto';
import { CompactSign, SignJWT, exportJWK, generateKeyPair } from 'jose';

// Every answer is checked: a refusal is a problem document (RFC 9457) that says what to fix.
async function call(url, init) {
  const res = await fetch(url, init);
  const body = await res.json();
  if (!res.ok) throw new Error(`${res.status} ${body.code}: ${body.detail ?? body.title}`);
  return { status: res.status, body };
}
const json = (body, headers = {}) => ({
  method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body),
});

const { publicKey, privateKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
const public_key = await exportJWK(publicKey);

// 1. A challenge for this key (valid 5 minutes, usable once).
const { challenge } = (await call('http://localhost:41503/api/public/soul/challenge', json({ public_key }))).body;

// 2. Sign the challenge string itself as a compact JWS.
const signature = await new CompactSign(new TextEncoder().encode(challenge))
  .setProtectedHeader({ alg: 'EdDSA' }).sign(privateKey);

// 3. Register: the answer is the identity document. A handle is unique across the registry
//    (409 handle_taken): this one carries a random suffix, so the script runs again as shown.
const handle = `my-robot-${randomBytes(3).toString('hex')}`;
const soul = (await call('http://localhost:41503/api/soul/agents', json({ public_key, challenge, signature, handle,
  name: 'My robot', description: 'What my agent does.' }))).body;
console.log(soul.agent_id);

// 4. Write a memory with a short JWT signed by the soul's key. It is kept as the entry's
//    signature, so its memory claim signs what is written: the content's SHA-256, layer, kind.
const entry = { content: 'First memory', layer: 'episodic', kind: 'memory' };
const content_digest = createHash('sha256').update(entry.content).digest('hex');
const token = await new SignJWT({ memory: { content_digest, layer: entry.layer, kind: entry.kind } })
  .setProtectedHeader({ alg: 'EdDSA' }).setIssuer(soul.agent_id).setAudience('http://localhost:41503/api/soul')
  .setIssuedAt().setExpirationTime('2m').setJti(crypto.randomUUID()).sign(privateKey);
const memory = await call(`http://localhost:41503/api/soul/agents/${encodeURIComponent(soul.agent_id)}/memories`,
  json(entry, { authorization: `Bearer ${token}` }));
console.log(memory.status, memory.body);
