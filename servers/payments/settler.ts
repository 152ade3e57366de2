/**
 * The settler: a background job (PollingWorker, any number of processes) that finishes payments
 * the request could not.
 *
 * - `authorized` payments (verified and delivered while no chain was configured) are settled once
 *   the facilitator can settle, before their authorization expires (`validBefore`); one that
 *   expired unsettled is `failed` (nothing was collected).
 * - `reconciling` payments (settlement outcome unknown) are decided by the chain: EIP-3009
 *   `authorizationState(from, nonce)` on the token says whether the authorization was used. Used:
 *   `settled`. Unused and still valid: submitted again (the nonce makes a second transfer
 *   impossible). Unused and expired: `failed`. Without `payments.rpc_url` they wait.
 * - Reservations whose process died mid-request (their lease, renewed while the request runs, ran
 *   out) are recovered: released, or reconciled when a result was stored (ledger
 *   `recoverStaleReservations`).
 * - Credits (`credits.ts`) are paid back as USDC transfers from the settler key once their source
 *   payment is settled, and voided when it failed. Each transfer is signed once and stored before it
 *   is broadcast: a process that stops mid-way leaves the same bytes to rebroadcast, so a credit is
 *   never transferred twice (the transaction's nonce makes a second inclusion impossible).
 */
import type { PaymentPayload } from '@x402/core/types';
import { eip3009ABI } from '@x402/evm';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import {
  BaseError,
  createPublicClient,
  createWalletClient,
  encodeFunctionData,
  erc20Abi,
  type Hex,
  http,
  keccak256,
  NonceTooLowError,
  type PublicClient,
  publicActions,
  TransactionReceiptNotFoundError,
  WaitForTransactionReceiptTimeoutError,
} from 'viem';
import type { Dialect } from '../../db/database.ts';
import { leaseOf } from '../../db/leases.ts';
import type { Database, MarketplaceCreditRow, PaymentRow } from '../../db/schema.ts';
import type { Config } from '../config.ts';
import { PollingWorker } from '../polling-worker.ts';
import { MIN_VALIDITY_SECONDS } from './credential.ts';
import { claimCredits, moveCredit, voidUncollected } from './credits.ts';
import { type AnyRequirements, chainOf, type PaymentFacilitator, RECEIPT_POLL_MS } from './facilitator.ts';
import {
  claimForSettlement,
  recoverStaleReservations,
  STALE_RESERVATION_MS,
  settleClaimed,
} from './ledger.ts';
import { networkOf } from './networks.ts';

const BATCH = 20;

export interface SettlerDeps {
  db: Kysely<Database>;
  dialect: Dialect;
  config: Config;
  log: Logger;
  now: () => Date;
  facilitator: PaymentFacilitator;
}

/** Reads the EIP-3009 state of an authorization: true when its nonce was used on chain. */
export type AuthorizationState = (asset: string, from: string, nonce: string) => Promise<boolean>;

export function chainAuthorizationState(config: Config): AuthorizationState | null {
  const rpcUrl = config.payments.rpc_url;
  if (!rpcUrl) return null;
  const client: PublicClient = createPublicClient({
    chain: chainOf(networkOf(config), rpcUrl),
    transport: http(rpcUrl),
  });
  return async (asset, from, nonce) =>
    (await client.readContract({
      address: asset as `0x${string}`,
      abi: eip3009ABI,
      functionName: 'authorizationState',
      args: [from as `0x${string}`, nonce as `0x${string}`],
    })) as boolean;
}

/** Sends USDC from the settler key: what pays credits back. */
export interface CreditTransfers {
  /**
   * Signs a transfer of `amount` atomic USDC to `to`, hands the signed bytes to `store` (which
   * records them durably; false: do not send) and broadcasts them - all while no other transaction
   * of the settler key is being sent from this process, so the nonce it signed stays free.
   */
  send(to: string, amount: number, store: (raw: Hex) => Promise<boolean>): Promise<Broadcast>;
  /** Broadcasts signed bytes again. */
  broadcast(raw: Hex): Promise<Broadcast>;
  /** The receipt's status once mined, or null when not (yet) mined within the wait. */
  receipt(hash: Hex, waitMs: number): Promise<'success' | 'reverted' | null>;
}

/** `nonce_taken`: another transaction used the nonce, so these bytes can never be included. */
export type Broadcast = 'sent' | 'not_stored' | 'nonce_taken' | 'error';

