/**
 * A request's thread: the messages between the requester, the service and the brand (table
 * `return_messages`). Functions of `(db | trx)` (STYLE.md 10); callers own the transaction.
 *
 * What the thread shows outside the brand-bound channel (`GET /status`, the requester's
 * notifications) is the excerpt with the person's own data redacted (`redactPersonal`): their
 * contact (the email address, or the phone number however it is spaced), their name (in full, and
 * each part of it as written), and any card number (13 to 19 digits) but its last four. In text
 * the requester wrote, every email address and phone number goes too (they are the person's);
 * in a brand's reply its own addresses, phone numbers and references stay, since the agent needs
 * them to act.
 */
import { type Kysely, sql } from 'kysely';
import { parsePhoneNumberFromString } from 'libphonenumber-js/min';
import { timeOrderedId } from '../../../db/ids.ts';
import type { Database, ReturnMessageRow, ReturnRequestRow } from '../../../db/schema.ts';
import { notFound } from '../../errors.ts';
import { queueNotification } from './notifications.ts';
import type { ThreadEntry } from './schemas.ts';

type Db = Kysely<Database>;

/** Longest excerpt kept of a message (characters); a longer text is cut with an ellipsis. */
export const EXCERPT_MAX = 4000;

export type MessageDirection = ReturnMessageRow['direction'];

export interface NewThreadMessage {
  request_id: string;
  direction: MessageDirection;
  /** The channel between the service and the brand: `webhook`, `email`, `a2a`; null until it has gone by one. */
  channel: string | null;
  /** The brand's address or agent URL, `requester` or `service`; never the person's contact. */
  sender: string | null;
  sender_verified: boolean;
  subject: string | null;
  /** The text as received; kept up to `EXCERPT_MAX` characters. */
  text: string | null;
  attachments: readonly string[];
  /** Message-ID, A2A task or message id, our delivery id: a second message with it is not recorded. */
  external_id: string | null;
  at: string;
}

/** The person whose data the thread's public view hides. */
type Person = Pick<ReturnRequestRow, 'requester_name' | 'contact' | 'contact_kind'>;

/**
 * Adds a message to the request's thread and, for a message of the brand or the service, queues
 * its notification to the requester's agent in the same transaction. A message whose `external_id`
 * the request already has is not recorded again (`recorded: false`, the first one's id), so a
 * redelivered mail or a retried A2A update changes nothing. Status changes are separate: make them
 * with `transitionRequest` in the same transaction.
 */
export async function appendMessage(
  trx: Db,
  message: NewThreadMessage,
): Promise<{ id: string; recorded: boolean }> {
  const request = await trx
    .selectFrom('return_requests')
    .select(['id', 'notify_channel', 'requester_name', 'contact', 'contact_kind'])
    .where('id', '=', message.request_id)
    .executeTakeFirst();
  if (!request) throw notFound(`No return request ${message.request_id}`);
  const row: ReturnMessageRow = {
    id: timeOrderedId(),
    request_id: message.request_id,
    direction: message.direction,
    channel: message.channel,
    sender: message.sender,
    sender_verified: message.sender_verified ? 1 : 0,
    subject: message.subject === null ? null : bounded(message.subject, 300),
    excerpt: message.text === null ? null : bounded(message.text, EXCERPT_MAX),
    attachments: JSON.stringify(message.attachments),
    external_id: message.external_id,
    at: message.at,
  };
  const inserted = await trx
    .insertInto('return_messages')
    .values(row)
    .onConflict((oc) => oc.columns(['request_id', 'external_id']).doNothing())
    .executeTakeFirst();
  if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) !== 1) {
    const first = await trx
      .selectFrom('return_messages')
      .select('id')
      .where('request_id', '=', message.request_id)
      .where('external_id', '=', message.external_id)
      .executeTakeFirstOrThrow();
    return { id: first.id, recorded: false };
  }
  if (message.direction === 'from_brand' || message.direction === 'from_service') {
    await queueNotification(
      trx,
      request,
      'return.message',
      { request_id: request.id, message: threadEntryOf(row, request) },
      message.at,
    );
  }
  return { id: row.id, recorded: true };
}

