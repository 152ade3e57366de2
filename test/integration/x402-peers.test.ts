/**
 * The payment test peers themselves (no service): the local chain's USDC double behaves as
 * FiatTokenV2 does for EIP-3009, and the x402 facilitator on loopback verifies and settles payments
 * signed by the stock x402 client on that chain.
 */

import {
  type Address,
  createWalletClient,
  type Hex,
  hashDomain,
  http,
  parseSignature,
  toHex,
  type WalletClient,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { base } from 'viem/chains';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalChain, startLocalChain, USDC } from '../helpers/chain.ts';
import { testUsdcAbi } from '../helpers/contracts/chain-contracts.generated.ts';

const authorizationTypes = {
  TransferWithAuthorization: [
    { name: 'from', type: 'address' },
    { name: 'to', type: 'address' },
    { name: 'value', type: 'uint256' },
    { name: 'validAfter', type: 'uint256' },
    { name: 'validBefore', type: 'uint256' },
    { name: 'nonce', type: 'bytes32' },
  ],
} as const;

let chain: LocalChain;
let settler: WalletClient;

beforeAll(async () => {
  chain = await startLocalChain();
  settler = createWalletClient({
    account: privateKeyToAccount(chain.accounts.settler.privateKey),
    chain: base,
    transport: http(chain.rpcUrl),
  });
});
afterAll(() => chain?.close());

const randomNonce = (): Hex => toHex(crypto.getRandomValues(new Uint8Array(32)));
const now = () => BigInt(Math.floor(Date.now() / 1000));

async function signAuthorization(
  privateKey: Hex,
  message: { from: Address; to: Address; value: bigint; validAfter: bigint; validBefore: bigint; nonce: Hex },
): Promise<Hex> {
  return privateKeyToAccount(privateKey).signTypedData({
    domain: { name: 'USD Coin', version: '2', chainId: 8453, verifyingContract: chain.usdcAddress },
    types: authorizationTypes,
    primaryType: 'TransferWithAuthorization',
    message,
  });
}

async function submit(
  message: Parameters<typeof signAuthorization>[1],
  signature: Hex,
  form: 'vrs' | 'bytes',
) {
  const { from, to, value, validAfter, validBefore, nonce } = message;
  const { v, r, s } = parseSignature(signature);
  const hash = await settler.writeContract({
    account: settler.account ?? null,
    chain: base,
    address: chain.usdcAddress,
    abi: testUsdcAbi,
    functionName: 'transferWithAuthorization',
    args:
      form === 'vrs'
        ? [from, to, value, validAfter, validBefore, nonce, Number(v), r, s]
        : [from, to, value, validAfter, validBefore, nonce, signature],
  });
  return chain.client.waitForTransactionReceipt({ hash });
}

describe('local chain', () => {
  it("is Base (chain id 8453) with USDC's metadata and EIP-712 domain at USDC's address", async () => {
    expect(await chain.client.getChainId()).toBe(8453);
    const read = (
      functionName: 'name' | 'symbol' | 'decimals' | 'version' | 'DOMAIN_SEPARATOR',
    ): Promise<unknown> =>
      chain.client.readContract({ address: chain.usdcAddress, abi: testUsdcAbi, functionName });
    expect(chain.usdcAddress).toBe('0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913');
    expect(await read('name')).toBe('USD Coin');
    expect(await read('symbol')).toBe('USDC');
    expect(await read('decimals')).toBe(6);
    expect(await read('version')).toBe('2');
    expect(await read('DOMAIN_SEPARATOR')).toBe(
      hashDomain({
        domain: { name: 'USD Coin', version: '2', chainId: 8453n, verifyingContract: chain.usdcAddress },
        types: {
          EIP712Domain: [
            { name: 'name', type: 'string' },
            { name: 'version', type: 'string' },
            { name: 'chainId', type: 'uint256' },
            { name: 'verifyingContract', type: 'address' },
          ],
        },
      }),
    );
    expect(await chain.balanceOf(chain.accounts.payer.address)).toBe(100n * USDC);
  });

  it('transferWithAuthorization (v, r, s and bytes forms) moves exactly the value once; a replay reverts', async () => {
    const payer = await chain.newAccount(10n * USDC);
    const payTo = await chain.newAccount();
    for (const form of ['vrs', 'bytes'] as const) {
      const message = {
        from: payer.address,
        to: payTo.address,
        value: 1_250_000n,
        validAfter: 0n,
        validBefore: now() + 300n,
        nonce: randomNonce(),
      };
      const signature = await signAuthorization(payer.privateKey, message);
      const before = await chain.balanceOf(payTo.address);
      expect(await chain.authorizationState(payer.address, message.nonce)).toBe(false);
      expect((await submit(message, signature, form)).status).toBe('success');
      expect((await chain.balanceOf(payTo.address)) - before).toBe(1_250_000n);
      expect(await chain.authorizationState(payer.address, message.nonce)).toBe(true);
      await expect(submit(message, signature, form)).rejects.toThrow(
        'FiatTokenV2: authorization is used or canceled',
      );
    }
    expect(await chain.balanceOf(payer.address)).toBe(10n * USDC - 2_500_000n);
  });

  it('refuses a signature by another key, a changed value, an expired or not yet valid authorization', async () => {
    const payer = await chain.newAccount(10n * USDC);
    const payTo = chain.accounts.payTo.address;
    const message = {
      from: payer.address,
      to: payTo,
      value: USDC,
      validAfter: 0n,
      validBefore: now() + 300n,
    };
    const other = await chain.newAccount();
    const cases: [Parameters<typeof signAuthorization>[1], Hex, string][] = [];
    let m = { ...message, nonce: randomNonce() };
    cases.push([m, await signAuthorization(other.privateKey, m), 'FiatTokenV2: invalid signature']);
    m = { ...message, nonce: randomNonce() };
    cases.push([
      { ...m, value: 2n * USDC },
      await signAuthorization(payer.privateKey, m),
      'invalid signature',
    ]);
    m = { ...message, validBefore: now() - 1n, nonce: randomNonce() };
    cases.push([m, await signAuthorization(payer.privateKey, m), 'FiatTokenV2: authorization is expired']);
    m = { ...message, validAfter: now() + 3600n, nonce: randomNonce() };
    cases.push([
      m,
      await signAuthorization(payer.privateKey, m),
      'FiatTokenV2: authorization is not yet valid',
    ]);
    for (const [msg, signature, reason] of cases) {
      await expect(submit(msg, signature, 'vrs')).rejects.toThrow(reason);
    }
    expect(await chain.balanceOf(payer.address)).toBe(10n * USDC);
  });
});
