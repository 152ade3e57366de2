/**
 * Push delivery (RFC 8935) of our SETs from the `ssf_deliveries` outbox, as the brand deliveries
 * do it (`servers/features/returns/outbox.ts`): a worker claims due rows of enabled streams under
 * a lease, POSTs the signed SET, and settles the row. At least once, with the SET's `jti` stable
 * across attempts so receivers drop duplicates. A 2xx is delivered; a network failure, 5xx, 408,
 * 425 or 429 is retried with exponential backoff and jitter (never sooner than `Retry-After`) up
 * to `max_attempts`; any other answer (RFC 8935 section 2.3: the receiver refused the SET) fails
 * the SET at once. A paused stream's SETs wait; a deleted stream's go with it. The worker is the
 * one every outbox shares (`servers/outbox-worker.ts`), with its own settings
 * (`auth.security_events.delivery.*`).
 */
import type { Expression, ExpressionBuilder, Kysely, SqlBool } from 'kysely';
import type { Database, SsfDeliveryRow } from '../../db/schema.ts';
import type { Config } from '../../servers/config.ts';
import { parseRetryAfter } from '../../servers/outbound/retry-after.ts';
import type { SafeFetch } from '../../servers/outbound/safe-fetch.ts';
import {
  type Attempt,
  networkFailure,
  OutboxWorker,
  type OutboxWorkerDeps,
} from '../../servers/outbox-worker.ts';
import { type SecretBox, ssfAuthorizationPlace } from '../../servers/secrets.ts';
import { SET_MEDIA_TYPE } from './set.ts';

export interface SetOutboxDeps extends OutboxWorkerDeps {
  config: Config;
  fetch: SafeFetch;
  secrets: SecretBox;
}

export class SetDeliveryWorker extends OutboxWorker<'ssf_deliveries'> {
  readonly #deps: SetOutboxDeps;

  constructor(deps: SetOutboxDeps) {
    super(deps, {
      name: 'security event delivery',
      table: 'ssf_deliveries',
      settings: deps.config.auth.security_events.delivery,
    });
    this.#deps = deps;
  }

  /** A paused stream's SETs wait for it to be enabled again. */
  protected override claimable(eb: ExpressionBuilder<Database, 'ssf_deliveries'>): Expression<SqlBool> {
    return eb('stream_id', 'in', eb.selectFrom('ssf_streams').select('id').where('status', '=', 'enabled'));
  }

  protected async attempt(delivery: SsfDeliveryRow): Promise<Attempt> {
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
      return networkFailure(err);
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