/** The request's messages, oldest first. */
export function listThread(db: Db, requestId: string): Promise<ReturnMessageRow[]> {
  return db
    .selectFrom('return_messages')
    .selectAll()
    .where('request_id', '=', requestId)
    .orderBy('at')
    .orderBy('id')
    .execute();
}

/**
 * The requester's follow-ups that have not reached the brand on their own (no delivery of theirs
 * is pending or delivered): the request, when it is delivered, carries them.
 */
export function unsentFollowUps(db: Db, requestId: string): Promise<ReturnMessageRow[]> {
  return db
    .selectFrom('return_messages as m')
    .selectAll('m')
    .where('m.request_id', '=', requestId)
    .where('m.direction', '=', 'from_requester')
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('deliveries as d')
            .select(sql.lit(1).as('one'))
            .whereRef('d.message_id', '=', 'm.id')
            .where('d.state', 'in', ['pending', 'delivered']),
        ),
      ),
    )
    .orderBy('m.at')
    .execute();
}

/** A message as the requester's side sees it: the person's own data redacted. */
export function threadEntryOf(row: ReturnMessageRow, person: Person): ThreadEntry {
  return {
    message_id: row.id,
    direction: row.direction,
    channel: row.channel,
    sender: row.sender === null ? null : redactPersonal(row.sender, person, 'brand'),
    sender_verified: row.sender_verified === 1,
    subject: row.subject === null ? null : redactPersonal(row.subject, person, authorOf(row)),
    excerpt: row.excerpt === null ? null : redactPersonal(row.excerpt, person, authorOf(row)),
    attachments: JSON.parse(row.attachments) as string[],
    at: row.at,
  };
}

/** Whose words a message holds: a brand's reply, or the requester's (its request, its follow-ups). */
const authorOf = (row: Pick<ReturnMessageRow, 'direction'>): 'brand' | 'requester' =>
  row.direction === 'from_brand' ? 'brand' : 'requester';

function bounded(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Runs of digits with the separators people write numbers with: phone and card number candidates. */
const digitRun = /\+?\(?\d[\d\s().-]{5,}\d/g;
/** An email address, as people write one in text. */
const emailInText = /[\w.+-]+@[\w-]+(\.[\w-]+)+/g;

/**
 * The text without the person's contact, name and card numbers (see the file's header); in the
 * requester's own words (`author` requester), without any email address or phone number either.
 */
export function redactPersonal(text: string, person: Person, author: 'brand' | 'requester'): string {
  let out = text;
  if (person.contact_kind === 'email') {
    out = out.replace(new RegExp(escapeRegExp(person.contact), 'gi'), '[the person’s email]');
  }
  if (author === 'requester') out = out.replace(emailInText, '[an email address]');
  const national =
    person.contact_kind === 'phone' ? parsePhoneNumberFromString(person.contact)?.nationalNumber : undefined;
  out = out.replace(digitRun, (run) => {
    const digits = run.replace(/\D/g, '');
    if (national && digits.length >= 7 && digits.endsWith(national)) return '[the person’s phone]';
    if (digits.length >= 13 && digits.length <= 19) return `[card ending ${digits.slice(-4)}]`;
    const phoneLike = run.startsWith('+') ? digits.length >= 8 : digits.length >= 10;
    if (author === 'requester' && phoneLike && digits.length <= 15) return '[a phone number]';
    return run;
  });
  const name = person.requester_name.trim();
  if (name) {
    out = out.replace(new RegExp(escapeRegExp(name), 'gi'), '[the person’s name]');
    for (const part of name.split(/\s+/)) {
      if (part.length < 2) continue;
      out = out.replace(
        new RegExp(`(?<![\\p{L}\\p{N}])${escapeRegExp(part)}(?![\\p{L}\\p{N}])`, 'gu'),
        '[name]',
      );
    }
  }
  return out;
}
