/**
 * `{site_url}/llms.txt` and `/llms-full.txt` (llmstxt.org): an H1, a `>` summary, how to connect,
 * then one H2 section per API (`apis()`), each operation a `- [title](url): line` link - so every
 * operation of the registry appears with its URL, and the paid SKUs with their prices. The full
 * file adds each operation's whole description, arguments, access and price. Pure functions of
 * (operations, config).
 */
import { type Config, SERVICE_TITLE } from '../config.ts';
import { AGENT_REQUESTS_PATH, AGENT_REQUESTS_TITLE, brandRoutes } from '../features/returns/brand-guide.ts';
import type { AnyOperation } from '../operation.ts';
import {
  A2A_PATH,
  AGENT_CARD_PATH,
  AGENT_SKILLS_INDEX_PATH,
  API_CATALOG_PATH,
  type Api,
  apis,
  operationUrl,
} from './api-catalog.ts';
import { MODERN_PROTOCOL_VERSIONS, PROTOCOL_VERSIONS } from './mcp.ts';
import { LEGACY_SERVER_CARD_PATH, MCP_CATALOG_PATH } from './mcp-server-card.ts';
import { argumentsOf, summaryOf } from './tool-table.ts';

export const serviceSummary =
  'Free, keyless customer service tools for personal agents (which brand is behind a card charge, ' +
  'returns and refunds), a public API and MCP servers on the agent-readiness of websites (Signal ' +
  'Strength scans, AI traffic pixel, leaderboard, directory), agent identities, and paid SKUs sold ' +
  'per call with x402 in USDC on Base.';

/** `$0.10` or `from $5.00` for a SKU whose caller sets the amount. */
export function priceOf(op: AnyOperation): string | null {
  if (!op.sku) return null;
  const price = `$${op.sku.usdc.toFixed(2)} USDC`;
  return op.sku.amount ? `from ${price} (the caller sets the amount)` : price;
}

/** Where an operation is called: its REST URL, or for an MCP-only tool the server's URL. */
export function callUrl(op: AnyOperation, api: Api, config: Config): string {
  return operationUrl(op, config) ?? api.url;
}

function how(op: AnyOperation, api: Api): string {
  const parts: string[] = [];
  if (api.kind === 'rest' && op.http) parts.push(`${op.http.method}`);
  if (op.mcp?.length) parts.push(`MCP tool \`${op.toolName}\``);
  const price = priceOf(op);
  if (price) parts.push(`paid ${price} with x402`);
  else if (op.access === 'service_key') parts.push('x-service-key');
  else if (op.access === 'bearer') parts.push('Bearer token or x-service-key');
  else if (op.access === 'owner') parts.push('OAuth 2.1 token');
  else parts.push('no authentication');
  return parts.join('; ');
}

/** The one line an MCP client needs (`mcp.json` style, understood by most clients). */
export function mcpConnectLine(config: Config): string {
  return JSON.stringify({ mcpServers: { 'agent-service': { type: 'http', url: config.mcp_url } } });
}

/**
 * A tools/call as a client of the MCP 2026-07-28 revision sends it, as curl: stateless (no
 * `initialize`, no session), the protocol version and client identity in the request's `_meta`, and
 * the standard headers that repeat the method and the tool (SEP-2243).
 */
export function mcpModernCall(config: Config, tool: string, args: Record<string, unknown>): string {
  const version = MODERN_PROTOCOL_VERSIONS[0] as string;
  const body = {
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: {
      name: tool,
      arguments: args,
      _meta: {
        'io.modelcontextprotocol/protocolVersion': version,
        'io.modelcontextprotocol/clientInfo': { name: 'my-agent', version: '1.0.0' },
        'io.modelcontextprotocol/clientCapabilities': {},
      },
    },
  };
  return [
    `curl ${config.mcp_url}`,
    `-H 'content-type: application/json' -H 'accept: application/json, text/event-stream'`,
    `-H 'mcp-protocol-version: ${version}' -H 'mcp-method: tools/call' -H 'mcp-name: ${tool}'`,
    `-d '${JSON.stringify(body)}'`,
  ].join(' \\\n  ');
}

function connection(config: Config): string[] {
  return [
    `Connect an MCP client (Streamable HTTP) to the public server, no sign-in: \`${mcpConnectLine(config)}\`.`,
    `Both servers speak MCP ${PROTOCOL_VERSIONS.join(', ')} on the same URL, the era chosen by each request: ` +
      `${MODERN_PROTOCOL_VERSIONS.join(', ')} is stateless (\`server/discover\`, then every request carries ` +
      `its protocol version in \`_meta\` and the \`MCP-Protocol-Version\`, \`Mcp-Method\` and \`Mcp-Name\` ` +
      'headers; no `initialize`, no session); older clients `initialize` as before.',
    `The owner-scoped server at ${config.mcp_url}/auth needs an OAuth 2.1 access token: discovery at ` +
      `${config.mcp_url}/auth/.well-known/oauth-protected-resource, dynamic client registration, PKCE S256.`,
    `Paid SKUs answer 402 with the x402 terms (PAYMENT-REQUIRED); repeat the call with PAYMENT-SIGNATURE. ` +
      `Every REST operation is in ${config.site_url}/openapi.json.`,
  ];
}