export function chainCreditTransfers(config: Config): CreditTransfers | null {
  const rpcUrl = config.payments.rpc_url;
  const key = config.payments.settler_private_key;
  if (!rpcUrl || !key) return null;
  const network = networkOf(config);
  const chain = chainOf(network, rpcUrl);
  const client = createWalletClient({
    account: key.account,
    chain,
    transport: http(rpcUrl),
    pollingInterval: RECEIPT_POLL_MS,
  }).extend(publicActions);
  const broadcast = async (raw: Hex): Promise<Broadcast> => {
    try {
      await client.sendRawTransaction({ serializedTransaction: raw });
      return 'sent';
    } catch (err) {
      const nonceTaken =
        err instanceof BaseError &&
        err.walk((e) => e instanceof NonceTooLowError) instanceof NonceTooLowError;
      return nonceTaken || /nonce too low/i.test(String((err as Error).message)) ? 'nonce_taken' : 'error';
    }
  };
  return {
    send: (to, amount, store) =>
      key.exclusive(async () => {
        const request = await client.prepareTransactionRequest({
          account: key.account,
          chain,
          to: network.usdc as Hex,
          data: encodeFunctionData({
            abi: erc20Abi,
            functionName: 'transfer',
            args: [to as Hex, BigInt(amount)],
          }),
        });
        const raw = await client.signTransaction(request as Parameters<typeof client.signTransaction>[0]);
        if (!(await store(raw))) return 'not_stored';
        return broadcast(raw);
      }),
    broadcast,
    async receipt(hash, waitMs) {
      try {
        const receipt =
          waitMs > 0
            ? await client.waitForTransactionReceipt({ hash, timeout: waitMs })
            : await client.getTransactionReceipt({ hash });
        return receipt.status;
      } catch (err) {
        if (
          err instanceof TransactionReceiptNotFoundError ||
          err instanceof WaitForTransactionReceiptTimeoutError
        )
          return null;
        throw err;
      }
    },
  };
}

export class Settler extends PollingWorker {
  protected readonly name = 'payment settler';
  private readonly deps: SettlerDeps;
  private readonly authorizationState: AuthorizationState | null;
  private readonly transfers: CreditTransfers | null;

  constructor(
    deps: SettlerDeps,
    authorizationState = chainAuthorizationState(deps.config),
    transfers = chainCreditTransfers(deps.config),
  ) {
    super();
    this.deps = deps;
    this.authorizationState = authorizationState;
    this.transfers = transfers;
  }

  protected get pollIntervalMs(): number {
    return this.deps.config.payments.settler_poll_interval_ms;
  }

  protected get log(): Logger {
    return this.deps.log;
  }

  async tick(): Promise<number> {
    const { db, dialect, now } = this.deps;
    const at = now();
    await recoverStaleReservations(
      db,
      at.toISOString(),
      new Date(at.getTime() - STALE_RESERVATION_MS).toISOString(),
    );
    const lease = Math.max(this.deps.config.payments.sync_wait_seconds * 4_000, 60_000);
    const claimed = await claimForSettlement(db, dialect, leaseOf(this.owner, at, lease, BATCH));
    let progressed = 0;
    for (const payment of claimed) {
      try {
        if (await this.work(payment)) progressed++;
      } catch (err) {
        // The lease expires and a later tick tries again.
        this.deps.log.error({ err, payment_id: payment.id }, 'payment settlement attempt failed');
      }
    }
    await voidUncollected(db, at.toISOString());
    if (this.transfers) progressed += await this.payCredits(this.transfers, lease);
    return progressed;
  }

  /** Pays owed credits whose source payment is settled; finishes transfers a stopped process left. */
  private async payCredits(transfers: CreditTransfers, lease: number): Promise<number> {
    const { db, dialect, now } = this.deps;
    const at = now();
    const claimed = await claimCredits(db, dialect, leaseOf(this.owner, at, lease, BATCH));
    let progressed = 0;
    for (const credit of claimed) {
      try {
        if (await this.payCredit(transfers, credit)) progressed++;
      } catch (err) {
        this.deps.log.error({ err, credit_id: credit.id }, 'credit transfer attempt failed');
      }
    }
    return progressed;
  }

