/**
 * Who verifies and settles payments (x402 "facilitator", x402-specification-v2.md section 7).
 *
 * - Embedded (default): `x402Facilitator` with the `exact` EVM scheme of `@x402/evm`, in process.
 *   Verification recovers the EIP-712 signer with viem and checks payee, value, window and asset.
 *   Without `payments.rpc_url` it needs no chain: the asset is known to be the configured USDC
 *   contract, payers are taken as plain keys (a smart-wallet signature cannot be checked offline),
 *   and the transfer simulation is skipped - the payment is recorded `authorized` and the balance is
 *   proven at settlement. With `rpc_url` verification reads the chain (code, simulation), and with
 *   the settler key as well it settles by submitting `transferWithAuthorization`.
 * - Remote: `payments.facilitator_url` through `HTTPFacilitatorClient` (`/verify`, `/settle`).
 *
 * Both answer verify/settle as values; a remote facilitator's HTTP refusal (VerifyError,
 * SettleError) becomes the same value. Only a failure to get an answer throws.
 */
import { x402Facilitator } from '@x402/core/facilitator';
import { type FacilitatorClient, HTTPFacilitatorClient } from '@x402/core/http';
import {
  type PaymentPayload,
  type PaymentRequirements,
  SettleError,
  type SettleResponse,
  VerifyError,
  type VerifyResponse,
} from '@x402/core/types';
import type { PaymentPayloadV1, PaymentRequirementsV1 } from '@x402/core/types/v1';
import { type FacilitatorEvmSigner, toFacilitatorEvmSigner } from '@x402/evm';
import { registerExactEvmScheme } from '@x402/evm/exact/facilitator';
import {
  type Chain,
  createPublicClient,
  createWalletClient,
  defineChain,
  type Hex,
  http,
  publicActions,
  verifyTypedData,
} from 'viem';
import type { Config } from '../config.ts';
import { networkOf, type PaymentNetwork } from './networks.ts';

export type AnyPaymentPayload = PaymentPayload | PaymentPayloadV1;
export type AnyRequirements = PaymentRequirements | PaymentRequirementsV1;

export interface PaymentFacilitator {
  /** `embedded`, or the remote facilitator's URL (stored with each payment). */
  readonly name: string;
  /** Whether `settle` can put a payment on chain now; otherwise verified payments stay `authorized`. */
  readonly settles: boolean;
  verify(payload: AnyPaymentPayload, requirements: AnyRequirements): Promise<VerifyResponse>;
  settle(payload: AnyPaymentPayload, requirements: AnyRequirements): Promise<SettleResponse>;
}

/**
 * Non-empty code standing for the USDC contract when no chain is configured: the exact scheme
 * refuses an asset that is not a deployed contract, and the configured asset is one by definition.
 */
const KNOWN_CONTRACT: Hex = '0xfe';

const noChain = () => Promise.reject(new Error('no chain configured (payments.rpc_url)'));

/** The embedded facilitator's view of the chain when there is none (see the module comment). */
function offlineSigner(network: PaymentNetwork): FacilitatorEvmSigner {
  const usdc = network.usdc.toLowerCase();
  return {
    getAddresses: () => [],
    getCode: async ({ address }) => (address.toLowerCase() === usdc ? KNOWN_CONTRACT : '0x'),
    // Only the transfer simulation of verify reaches here; it is skipped, not faked as a balance.
    readContract: async ({ functionName }) =>
      functionName === 'transferWithAuthorization' ? undefined : noChain(),
    verifyTypedData: (args) => verifyTypedData(args as Parameters<typeof verifyTypedData>[0]),
    writeContract: noChain,
    sendTransaction: noChain,
    waitForTransactionReceipt: noChain,
  };
}

