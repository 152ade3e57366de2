/**
 * What a brand's agent answered a delivery, as the service records it (issue 29 part 2): the
 * brand's messages go into the request's thread (each once, by its id), and the answer moves the
 * request as far as the state machine lets the brand move it - a question or an answer without a
 * decision acknowledges it; a decision approves, denies or refunds it. Recorded in the transaction
 * that settles the delivery (or the poll of the task), with the requester's notifications that the
 * thread and the transitions queue: a crash records all of it or none, and a second reading of the
 * same answer changes nothing.
 */
import type { Kysely } from 'kysely';
import type { Dialect } from '../../../db/database.ts';
import type { Database, DeliveryRow } from '../../../db/schema.ts';
import { findReturnRequest, transitionRequest } from './repository.ts';
import { nextStatusesFor, type ReturnStatus } from './state-machine.ts';
import { appendMessage } from './thread.ts';

/** A brand's decision, as an answer can carry it (`{"status": "approved"}` in a data part). */
export const brandDecisions = ['acknowledged', 'approved', 'denied', 'refunded'] as const;
export type BrandDecision = (typeof brandDecisions)[number];

export interface BrandMessage {
  /** Unique per request: a second message with it is not recorded (`a2a:<messageId>`, `mcp:<deliveryId>`). */
  external_id: string;
  subject: string | null;
  text: string | null;
  attachments: string[];
}

/**
 * An answer read: `working` (the brand has it, nothing decided), `decided` (a decision, or
 * `acknowledged`), or `gave_up` (the agent failed, cancelled or cannot go on without credentials
 * we do not have: the channel did not work).
 */
export interface BrandAnswer {
  outcome: 'working' | 'decided' | 'gave_up';
  /** With `decided`: where the answer moves the request. */
  decision: BrandDecision | null;
  /** Why, in the brand's words or the protocol's (the history note). */
  note: string;
  messages: BrandMessage[];
}

/** The statuses a decision passes through from where the request is (refunded is approved first). */
const pathTo: Record<BrandDecision, ReturnStatus[]> = {
  acknowledged: ['acknowledged'],
  approved: ['approved'],
  denied: ['denied'],
  refunded: ['approved', 'refunded'],
};

/**
 * Records `answer` for the request: its messages in the thread (from the brand, on `channel`, by
 * `sender`), then the decision as the brand's transitions, each only where the state machine
 * allows it now (a request cancelled meanwhile keeps its status, the messages are still kept).
 * Returns the status the request ends in, and the time after which to record what follows (its
 * messages took a millisecond each after `at`).
 */
export async function recordAnswer(
  trx: Kysely<Database>,
  dialect: Dialect,
  requestId: string,
  channel: DeliveryRow['channel'],
  sender: string,
  answer: BrandAnswer,
  at: string,
): Promise<{ status: ReturnStatus | null; after: string }> {
  // Ids of one millisecond do not keep their order (`db/ids.ts`): each message of the answer is
  // placed a millisecond after the one before (and after what was recorded at `at`), in the order
  // the brand gave them.
  const base = Date.parse(at);
  for (const [i, message] of answer.messages.entries()) {
    await appendMessage(trx, {
      request_id: requestId,
      direction: 'from_brand',
      channel,
      sender,
      // The service reached this agent at the address the brand registered or published on its own
      // site, and this is what it answered there.
      sender_verified: true,
      subject: message.subject,
      text: message.text,
      attachments: message.attachments,
      external_id: message.external_id,
      at: new Date(base + i + 1).toISOString(),
    });
  }
  const after = new Date(base + answer.messages.length + 1).toISOString();
  const request = await findReturnRequest(trx, requestId);
  if (!request) return { status: null, after };
  let status = request.status as ReturnStatus;
  if (answer.outcome !== 'decided' || !answer.decision) return { status, after };
  for (const to of pathTo[answer.decision]) {
    // A request already there, decided otherwise or withdrawn stays as it is.
    if (status === to || !nextStatusesFor(status, 'brand').includes(to)) continue;
    status = await transitionRequest(trx, dialect, requestId, to, 'brand', answer.note, at);
  }
  return { status, after };
}

/** A decision named by a JSON value an answer carried (`status` or `decision`), or null. */
export function decisionIn(value: unknown): BrandDecision | null {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return null;
  const record = value as Record<string, unknown>;
  for (const key of ['status', 'decision']) {
    const named = record[key];
    if (typeof named === 'string') {
      const decision = named.trim().toLowerCase();
      if ((brandDecisions as readonly string[]).includes(decision)) return decision as BrandDecision;
    }
  }
  return null;
}

/** Longest text kept of a JSON value an answer carried. */
const DATA_TEXT_MAX = 2000;

/** A JSON value as thread text, bounded. */
export function dataAsText(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? 'null';
  } catch {
    text = String(value);
  }
  return text.length <= DATA_TEXT_MAX ? text : `${text.slice(0, DATA_TEXT_MAX - 1)}…`;
}
