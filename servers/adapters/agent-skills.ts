/**
 * Agent Skills for this service, published where agents look for them (Agent Skills Discovery,
 * draft v0.2.0): `{site_url}/.well-known/agent-skills/index.json` lists each skill with its name,
 * type `skill-md`, description, URL and the SHA-256 of its bytes, and each `SKILL.md` (YAML
 * frontmatter `name` and `description`, then Markdown instructions) is served under
 * `/.well-known/agent-skills/<name>/SKILL.md`.
 *
 * Each skill is a task an agent comes here for - a card charge it does not recognise, a website's
 * readiness, a paid SKU - written as the calls to make, in order, over MCP and REST. Every tool
 * name, URL, argument list and price comes from the registry and the configuration, so a skill can
 * not name a tool or an address the service does not answer; a skill whose operations this
 * registry lacks is left out. Pure functions of (operations, config), rendered once per process.
 */
import { createHash } from 'node:crypto';
import type { Config } from '../config.ts';
import type { AnyOperation } from '../operation.ts';
import { AGENT_SKILLS_PATH, operationUrl } from './api-catalog.ts';
import { mcpConnectLine, priceOf } from './llms-txt.ts';
import { argumentsOf, summaryOf } from './tool-table.ts';

export const AGENT_SKILLS_SCHEMA = 'https://schemas.agentskills.io/discovery/0.2.0/schema.json';

export interface AgentSkill {
  /** 1-64 lowercase letters, digits and single hyphens (the Agent Skills name rule). */
  name: string;
  /** What it does and when to use it, at most 1,024 characters; the same in the index and the frontmatter. */
  description: string;
  /** The whole `SKILL.md`, frontmatter included. */
  markdown: string;
}

export interface AgentSkillsDocuments {
  /** The index, as served. */
  index: string;
  skills: AgentSkill[];
}

const skillUrlPath = (name: string): string => `${AGENT_SKILLS_PATH}/${name}/SKILL.md`;
const digestOf = (text: string): string =>
  `sha256:${createHash('sha256').update(text, 'utf8').digest('hex')}`;

/** One step of a skill: the operation as an MCP tool and as its REST route, its arguments, its price. */
function call(op: AnyOperation, config: Config): string {
  const ways: string[] = [];
  if (op.mcp?.includes('public')) ways.push(`MCP tool \`${op.toolName}\``);
  const url = operationUrl(op, config);
  if (op.http && url) {
    ways.push(`\`${op.http.method} ${url}\` (${op.http.input === 'query' ? 'query string' : 'JSON body'})`);
  }
  const price = priceOf(op);
  return `${ways.join(', or ')}; arguments \`${argumentsOf(op)}\`${price ? `; ${price}` : ''}`;
}

function frontmatter(name: string, description: string): string {
  // A YAML double-quoted scalar: JSON's string escapes are valid in it.
  return `---\nname: ${name}\ndescription: ${JSON.stringify(description)}\n---\n`;
}

function cardCharges(find: Finder, config: Config): AgentSkill | null {
  const lookup = find('lookupCardCharge');
  const start = find('startReturnRequest');
  const status = find('getReturnStatus');
  if (!lookup || !start || !status) return null;
  const name = 'card-charges';
  const description =
    "Identify the brand behind an unfamiliar card or bank statement line and, with the person's approval, ask " +
    'that brand for a return or refund, then follow the request. Use when a person asks "what is this charge?" ' +
    'or wants money back for a purchase. Free, no account or key.';
  const markdown = `${frontmatter(name, description)}
# Card charges: who charged me, and getting money back

No sign-in and no key. Connect an MCP client to the public server (\`${mcpConnectLine(config)}\`) or call
the REST routes below.

## 1. Identify the charge

${call(lookup, config)}

Pass the statement line exactly as printed as \`charge\` (for example
\`CHECKCARD 0312 NETFLIX.COM 866-579-7172 CA\`). The answer lists matches with a confidence, the brand's
domain and its support and returns contacts. When the line went through a payment processor the
answer names it (\`processor\`); if \`processor.merchant_of_record\` is true, the processor sold the item
and handles the refund (app stores, Paddle), so the request goes to the processor's domain. A \`resolution\` of \`pending\` means a live check of an unknown merchant is still running - ask again
after \`retry_after_s\`. Tell the person which brand it is; when no match is confident, say so and show
what was read from the line rather than guessing.

## 2. Ask the brand for a return or refund (only after the person approved)

${call(start, config)}

Use the match's domain as \`brand_domain\`, the person's name and a contact (email or E.164 phone), and
whatever identifies the purchase (order number, date, amount, card last 4). Include \`approval_proof\`
when the person signed off. Over REST, send an \`Idempotency-Key\` header so a retry never files a second
request. Keep the returned \`request_id\` and \`status_url\`.

## 3. Follow the request

${call(status, config)}

The request is delivered to the brand in the background; \`awaiting_channel\` means the brand has no
channel here yet and the request waits for one. Report the status to the person; do not file the same
request again while it is open.

## Errors

Failures are JSON problems (\`{code, message, errors?, retry_after_s?}\`; over MCP a result with
\`isError\`). A \`validation_failed\` names each bad field in \`errors\`: fix those and call again.
\`rate_limited\` and \`service_unavailable\` say in \`retry_after_s\` (and over REST in \`Retry-After\`)
how many seconds to wait before the same call.
`;
  return { name, description, markdown };
}