/** The configured network as a viem chain, pointed at `payments.rpc_url`. */
export function chainOf(network: PaymentNetwork, rpcUrl: string): Chain {
  return defineChain({
    id: network.chainId,
    name: network.name,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
}

/**
 * How often viem polls for a receipt (its default is 4 s): Base makes a block every 2 s, and a
 * settlement is answered when its receipt is read.
 */
export const RECEIPT_POLL_MS = 500;

/** A signer on `payments.rpc_url`: reads always, writes with the settler key only. */
function chainSigner(config: Config, network: PaymentNetwork, rpcUrl: string): FacilitatorEvmSigner {
  const chain = chainOf(network, rpcUrl);
  const confirmationTimeoutMs = config.payments.sync_wait_seconds * 1000;
  const key = config.payments.settler_private_key;
  if (key) {
    const client = createWalletClient({
      account: key.account,
      chain,
      transport: http(rpcUrl),
      pollingInterval: RECEIPT_POLL_MS,
    }).extend(publicActions);
    return toFacilitatorEvmSigner(
      {
        address: key.address,
        readContract: (args) => client.readContract(args as Parameters<typeof client.readContract>[0]),
        verifyTypedData: (args) =>
          client.verifyTypedData(args as Parameters<typeof client.verifyTypedData>[0]),
        writeContract: (args) =>
          client.writeContract({
            ...(args as Parameters<typeof client.writeContract>[0]),
            chain,
            account: key.account,
          }),
        sendTransaction: (args) => client.sendTransaction({ ...args, chain, account: key.account }),
        waitForTransactionReceipt: (args) => client.waitForTransactionReceipt(args),
        getCode: (args) => client.getCode(args),
      },
      { confirmationTimeoutMs },
    );
  }
  const client = createPublicClient({ chain, transport: http(rpcUrl), pollingInterval: RECEIPT_POLL_MS });
  return {
    getAddresses: () => [],
    readContract: (args) => client.readContract(args as Parameters<typeof client.readContract>[0]),
    verifyTypedData: (args) => client.verifyTypedData(args as Parameters<typeof client.verifyTypedData>[0]),
    getCode: (args) => client.getCode(args),
    writeContract: () => Promise.reject(new Error('no settler key (PAYMENTS_SETTLER_PRIVATE_KEY)')),
    sendTransaction: () => Promise.reject(new Error('no settler key (PAYMENTS_SETTLER_PRIVATE_KEY)')),
    waitForTransactionReceipt: (args) =>
      client.waitForTransactionReceipt({ ...args, timeout: confirmationTimeoutMs }),
  };
}

export function embeddedFacilitator(config: Config): PaymentFacilitator {
  const network = networkOf(config);
  const rpcUrl = config.payments.rpc_url;
  const signer = rpcUrl ? chainSigner(config, network, rpcUrl) : offlineSigner(network);
  // v2 on the configured network, v1 on every EVM network name (the scheme's own registration).
  const facilitator = registerExactEvmScheme(new x402Facilitator(), { signer, networks: network.caip2 });
  return {
    name: 'embedded',
    settles: rpcUrl !== null && config.payments.settler_private_key !== null,
    verify: (payload, requirements) =>
      facilitator.verify(payload as PaymentPayload, requirements as PaymentRequirements),
    settle: (payload, requirements) =>
      facilitator.settle(payload as PaymentPayload, requirements as PaymentRequirements),
  };
}

export function remoteFacilitator(config: Config, url: string): PaymentFacilitator {
  const client: FacilitatorClient = new HTTPFacilitatorClient({
    url,
    timeoutMs: config.payments.sync_wait_seconds * 1000,
  });
  return {
    name: url,
    settles: true,
    async verify(payload, requirements) {
      try {
        return await client.verify(payload as PaymentPayload, requirements as PaymentRequirements);
      } catch (err) {
        if (err instanceof VerifyError) {
          return {
            isValid: false,
            invalidReason: err.invalidReason ?? 'unexpected_verify_error',
            ...(err.invalidMessage ? { invalidMessage: err.invalidMessage } : {}),
            ...(err.payer ? { payer: err.payer } : {}),
          };
        }
        throw err;
      }
    },
    async settle(payload, requirements) {
      try {
        return await client.settle(payload as PaymentPayload, requirements as PaymentRequirements);
      } catch (err) {
        if (err instanceof SettleError) {
          return {
            success: false,
            errorReason: err.errorReason ?? 'unexpected_settle_error',
            ...(err.errorMessage ? { errorMessage: err.errorMessage } : {}),
            transaction: err.transaction ?? '',
            network: err.network,
            ...(err.payer ? { payer: err.payer } : {}),
          };
        }
        throw err;
      }
    },
  };
}

export function facilitatorFor(config: Config): PaymentFacilitator {
  const url = config.payments.facilitator_url;
  return url ? remoteFacilitator(config, url) : embeddedFacilitator(config);
}
