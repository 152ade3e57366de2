/**
 * The paid call, in the x402 reference order (verify, run, settle, respond), called once from
 * `invokeOperation` for every adapter:
 *
 *   input (validated by the caller) -> availability (503 sku_unavailable) -> the payment peers
 *   answer (503 service_unavailable: no 402 that could not be completed) -> price -> no payment:
 *   the SKU's rules (`admit`), 402 | decode, match the terms, replay?, the SKU's rules, verify -> reserve (payer, nonce) durably -> run the handler ->
 *   settle (or record `authorized`) -> respond with the result and its receipt.
 *
 * One authorization pays for one execution: the ledger row is the reservation (ledger.ts). A
 * replay of a finished payment gets the stored result and receipt; a replay while it runs, or of an
 * authorization that paid for another request, is refused 402 payment_already_used. A handler
 * failure releases the authorization (nothing is settled). A refused settlement answers 402 and the
 * result is not delivered; an unknown outcome (timeout) is delivered as `reconciling` and the
 * settler reads the chain - never settled twice, never silently re-run.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { PaymentPayload, PaymentRequirements, ResourceInfo, SettleResponse } from '@x402/core/types';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Dialect } from '../../db/database.ts';
import type { Database, PaymentRow } from '../../db/schema.ts';
import type { Config } from '../config.ts';
import { type ErrorCode, invalid, ServiceError } from '../errors.ts';
import { fingerprint } from '../idempotency.ts';
import type { AnyOperation, OperationContext } from '../operation.ts';
import { openJson, paymentResultPlace, type SecretBox, sealJson } from '../secrets.ts';
import {
  credentialName,
  type DecodedPayment,
  decodeCredential,
  matchRequirements,
  type PaymentCredential,
  type Refusal,
} from './credential.ts';
import { type AnyRequirements, facilitatorFor, type PaymentFacilitator } from './facilitator.ts';
import {
  findByAuthorization,
  findHandle,
  findPayment,
  forgetResult,
  type NewPayment,
  type Outcome,
  type ReservationLease,
  recordOutcome,
  recoverStaleReservations,
  releasePayment,
  renewReservation,
  reservePayment,
  reuseReleased,
  STALE_RESERVATION_MS,
  storeResult,
} from './ledger.ts';
import { atomicUsdc, paymentNetworks, usdcText } from './networks.ts';
import {
  amountOf,
  discoveryExtensionsOf,
  paymentRequired,
  paymentRequiredV1,
  requirementsFor,
  resourceOf,
  skuResources,
  v1Requirements,
} from './requirements.ts';
import { type PaymentReceipt, ReferralHandle } from './schemas.ts';
import { SIGN_IN_WITH_X, type SignInWithX } from './sign-in.ts';

export interface PaymentsDeps {
  db: Kysely<Database>;
  dialect: Dialect;
  config: Config;
  log: Logger;
  now: () => Date;
  /** Another facilitator than the configured one (tests, benchmarks). */
  facilitator?: PaymentFacilitator;
  /**
   * Seals the results kept for replay (`SECRETS_KEY`): they can hold secrets handed to the payer
   * once (a private scan's read token, a booking's status link).
   */
  secrets: SecretBox;
  /** x402 sign-in-with-x: the 402 and receipt of a SKU read again later declare it (`sign-in.ts`). */
  signIn?: SignInWithX;
}

/** What the adapters hand over and read back for one paid call (`ctx.payment`). */
export interface PaymentContext {
  /** The payment as received: `PAYMENT-SIGNATURE` / `X-PAYMENT` header, or MCP `_meta["x402/payment"]`. */
  credential: PaymentCredential | undefined;
  /** The referral handle the call named (`ref`), taken out of the input before validation. */
  ref?: unknown;
  /** The payment the handler runs charged to (set before it runs). */
  id?: string;
  payer?: string;
  /** Set once the call is paid: the adapters send it (`PAYMENT-RESPONSE`, `_meta["x402/payment-response"]`). */
  receipt?: PaymentReceipt;
  /** x402 version the payer spoke: the receipt header is `PAYMENT-RESPONSE` (2) or `X-PAYMENT-RESPONSE` (1). */
  version?: 1 | 2;
}

