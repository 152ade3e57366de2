/**
 * `{site_url}/.well-known/x402.json`: every paid resource of the service with its methods, its
 * input and output JSON Schemas and its x402 v2 `accepts`, and the MCP server that sells the same
 * tools. A pure function of (operations, config): the prices are the operations' SKUs, the terms
 * are the payment core's (`servers/payments/requirements.ts`), so nothing here is written twice.
 */
import type { Config } from '../config.ts';
import { type JsonSchema, jsonSchemaOf } from '../json-schema.ts';
import type { AnyOperation } from '../operation.ts';
import { atomicUsdc, networkOf } from '../payments/networks.ts';
import { requirementsFor } from '../payments/requirements.ts';
import { extensionsOfSku, skuUrl, supportedExtensions } from '../sku-terms.ts';

export interface X402Document {
  x402Version: 2;
  /** False while no `payments.pay_to` is configured: every `accepts` is then empty. */
  payments_enabled: boolean;
  network: { name: string; caip2: string; asset: string; asset_name: string };
  /**
   * x402 extensions this service speaks: `bazaar` (input and output for discovery indexers),
   * `sign-in-with-x` (the paying wallet reads what it bought again by signing in).
   */
  extensions: string[];
  resources: {
    sku: string;
    resource: string;
    methods: ('POST' | 'GET')[];
    title: string;
    description: string;
    mimeType: 'application/json';
    price_usdc: number;
    /** `fixed`: exactly the price; `caller_set`: the input sets the amount, the price is its floor. */
    pricing: 'fixed' | 'caller_set';
    input_schema: JsonSchema;
    /** A valid input (the SKU's example, also in its 402's Bazaar extension). */
    input_example: Record<string, unknown>;
    output_schema: JsonSchema;
    /** Empty while the SKU cannot be sold here (`available: false`). */
    accepts: NonNullable<ReturnType<typeof requirementsFor>>[];
    /** Whether a call can be paid and run on this deployment now; when not, why. */
    available: boolean;
    unavailable_reason: string | null;
    mcp_tool: string;
    /** The x402 extensions this resource's 402 carries (`sign-in-with-x`: its result is read again). */
    extensions: string[];
  }[];
  mcp: { url: string; transport: 'streamable-http'; x402_transport: string; tools: string[] };
}

/**
 * `unavailableReason` says why a SKU cannot be sold on this deployment (the answer of
 * `skuUnavailableReason`, the same the live catalog and a call give); omitted, every SKU counts as
 * available when a `pay_to` is configured.
 */
export function x402Document(
  operations: readonly AnyOperation[],
  config: Config,
  unavailableReason: (op: AnyOperation) => string | null = () => null,
): X402Document {
  const network = networkOf(config);
  const paid = operations.filter((op) => op.sku && op.http);
  return {
    x402Version: 2,
    payments_enabled: config.payments.pay_to !== null,
    network: { name: network.name, caip2: network.caip2, asset: network.usdc, asset_name: 'USDC' },
    // The x402 extensions every 402 of this service carries (`servers/sku-terms.ts`).
    extensions: [...supportedExtensions],
    resources: paid.map((op) => {
      const sku = op.sku as NonNullable<typeof op.sku>;
      const requirements = requirementsFor(config, atomicUsdc(sku.usdc));
      const reason =
        unavailableReason(op) ?? (requirements ? null : 'payments.pay_to (PAY_TO) is not configured');
      return {
        sku: sku.id,
        resource: skuUrl(config, op),
        methods: ['POST', 'GET'],
        title: op.title,
        description: op.description,
        mimeType: 'application/json',
        price_usdc: sku.usdc,
        pricing: sku.amount ? 'caller_set' : 'fixed',
        input_schema: jsonSchemaOf(op.input, 'input'),
        input_example: sku.example,
        output_schema: jsonSchemaOf(op.output, 'output'),
        accepts: requirements && !reason ? [requirements] : [],
        available: reason === null,
        unavailable_reason: reason,
        mcp_tool: op.toolName,
        extensions: extensionsOfSku(op),
      };
    }),
    mcp: {
      url: config.mcp_url,
      transport: 'streamable-http',
      x402_transport: X402_MCP_TRANSPORT,
      tools: paid.filter((op) => op.mcp?.includes('public')).map((op) => op.toolName),
    },
  };
}

/**
 * The x402 MCP transport this service follows: payment in `params._meta["x402/payment"]`, payment
 * required as an isError tool result carrying PaymentRequired in structuredContent and
 * content[0].text, settlement in `result._meta["x402/payment-response"]`.
 */
export const X402_MCP_TRANSPORT =
  'https://github.com/coinbase/x402/blob/dd927a26cfefc98c24b3ec38b3a8f204dad0c60d/specs/transports-v2/mcp.md';
