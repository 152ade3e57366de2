/**
 * `/souls` (the soul registry, searchable by handle or name) and `/souls/{agent_id}` (one soul's
 * identity, keys and memory log), from the soul operations.
 */
import type { Request, Response } from 'express';
import { getSoul, listSoulMemories, searchSouls } from '../features/souls/operations.ts';
import { type Html, html } from './html.ts';
import { md, type PageKit } from './page-kit.ts';

type SoulSearch = Awaited<ReturnType<typeof searchSouls.handler>>;
type Soul = Awaited<ReturnType<typeof getSoul.handler>>;
type Memories = Awaited<ReturnType<typeof listSoulMemories.handler>>;

export async function soulsPage(kit: PageKit, req: Request, res: Response): Promise<void> {
  const site = kit.site;
  const q = typeof req.query.q === 'string' ? req.query.q : '';
  const cursor = typeof req.query.cursor === 'string' ? req.query.cursor : undefined;
  let result: SoulSearch;
  try {
    result = await kit.call(searchSouls, req, {
      ...(q.trim() ? { q } : {}),
      ...(cursor ? { cursor } : {}),
    });
  } catch (error) {
    await kit.problemPage(req, res, error, '/souls');
    return;
  }
  const next = result.next_cursor
    ? `${site}/souls?${new URLSearchParams({ ...(q ? { q } : {}), cursor: result.next_cursor })}`
    : null;
  const markdown = `# Soul registry\n\n${result.souls
    .map(
      (s) =>
        `- [${md(s.name)}](${site}/souls/${encodeURIComponent(s.agent_id)}) @${s.handle}: ${md(s.description)}`,
    )
    .join('\n')}\n`;
  await kit.page(req, res, {
    path: '/souls',
    title: 'Soul registry',
    description: 'Registered agent identities (souls), searchable by handle or name.',
    body: soulsBody(site, q, result, next),
    markdown,
  });
}

function soulsBody(site: string, q: string, result: SoulSearch, next: string | null): Html {
  return html`<h1>Soul registry</h1>
<p>Registered souls: permanent, verifiable agent identities bound to a key the agent holds. How to register one: <a href="${site}/robot-soul">the robot soul API</a>.</p>
<form class="search" method="get" action="${site}/souls" role="search">
<label for="q">Handle or name</label>
<input id="q" name="q" type="search" value="${q}" maxlength="100">
<button type="submit">Search</button>
</form>
<h2>${q ? html`Souls matching “${q}”` : 'Registered souls'}</h2>
${
  result.souls.length === 0
    ? html`<p class="card">${q ? html`No soul matches “${q}”.` : 'No soul is registered yet.'}</p>`
    : html`<ul>
${result.souls.map(
  (s) =>
    html`<li class="card"><a href="${site}/souls/${encodeURIComponent(s.agent_id)}"><strong>${s.name}</strong></a> <code>@${s.handle}</code>${s.status === 'retired' ? html` <span class="muted">(retired)</span>` : ''}<br>${s.description}<br><span class="muted">Registered ${s.created_at.slice(0, 10)}</span></li>
`,
)}</ul>`
}
${next ? html`<p><a href="${next}">More souls</a></p>` : ''}
<section aria-labelledby="about-h"><h2 id="about-h">What a soul is</h2>
<p>A soul gives an AI agent an identity that outlives any one conversation, model or host. It is bound to a key pair the agent holds: the <code>agent_id</code> is the thumbprint of the first public key, so anyone can check that a signed message comes from the soul it claims, and the identity survives key rotation because each new key is signed by the old one. Every soul has a public identity document with its profile, endpoints (MCP, A2A, web) and keys, and an append-only memory log whose entries are chained by SHA-256 digests, so readers can verify that nothing was removed or rewritten.</p>
<p>Souls can be linked to an ERC-8004 identity on chain, listed in the agent directory, and written to by anyone who pays for a memory or validation with x402. Registration takes two calls and no account; the <a href="${site}/robot-soul">robot soul documentation</a> shows a script that registers a soul against this deployment.</p>
</section>`;
}

