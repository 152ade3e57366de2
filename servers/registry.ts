/**
 * Every operation of the service. Routes, MCP tools and OpenAPI documents are derived from this
 * list; a feature adds its operations here and no adapter changes.
 */
import { catalogOperations } from './adapters/catalog.ts';
import { serviceOperations } from './adapters/service-index.ts';
import { accountOperations } from './features/accounts/operations.ts';
import { boostOperations } from './features/catalog/boost/operations.ts';
import { embodimentOperations } from './features/catalog/embodiment/operations.ts';
import { entityOperations } from './features/catalog/entity/operations.ts';
import { featuredBidOperations } from './features/catalog/featured-bid/operations.ts';
import { llmsTxtOperations } from './features/catalog/llms-txt/operations.ts';
import { peopleSearchOperations } from './features/catalog/people-search/operations.ts';
import { scanSkuOperations } from './features/catalog/scan/operations.ts';
import { signalOperations } from './features/catalog/signal/operations.ts';
import { soulWriteOperations } from './features/catalog/soul-write/operations.ts';
import { spotlightOperations } from './features/catalog/spotlight/operations.ts';
import { declarationOperations } from './features/charges/declaration-operations.ts';
import { chargeOperations } from './features/charges/operations.ts';
import { directoryOperations } from './features/directory/operations.ts';
import { healthOperations } from './features/health/operations.ts';
import { ownerOperations } from './features/owner/operations.ts';
import { ownerContextOperations } from './features/owner/whoami.ts';
import { brandRequestOperations } from './features/returns/brand-operations.ts';
import { brandChannelOperations } from './features/returns/channels/operations.ts';
import { returnOperations } from './features/returns/operations.ts';
import { scanHistoryOperations } from './features/scans/history-operations.ts';
import { scanOperations } from './features/scans/operations.ts';
import { siteOperations } from './features/sites/operations.ts';
import { soulOperations } from './features/souls/operations.ts';
import { trafficOperations } from './features/traffic/operations.ts';
import type { AnyOperation } from './operation.ts';
import { paymentOperations } from './payments/operations.ts';

export const operations: readonly AnyOperation[] = checkedOperations([
  ...chargeOperations,
  ...returnOperations,
  ...brandChannelOperations,
  ...healthOperations,
  ...accountOperations,
  ...siteOperations,
  ...declarationOperations,
  ...scanOperations,
  ...scanHistoryOperations,
  ...directoryOperations,
  ...serviceOperations,
  ...brandRequestOperations,
  ...trafficOperations,
  ...ownerOperations,
  ...ownerContextOperations,
  ...catalogOperations,
  ...featuredBidOperations,
  ...spotlightOperations,
  ...boostOperations,
  ...signalOperations,
  ...scanSkuOperations,
  ...peopleSearchOperations,
  ...entityOperations,
  ...llmsTxtOperations,
  ...soulOperations,
  ...soulWriteOperations,
  ...embodimentOperations,
  ...paymentOperations,
]);

/**
 * Names, tool names and routes must be unique, the public MCP server (no authentication) only
 * carries public and paid operations, and owner operations (one account's own data, under row-level
 * security) are tools of the owner MCP server and nothing else - no REST route. A violation is a
 * programming error caught at start.
 */
export function checkedOperations(list: AnyOperation[]): AnyOperation[] {
  const seen = new Set<string>();
  for (const op of list) {
    if (op.mcp?.includes('public') && op.access !== 'public' && op.access !== 'paid') {
      throw new Error(
        `registry: ${op.name} needs ${op.access} access and cannot be on the public MCP server`,
      );
    }
    if (op.access === 'owner' && (op.http || op.mcp?.join() !== 'owner')) {
      throw new Error(`registry: ${op.name} is an owner operation and belongs only on the owner MCP server`);
    }
    if ((op.access === 'paid') !== (op.sku !== undefined)) {
      throw new Error(`registry: ${op.name} must be a priced SKU exactly when its access is paid`);
    }
    // The adapters charge a SKU at its x402 path and as a public MCP tool; anywhere else it would
    // be served without the payment flow (invokeOperation still never runs one unpaid).
    if (op.sku && (op.http?.surface !== 'site' || op.http.path !== `/api/public/x402/${op.sku.id}`)) {
      throw new Error(
        `registry: ${op.name} sells ${op.sku.id}, so its route is the site's /api/public/x402/${op.sku.id}`,
      );
    }
    if (op.sku && op.mcp?.join() !== 'public') {
      throw new Error(
        `registry: ${op.name} sells ${op.sku.id}, so it is a tool of the public MCP server only`,
      );
    }
    if (op.mcp?.includes('owner') && op.access !== 'owner') {
      throw new Error(`registry: ${op.name} is on the owner MCP server and needs owner access`);
    }
    // The example every 402 shows (Bazaar) is an input the SKU takes.
    if (op.sku && !op.input.safeParse(op.sku.example).success) {
      throw new Error(
        `registry: ${op.name}'s example input does not parse: ${op.input.safeParse(op.sku.example).error?.message}`,
      );
    }
    const keys = [`name:${op.name}`, `tool:${op.toolName}`];
    if (op.http) keys.push(`route:${op.http.surface} ${op.http.method} ${op.http.path}`);
    for (const key of keys) {
      if (seen.has(key)) throw new Error(`registry: duplicate ${key}`);
      seen.add(key);
    }
  }
  return list;
}
