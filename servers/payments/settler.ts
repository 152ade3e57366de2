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
 * - Reservations whose process died mid-request are recovered (ledger `recoverStaleReservations`).
 */
import type { PaymentPayload } from '@x402/core/types';
import { eip3009ABI } from '@x402/evm';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { createPublicClient, http, type PublicClient } from 'viem';
import type { Dialect } from '../../db/database.ts';
import type { Database, PaymentRow } from '../../db/schema.ts';
import type { Config } from '../config.ts';
import { PollingWorker } from '../polling-worker.ts';
import { MIN_VALIDITY_SECONDS } from './credential.ts';
import { type AnyRequirements, chainOf, type PaymentFacilitator } from './facilitator.ts';
import { claimForSettlement, recoverStaleReservations, settleClaimed } from './ledger.ts';
import { networkOf } from './networks.ts';

/** A reservation older than this without an outcome belongs to a request whose process stopped. */
export const STALE_RESERVATION_MS = 15 * 60_000;

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

export class Settler extends PollingWorker {
  protected readonly name = 'payment settler';
  private readonly deps: SettlerDeps;
  private readonly authorizationState: AuthorizationState | null;

  constructor(deps: SettlerDeps, authorizationState = chainAuthorizationState(deps.config)) {
    super();
    this.deps = deps;
    this.authorizationState = authorizationState;
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
      new Date(at.getTime() - STALE_RESERVATION_MS).toISOString(),
      at.toISOString(),
    );
    const lease = Math.max(this.deps.config.payments.sync_wait_seconds * 4_000, 60_000);
    const claimed = await claimForSettlement(
      db,
      dialect,
      this.owner,
      at.toISOString(),
      new Date(at.getTime() + lease).toISOString(),
      BATCH,
    );
    let progressed = 0;
    for (const payment of claimed) {
      try {
        if (await this.work(payment)) progressed++;
      } catch (err) {
        // The lease expires and a later tick tries again.
        this.deps.log.error({ err, payment_id: payment.id }, 'payment settlement attempt failed');
      }
    }
    return progressed;
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
