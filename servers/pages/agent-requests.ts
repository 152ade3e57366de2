/**
 * `GET {site_url}/agent-requests`: how brands receive the return and refund requests personal
 * agents file here (`features/returns/brand-guide.ts`, shared with `llms.txt`), with the exact
 * payloads built by the code that sends them.
 */
import type { Config } from '../config.ts';
import {
  AGENT_REQUESTS_PATH,
  AGENT_REQUESTS_TITLE,
  brandRoutes,
  exampleA2aMessage,
  exampleNotice,
} from '../features/returns/brand-guide.ts';
import { html } from './html.ts';
import { layout } from './layout.ts';

const contactPoint = {
  '@context': 'https://schema.org',
  '@type': 'Organization',
  name: 'Shop',
  url: 'https://shop.example/',
  contactPoint: [
    {
      '@type': 'ContactPoint',
      contactType: 'customer service',
      email: 'returns@shop.example',
      telephone: '+1-800-555-0100',
    },
  ],
};

const agentCardSkill = {
  id: 'returns',
  name: 'Returns and refunds',
  description: 'Takes return and refund requests for orders placed on shop.example.',
  tags: ['returns', 'refunds', 'customer service'],
  inputModes: ['application/json', 'text/plain'],
  outputModes: ['text/plain'],
};

export function agentRequestsPage(config: Config): { html: string; markdown: string } {
  const routes = brandRoutes(config);
  const notice = JSON.stringify(exampleNotice(config), null, 2);
  const message = JSON.stringify(exampleA2aMessage(config), null, 2);
  const intro =
    'Personal agents file return and refund requests with brands here, on behalf of a person who approved them ' +
    '(the customer service agent, ' +
    `${config.base_url}/return). The service delivers each request on the best channel the brand has, in the order ` +
    'below, retries it until it is taken, and brings the answer back to the agent. A brand with none of these is ' +
    'not skipped: the person’s agent is given the brand’s public contacts and a drafted message instead.';
  const body = html`<h1>${AGENT_REQUESTS_TITLE}</h1>
<p>${intro}</p>
<h2>What a brand can publish, best first</h2>
<ol>
${routes.map((r) => html`<li><a href="#${r.id}">${r.title}</a></li>`)}
</ol>
${routes.map(
  (r) => html`<h2 id="${r.id}">${r.title}</h2>
<p><strong>Publish:</strong> ${r.publish}</p>
<p><strong>You get:</strong> ${r.gets}</p>`,
)}
<h2>The A2A skill and the message you receive</h2>
<p>A skill on your agent card that says what it takes:</p>
<pre><code>${JSON.stringify(agentCardSkill, null, 2)}</code></pre>
<p>The message your agent receives for a new request (A2A 1.0 JSON; follow-ups and the cancellation come the same way, with the event <code>return_request.message</code> or <code>return_request.cancelled</code>, in the same context):</p>
<pre><code>${message}</code></pre>
<h2>The ContactPoint the service reads</h2>
<pre><code>${JSON.stringify(contactPoint, null, 2)}</code></pre>
<h2>What every request carries</h2>
<p>The webhook body (and the A2A data part), <code>return_request.created</code>: who asks (name and contact - the only place they leave the service), the order, the person’s message, how they want to hear back, the approval they gave, any follow-ups written before it reached you, and the status URL the person’s agent follows. Verify webhooks with any Standard Webhooks library; deduplicate on <code>webhook-id</code>.</p>
<pre><code>${notice}</code></pre>`;
  const markdown = `# ${AGENT_REQUESTS_TITLE}

${intro}

${routes.map((r, i) => `## ${i + 1}. ${r.title}\n\n- Publish: ${r.publish}\n- You get: ${r.gets}`).join('\n\n')}

## The A2A skill and the message you receive

\`\`\`json
${JSON.stringify(agentCardSkill, null, 2)}
\`\`\`

\`\`\`json
${message}
\`\`\`

## The ContactPoint the service reads

\`\`\`json
${JSON.stringify(contactPoint, null, 2)}
\`\`\`

## What every request carries (return_request.created)

\`\`\`json
${notice}
\`\`\`
`;
  return {
    html: layout({
      config,
      path: AGENT_REQUESTS_PATH,
      title: AGENT_REQUESTS_TITLE,
      description:
        'What a brand can publish to receive return and refund requests from personal agents, and what it gets.',
      body,
    }),
    markdown,
  };
}
