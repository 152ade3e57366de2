/**
 * The shape of an outbox worker: claim due rows of a leased queue (`db/leases.ts`), attempt each,
 * settle it in one transaction with whatever the outcome changes elsewhere. At least once, with
 * the row's id stable across attempts so receivers drop duplicates. A crashed attempt is retried;
 * failures back off exponentially with jitter (never sooner than `Retry-After`) until
 * `max_attempts`; an attempt that was not made (its row waits on another) is put back uncounted.
 *
 * Every outbox is one, each with its own settings (`OutboxSettings`): brand deliveries and the
 * requester's notifications (`returns.delivery`), the brand tasks they follow, the marketplace's
 * (`marketplace.delivery`) and security events (`auth.security_events.delivery`); with the two
 * transports most share: a Standard Webhooks POST and an SMTP mail.
 */
import type { Expression, ExpressionBuilder, Kysely, SqlBool } from 'kysely';
import type { SendMailOptions, Transporter } from 'nodemailer';
import type { Logger } from 'pino';
import type { Dialect } from '../db/database.ts';
import { claimLeased, type LeasedRow, type LeasedTable, leaseOf, settleLeased } from '../db/leases.ts';
import type { Database } from '../db/schema.ts';
import { parseRetryAfter } from './outbound/retry-after.ts';
import type { SafeFetch } from './outbound/safe-fetch.ts';
import { signWebhook } from './outbound/standard-webhooks.ts';
import { PollingWorker } from './polling-worker.ts';

/** How one send went. */
export type Attempt = { ok: true } | { ok: false; retryable: boolean; error: string; retryAfterMs?: number };

/**
 * What an outbox worker made of a row: a send, or none because the row waits for something else
 * (`reason`) - tried again after `deferMs`, uncounted (`resetAttempts`: the failures counted so far
 * are forgotten, the peer answered). `result` is what the peer answered, handed to the settling
 * transaction (`settled`, `deferred`) so what it changes is recorded with the row's own outcome.
 */
export type OutboxAttempt<R = never> =
  | (Attempt & { result?: R })
  | { ok: false; deferMs: number; reason: string; result?: R; resetAttempts?: boolean };

export interface OutboxSettings {
  poll_interval_ms: number;
  batch_size: number;
  lease_ms: number;
  max_attempts: number;
  base_delay_ms: number;
  max_delay_ms: number;
}

/** Exponential backoff with jitter: base * 2^(attempt-1), up to max, never sooner than Retry-After. */
export function backoffMs(attempts: number, settings: OutboxSettings, retryAfterMs?: number): number {
  const { base_delay_ms, max_delay_ms } = settings;
  const exponential = Math.min(max_delay_ms, base_delay_ms * 2 ** Math.max(0, attempts - 1));
  const jittered = exponential * (0.8 + Math.random() * 0.4);
  return Math.min(max_delay_ms, Math.max(jittered, retryAfterMs ?? 0));
}

export interface OutboxWorkerDeps {
  db: Kysely<Database>;
  dialect: Dialect;
  log: Logger;
  now: () => Date;
}

/** What a settled row came to, for the worker's own bookkeeping in the settling transaction. */
export type Settled<R = never> =
  | { state: 'delivered'; at: string; result?: R }
  | { state: 'failed'; error: string; at: string; result?: R };

/** What one outbox is: its name in logs, its table, and its own settings. */
export interface Outbox<T extends LeasedTable> {
  name: string;
  table: T;
  settings: OutboxSettings;
}

export abstract class OutboxWorker<T extends LeasedTable, R = never> extends PollingWorker {
  protected readonly name: string;
  protected readonly table: T;
  protected readonly settings: OutboxSettings;
  protected readonly outbox: OutboxWorkerDeps;

  constructor(outbox: OutboxWorkerDeps, { name, table, settings }: Outbox<T>) {
    super();
    this.outbox = outbox;
    this.name = name;
    this.table = table;
    this.settings = settings;
  }

  protected get pollIntervalMs(): number {
    return this.settings.poll_interval_ms;
  }

  protected get log(): Logger {
    return this.outbox.log;
  }

  /** Which due rows may be claimed now (a paused stream's wait); all of them when absent. */
  protected claimable?(eb: ExpressionBuilder<Database, T>): Expression<SqlBool>;

  /** Sends one row; throwing counts as a retryable failure. */
  protected abstract attempt(row: LeasedRow<T>): Promise<OutboxAttempt<R>>;

  /** What a delivered or finally failed row changes besides itself, in the same transaction. Nothing by default. */
  protected async settled(_trx: Kysely<Database>, _row: LeasedRow<T>, _outcome: Settled<R>): Promise<void> {}

  /**
   * What a row put back uncounted changes, in the transaction that puts it back (a task followed
   * at the brand's agent that moved on without finishing). Nothing by default.
   */
  protected async deferred(
    _trx: Kysely<Database>,
    _row: LeasedRow<T>,
    _result: R,
    _at: string,
  ): Promise<void> {}

  /** Called once a row's outcome is committed (to wake a worker for what it queued). */
  protected afterSettle(): void {}

