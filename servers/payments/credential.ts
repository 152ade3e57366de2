/**
 * The payment a request carries, decoded and checked against the requirements it must meet - pure
 * functions that return a value: the payment, or why it cannot pay (STYLE.md 7).
 *
 * Transports (x402 specs/transports-v2): HTTP v2 sends a base64 PaymentPayload in
 * `PAYMENT-SIGNATURE`, HTTP v1 in `X-PAYMENT`; MCP sends the PaymentPayload object in
 * `params._meta["x402/payment"]`. The payload of scheme `exact` on EVM is an EIP-3009
 * `TransferWithAuthorization` and its signature (specs/schemes/exact/scheme_exact_evm.md).
 */
import { decodePaymentSignatureHeader } from '@x402/core/http';
import { parsePaymentPayload } from '@x402/core/schemas';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import type { PaymentPayloadV1 } from '@x402/core/types/v1';
import { authorizationTypes } from '@x402/evm';
import { extractAndValidatePaymentIdentifier, PAYMENT_IDENTIFIER } from '@x402/extensions/payment-identifier';
import { getAddress, verifyTypedData } from 'viem';
import { z } from 'zod';
import type { FieldError } from '../errors.ts';
import { paymentNetworks } from './networks.ts';

/** What an adapter received, untouched: the core decodes it. */
export type PaymentCredential =
  | { transport: 'http'; header: 'PAYMENT-SIGNATURE' | 'X-PAYMENT'; value: string }
  | { transport: 'mcp'; value: unknown };

/** How the credential is named in errors: the header, or the MCP `_meta` key. */
export const credentialName = (credential: PaymentCredential): string =>
  credential.transport === 'http' ? credential.header : '_meta.x402/payment';

const hex = (bytes: number) => new RegExp(`^0x[0-9a-fA-F]{${bytes * 2}}$`);
const uintText = z.string().regex(/^\d{1,78}$/, 'must be an unsigned integer as decimal text');

/** EIP-3009 authorization and signature: the `payload` of scheme exact on EVM. */
export const ExactEvmPayload = z.object({
  signature: z.string().regex(/^0x(?:[0-9a-fA-F]{2})+$/, 'must be a hex signature'),
  authorization: z.object({
    from: z.string().regex(hex(20), 'must be an address'),
    to: z.string().regex(hex(20), 'must be an address'),
    value: uintText,
    validAfter: uintText,
    validBefore: uintText,
    nonce: z.string().regex(hex(32), 'must be 32 bytes of hex'),
  }),
});
export type ExactEvmPayload = z.infer<typeof ExactEvmPayload>;

export interface DecodedPayment {
  version: 1 | 2;
  /**
   * The resource the payer says it pays for: v2 `resource.url` (optional in a v2 PaymentPayload,
   * x402-specification-v2.md section 5.2); a v1 PaymentPayload has no such field, but one that
   * carries `resource` anyway is held to it. Not covered by the signature: the binding is the
   * payer's statement, which a payment made for another resource contradicts.
   */
  resource: string | undefined;
  /** The PaymentPayload as received (what the facilitator verifies and settles). */
  payload: PaymentPayload | PaymentPayloadV1;
  exact: ExactEvmPayload;
  /** The payer's lower-case address and nonce: the reservation key with network and asset. */
  payer: string;
  nonce: string;
}

/** Why a payment cannot pay: the x402 error reason, our detail, the failing fields. */
export interface Refusal {
  reason: string;
  detail: string;
  errors: FieldError[];
}

export type Decoded = { ok: true; payment: DecodedPayment } | { ok: false; refusal: Refusal };

const refuse = (reason: string, field: string, message: string): { ok: false; refusal: Refusal } => ({
  ok: false,
  refusal: { reason, detail: `${field}: ${message}`, errors: [{ field, message }] },
});

/**
 * The x402 version a credential answers: the version of the terms its transport offered. Over HTTP
 * the 402 offers v2 terms in `PAYMENT-REQUIRED` (answered in `PAYMENT-SIGNATURE`) and v1 terms in
 * its body (answered in `X-PAYMENT`); over MCP the tool result offers the v2 PaymentRequired only
 * (specs/transports-v2/mcp.md), so `_meta["x402/payment"]` carries v2. One rule for both transports.
 */
export function versionCarried(credential: PaymentCredential): 1 | 2 {
  return credential.transport === 'http' && credential.header === 'X-PAYMENT' ? 1 : 2;
}

/** Where a credential of the other version goes, for the refusal's message. */
function otherPlace(credential: PaymentCredential, version: 1 | 2): string {
  if (credential.transport === 'mcp') return 'answer the v2 terms of the tool result instead';
  return `send this v${version} payload in ${version === 2 ? 'PAYMENT-SIGNATURE' : 'X-PAYMENT'}`;
}