/** How long a probe that found the payment peers answering is trusted. */
const PEER_UP_TTL_MS = 10_000;
/** How long a probe that found them down is trusted (then the next paid call asks again). */
const PEER_DOWN_TTL_MS = 1_000;
/** What a 503 for a payment peer that does not answer tells the caller to wait (seconds). */
const PEER_RETRY_AFTER_S = 5;

/** Share of a payment as parts per million, so that credits are exact integers of atomic USDC. */
const PPM = 1_000_000n;

export class PaymentsService {
  readonly facilitator: PaymentFacilitator;
  private readonly deps: PaymentsDeps;
  /** This process in reservation tokens (host, pid, a random suffix), for the logs of whoever reads a row. */
  private readonly owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  /** The last probe of the payment peers (`peersUp`). */
  private peer: { up: boolean; until: number; probing: Promise<boolean> | null } = {
    up: true,
    until: 0,
    probing: null,
  };

  constructor(deps: PaymentsDeps) {
    this.deps = deps;
    this.facilitator = deps.facilitator ?? facilitatorFor(deps.config);
  }

  /**
   * Whether the peers verification needs answer (the remote facilitator, or the chain the embedded
   * one reads; always true for the embedded facilitator without a chain). A probe's verdict is
   * trusted for `PEER_UP_TTL_MS` when they answered, `PEER_DOWN_TTL_MS` when not; concurrent calls
   * share one probe. A verify or settle that got no answer makes the next call probe again.
   */
  private async peersUp(): Promise<boolean> {
    if (!this.facilitator.probe) return true;
    if (performance.now() < this.peer.until) return this.peer.up;
    this.peer.probing ??= this.facilitator
      .probe()
      .then(
        () => true,
        (err: unknown) => {
          this.deps.log.warn({ err, facilitator: this.facilitator.name }, 'payment peer does not answer');
          return false;
        },
      )
      .then((up) => {
        this.peer = {
          up,
          until: performance.now() + (up ? PEER_UP_TTL_MS : PEER_DOWN_TTL_MS),
          probing: null,
        };
        return up;
      });
    return this.peer.probing;
  }

  /** A verify or settle got no answer: the next paid call probes the peers again before any 402. */
  private peerFailed(): void {
    this.peer.until = 0;
  }

  /** Why no paid SKU can run on this deployment, or null. */
  unavailable(): string | null {
    return this.deps.config.payments.pay_to ? null : 'payments.pay_to (PAY_TO) is not configured';
  }

  /**
   * The 402 of a paid call made without input (a request with no body, or a `GET` with no query):
   * what x402's Bazaar indexers send to read a resource's terms. The terms at the SKU's floor
   * price; no input is checked, nothing is reserved. A call with input, valid or not, goes through
   * `charge` (an invalid one is answered 400 before any 402).
   */
  async quote(op: AnyOperation, ctx: OperationContext): Promise<never> {
    this.available(op, ctx);
    await this.verifiable();
    throw this.paymentRequired(await this.termsOf(op, ctx, atomicUsdc(op.sku?.usdc ?? 0)), ctx);
  }

  /** Throws 503 `sku_unavailable` when the SKU cannot be sold here now. */
  private available(op: AnyOperation, ctx: OperationContext): void {
    const sku = op.sku as NonNullable<AnyOperation['sku']>;
    const reason = sku.unavailable?.(ctx.services) ?? this.unavailable();
    if (reason) throw new ServiceError('sku_unavailable', { detail: `${sku.id}: ${reason}` });
  }

