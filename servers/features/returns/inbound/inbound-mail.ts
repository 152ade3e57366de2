/**
 * What a mail to a per-request address does (`listener.ts` hands it over once the SMTP session
 * has ended its DATA). Everything a mail changes is written in one transaction per request, and the
 * listener answers 250 only after it committed:
 *
 * - **A reply** is added to the request's thread (`from_brand`, channel `email`: the From address,
 *   the time received, subject, text without the quoted history, attachments' names - never their
 *   content), which tells the requester's agent (`return.message`). It is **verified** when the
 *   author is authenticated (`sender-check.ts`) and is the brand; only a verified reply moves a
 *   `delivered` request to `acknowledged` and is forwarded to the person's email (they used to get
 *   the brand's replies directly). An unverified one is kept, marked so, and changes nothing else.
 * - **A bounce** (`delivery-report.ts`) whose recipient failed marks the email channel failed for
 *   the request (`channelFailedForRequest`) and leaves a note of the service in the thread.
 *
 * The same mail delivered twice (same Message-ID, or the same bytes when it has none) is recorded
 * once: the thread keeps one message per external id (`appendMessage`).
 */
import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import { type ParsedMail, simpleParser } from 'mailparser';
import type { Logger } from 'pino';
import type { Dialect } from '../../../../db/database.ts';
import type { Database, ReturnRequestRow } from '../../../../db/schema.ts';
import type { OutboundResolver } from '../../../outbound/dns-lookup.ts';
import { type ChannelFailedDeps, channelFailedForRequest } from '../channel-failure.ts';
import { queueNotification } from '../notifications.ts';
import { findReturnRequest, transitionRequest } from '../repository.ts';
import { appendMessage, threadEntryOf } from '../thread.ts';
import { deliveryReportOf, isDeliveryReport } from './delivery-report.ts';
import type { ReplyAddresses } from './reply-address.ts';
import {
  checkSender,
  isBrandSender,
  mailResolver,
  type SenderCheck,
  type SmtpFacts,
} from './sender-check.ts';

/** Longest a sender check may take (SPF may ask DNS ten times); past it the reply is unverified. */
const SENDER_CHECK_MS = 15_000;
/**
 * Header bytes of one MIME part, at most (mailsplit's `maxHeadSize`, 1 MiB by default): long
 * `Received` and signature chains stay far below it; past it the message is refused as malformed.
 */
const MAX_HEADER_BYTES = 128 * 1024;
/** Attachments named in the thread, at most. */
const MAX_ATTACHMENT_NAMES = 20;

export interface InboundMailDeps extends ChannelFailedDeps {
  db: Kysely<Database>;
  dialect: Dialect;
  addresses: ReplyAddresses;
  /** Outbound DNS (`outbound.dns_servers`): SPF, DKIM keys, DMARC policies. */
  dns: Pick<OutboundResolver, 'resolveTxt' | 'resolveMx' | 'resolve4' | 'resolve6'>;
  /** Whether mail can be sent (a verified reply is forwarded to the person's email). */
  smtpConfigured: boolean;
  /** Called after a commit that queued notifications or changed a status. */
  notified: () => void;
  log: Logger;
  now: () => Date;
}

/** What became of a mail, per request it was addressed to. */
export type Outcome =
  | 'reply_verified'
  | 'reply_unverified'
  | 'bounce'
  | 'report'
  | 'duplicate'
  | 'no_request';

export interface Envelope extends SmtpFacts {
  /** The request ids of the accepted recipients. */
  requests: readonly string[];
}

export class InboundMail {
  readonly #deps: InboundMailDeps;
  readonly #resolver: ReturnType<typeof mailResolver>;

  constructor(deps: InboundMailDeps) {
    this.#deps = deps;
    this.#resolver = mailResolver(deps.dns);
  }

  /** The request a recipient address stands for, or null (refused at RCPT). */
  requestOf(address: string): string | null {
    return this.#deps.addresses.requestOf(address);
  }

  /**
   * Records the mail for each request; resolves once it is durable. Throws `MalformedMailError`
   * for a message that cannot be read, or a reply without a From header (RFC 5322 3.6).
   */
  async receive(raw: Buffer, envelope: Envelope): Promise<Outcome[]> {
    let mail: ParsedMail;
    try {
      // mailparser hands its options to its MIME splitter (mailsplit), which reads maxHeadSize.
      const options = {
        keepDeliveryStatus: true,
        skipImageLinks: true,
        skipTextToHtml: true,
        skipTextLinks: true,
        maxHeadSize: MAX_HEADER_BYTES,
      };
      mail = await simpleParser(raw, options);
    } catch (err) {
      throw new MalformedMailError((err as Error).message);
    }
    const externalId = messageIdOf(mail) ?? `sha256:${createHash('sha256').update(raw).digest('hex')}`;
    const outcomes: Outcome[] = [];
    if (isDeliveryReport(mail)) {
      for (const requestId of envelope.requests) {
        outcomes.push(await this.#bounce(requestId, mail, externalId));
      }
    } else {
      if (!mail.from?.value.length) throw new MalformedMailError('the message has no From header');
      const sender = await checkSender(raw, envelope, {
        resolver: this.#resolver,
        mta: this.#deps.addresses.domain,
        timeoutMs: SENDER_CHECK_MS,
      });
      for (const requestId of envelope.requests) {
        outcomes.push(await this.#reply(requestId, mail, externalId, sender));
      }
      this.#deps.log.info(
        { requests: envelope.requests, from: sender.from, dmarc: sender.dmarc, outcomes },
        'brand reply received',
      );
    }
    if (outcomes.some((o) => o !== 'duplicate' && o !== 'no_request' && o !== 'report'))
      this.#deps.notified();
    return outcomes;
  }

  async #reply(
    requestId: string,
    mail: ParsedMail,
    externalId: string,
    sender: SenderCheck,
  ): Promise<Outcome> {
    const { db, dialect, now } = this.#deps;
    return db.transaction().execute(async (trx): Promise<Outcome> => {
      const request = await findReturnRequest(trx, requestId);
      if (!request) return 'no_request';
      const deliveredTo = await trx
        .selectFrom('deliveries')
        .select('target')
        .distinct()
        .where('request_id', '=', requestId)
        .where('channel', '=', 'email')
        .execute();
      const verified = isBrandSender(sender, {
        domain: request.brand_domain,
        mailedDomains: deliveredTo.map((d) => d.target.split('@').pop() ?? ''),
      });
      const at = now().toISOString();
      const appended = await appendMessage(trx, {
        request_id: requestId,
        direction: 'from_brand',
        channel: 'email',
        sender: sender.from ?? mail.from?.value[0]?.address?.toLowerCase() ?? null,
        sender_verified: verified,
        subject: mail.subject ?? null,
        text: replyText(mail),
        attachments: attachmentNames(mail),
        external_id: externalId,
        at,
      });
      if (!appended.recorded) return 'duplicate';
      if (!verified) return 'reply_unverified';
      await this.#forwardToPerson(trx, request, appended.id, at);
      if (request.status === 'delivered') {
        await transitionRequest(
          trx,
          dialect,
          requestId,
          'acknowledged',
          'brand',
          'The brand replied by email',
          at,
        );
      }
      return 'reply_verified';
    });
  }

