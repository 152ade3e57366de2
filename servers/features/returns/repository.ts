/**
 * Data access for return requests, their history, brand channels and the delivery outbox.
 * Functions of `(db | trx)` (STYLE.md 10); callers own the transaction.
 */
import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../../../db/database.ts';
import { timeOrderedId } from '../../../db/ids.ts';
import { newOutboxRow } from '../../../db/leases.ts';
import { insertRows, prepared } from '../../../db/prepared.ts';
import type {
  BrandChannelRow,
  Database,
  DeliveryRow,
  NewReturnRequest,
  ReturnEventRow,
  ReturnRequestRow,
} from '../../../db/schema.ts';
import { ServiceError } from '../../errors.ts';
import { type Position, rowsAfter } from '../../pagination.ts';
import { type SecretBox, webhookSecretPlace } from '../../secrets.ts';
import { queueNotification } from './notifications.ts';
import { type Actor, assertTransition, type ReturnStatus } from './state-machine.ts';

type Db = Kysely<Database>;

/** One step of a request's history as it is created: the status it reaches and why. */
export interface OpeningStep {
  to: ReturnStatus;
  note: string;
}

/**
 * A new request and its opening history in two statements: the row with the status the last step
 * reaches, and every step (numbered from 1, each checked against the state machine) in one insert.
 * A request is created in the service's hands, so there is nothing to read back or race with.
 */
export async function insertReturnRequest(
  trx: Db,
  row: Omit<NewReturnRequest, 'status'>,
  steps: readonly [OpeningStep, ...OpeningStep[]],
  actor: Actor,
): Promise<ReturnStatus> {
  let from: ReturnStatus | null = null;
  for (const step of steps) {
    if (from) assertTransition(from, step.to, actor);
    from = step.to;
  }
  const status = from as ReturnStatus;
  await insertRows(trx, 'return_requests', [{ ...row, status }]);
  const events = steps.map((step, i) => ({
    id: timeOrderedId(),
    request_id: row.id,
    seq: i + 1,
    from_status: i === 0 ? null : (steps[i - 1] as OpeningStep).to,
    to_status: step.to,
    actor,
    note: step.note,
    at: row.created_at,
  }));
  await insertRows(trx, 'return_events', events as [(typeof events)[0], ...typeof events]);
  return status;
}

async function appendEvent(
  trx: Db,
  requestId: string,
  from: ReturnStatus | null,
  to: ReturnStatus,
  actor: Actor,
  note: string | null,
  at: string,
): Promise<void> {
  await trx
    .insertInto('return_events')
    .values((eb) => ({
      id: timeOrderedId(),
      request_id: requestId,
      seq: eb
        .selectFrom('return_events')
        .select(sql<number>`coalesce(max(seq), 0) + 1`.as('next'))
        .where('request_id', '=', requestId),
      from_status: from,
      to_status: to,
      actor,
      note,
      at,
    }))
    .execute();
}

/**
 * Moves a request to `to` if the state machine allows `actor` to, recording the change and queueing
 * its notification to the requester's agent (`notifications.ts`) - the one way a status changes.
 * The row is locked (PostgreSQL) and the update is conditional on the status read, so two
 * concurrent transitions cannot both apply.
 */
export async function transitionRequest(
  trx: Db,
  dialect: Dialect,
  requestId: string,
  to: ReturnStatus,
  actor: Actor,
  note: string | null,
  at: string,
): Promise<ReturnStatus> {
  const current = await trx
    .selectFrom('return_requests')
    .select(['id', 'status', 'notify_channel'])
    .where('id', '=', requestId)
    .$if(dialect === 'postgres', (q) => q.forUpdate())
    .executeTakeFirst();
  if (!current) throw new ServiceError('not_found', { detail: `No return request ${requestId}` });
  const from = current.status as ReturnStatus;
  assertTransition(from, to, actor);
  const updated = await trx
    .updateTable('return_requests')
    .set({ status: to, updated_at: at })
    .where('id', '=', requestId)
    .where('status', '=', from)
    .executeTakeFirst();
  if (Number(updated.numUpdatedRows) !== 1) {
    throw new ServiceError('illegal_transition', {
      detail: `The request changed status concurrently (was ${from})`,
    });
  }
  await appendEvent(trx, requestId, from, to, actor, note, at);
  await queueNotification(
    trx,
    current,
    'return.status_changed',
    { request_id: requestId, status: to, previous_status: from, by: actor, note, at },
    at,
  );
  return to;
}

export function findReturnRequest(db: Db, id: string): Promise<ReturnRequestRow | undefined> {
  return db.selectFrom('return_requests').selectAll().where('id', '=', id).executeTakeFirst();
}

export function listHistory(db: Db, id: string): Promise<ReturnEventRow[]> {
  return db.selectFrom('return_events').selectAll().where('request_id', '=', id).orderBy('seq').execute();
}

