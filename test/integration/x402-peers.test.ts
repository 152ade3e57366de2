/**
 * The payment test peers themselves (no service): the local chain's USDC double behaves as
 * FiatTokenV2 does for EIP-3009, and the x402 facilitator on loopback verifies and settles payments
 * signed by the stock x402 client on that chain.
 */

import { x402Client } from '@x402/core/client';
import { FacilitatorTimeoutError, HTTPFacilitatorClient } from '@x402/core/http';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
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
import {
  FAULT_SETTLE_REASON,
  FAULT_VERIFY_REASON,
  startFacilitator,
  type TestFacilitator,
} from '../helpers/x402-facilitator.ts';

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
let facilitator: TestFacilitator;

beforeAll(async () => {
  chain = await startLocalChain();
  settler = createWalletClient({
    account: privateKeyToAccount(chain.accounts.settler.privateKey),
    chain: base,
    transport: http(chain.rpcUrl),
  });
  facilitator = await startFacilitator(chain);
});
afterAll(async () => {
  await facilitator?.close();
  await chain?.close();
});

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

/** A payment requirement as the service will publish it (x402 v2, exact, USDC on Base). */
function requirement(amount: bigint, payTo: Address = chain.accounts.payTo.address): PaymentRequirements {
  return {
    scheme: 'exact',
    network: 'eip155:8453',
    amount: amount.toString(),
    asset: chain.usdcAddress,
    payTo,
    maxTimeoutSeconds: 300,
    extra: { name: 'USD Coin', version: '2' },
  };
}

/** The stock x402 client signing with a viem local account, as a paying agent does. */
async function pay(privateKey: Hex, accepted: PaymentRequirements): Promise<PaymentPayload> {
  const client = new x402Client();
  registerExactEvmScheme(client, { signer: privateKeyToAccount(privateKey) });
  return client.createPaymentPayload({
    x402Version: 2,
    resource: {
      url: 'http://127.0.0.1/api/public/x402/test',
      description: 'test',
      mimeType: 'application/json',
    },
    accepts: [accepted],
  });
}

