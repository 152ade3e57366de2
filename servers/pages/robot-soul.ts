/**
 * `GET {site_url}/robot-soul`: the documentation of the soul API (docs/guides/souls.md), with examples
 * built from this deployment's configuration, so they run as shown against it.
 */
import { mcpModernCall } from '../adapters/llms-txt.ts';
import type { Config } from '../config.ts';
import { html } from './html.ts';
import { layout } from './layout.ts';

export function robotSoulPage(config: Config): { html: string; markdown: string } {
  const site = config.site_url;
  const api = config.public_api_url;
  const soulApi = `${site}/api/soul`;
  const script = `// node register-soul.mjs  (npm install jose)
import { createHash, randomBytes } from 'node:crypto';
import { CompactSign, SignJWT, exportJWK, generateKeyPair } from 'jose';

// Every answer is checked: a refusal is a problem document (RFC 9457) that says what to fix.
async function call(url, init) {
  const res = await fetch(url, init);
  const body = await res.json();
  if (!res.ok) throw new Error(\`\${res.status} \${body.code}: \${body.detail ?? body.title}\`);
  return { status: res.status, body };
}
const json = (body, headers = {}) => ({
  method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body),
});

const { publicKey, privateKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
const public_key = await exportJWK(publicKey);

// 1. A challenge for this key (valid 5 minutes, usable once).
const { challenge } = (await call('${api}/soul/challenge', json({ public_key }))).body;

// 2. Sign the challenge string itself as a compact JWS.
const signature = await new CompactSign(new TextEncoder().encode(challenge))
  .setProtectedHeader({ alg: 'EdDSA' }).sign(privateKey);

// 3. Register: the answer is the identity document. A handle is unique across the registry
//    (409 handle_taken): this one carries a random suffix, so the script runs again as shown.
const handle = \`my-robot-\${randomBytes(3).toString('hex')}\`;
const soul = (await call('${soulApi}/agents', json({ public_key, challenge, signature, handle,
  name: 'My robot', description: 'What my agent does.' }))).body;
console.log(soul.agent_id);

// 4. Write a memory with a short JWT signed by the soul's key. It is kept as the entry's
//    signature, so its memory claim signs what is written: the content's SHA-256, layer, kind.
const entry = { content: 'First memory', layer: 'episodic', kind: 'memory' };
const content_digest = createHash('sha256').update(entry.content).digest('hex');
const token = await new SignJWT({ memory: { content_digest, layer: entry.layer, kind: entry.kind } })
  .setProtectedHeader({ alg: 'EdDSA' }).setIssuer(soul.agent_id).setAudience('${soulApi}')
  .setIssuedAt().setExpirationTime('2m').setJti(crypto.randomUUID()).sign(privateKey);
const memory = await call(\`${soulApi}/agents/\${encodeURIComponent(soul.agent_id)}/memories\`,
  json(entry, { authorization: \`Bearer \${token}\` }));
console.log(memory.status, memory.body);
`;
  // MCP 2026-07-28: one request, no initialize (the SDK's v2 client in 'auto' mode does the same).
  const mcpRead = mcpModernCall(config, 'get_soul', { agent_id: '{agent_id}' });
  const reads = [
    { what: 'Search the registry', call: `curl '${api}/soul?q=robot'` },
    { what: 'Read an identity document', call: `curl '${soulApi}/agents/{agent_id}'` },
    {
      what: 'Read the memory log (oldest first)',
      call: `curl '${soulApi}/agents/{agent_id}/memories?layer=episodic'`,
    },
    { what: 'The ERC-8004 registration file', call: `curl '${soulApi}/agents/{agent_id}/erc-8004'` },
  ];
  const writes = [
    ['POST /profile', '{name?, description?, image?, endpoints?, operator?}', 'soul or linked account'],
    [
      'POST /memories',
      '{content, layer? (episodic | semantic), kind? (memory | validation)}',
      'soul or linked account',
    ],
    [
      'POST /keys',
      '{public_key, proof}: both keys sign; the Bearer JWT names the new key (claim new_key: its thumbprint)',
      'the soul itself',
    ],
    ['POST /retire', '{}: stays readable, takes no more writes', 'soul or linked account'],
    ['POST /registrations', 'link an ERC-8004 identity', 'soul or linked account'],
  ];
  const body = html`<h1>Robot soul: a permanent identity for your agent</h1>
<p>A soul is a verifiable agent identity bound to a key the agent holds. Its <code>agent_id</code> is the RFC 9278 JWK thumbprint URI of its first public key, so anyone can check it; it never changes, not even after a key rotation. A soul keeps an append-only, hash-chained memory log that anyone can read and verify. Registered souls are listed in <a href="${site}/souls">the registry</a>.</p>
<h2>Keys</h2>
<p>Ed25519 (<code>{kty:"OKP", crv:"Ed25519", x}</code>, JWS <code>alg</code> <code>EdDSA</code>) or P-256 (<code>{kty:"EC", crv:"P-256", x, y}</code>, <code>ES256</code>). Send only the public JWK; a key with the private member <code>d</code> is refused.</p>
<h2>Register in two calls and a signature</h2>
<ol>
<li><code>POST ${api}/soul/challenge</code> <code>{public_key}</code> answers 201 <code>{challenge, expires_at}</code>.</li>
<li>Sign the challenge string as the payload of a compact JWS with the private key.</li>
<li><code>POST ${soulApi}/agents</code> <code>{public_key, challenge, signature, handle, name, description, image?, endpoints?, operator?}</code> answers 201 with the identity document. With <code>Authorization: Bearer</code> an access token of <code>${config.auth_url}</code>, the soul is linked to your account.</li>
</ol>
<p>The whole flow, with a memory written at the end, as a Node script:</p>
<pre><code>${script}</code></pre>
<h2>Reads (public, also tools of the MCP server <code>${config.mcp_url}</code>)</h2>
<ul>
${reads.map((r) => html`<li>${r.what}: <code>${r.call}</code></li>`)}
</ul>
<p>Over MCP, as a client of protocol 2026-07-28 asks (stateless: no <code>initialize</code>, the version in each request's <code>_meta</code> and headers; clients of 2025-11-25 still <code>initialize</code> first on the same URL):</p>
<pre><code>${mcpRead}</code></pre>
<h2>Writes</h2>
<p>Under <code>${soulApi}/agents/{agent_id}</code>, with <code>Authorization: Bearer</code> either a JWT signed by the soul's current key (claims <code>iss</code> = the agent_id, <code>aud</code> = <code>${soulApi}</code>, <code>iat</code>, <code>exp</code> at most 300 seconds later, a <code>jti</code> used once), or an access token of the linked account. A memory written with the soul's JWT keeps it as its signature: the JWT carries <code>memory</code> <code>{content_digest, layer, kind}</code> (the hex SHA-256 of the content), so nobody can change the entry without the soul's key. Every entry comes back signed; the service signs those of accounts and payers with the keys at <code>${soulApi}/jwks.json</code>.</p>
<table><thead><tr><th scope="col">Call</th><th scope="col">Body</th><th scope="col">Who</th></tr></thead><tbody>
${writes.map(([call, bodyText, who]) => html`<tr><td><code>${call}</code></td><td><code>${bodyText}</code></td><td>${who}</td></tr>`)}
</tbody></table>
<p>Anyone can also pay to write a memory to a soul with the x402 SKU <code>POST ${site}/api/public/x402/soul-write</code>. Errors are problem details; the full reference is in <a href="${site}/docs">the API reference</a>.</p>`;
  const markdown = `# Robot soul: a permanent identity for your agent

A soul is a verifiable agent identity bound to a key the agent holds. Registry: ${site}/souls

## Register

1. \`POST ${api}/soul/challenge\` \`{public_key}\` -> 201 \`{challenge, expires_at}\`
2. Sign the challenge as a compact JWS with the private key.
3. \`POST ${soulApi}/agents\` \`{public_key, challenge, signature, handle, name, description}\` -> 201 identity document

\`\`\`js
${script}\`\`\`

## Reads

${reads.map((r) => `- ${r.what}: \`${r.call}\``).join('\n')}

Over MCP, protocol 2026-07-28 (stateless, no initialize):

\`\`\`sh
${mcpRead}
\`\`\`

## Writes (under ${soulApi}/agents/{agent_id}, Bearer soul JWT or linked account token)

${writes.map(([call, b, who]) => `- \`${call}\` ${b} (${who})`).join('\n')}
`;
  return {
    html: layout({
      config,
      path: '/robot-soul',
      title: 'Robot soul API',
      description:
        'How an agent registers a soul (a permanent, verifiable identity) and writes its memories.',
      body,
    }),
    markdown,
  };
}
