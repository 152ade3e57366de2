/**
 * One error type with a fixed set of stable codes (STYLE.md 6). REST renders it as
 * `application/problem+json` (RFC 9457), MCP as an `isError` tool result carrying the same code.
 * `expose` is false for 5xx (unless the code says its detail is written for the caller): the client
 * gets the code and a generic title, the log gets the cause. `fault` marks the one code that is a
 * fault of this service: every other code, 5xx included, is an answer given by design and is logged
 * below error (`failureLogLevel`), so an operator's error alerts mean something.
 */
import { isDatabaseUnavailable } from '../db/database.ts';

/**
 * Every code with its status, its title and, in `about`, when it is answered: written for callers,
 * `docs/reference/errors.md` is generated from it (`npm run docs`).
 */
export const errorCodes = {
  validation_failed: {
    status: 400,
    title: 'The request has invalid fields',
    about: 'a field breaks its schema; `errors` names each field (text holding NUL, U+0000, included)',
  },
  malformed_json: {
    status: 400,
    title: 'The request body is not valid JSON',
    about:
      'a body that is not JSON, not UTF-8, holds a lone surrogate escape or gives a name twice in one object (RFC 8259, RFC 7493 I-JSON, `json-body.ts`), naming the byte and the member in `errors`; the same rule for every JSON body, answered over MCP and A2A as the JSON-RPC Parse error -32700 and by client registration as `invalid_request`; a `charset` other than UTF-8 is 415',
  },
  malformed_request: {
    status: 400,
    title: 'The request could not be decoded',
    about:
      'a path segment that is not valid percent-encoding (RFC 3986 section 2.1), naming the path parameter; a body that does not decode in its `Content-Encoding` (RFC 9110 section 8.4); bytes that are not HTTP/1.1 (RFC 9112; the connection is closed after the answer)',
  },
  unauthorized: {
    status: 401,
    title: 'Authentication is required',
    about: 'a missing or invalid service key',
  },
  invalid_token: {
    status: 401,
    title: 'The bearer token is unknown, expired or no longer valid',
    about:
      'an unknown, expired or claimed anonymous session token, or a bad soul JWT; sent with `WWW-Authenticate: Bearer error="invalid_token"` (RFC 6750 section 3.1)',
  },
  forbidden: {
    status: 403,
    title: 'Not allowed',
    about:
      'a valid token that does not stand for the resource, such as another soul\'s (`error="insufficient_scope"`)',
  },
  anonymous_scan_limit_reached: {
    status: 403,
    title: 'This anonymous session has used all its scans',
    about: "retrying does not help: the session's quota is spent until an account claims it",
  },
  payment_required: {
    status: 402,
    title: 'Payment required',
    about: 'x402: the operation is paid; `PAYMENT-REQUIRED` and the body carry the payment requirements',
  },
  payment_invalid: {
    status: 402,
    title: 'The payment was refused',
    about:
      'x402: the payment sent cannot pay for this request (undecodable, another amount, payee, asset or network, outside its validity window, a signature that does not recover the payer), naming the field and the x402 reason; nothing ran',
  },
  payment_already_used: {
    status: 402,
    title: 'This payment authorization was already used',
    about:
      'x402: the authorization already paid for another request, or its request is still running (`Retry-After`)',
  },
  payment_settlement_failed: {
    status: 402,
    title: 'The payment could not be settled',
    about: 'x402: the work was done but settlement was refused; the result is not delivered',
  },
  sign_in_required: {
    status: 402,
    title: 'Sign in with the wallet that paid (x402 sign-in-with-x)',
    about:
      'what was asked for was bought by a wallet and is read with its signature (or the link its purchase answered); the challenge to sign is in `extensions["sign-in-with-x"]` of `PAYMENT-REQUIRED` and of the body',
  },
  sign_in_invalid: {
    status: 402,
    title: 'The sign-in-with-x message was refused',
    about:
      'the `SIGN-IN-WITH-X` message is malformed, for another domain, chain or resource, too old or expired, its nonce already used, or its signature does not recover its address; the 402 carries a fresh challenge',
  },
  sign_in_not_payer: {
    status: 403,
    title: 'The wallet signed in did not pay for this',
    about: 'a valid sign-in-with-x message, by a wallet that did not pay for what it asks to read',
  },
  not_found: { status: 404, title: 'No such resource', about: "also another account's key, site or request" },
  route_not_found: { status: 404, title: 'No such endpoint', about: 'no route at this path' },
  method_not_allowed: {
    status: 405,
    title: 'Method not allowed on this endpoint',
    about: 'with `Allow`',
  },
  not_acceptable: {
    status: 406,
    title: 'No acceptable representation',
    about: '`Accept` names no type the endpoint serves',
  },
  idempotency_key_reused: {
    status: 409,
    title: 'Idempotency-Key already used with a different request',
    about: 'the same `Idempotency-Key` with another body',
  },
  idempotency_in_progress: {
    status: 409,
    title: 'A request with this Idempotency-Key is still being processed',
    about: 'the first request with this key has not answered yet',
  },
  payment_identifier_conflict: {
    status: 409,
    title: 'This payment identifier belongs to another request or is still in use',
    about:
      "x402 payment-identifier: the payer's payment id already paid for another request, or its request is still running (`Retry-After`); the new authorization was not used",
  },
  account_exists: {
    status: 409,
    title: 'An account cannot be created with this email',
    about: 'the email is already registered, and nothing more is said',
  },
  email_code_invalid: {
    status: 400,
    title: 'The code is not the one that was sent',
    about: 'a one-time verified-email code that does not match; the answer says how many tries are left',
  },
  email_code_expired: {
    status: 410,
    title: 'The code has expired or was already used',
    about: "the code's ten minutes are over, or it was used: ask for a new one",
  },
  email_code_locked: {
    status: 403,
    title: 'Too many wrong codes; this code is locked',
    about: 'five wrong codes: ask for a new one',
  },
  domain_not_verified: {
    status: 403,
    title: 'The domain is not verified for this account',
    about: 'the operation needs a domain the account proved it controls',
  },
  referral_handle_taken: {
    status: 409,
    title: 'The referral handle is taken',
    about: 'another account registered this handle',
  },
  brand_agent_taken: {
    status: 409,
    title: 'Another account has registered the agent of this domain',
    about: 'one brand agent per domain',
  },
  descriptor_taken: {
    status: 409,
    title: 'The statement descriptor belongs to another brand',
    about:
      'a statement descriptor another domain declared or the brand registry gives to another brand, or a domain whose descriptors another account declared (`charges/declarations.ts`)',
  },
  handle_taken: {
    status: 409,
    title: 'The handle is taken',
    about: "a soul's handle is unique across the registry",
  },
  soul_key_taken: {
    status: 409,
    title: 'This key already belongs to a soul',
    about: 'a key belongs to one soul, ever: it cannot register a second one or be rotated into another',
  },
  soul_retired: {
    status: 409,
    title: 'The soul is retired',
    about: 'a retired soul stays readable and takes no more writes (nor payments for them)',
  },
  conflict: {
    status: 409,
    title: 'The request conflicts with the current state',
    about:
      "the state changed under the request (another request rotated a soul's key first, a link exists, the log's head moved)",
  },
  scan_not_complete: {
    status: 409,
    title: 'The scan is not complete',
    about:
      'a diff compares two done scans: `scan_id` or `against` names one still queued or running (ask again when `GET /scans/{id}` says done) or one that failed',
  },
  no_earlier_scan: {
    status: 404,
    title: 'There is no earlier complete scan to compare with',
    about:
      'a diff without `against` compares with the previous complete scan of the same domain and depth that the caller may see, and there is none yet',
  },
  illegal_transition: {
    status: 409,
    title: 'That status change is not allowed from the current status',
    about: "the return request's state machine does not allow it",
  },
  bid_too_low: {
    status: 409,
    title: 'The bid cannot win the slot',
    about:
      'Featured Brand auction: the daily bid cannot take the slot now; `minimum_bid_usdc` is the daily bid that would. Answered before any payment is asked for (or, for a bid overtaken while it was being paid, instead of charging it)',
  },
  spotlight_full: {
    status: 409,
    title: 'Every spotlight slot is taken',
    about: 'every `marketplace.spotlight_slots` slot is taken; `next_opening_at` says when one opens',
  },
  site_unreachable: {
    status: 422,
    title: 'The site could not be reached or read',
    about:
      'the site named in the input could not be crawled (unreachable, refused by the outbound policy, out of time, no page to read): the request was understood and cannot be carried out for that site; never charged',
  },
  request_timeout: {
    status: 408,
    title: 'The request did not arrive in time',
    about:
      "the body did not arrive within `server.body_timeout_ms` of the headers, or the headers within Node's `headersTimeout` (RFC 9110 section 15.5.9); the connection is closed after the answer",
  },
  payload_too_large: {
    status: 413,
    title: 'The request body is too large',
    about: 'a body over `http.body_limit_bytes` (64 KiB)',
  },
  unsupported_media_type: {
    status: 415,
    title: 'Unsupported content type',
    about: 'a body that is not JSON, or a `charset` other than UTF-8',
  },
  rate_limited: { status: 429, title: 'Too many requests', about: 'with `Retry-After` (`rate_limits`)' },
  request_header_fields_too_large: {
    status: 431,
    title: 'The request line or header fields are too large',
    about:
      "the request line and header fields together are over Node's `--max-http-header-size` (16 KiB by default), a long query string included (RFC 6585 section 5); the connection is closed after the answer",
  },
  internal_error: {
    status: 500,
    title: 'Internal error',
    fault: true,
    about:
      'a fault of this service: no internals in the body, the cause in the log (the only code logged at error)',
  },
  provider_unavailable: {
    status: 502,
    title: 'An outside provider this request depends on failed or did not answer in time',
    expose: true,
    about:
      'a search provider or language model the request depends on failed or did not answer in time: nothing is charged; the detail names the provider and what happened (no answer within N ms, the HTTP status it answered)',
  },
  service_unavailable: {
    status: 503,
    title: 'Service temporarily unavailable',
    about:
      'with `Retry-After`: the database cannot be reached or cannot take the write now, or a payment peer is down - send the same request again ([Faults](../operations/faults.md))',
  },
  sku_unavailable: {
    status: 503,
    title: 'This paid service is not available here',
    expose: true,
    about:
      'the SKU cannot run on this deployment (not configured, not built yet): nothing is charged; the detail is the reason, which the live catalog publishes too',
  },
} as const satisfies Record<
  string,
  { status: number; title: string; about: string; expose?: boolean; fault?: true }