  /** Nobody is asked to pay (402) for a call that cannot be verified now: 503 while the peers are down. */
  private async verifiable(): Promise<void> {
    if (await this.peersUp()) return;
    throw new ServiceError('service_unavailable', {
      detail: 'The payment facilitator or the chain does not answer; nothing was charged - retry shortly',
      headers: { 'Retry-After': String(PEER_RETRY_AFTER_S) },
    });
  }

  /** What this call of `op` is offered for, over the transport it came by. */
  private async termsOf(op: AnyOperation, ctx: OperationContext, amount: bigint): Promise<Terms> {
    const { config, signIn } = this.deps;
    const extensions = discoveryExtensionsOf(op, ctx.request.via);
    const readLater = op.sku?.readLater;
    return {
      op,
      requirements: requirementsFor(config, amount) as PaymentRequirements,
      resource: resourceOf(config, op, ctx.request.via),
      // Beside bazaar, as x402's reference server declares it: the payer may sign in later.
      extensions:
        readLater && signIn
          ? {
              ...extensions,
              [SIGN_IN_WITH_X]: await signIn.challengeFor(
                skuResources(config, op)[0] as string,
                `After paying, sign in with the paying wallet to read ${readLater} again`,
              ),
            }
          : extensions,
    };
  }

  /** The 402 of a call that carries no payment: the amount asked, and where the payment goes. */
  private paymentRequired(terms: Terms, ctx: OperationContext): ServiceError {
    const missing =
      ctx.request.via === 'mcp'
        ? '_meta["x402/payment"] is required'
        : 'PAYMENT-SIGNATURE header is required';
    return this.refuse(terms, 'payment_required', {
      reason: missing,
      detail: `${terms.op.sku?.id} costs ${usdcText(BigInt(terms.requirements.amount))} USDC: pay with x402 (${missing})`,
      errors: [],
    });
  }