  /**
   * A verified reply also goes to the person's own email when the agent is told another way: the
   * person used to receive the brand's replies directly, as the request's `Reply-To`.
   */
  async #forwardToPerson(
    trx: Kysely<Database>,
    request: ReturnRequestRow,
    messageId: string,
    at: string,
  ): Promise<void> {
    if (
      !this.#deps.smtpConfigured ||
      request.contact_kind !== 'email' ||
      request.notify_channel === 'email'
    ) {
      return;
    }
    const row = await trx
      .selectFrom('return_messages')
      .selectAll()
      .where('id', '=', messageId)
      .executeTakeFirstOrThrow();
    await queueNotification(
      trx,
      { id: request.id, notify_channel: 'email' },
      'return.message',
      { request_id: request.id, message: threadEntryOf(row, request) },
      at,
    );
  }

  async #bounce(requestId: string, mail: ParsedMail, externalId: string): Promise<Outcome> {
    const report = deliveryReportOf(mail);
    const { db, now, log } = this.#deps;
    const outcome = await db.transaction().execute(async (trx): Promise<Outcome> => {
      // A report of a delay or of a delivery changes nothing.
      if (!report.failed) return 'report';
      const request = await findReturnRequest(trx, requestId);
      if (!request) return 'no_request';
      const delivery = await trx
        .selectFrom('deliveries')
        .selectAll()
        .where('request_id', '=', requestId)
        .where('channel', '=', 'email')
        .where('state', '=', 'delivered')
        .$if(report.deliveryId !== null, (q) => q.where('id', '=', report.deliveryId as string))
        .$if(report.deliveryId === null, (q) => q.where('kind', '=', 'request'))
        .orderBy('created_at', 'desc')
        .limit(1)
        .executeTakeFirst();
      if (!delivery) return 'report';
      const failed = report.recipients.find((r) => r.action === 'failed');
      const reason = ['bounced', failed?.status, failed?.diagnostic].filter(Boolean).join(': ');
      const at = now();
      const what =
        delivery.kind === 'request' ? 'request' : delivery.kind === 'message' ? 'follow-up' : 'cancellation';
      const noted = await appendMessage(trx, {
        request_id: requestId,
        direction: 'from_service',
        channel: 'email',
        sender: 'service',
        sender_verified: true,
        subject: 'Delivery failed',
        text: `The brand's mail server returned the ${what} sent to ${delivery.target} (${reason}).`,
        attachments: [],
        external_id: externalId,
        at: at.toISOString(),
      });
      if (!noted.recorded) return 'duplicate';
      await channelFailedForRequest(
        trx,
        this.#deps,
        { requestId, deliveryId: delivery.id, kind: 'email', address: delivery.target, reason },
        at,
      );
      return 'bounce';
    });
    log.info({ request_id: requestId, outcome, recipients: report.recipients }, 'delivery report received');
    return outcome;
  }
}

/** A message that cannot be read as a reply (the listener refuses it with 554 5.6.0). */
export class MalformedMailError extends Error {
  constructor(detail: string) {
    super(`malformed message: ${detail}`);
    this.name = 'MalformedMailError';
  }
}

function messageIdOf(mail: ParsedMail): string | null {
  const id = mail.messageId?.trim();
  return id ? id.slice(0, 300) : null;
}

/** The reply's own words: its text (or its HTML as text) without the quoted history below it. */
export function replyText(mail: Pick<ParsedMail, 'text'>): string | null {
  const text = mail.text?.replace(/\r\n/g, '\n').trim();
  if (!text) return null;
  const lines = text.split('\n');
  const history = lines.findIndex(
    (line) =>
      /^-{2,}\s*(original message|forwarded message)\s*-{2,}/i.test(line.trim()) ||
      /^On .{4,200} wrote:\s*$/.test(line.trim()),
  );
  const own = (history >= 0 ? lines.slice(0, history) : lines)
    .filter((line) => !line.startsWith('>'))
    .join('\n')
    .trim();
  return own || text;
}

function attachmentNames(mail: ParsedMail): string[] {
  return mail.attachments
    .slice(0, MAX_ATTACHMENT_NAMES)
    .map((a) => (a.filename?.trim() || `unnamed ${a.contentType}`).slice(0, 200));
}
