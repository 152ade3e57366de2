/**
 * Receivers' streams at our transmitter (SSF 1.0 section 8.1.1): one stream is one push endpoint
 * (RFC 8935) that receives SETs about the account that created it. Functions of `(db | trx)`.
 */
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { z } from 'zod';
import type { Database, SsfStreamRow } from '../../db/schema.ts';
import { type SecretBox, ssfAuthorizationPlace } from '../../servers/secrets.ts';
import { CAEP_EVENT_TYPES, PUSH_DELIVERY_METHOD, VERIFICATION_EVENT } from './set.ts';

export const StreamDelivery = z.strictObject({
  method: z
    .literal(PUSH_DELIVERY_METHOD, { error: `must be ${PUSH_DELIVERY_METHOD} (push delivery)` })
    .describe('Delivery method: push (RFC 8935) only.'),
  endpoint_url: z
    .url({ protocol: /^https?$/, error: 'must be an absolute http(s) URL' })
    .max(2048)
    .describe('Where SETs are POSTed (application/secevent+jwt).'),
  authorization_header: z
    .string()
    .min(1)
    .max(1024)
    .regex(/^[\x20-\x7e]+$/, 'must be printable ASCII')
    .optional()
    .describe('Sent as the Authorization header of each push; stored sealed and never shown again.'),
});

const EventsRequested = z
  .array(z.string().min(1).max(200))
  .max(20)
  .describe('Event type URIs the receiver wants; those we send are events_delivered.');

const Description = z.string().max(500).nullable().optional();

export const CreateStream = z.strictObject({
  delivery: StreamDelivery,
  events_requested: EventsRequested.default([...CAEP_EVENT_TYPES]),
  description: Description,
});
export type CreateStream = z.infer<typeof CreateStream>;

export const StreamId = z.uuid({ error: 'must be a stream id' });

/** PUT replaces what the receiver supplies; PATCH changes the members it names. */
export const ReplaceStream = CreateStream.extend({ stream_id: StreamId });
export const UpdateStream = z.strictObject({
  stream_id: StreamId,
  delivery: StreamDelivery.optional(),
  events_requested: EventsRequested.optional(),
  description: Description,
});

export const StreamStatus = z.enum(['enabled', 'paused', 'disabled']);
export const UpdateStatus = z.strictObject({
  stream_id: StreamId,
  status: StreamStatus,
  reason: z.string().max(500).optional(),
});

export const VerificationRequest = z.strictObject({
  stream_id: StreamId,
  state: z.string().max(500).optional(),
});

const eventsOf = (row: SsfStreamRow): string[] =>
  (typeof row.events_requested === 'string'
    ? JSON.parse(row.events_requested)
    : row.events_requested) as string[];

/** Event types the stream gets: what it asked for that we send. */
export const eventsDelivered = (row: SsfStreamRow): string[] =>
  eventsOf(row).filter((type) => (CAEP_EVENT_TYPES as readonly string[]).includes(type));

/** SSF 1.0 section 8.1.1 `min_verification_interval`: least seconds between two verification requests. */
export const MIN_VERIFICATION_INTERVAL_S = 10;

/** The `aud` of the stream's SETs: its endpoint, which the receiver knows. */
export const streamAudience = (row: Pick<SsfStreamRow, 'endpoint_url'>): string => row.endpoint_url;

/** SSF 1.0 section 8.1.1: the stream configuration as the receiver reads it (no secret). */
export function streamConfiguration(row: SsfStreamRow, issuer: string) {
  return {
    stream_id: row.id,
    iss: issuer,
    aud: streamAudience(row),
    delivery: { method: PUSH_DELIVERY_METHOD, endpoint_url: row.endpoint_url },
    events_supported: [...CAEP_EVENT_TYPES],
    events_requested: eventsOf(row),
    events_delivered: eventsDelivered(row),
    description: row.description,
    min_verification_interval: MIN_VERIFICATION_INTERVAL_S,
  };
}