  /**
   * Charges one call of `op` with this validated input: returns the handler's output (`run`) once
   * paid, or throws the refusal. `ctx.payment` carries the credential in and the receipt out.
   */
  async charge<T>(
    op: AnyOperation,
    ctx: OperationContext,
    input: unknown,
    run: () => Promise<T>,
  ): Promise<T> {
    const sku = op.sku;
    if (!sku) throw new Error(`${op.name} is not a paid operation`);
    const { config } = this.deps;
    const payment = ctx.payment ?? { credential: undefined };
    ctx.payment = payment;
    const handle = await this.referralHandleOf(payment.ref);

    this.available(op, ctx);
    await sku.check?.(ctx, input as never);
    await this.verifiable();

    const terms = await this.termsOf(op, ctx, amountOf(op, input));
    const { requirements } = terms;
    const credential = payment.credential;
    if (!credential) {
      await sku.admit?.(ctx.services, input);
      throw this.paymentRequired(terms, ctx);
    }

    const decoded = decodeCredential(credential);
    if (!decoded.ok) throw this.refuse(terms, 'payment_invalid', decoded.refusal);
    const paid = decoded.payment;
    payment.version = paid.version;
    const name = credentialName(credential);
    // An authorization's validity window is read on the clock the chain and the payer's wallet keep
    // (x402's facilitator reads Date.now()), not on the services' clock, which tests move.
    const mismatch = matchRequirements(
      paid,
      requirements,
      skuResources(config, op),
      name,
      Math.floor(Date.now() / 1000),
    );
    if (mismatch) throw this.refuse(terms, 'payment_invalid', mismatch, paid.version);

    const key = {
      network: requirements.network,
      asset: requirements.asset.toLowerCase(),
      payer: paid.payer,
      nonce: paid.nonce,
    };
    const requestHash = fingerprint({ sku: sku.id, input });
    const earlier = await this.findRecovered(key);
    if (earlier && earlier.status !== 'released')
      return this.replay<T>(earlier, requestHash, terms, paid, payment);

    await sku.admit?.(ctx.services, input);
    const facilitatorRequirements = this.facilitatorRequirements(paid, terms);
    let verdict: Awaited<ReturnType<PaymentFacilitator['verify']>>;
    try {
      verdict = await this.facilitator.verify(paid.payload, facilitatorRequirements);
    } catch (err) {
      this.peerFailed();
      throw new ServiceError('service_unavailable', {
        detail: 'The payment facilitator did not answer; nothing was charged, retry the same payment',
        headers: { 'Retry-After': String(PEER_RETRY_AFTER_S) },
        cause: err,
      });
    }
    if (!verdict.isValid)
      throw this.refuse(terms, ...this.verifyRefusal(verdict.invalidReason, name), paid.version);

    const row: NewPayment = {
      id: randomUUID(),
      sku: sku.id,
      ...key,
      amount: Number(requirements.amount),
      pay_to: requirements.payTo.toLowerCase(),
      x402_version: paid.version,
      facilitator: this.facilitator.name,
      referral_handle: handle,
      referral_credit: handle ? this.referralCredit(BigInt(requirements.amount)) : 0,
      request_hash: requestHash,
      payload: JSON.stringify(paid.payload),
      requirements: JSON.stringify(facilitatorRequirements),
      valid_before: Number(paid.exact.authorization.validBefore),
    };
    const now = () => this.deps.now().toISOString();
    const lease = this.lease();
    let reserved = earlier
      ? await reuseReleased(this.deps.db, earlier.id, { ...row, id: earlier.id }, lease, now())
      : await reservePayment(this.deps.db, row, lease, now());
    if (earlier && reserved) row.id = earlier.id;
    if (!reserved) {
      // Another request with this authorization reserved it first (in any process).
      const winner = await findByAuthorization(this.deps.db, key);
      if (winner && winner.status !== 'released')
        return this.replay<T>(winner, requestHash, terms, paid, payment);
      reserved = winner
        ? await reuseReleased(this.deps.db, winner.id, { ...row, id: winner.id }, lease, now())
        : false;
      if (!reserved || !winner)
        throw this.alreadyUsed(terms, paid.version, 'is being used by another request');
      row.id = winner.id;
    }

    payment.id = row.id;
    payment.payer = paid.exact.authorization.from;
    const renewal = this.keepReserved(row.id, lease);
    let outcome: Outcome;
    let output: T;
    try {
      try {
        output = await run();
      } catch (err) {
        await releasePayment(this.deps.db, row.id, lease.token, now()).catch((releaseErr: unknown) =>
          this.deps.log.error({ err: releaseErr, payment_id: row.id }, 'could not release a payment'),
        );
        throw err;
      }
      outcome = await this.settle(
        row.id,
        lease.token,
        paid,
        facilitatorRequirements,
        JSON.stringify(output),
        now,
      );
      if (!(await recordOutcome(this.deps.db, row.id, lease.token, outcome, now()))) {
        this.deps.log.error(
          { payment_id: row.id, status: outcome.status },
          'payment left its reservation meanwhile',
        );
      }
    } finally {
      clearInterval(renewal);
    }
    if (outcome.status !== 'failed' && sku.keepsResult === false) {
      await forgetResult(this.deps.db, row.id, now()).catch((err: unknown) =>
        this.deps.log.error({ err, payment_id: row.id }, 'could not clear a delivered result'),
      );
    }
    if (outcome.status === 'failed') {
      throw this.refuse(
        terms,
        'payment_settlement_failed',
        {
          reason: outcome.error,
          detail: `Settlement was refused (${outcome.error}); the result is not delivered and nothing was charged`,
          errors: [],
        },
        paid.version,
        this.settlementResponse(paid, outcome.transaction, outcome.error),
      );
    }
    payment.receipt = this.withSignIn(
      receiptOf(
        {
          id: row.id,
          status: outcome.status,
          payer: paid.payer,
          transaction_hash: 'transaction' in outcome ? outcome.transaction : null,
        },
        requirements.network,
        paid.version,
      ),
      op,
    );
    return output;
  }

