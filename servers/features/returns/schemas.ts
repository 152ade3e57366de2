/**
 * Return request payloads. The specification names the request fields; formats, the reply
 * protocols, the approval proof and every response field are designed here and documented in the
 * OpenAPI document generated from these schemas.
 *
 * Input schemas validate only (no transforms or defaults), so the parsed input equals what the
 * caller sent - the approval proof signs exactly that (see `approval.ts`).
 */
import { isValidPhoneNumber } from 'libphonenumber-js/min';
import { getDomain } from 'tldts';
import { z } from 'zod';
import { calendarDate, dateTime } from '../../input.ts';
import { Cursor, Limit, NextCursor } from '../../pagination.ts';
import { isLocalDomain } from '../../public-address.ts';
import { BrandContact, BrandReturns } from '../charges/brand-registry.ts';
import { ContactKit } from './kit.ts';
import { NextStep, ReturnStatus, statusesSetBy } from './state-machine.ts';

const e164 = /^\+[1-9]\d{6,14}$/;
const emailAddress = z.email();
const currencies = new Set(Intl.supportedValuesOf('currency'));

export function contactKind(contact: string): 'email' | 'phone' | null {
  if (e164.test(contact)) return isValidPhoneNumber(contact) ? 'phone' : null;
  return emailAddress.safeParse(contact).success ? 'email' : null;
}

export function isRegistrableDomain(value: string): boolean {
  if (value !== value.toLowerCase() || value.endsWith('.')) return false;
  return getDomain(value, { allowPrivateDomains: true }) === value;
}

export const ReplyProtocol = z
  .enum(['email', 'phone', 'webhook', 'mcp', 'a2a', 'poll'])
  .describe(
    "How the person's agent wants to hear back from the brand. email: reply to the contact address; phone: " +
      "call or text the contact number; webhook: POST updates to callback_url; mcp: reach the agent's MCP " +
      "server at callback_url; a2a: reach the agent's A2A endpoint at callback_url; poll: the agent polls " +
      'status_url. Default: email or phone, following the kind of contact.',
  );
export type ReplyProtocol = z.infer<typeof ReplyProtocol>;

const compactJws = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

export const ApprovalProof = z
  .discriminatedUnion('format', [
    z
      .strictObject({
        format: z.literal('jws'),
        jws: z.string().max(16_384).regex(compactJws, 'must be a compact JWS (RFC 7515)'),
      })
      .describe(
        "A compact JWS (RFC 7515) signed by the approving person's or agent's key. Protected header: alg " +
          '(ES256, ES384, EdDSA, RS256 or PS256) and jwk (the public key, RFC 7515 section 4.1.3). Payload, ' +
          'JSON: request_sha256 (required: base64url SHA-256 of the RFC 8785 canonical JSON of this request ' +
          'body without approval_proof), iat (required, seconds; not in the future, at most 7 days old), exp ' +
          '(optional, must not have passed), aud (optional; if present, the URL of this endpoint), sub ' +
          '(optional: an opaque identifier of the approving person). The request is refused when the ' +
          'signature or a claim does not verify; the key thumbprint (RFC 7638) is recorded.',
      ),
    z
      .strictObject({
        format: z.literal('declaration'),
        statement: z
          .string()
          .min(1)
          .max(1000)
          .describe("What the person approved, in their or the agent's words."),
        approved_at: dateTime({ offset: true }).describe('When the person approved (RFC 3339).'),
        method: z
          .enum(['chat', 'voice', 'in_app', 'email', 'other'])
          .optional()
          .describe('How the approval was given.'),
      })
      .describe('An unsigned declaration by the agent that the person approved; recorded as unverified.'),
  ])
  .describe(
    'Evidence that the person approved this request. Forwarded to the brand with the verification result.',
  );
export type ApprovalProof = z.infer<typeof ApprovalProof>;

