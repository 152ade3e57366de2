/**
 * x402 payment requirements, derived from the operation's SKU and the configuration - pure
 * functions, so that the 402, `/.well-known/x402.json` and the catalog can never disagree.
 *
 * v2 (x402-specification-v2.md section 5): scheme `exact`, CAIP-2 network, `amount` in atomic units
 * (exactly the price), asset USDC with its EIP-712 domain in `extra`. v1 clients get the same terms
 * in v1 form (`maxAmountRequired`, network by name, resource fields inline).
 */
import type { PaymentRequired, PaymentRequirements, ResourceInfo } from '@x402/core/types';
import type { PaymentRequiredV1, PaymentRequirementsV1 } from '@x402/core/types/v1';
import { BAZAAR, bazaarResourceServerExtension, declareDiscoveryExtension } from '@x402/extensions/bazaar';
import { SIGN_IN_WITH_X } from '@x402/extensions/sign-in-with-x';
import { jsonSchemaOf } from '../adapters/openapi.ts';
import type { Config } from '../config.ts';
import type { AnyOperation, RequestInfo } from '../operation.ts';
import { atomicUsdc, networkOf, paymentNetworks } from './networks.ts';

/** The paid REST resource of a SKU: `{site_url}/api/public/x402/<sku>`. */
export const skuUrl = (config: Config, op: AnyOperation): string =>
  `${config.site_url}${op.http?.path ?? ''}`;

/**
 * What is paid for. Over MCP the resource is the tool, named as the x402 MCP transport's examples
 * name it (`mcp://tool/<name>`, specs/transports-v2/mcp.md).
 */
export function resourceOf(config: Config, op: AnyOperation, via: RequestInfo['via']): ResourceInfo {
  return {
    url: skuResources(config, op)[via === 'mcp' ? 1 : 0] as string,
    description: op.title,
    mimeType: 'application/json',
  };
}

/**
 * Every name a SKU is sold under - its REST URL and its MCP tool - for binding a payment to what it
 * was offered for: a payment made for one SKU never pays another, whatever their prices.
 */
export const skuResources = (config: Config, op: AnyOperation): readonly string[] => [
  skuUrl(config, op),
  `mcp://tool/${op.toolName}`,
];

/**
 * The atomic amount of one call with this validated input: the catalog price, or the amount the
 * caller set for SKUs that let them (never below the catalog price, which is their floor).
 */
export function amountOf(op: AnyOperation, input: unknown): bigint {
  const sku = op.sku;
  if (!sku) throw new Error(`${op.name} is not a paid operation`);
  const floor = atomicUsdc(sku.usdc);
  if (!sku.amount) return floor;
  const asked = atomicUsdc(sku.amount(input));
  return asked > floor ? asked : floor;
}

/** The v2 requirements for `amount` atomic USDC; null when no `payTo` is configured. */
export function requirementsFor(config: Config, amount: bigint): PaymentRequirements | null {
  const payTo = config.payments.pay_to;
  if (!payTo) return null;
  const network = networkOf(config);
  return {
    scheme: 'exact',
    network: network.caip2,
    amount: amount.toString(),
    asset: network.usdc,
    payTo,
    maxTimeoutSeconds: config.payments.max_timeout_seconds,
    extra: { ...network.domain },
  };
}

export function paymentRequired(
  requirements: PaymentRequirements,
  resource: ResourceInfo,
  error: string,
  extensions: Record<string, unknown>,
): PaymentRequired {
  return { x402Version: 2, error, resource, accepts: [requirements], extensions };
}

/**
 * The x402 extensions this service speaks, as `/.well-known/x402.json` lists them: `bazaar` on
 * every 402; `sign-in-with-x` on the SKUs whose result the paying wallet reads again
 * (`Sku.readLater`) and on those reads (`sign-in.ts`).
 */
export const supportedExtensions = [BAZAAR.key, SIGN_IN_WITH_X] as const;