function siteReadiness(find: Finder, config: Config): AgentSkill | null {
  const signal = find('getSignal');
  const scan = find('requestScan');
  const score = find('getScanScore');
  if (!signal || !scan || !score) return null;
  const leaderboard = find('getLeaderboard');
  const name = 'site-readiness';
  const description =
    'Measure how ready a website is for AI agents (the 0-100 Signal Strength score, its tier, and the fixes ' +
    'that raise it): robots.txt AI rules, llms.txt, structured data, discovery documents, MCP and OAuth ' +
    'metadata, live AI traffic. Use when asked to audit, score or compare sites for agents.';
  const markdown = `${frontmatter(name, description)}
# Site readiness for AI agents

Free reads over MCP (\`${mcpConnectLine(config)}\`) or REST.

## Quick answer

${call(signal, config)}

${summaryOf(signal)} Enough to say where a site stands.

## Full scan with findings

1. ${call(scan, config)}
   Starts a full scan (or joins one of the domain already running). Over MCP the tool waits for it
   and reports progress; over REST it answers 202 at once: poll the returned \`status_url\` until
   \`status\` is \`done\` or \`failed\`.
2. ${call(score, config)}
   The breakdown: five components, every check behind each, findings with their fixes and evidence
   URLs, and \`recommended_next_tools\`.

Present the findings in order of severity with their fixes. A component without data is left out of
the score rather than counted as zero (the answer's \`note\` says so): say what was not measured.
${
  leaderboard
    ? `\n## Compare\n\n${call(leaderboard, config)}\n\nThe public leaderboard of scanned sites, to place one site among others.\n`
    : ''
}`;
  return { name, description, markdown };
}

function paidCatalog(operations: readonly AnyOperation[], config: Config): AgentSkill | null {
  const skus = operations.filter((op) => op.sku && op.http);
  if (skus.length === 0) return null;
  const name = 'x402-purchases';
  const description =
    `Buy one of this service's ${skus.length} paid SKUs per call with x402, in USDC on Base: read the 402 ` +
    'terms, sign the payment, send the call again with it, keep the receipt. Use when a task needs a paid SKU ' +
    'and the person allowed the spend.';
  const lines = skus.map((op) => `- **${op.title}** (\`${op.sku?.id}\`): ${call(op, config)}`);
  const markdown = `${frontmatter(name, description)}
# Paying for a SKU with x402

Every paid SKU is one call, paid for per call in USDC on Base with the x402 protocol (version 2; version
1 payers are understood too). Nothing is charged for a call that fails: a site that cannot be reached, bad
input (checked before any payment is asked for) or an error of ours.

## Steps

1. Call the SKU without payment. The answer is \`402\` with the terms: the \`PAYMENT-REQUIRED\` header over
   REST (base64 JSON: \`accepts\` with scheme \`exact\`, network, asset, amount, payTo), or over MCP a
   result with \`isError\` whose \`structuredContent\` holds the same terms.
2. Check the amount against what the person allowed, then sign an EIP-3009 \`transferWithAuthorization\`
   for exactly those terms with the payer's wallet (an x402 client library does this).
3. Send the same call again with the signed payment: the \`PAYMENT-SIGNATURE\` header over REST, or
   \`_meta["x402/payment"]\` over MCP. The answer carries the result and its receipt
   (\`PAYMENT-RESPONSE\`, or \`_meta["x402/payment-response"]\`): keep the receipt's \`id\`.
4. If the answer never arrived, send the same signed payment again: it answers the first result and is
   never charged twice. \`402 payment_already_used\` with \`Retry-After\` means it is still running.

A \`503 service_unavailable\` before any 402 means the payment peers are down: nothing can be paid now,
try again after \`Retry-After\`.

## The SKUs

${lines.join('\n')}

Every paid resource with its terms is also listed at ${config.site_url}/.well-known/x402.json.
`;
  return { name, description, markdown };
}

type Finder = (name: string) => AnyOperation | undefined;

export function agentSkills(operations: readonly AnyOperation[], config: Config): AgentSkillsDocuments {
  const byName = new Map(operations.map((op) => [op.name, op]));
  const find: Finder = (name) => byName.get(name);
  const skills = [
    cardCharges(find, config),
    siteReadiness(find, config),
    paidCatalog(operations, config),
  ].filter((skill): skill is AgentSkill => skill !== null);
  const index = {
    $schema: AGENT_SKILLS_SCHEMA,
    skills: skills.map((skill) => ({
      name: skill.name,
      type: 'skill-md',
      description: skill.description,
      url: skillUrlPath(skill.name),
      digest: digestOf(skill.markdown),
    })),
  };
  return { index: JSON.stringify(index, null, 2), skills };
}
