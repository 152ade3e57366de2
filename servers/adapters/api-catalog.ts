/**
 * The APIs of this deployment and `{site_url}/.well-known/api-catalog` (RFC 9727), a pure function
 * of (operations, config). Which APIs exist is SPEC's division of the service (customer service
 * agent, public API, paid SKUs, soul API, live catalog, the two MCP servers); which operations each
 * holds is read from the registry, so an API appears here once its first operation is registered
 * (the soul API under `{site_url}/api/soul`, for one) and its entry needs no edit when it grows.
 */
import type { Config } from '../config.ts';
import { getHealth } from '../features/health/operations.ts';
import type { AnyOperation } from '../operation.ts';
import { surfaceUrl } from './openapi.ts';

export type ApiKind = 'rest' | 'mcp';

export interface Api {
  /** Stable id, also the fragment of its section on the home page. */
  id: string;
  title: string;
  kind: ApiKind;
  /** Where it is called: the RFC 9727 `anchor`. */
  url: string;
  /** One line on what it is for and who may call it. */
  summary: string;
  operations: AnyOperation[];
  /** Machine-readable descriptions (`service-desc`): OpenAPI documents or the MCP server card. */
  descriptions: { href: string; type: string }[];
}

export const API_CATALOG_PATH = '/.well-known/api-catalog';
/** Agent Skills Discovery (draft v0.2.0): the index, and each skill's SKILL.md under the same folder (`agent-skills.ts`). */
export const AGENT_SKILLS_PATH = '/.well-known/agent-skills';
export const AGENT_SKILLS_INDEX_PATH = `${AGENT_SKILLS_PATH}/index.json`;
/** The A2A agent: its JSON-RPC endpoint and its agent card on the site (`a2a.ts`). */
export const A2A_PATH = '/a2a';
export const AGENT_CARD_PATH = '/.well-known/agent-card.json';
/** RFC 9727 section 4.1: the linkset media type with the api-catalog profile. */
export const API_CATALOG_CONTENT_TYPE =
  'application/linkset+json; profile="https://www.rfc-editor.org/info/rfc9727"';
export const MCP_SERVER_CARD_TYPE = 'application/mcp-server-card+json';
const SOUL_PREFIX = '/api/soul';

/** The URL of an operation's REST route; `{name}` marks a path parameter. */
export function operationUrl(op: AnyOperation, config: Config): string | null {
  if (!op.http) return null;
  return surfaceUrl(config, op.http.surface) + op.http.path.replace(/:(\w+)/g, '{$1}');
}

const openApi = (base: string) => [
  { href: `${base}/openapi.json`, type: 'application/openapi+json' },
  { href: `${base}/openapi.yaml`, type: 'application/openapi+yaml' },
];

/** The MCP server card of one server (SEP-2127: `<streamable-http-url>/server-card`). */
export const serverCardUrl = (mcpServerUrl: string): string => `${mcpServerUrl}/server-card`;

