/**
 * Push delivery (RFC 8935) of our SETs from the `ssf_deliveries` outbox, as the brand deliveries
 * do it (`servers/features/returns/outbox.ts`): a worker claims due rows of enabled streams under
 * a lease, POSTs the signed SET, and settles the row. At least once, with the SET's `jti` stable
 * across attempts so receivers drop duplicates. A 2xx is delivered; a network failure, 5xx, 408,
 * 425 or 429 is retried with exponential backoff and jitter (never sooner than `Retry-After`) up
 * to `max_attempts`; any other answer (RFC 8935 section 2.3: the receiver refused the SET) fails
 * the SET at once. A paused stream's SETs wait; a deleted stream's go with it.
 */
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Dialect } from '../../db/database.ts';
import type { Database, SsfDeliveryRow } from '../../db/schema.ts';
import type { Config } from '../../servers/config.ts';
import type { SafeFetch } from '../../servers/outbound/safe-fetch.ts';
import { PollingWorker } from '../../servers/polling-worker.ts';
import { type SecretBox, ssfAuthorizationPlace } from '../../servers/secrets.ts';
import { SET_MEDIA_TYPE } from './set.ts';

type Attempt = { ok: true } | { ok: false; retryable: boolean; error: string; retryAfterMs?: number };

export interface SetOutboxDeps {
  db: Kysely<Database>;
  dialect: Dialect;
  config: Config;
  log: Logger;
  fetch: SafeFetch;
  secrets: SecretBox;
  now: () => Date;
}

export class SetDeliveryWorker extends PollingWorker {
  readonly #deps: SetOutboxDeps;
  protected readonly name = 'security event delivery';

  constructor(deps: SetOutboxDeps) {
    super();
    this.#deps = deps;
  }

  protected get pollIntervalMs(): number {
    return this.#deps.config.auth.security_events.delivery.poll_interval_ms;
  }

  protected get log(): Logger {
    return this.#deps.log;
  }

  async tick(): Promise<number> {
    const { db, dialect, config, now } = this.#deps;
    const { batch_size, lease_ms } = config.auth.security_events.delivery;
    const at = now().toISOString();
    const claimed = await db
      .updateTable('ssf_deliveries')
      .set((eb) => ({
        lease_owner: this.owner,
        lease_expires_at: new Date(now().getTime() + lease_ms).toISOString(),
        attempts: eb('attempts', '+', 1),
      }))
      .where('id', 'in', (eb) =>
        eb
          .selectFrom('ssf_deliveries')
          .select('id')
          .where('state', '=', 'pending')
          .where('next_attempt_at', '<=', at)
          .where((w) => w.or([w('lease_expires_at', 'is', null), w('lease_expires_at', '<', at)]))
          .where('stream_id', 'in', (s) =>
            s.selectFrom('ssf_streams').select('id').where('status', '=', 'enabled'),
          )
          .orderBy('next_attempt_at')
          .limit(batch_size)
          .$if(dialect === 'postgres', (q) => q.forUpdate().skipLocked()),
      )
      .returningAll()
      .execute();
    await Promise.all(claimed.map((delivery) => this.#process(delivery)));
    return claimed.length;
  }

  async #process(delivery: SsfDeliveryRow): Promise<void> {
    let attempt: Attempt;
    try {
      attempt = await this.#attempt(delivery);
    } catch (err) {
      this.log.error({ err, jti: delivery.id }, 'security event delivery crashed');
      attempt = { ok: false, retryable: true, error: 'internal error' };
    }
    try {
      await this.#settle(delivery, attempt);
    } catch (err) {
      // The lease expires and the SET is sent again with the same jti.
      this.log.error({ err, jti: delivery.id }, 'could not record security event delivery outcome');
    }
  }

  async #attempt(delivery: SsfDeliveryRow): Promise<Attempt> {
    const { db, secrets, fetch, now } = this.#deps;
    const stream = await db
      .selectFrom('ssf_streams')
      .select(['id', 'endpoint_url', 'authorization_header'])
      .where('id', '=', delivery.stream_id)
      .executeTakeFirst();
    if (!stream) return { ok: false, retryable: false, error: 'stream deleted' };
    const headers: Record<string, string> = { 'content-type': SET_MEDIA_TYPE, accept: 'application/json' };
    if (stream.authorization_header) {
      headers.authorization = secrets.open(stream.authorization_header, ssfAuthorizationPlace(stream.id));
    }
    let response: Awaited<ReturnType<SafeFetch>>;
    try {
      response = await fetch(stream.endpoint_url, {
        method: 'POST',
        redirect: 'manual',
        headers,
        body: delivery.token,
      });
    } catch (err) {
      const e = err as Error & { cause?: { code?: string; name?: string } };
      const blocked = e.name === 'BlockedDestinationError' || e.cause?.name === 'BlockedDestinationError';
      return {
        ok: false,
        retryable: !blocked,
        error: blocked ? 'destination not allowed' : (e.cause?.code ?? e.name),
      };
    }
    const text = response.status >= 400 ? await response.text().catch(() => '') : '';
    if (response.status < 400) await response.body?.cancel();
    if (response.status >= 200 && response.status < 300) return { ok: true };
    const retryable = response.status >= 500 || [408, 425, 429].includes(response.status);
    let reason = `HTTP ${response.status}`;
    try {
      const err = (JSON.parse(text) as { err?: unknown }).err;
      if (typeof err === 'string') reason += ` ${err.slice(0, 40)}`;
    } catch {}
    const retryAfter = parseRetryAfter(response.headers.get('retry-after'), now());
    return {
      ok: false,
      retryable,
      error: reason,
      ...(retryAfter !== undefined ? { retryAfterMs: retryAfter } : {}),
    };
  }