  /**
   * Settles a payment whose result is ready. Without a facilitator that settles it is recorded
   * `authorized` (the settler submits it later); a settlement whose outcome is unknown (timeout, a
   * broadcast not yet confirmed, no answer) is `reconciling` and its result is still delivered.
   */
  private async settle(
    id: string,
    token: string,
    paid: DecodedPayment,
    requirements: AnyRequirements,
    result: string,
    now: () => string,
  ): Promise<Outcome> {
    const kept = sealJson(this.deps.secrets, result, paymentResultPlace(id));
    if (!this.facilitator.settles) return { status: 'authorized', result: kept };
    if (!(await storeResult(this.deps.db, id, token, kept, now()))) {
      // The reservation was recovered as abandoned (its renewals failed for a whole lease): another
      // request may hold it now, so this one must not settle. Nothing was submitted.
      throw new ServiceError('service_unavailable', {
        detail: 'The payment reservation was lost; nothing was charged, retry the same payment',
      });
    }
    let settled: SettleResponse;
    try {
      settled = await this.facilitator.settle(paid.payload, requirements);
    } catch (err) {
      this.peerFailed();
      this.deps.log.warn({ err, payment_id: id }, 'settlement outcome unknown; reconciling');
      return { status: 'reconciling', result: kept, transaction: null, error: 'settlement outcome unknown' };
    }
    if (settled.success) return { status: 'settled', result: kept, transaction: settled.transaction };
    const error = settled.errorReason ?? 'unexpected_settle_error';
    if (error === 'settlement_pending') {
      return { status: 'reconciling', result: kept, transaction: settled.transaction || null, error };
    }
    return { status: 'failed', error, transaction: settled.transaction || null };
  }

  /** The answer to a payment the ledger already holds (not released). */
  private async replay<T>(
    row: PaymentRow,
    requestHash: string,
    terms: Terms,
    paid: DecodedPayment,
    payment: PaymentContext,
  ): Promise<T> {
    switch (row.status) {
      case 'settled':
      case 'authorized':
      case 'reconciling':
        if (row.request_hash !== requestHash || !sameSignature(row, paid)) {
          throw this.alreadyUsed(terms, paid.version, 'already paid for another request');
        }
        if (row.result === null) {
          throw this.alreadyUsed(
            terms,
            paid.version,
            'already paid for this request, whose result is not kept once delivered',
          );
        }
        payment.id = row.id;
        payment.payer = paid.exact.authorization.from;
        payment.receipt = this.withSignIn(receiptOf(row, row.network, paid.version), terms.op);
        return JSON.parse(openJson(this.deps.secrets, row.result, paymentResultPlace(row.id))) as T;
      case 'reserved': {
        // Its request is running, or its process stopped and the reservation is recovered once its
        // lease runs out: the same payment sent again then gets the result, or runs if none was made.
        const left = row.lease_expires_at
          ? Math.ceil((Date.parse(row.lease_expires_at) - this.deps.now().getTime()) / 1000)
          : this.deps.config.payments.reservation_lease_seconds;
        throw this.alreadyUsed(
          terms,
          paid.version,
          'is paying for a request that is still running; send the same payment again later to get its result',
          { 'Retry-After': String(Math.max(1, left)) },
        );
      }
      case 'failed':
        throw this.refuse(
          terms,
          'payment_settlement_failed',
          {
            reason: row.error ?? 'unexpected_settle_error',
            detail: `This authorization could not be settled (${row.error ?? 'unknown reason'}); sign a new one`,
            errors: [],
          },
          paid.version,
        );
      case 'released':
        throw new Error('a released payment is reused, not replayed');
    }
  }

  /** What the facilitator verifies and settles against: the v2 requirements, or their v1 form. */
  private facilitatorRequirements(paid: DecodedPayment, terms: Terms): AnyRequirements {
    return paid.version === 2
      ? terms.requirements
      : v1Requirements(terms.requirements, terms.resource, terms.op);
  }