export function apis(operations: readonly AnyOperation[], config: Config): Api[] {
  const onSite = (op: AnyOperation) => op.http?.surface === 'site';
  const isSoul = (op: AnyOperation) =>
    onSite(op) && !op.sku && `${op.http?.path}/`.startsWith(`${SOUL_PREFIX}/`);
  const list: Api[] = [
    {
      id: 'customer-service-agent',
      title: 'Customer service agent',
      kind: 'rest',
      url: config.base_url,
      summary:
        'Keyless tools for personal agents: which brand is behind a card charge, a return or refund ' +
        'request to that brand, and its status.',
      operations: operations.filter((op) => op.http?.surface === 'cs'),
      descriptions: openApi(config.base_url),
    },
    {
      id: 'public-api',
      title: 'Public API',
      kind: 'rest',
      url: config.public_api_url,
      summary:
        'The agent-readiness of websites (scans, Signal Strength, leaderboard), the traffic pixel, the ' +
        'directory, accounts and service keys. Free; writes need a service key or a Bearer token.',
      operations: operations.filter((op) => op.http?.surface === 'public_api'),
      descriptions: openApi(config.public_api_url),
    },
    {
      id: 'paid-skus',
      title: 'Paid SKUs (x402)',
      kind: 'rest',
      url: `${config.site_url}/api/public/x402`,
      summary:
        'The paid catalog, one call per payment in USDC on Base with x402 (also tools of the public MCP server).',
      operations: operations.filter((op) => op.sku !== undefined),
      descriptions: [
        ...openApi(config.site_url),
        { href: `${config.site_url}/.well-known/x402.json`, type: 'application/json' },
      ],
    },
    {
      id: 'soul-api',
      title: 'Soul API (agent identity)',
      kind: 'rest',
      url: `${config.site_url}${SOUL_PREFIX}`,
      summary: 'Permanent verifiable agent identities and their memories; Bearer token for writes.',
      operations: operations.filter(isSoul),
      descriptions: openApi(config.site_url),
    },
    {
      id: 'site-api',
      title: 'Site API',
      kind: 'rest',
      url: config.site_url,
      summary: 'Operations served at the site root.',
      operations: operations.filter((op) => onSite(op) && !op.sku && !isSoul(op)),
      descriptions: openApi(config.site_url),
    },
    {
      id: 'live-catalog',
      title: 'Live catalog',
      kind: 'rest',
      url: config.functions_url,
      summary: 'The paid SKU catalog as this deployment can sell it now.',
      operations: operations.filter((op) => op.http?.surface === 'functions'),
      descriptions: openApi(config.functions_url),
    },
    {
      id: 'mcp-public',
      title: 'Public MCP server',
      kind: 'mcp',
      url: config.mcp_url,
      summary: 'Streamable HTTP, no authentication: public network data and the paid SKUs (x402 in _meta).',
      operations: operations.filter((op) => op.mcp?.includes('public')),
      descriptions: [{ href: serverCardUrl(config.mcp_url), type: MCP_SERVER_CARD_TYPE }],
    },
    {
      id: 'mcp-owner',
      title: 'Owner-scoped MCP server',
      kind: 'mcp',
      url: `${config.mcp_url}/auth`,
      summary:
        "Streamable HTTP behind OAuth 2.1 (dynamic client registration, PKCE S256): one account's own " +
        'sites, traffic and scan findings, under row-level security.',
      operations: operations.filter((op) => op.mcp?.includes('owner')),
      descriptions: [{ href: serverCardUrl(`${config.mcp_url}/auth`), type: MCP_SERVER_CARD_TYPE }],
    },
  ];
  return list.filter((api) => api.operations.length > 0);
}

interface Link {
  href: string;
  type?: string;
  title?: string;
}

/**
 * RFC 9727 section 4.2: a linkset (RFC 9264) with one context per API - `service-desc`,
 * `service-doc` and `status` (RFC 8631) - and, anchored at the catalog itself, an `item` per API.
 */
export function apiCatalog(operations: readonly AnyOperation[], config: Config): { linkset: unknown[] } {
  const status = operationUrl(getHealth, config);
  const list = apis(operations, config);
  const entries = list.map((api) => {
    const entry: Record<string, string | Link[]> = {
      anchor: api.url,
      'service-desc': api.descriptions,
      'service-doc': [
        { href: `${config.site_url}/#${api.id}`, type: 'text/html', title: api.title },
        { href: `${config.site_url}/llms.txt`, type: 'text/markdown' },
      ],
    };
    if (status) entry.status = [{ href: status, type: 'application/json' }];
    return entry;
  });
  return {
    linkset: [
      {
        anchor: `${config.site_url}${API_CATALOG_PATH}`,
        item: list.map((api) => ({ href: api.url, title: api.title })),
      },
      ...entries,
    ],
  };
}
