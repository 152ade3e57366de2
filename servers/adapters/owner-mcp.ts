/**
 * The owner-scoped MCP server at `{mcp_url}/auth` (SPEC "Authentication", rules 4-6): the registry's
 * `owner` tools behind the bearer check of `auth/resource.ts`, and its protected resource metadata.
 */
import { Router } from 'express';
import { ownerBearerAuthentication, PRM, servePrm } from '../../auth/resource.ts';
import { mcpAllowedHosts } from '../config.ts';
import type { AnyOperation } from '../operation.ts';
import type { Services } from '../services.ts';
import { createMcpEndpoint } from './mcp.ts';

/** Mounted at `{mcp_url}/auth`; `instructions` are what it says about itself in `initialize`. */
export function ownerMcpEndpoint(
  services: Services,
  operations: readonly AnyOperation[],
  instructions: string,
) {
  const endpoint = createMcpEndpoint(services, operations, {
    server: 'owner',
    allowedHosts: mcpAllowedHosts(services.config),
    instructions,
    authenticate: ownerBearerAuthentication(services),
  });
  const router = Router();
  router.get(PRM, servePrm(services));
  router.use(endpoint.router);
  return { router, close: endpoint.close, direct: endpoint.direct };
}
