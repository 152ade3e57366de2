/**
 * The receiver of security events: a Security Event Token (RFC 8417) pushed to `{auth_url}/ssf/push`
 * (RFC 8935) by a transmitter of `auth.trusted_transmitters` is verified, recorded once per `jti`
 * and acted on in the same transaction (docs/guides/authentication/caep.md):
 * - session-revoked: the subject's sign-in sessions end, its grants go with every refresh token,
 *   and its access tokens issued before now are refused by the owner MCP server (`bearer.ts`);
 * - credential-change: the subject's refresh tokens are deleted;
 * - token-claims-change: its access tokens issued before the change are refused and the claims
 *   are stored (`account_event_claims`).
 *
 * Failures are values carrying the RFC 8935 section 2.3 error code. A transmitter's retry of a SET
 * already accepted (same `jti`, same bytes) is answered 202 again without acting twice; another SET
 * reusing the `jti` is refused.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import {
  createRemoteJWKSet,
  customFetch,
  decodeJwt,
  decodeProtectedHeader,
  type JWTPayload,
  errors as joseErrors,
  jwtVerify,
} from 'jose';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { z } from 'zod';
import type { Database } from '../../db/schema.ts';
import type { Config, TrustedTransmitter } from '../../servers/config.ts';
import { nulFields } from '../../servers/input.ts';
import { readLimitedBody, type SafeFetch } from '../../servers/outbound/safe-fetch.ts';
import { raiseRevokedBefore, revokeAccountAuthorizationsIn } from '../bearer.ts';
import {
  CAEP_EVENT_TYPES,
  type CaepEventType,
  CREDENTIAL_CHANGE,
  SESSION_REVOKED,
  SET_ALGORITHMS,
  SET_TYP,
  TOKEN_CLAIMS_CHANGE,
} from './set.ts';
import { accountOfSubject, SUBJECT_FORMATS, SubjectIdentifier } from './subjects.ts';

/** RFC 8935 section 2.3 error codes. */
export type PushErrorCode =
  | 'invalid_request'
  | 'invalid_key'
  | 'invalid_issuer'
  | 'invalid_audience'
  | 'authentication_failed'
  | 'access_denied';

export type PushResult =
  | { ok: true; duplicate: boolean; eventType: string; accountId: string | null }
  | { ok: false; status: 400 | 401 | 403; err: PushErrorCode; description: string }
  | { ok: false; status: 503; err: 'temporarily_unavailable'; description: string };

/**
 * Oldest SET accepted (by `iat`), and how long receipts are kept: a SET older than this is refused,
 * so a receipt can be deleted once it is older too and a replay still cannot take effect again.
 */
export const MAX_SET_AGE_S = 7 * 24 * 3600;
/** Receipts are kept a day longer than the oldest SET accepted (clock skew). */
export const RECEIPT_RETENTION_MS = (MAX_SET_AGE_S + 24 * 3600) * 1000;
/** How far in the future a SET's `iat` may be (transmitter clock skew). */
const CLOCK_TOLERANCE_S = 300;

/** Largest JWKS read from a transmitter. */
const MAX_JWKS_BYTES = 64 * 1024;
/** How long a transmitter's keys are used before they are fetched again (jose `cacheMaxAge`). */
const JWKS_MAX_AGE_MS = 10 * 60_000;
/** Least time between two fetches on an unknown key id (jose `cooldownDuration`). */
const JWKS_COOLDOWN_MS = 30_000;

/** CAEP 1.0 section 3: the members each event must carry. */
const EventPayloads: Record<CaepEventType, z.ZodType> = {
  [SESSION_REVOKED]: z.object({ event_timestamp: z.number().optional() }).loose(),
  [CREDENTIAL_CHANGE]: z
    .object({
      credential_type: z.string().min(1),
      change_type: z.enum(['create', 'revoke', 'update', 'delete']),
      event_timestamp: z.number().optional(),
    })
    .loose(),
  [TOKEN_CLAIMS_CHANGE]: z
    .object({
      claims: z.record(z.string(), z.unknown()).refine((c) => Object.keys(c).length > 0, 'must name a claim'),
      event_timestamp: z.number().optional(),
    })
    .loose(),
};

const isCaep = (type: string): type is CaepEventType =>
  (CAEP_EVENT_TYPES as readonly string[]).includes(type);

export interface ReceiverDeps {
  db: Kysely<Database>;
  config: Config;
  fetch: SafeFetch;
  log: Logger;
  now: () => Date;
}

export class SecurityEventReceiver {
  readonly #deps: ReceiverDeps;
  readonly #transmitters: Map<string, TrustedTransmitter>;
  readonly #keys = new Map<string, ReturnType<typeof createRemoteJWKSet>>();