  /** A facilitator's refusal as our code and a field to name (x402-specification-v2.md section 9). */
  private verifyRefusal(invalidReason: string | undefined, name: string): [ErrorCode, Refusal] {
    const reason = invalidReason ?? 'unexpected_verify_error';
    const at = `${name}.payload`;
    const one = (code: ErrorCode, field: string | null, message: string): [ErrorCode, Refusal] => [
      code,
      {
        reason,
        detail: field ? `${field}: ${message}` : message,
        errors: field ? [{ field, message }] : [],
      },
    ];
    switch (reason) {
      case 'invalid_exact_evm_signature':
      case 'invalid_exact_evm_payload_signature':
        return one(
          'payment_invalid',
          `${at}.signature`,
          'does not recover to authorization.from (EIP-712 TransferWithAuthorization over the asset domain)',
        );
      case 'invalid_exact_evm_nonce_already_used':
        return one('payment_already_used', `${at}.authorization.nonce`, 'was already used on chain');
      case 'insufficient_funds':
      case 'invalid_exact_evm_insufficient_balance':
        return one('payment_invalid', `${at}.authorization.from`, 'holds less USDC than the price');
      default:
        return one('payment_invalid', null, `The facilitator refused the payment (${reason})`);
    }
  }

  private alreadyUsed(
    terms: Terms,
    version: 1 | 2,
    what: string,
    headers?: Record<string, string>,
  ): ServiceError {
    return this.refuse(
      terms,
      'payment_already_used',
      {
        reason: 'payment_already_used',
        detail: headers
          ? `This payment authorization ${what}`
          : `This payment authorization ${what}; one authorization pays for one request - sign a new one`,
        errors: [],
      },
      version,
      undefined,
      headers,
    );
  }

  /** A new reservation's lease: a token of this request and how long it holds without renewal. */
  private lease(): ReservationLease {
    return {
      token: `${this.owner}:${randomUUID()}`,
      until: new Date(
        this.deps.now().getTime() + this.deps.config.payments.reservation_lease_seconds * 1000,
      ).toISOString(),
    };
  }

  /** Renews the reservation three times per lease while its request runs (cleared by the caller). */
  private keepReserved(id: string, lease: ReservationLease): NodeJS.Timeout {
    const seconds = this.deps.config.payments.reservation_lease_seconds;
    const timer = setInterval(
      () => {
        const until = new Date(this.deps.now().getTime() + seconds * 1000).toISOString();
        renewReservation(this.deps.db, id, { token: lease.token, until }).then(
          (kept) => {
            if (!kept)
              this.deps.log.error({ payment_id: id }, 'payment reservation lost while its request runs');
          },
          (err: unknown) =>
            this.deps.log.warn({ err, payment_id: id }, 'could not renew a payment reservation'),
        );
      },
      (seconds * 1000) / 3,
    );
    timer.unref();
    return timer;
  }

  /**
   * The ledger's row for this authorization. A reservation whose lease ran out belongs to a request
   * whose process stopped: it is recovered first (released, or reconciling when a result was
   * stored), as the settler would on its next tick, so that the payer's retry is answered now.
   */
  private async findRecovered(
    key: Pick<PaymentRow, 'network' | 'asset' | 'payer' | 'nonce'>,
  ): Promise<PaymentRow | undefined> {
    const row = await findByAuthorization(this.deps.db, key);
    if (row?.status !== 'reserved') return row;
    const at = this.deps.now();
    const abandoned = row.lease_expires_at
      ? Date.parse(row.lease_expires_at) < at.getTime()
      : Date.parse(row.updated_at) < at.getTime() - STALE_RESERVATION_MS;
    if (!abandoned) return row;
    await recoverStaleReservations(
      this.deps.db,
      at.toISOString(),
      new Date(at.getTime() - STALE_RESERVATION_MS).toISOString(),
      row.id,
    );
    return findByAuthorization(this.deps.db, key);
  }