  async #settle(delivery: SsfDeliveryRow, attempt: Attempt): Promise<void> {
    const { db, config, now } = this.#deps;
    const { max_attempts, base_delay_ms, max_delay_ms } = config.auth.security_events.delivery;
    const at = now();
    const owned = db
      .updateTable('ssf_deliveries')
      .where('id', '=', delivery.id)
      .where('lease_owner', '=', delivery.lease_owner);
    const released = { lease_owner: null, lease_expires_at: null };
    if (attempt.ok) {
      await owned.set({ ...released, state: 'delivered', delivered_at: at.toISOString() }).execute();
      this.log.info({ jti: delivery.id, attempts: delivery.attempts }, 'security event delivered');
      return;
    }
    if (attempt.retryable && delivery.attempts < max_attempts) {
      const exponential = Math.min(max_delay_ms, base_delay_ms * 2 ** Math.max(0, delivery.attempts - 1));
      const delay = Math.min(
        max_delay_ms,
        Math.max(exponential * (0.8 + Math.random() * 0.4), attempt.retryAfterMs ?? 0),
      );
      await owned
        .set({
          ...released,
          state: 'pending',
          last_error: attempt.error,
          next_attempt_at: new Date(at.getTime() + delay).toISOString(),
        })
        .execute();
      this.log.warn(
        { jti: delivery.id, attempts: delivery.attempts, error: attempt.error },
        'security event delivery failed, will retry',
      );
      return;
    }
    await owned.set({ ...released, state: 'failed', last_error: attempt.error }).execute();
    this.log.warn(
      { jti: delivery.id, attempts: delivery.attempts, error: attempt.error },
      'security event delivery gave up',
    );
  }
}

function parseRetryAfter(value: string | null, now: Date): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now.getTime());
}

/** How long delivered and failed SETs are kept (for support), after which they are deleted. */
export const SETTLED_SET_RETENTION_MS = 30 * 24 * 3_600_000;

/** Deletes settled SETs past their retention; returns how many. Run by the housekeeping timer. */
export async function sweepSetDeliveries(db: Kysely<Database>, now: Date): Promise<number> {
  const result = await db
    .deleteFrom('ssf_deliveries')
    .where('state', 'in', ['delivered', 'failed'])
    .where('created_at', '<', new Date(now.getTime() - SETTLED_SET_RETENTION_MS).toISOString())
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