export const StartReturnRequestInput = z
  .strictObject({
    // A local name (`localhost:8787`) passes here; the operation takes it only where local sites
    // are allowed (development mode), so a brand on this machine can be tried end to end.
    brand_domain: z
      .string()
      .max(253)
      .refine(
        (v) => isRegistrableDomain(v) || isLocalDomain(v),
        'must be a registrable domain in lower case, such as netflix.com',
      )
      .describe('Registrable domain of the brand (lookup_card_charge returns it as domain).')
      .meta({ examples: ['netflix.com'] }),
    name: z
      .string()
      .max(200)
      .refine((v) => v.trim().length > 0, 'must not be blank')
      .describe('Name of the person asking for the return or refund.'),
    contact: z
      .string()
      .max(320)
      .refine(
        (v) => contactKind(v) !== null,
        'must be an email address or an E.164 phone number such as +14155550123',
      )
      .describe('Where the brand can reach the person: an email address or an E.164 phone number.')
      .meta({ examples: ['jane@example.com', '+14155550123'] }),
    order_number: z.string().min(1).max(100).optional().describe("The brand's order or invoice number."),
    card_last4: z
      .string()
      .regex(/^\d{4}$/, 'must be exactly 4 digits')
      .optional()
      .describe('Last four digits of the card that was charged.'),
    date: calendarDate('must be an ISO 8601 calendar date (YYYY-MM-DD)')
      .refine((d) => Date.parse(d) <= Date.now() + 86_400_000, 'must not be in the future')
      .optional()
      .describe('Date of the purchase or charge.'),
    amount: z
      .number()
      .positive('must be greater than 0')
      .max(1_000_000_000)
      .refine((a) => Math.abs(a * 100 - Math.round(a * 100)) < 1e-6, 'must have at most 2 decimals')
      .optional()
      .describe("Amount charged, in the currency's major unit (12.34)."),
    currency: z
      .string()
      .regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code such as USD')
      .refine((c) => currencies.has(c), 'is not an ISO 4217 currency code')
      .optional()
      .describe('ISO 4217 currency of amount.'),
    message: z.string().max(2000).optional().describe('What the person wants, in their words.'),
    agent_id: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .describe('Identifier of the agent acting for the person.'),
    protocol: ReplyProtocol.optional(),
    callback_url: z
      .url({ protocol: /^https?$/, error: 'must be an absolute http(s) URL' })
      .max(2048)
      .optional()
      .describe('Required with protocol webhook, mcp or a2a: where the brand reaches the agent.'),
    approval_proof: ApprovalProof.optional(),
  })
  .superRefine((body, ctx) => {
    const kind = contactKind(body.contact);
    if ((body.protocol === 'email' || body.protocol === 'phone') && kind && kind !== body.protocol) {
      ctx.addIssue({
        code: 'custom',
        path: ['protocol'],
        message: `is ${body.protocol} but contact is not an ${body.protocol === 'email' ? 'email address' : 'phone number'}`,
      });
    }
    const needsCallback = body.protocol === 'webhook' || body.protocol === 'mcp' || body.protocol === 'a2a';
    if (needsCallback && !body.callback_url) {
      ctx.addIssue({
        code: 'custom',
        path: ['callback_url'],
        message: `is required with protocol ${body.protocol}`,
      });
    }
    if (!needsCallback && body.callback_url) {
      ctx.addIssue({
        code: 'custom',
        path: ['callback_url'],
        message: 'is only used with protocol webhook, mcp or a2a',
      });
    }
  })
  .describe('A return or refund request on behalf of a person.');
export type StartReturnRequestInput = z.infer<typeof StartReturnRequestInput>;

export const ApprovalSummary = z
  .object({
    format: z.enum(['jws', 'declaration']),
    verified: z.boolean().describe('True when a signature over this request was verified.'),
    key_thumbprint: z.string().optional().describe('RFC 7638 thumbprint of the signing key (jws).'),
  })
  .describe('What the approval proof established.');
export type ApprovalSummary = z.infer<typeof ApprovalSummary>;

export const DeliveryChannel = z
  .enum(['webhook', 'email', 'a2a', 'mcp'])
  .describe(
    "webhook: a signed POST to the brand's registered endpoint; email: a message to the brand's address; a2a: " +
      "an A2A message to the brand's agent (registered, or published on its site), whose task is followed; mcp: " +
      'a call of the returns tool of the MCP server the brand registered.',
  );

export const BrandSummary = z.object({
  domain: z.string(),
  name: z.string().nullable().describe('Brand name from the registry; null when the brand is not in it.'),
  known: z.boolean().describe('Whether the brand is in the brand registry.'),
  contact: BrandContact,
  returns: BrandReturns,
});

export const NotifyChannel = z
  .enum(['webhook', 'a2a', 'email'])
  .describe(
    "How the requester's agent is told of each status change and brand message: webhook: a Standard Webhooks " +
      'event POSTed to callback_url, signed with callback_secret; a2a: an A2A message to the agent at callback_url; ' +
      'email: a mail to the contact address.',
  );