async function post(path: '/verify' | '/settle', paymentPayload: unknown, paymentRequirements: unknown) {
  const response = await fetch(`${facilitator.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      x402Version: (paymentPayload as { x402Version: number }).x402Version,
      paymentPayload,
      paymentRequirements,
    }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** The EIP-3009 authorization inside an exact EVM payload (numbers as decimal strings). */
interface ExactAuthorization {
  from: Address;
  to: Address;
  value: string;
  validAfter: string;
  validBefore: string;
  nonce: Hex;
}
const authorizationOf = (payload: PaymentPayload) =>
  (payload.payload as { authorization: ExactAuthorization }).authorization;

describe('x402 facilitator', () => {
  it('GET /supported lists exact on eip155:8453 (v2) and base (v1) with its signer', async () => {
    const response = await fetch(`${facilitator.url}/supported`);
    expect(response.status).toBe(200);
    const body = (await response.json()) as { kinds: unknown[]; signers: Record<string, string[]> };
    expect(body.kinds).toEqual(
      expect.arrayContaining([
        { x402Version: 2, scheme: 'exact', network: 'eip155:8453' },
        { x402Version: 1, scheme: 'exact', network: 'base' },
      ]),
    );
    expect(body.kinds).toHaveLength(2);
    expect(Object.values(body.signers).flat()).toContain(facilitator.signer);
  });

  it('verifies and settles a payment signed by the stock x402 client: the amount moves exactly, once', async () => {
    const payer = await chain.newAccount(5n * USDC);
    const payTo = (await chain.newAccount()).address;
    const accepted = requirement(100_000n, payTo);
    const payload = await pay(payer.privateKey, accepted);
    const { nonce } = authorizationOf(payload);

    expect(await post('/verify', payload, accepted)).toEqual({
      status: 200,
      body: { isValid: true, payer: payer.address },
    });
    const settled = await post('/settle', payload, accepted);
    expect(settled.status).toBe(200);
    expect(settled.body).toMatchObject({ success: true, network: 'eip155:8453', payer: payer.address });
    const receipt = await chain.client.getTransactionReceipt({ hash: settled.body.transaction as Hex });
    expect(receipt.status).toBe('success');
    expect(receipt.from.toLowerCase()).toBe(facilitator.signer.toLowerCase());
    expect(await chain.balanceOf(payTo)).toBe(100_000n);
    expect(await chain.balanceOf(payer.address)).toBe(5n * USDC - 100_000n);
    expect(await chain.authorizationState(payer.address, nonce)).toBe(true);

    // The same authorization again: refused by verify and by settle, and no money moves.
    expect((await post('/verify', payload, accepted)).body).toMatchObject({
      isValid: false,
      invalidReason: 'invalid_exact_evm_nonce_already_used',
    });
    expect((await post('/settle', payload, accepted)).body).toMatchObject({
      success: false,
      errorReason: 'invalid_exact_evm_nonce_already_used',
      transaction: '',
    });
    expect(await chain.balanceOf(payTo)).toBe(100_000n);
  });

  it('refuses at /verify a payload for another amount, another payTo, a forged signature or an unfunded payer', async () => {
    const payer = await chain.newAccount(USDC);
    const accepted = requirement(100_000n);
    const payload = await pay(payer.privateKey, accepted);
    // The payer's authorization signed by another key.
    const forged = structuredClone(payload);
    const exact = forged.payload as { signature: Hex; authorization: ExactAuthorization };
    const { value, validAfter, validBefore, ...rest } = exact.authorization;
    exact.signature = await signAuthorization((await chain.newAccount()).privateKey, {
      ...rest,
      value: BigInt(value),
      validAfter: BigInt(validAfter),
      validBefore: BigInt(validBefore),
    });
    const poor = await chain.newAccount(10_000n);
    const cases: [PaymentPayload, PaymentRequirements, string][] = [
      [payload, requirement(200_000n), 'invalid_exact_evm_payload_authorization_value_mismatch'],
      [payload, requirement(100_000n, poor.address), 'invalid_exact_evm_recipient_mismatch'],
      [forged, accepted, 'invalid_exact_evm_signature'],
      [await pay(poor.privateKey, accepted), accepted, 'invalid_exact_evm_insufficient_balance'],
    ];
    for (const [paymentPayload, paymentRequirements, invalidReason] of cases) {
      expect((await post('/verify', paymentPayload, paymentRequirements)).body).toMatchObject({
        isValid: false,
        invalidReason,
      });
    }
    expect(await chain.balanceOf(payer.address)).toBe(USDC);
    expect(await chain.authorizationState(payer.address, authorizationOf(payload).nonce)).toBe(false);
  });

  it('serves x402 v1 (network base, maxAmountRequired) as well', async () => {
    const payer = await chain.newAccount(USDC);
    const payTo = (await chain.newAccount()).address;
    const accepted = {
      scheme: 'exact',
      network: 'base',
      maxAmountRequired: '250000',
      resource: 'http://127.0.0.1/api/public/x402/test',
      description: 'test',
      mimeType: 'application/json',
      payTo,
      maxTimeoutSeconds: 300,
      asset: chain.usdcAddress,
      extra: { name: 'USD Coin', version: '2' },
    };
    const client = new x402Client();
    registerExactEvmScheme(client, { signer: privateKeyToAccount(payer.privateKey) });
    const payload = await client.createPaymentPayload({
      x402Version: 1,
      accepts: [accepted],
    } as unknown as Parameters<typeof client.createPaymentPayload>[0]);
    expect(payload.x402Version).toBe(1);
    expect((await post('/verify', payload, accepted)).body).toMatchObject({ isValid: true });
    expect((await post('/settle', payload, accepted)).body).toMatchObject({ success: true, network: 'base' });
    expect(await chain.balanceOf(payTo)).toBe(250_000n);
  });

  describe('through HTTPFacilitatorClient, with faults', () => {
    const client = (timeoutMs = 30_000) => new HTTPFacilitatorClient({ url: facilitator.url, timeoutMs });
    const withFaults = async (faults: TestFacilitator['faults'], run: () => Promise<void>) => {
      Object.assign(facilitator.faults, faults);
      try {
        await run();
      } finally {
        facilitator.faults.verify = undefined;
        facilitator.faults.settle = undefined;
      }
    };

    it('verifies and settles without faults', async () => {
      const payer = await chain.newAccount(USDC);
      const accepted = requirement(10_000n);
      const payload = await pay(payer.privateKey, accepted);
      expect(await client().verify(payload, accepted)).toMatchObject({ isValid: true });
      expect(await client().settle(payload, accepted)).toMatchObject({ success: true });
      expect(await chain.authorizationState(payer.address, authorizationOf(payload).nonce)).toBe(true);
    });

    it('verify "invalid" answers isValid false; settle "fail" and "error" move no money', async () => {
      const payer = await chain.newAccount(USDC);
      const accepted = requirement(10_000n);
      const payload = await pay(payer.privateKey, accepted);
      await withFaults({ verify: 'invalid' }, async () => {
        expect(await client().verify(payload, accepted)).toMatchObject({
          isValid: false,
          invalidReason: FAULT_VERIFY_REASON,
        });
      });
      await withFaults({ settle: 'fail' }, async () => {
        expect(await client().settle(payload, accepted)).toMatchObject({
          success: false,
          errorReason: FAULT_SETTLE_REASON,
        });
      });
      await withFaults({ settle: 'error' }, async () => {
        await expect(client().settle(payload, accepted)).rejects.toThrow('Facilitator settle failed (500)');
      });
      expect(await chain.authorizationState(payer.address, authorizationOf(payload).nonce)).toBe(false);
      expect(await chain.balanceOf(payer.address)).toBe(USDC);
      expect(facilitator.requests.filter((r) => r.fault).map((r) => [r.path, r.fault])).toEqual(
        expect.arrayContaining([
          ['/verify', 'invalid'],
          ['/settle', 'fail'],
          ['/settle', 'error'],
        ]),
      );
    });

    it('settle "hang" times out with nothing on chain; "hang-after-settle" times out with the payment on chain', async () => {
      const payer = await chain.newAccount(USDC);
      const accepted = requirement(10_000n);
      const first = await pay(payer.privateKey, accepted);
      await withFaults({ settle: 'hang' }, async () => {
        await expect(client(500).settle(first, accepted)).rejects.toBeInstanceOf(FacilitatorTimeoutError);
      });
      expect(await chain.authorizationState(payer.address, authorizationOf(first).nonce)).toBe(false);

      const second = await pay(payer.privateKey, accepted);
      await withFaults({ settle: 'hang-after-settle' }, async () => {
        await expect(client(500).settle(second, accepted)).rejects.toBeInstanceOf(FacilitatorTimeoutError);
      });
      expect(await chain.authorizationState(payer.address, authorizationOf(second).nonce)).toBe(true);
      expect(await chain.balanceOf(payer.address)).toBe(USDC - 10_000n);
      const hung = facilitator.requests.filter((r) => r.fault === 'hang-after-settle').at(-1);
      expect(hung?.result).toMatchObject({ success: true });
      expect(hung?.status).toBeUndefined();
    });
  });
});
