/**
 * x402 payment messages built from plain terms - pure functions, so that the 402, `/.well-known/x402.json`
 * and the catalog can never disagree. What a SKU is offered for (`PaymentTerms`) is projected from
 * the registry by `servers/sku-terms.ts`; nothing here knows an operation.
 *
 * v2 (x402-specification-v2.md section 5): scheme `exact`, CAIP-2 network, `amount` in atomic units
 * (exactly the price), asset USDC with its EIP-712 domain in `extra`. v1 clients get the same terms
 * in v1 form (`maxAmountRequired`, network by name, resource fields inline).
 */
import type { PaymentRequired, PaymentRequirements, ResourceInfo } from '@x402/core/types';
import type { PaymentRequiredV1, PaymentRequirementsV1 } from '@x402/core/types/v1';
import type { Config } from '../config.ts';
import { networkOf, paymentNetworks } from './networks.ts';

/**
 * What one paid call is offered for: plain data, the payment core's whole view of the call. Built
 * per call by the operation layer (`termsOf` in `servers/sku-terms.ts`).
 */
export interface PaymentTerms {
  /** The catalog SKU (`llms-txt`): recorded in the ledger, bound into the request's fingerprint. */
  sku: string;
  /** Amount (atomic USDC), pay-to, network, asset and its EIP-712 domain, max timeout. */
  requirements: PaymentRequirements;
  /** The resource the call is sold at, over the transport it came by (REST URL or MCP tool). */
  resource: ResourceInfo;
  /** Every name the SKU is sold under: a payment made for another resource never pays this one. */
  resources: readonly string[];
  /** The 402's x402 extensions (Bazaar, payment-identifier). */
  extensions: Record<string, unknown>;
  /** x402 v1 `outputSchema`: the call's input and output as JSON Schemas. */
  outputSchema: Record<string, unknown>;
  /** false when the result is personal data: cleared once delivered (`Sku.keepsResult`). */
  keepsResult: boolean;
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
 * The same terms for an x402 v1 client (specs/x402-specification-v1.md): network by name,
 * `maxAmountRequired`, the resource inline, and `outputSchema` describing the call.
 */
export function v1Requirements(terms: PaymentTerms): PaymentRequirementsV1 {
  const { requirements, resource } = terms;
  const network = Object.values(paymentNetworks).find((n) => n.caip2 === requirements.network);
  return {
    scheme: requirements.scheme,
    network: (network?.name ?? requirements.network) as PaymentRequirementsV1['network'],
    maxAmountRequired: requirements.amount,
    resource: resource.url,
    description: resource.description ?? '',
    mimeType: resource.mimeType ?? 'application/json',
    outputSchema: terms.outputSchema,
    payTo: requirements.payTo,
    maxTimeoutSeconds: requirements.maxTimeoutSeconds,
    asset: requirements.asset,
    extra: requirements.extra,
  };
}

export function paymentRequiredV1(accepts: PaymentRequirementsV1, error: string): PaymentRequiredV1 {
  return { x402Version: 1, error, accepts: [accepts] };
}
