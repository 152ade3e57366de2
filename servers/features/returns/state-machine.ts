/**
 * The life of a return request (the specification leaves it open; this table is the design, and
 * docs/guides/customer-service/returns.md draws it). Each transition names who may make it; anything not listed is refused.
 *
 *   received --> delivered --> acknowledged --> approved --> refunded --> closed
 *      |  ^          |              |      \--> denied ------------------^
 *      |  |          \--------------+--> approved | denied (a brand may decide without acknowledging)
 *      v  |
 *   awaiting_channel        undeliverable (retries exhausted, or the delivered email bounced;
 *                                          re-queued when a channel appears)
 *
 * `cancelled` is reachable by the requester until the brand has decided.
 */
import { z } from 'zod';
import { ServiceError } from '../../errors.ts';

export const ReturnStatus = z
  .enum([
    'received',
    'awaiting_channel',
    'delivered',
    'acknowledged',
    'approved',
    'denied',
    'refunded',
    'closed',
    'undeliverable',
    'cancelled',
  ])
  .describe(
    'received: accepted and queued for delivery to the brand; awaiting_channel: accepted, but the brand has no ' +
      "channel to receive it yet; delivered: the brand's endpoint, mailbox or agent accepted it; acknowledged: " +
      "the brand confirmed it is handling it (or its agent asked a question, shown in the thread); approved / denied: the brand's decision; refunded: the refund was " +
      'issued; closed: finished; undeliverable: every channel of the brand failed (a bounced email included); cancelled: withdrawn by the requester.',
  );
export type ReturnStatus = z.infer<typeof ReturnStatus>;

export const Actor = z.enum(['service', 'brand', 'requester']);
export type Actor = z.infer<typeof Actor>;

export const transitions: Record<ReturnStatus, Partial<Record<ReturnStatus, readonly Actor[]>>> = {
  received: {
    delivered: ['service'],
    awaiting_channel: ['service'],
    undeliverable: ['service'],
    cancelled: ['requester'],
  },
  awaiting_channel: { received: ['service'], cancelled: ['requester'] },
  delivered: {
    acknowledged: ['brand'],
    approved: ['brand'],
    denied: ['brand'],
    cancelled: ['requester'],
    // The brand's mail server accepted the email, then bounced it (`channel-failure.ts`).
    undeliverable: ['service'],
  },
  acknowledged: { approved: ['brand'], denied: ['brand'], cancelled: ['requester'] },
  approved: { refunded: ['brand'], closed: ['brand'] },
  denied: { closed: ['brand', 'service'] },
  refunded: { closed: ['brand', 'service'] },
  undeliverable: { received: ['service'], cancelled: ['requester'] },
  closed: {},
  cancelled: {},
};

/** Every status some transition lets `actor` set: what an actor's endpoint may ask for. */
export function statusesSetBy(actor: Actor): ReturnStatus[] {
  const out = new Set<ReturnStatus>();
  for (const targets of Object.values(transitions)) {
    for (const [to, actors] of Object.entries(targets))
      if (actors?.includes(actor)) out.add(to as ReturnStatus);
  }
  return ReturnStatus.options.filter((s) => out.has(s));
}

/** Statuses `actor` may move a request in `from` to now. */
export function nextStatusesFor(from: ReturnStatus, actor: Actor): ReturnStatus[] {
  return Object.entries(transitions[from])
    .filter(([, actors]) => actors?.includes(actor))
    .map(([to]) => to as ReturnStatus);
}

export function isFinal(status: ReturnStatus): boolean {
  return Object.keys(transitions[status]).length === 0;
}

/** Throws `illegal_transition` unless `actor` may move a request from `from` to `to`. */
export function assertTransition(from: ReturnStatus, to: ReturnStatus, actor: Actor): void {
  const allowed = transitions[from][to];
  if (!allowed?.includes(actor)) {
    const options = Object.keys(transitions[from]);
    throw new ServiceError('illegal_transition', {
      detail:
        `A request that is ${from} cannot become ${to}` +
        (allowed ? ` by the ${actor}` : '') +
        (options.length ? ` (possible next: ${options.join(', ')})` : ' (it is final)'),
    });
  }
}

export const NextStep = z
  .object({
    by: Actor.describe('Who is expected to act next.'),
    action: z.string(),
    expected: z.array(ReturnStatus).describe('Statuses the request can move to next.'),
  })
  .describe('What happens next; null once the request is final.');
export type NextStep = z.infer<typeof NextStep>;

const nextActions: Record<ReturnStatus, { by: Actor; action: string } | null> = {
  received: { by: 'service', action: 'Deliver the request to the brand.' },
  awaiting_channel: {
    by: 'brand',
    action:
      'The brand has not connected a channel for requests yet; it will be delivered as soon as it does.',
  },
  delivered: { by: 'brand', action: 'The brand reviews and acknowledges the request.' },
  acknowledged: { by: 'brand', action: 'The brand approves or denies the return or refund.' },
  approved: { by: 'brand', action: 'The brand issues the refund.' },
  denied: { by: 'brand', action: 'The brand closes the request; contact the brand to dispute the decision.' },
  refunded: { by: 'brand', action: 'The brand closes the request once the refund has settled.' },
  undeliverable: {
    by: 'requester',
    action: 'The brand could not be reached; contact it directly through its support channels.',
  },
  closed: null,
  cancelled: null,
};

export function nextStep(status: ReturnStatus): NextStep | null {
  const next = nextActions[status];
  if (!next) return null;
  return { ...next, expected: Object.keys(transitions[status]) as ReturnStatus[] };
}
