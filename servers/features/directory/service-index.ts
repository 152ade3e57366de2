/**
 * GET /services: every operation of the service, free and paid, projected from the registry like
 * the routes and tools (STYLE.md 2) - nothing here is listed by hand.
 */
import { surfaceUrl } from '../../adapters/openapi.ts';
import type { Config } from '../../config.ts';
import type { AnyOperation } from '../../operation.ts';

export function serviceIndex(operations: readonly AnyOperation[], config: Config) {
  return {
    services: operations.map((op) => {
      const http = op.http;
      const base = http ? surfaceUrl(config, http.surface) : null;
      return {
        name: op.name,
        tool_name: op.toolName,
        title: op.title,
        description: op.description,
        method: http?.method ?? null,
        url: http && base ? base + http.path.replace(/:(\w+)/g, '{$1}') : null,
        access: op.access,
        free: op.access !== 'paid',
        price: op.price
          ? {
              amount_usdc: op.price.usdc,
              protocol: 'x402' as const,
              network: 'base' as const,
              asset: 'USDC' as const,
            }
          : null,
        surfaces: { rest: http?.surface ?? null, mcp: op.mcp ?? [] },
        openapi: base ? `${base}/openapi.json` : null,
      };
    }),
    mcp: { public: config.mcp_url },
  };
}
