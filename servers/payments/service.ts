/**
 * The payment core: what a paid call is charged, in the x402 reference order (verify, run, settle,
 * respond). It receives plain terms (`PaymentTerms`: amount, pay-to, resource, SKU id, network,
 * asset, max timeout) and the credential as received, and answers discriminated results - it never
 * sees an operation, a call context or a transport, and throws only for faults. The pipeline that
 * calls it, top to bottom, is `invokeOperation` (`servers/operation.ts`):
 *
 *   authorize(terms, credential) -> required | refused | replay | reserved
 *     required: no payment (after the payment peers answered: no 402 that could not be completed)
 *     refused:  undecodable, other terms, another request's authorization or payment identifier,
 *               a failed verification, the SKU's own rules (`admit`), the peers down (503)
 *     replay:   this payment - same authorization, or same payment identifier and request - already
 *               paid: its stored result and receipt
 *     reserved: verified and reserved (payer, nonce) durably: the handler may run
 *   the handler -> release(reservation) when it fails (nothing is settled)
 *   settle(reservation, output) -> receipt | refused
 *
 * One authorization pays for one execution: the ledger row is the reservation (ledger.ts). A
 * replay of a finished payment gets the stored result and receipt; a replay while it runs, or of an
 * authorization that paid for another request, is refused 402 payment_already_used. A refused
 * settlement answers 402 and the result is not delivered; an unknown outcome (timeout) is delivered
 * as `reconciling` and the settler reads the chain - never settled twice, never silently re-run.
 * A payer-chosen payment identifier (x402 payment-identifier) makes a retry with a new authorization
 * get the first result: one live payment per payer and identifier, in any process (unique index).
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { PaymentPayload, SettleResponse } from '@x402/core/types';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Dialect } from '../../db/database.ts';
import type { Database, PaymentRow } from '../../db/schema.ts';
import type { Config } from '../config.ts';
import { type ErrorCode, invalid, ServiceError } from '../errors.ts';
import { fingerprint } from '../idempotency.ts';
import { openJson, paymentResultPlace, type SecretBox, sealJson } from '../secrets.ts';
import {
  credentialName,
  type DecodedPayment,
  decodeCredential,
  matchRequirements,
  type PaymentCredential,
  paymentIdentifierOf,
  type Refusal,
  signedByPayer,
} from './credential.ts';
import { type AnyRequirements, facilitatorFor, type PaymentFacilitator } from './facilitator.ts';
import {
  findByAuthorization,
  findByPaymentIdentifier,
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
import { networkOf, paymentNetworks, usdcText } from './networks.ts';
import { type PaymentTerms, paymentRequired, paymentRequiredV1, v1Requirements } from './requirements.ts';
import { type PaymentReceipt, ReferralHandle } from './schemas.ts';

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
}

/** The receipt of a paid call and the x402 version its payer spoke (which names the receipt's header). */
export interface PaidReceipt {
  receipt: PaymentReceipt;
  version: 1 | 2;
}

/** A verified payment reserved for one run of the handler: what `settle` or `release` finish. */
export interface Reservation {
  /** The payment id (ledger row), which the handler records beside what it writes. */
  readonly id: string;
  /** The paying address as signed (`authorization.from`). */
  readonly payer: string;
  readonly terms: PaymentTerms;
  readonly paid: DecodedPayment;
  readonly requirements: AnyRequirements;
  readonly token: string;
  readonly renewal: NodeJS.Timeout;
  readonly paymentIdentifier: string | null;
}

/** `authorize`'s answer. `refused` carries the refusal ready to send: a 402 with the terms, a 4xx, a 503. */
export type Authorization =
  | { outcome: 'required' }
  | { outcome: 'refused'; refusal: ServiceError }
  | { outcome: 'replay'; output: unknown; paid: PaidReceipt }
  | { outcome: 'reserved'; reservation: Reservation };