>;

export type ErrorCode = keyof typeof errorCodes;

/** One failing field of a request, named by its path (`amount`, `approval_proof.jws`). */
export interface FieldError {
  field: string;
  message: string;
}

/**
 * What an x402 refusal (402) carries for the adapters to render: the v2 `PaymentRequired` (REST
 * `PAYMENT-REQUIRED` header, MCP tool result), the v1 form for a v1 payer (REST body), and the
 * settlement response of a failed settlement (`PAYMENT-RESPONSE`).
 */
export interface PaymentChallenge {
  required: Record<string, unknown>;
  v1?: Record<string, unknown>;
  settlement?: Record<string, unknown>;
}

export interface ServiceErrorOptions {
  detail?: string;
  errors?: FieldError[];
  headers?: Record<string, string>;
  payment?: PaymentChallenge;
  /**
   * RFC 9457 section 3.2 extension members the caller reads (`minimum_bid_usdc`; a sign-in
   * challenge's `extensions`): JSON values.
   */
  extensions?: Record<string, unknown>;
  cause?: unknown;
}

export class ServiceError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly title: string;
  /** Whether `detail` may be shown to the caller. */
  readonly expose: boolean;
  /** Whether this is a fault of the service rather than an answer given by design. */
  readonly fault: boolean;
  readonly errors: FieldError[] | undefined;
  readonly headers: Record<string, string>;
  readonly payment: PaymentChallenge | undefined;
  readonly extensions: Record<string, unknown>;

  constructor(code: ErrorCode, options: ServiceErrorOptions = {}) {
    const known: { status: number; title: string; expose?: boolean; fault?: true } = errorCodes[code];
    const { status, title } = known;
    super(options.detail ?? title, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ServiceError';
    this.code = code;
    this.status = status;
    this.title = title;
    this.expose = known.expose ?? status < 500;
    this.fault = known.fault === true;
    this.errors = options.errors;
    this.headers = options.headers ?? {};
    this.payment = options.payment;
    // A wait in whole seconds rides in the body too, as `retry_after_s`: MCP and A2A callers read
    // tool results, not HTTP headers, and a REST client need not parse the header.
    const retryAfter = this.headers['Retry-After'];
    this.extensions =
      retryAfter !== undefined && /^\d+$/.test(retryAfter)
        ? { retry_after_s: Number(retryAfter), ...options.extensions }
        : (options.extensions ?? {});
  }

  /** What the caller may see. */
  get publicDetail(): string {
    return this.expose ? this.message : this.title;
  }

  /**
   * The failure as a tool result carries it, over MCP and A2A alike: `{code, message, errors?}`
   * and the code's extension fields, `retry_after_s` among them (REST sends the same as
   * problem+json, `adapters/problem.ts`).
   */
  toolBody(): { code: ErrorCode; message: string; errors?: FieldError[] } & Record<string, unknown> {
    return {
      code: this.code,
      message: this.publicDetail,
      ...(this.errors ? { errors: this.errors } : {}),
      ...this.extensions,
    };
  }
}