  private async payCredit(transfers: CreditTransfers, credit: MarketplaceCreditRow): Promise<boolean> {
    const now = () => this.deps.now().toISOString();
    const waitMs = Math.max(1, this.deps.config.payments.sync_wait_seconds) * 1000;
    let sending = credit;
    let sent: Broadcast;
    if (credit.status === 'owed') {
      sent = await transfers.send(credit.payer, credit.amount, async (raw) => {
        const hash = keccak256(raw);
        const stored = await moveCredit(
          this.deps.db,
          credit,
          { status: 'sending', transaction_hash: hash, raw_transaction: raw },
          now(),
          true,
        );
        if (stored) sending = { ...credit, status: 'sending', transaction_hash: hash, raw_transaction: raw };
        return stored;
      });
      if (sent === 'not_stored') return false;
    } else {
      sent = (await transfers.receipt(credit.transaction_hash as Hex, 0))
        ? 'sent'
        : await transfers.broadcast(credit.raw_transaction as Hex);
    }
    const hash = sending.transaction_hash as Hex;
    const status = await transfers.receipt(hash, sent === 'nonce_taken' ? 0 : waitMs);
    if (status === 'success') {
      const moved = await moveCredit(
        this.deps.db,
        sending,
        { status: 'paid', transaction_hash: hash },
        now(),
      );
      if (moved) this.deps.log.info({ credit_id: credit.id, transaction: hash }, 'credit paid');
      return moved;
    }
    if (status === 'reverted') {
      // The settler key holds too little USDC, most likely: owed again, once its lease runs out.
      this.deps.log.warn({ credit_id: credit.id, transaction: hash }, 'credit transfer reverted');
      await moveCredit(this.deps.db, sending, { status: 'owed', error: 'transfer reverted' }, now(), true);
      return false;
    }
    if (sent === 'nonce_taken') {
      // Another transaction of the key took the nonce and this one was not mined: it never will be.
      return moveCredit(this.deps.db, sending, { status: 'owed', error: 'nonce taken; signed again' }, now());
    }
    return false; // not mined yet: the lease runs out and a later tick reads the receipt again
  }

  /** Moves one claimed payment on; false when it must wait (nothing can decide it yet). */
  private async work(payment: PaymentRow): Promise<boolean> {
    const nowSeconds = Math.floor(this.deps.now().getTime() / 1000);
    const expired = payment.valid_before < nowSeconds + MIN_VALIDITY_SECONDS;
    const { facilitator } = this.deps;
    const used = this.authorizationState
      ? await this.authorizationState(payment.asset, payment.payer, payment.nonce)
      : null;

    if (used === true)
      return this.move(payment, { status: 'settled', transaction: payment.transaction_hash });
    if (payment.status === 'reconciling' && used === null) return this.wait(payment);
    // Not used on chain (or, for an authorized payment without a chain to ask, never submitted).
    if (expired) {
      return this.move(payment, {
        status: 'failed',
        error:
          payment.status === 'authorized'
            ? 'authorization expired before it could be settled'
            : `authorization expired unsettled (${payment.error ?? 'settlement outcome unknown'})`,
      });
    }
    if (!facilitator.settles) return this.wait(payment);
    const settled = await facilitator
      .settle(
        JSON.parse(payment.payload) as PaymentPayload,
        JSON.parse(payment.requirements) as AnyRequirements,
      )
      .catch((err: unknown) => {
        this.deps.log.warn({ err, payment_id: payment.id }, 'settlement outcome unknown; reconciling');
        return null;
      });
    if (settled?.success) return this.move(payment, { status: 'settled', transaction: settled.transaction });
    const reason = settled?.errorReason ?? 'settlement outcome unknown';
    if (!settled || reason === 'settlement_pending' || !this.authorizationState) {
      return this.move(payment, {
        status: 'reconciling',
        transaction: settled?.transaction || null,
        error: reason,
      });
    }
    // A definite refusal, and the chain says the authorization is unused: it cannot be collected.
    return this.move(payment, { status: 'failed', error: reason });
  }

  private async move(payment: PaymentRow, to: Parameters<typeof settleClaimed>[2]): Promise<boolean> {
    const moved = await settleClaimed(this.deps.db, payment, to, this.deps.now().toISOString());
    if (moved)
      this.deps.log.info({ payment_id: payment.id, from: payment.status, to: to.status }, 'payment moved');
    return moved;
  }

  /** Nothing can decide it now: it keeps its lease, so it is looked at again when the lease ends. */
  private async wait(_payment: PaymentRow): Promise<boolean> {
    return false;
  }
}