/** `settle`'s answer: the receipt to send with the output, or the refused settlement's 402. */
export type Settlement =
  | { outcome: 'receipt'; paid: PaidReceipt }
  | { outcome: 'refused'; refusal: ServiceError };

export interface AuthorizeOptions {
  /** The validated input: a payment (and its payment identifier) pays for this request only. */
  request: unknown;
  /** The referral handle the call named (`referralHandle`), credited once the payment settles. */
  referral: string | null;
  /** The SKU's own rules for this input now, run before a new payment is verified; throw to refuse. */
  admit?: () => Promise<void>;
}

/** How long a probe that found the payment peers answering is trusted. */
const PEER_UP_TTL_MS = 10_000;
/** How long a probe that found them down is trusted (then the next paid call asks again). */
const PEER_DOWN_TTL_MS = 1_000;
/** What a 503 for a payment peer that does not answer tells the caller to wait (seconds). */
const PEER_RETRY_AFTER_S = 5;

/** Share of a payment as parts per million, so that credits are exact integers of atomic USDC. */
const PPM = 1_000_000n;

const refused = (refusal: ServiceError): { outcome: 'refused'; refusal: ServiceError } => ({
  outcome: 'refused',
  refusal,
});

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
   * The referral handle a paid call named (`ref`): null when absent; a malformed or unknown handle
   * is a bad input (400 naming `ref`), thrown as the input's other field errors are.
   */
  async referralHandle(ref: unknown): Promise<string | null> {
    if (ref === undefined) return null;
    const parsed = ReferralHandle.safeParse(ref);
    if (!parsed.success)
      throw invalid([{ field: 'ref', message: parsed.error.issues[0]?.message ?? 'is invalid' }]);
    if (!(await findHandle(this.deps.db, parsed.data))) {
      throw invalid([{ field: 'ref', message: 'is not a registered referral handle' }]);
    }
    return parsed.data;
  }

  /**
   * Whether `credential` pays for this request on these terms: `required` when there is none,
   * `refused` with the answer to send, `replay` with the stored result of a payment that already
   * paid for this very request, or `reserved` once a new payment is verified and held for one run.
   * Nobody is asked to pay (402) while the payment peers do not answer: 503.
   */
  async authorize(
    terms: PaymentTerms,
    credential: PaymentCredential | undefined,
    options: AuthorizeOptions,
  ): Promise<Authorization> {
    if (!(await this.peersUp())) {
      return refused(
        new ServiceError('service_unavailable', {
          detail: 'The payment facilitator or the chain does not answer; nothing was charged - retry shortly',
          headers: { 'Retry-After': String(PEER_RETRY_AFTER_S) },
        }),
      );
    }
    if (!credential) return { outcome: 'required' };
    const checked = checkCredential(terms, credential);
    if (!checked.ok) return checked.answer;
    const { paid, name, identifier } = checked;
    const { requirements } = terms;
    const key: AuthorizationKey = {
      network: requirements.network,
      asset: requirements.asset.toLowerCase(),
      payer: paid.payer,
      nonce: paid.nonce,
    };
    const requestHash = fingerprint({ sku: terms.sku, input: options.request });
    const earlier = await this.findRecovered(key);
    if (earlier && earlier.status !== 'released') return this.replay(earlier, requestHash, terms, paid);
    if (identifier !== null) {
      const first = await findByPaymentIdentifier(this.deps.db, paid.payer, identifier);
      if (first) return this.retry(first, requestHash, terms, paid, name);
    }

    try {
      await options.admit?.();
    } catch (err) {
      if (err instanceof ServiceError) return refused(err);
      throw err;
    }
    const facilitatorRequirements = paid.version === 2 ? requirements : v1Requirements(terms);
    const unverified = await this.verifyPayment(terms, paid, name, facilitatorRequirements);
    if (unverified) return unverified;
    const row: NewPayment = {
      id: randomUUID(),
      sku: terms.sku,
      ...key,
      amount: Number(requirements.amount),
      pay_to: requirements.payTo.toLowerCase(),
      x402_version: paid.version,
      facilitator: this.facilitator.name,
      referral_handle: options.referral,
      referral_credit: options.referral ? this.referralCredit(BigInt(requirements.amount)) : 0,
      request_hash: requestHash,
      payload: JSON.stringify(paid.payload),
      requirements: JSON.stringify(facilitatorRequirements),
      valid_before: Number(paid.exact.authorization.validBefore),
      payment_identifier: identifier,
    };
    const lease = this.lease();
    const held = await this.reserve(row, earlier, lease, { key, terms, paid, name, requestHash });
    if (held) return held;
    return {
      outcome: 'reserved',
      reservation: {
        id: row.id,
        payer: paid.exact.authorization.from,
        terms,
        paid,
        requirements: facilitatorRequirements,
        token: lease.token,
        renewal: this.keepReserved(row.id, lease),
        paymentIdentifier: identifier,
      },
    };
  }

  /**
   * The facilitator's verdict on a new payment: undefined when it is valid, else the refusal to
   * answer (503 when the facilitator does not answer, nothing charged).
   */
  private async verifyPayment(
    terms: PaymentTerms,
    paid: DecodedPayment,
    name: string,
    requirements: AnyRequirements,
  ): Promise<Authorization | undefined> {
    let verdict: Awaited<ReturnType<PaymentFacilitator['verify']>>;
    try {
      verdict = await this.facilitator.verify(paid.payload, requirements);
    } catch (err) {
      this.peerFailed();
      return refused(
        new ServiceError('service_unavailable', {
          detail: 'The payment facilitator did not answer; nothing was charged, retry the same payment',
          headers: { 'Retry-After': String(PEER_RETRY_AFTER_S) },
          cause: err,
        }),
      );
    }
    if (!verdict.isValid)
      return refused(refusal(terms, ...verifyRefusal(verdict.invalidReason, name), paid.version));
    return undefined;
  }

  /**
   * Holds `row` for this request: a new ledger row, or the released row of this authorization
   * reused (`row.id` becomes its id). Undefined once held; else what to answer: the replay or retry
   * of the request that reserved it first (in any process), or 409 while that one runs.
   */
  private async reserve(
    row: NewPayment,
    earlier: PaymentRow | undefined,
    lease: ReservationLease,
    request: {
      key: AuthorizationKey;
      terms: PaymentTerms;
      paid: DecodedPayment;
      name: string;
      requestHash: string;
    },
  ): Promise<Authorization | undefined> {
    const { db } = this.deps;
    const now = this.deps.now().toISOString();
    const reused = earlier
      ? await reuseReleased(db, earlier.id, { ...row, id: earlier.id }, lease, now)
      : await reservePayment(db, row, lease, now);
    if (reused) {
      if (earlier) row.id = earlier.id;
      return undefined;
    }
    const { key, terms, paid, name, requestHash } = request;
    // Another request reserved this authorization - or, with a new authorization, this payment
    // identifier - first (in any process).
    const winner = await findByAuthorization(db, key);
    if (winner && winner.status !== 'released') return this.replay(winner, requestHash, terms, paid);
    const first =
      row.payment_identifier === null
        ? undefined
        : await findByPaymentIdentifier(db, paid.payer, row.payment_identifier);
    if (first) return this.retry(first, requestHash, terms, paid, name);
    const taken = winner ? await reuseReleased(db, winner.id, { ...row, id: winner.id }, lease, now) : false;
    if (!taken || !winner)
      return refused(alreadyUsed(terms, paid.version, 'is being used by another request'));
    row.id = winner.id;
    return undefined;
  }

  /** The handler failed: the authorization is released, nothing is settled (a retry may use it). */
  async release(reservation: Reservation): Promise<void> {
    clearInterval(reservation.renewal);
    await releasePayment(this.deps.db, reservation.id, reservation.token, this.now()).catch((err: unknown) =>
      this.deps.log.error({ err, payment_id: reservation.id }, 'could not release a payment'),
    );
  }

  /**
   * Settles the payment of a handler's output: the receipt to send with it, or - settlement refused -
   * the 402 to send instead (the output is not delivered).
   */
  async settle(reservation: Reservation, output: unknown): Promise<Settlement> {
    const { id, paid, terms } = reservation;
    let outcome: Outcome;
    try {
      outcome = await this.submit(reservation, JSON.stringify(output));
      if (!(await recordOutcome(this.deps.db, id, reservation.token, outcome, this.now()))) {
        this.deps.log.error(
          { payment_id: id, status: outcome.status },
          'payment left its reservation meanwhile',
        );
      }
    } finally {
      clearInterval(reservation.renewal);
    }
    if (outcome.status !== 'failed' && !terms.keepsResult) {
      await forgetResult(this.deps.db, id, this.now()).catch((err: unknown) =>
        this.deps.log.error({ err, payment_id: id }, 'could not clear a delivered result'),
      );
    }
    if (outcome.status === 'failed') {
      return refused(
        refusal(
          terms,
          'payment_settlement_failed',
          {
            reason: outcome.error,
            detail: `Settlement was refused (${outcome.error}); the result is not delivered and nothing was charged`,
            errors: [],
          },
          paid.version,
          settlementResponse(paid, outcome.transaction, outcome.error),
        ),
      );
    }
    return {
      outcome: 'receipt',
      paid: {
        receipt: receiptOf(
          {
            id,
            status: outcome.status,
            payer: paid.payer,
            transaction_hash: 'transaction' in outcome ? outcome.transaction : null,
            payment_identifier: reservation.paymentIdentifier,
          },
          terms.requirements.network,
          paid.version,
        ),
        version: paid.version,
      },
    };
  }

  private now(): string {
    return this.deps.now().toISOString();
  }

  /**
   * Settles a payment whose result is ready. Without a facilitator that settles it is recorded
   * `authorized` (the settler submits it later); a settlement whose outcome is unknown (timeout, a
   * broadcast not yet confirmed, no answer) is `reconciling` and its result is still delivered.
   */
  private async submit(reservation: Reservation, result: string): Promise<Outcome> {
    const { id, token } = reservation;
    const kept = sealJson(this.deps.secrets, result, paymentResultPlace(id));
    if (!this.facilitator.settles) return { status: 'authorized', result: kept };
    if (!(await storeResult(this.deps.db, id, token, kept, this.now()))) {
      // The reservation was recovered as abandoned (its renewals failed for a whole lease): another
      // request may hold it now, so this one must not settle. Nothing was submitted.
      throw new ServiceError('service_unavailable', {
        detail: 'The payment reservation was lost; nothing was charged, retry the same payment',
      });
    }
    let settled: SettleResponse;
    try {
      settled = await this.facilitator.settle(reservation.paid.payload, reservation.requirements);
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

  /** The answer to a payment the ledger already holds for this authorization (not released). */
  private replay(
    row: PaymentRow,
    requestHash: string,
    terms: PaymentTerms,
    paid: DecodedPayment,
  ): Authorization {
    switch (row.status) {
      case 'settled':
      case 'authorized':
      case 'reconciling':
        if (row.request_hash !== requestHash || !sameSignature(row, paid)) {
          return refused(alreadyUsed(terms, paid.version, 'already paid for another request'));
        }
        return this.storedAnswer(row, paid.version, () =>
          alreadyUsed(
            terms,
            paid.version,
            'already paid for this request, whose result is not kept once delivered',
          ),
        );
      case 'reserved': {
        // Its request is running, or its process stopped and the reservation is recovered once its
        // lease runs out: the same payment sent again then gets the result, or runs if none was made.
        return refused(
          alreadyUsed(
            terms,
            paid.version,
            'is paying for a request that is still running; send the same payment again later to get its result',
            { 'Retry-After': String(this.leaseLeft(row)) },
          ),
        );
      }
      case 'failed':
        return refused(
          refusal(
            terms,
            'payment_settlement_failed',
            {
              reason: row.error ?? 'unexpected_settle_error',
              detail: `This authorization could not be settled (${row.error ?? 'unknown reason'}); sign a new one`,
              errors: [],
            },
            paid.version,
          ),
        );
      case 'released':
        throw new Error('a released payment is reused, not replayed');
    }
  }

  /**
   * A retry with a new authorization naming the payment identifier of a live payment `first`: the
   * first payment's result and receipt when it is the same request and the new authorization is
   * signed by the same wallet (the new one is never verified with the facilitator nor settled);
   * 409 `payment_identifier_conflict` when the id paid for another request or its request still runs.
   */
  private async retry(
    first: PaymentRow,
    requestHash: string,
    terms: PaymentTerms,
    paid: DecodedPayment,
    name: string,
  ): Promise<Authorization> {
    if (!(await signedByPayer(paid, terms.requirements, networkOf(this.deps.config).chainId))) {
      const field = `${name}.payload.signature`;
      const message = 'does not recover to authorization.from (EIP-712 TransferWithAuthorization)';
      return refused(
        refusal(
          terms,
          'payment_invalid',
          {
            reason: 'invalid_exact_evm_payload_signature',
            detail: `${field}: ${message}`,
            errors: [{ field, message }],
          },
          paid.version,
        ),
      );
    }
    const conflict = (detail: string, headers?: Record<string, string>) =>
      refused(new ServiceError('payment_identifier_conflict', { detail, ...(headers ? { headers } : {}) }));
    if (first.request_hash !== requestHash)
      return conflict(
        'This payment identifier already paid for another request: choose a new one for a new request (nothing was charged)',
      );
    if (first.status === 'reserved')
      return conflict(
        'The request this payment identifier paid for is still running; retry later to get its result (nothing was charged)',
        { 'Retry-After': String(this.leaseLeft(first)) },
      );
    return this.storedAnswer(
      first,
      paid.version,
      () =>
        new ServiceError('payment_identifier_conflict', {
          detail:
            'This payment identifier already paid for this request, whose result is not kept once delivered (nothing was charged)',
        }),
    );
  }

  /** The stored result and receipt of a finished payment, or `gone` when its result is not kept. */
  private storedAnswer(row: PaymentRow, version: 1 | 2, gone: () => ServiceError): Authorization {
    if (row.result === null) return refused(gone());
    return {
      outcome: 'replay',
      output: JSON.parse(openJson(this.deps.secrets, row.result, paymentResultPlace(row.id))),
      paid: { receipt: receiptOf(row, row.network, version), version },
    };
  }

  /** Seconds until a reservation's lease runs out (at least 1): when a retry can get its result. */
  private leaseLeft(row: PaymentRow): number {
    const left = row.lease_expires_at
      ? Math.ceil((Date.parse(row.lease_expires_at) - this.deps.now().getTime()) / 1000)
      : this.deps.config.payments.reservation_lease_seconds;
    return Math.max(1, left);
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

  /** Renews the reservation three times per lease while its request runs (cleared by settle or release). */
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

  private referralCredit(amount: bigint): number {
    const share = BigInt(Math.round(this.deps.config.payments.referral_share * Number(PPM)));
    return Number((amount * share) / PPM);
  }

  /** The public receipt of a payment (GET {public_api_url}/payments/{id}); null when unknown. */
  async receipt(id: string): Promise<PaymentRow | undefined> {
    return findPayment(this.deps.db, id);
  }
}

/**
 * The 402 of a call that carries no payment: what it costs, and `missing` - how the payment is sent
 * over the caller's transport, which only the pipeline knows.
 */
export function paymentRequiredRefusal(terms: PaymentTerms, missing: string): ServiceError {
  return refusal(terms, 'payment_required', {
    reason: missing,
    detail: `${terms.sku} costs ${usdcText(BigInt(terms.requirements.amount))} USDC: pay with x402 (${missing})`,
    errors: [],
  });
}

/** The ledger's key of an authorization: one row per network, asset, payer and nonce. */
type AuthorizationKey = Pick<PaymentRow, 'network' | 'asset' | 'payer' | 'nonce'>;

/**
 * A credential read and checked against the terms before anyone is asked: decoded, matching the
 * requirements (on the chain's clock), its payment identifier well formed.
 */
function checkCredential(
  terms: PaymentTerms,
  credential: PaymentCredential,
):
  | { ok: true; paid: DecodedPayment; name: string; identifier: string | null }
  | { ok: false; answer: Authorization } {
  const decoded = decodeCredential(credential);
  if (!decoded.ok) return { ok: false, answer: refused(refusal(terms, 'payment_invalid', decoded.refusal)) };
  const paid = decoded.payment;
  const name = credentialName(credential);
  // An authorization's validity window is read on the clock the chain and the payer's wallet keep
  // (x402's facilitator reads Date.now()), not on the services' clock, which tests move.
  const mismatch = matchRequirements(
    paid,
    terms.requirements,
    terms.resources,
    name,
    Math.floor(Date.now() / 1000),
  );
  if (mismatch)
    return { ok: false, answer: refused(refusal(terms, 'payment_invalid', mismatch, paid.version)) };
  const identifier = paymentIdentifierOf(paid, name);
  if (!identifier.ok)
    return {
      ok: false,
      answer: refused(refusal(terms, 'payment_invalid', identifier.refusal, paid.version)),
    };
  return { ok: true, paid, name, identifier: identifier.id };
}

/**
 * A 402 carrying the terms: the v2 PaymentRequired always, the v1 form unless the payer spoke v2,
 * and the settlement response of a refused settlement.
 */
function refusal(
  terms: PaymentTerms,
  code: ErrorCode,
  why: Refusal,
  version?: 1 | 2,
  settlement?: SettleResponse,
  headers?: Record<string, string>,
): ServiceError {
  const required = paymentRequired(terms.requirements, terms.resource, why.reason, terms.extensions);
  return new ServiceError(code, {
    detail: why.detail,
    ...(headers ? { headers } : {}),
    ...(why.errors.length ? { errors: why.errors } : {}),
    payment: {
      required: required as unknown as Record<string, unknown>,
      ...(version === 2
        ? {}
        : { v1: paymentRequiredV1(v1Requirements(terms), why.reason) as unknown as Record<string, unknown> }),
      ...(settlement ? { settlement: settlement as unknown as Record<string, unknown> } : {}),
    },
  });
}

function alreadyUsed(
  terms: PaymentTerms,
  version: 1 | 2,
  what: string,
  headers?: Record<string, string>,
): ServiceError {
  return refusal(
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

/** A facilitator's refusal as our code and a field to name (x402-specification-v2.md section 9). */
function verifyRefusal(invalidReason: string | undefined, name: string): [ErrorCode, Refusal] {
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

function settlementResponse(
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

/** Whether the stored payment carried this very signature (a replay, not a second use of the nonce). */
function sameSignature(row: PaymentRow, paid: DecodedPayment): boolean {
  const stored = (JSON.parse(row.payload) as { payload?: { signature?: string } }).payload?.signature;
  return stored?.toLowerCase() === paid.exact.signature.toLowerCase();
}

/** The receipt of a payment, naming the network as the payer's x402 version does. */
export function receiptOf(
  row: Pick<PaymentRow, 'id' | 'status' | 'payer' | 'transaction_hash' | 'payment_identifier'>,
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
    ...(row.payment_identifier ? { payment_identifier: row.payment_identifier } : {}),
  };
}
