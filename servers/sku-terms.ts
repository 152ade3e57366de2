/**
 * What a paid SKU is offered for, projected from the registry: the plain terms the payment core
 * receives (`PaymentTerms`), and the names, amounts and x402 extensions every document that
 * publishes a price reads - the 402, `/.well-known/x402.json`, the catalog - so none can disagree.
 */
import type { ResourceInfo } from '@x402/core/types';
import { BAZAAR, bazaarResourceServerExtension, declareDiscoveryExtension } from '@x402/extensions/bazaar';
import { declarePaymentIdentifierExtension, PAYMENT_IDENTIFIER } from '@x402/extensions/payment-identifier';
import { SIGN_IN_WITH_X } from '@x402/extensions/sign-in-with-x';
import type { z } from 'zod';
import type { Config } from './config.ts';
import { jsonSchemaOf } from './json-schema.ts';
import { atomicUsdc } from './payments/networks.ts';
import { type PaymentTerms, requirementsFor } from './payments/requirements.ts';

/**
 * The part of a registry operation (`Operation` in `operation.ts`) its terms are projected from:
 * declared here so that this module does not import the operation layer that calls it.
 */
export interface PricedOperation {
  name: string;
  title: string;
  toolName: string;
  input: z.ZodType;
  output: z.ZodType;
  http?: { path: string; method: string } | undefined;
  sku?:
    | {
        id: string;
        usdc: number;
        example: Record<string, unknown>;
        // biome-ignore lint/suspicious/noExplicitAny: the input type is the operation's
        amount?: ((input: any) => number) | undefined;
        keepsResult?: boolean | undefined;
      }
    | undefined;
}

/** The transports a call comes by (`RequestInfo.via` in `operation.ts`). */
export type Via = 'rest' | 'mcp' | 'a2a';

/** The paid REST resource of a SKU: `{site_url}/api/public/x402/<sku>`. */
export const skuUrl = (config: Config, op: PricedOperation): string =>
  `${config.site_url}${op.http?.path ?? ''}`;

/**
 * Every name a SKU is sold under - its REST URL and its MCP tool (`mcp://tool/<name>`, as the x402
 * MCP transport's examples name it, specs/transports-v2/mcp.md) - for binding a payment to what it
 * was offered for: a payment made for one SKU never pays another, whatever their prices.
 */
export const skuResources = (config: Config, op: PricedOperation): readonly string[] => [
  skuUrl(config, op),
  `mcp://tool/${op.toolName}`,
];

/** What is paid for, over the transport the call came by. */
export function resourceOf(config: Config, op: PricedOperation, via: Via): ResourceInfo {
  return {
    url: skuResources(config, op)[via === 'mcp' ? 1 : 0] as string,
    description: op.title,
    mimeType: 'application/json',
  };
}

/**
 * The atomic amount of one call with this validated input: the catalog price, or the amount the
 * caller set for SKUs that let them (never below the catalog price, which is their floor). Without
 * an input (a bodiless probe): the floor.
 */
export function amountOf(op: PricedOperation, input: unknown): bigint {
  const sku = op.sku;
  if (!sku) throw new Error(`${op.name} is not a paid operation`);
  const floor = atomicUsdc(sku.usdc);
  if (!sku.amount || input === undefined) return floor;
  const asked = atomicUsdc(sku.amount(input));
  return asked > floor ? asked : floor;
}

/**
 * The plain terms of one call of `op` with this validated input (undefined: the floor price),
 * over the transport it came by; null when no `PAY_TO` is configured.
 */
export function termsOf(config: Config, op: PricedOperation, via: Via, input: unknown): PaymentTerms | null {
  const sku = op.sku;
  if (!sku) throw new Error(`${op.name} is not a paid operation`);
  const requirements = requirementsFor(config, amountOf(op, input));
  if (!requirements) return null;
  return {
    sku: sku.id,
    requirements,
    resource: resourceOf(config, op, via),
    resources: skuResources(config, op),
    extensions: extensionsOf(op, via),
    outputSchema: callSchemaOf(op),
    keepsResult: sku.keepsResult !== false,
  };
}

/**
 * The x402 extensions this service speaks, as `/.well-known/x402.json` lists them: `bazaar` and
 * `payment-identifier` on every SKU's 402 (`extensionsOf`); `sign-in-with-x` on the reads of what a
 * wallet paid for (`payments/sign-in.ts`) and in the receipts of the SKUs that leave one (`Sku.readLater`).
 */
export const supportedExtensions = [BAZAAR.key, PAYMENT_IDENTIFIER, SIGN_IN_WITH_X] as const;

/** The x402 extensions the 402 of `op` carries. */
export const extensionsOfSku = (op: PricedOperation): string[] => Object.keys(extensionsOf(op, 'rest'));

const extensionsByOp = new WeakMap<PricedOperation, Record<Via, Record<string, unknown>>>();

/**
 * The 402's `extensions`, computed once per SKU:
 * - Bazaar discovery (x402 `extensions/bazaar`), so a facilitator that settles a payment - or an
 *   indexer that probes with an unpaid request - catalogs the SKU with its input and output: the
 *   registry's schemas, the same as the catalog's and the OpenAPI document's. Over REST a JSON `POST`
 *   (or `GET` with query parameters), over MCP the tool. Built with the reference
 *   `declareDiscoveryExtension` and enriched with the method as x402's resource server does
 *   (`bazaarResourceServerExtension.enrichDeclaration`).
 * - payment-identifier (x402 `extensions/payment-identifier`), optional: a payer-chosen id that makes
 *   a retry after a lost answer return the first result instead of paying again.
 */
export function extensionsOf(op: PricedOperation, via: Via): Record<string, unknown> {
  let byVia = extensionsByOp.get(op);
  if (!byVia) {
    const inputSchema = jsonSchemaOf(op.input, 'input');
    const output = { schema: jsonSchemaOf(op.output, 'output') };
    const method = op.http?.method ?? 'POST';
    const input = op.sku?.example ?? {};
    const paymentIdentifier = { [PAYMENT_IDENTIFIER]: declarePaymentIdentifierExtension(false) };
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
      ...paymentIdentifier,
    };
    const mcp = {
      ...declareDiscoveryExtension({
        toolName: op.toolName,
        description: op.title,
        transport: 'streamable-http',
        inputSchema,
        example: input,
        output,
      }),
      ...paymentIdentifier,
    };
    byVia = { rest, a2a: rest, mcp };
    extensionsByOp.set(op, byVia);
  }
  return byVia[via];
}

const callSchemas = new WeakMap<PricedOperation, Record<string, unknown>>();

/** v1 `outputSchema`: the request body and the response of the call, as JSON Schemas (computed once). */
function callSchemaOf(op: PricedOperation): Record<string, unknown> {
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
