/**
 * Who verifies and settles payments (x402 "facilitator", x402-specification-v2.md section 7).
 *
 * - Embedded (default): `x402Facilitator` with the `exact` EVM scheme of `@x402/evm`, in process.
 *   Verification recovers the EIP-712 signer with viem and checks payee, value, window and asset.
 *   Without `payments.rpc_url` it needs no chain (`offlineSigner`): the signature is recovered
 *   locally, the asset is known to be the configured USDC contract, and the transfer simulation is
 *   skipped - the payment is recorded `authorized` and the balance is proven at settlement. With `rpc_url` verification reads the chain (code, simulation), and with
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
import { recover } from 'tiny-secp256k1';
import {
  type Chain,
  createPublicClient,
  createWalletClient,
  defineChain,
  type Hex,
  hexToBytes,
  http,
  keccak256,
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
  /**
   * Rejects when a peer that verification needs does not answer within `PROBE_TIMEOUT_MS`: the
   * remote facilitator (`GET /supported`), or the chain the embedded one reads (`eth_blockNumber`).
   * Absent when nothing outside the process is needed (the embedded facilitator without a chain).
   */
  probe?(): Promise<void>;
}

/** How long a probe of a payment peer may take before the peer counts as down. */
export const PROBE_TIMEOUT_MS = 3_000;

/** A JSON-RPC round trip to the chain; rejects when it does not answer (in time). */
function chainProbe(network: PaymentNetwork, rpcUrl: string): () => Promise<void> {
  const client = createPublicClient({
    chain: chainOf(network, rpcUrl),
    transport: http(rpcUrl, { timeout: PROBE_TIMEOUT_MS, retryCount: 0 }),
  });
  return async () => {
    await client.getBlockNumber({ cacheTime: 0 });
  };
}

/** Non-empty code: what the offline signer answers for every address (see `offlineSigner`). */
const OFFLINE_CODE: Hex = '0xfe';

/** ERC-1271 `isValidSignature` answers: the magic value, or anything else for "invalid". */
const ERC1271_VALID: Hex = '0x1626ba7e';
const ERC1271_INVALID: Hex = '0xffffffff';

/** Half the secp256k1 group order: a larger `s` is malleable, and USDC's ECRecover refuses it. */
const HALF_N = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0n;

/**
 * The address whose key made this 65-byte `r || s || v` signature over `digest`, or null. libsecp256k1
 * (tiny-secp256k1's WebAssembly build) recovers the key in a fraction of the time of viem's
 * JavaScript recovery, which bounded the embedded facilitator's throughput (`npm run bench`).
 */
export function recoverSigner(digest: Hex, signature: Hex): string | null {
  const bytes = hexToBytes(signature);
  if (bytes.length !== 65) return null;
  const v = (bytes[64] as number) >= 27 ? (bytes[64] as number) - 27 : (bytes[64] as number);
  if (v > 1) return null;
  const s = BigInt(`0x${Buffer.from(bytes.subarray(32, 64)).toString('hex')}`);
  if (s > HALF_N) return null;
  let key: Uint8Array | null;
  try {
    key = recover(hexToBytes(digest), bytes.subarray(0, 64), v as 0 | 1, false);
  } catch {
    return null;
  }
  return key ? `0x${keccak256(key.subarray(1)).slice(-40)}` : null;
}

const noChain = () => Promise.reject(new Error('no chain configured (payments.rpc_url)'));

/**
 * The embedded facilitator's view of the chain when there is none. The exact scheme asks the chain
 * for code at the asset (it must be a contract: the configured USDC is one) and at the payer, then
 * checks the signature: by ECDSA recovery for an account without code, by ERC-1271
 * `isValidSignature` for one with code. Offline every address answers code, and `isValidSignature`
 * is answered by ECDSA recovery here (`recoverSigner`), so that the scheme's own checks run and the
 * signature is recovered once, natively. A smart-wallet payer cannot be checked without a chain and
 * is refused. The transfer simulation is skipped, not faked as a balance.
 */
function offlineSigner(): FacilitatorEvmSigner {
  return {
    getAddresses: () => [],
    getCode: async () => OFFLINE_CODE,
    readContract: async ({ address, functionName, args }) => {
      if (functionName === 'transferWithAuthorization') return undefined;
      if (functionName === 'isValidSignature') {
        const [digest, signature] = (args ?? []) as [Hex, Hex];
        return recoverSigner(digest, signature) === address.toLowerCase() ? ERC1271_VALID : ERC1271_INVALID;
      }
      return noChain();
    },
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
  const confirmationTimeoutMs = Math.max(1, config.payments.sync_wait_seconds) * 1000;
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
          key.exclusive(() =>
            client.writeContract({
              ...(args as Parameters<typeof client.writeContract>[0]),
              chain,
              account: key.account,
            }),
          ),
        sendTransaction: (args) =>
          key.exclusive(() => client.sendTransaction({ ...args, chain, account: key.account })),
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
  const signer = rpcUrl ? chainSigner(config, network, rpcUrl) : offlineSigner();
  // v2 on the configured network, v1 on every EVM network name (the scheme's own registration).
  const facilitator = registerExactEvmScheme(new x402Facilitator(), { signer, networks: network.caip2 });
  return {
    name: 'embedded',
    settles: rpcUrl !== null && config.payments.settler_private_key !== null,
    ...(rpcUrl ? { probe: chainProbe(network, rpcUrl) } : {}),
    verify: (payload, requirements) =>
      facilitator.verify(payload as PaymentPayload, requirements as PaymentRequirements),
    settle: (payload, requirements) =>
      facilitator.settle(payload as PaymentPayload, requirements as PaymentRequirements),
  };
}

export function remoteFacilitator(config: Config, url: string): PaymentFacilitator {
  const client: FacilitatorClient = new HTTPFacilitatorClient({
    url,
    timeoutMs: Math.max(1, config.payments.sync_wait_seconds) * 1000,
  });
  return {
    name: url,
    settles: true,
    async probe() {
      const res = await fetch(`${url.replace(/\/$/, '')}/supported`, {
        signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
      });
      await res.arrayBuffer();
      if (!res.ok) throw new Error(`facilitator /supported answered ${res.status}`);
    },
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