  constructor(deps: ReceiverDeps) {
    this.#deps = deps;
    this.#transmitters = new Map(deps.config.auth.trusted_transmitters.map((t) => [t.issuer, t]));
  }

  /** The transmitter's keys, fetched through the SSRF-safe fetcher and cached by jose. */
  #jwks(transmitter: TrustedTransmitter) {
    let keys = this.#keys.get(transmitter.issuer);
    if (!keys) {
      const fetch = this.#deps.fetch;
      keys = createRemoteJWKSet(new URL(transmitter.jwks_uri), {
        cacheMaxAge: JWKS_MAX_AGE_MS,
        cooldownDuration: JWKS_COOLDOWN_MS,
        timeoutDuration: this.#deps.config.outbound.timeout_ms,
        [customFetch]: async (url, init) => {
          const response = await fetch(url, {
            method: init.method,
            redirect: 'manual',
            signal: init.signal,
            headers: Object.fromEntries(init.headers),
          });
          const { bytes, truncated } = await readLimitedBody(response, MAX_JWKS_BYTES);
          if (truncated) throw new joseErrors.JWKSInvalid('the JSON Web Key Set is too large');
          return new Response(response.status === 200 ? new Uint8Array(bytes) : null, {
            status: response.status,
          });
        },
      });
      this.#keys.set(transmitter.issuer, keys);
    }
    return keys;
  }

  /** `token` is the request body; `authorization` its Authorization header, if any. */
  async receive(token: string, authorization: string | undefined): Promise<PushResult> {
    const compact = token.trim();
    const unverified = unverifiedSet(compact);
    if ('err' in unverified) return unverified;
    const { iss } = unverified.claims;
    const transmitter = typeof iss === 'string' ? this.#transmitters.get(iss) : undefined;
    if (!transmitter) return refuse(400, 'invalid_issuer', 'The SET issuer is not a trusted transmitter');
    if (transmitter.push_token !== null && !bearerMatches(authorization, transmitter.push_token)) {
      return refuse(401, 'authentication_failed', 'The push request did not carry the agreed authorization');
    }
    const verified = await this.#verify(compact, transmitter);
    if ('err' in verified) return verified;
    const set = setEvent(verified.payload, transmitter);
    if ('err' in set) return set;
    return this.#record(compact, transmitter, set);
  }

  /** The SET's signature and claims checked with the transmitter's keys, or why it is refused. */
  async #verify(
    compact: string,
    transmitter: TrustedTransmitter,
  ): Promise<{ payload: JWTPayload } | Refused> {
    try {
      const { payload } = await jwtVerify(compact, this.#jwks(transmitter), {
        issuer: transmitter.issuer,
        audience: transmitter.audience ?? this.#deps.config.auth_url,
        algorithms: SET_ALGORITHMS,
        requiredClaims: ['jti', 'iat'],
        currentDate: this.#deps.now(),
        clockTolerance: CLOCK_TOLERANCE_S,
        maxTokenAge: MAX_SET_AGE_S,
      });
      return { payload };
    } catch (err) {
      return this.#verifyFailure(err, transmitter);
    }
  }

  #verifyFailure(err: unknown, transmitter: TrustedTransmitter): Refused {
    if (
      (err instanceof joseErrors.JWTClaimValidationFailed || err instanceof joseErrors.JWTExpired) &&
      err.claim === 'iat'
    ) {
      return refuse(
        400,
        'invalid_request',
        `The SET's iat is in the future or more than ${MAX_SET_AGE_S / 86400} days old`,
      );
    }
    if (err instanceof joseErrors.JWTClaimValidationFailed) {
      if (err.claim === 'aud')
        return refuse(400, 'invalid_audience', 'The SET audience is not this receiver');
      if (err.claim === 'iss')
        return refuse(400, 'invalid_issuer', 'The SET issuer is not a trusted transmitter');
      return refuse(400, 'invalid_request', `The SET claim ${err.claim} is not valid`);
    }
    if (err instanceof joseErrors.JWTExpired) return refuse(400, 'invalid_request', 'The SET has expired');
    if (err instanceof joseErrors.JWTInvalid)
      return refuse(400, 'invalid_request', 'The SET claims are malformed');
    if (err instanceof joseErrors.JWKSTimeout || !(err instanceof joseErrors.JOSEError)) {
      // A jwks_uri the outbound policy refuses is a configuration error here, not the transmitter's.
      const blocked =
        (err as Error).name === 'BlockedDestinationError' ||
        (err as { cause?: Error }).cause?.name === 'BlockedDestinationError';
      this.#deps.log[blocked ? 'error' : 'warn'](
        { err, issuer: transmitter.issuer, jwks_uri: transmitter.jwks_uri },
        blocked
          ? 'transmitter jwks_uri is not an allowed destination'
          : 'transmitter keys could not be fetched',
      );
      return {
        ok: false,
        status: 503,
        err: 'temporarily_unavailable',
        description: "The transmitter's keys could not be fetched; try again later",
      };
    }
    return refuse(400, 'invalid_key', "The SET signature does not verify with the transmitter's keys");
  }

  /**
   * The receipt (issuer, jti) stored and the event applied to the subject's account, in one
   * transaction; a jti seen before is a duplicate when the SET is the same, refused when not.
   */
  async #record(compact: string, transmitter: TrustedTransmitter, set: SetEvent): Promise<PushResult> {
    const { db, config, now } = this.#deps;
    const { jti, eventType, event, caep, subject } = set;
    const at = now();
    const digest = createHash('sha256').update(compact).digest('base64url');
    return db.transaction().execute(async (trx): Promise<PushResult> => {
      const accountId = subject
        ? await accountOfSubject(trx, subject, {
            issuer: config.auth_url,
            transmitter: transmitter.issuer,
            emailSubjects: transmitter.email_subjects,
          })
        : null;
      const inserted = await trx
        .insertInto('security_event_receipts')
        .values({
          issuer: transmitter.issuer,
          jti,
          digest,
          event_type: eventType,
          account_id: accountId,
          received_at: at.toISOString(),
        })
        .onConflict((oc) => oc.columns(['issuer', 'jti']).doNothing())
        .executeTakeFirst();
      if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 0) {
        const earlier = await trx
          .selectFrom('security_event_receipts')
          .select('digest')
          .where('issuer', '=', transmitter.issuer)
          .where('jti', '=', jti)
          .executeTakeFirst();
        if (earlier?.digest !== digest) {
          return refuse(
            400,
            'invalid_request',
            'This jti was already used by another SET of this transmitter',
          );
        }
        return { ok: true, duplicate: true, eventType, accountId };
      }
      if (accountId && caep) {
        await applyEvent(trx, caep, event as Record<string, unknown>, accountId, transmitter.issuer, at);
      }
      this.#deps.log.info(
        { issuer: transmitter.issuer, jti, event_type: eventType, account_id: accountId },
        'security event received',
      );
      return { ok: true, duplicate: false, eventType, accountId };
    });
  }
}