/**
 * Decodes a credential. A header that is not base64 JSON, a payload that is not an x402
 * PaymentPayload, an x402 version its transport does not carry (`versionCarried`: a v2 payload in
 * `X-PAYMENT`, a v1 payload in `PAYMENT-SIGNATURE` or in MCP `_meta`) or a payload that is not an
 * EIP-3009 authorization is refused naming the field.
 */
export function decodeCredential(credential: PaymentCredential): Decoded {
  const name = credentialName(credential);
  let raw: unknown;
  if (credential.transport === 'http') {
    try {
      raw = decodePaymentSignatureHeader(credential.value.trim());
    } catch {
      return refuse('invalid_payload', name, 'is not base64-encoded JSON (an x402 PaymentPayload)');
    }
  } else {
    raw = credential.value;
  }
  const envelope = parsePaymentPayload(raw);
  if (!envelope.success) {
    const issue = envelope.error.issues[0];
    const field = [name, ...(issue?.path ?? []).map(String)].join('.');
    const version = (raw as { x402Version?: unknown } | null)?.x402Version;
    if (version !== 1 && version !== 2) {
      return refuse('invalid_x402_version', `${name}.x402Version`, 'must be 1 or 2');
    }
    return refuse('invalid_payload', field, issue?.message ?? 'is not an x402 PaymentPayload');
  }
  const payload = envelope.data as PaymentPayload | PaymentPayloadV1;
  const version = payload.x402Version as 1 | 2;
  const expected = versionCarried(credential);
  if (version !== expected) {
    return refuse(
      'invalid_x402_version',
      `${name}.x402Version`,
      `${name} carries x402 v${expected} payloads; ${otherPlace(credential, version)}`,
    );
  }
  const exact = ExactEvmPayload.safeParse(payload.payload);
  if (!exact.success) {
    const issue = exact.error.issues[0];
    const field = [name, 'payload', ...(issue?.path ?? []).map(String)].join('.');
    return refuse('invalid_payload', field, issue?.message ?? 'is not an EIP-3009 authorization');
  }
  const resource = version === 2 ? (payload as PaymentPayload).resource?.url : v1Resource(raw);
  return {
    ok: true,
    payment: {
      version,
      resource,
      payload,
      exact: exact.data,
      payer: exact.data.authorization.from.toLowerCase(),
      nonce: exact.data.authorization.nonce.toLowerCase(),
    },
  };
}

/** A `resource` a v1 payload carries outside the v1 schema (its URL, or a ResourceInfo's). */
function v1Resource(raw: unknown): string | undefined {
  const resource = (raw as { resource?: unknown }).resource;
  if (typeof resource === 'string') return resource;
  const url = (resource as { url?: unknown } | null | undefined)?.url;
  return typeof url === 'string' ? url : undefined;
}

/**
 * The facilitator's rule: an authorization must stay valid at least this long to be settled. It is
 * also the clock skew allowed past `maxTimeoutSeconds` (the margin of x402's reference verifier,
 * typescript/packages/mechanisms/evm/src/exact/facilitator/eip3009.ts).
 */
export const MIN_VALIDITY_SECONDS = 6;

const sameAddress = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/**
 * Checks that the payment offers exactly these terms, before any signature is verified: the
 * resource it was made for (one of `resources`, the names of what is sold here), the accepted
 * requirements (v2) or scheme and network (v1), then the authorization's payee, value and validity
 * window - which may not outlast `maxTimeoutSeconds` (plus the clock skew x402's verifier allows): an
 * authorization valid for years is refused. Each mismatch names its field and uses the x402 error
 * reason (x402-specification-v2.md section 9).
 */