/** The requester's next step: the state machine's, with a kit while nothing can deliver. */
export const RequesterNextStep = NextStep.extend({
  kit: ContactKit.nullable().describe(
    'Set while the status is awaiting_channel or undeliverable; else null.',
  ),
});
export type RequesterNextStep = z.infer<typeof RequesterNextStep>;

export const ThreadEntry = z
  .object({
    message_id: z.uuid(),
    direction: z
      .enum(['to_brand', 'from_brand', 'from_requester', 'from_service'])
      .describe(
        'to_brand: what the service sent the brand (the request, a cancellation); from_brand: a reply of the ' +
          'brand; from_requester: a follow-up of the requester, sent on to the brand; from_service: a note of the service.',
      ),
    channel: z
      .string()
      .nullable()
      .describe(
        'The channel between the service and the brand it went by: webhook, email, a2a or mcp; null until it has.',
      ),
    sender: z.string().nullable().describe("The brand's address or agent, requester or service."),
    sender_verified: z
      .boolean()
      .describe(
        'True when the sender was authenticated (signed webhook, DMARC-aligned mail, the request token).',
      ),
    subject: z.string().nullable(),
    excerpt: z
      .string()
      .nullable()
      .describe(
        "The text, up to 4000 characters, with the person's own data redacted: their email or phone number, " +
          'their name, and card numbers but the last 4. The brand’s own contacts and references are kept.',
      ),
    attachments: z.array(z.string()).describe('File names of attachments (their content is not kept).'),
    at: z.iso.datetime(),
  })
  .describe('One message of the request’s thread.');
export type ThreadEntry = z.infer<typeof ThreadEntry>;

const requestToken = z
  .string()
  .max(200)
  .optional()
  .describe(
    'Required: the request_token returned once by start_return_request. Never put it in a URL. Missing or ' +
      'wrong: 403 forbidden, and nothing changes.',
  );

export const StartReturnRequestResult = z.object({
  request_id: z
    .uuid()
    .describe(
      'Identifies the request for get_return_status: a UUID, time-ordered (UUIDv7) for new requests.',
    ),
  status_url: z.url().describe('Absolute URL of get_return_status for this request.'),
  status: ReturnStatus,
  brand: BrandSummary,
  delivery: z.object({
    channel: DeliveryChannel.nullable().describe('null while no channel to the brand exists.'),
  }),
  approval: ApprovalSummary.nullable(),
  next_step: RequesterNextStep.nullable(),
  created_at: z.iso.datetime(),
  request_token: z
    .string()
    .describe(
      "The requester's capability for this request, shown once: keep it secret and send it with " +
        'cancel_return_request and send_return_message. The service keeps only its hash. A retry with the same ' +
        'Idempotency-Key and body gets this same response back (kept sealed for 24 hours), never a new token.',
    ),
  notifications: z.object({
    channel: NotifyChannel.nullable().describe(
      'null: nothing is pushed (protocol mcp, poll or phone, or email while this deployment sends no mail); ' +
        'follow the request with get_return_status.',
    ),
    callback_secret: z
      .string()
      .nullable()
      .describe(
        'With channel webhook: the Standard Webhooks secret (whsec_ + base64) the events to callback_url are ' +
          'signed with, shown once. Event types: return.status_changed, return.message. Else null.',
      ),
  }),
});
export type StartReturnRequestResult = z.infer<typeof StartReturnRequestResult>;

export const ReturnStatusInput = z.strictObject({
  request_id: z.uuid('must be a UUID').describe('The request_id returned by start_return_request.'),
});

export const HistoryEntry = z.object({
  status: ReturnStatus,
  from: ReturnStatus.nullable(),
  at: z.iso.datetime(),
  by: z.enum(['service', 'brand', 'requester']),
  note: z.string().nullable(),
});

export const ReturnStatusResult = z
  .object({
    request_id: z.uuid(),
    status: ReturnStatus,
    final: z.boolean().describe('True once the status can no longer change.'),
    brand_domain: z.string(),
    brand_name: z.string().nullable(),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
    history: z.array(HistoryEntry).describe('Every status change, oldest first.'),
    thread: z
      .array(ThreadEntry)
      .describe('The messages between the requester, the service and the brand, oldest first.'),
    next_step: RequesterNextStep.nullable(),
    delivery: z.object({
      channel: DeliveryChannel.nullable(),
      state: z.enum(['pending', 'delivered', 'failed']).nullable(),
      attempts: z.number().int(),
      next_attempt_at: z.iso.datetime().nullable(),
      delivered_at: z.iso.datetime().nullable(),
    }),
  })
  .describe("Status of a return request. Never includes the person's name or contact details.");
