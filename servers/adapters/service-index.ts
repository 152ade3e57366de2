/**
 * GET /services: every operation of the service, free and paid, projected from the registry like
 * the routes and tools (STYLE.md 2) - nothing here is listed by hand. `serviceIndex` is a pure
 * function of (operations, config); the operation serving it reads the registry its adapter serves
 * (`ctx.operations`), so nothing imports the registry back.
 */
import { z } from 'zod';
import type { Config } from '../config.ts';
import { Access, type AnyOperation, defineOperation, McpServerName, Surface } from '../operation.ts';
import { surfaceUrl } from './openapi.ts';

export const ListServicesInput = z.strictObject({});

export const ServicePrice = z
  .object({
    amount_usdc: z.number().describe('Price of one call in USDC.'),
    protocol: z.literal('x402'),
    network: z.literal('base'),
    asset: z.literal('USDC'),
  })
  .describe('Price of a paid operation, paid per call with x402.');

export const ServiceEntry = z.object({
  name: z.string().describe('operationId in the OpenAPI documents.'),
  tool_name: z.string().describe('Name of the MCP tool, when the operation is one.'),
  title: z.string(),
  description: z.string(),
  method: z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']).nullable(),
  url: z.string().nullable().describe('Absolute URL of the REST endpoint; {name} marks a path parameter.'),
  access: Access,
  free: z.boolean().describe('False for paid operations.'),
  price: ServicePrice.nullable().describe('null for free operations.'),
  surfaces: z.object({
    rest: Surface.nullable().describe('REST surface; null when not on REST.'),
    mcp: z.array(McpServerName).describe('MCP servers the operation is a tool of.'),
  }),
  openapi: z.string().nullable().describe('OpenAPI document of the REST surface.'),
});

export const ListServicesResult = z.object({
  services: z.array(ServiceEntry),
  mcp: z.object({ public: z.string().describe('URL of the public MCP server.') }),
});
export type ListServicesResult = z.infer<typeof ListServicesResult>;

export function serviceIndex(operations: readonly AnyOperation[], config: Config): ListServicesResult {
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
        price: op.sku
          ? {
              amount_usdc: op.sku.usdc,
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

export const listServices = defineOperation({
  name: 'listServices',
  title: 'Every operation of the service',
  description:
    'Every operation this service offers, free and paid: name, MCP tool name, what it does, its REST method ' +
    'and absolute URL, the authentication it needs, its price for paid ones, and the MCP servers it is a tool ' +
    'of.',
  input: ListServicesInput,
  output: ListServicesResult,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  access: 'public',
  http: { surface: 'public_api', method: 'GET', path: '/services', input: 'query' },
  mcp: ['public'],
  tags: ['directory'],
  handler: async (ctx) => serviceIndex(ctx.operations, ctx.services.config),
});

export const serviceOperations = [listServices];
