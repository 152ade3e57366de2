/**
 * The verified-email assertion: for an agent whose person has no identity provider we trust.
 *
 * 1. `POST {auth_url}/assertions/email` `{email, client_id}`: a six-digit one-time code goes to the
 *    email by SMTP; the answer names the request. The code is stored as an HMAC under a service
 *    secret (a six-digit code's plain SHA-256 would fall to a million guesses), lives
 *    `CODE_TTL_S`, and requests are limited per email and per client address.
 * 2. `POST {auth_url}/assertions/email/verify` `{request_id, code}`: the code the person read to
 *    the agent. Right: a signed identity assertion (an ID-JAG issued by this authorization server,
 *    `typ` `oauth-id-jag+jwt`, `aud` = our issuer, `client_id` the client named in step 1, `sub` and
 *    `email` the verified email, `email_verified` true), good for `ASSERTION_TTL_S`. Wrong: the
 *    tries left; the `MAX_ATTEMPTS`th wrong code locks the request.
 * 3. The agent exchanges the assertion at `{auth_url}/oauth/token` with the jwt-bearer grant
 *    (`grant.ts`), which checks it like any ID-JAG and signs the person in to (or creates) the
 *    account with that email.
 */
import { createHmac, randomInt, randomUUID, timingSafeEqual } from 'node:crypto';
import { importJWK, SignJWT } from 'jose';
import type { Kysely } from 'kysely';
import type { Transporter } from 'nodemailer';
import type { Database } from '../../db/schema.ts';
import type { Config } from '../../servers/config.ts';
import { ServiceError } from '../../servers/errors.ts';
import type { RateLimits } from '../../servers/rate-limit.ts';
import type { SigningJwk } from '../keys.ts';
import { ID_JAG_TYP, VERIFIED_EMAIL_ASSERTION } from './verify.ts';

/** Where the flow's two steps live under `auth_url` (`routes.ts`). */
export const EMAIL_CODE_PATH = '/assertions/email';
export const EMAIL_VERIFY_PATH = '/assertions/email/verify';

/** A code is good for ten minutes (issue 11). */
export const CODE_TTL_S = 10 * 60;
/** Tries per code; the last wrong one locks it. */
export const MAX_ATTEMPTS = 5;
/** The assertion a right code earns: exchange it at once. */
export const ASSERTION_TTL_S = 5 * 60;
const CODE_DIGITS = 6;

export interface CodeRequest {
  request_id: string;
  email: string;
  expires_at: string;
  expires_in: number;
  attempts_allowed: number;
}

export interface VerifiedEmailAssertion {
  assertion: string;
  assertion_type: typeof VERIFIED_EMAIL_ASSERTION;
  issued_token_type: 'urn:ietf:params:oauth:token-type:id-jag';
  expires_in: number;
  token_endpoint: string;
  grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer';
}

export interface EmailCodesOptions {
  db: Kysely<Database>;
  config: Config;
  mailer: Transporter | null;
  rateLimits: RateLimits;
  /** HMAC key for stored codes (a service secret). */
  codeKey: string;
  /** The authorization server's signing key (private JWK). */
  signingKey: SigningJwk;
  now: () => Date;
}

export class EmailCodes {
  readonly #o: EmailCodesOptions;

  constructor(options: EmailCodesOptions) {
    this.#o = options;
  }

  #digest(id: string, code: string): string {
    return createHmac('sha256', this.#o.codeKey).update(`${id}:${code}`).digest('base64url');
  }

  /** Sends a code to `email` for `clientId`; durable before the mail leaves. */
  async request(input: { email: string; clientId: string; address: string }): Promise<CodeRequest> {
    const { db, mailer, config, rateLimits, now } = this.#o;
    if (!mailer)
      throw new ServiceError('service_unavailable', {
        detail: 'Email is not configured on this deployment (smtp.url)',
      });
    const email = input.email.trim().toLowerCase();
    await rateLimits.consume('email_codes_per_address', input.address);
    await rateLimits.consume('email_codes_per_email', email);

    const id = randomUUID();
    const code = String(randomInt(0, 10 ** CODE_DIGITS)).padStart(CODE_DIGITS, '0');
    const created = now();
    const expires = new Date(created.getTime() + CODE_TTL_S * 1000);
    await db
      .insertInto('email_codes')
      .values({
        id,
        email,
        client_id: input.clientId,
        code_hash: this.#digest(id, code),
        created_at: created.toISOString(),
        expires_at: expires.toISOString(),
        used_at: null,
      })
      .execute();
    try {
      await mailer.sendMail({
        from: config.smtp.from,
        to: email,
        subject: `Your sign-in code: ${code}`,
        text:
          `Your one-time code is ${code}\n\n` +
          `An agent asked to act for ${email} at ${config.site_url}. If you asked it to, read this code to it. ` +
          `The code works for ${CODE_TTL_S / 60} minutes. If you did not ask for it, ignore this message: ` +
          'without the code nothing happens.\n',
        headers: { 'X-Request-Id': id },
      });
    } catch (err) {
      await db.deleteFrom('email_codes').where('id', '=', id).execute();
      throw new ServiceError('service_unavailable', {
        detail: 'The code could not be sent; try again later',
        cause: err,
      });
    }
    return {
      request_id: id,
      email,
      expires_at: expires.toISOString(),
      expires_in: CODE_TTL_S,
      attempts_allowed: MAX_ATTEMPTS,
    };
  }