/** The request's latest delivery of itself (not of a follow-up or cancellation). */
export function latestDelivery(db: Db, requestId: string): Promise<DeliveryRow | undefined> {
  return db
    .selectFrom('deliveries')
    .selectAll()
    .where('request_id', '=', requestId)
    .where('kind', '=', 'request')
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/**
 * Whether the request itself has reached the brand: `delivered` (then follow-ups and a cancellation
 * go by the same channel), `pending` (a delivery of it is queued or in flight), or `never`.
 */
export async function requestReach(
  db: Db,
  requestId: string,
): Promise<
  | { state: 'delivered'; delivery: DeliveryRow }
  | { state: 'pending'; delivery: DeliveryRow }
  | { state: 'never' }
> {
  const rows = await db
    .selectFrom('deliveries')
    .selectAll()
    .where('request_id', '=', requestId)
    .where('kind', '=', 'request')
    .where('state', 'in', ['pending', 'delivered'])
    .orderBy('created_at', 'desc')
    .execute();
  const delivered = rows.find((row) => row.state === 'delivered');
  if (delivered) return { state: 'delivered', delivery: delivered };
  const pending = rows[0];
  return pending ? { state: 'pending', delivery: pending } : { state: 'never' };
}

/**
 * Queues something for the brand: the request itself, or on the request's channel a follow-up
 * (`message`, with its thread message) or the requester's cancellation.
 */
export async function queueDelivery(
  trx: Db,
  requestId: string,
  channel: DeliveryRow['channel'],
  target: string,
  at: string,
  carries: { kind: 'request' } | { kind: 'message'; messageId: string } | { kind: 'cancel' } = {
    kind: 'request',
  },
): Promise<string> {
  const id = timeOrderedId();
  await trx
    .insertInto('deliveries')
    .values({
      id,
      request_id: requestId,
      kind: carries.kind,
      message_id: carries.kind === 'message' ? carries.messageId : null,
      channel,
      target,
      ...newOutboxRow(at),
    })
    .execute();
  return id;
}

const channelOf = prepared('brand channel', (db: Db, domain: string) =>
  db.selectFrom('brand_channels').selectAll().where('brand_domain', '=', domain),
);

/** The brand's delivery channel, its webhook secret opened (it is sealed at rest with `SECRETS_KEY`). */
export async function findBrandChannel(
  db: Db,
  secrets: SecretBox,
  domain: string,
): Promise<BrandChannelRow | undefined> {
  const row = await channelOf.first(db, domain);
  if (!row?.webhook_secret) return row;
  return { ...row, webhook_secret: secrets.open(row.webhook_secret, webhookSecretPlace(domain)) };
}

export async function upsertBrandChannel(
  trx: Db,
  secrets: SecretBox,
  channel: Pick<BrandChannelRow, 'brand_domain' | 'webhook_url' | 'webhook_secret' | 'email'>,
  at: string,
): Promise<void> {
  const webhookSecret =
    channel.webhook_secret === null
      ? null
      : secrets.seal(channel.webhook_secret, webhookSecretPlace(channel.brand_domain));
  await trx
    .insertInto('brand_channels')
    .values({ ...channel, webhook_secret: webhookSecret, created_at: at, updated_at: at })
    .onConflict((oc) =>
      oc.column('brand_domain').doUpdateSet({
        webhook_url: channel.webhook_url,
        webhook_secret: webhookSecret,
        email: channel.email,
        updated_at: at,
      }),
    )
    .execute();
}

/** Requests for a brand that wait for a channel (or ran out of retries) - re-queued when one appears. */
export function requestsWithoutChannel(db: Db, domain: string): Promise<{ id: string }[]> {
  return db
    .selectFrom('return_requests')
    .select('id')
    .where('brand_domain', '=', domain)
    .where('status', 'in', ['awaiting_channel', 'undeliverable'])
    .execute();
}

/** Domains the account has verified: a brand acts on the requests addressed to them. */
function verifiedDomains(db: Db, accountId: string) {
  return db
    .selectFrom('sites')
    .select('sites.domain')
    .where('sites.account_id', '=', accountId)
    .where('sites.verified_at', 'is not', null);
}

/** One page of the requests addressed to the account's verified domains, newest first. */
export function brandRequestsPage(
  db: Db,
  accountId: string,
  filter: { status?: string | undefined; brandDomain?: string | undefined },
  after: Position | null,
  limit: number,
): Promise<ReturnRequestRow[]> {
  return db
    .selectFrom('return_requests')
    .selectAll()
    .where('brand_domain', 'in', verifiedDomains(db, accountId))
    .$if(filter.status !== undefined, (q) => q.where('status', '=', filter.status ?? ''))
    .$if(filter.brandDomain !== undefined, (q) => q.where('brand_domain', '=', filter.brandDomain ?? ''))
    .$if(after !== null, (q) => q.where(rowsAfter('return_requests', after as Position)))
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

/** The request, if it is addressed to one of the account's verified domains. */
export function findBrandRequest(
  db: Db,
  accountId: string,
  id: string,
): Promise<ReturnRequestRow | undefined> {
  return db
    .selectFrom('return_requests')
    .selectAll()
    .where('id', '=', id)
    .where('brand_domain', 'in', verifiedDomains(db, accountId))
    .executeTakeFirst();
}
