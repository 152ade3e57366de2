import { type Hex, hashMessage, hexToBytes, toHex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import type { AnyOperation } from '../../servers/operation.ts';
import { recoverSigner } from '../../servers/payments/facilitator.ts';
import { atomicUsdc } from '../../servers/payments/networks.ts';
import { amountOf } from '../../servers/sku-terms.ts';

const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

describe('payment amounts', () => {
  it('converts catalog prices to atomic USDC exactly, never through float multiplication', () => {
    expect(atomicUsdc(0.1)).toBe(100_000n);
    expect(atomicUsdc(0.3)).toBe(300_000n);
    expect(atomicUsdc(1)).toBe(1_000_000n);
    expect(atomicUsdc(650)).toBe(650_000_000n);
    expect(atomicUsdc(0.000001)).toBe(1n);
    expect(() => atomicUsdc(0.0000001)).toThrow(/more than 6 decimals/);
    expect(() => atomicUsdc(-1)).toThrow();
  });

  it('charges the catalog price, or the amount the caller set with the catalog price as its floor', () => {
    const fixed = { name: 'fixed', sku: { id: 'scan', usdc: 0.1 } } as unknown as AnyOperation;
    expect(amountOf(fixed, {})).toBe(100_000n);
    const bid = {
      name: 'bid',
      sku: {
        id: 'featured-bid',
        usdc: 1,
        amount: (input: { bid_usdc: number; days: number }) => input.bid_usdc * input.days,
      },
    } as unknown as AnyOperation;
    expect(amountOf(bid, { bid_usdc: 2.5, days: 3 })).toBe(7_500_000n);
    expect(amountOf(bid, { bid_usdc: 0.2, days: 1 })).toBe(1_000_000n);
  });
});

describe('signature recovery of the embedded facilitator', () => {
  it('recovers the signer of an EIP-191/712 style 65-byte signature, and nobody else', async () => {
    const account = privateKeyToAccount(generatePrivateKey());
    const digest = hashMessage('pay 0.10 USDC');
    const signature = await account.sign({ hash: digest });
    expect(recoverSigner(digest, signature)).toBe(account.address.toLowerCase());
    expect(recoverSigner(hashMessage('pay 1.00 USDC'), signature)).not.toBe(account.address.toLowerCase());
  });

  it('refuses what USDC would refuse at settlement: a malleable (high s) twin, a bad v, a short signature', async () => {
    const account = privateKeyToAccount(generatePrivateKey());
    const digest = hashMessage('pay');
    const signature = await account.sign({ hash: digest });
    const bytes = hexToBytes(signature);
    const s = BigInt(toHex(bytes.subarray(32, 64)));
    const twin = new Uint8Array(bytes);
    twin.set(hexToBytes(toHex(N - s, { size: 32 })), 32);
    twin[64] = (bytes[64] as number) === 27 ? 28 : 27;
    expect(recoverSigner(digest, toHex(twin))).toBeNull();
    const badV = new Uint8Array(bytes);
    badV[64] = 29;
    expect(recoverSigner(digest, toHex(badV))).toBeNull();
    expect(recoverSigner(digest, signature.slice(0, 100) as Hex)).toBeNull();
  });
});
