/**
 * The key that submits `transferWithAuthorization` for the embedded facilitator. Read from
 * `PAYMENTS_SETTLER_PRIVATE_KEY` only; the key never reaches a log line or a JSON document - only
 * its address does.
 */
import { inspect } from 'node:util';
import type { Hex, PrivateKeyAccount } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';

export class SettlerKey {
  readonly account: PrivateKeyAccount;
  #queue: Promise<unknown> = Promise.resolve();

  private constructor(account: PrivateKeyAccount) {
    this.account = account;
  }

  /** A 32-byte secp256k1 private key as hex (with or without 0x); null when it is not one. */
  static parse(text: string): SettlerKey | null {
    const trimmed = text.trim();
    const hex = (trimmed.startsWith('0x') ? trimmed : `0x${trimmed}`) as Hex;
    if (!/^0x[0-9a-fA-F]{64}$/.test(hex)) return null;
    try {
      return new SettlerKey(privateKeyToAccount(hex));
    } catch {
      return null; // zero or beyond the curve order
    }
  }

  /**
   * Runs `send` (choose a nonce, sign, broadcast) after every earlier one of this process: a
   * settlement and a credit transfer sent at the same moment would otherwise take the same nonce.
   */
  exclusive<T>(send: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(send, send);
    this.#queue = run.catch(() => undefined);
    return run;
  }

  get address(): Hex {
    return this.account.address;
  }

  toJSON(): { address: string } {
    return { address: this.account.address };
  }

  [inspect.custom](): string {
    return `SettlerKey(${this.account.address})`;
  }
}
