/**
 * The documents of the payment core, as zod schemas (published in OpenAPI and the MCP tool list):
 * the receipt every paid response carries, the x402 objects the adapters send, referral balances.
 */
import { z } from 'zod';

export const PaymentStatus = z
  .enum(['reserved', 'authorized', 'settled', 'failed', 'released', 'reconciling'])
  .describe(
    'reserved: verified, the request is running; authorized: verified and delivered, not yet on chain ' +
      '(settled later by the service, before the authorization expires); settled: on chain; failed: ' +
      'settlement refused or the authorization expired unsettled; released: the request failed, nothing ' +
      'was charged and the authorization may be used again; reconciling: the settlement outcome is not ' +
      'known yet and is being read from the chain.',
  );
export type PaymentStatus = z.infer<typeof PaymentStatus>;

/** What a paid response says about its payment; `success`, `transaction`, `network`, `payer` are x402's SettlementResponse. */
export const PaymentReceipt = z
  .object({
    success: z.boolean().describe('x402 SettlementResponse: true when the payment was accepted.'),
    id: z.uuid().describe('Payment id: GET {public_api_url}/payments/{id} returns this receipt.'),
    status: PaymentStatus,
    network: z.string().describe('eip155:8453 (x402 v2), or base for an x402 v1 payer.'),
    transaction: z.string().describe('Settlement transaction hash; empty until the payment is on chain.'),
    payer: z.string().describe('The paying address (authorization.from).'),
    payment_identifier: z
      .string()
      .optional()
      .describe(
        'The id the payer chose for this request (x402 payment-identifier extension), when it sent one: ' +
          'a retry carrying it gets this result and receipt instead of paying again.',
      ),
    extensions: z
      .record(z.string(), z.unknown())
      .optional()
      .describe(
        'x402 SettlementResponse extensions: `sign-in-with-x` ({address, supportedChains, statement}) on SKUs ' +
          'whose result is read again (scan, embodiment, boost) - this wallet reads it later by signing in.',
      ),
  })
  .describe('Receipt of a paid call (PAYMENT-RESPONSE, MCP _meta["x402/payment-response"]).');
export type PaymentReceipt = z.infer<typeof PaymentReceipt>;

/** x402 v2 PaymentRequirements of one way to pay (x402-specification-v2.md section 5.1.2). */
export const PaymentRequirementsDoc = z.object({
  scheme: z.literal('exact'),
  network: z.string().describe('CAIP-2 network, eip155:8453 for Base.'),
  amount: z.string().describe('Price in atomic units of the asset (USDC: 6 decimals).'),
  asset: z.string().describe('USDC contract address.'),
  payTo: z.string().describe('Address that receives the payment.'),
  maxTimeoutSeconds: z.number().int(),
  extra: z.object({ name: z.string(), version: z.string() }).describe('EIP-712 domain of the asset.'),
});

/** x402 v2 PaymentRequired, plus this service's error `code` and `message` (MCP tool results). */
export const PaymentRequiredDoc = z
  .object({
    x402Version: z.literal(2),
    error: z.string().optional().describe('Why payment is required or was refused (x402 error reason).'),
    resource: z.object({
      url: z.string(),
      description: z.string().optional(),
      mimeType: z.string().optional(),
    }),
    accepts: z.array(PaymentRequirementsDoc),
    extensions: z
      .record(z.string(), z.unknown())
      .optional()
      .describe(
        "x402 extensions: `bazaar` (the call's input - an example and its JSON Schema - and output, for " +
          'discovery indexers; x402 extensions/bazaar); `sign-in-with-x` (a CAIP-122 challenge: {info: {domain, ' +
          'uri, version, nonce, issuedAt, expirationTime, statement, resources}, supportedChains, schema}) on what ' +
          'the paying wallet reads again by signing in, and on the reads that take it (accepts empty there).',
      ),
    code: z.string().optional().describe('Stable error code of this service (payment_required, ...).'),
    message: z.string().optional(),
    errors: z.array(z.object({ field: z.string(), message: z.string() })).optional(),
  })
  .describe(
    'x402 PaymentRequired (transport MCP: an isError result carrying it; transport HTTP: the ' +
      'base64 PAYMENT-REQUIRED header of a 402).',
  );

export const PaymentId = z.uuid().describe('Payment id from a receipt.');

export const ReferralHandle = z
  .string()
  .trim()
  .toLowerCase()
  .regex(
    /^[a-z0-9][a-z0-9_-]{2,31}$/,
    'must be 3 to 32 letters, digits, "-" or "_", starting with a letter or digit',
  )
  .describe('Referral handle, case-insensitive (stored lower-case).');

export const ReferralBalance = z.object({
  handle: z.string(),
  balance_usdc: z.number().describe('Credited share of settled payments that named this handle, in USDC.'),
  pending_usdc: z
    .number()
    .describe('Share of payments verified but not yet settled (authorized or reconciling), in USDC.'),
  count: z.number().int().describe('Settled payments credited to the handle.'),
  since: z.iso.datetime().describe('When the handle was registered.'),
});
export type ReferralBalance = z.infer<typeof ReferralBalance>;
