/**
 * Bounces: a delivery status notification (RFC 3464) is a `multipart/report;
 * report-type=delivery-status` (RFC 6522) whose `message/delivery-status` part holds a block of
 * fields about the message, then a block per recipient (`Final-Recipient`, `Action`, `Status`,
 * `Diagnostic-Code`), and usually the returned message or its headers. mailparser keeps that part
 * as an attachment (`keepDeliveryStatus`); its fields are read here (header syntax, RFC 5322 2.2:
 * `Name: value`, continued on lines that start with white space).
 */
import type { ParsedMail } from 'mailparser';

export interface RecipientReport {
  finalRecipient: string | null;
  /** `failed`, `delayed`, `delivered`, `relayed` or `expanded` (RFC 3464 2.3.3). */
  action: string;
  /** The enhanced status code (RFC 3463), e.g. `5.1.1`. */
  status: string | null;
  diagnostic: string | null;
}

export interface DeliveryReport {
  recipients: RecipientReport[];
  /** Whether some recipient's delivery failed for good (`Action: failed`). */
  failed: boolean;
  /** Our delivery id, from the returned message's `X-Delivery-Id` or `Message-ID <id@host>`. */
  deliveryId: string | null;
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;

/** Whether the mail is a delivery status notification. */
export function isDeliveryReport(mail: ParsedMail): boolean {
  const type = mail.headers.get('content-type') as
    | { value?: string; params?: Record<string, string> }
    | undefined;
  return (
    type?.value?.toLowerCase() === 'multipart/report' &&
    type.params?.['report-type']?.toLowerCase() === 'delivery-status'
  );
}

export function deliveryReportOf(mail: ParsedMail): DeliveryReport {
  const status = mail.attachments.find((a) => a.contentType.toLowerCase() === 'message/delivery-status');
  const blocks = status ? fieldBlocks(status.content.toString('utf8')) : [];
  const recipients = blocks.slice(1).flatMap((fields): RecipientReport[] => {
    const action = fields.get('action')?.toLowerCase();
    if (!action) return [];
    return [
      {
        finalRecipient: addressOf(fields.get('final-recipient') ?? fields.get('original-recipient')),
        action,
        status: /\d\.\d{1,3}\.\d{1,3}/.exec(fields.get('status') ?? '')?.[0] ?? null,
        diagnostic:
          fields
            .get('diagnostic-code')
            ?.replace(/^[^;]*;\s*/, '')
            .slice(0, 200) ?? null,
      },
    ];
  });
  return {
    recipients,
    failed: recipients.some((r) => r.action === 'failed'),
    deliveryId: returnedDeliveryId(mail),
  };
}

/** `rfc822; returns@brand.example` -> `returns@brand.example`. */
function addressOf(field: string | undefined): string | null {
  if (!field) return null;
  const address = field
    .replace(/^[^;]*;\s*/, '')
    .trim()
    .replace(/^<|>$/g, '');
  return address.toLowerCase() || null;
}

/** The blocks of `Name: value` fields, separated by empty lines; names lowercase. */
function fieldBlocks(text: string): Map<string, string>[] {
  const blocks: Map<string, string>[] = [];
  let current = new Map<string, string>();
  let last: string | null = null;
  for (const line of text.split(/\r?\n/)) {
    if (line.trim() === '') {
      if (current.size > 0) blocks.push(current);
      current = new Map();
      last = null;
    } else if (/^[ \t]/.test(line) && last) {
      current.set(last, `${current.get(last)} ${line.trim()}`);
    } else {
      const colon = line.indexOf(':');
      if (colon <= 0) continue;
      last = line.slice(0, colon).trim().toLowerCase();
      current.set(last, line.slice(colon + 1).trim());
    }
  }
  if (current.size > 0) blocks.push(current);
  return blocks;
}

/** Our delivery id in the returned message or its headers (`text/rfc822-headers`, `message/rfc822`). */
function returnedDeliveryId(mail: ParsedMail): string | null {
  for (const part of mail.attachments) {
    const type = part.contentType.toLowerCase();
    if (type !== 'text/rfc822-headers' && type !== 'message/rfc822' && type !== 'message/global') continue;
    const head = part.content.toString('utf8').split(/\r?\n\r?\n/, 1)[0] ?? '';
    const id =
      /^x-delivery-id:\s*(\S+)/im.exec(head)?.[1] ?? /^message-id:\s*<([^@>]+)@/im.exec(head)?.[1] ?? '';
    const match = UUID.exec(id);
    if (match) return match[0].toLowerCase();
  }
  return null;
}