/** The x402 extensions the 402 of `op` carries. */
export const extensionsOfSku = (op: AnyOperation): string[] =>
  op.sku?.readLater ? [BAZAAR.key, SIGN_IN_WITH_X] : [BAZAAR.key];

const discoveryExtensions = new WeakMap<AnyOperation, Record<RequestInfo['via'], Record<string, unknown>>>();

/**
 * The 402's `extensions`: Bazaar discovery (x402 `extensions/bazaar`), so a facilitator that
 * settles a payment - or an indexer that probes with an unpaid request - catalogs the SKU with its
 * input and output: the registry's schemas, the same as the catalog's and the OpenAPI document's.
 * Over REST a JSON `POST` (or `GET` with query parameters), over MCP the tool. Built with the
 * reference `declareDiscoveryExtension` and enriched with the method as x402's resource server does
 * (`bazaarResourceServerExtension.enrichDeclaration`); computed once per SKU.
 */
export function discoveryExtensionsOf(op: AnyOperation, via: RequestInfo['via']): Record<string, unknown> {
  let byVia = discoveryExtensions.get(op);
  if (!byVia) {
    const inputSchema = jsonSchemaOf(op.input, 'input');
    const output = { schema: jsonSchemaOf(op.output, 'output') };
    const method = op.http?.method ?? 'POST';
    const input = op.sku?.example ?? {};
    const http = declareDiscoveryExtension(
      method === 'GET' ? { input, inputSchema, output } : { bodyType: 'json', input, inputSchema, output },
    )[BAZAAR.key];
    const rest = {
      // The hook reads the request's method alone (its HTTP context's adapter is not needed here).
      [BAZAAR.key]: bazaarResourceServerExtension.enrichDeclaration?.(http, {
        method,
        path: op.http?.path,
        adapter: null,
      }),
    };
    const mcp = declareDiscoveryExtension({
      toolName: op.toolName,
      description: op.title,
      transport: 'streamable-http',
      inputSchema,
      example: input,
      output,
    });
    byVia = { rest, a2a: rest, mcp };
    discoveryExtensions.set(op, byVia);
  }
  return byVia[via];
}

/**
 * The same terms for an x402 v1 client (specs/x402-specification-v1.md): network by name,
 * `maxAmountRequired`, the resource inline, and `outputSchema` describing the call.
 */
export function v1Requirements(
  requirements: PaymentRequirements,
  resource: ResourceInfo,
  op: AnyOperation,
): PaymentRequirementsV1 {
  const network = Object.values(paymentNetworks).find((n) => n.caip2 === requirements.network);
  return {
    scheme: requirements.scheme,
    network: (network?.name ?? requirements.network) as PaymentRequirementsV1['network'],
    maxAmountRequired: requirements.amount,
    resource: resource.url,
    description: resource.description ?? '',
    mimeType: resource.mimeType ?? 'application/json',
    outputSchema: callSchemaOf(op),
    payTo: requirements.payTo,
    maxTimeoutSeconds: requirements.maxTimeoutSeconds,
    asset: requirements.asset,
    extra: requirements.extra,
  };
}

const callSchemas = new WeakMap<AnyOperation, Record<string, unknown>>();

/** v1 `outputSchema`: the request body and the response of the call, as JSON Schemas (computed once). */
function callSchemaOf(op: AnyOperation): Record<string, unknown> {
  let schema = callSchemas.get(op);
  if (!schema) {
    schema = {
      input: { type: 'http', method: 'POST', bodyType: 'json', bodyFields: jsonSchemaOf(op.input, 'input') },
      output: jsonSchemaOf(op.output, 'output'),
    };
    callSchemas.set(op, schema);
  }
  return schema;
}

export function paymentRequiredV1(accepts: PaymentRequirementsV1, error: string): PaymentRequiredV1 {
  return { x402Version: 1, error, accepts: [accepts] };
}