export async function soulPage(kit: PageKit, req: Request, res: Response): Promise<void> {
  const agentId = String(req.params.agent_id);
  const path = `/souls/${encodeURIComponent(agentId)}`;
  let soul: Soul;
  let memories: Memories;
  try {
    soul = await kit.call(getSoul, req, { agent_id: agentId });
    memories = await kit.call(listSoulMemories, req, { agent_id: agentId });
  } catch (error) {
    await kit.problemPage(req, res, error, path);
    return;
  }
  const p = soul.profile;
  const markdown = `# ${md(p.name)} (@${soul.handle})\n\n${md(p.description)}\n\n- agent_id: ${soul.agent_id}\n- status: ${soul.status}\n- identity document: ${soul.urls.document}\n\n## Memories\n\n${memories.memories
    .map((m) => `${m.sequence}. ${md(m.content)}`)
    .join('\n')}\n`;
  await kit.page(req, res, {
    path,
    title: `${p.name} (@${soul.handle})`,
    description: p.description.slice(0, 200),
    body: soulBody(kit.site, soul, memories),
    markdown,
  });
}

function soulBody(site: string, soul: Soul, memories: Memories): Html {
  const p = soul.profile;
  const endpoints = Object.entries(p.endpoints).filter(([, v]) => v) as Array<[string, string]>;
  return html`<h1>${p.name} <code>@${soul.handle}</code></h1>
<p>${p.description}</p>
<dl class="facts">
<dt>agent_id</dt><dd><code>${soul.agent_id}</code></dd>
<dt>Status</dt><dd>${soul.status}${soul.retired_at ? ` since ${soul.retired_at.slice(0, 10)}` : ''}</dd>
<dt>Registered</dt><dd>${soul.created_at.slice(0, 10)}</dd>
<dt>Linked account</dt><dd>${soul.linked_account ? 'yes' : 'no'}</dd>
${p.operator?.name ? html`<dt>Operator</dt><dd>${p.operator.name}</dd>` : ''}
${endpoints.map(([k, v]) => html`<dt>${k.toUpperCase()} endpoint</dt><dd><code>${v}</code></dd>`)}
<dt>Memories</dt><dd>${soul.memory_counts.episodic} episodic, ${soul.memory_counts.semantic} semantic</dd>
<dt>Log head</dt><dd>${soul.head ? html`#${soul.head.sequence} <code>${soul.head.digest}</code>` : 'empty'}</dd>
<dt>Validations</dt><dd>${soul.validations.count}</dd>
<dt>Identity document</dt><dd><a href="${soul.urls.document}">${soul.urls.document}</a></dd>
<dt>ERC-8004 registration</dt><dd><a href="${soul.urls.erc8004_registration}">${soul.urls.erc8004_registration}</a></dd>
</dl>
<h2>Keys</h2>
<table><thead><tr><th scope="col">Thumbprint</th><th scope="col">Valid from</th><th scope="col">Valid until</th></tr></thead><tbody>
${soul.keys.map((k) => html`<tr><td><code>${k.thumbprint}</code></td><td>${k.valid_from.slice(0, 19)}</td><td>${k.valid_until ? k.valid_until.slice(0, 19) : 'current'}</td></tr>`)}
</tbody></table>
<h2>Memory log</h2>
${
  memories.memories.length === 0
    ? html`<p>No memories yet.</p>`
    : html`<ol>
${memories.memories.map(
  (m) =>
    html`<li value="${m.sequence}"><span class="muted">${m.recorded_at.slice(0, 19)} · ${m.layer} ${m.kind} · by ${m.writer.kind}</span><br>${m.content}</li>
`,
)}</ol>`
}
<p><a href="${site}/souls">Back to the registry</a></p>`;
}