/**
 * The level `error` is logged at beside its request line, or undefined for none: a fault at error;
 * a 5xx by design whose detail the caller does not see (a database or a payment peer down, the
 * service over capacity) at warn, with its cause; anything else - a 4xx, or a 5xx whose detail is
 * written for the caller (`sku_unavailable`, `provider_unavailable`) - not at all: its request line
 * says it.
 */
export function failureLogLevel(error: ServiceError): 'error' | 'warn' | undefined {
  if (error.fault) return 'error';
  return error.status >= 500 && !error.expose ? 'warn' : undefined;
}

/**
 * The 5xx statuses only answers given by design use (503, 502): their request lines are logged at
 * warn. Any other 5xx - a fault's 500, or a status no code declares - is logged at error.
 */
export const designed5xxStatuses: ReadonlySet<number> = (() => {
  const codes = Object.values(errorCodes) as { status: number; fault?: true }[];
  const faults = new Set(codes.filter((c) => c.fault).map((c) => c.status));
  return new Set(codes.filter((c) => c.status >= 500 && !faults.has(c.status)).map((c) => c.status));
})();

export const invalid = (errors: FieldError[], detail?: string): ServiceError =>
  new ServiceError('validation_failed', {
    errors,
    detail: detail ?? errors.map((e) => `${e.field}: ${e.message}`).join('; '),
  });

export const notFound = (detail: string): ServiceError => new ServiceError('not_found', { detail });

/** How soon a caller may try again after the database could not be reached (seconds). */
export const DATABASE_RETRY_AFTER_S = 5;

/**
 * Anything thrown that is not a ServiceError is an internal error, except a database that cannot be
 * reached or cannot take the work now: that is 503 `service_unavailable` with `Retry-After`, since
 * the same request succeeds once it is back. Either way the message never reaches the caller.
 */
export function toServiceError(err: unknown): ServiceError {
  if (err instanceof ServiceError) return err;
  if (isDatabaseUnavailable(err)) {
    return new ServiceError('service_unavailable', {
      headers: { 'Retry-After': String(DATABASE_RETRY_AFTER_S) },
      cause: err,
    });
  }
  return new ServiceError('internal_error', { cause: err });
}
