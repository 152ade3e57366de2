/**
 * Paying as x402 clients do, for tests: the stock clients (`@x402/fetch` over v2, `x402Client` with
 * the v1 scheme), and hand-signed EIP-3009 authorizations for the payments a stock client would
 * refuse to make (expired, not yet valid, signed by another key, tampered terms).
 */
import { randomBytes } from 'node:crypto';
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { authorizationTypes } from '@x402/evm';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { getAddress, type Hex, type LocalAccount } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';

export const newAccount = (): LocalAccount => privateKeyToAccount(generatePrivateKey());

/**
 * The stock x402 client (v2 and v1 exact EVM schemes) paying with a viem local account; it pays at
 * most its default $1 per payment unless `maxUsd` raises the cap (`setSpendControls`), as an
 * application buying a 25 USDC spotlight or a featured bid must.
 */
export function stockClient(account: LocalAccount, maxUsd?: number): x402Client {
  const client = new x402Client();
  registerExactEvmScheme(client, { signer: account });
  if (maxUsd !== undefined) client.setSpendControls({ maxAmountPerPayment: `$${maxUsd}` });
  return client;
}

/** `fetch` that pays 402s, as `@x402/fetch` does for any application. */
export const payingFetch = (account: LocalAccount, maxUsd?: number) =>
  wrapFetchWithPayment(fetch, stockClient(account, maxUsd));

/** The v2 PaymentRequired of a 402 response (its PAYMENT-REQUIRED header). */
export function paymentRequiredOf(response: Response): PaymentRequired {
  const header = response.headers.get('payment-required');
  if (!header) throw new Error(`no PAYMENT-REQUIRED header (status ${response.status})`);
  return decodePaymentRequiredHeader(header);
}

export interface AuthorizationTerms {
  from?: Hex;
  to?: string;
  value?: string;
  validAfter?: bigint;
  validBefore?: bigint;
  nonce?: Hex;
}

/**
 * A v2 PaymentPayload for `accepted`, signed by `signer` (the EIP-712 TransferWithAuthorization of
 * specs/schemes/exact/scheme_exact_evm.md), with any term overridden.
 */
export async function signPayment(
  signer: LocalAccount,
  accepted: PaymentRequirements,
  resource: PaymentRequired['resource'],
  terms: AuthorizationTerms = {},
): Promise<PaymentPayload> {
  const now = BigInt(Math.floor(Date.now() / 1000));
  const authorization = {
    from: terms.from ?? signer.address,
    to: getAddress(terms.to ?? accepted.payTo),
    value: terms.value ?? accepted.amount,
    validAfter: (terms.validAfter ?? 0n).toString(),
    validBefore: (terms.validBefore ?? now + BigInt(accepted.maxTimeoutSeconds)).toString(),
    nonce: terms.nonce ?? (`0x${randomBytes(32).toString('hex')}` as Hex),
  };
  const signature = await signer.signTypedData({
    domain: {
      name: accepted.extra.name as string,
      version: accepted.extra.version as string,
      chainId: Number(accepted.network.split(':')[1]),
      verifyingContract: getAddress(accepted.asset),
    },
    types: authorizationTypes,
    primaryType: 'TransferWithAuthorization',
    message: {
      from: getAddress(authorization.from),
      to: authorization.to,
      value: BigInt(authorization.value),
      validAfter: BigInt(authorization.validAfter),
      validBefore: BigInt(authorization.validBefore),
      nonce: authorization.nonce,
    },
  });
  return { x402Version: 2, resource, accepted, payload: { authorization, signature } };
}

export const paymentHeader = (payload: unknown): string =>
  encodePaymentSignatureHeader(payload as PaymentPayload);