  /**
   * A 402 carrying the terms: the v2 PaymentRequired always, the v1 form unless the payer spoke v2,
   * and the settlement response of a refused settlement.
   */
  private refuse(
    terms: Terms,
    code: ErrorCode,
    refusal: Refusal,
    version?: 1 | 2,
    settlement?: SettleResponse,
    headers?: Record<string, string>,
  ): ServiceError {
    const required = paymentRequired(terms.requirements, terms.resource, refusal.reason, terms.extensions);
    return new ServiceError(code, {
      detail: refusal.detail,
      ...(headers ? { headers } : {}),
      ...(refusal.errors.length ? { errors: refusal.errors } : {}),
      payment: {
        required: required as unknown as Record<string, unknown>,
        ...(version === 2
          ? {}
          : {
              v1: paymentRequiredV1(
                v1Requirements(terms.requirements, terms.resource, terms.op),
                refusal.reason,
              ) as unknown as Record<string, unknown>,
            }),
        ...(settlement ? { settlement: settlement as unknown as Record<string, unknown> } : {}),
      },
    });
  }

  private settlementResponse(
    paid: DecodedPayment,
    transaction: string | null,
    reason: string,
  ): SettleResponse {
    const accepted = (paid.payload as PaymentPayload).accepted;
    const network = paid.version === 2 ? accepted.network : (paid.payload as { network: string }).network;
    return {
      success: false,
      errorReason: reason,
      transaction: transaction ?? '',
      network: network as SettleResponse['network'],
      payer: paid.exact.authorization.from,
    };
  }

  /** The `ref` of a paid call: null when absent; a malformed or unknown handle is a bad input (400). */
  private async referralHandleOf(ref: unknown): Promise<string | null> {
    if (ref === undefined) return null;
    const parsed = ReferralHandle.safeParse(ref);
    if (!parsed.success)
      throw invalid([{ field: 'ref', message: parsed.error.issues[0]?.message ?? 'is invalid' }]);
    if (!(await findHandle(this.deps.db, parsed.data))) {
      throw invalid([{ field: 'ref', message: 'is not a registered referral handle' }]);
    }
    return parsed.data;
  }

  private referralCredit(amount: bigint): number {
    const share = BigInt(Math.round(this.deps.config.payments.referral_share * Number(PPM)));
    return Number((amount * share) / PPM);
  }

  /** The receipt, saying the payer may sign in later when the SKU's result is read again. */
  private withSignIn(receipt: PaymentReceipt, op: AnyOperation): PaymentReceipt {
    return this.deps.signIn?.receiptWithSignIn(receipt, op.sku?.readLater) ?? receipt;
  }

  /** The public receipt of a payment (GET {public_api_url}/payments/{id}); null when unknown. */
  async receipt(id: string): Promise<PaymentRow | undefined> {
    return findPayment(this.deps.db, id);
  }
}

/** Whether the stored payment carried this very signature (a replay, not a second use of the nonce). */
function sameSignature(row: PaymentRow, paid: DecodedPayment): boolean {
  const stored = (JSON.parse(row.payload) as { payload?: { signature?: string } }).payload?.signature;
  return stored?.toLowerCase() === paid.exact.signature.toLowerCase();
}

interface Terms {
  op: AnyOperation;
  requirements: PaymentRequirements;
  resource: ResourceInfo;
  /** The 402's x402 extensions (`discoveryExtensionsOf`). */
  extensions: Record<string, unknown>;
}

/** The receipt of a payment, naming the network as the payer's x402 version does. */
export function receiptOf(
  row: Pick<PaymentRow, 'id' | 'status' | 'payer' | 'transaction_hash'>,
  network: string,
  version: 1 | 2,
): PaymentReceipt {
  const named =
    version === 1 ? Object.values(paymentNetworks).find((n) => n.caip2 === network)?.name : undefined;
  return {
    success: row.status === 'settled' || row.status === 'authorized' || row.status === 'reconciling',
    id: row.id,
    status: row.status,
    network: named ?? network,
    transaction: row.transaction_hash ?? '',
    payer: row.payer,
  };
}