  /** Claims and processes one batch; returns how many rows it handled. */
  async tick(): Promise<number> {
    const { db, dialect, now } = this.outbox;
    const at = now();
    const claimable = this.claimable?.bind(this);
    const claimed = (await claimLeased(db, dialect, this.table, {
      ...leaseOf(this.owner, at, this.settings.lease_ms, this.settings.batch_size),
      ...(claimable ? { where: claimable } : {}),
    })) as LeasedRow<T>[];
    await Promise.all(claimed.map((row) => this.#process(row)));
    return claimed.length;
  }

  async #process(row: LeasedRow<T>): Promise<void> {
    let attempt: OutboxAttempt<R>;
    try {
      attempt = await this.attempt(row);
    } catch (err) {
      this.log.error({ err, id: row.id }, `${this.name} attempt crashed`);
      attempt = { ok: false, retryable: true, error: 'internal error' };
    }
    try {
      await this.#settle(row, attempt);
      this.afterSettle();
    } catch (err) {
      // The lease expires and another attempt follows; the receiver deduplicates by id.
      this.log.error({ err, id: row.id }, `could not record ${this.name} outcome`);
    }
  }

  async #settle(row: LeasedRow<T>, attempt: OutboxAttempt<R>): Promise<void> {
    const { db, now } = this.outbox;
    const at = now();
    const iso = at.toISOString();
    const { max_attempts } = this.settings;
    await db.transaction().execute(async (trx) => {
      if (attempt.ok) {
        if (!(await settleLeased(trx, this.table, row, { state: 'delivered', at: iso }))) return;
        await this.settled(trx, row, { state: 'delivered', at: iso, ...resultOf(attempt) });
        this.log.info({ id: row.id, attempts: row.attempts }, `${this.name} delivered`);
        return;
      }
      if ('deferMs' in attempt) {
        const put = await settleLeased(trx, this.table, row, {
          state: 'pending',
          error: attempt.reason,
          nextAttemptAt: new Date(at.getTime() + attempt.deferMs).toISOString(),
          attempts: attempt.resetAttempts ? 0 : row.attempts - 1,
        });
        if (put && attempt.result !== undefined) await this.deferred(trx, row, attempt.result, iso);
        return;
      }
      if (attempt.retryable && row.attempts < max_attempts) {
        const delay = backoffMs(row.attempts, this.settings, attempt.retryAfterMs);
        await settleLeased(trx, this.table, row, {
          state: 'pending',
          error: attempt.error,
          nextAttemptAt: new Date(at.getTime() + delay).toISOString(),
        });
        this.log.warn(
          { id: row.id, attempts: row.attempts, error: attempt.error },
          `${this.name} failed, will retry`,
        );
        return;
      }
      if (!(await settleLeased(trx, this.table, row, { state: 'failed', error: attempt.error }))) return;
      await this.settled(trx, row, { state: 'failed', error: attempt.error, at: iso, ...resultOf(attempt) });
      this.log.warn({ id: row.id, attempts: row.attempts, error: attempt.error }, `${this.name} gave up`);
    });
  }
}

const resultOf = <R>(attempt: { result?: R }): { result?: R } =>
  attempt.result === undefined ? {} : { result: attempt.result };

/**
 * One POST of a Standard Webhooks event (its `webhook-*` headers already signed), classified: 2xx
 * delivered; network errors, 5xx, 408, 409, 425 and 429 retryable (honouring `Retry-After`); any
 * other answer, or a destination the address policy refuses, final.
 */
export async function postWebhook(
  fetch: SafeFetch,
  url: string,
  headers: Record<string, string>,
  body: string,
  now: Date,
): Promise<Attempt> {
  let response: Awaited<ReturnType<SafeFetch>>;
  try {
    response = await fetch(url, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/json', ...headers },
      body,
    });
  } catch (err) {
    return networkFailure(err);
  }
  await response.body?.cancel();
  if (response.status >= 200 && response.status < 300) return { ok: true };
  const retryable = response.status >= 500 || [408, 409, 425, 429].includes(response.status);
  const retryAfter = parseRetryAfter(response.headers.get('retry-after'), now);
  return {
    ok: false,
    retryable,
    error: `HTTP ${response.status}`,
    ...(retryAfter !== undefined ? { retryAfterMs: retryAfter } : {}),
  };
}

/**
 * `body` POSTed to `url` as the Standard Webhooks event `id`, signed now with `secret`
 * (`webhook-signature` over `{id}.{timestamp}.{body}`, `outbound/standard-webhooks.ts`).
 */
export function postSignedWebhook(
  fetch: SafeFetch,
  url: string,
  event: { id: string; body: string; secret: string },
  now: Date,
): Promise<Attempt> {
  const timestamp = Math.floor(now.getTime() / 1000);
  const headers = {
    'webhook-id': event.id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signWebhook(event.secret, event.id, timestamp, event.body),
  };
  return postWebhook(fetch, url, headers, event.body, now);
}

/** A failed connection: final when the address policy refused the destination, else retryable. */
export function networkFailure(err: unknown): Attempt {
  const e = err as Error & { cause?: { code?: string; name?: string } };
  const blocked = e.name === 'BlockedDestinationError' || e.cause?.name === 'BlockedDestinationError';
  return {
    ok: false,
    retryable: !blocked,
    error: blocked ? 'destination not allowed' : (e.cause?.code ?? e.name),
  };
}

/** One mail through the configured SMTP relay: a 5xx reply is final, anything else retryable. */
export async function sendMail(mailer: Transporter | null, mail: SendMailOptions): Promise<Attempt> {
  if (!mailer) return { ok: false, retryable: true, error: 'SMTP not configured' };
  try {
    await mailer.sendMail(mail);
    return { ok: true };
  } catch (err) {
    const e = err as Error & { responseCode?: number; code?: string };
    const permanent = typeof e.responseCode === 'number' && e.responseCode >= 500;
    return {
      ok: false,
      retryable: !permanent,
      error: e.responseCode ? `SMTP ${e.responseCode}` : (e.code ?? 'SMTP error'),
    };
  }
}