function discoveryLinks(config: Config): string[] {
  const site = config.site_url;
  return [
    `- [OpenAPI of the whole site](${site}/openapi.json): every REST operation in one OpenAPI 3.1.0 document (also ${site}/openapi.yaml)`,
    `- [API catalog](${site}${API_CATALOG_PATH}): RFC 9727 linkset, one entry per API`,
    `- [x402 resources](${site}/.well-known/x402.json): every paid resource with its price and payment terms`,
    `- [MCP catalog](${site}${MCP_CATALOG_PATH}): the MCP server cards (SEP-2127); the public server's card also at ${site}${LEGACY_SERVER_CARD_PATH}`,
    `- [OAuth authorization server](${site}/.well-known/oauth-authorization-server): RFC 8414 metadata of ${config.auth_url}`,
    `- [Protected resource metadata](${site}/.well-known/oauth-protected-resource): RFC 9728`,
    `- [Every operation as JSON](${config.public_api_url}/services): the same list with methods, access and prices`,
    `- [Agent Skills](${site}${AGENT_SKILLS_INDEX_PATH}): SKILL.md instructions for card charges, site readiness and x402 purchases`,
    `- [A2A agent card](${site}${AGENT_CARD_PATH}): the free public tools as Agent2Agent skills, JSON-RPC at ${site}${A2A_PATH}`,
  ];
}

/** How brands receive agent requests (`features/returns/brand-guide.ts`, the page's source too). */
function brandSection(config: Config): string[] {
  const page = `${config.site_url}${AGENT_REQUESTS_PATH}`;
  return [
    '## Brands: receiving agent requests',
    '',
    `What a brand publishes so the return and refund requests personal agents file here reach it, best first, and what it gets. ${page}`,
    '',
    `- [${AGENT_REQUESTS_TITLE}](${page}): the page, with the exact payloads`,
    ...brandRoutes(config).map((r) => `- [${r.title}](${page}#${r.id}): ${r.publish} You get: ${r.gets}`),
    '',
  ];
}

export function llmsTxt(operations: readonly AnyOperation[], config: Config): string {
  const lines = [`# ${SERVICE_TITLE}`, '', `> ${serviceSummary}`, '', ...connection(config), ''];
  for (const api of apis(operations, config)) {
    lines.push(`## ${api.title}`, '', `${api.summary} ${api.url}`, '');
    for (const op of api.operations) {
      if (api.kind === 'mcp' && op.http) continue; // listed with its REST API already
      lines.push(`- [${op.title}](${callUrl(op, api, config)}): ${summaryOf(op)} (${how(op, api)})`);
    }
    if (api.kind === 'mcp') {
      lines.push(`- [Server card](${api.descriptions[0]?.href}): how to connect (SEP-2127)`);
    }
    lines.push('');
  }
  lines.push(...brandSection(config));
  lines.push('## Discovery', '', ...discoveryLinks(config), '');
  lines.push(
    '## Optional',
    '',
    `- [Full reference](${config.site_url}/llms-full.txt): every operation with its whole description, arguments, access and price`,
    '',
  );
  return lines.join('\n');
}

export function llmsFullTxt(operations: readonly AnyOperation[], config: Config): string {
  const lines = [`# ${SERVICE_TITLE}`, '', `> ${serviceSummary}`, '', ...connection(config), ''];
  for (const api of apis(operations, config)) {
    lines.push(`## ${api.title}`, '', `${api.summary}`, '', `Base URL: ${api.url}`, '');
    for (const d of api.descriptions) lines.push(`- [Description (${d.type})](${d.href})`);
    lines.push('');
    for (const op of api.operations) {
      if (api.kind === 'mcp' && op.http) continue;
      lines.push(`### ${op.title}`, '');
      lines.push(
        `- URL: ${op.http ? `${op.http.method} ${callUrl(op, api, config)}` : callUrl(op, api, config)}`,
      );
      if (op.mcp?.length) lines.push(`- MCP tool: \`${op.toolName}\` on the ${op.mcp.join(' and ')} server`);
      lines.push(`- Arguments: \`${argumentsOf(op)}\``);
      lines.push(`- Access: ${how(op, api)}`);
      const price = priceOf(op);
      if (price) lines.push(`- Price: ${price}, x402 on Base; SKU \`${op.sku?.id}\``);
      lines.push('', op.description, '');
    }
    if (api.kind === 'mcp') {
      const tools = operations.filter((op) => op.mcp?.includes(api.id === 'mcp-owner' ? 'owner' : 'public'));
      lines.push(`Tools of this server: ${tools.map((op) => `\`${op.toolName}\``).join(', ')}.`, '');
    }
  }
  lines.push(...brandSection(config));
  lines.push('## Discovery', '', ...discoveryLinks(config), '');
  return lines.join('\n');
}