export type ReturnStatusResult = z.infer<typeof ReturnStatusResult>;

/** Who may act on a request as its requester: its id and its request token. */
const requesterOf = {
  request_id: z.uuid('must be a UUID').describe('The request_id returned by start_return_request.'),
  request_token: requestToken,
};

export const CancelReturnRequestInput = z.strictObject({
  ...requesterOf,
  reason: z
    .string()
    .trim()
    .min(1)
    .max(1000)
    .optional()
    .describe('Why the person withdraws the request; recorded in the history and sent to the brand.'),
});
export type CancelReturnRequestInput = z.infer<typeof CancelReturnRequestInput>;

export const SendReturnMessageInput = z.strictObject({
  ...requesterOf,
  message: z
    .string()
    .max(2000)
    .refine((v) => v.trim().length > 0, 'must not be blank')
    .describe('The follow-up for the brand, in the person’s words (at most 2,000 characters).'),
});
export type SendReturnMessageInput = z.infer<typeof SendReturnMessageInput>;

export const SendReturnMessageResult = z.object({
  request_id: z.uuid(),
  message: ThreadEntry,
  delivery: z.object({
    channel: DeliveryChannel.nullable().describe(
      'The channel the request went by, which the follow-up takes.',
    ),
    sent_as: z
      .enum(['follow_up', 'with_request'])
      .describe(
        'follow_up: queued to the brand on its own; with_request: the request has not reached the brand yet, so ' +
          'it goes with the request when a channel appears.',
      ),
  }),
});
export type SendReturnMessageResult = z.infer<typeof SendReturnMessageResult>;

// --- The brand's side: requests addressed to a brand's verified domains ---------------------------

const brandStatuses = statusesSetBy('brand') as [ReturnStatus, ...ReturnStatus[]];

export const BrandStatus = z
  .enum(brandStatuses)
  .describe(
    'acknowledged: you are handling it; approved / denied: your decision; refunded: the refund was issued; ' +
      'closed: finished. Only moves the state machine allows from the current status are accepted.',
  );

export const ListBrandRequestsInput = z.strictObject({
  status: ReturnStatus.optional().describe('Only requests in this status.'),
  brand_domain: z
    .string()
    .max(253)
    .optional()
    .describe('Only requests for this one of your verified domains.'),
  cursor: Cursor,
  limit: Limit,
});
export type ListBrandRequestsInput = z.infer<typeof ListBrandRequestsInput>;

export const BrandRequest = z
  .object({
    request_id: z.uuid(),
    brand_domain: z.string(),
    status: ReturnStatus,
    final: z.boolean(),
    can_set: z.array(BrandStatus).describe('Statuses you may move the request to now.'),
    status_url: z.string().describe("The requester's status URL (what they see)."),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
    customer: z.object({
      name: z.string(),
      contact: z.string(),
      contact_kind: z.enum(['email', 'phone']),
    }),
    order: z.object({
      number: z.string().nullable(),
      date: z.string().nullable().describe('Purchase date, YYYY-MM-DD.'),
      amount: z.number().nullable(),
      currency: z.string().nullable(),
      card_last4: z.string().nullable(),
    }),
    message: z.string().nullable(),
    reply: z.object({
      protocol: z.string().describe('How the requester wants to hear back (see start_return_request).'),
      callback_url: z.string().nullable(),
      agent_id: z.string().nullable(),
    }),
    approval: ApprovalSummary.nullable(),
    next_step: NextStep.nullable(),
  })
  .describe(
    'A return request addressed to your brand, with the personal data you need to act on it; the same facts ' +
      'as the delivered webhook.',
  );
export type BrandRequest = z.infer<typeof BrandRequest>;

export const ListBrandRequestsResult = z.object({
  requests: z.array(BrandRequest).describe('Newest first.'),
  next_cursor: NextCursor,
});

export const UpdateBrandRequestStatusInput = z.strictObject({
  request_id: z
    .uuid('must be a UUID')
    .describe('The request_id from the delivery or GET /brand-agent/requests.'),
  status: BrandStatus,
  note: z
    .string()
    .trim()
    .min(1)
    .max(1000)
    .optional()
    .describe("Shown to the requester in the request's history, e.g. the refund reference."),
});
