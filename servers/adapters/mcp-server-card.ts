/**
 * MCP Server Cards, one per MCP server, and the MCP Catalog that lists them - the proposal followed
 * is SEP-2127 "MCP Server Cards" (modelcontextprotocol/modelcontextprotocol PR 2127, schema in
 * modelcontextprotocol/experimental-ext-server-card `schema.ts`, `$schema` v2), which supersedes
 * SEP-1649. Each card is at its server's reserved location `<streamable-http-url>/server-card`
 * (`application/mcp-server-card+json`); the catalog at `/.well-known/mcp/catalog.json` points at
 * them. The public server's card is also served at `/.well-known/mcp/server-card.json`, where
 * SEP-1649 put it and where crawlers (our own scanner too) still look.
 *
 * The card says what `initialize` and `server/discover` say (name, title, version, every protocol
 * version of both eras) and no tools:
 * SEP-2127 leaves primitives to `tools/list`. Our extension in `_meta` names the tool count and the
 * OAuth protected resource metadata, both read from the registry and the configuration.
 */

import { type Config, serviceVersion } from '../config.ts';
import type { AnyOperation, McpServerName } from '../operation.ts';
import { MCP_SERVER_CARD_TYPE, serverCardUrl } from './api-catalog.ts';
import { PROTOCOL_VERSIONS } from './mcp.ts';

export const SERVER_CARD_SCHEMA = 'https://static.modelcontextprotocol.io/schemas/v2/server-card.schema.json';
export const MCP_CATALOG_PATH = '/.well-known/mcp/catalog.json';
export const LEGACY_SERVER_CARD_PATH = '/.well-known/mcp/server-card.json';

export const mcpServerUrl = (config: Config, server: McpServerName): string =>
  server === 'public' ? config.mcp_url : `${config.mcp_url}/auth`;

/** `com.example` for `https://www.example.com` (reverse DNS, the card's namespace). */
function namespaceOf(config: Config): string {
  return new URL(config.site_url).hostname
    .split('.')
    .reverse()
    .join('.')
    .replace(/[^a-zA-Z0-9.-]/g, '-');
}

const about: Record<McpServerName, { title: string; description: string }> = {
  public: {
    title: 'Agent service (public)',
    description: 'Card charge lookup, returns, website agent-readiness scans and paid SKUs; no sign-in.',
  },
  owner: {
    title: 'Agent service (owner)',
    description: "A site owner's own sites, AI traffic and scan findings, behind OAuth 2.1.",
  },
};

export function mcpServerCard(operations: readonly AnyOperation[], config: Config, server: McpServerName) {
  const url = mcpServerUrl(config, server);
  const tools = operations.filter((op) => op.mcp?.includes(server));
  return {
    $schema: SERVER_CARD_SCHEMA,
    name: `${namespaceOf(config)}/agent-service-${server}`,
    version: serviceVersion,
    title: about[server].title,
    description: about[server].description,
    websiteUrl: `${config.site_url}/`,
    remotes: [
      {
        type: 'streamable-http' as const,
        url,
        ...(server === 'owner'
          ? {
              headers: [
                {
                  name: 'Authorization',
                  description: `Bearer access token from ${config.auth_url} (OAuth 2.1, PKCE S256, dynamic client registration).`,
                  isRequired: true,
                  isSecret: true,
                },
              ],
            }
          : {}),
        supportedProtocolVersions: [...PROTOCOL_VERSIONS],
      },
    ],
    _meta: {
      'org.agent-service/tools': tools.length,
      'org.agent-service/paid-tools': tools.filter((op) => op.sku).length,
      ...(server === 'owner'
        ? { 'org.agent-service/protected-resource-metadata': `${url}/.well-known/oauth-protected-resource` }
        : {}),
    },
  };
}

/** The MCP Catalog (SEP-2127 docs/discovery.md): one entry per MCP server that has tools. */
export function mcpCatalog(operations: readonly AnyOperation[], config: Config) {
  const host = new URL(config.site_url).hostname;
  const servers = (['public', 'owner'] as const).filter((s) => operations.some((op) => op.mcp?.includes(s)));
  return {
    specVersion: 'draft',
    entries: servers.map((server) => ({
      identifier: `urn:air:${host}:agent-service-${server}`,
      displayName: about[server].title,
      type: MCP_SERVER_CARD_TYPE,
      url: serverCardUrl(mcpServerUrl(config, server)),
    })),
  };
}
