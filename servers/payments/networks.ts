/**
 * The networks the service is paid on: USDC on Base. x402 v2 names networks by CAIP-2 id, v1 by
 * name; the EIP-712 domain of each USDC contract is what payers sign against (x402
 * specs/schemes/exact/scheme_exact_evm.md; addresses and domains in shared/notes/x402.md).
 */
import type { Config } from '../config.ts';

export interface PaymentNetwork {
  /** Configuration name, also the x402 v1 network name. */
  name: Config['payments']['network'];
  /** CAIP-2 id, the x402 v2 network. */
  caip2: `eip155:${number}`;
  chainId: number;
  /** USDC contract (EIP-3009 `transferWithAuthorization`). */
  usdc: `0x${string}`;
  /** EIP-712 domain name and version of that contract (`extra` of the requirements). */
  domain: { name: string; version: string };
}

export const paymentNetworks: Record<PaymentNetwork['name'], PaymentNetwork> = {
  base: {
    name: 'base',
    caip2: 'eip155:8453',
    chainId: 8453,
    usdc: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
    domain: { name: 'USD Coin', version: '2' },
  },
  'base-sepolia': {
    name: 'base-sepolia',
    caip2: 'eip155:84532',
    chainId: 84532,
    usdc: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
    domain: { name: 'USDC', version: '2' },
  },
};

export const networkOf = (config: Config): PaymentNetwork => paymentNetworks[config.payments.network];

/** USDC has 6 decimals. */
export const USDC_DECIMALS = 6;

/**
 * A USDC price (a catalog number such as 0.1 or 650) in atomic units, exactly: the decimal text of
 * the number is read digit by digit, never multiplied as a float (0.1 * 1e6 is 100000.00000000001).
 */
/** `amount` atomic USDC as a decimal string without trailing zeros: 4000000n -> "4", 10000n -> "0.01". */
export function usdcText(amount: bigint): string {
  const unit = 10n ** BigInt(USDC_DECIMALS);
  const fraction = (amount % unit).toString().padStart(USDC_DECIMALS, '0').replace(/0+$/, '');
  return fraction ? `${amount / unit}.${fraction}` : `${amount / unit}`;
}

export function atomicUsdc(usdc: number): bigint {
  if (!Number.isFinite(usdc) || usdc < 0) throw new Error(`not a USDC amount: ${usdc}`);
  const text = usdc.toFixed(USDC_DECIMALS + 2);
  const [whole = '0', fraction = ''] = text.split('.');
  if (/[1-9]/.test(fraction.slice(USDC_DECIMALS))) {
    throw new Error(`${usdc} USDC has more than ${USDC_DECIMALS} decimals`);
  }
  return BigInt(whole) * 10n ** BigInt(USDC_DECIMALS) + BigInt(fraction.slice(0, USDC_DECIMALS));
}

/** Atomic units back to a USDC number (exact for every amount below 2^53 atomic units). */
export const usdcOf = (atomic: bigint | number): number => Number(atomic) / 10 ** USDC_DECIMALS;