type Refused = Extract<PushResult, { ok: false }>;

const refuse = (status: 400 | 401 | 403, err: PushErrorCode, description: string): Refused => ({
  ok: false,
  status,
  err,
  description,
});

/** The claims of a compact JWS whose header names a SET algorithm and type, not yet verified. */
function unverifiedSet(compact: string): { claims: JWTPayload } | Refused {
  let alg: unknown;
  let typ: unknown;
  let unverified: JWTPayload;
  try {
    if (compact.split('.').length !== 3) throw new Error('not a compact JWS');
    ({ alg, typ } = decodeProtectedHeader(compact));
    unverified = decodeJwt(compact);
  } catch {
    return refuse(400, 'invalid_request', 'The body is not a SET: a signed JWT in compact form is expected');
  }
  if (typeof alg !== 'string' || !SET_ALGORITHMS.includes(alg)) {
    return refuse(400, 'invalid_request', `The SET must be signed with one of ${SET_ALGORITHMS.join(', ')}`);
  }
  if (typeof typ !== 'string' || typ.toLowerCase().replace(/^application\//, '') !== SET_TYP) {
    return refuse(400, 'invalid_request', `The SET's JOSE header must carry typ "${SET_TYP}"`);
  }
  return { claims: unverified };
}

/** The one event a verified SET carries, and the subject it is about. */
interface SetEvent {
  jti: string;
  eventType: string;
  event: object;
  /** The CAEP event type this receiver acts on, or null for one it only records. */
  caep: CaepEventType | null;
  subject: SubjectIdentifier | null;
}

/** The event of a verified SET, checked: one event, one the transmitter is trusted for, well formed. */
function setEvent(payload: JWTPayload, transmitter: TrustedTransmitter): SetEvent | Refused {
  if (nulFields(payload).length > 0) {
    return refuse(400, 'invalid_request', 'The SET claims must not contain NUL characters');
  }
  const jti = payload.jti as string;
  if (jti.length > 255) return refuse(400, 'invalid_request', 'jti is longer than 255 characters');
  const events = payload.events;
  if (typeof events !== 'object' || events === null || Array.isArray(events)) {
    return refuse(400, 'invalid_request', 'The SET carries no events object');
  }
  const entries = Object.entries(events as Record<string, unknown>);
  if (entries.length !== 1) return refuse(400, 'invalid_request', 'A SET must carry exactly one event');
  const [eventType, event] = entries[0] as [string, unknown];
  if (typeof event !== 'object' || event === null || Array.isArray(event)) {
    return refuse(400, 'invalid_request', `The ${eventType} event payload must be an object`);
  }
  // Event types this receiver does not act on (RISC, the SSF verification event) are accepted and recorded.
  const caep = isCaep(eventType) ? eventType : null;
  if (caep && !transmitter.events.includes(caep)) {
    return refuse(403, 'access_denied', `This transmitter is not trusted for ${eventType} events`);
  }
  if (caep) {
    const checked = EventPayloads[caep].safeParse(event);
    if (!checked.success) {
      const issue = checked.error.issues[0];
      return refuse(
        400,
        'invalid_request',
        `The ${eventType} event's ${issue?.path.join('.') || 'payload'} ${issue?.message ?? 'is invalid'}`,
      );
    }
  }
  const subject = subjectOf(payload, event, caep !== null);
  if (subject === undefined) {
    return refuse(
      400,
      'invalid_request',
      `sub_id must be a subject identifier in one of the formats ${SUBJECT_FORMATS.join(', ')}`,
    );
  }
  return { jti, eventType, event, caep, subject };
}

/**
 * The SET's subject (SSF 1.0 puts it in `sub_id`; CAEP's earlier drafts inside the event): null
 * when there is none and none is needed, undefined when it is malformed or a CAEP event lacks it.
 */
function subjectOf(
  payload: JWTPayload,
  event: object,
  required: boolean,
): SubjectIdentifier | null | undefined {
  const rawSubject = payload.sub_id ?? (event as { subject?: unknown }).subject;
  if (rawSubject === undefined && !required) return null;
  const parsed = SubjectIdentifier.safeParse(rawSubject);
  return parsed.success ? parsed.data : undefined;
}

/** What each event does to the account, inside the receipt's transaction. */
async function applyEvent(
  trx: Kysely<Database>,
  type: CaepEventType,
  event: Record<string, unknown>,
  accountId: string,
  issuer: string,
  at: Date,
): Promise<void> {
  switch (type) {
    case SESSION_REVOKED:
      await revokeAccountAuthorizationsIn(trx, accountId, at);
      return;
    case CREDENTIAL_CHANGE:
      await trx
        .deleteFrom('oauth_records')
        .where('model', '=', 'RefreshToken')
        .where('account_id', '=', accountId)
        .execute();
      return;
    case TOKEN_CLAIMS_CHANGE: {
      // `iat` has second precision: a token issued in the same second as the change cannot be told
      // apart from one issued just before it, so it is refused too (the client asks again).
      await raiseRevokedBefore(trx, accountId, at);
      const claims = event.claims as Record<string, unknown>;
      const stored = await trx
        .selectFrom('account_event_claims')
        .select('claims')
        .where('account_id', '=', accountId)
        .where('issuer', '=', issuer)
        .executeTakeFirst();
      const merged = JSON.stringify({ ...(stored ? parseClaims(stored.claims) : {}), ...claims });
      await trx
        .insertInto('account_event_claims')
        .values({ account_id: accountId, issuer, claims: merged, changed_at: at.toISOString() })
        .onConflict((oc) =>
          oc.columns(['account_id', 'issuer']).doUpdateSet({ claims: merged, changed_at: at.toISOString() }),
        )
        .execute();
      return;
    }
  }
}

/** PostgreSQL returns jsonb parsed; SQLite text. */
function parseClaims(stored: unknown): Record<string, unknown> {
  return (typeof stored === 'string' ? JSON.parse(stored) : stored) as Record<string, unknown>;
}

function bearerMatches(authorization: string | undefined, expected: string): boolean {
  const match = /^Bearer (\S+)$/i.exec(authorization?.trim() ?? '');
  if (!match) return false;
  const given = createHash('sha256')
    .update(match[1] as string)
    .digest();
  return timingSafeEqual(given, createHash('sha256').update(expected).digest());
}

/** Deletes receipts older than any SET still accepted; returns how many. Run by the housekeeping timer. */
export async function sweepSecurityEventReceipts(db: Kysely<Database>, now: Date): Promise<number> {
  const result = await db
    .deleteFrom('security_event_receipts')
    .where('received_at', '<', new Date(now.getTime() - RECEIPT_RETENTION_MS).toISOString())
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