/** Seconds until the stream may ask for another verification event, or 0. */
export async function verificationWait(db: Kysely<Database>, streamId: string, now: Date): Promise<number> {
  const since = new Date(now.getTime() - MIN_VERIFICATION_INTERVAL_S * 1000).toISOString();
  const last = await db
    .selectFrom('ssf_deliveries')
    .select('created_at')
    .where('stream_id', '=', streamId)
    .where('event_type', '=', VERIFICATION_EVENT)
    .where('created_at', '>', since)
    .orderBy('created_at', 'desc')
    .executeTakeFirst();
  if (!last) return 0;
  return Math.max(
    1,
    Math.ceil((Date.parse(last.created_at) + MIN_VERIFICATION_INTERVAL_S * 1000 - now.getTime()) / 1000),
  );
}

export async function countStreams(db: Kysely<Database>, accountId: string): Promise<number> {
  const row = await db
    .selectFrom('ssf_streams')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function insertStream(
  db: Kysely<Database>,
  box: SecretBox,
  accountId: string,
  input: CreateStream,
  at: Date,
): Promise<SsfStreamRow> {
  const id = randomUUID();
  const row: SsfStreamRow = {
    id,
    account_id: accountId,
    endpoint_url: input.delivery.endpoint_url,
    authorization_header: input.delivery.authorization_header
      ? box.seal(input.delivery.authorization_header, ssfAuthorizationPlace(id))
      : null,
    events_requested: JSON.stringify(input.events_requested),
    description: input.description ?? null,
    status: 'enabled',
    status_reason: null,
    created_at: at.toISOString(),
    updated_at: at.toISOString(),
  };
  await db.insertInto('ssf_streams').values(row).execute();
  return row;
}

/** The account's stream, or undefined (another account's stream is not found either). */
export function findStream(db: Kysely<Database>, accountId: string, streamId: string) {
  return db
    .selectFrom('ssf_streams')
    .selectAll()
    .where('id', '=', streamId)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
}

export function listStreams(db: Kysely<Database>, accountId: string) {
  return db
    .selectFrom('ssf_streams')
    .selectAll()
    .where('account_id', '=', accountId)
    .orderBy('created_at')
    .execute();
}

export async function updateStream(
  db: Kysely<Database>,
  box: SecretBox,
  row: SsfStreamRow,
  change: z.infer<typeof UpdateStream>,
  replace: boolean,
  at: Date,
): Promise<SsfStreamRow> {
  const delivery = change.delivery;
  const next: Partial<SsfStreamRow> = { updated_at: at.toISOString() };
  if (delivery) {
    next.endpoint_url = delivery.endpoint_url;
    next.authorization_header = delivery.authorization_header
      ? box.seal(delivery.authorization_header, ssfAuthorizationPlace(row.id))
      : null;
  }
  if (change.events_requested) next.events_requested = JSON.stringify(change.events_requested);
  if (change.description !== undefined || replace) next.description = change.description ?? null;
  await db.updateTable('ssf_streams').set(next).where('id', '=', row.id).execute();
  return { ...row, ...next };
}

export async function setStreamStatus(
  db: Kysely<Database>,
  row: SsfStreamRow,
  status: SsfStreamRow['status'],
  reason: string | null,
  at: Date,
): Promise<SsfStreamRow> {
  const next = { status, status_reason: reason, updated_at: at.toISOString() };
  await db.transaction().execute(async (trx) => {
    await trx.updateTable('ssf_streams').set(next).where('id', '=', row.id).execute();
    // SSF 1.0 section 8.1.2: a disabled stream neither transmits nor holds events.
    if (status === 'disabled') {
      await trx
        .deleteFrom('ssf_deliveries')
        .where('stream_id', '=', row.id)
        .where('state', '=', 'pending')
        .execute();
    }
  });
  return { ...row, ...next };
}

export async function deleteStream(db: Kysely<Database>, row: SsfStreamRow): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx.deleteFrom('ssf_deliveries').where('stream_id', '=', row.id).execute();
    await trx.deleteFrom('ssf_streams').where('id', '=', row.id).execute();
  });
}