  /** Checks `code` for the request; the right code once earns a signed assertion. */
  async verify(input: { requestId: string; code: string; address: string }): Promise<VerifiedEmailAssertion> {
    const { db, rateLimits, now } = this.#o;
    await rateLimits.consume('email_codes_per_address', input.address);
    const at = now().toISOString();
    // Counting the try and checking that one is left is one statement, so parallel guesses
    // (from any process) cannot exceed MAX_ATTEMPTS.
    const row = await db
      .updateTable('email_codes')
      .set((eb) => ({ attempts: eb('attempts', '+', 1) }))
      .where('id', '=', input.requestId)
      .where('used_at', 'is', null)
      .where('expires_at', '>', at)
      .where('attempts', '<', MAX_ATTEMPTS)
      .returning(['id', 'email', 'client_id', 'code_hash', 'attempts'])
      .executeTakeFirst();
    if (!row) throw await this.#whyNot(input.requestId, at);

    const expected = Buffer.from(row.code_hash);
    const given = Buffer.from(this.#digest(row.id, input.code));
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) {
      const left = MAX_ATTEMPTS - row.attempts;
      if (left <= 0)
        throw new ServiceError('email_code_locked', {
          detail: `Wrong code ${MAX_ATTEMPTS} times: this code is locked. Ask for a new code.`,
        });
      throw new ServiceError('email_code_invalid', {
        detail: `Wrong code; ${left} ${left === 1 ? 'try' : 'tries'} left`,
        errors: [{ field: 'code', message: `is not the code that was sent (${left} left)` }],
      });
    }
    const used = await db
      .updateTable('email_codes')
      .set({ used_at: at })
      .where('id', '=', row.id)
      .where('used_at', 'is', null)
      .executeTakeFirst();
    if (Number(used.numUpdatedRows) !== 1) throw await this.#whyNot(row.id, at);
    await rateLimits.refund('email_codes_per_address', input.address);
    return {
      assertion: await this.#sign(row.email, row.client_id),
      assertion_type: VERIFIED_EMAIL_ASSERTION,
      issued_token_type: 'urn:ietf:params:oauth:token-type:id-jag',
      expires_in: ASSERTION_TTL_S,
      token_endpoint: `${this.#o.config.auth_url}/oauth/token`,
      grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer',
    };
  }

  async #whyNot(id: string, at: string): Promise<ServiceError> {
    const row = await this.#o.db
      .selectFrom('email_codes')
      .select(['used_at', 'expires_at', 'attempts'])
      .where('id', '=', id)
      .executeTakeFirst();
    if (!row) return new ServiceError('not_found', { detail: 'No code was requested with this request_id' });
    if (row.used_at !== null || Date.parse(row.expires_at) <= Date.parse(at))
      return new ServiceError('email_code_expired', {
        detail: 'This code has expired or was already used. Ask for a new code.',
      });
    return new ServiceError('email_code_locked', {
      detail: `Wrong code ${MAX_ATTEMPTS} times: this code is locked. Ask for a new code.`,
    });
  }

  async #sign(email: string, clientId: string): Promise<string> {
    const { signingKey, config, now } = this.#o;
    const key = await importJWK(signingKey, 'ES256');
    const iat = Math.floor(now().getTime() / 1000);
    return new SignJWT({ client_id: clientId, email, email_verified: true, amr: ['otp'] })
      .setProtectedHeader({ alg: 'ES256', typ: ID_JAG_TYP, kid: signingKey.kid })
      .setIssuer(config.auth_url)
      .setAudience(config.auth_url)
      .setSubject(email)
      .setJti(randomUUID())
      .setIssuedAt(iat)
      .setExpirationTime(iat + ASSERTION_TTL_S)
      .sign(key);
  }
}