export function matchRequirements(
  payment: DecodedPayment,
  requirements: PaymentRequirements,
  resources: readonly string[],
  name: string,
  nowSeconds: number,
): Refusal | null {
  const fail = (reason: string, field: string, message: string) => refuse(reason, field, message).refusal;
  if (payment.resource !== undefined && !resources.includes(payment.resource)) {
    return fail(
      'invalid_payment_requirements',
      payment.version === 2 ? `${name}.resource.url` : `${name}.resource`,
      `names another resource: this payment was made for ${payment.resource}, not ${resources[0]}`,
    );
  }
  if (payment.payload.x402Version === 2) {
    const accepted = (payment.payload as PaymentPayload).accepted;
    const at = `${name}.accepted`;
    if (accepted.scheme !== requirements.scheme)
      return fail('invalid_scheme', `${at}.scheme`, `must be ${requirements.scheme}`);
    if (accepted.network !== requirements.network)
      return fail('invalid_network', `${at}.network`, `must be ${requirements.network}`);
    if (!sameAddress(accepted.asset, requirements.asset))
      return fail('invalid_payment_requirements', `${at}.asset`, `must be ${requirements.asset} (USDC)`);
    if (!sameAddress(accepted.payTo, requirements.payTo))
      return fail(
        'invalid_exact_evm_payload_recipient_mismatch',
        `${at}.payTo`,
        `must be ${requirements.payTo}`,
      );
    if (accepted.amount !== requirements.amount)
      return fail(
        'invalid_exact_evm_payload_authorization_value_mismatch',
        `${at}.amount`,
        `must be ${requirements.amount} (the price in atomic units)`,
      );
    if (accepted.maxTimeoutSeconds !== requirements.maxTimeoutSeconds)
      return fail(
        'invalid_payment_requirements',
        `${at}.maxTimeoutSeconds`,
        `must be ${requirements.maxTimeoutSeconds}`,
      );
    for (const key of ['name', 'version'] as const) {
      if (accepted.extra?.[key] !== requirements.extra[key])
        return fail(
          'invalid_payment_requirements',
          `${at}.extra.${key}`,
          `must be ${requirements.extra[key]}`,
        );
    }
  } else {
    const v1 = payment.payload as PaymentPayloadV1;
    const network = Object.values(paymentNetworks).find((n) => n.caip2 === requirements.network);
    if (v1.scheme !== requirements.scheme)
      return fail('invalid_scheme', `${name}.scheme`, `must be ${requirements.scheme}`);
    if ((v1.network as string) !== network?.name)
      return fail('invalid_network', `${name}.network`, `must be ${network?.name ?? requirements.network}`);
  }
  const auth = payment.exact.authorization;
  const at = `${name}.payload.authorization`;
  if (!sameAddress(auth.to, requirements.payTo))
    return fail('invalid_exact_evm_payload_recipient_mismatch', `${at}.to`, `must be ${requirements.payTo}`);
  if (auth.value !== requirements.amount)
    return fail(
      'invalid_exact_evm_payload_authorization_value_mismatch',
      `${at}.value`,
      `must be exactly ${requirements.amount} (the price in atomic units)`,
    );
  if (BigInt(auth.validAfter) > BigInt(nowSeconds))
    return fail(
      'invalid_exact_evm_payload_authorization_valid_after',
      `${at}.validAfter`,
      `is in the future (${auth.validAfter} > ${nowSeconds}): the authorization is not valid yet`,
    );
  if (BigInt(auth.validBefore) < BigInt(nowSeconds + MIN_VALIDITY_SECONDS))
    return fail(
      'invalid_exact_evm_payload_authorization_valid_before',
      `${at}.validBefore`,
      `has passed or leaves less than ${MIN_VALIDITY_SECONDS} s (${auth.validBefore}): the authorization has expired`,
    );
  const latest = BigInt(nowSeconds + requirements.maxTimeoutSeconds + MIN_VALIDITY_SECONDS);
  if (BigInt(auth.validBefore) > latest)
    return fail(
      'invalid_exact_evm_payload_authorization_valid_before',
      `${at}.validBefore`,
      `is too far ahead (${auth.validBefore} > ${latest}): an authorization may stay valid for at most ` +
        `maxTimeoutSeconds (${requirements.maxTimeoutSeconds} s) from now`,
    );
  return null;
}

/**
 * The payment identifier the payer chose (x402 payment-identifier extension: the PaymentPayload's
 * `extensions["payment-identifier"].info.id`, 16-128 letters, digits, `-` or `_`), read and checked
 * by the reference implementation; null when the payment carries none (v1 payloads carry no
 * extensions). A malformed one is refused naming the field.
 */
export function paymentIdentifierOf(
  payment: DecodedPayment,
  name: string,
): { ok: true; id: string | null } | { ok: false; refusal: Refusal } {
  if (payment.version !== 2) return { ok: true, id: null };
  const { id, validation } = extractAndValidatePaymentIdentifier(payment.payload as PaymentPayload);
  const field = `${name}.extensions.${PAYMENT_IDENTIFIER}.info.id`;
  if (!validation.valid)
    return refuse('invalid_payload', field, validation.errors?.join('; ') ?? 'is not a payment identifier');
  return { ok: true, id };
}

/**
 * Whether the authorization's signature is the payer's: EIP-712 `TransferWithAuthorization` over the
 * asset's domain recovers to `authorization.from` (an account without code; a smart wallet is
 * checked by the facilitator only). What proves that a retry naming a payment identifier comes from
 * the wallet that paid, without verifying - or ever settling - the retry's authorization.
 */
export async function signedByPayer(
  payment: DecodedPayment,
  requirements: PaymentRequirements,
  chainId: number,
): Promise<boolean> {
  const { authorization, signature } = payment.exact;
  try {
    return await verifyTypedData({
      address: getAddress(authorization.from),
      domain: {
        name: requirements.extra.name as string,
        version: requirements.extra.version as string,
        chainId,
        verifyingContract: getAddress(requirements.asset),
      },
      types: authorizationTypes,
      primaryType: 'TransferWithAuthorization',
      message: {
        from: getAddress(authorization.from),
        to: getAddress(authorization.to),
        value: BigInt(authorization.value),
        validAfter: BigInt(authorization.validAfter),
        validBefore: BigInt(authorization.validBefore),
        nonce: authorization.nonce as `0x${string}`,
      },
      signature: signature as `0x${string}`,
    });
  } catch {
    return false;
  }
}
