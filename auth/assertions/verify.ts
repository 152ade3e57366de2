/**
 * Checks an identity assertion presented with the jwt-bearer grant (RFC 7523) at
 * `{auth_url}/oauth/token`: an Identity Assertion JWT Authorization Grant (ID-JAG,
 * draft-ietf-oauth-identity-assertion-authz-grant-04, section 4.3 and 5.1) from an identity
 * provider of `auth.trusted_issuers`, or the verified-email assertion this server signs itself
 * (`email-codes.ts`), which has the same shape with our issuer as `iss`.
 *
 * Checked here, in this order, each refusal a value naming what failed: a JWS with `typ`
 * `oauth-id-jag+jwt` and an asymmetric `alg` (never `none`, never an HMAC: RFC 8725 section 3.1);
 * an issuer we trust (byte-exact `iss`); the signature against that issuer's JWKS (fetched
 * through the SSRF-safe fetcher and cached); `aud` exactly our issuer; `exp`, `iat` (not in the
 * future, at most `MAX_ASSERTION_AGE_S` old), `sub`, `jti` present; `client_id` naming the client
 * that authenticated at the token endpoint. Single use of `jti` is recorded by the grant after every
 * other check has passed (`grant.ts`).
 */
import {
  createLocalJWKSet,
  createRemoteJWKSet,
  customFetch,
  decodeJwt,
  decodeProtectedHeader,
  type FetchImplementation,
  type JWTPayload,
  type JWTVerifyGetKey,
  errors as joseErrors,
  jwtVerify,
} from 'jose';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';
import type { Config } from '../../servers/config.ts';
import type { SafeFetch } from '../../servers/outbound/safe-fetch.ts';
import type { SecretBox } from '../../servers/secrets.ts';
import { publishedPublicKeys } from '../keys.ts';

/** RFC 7523 section 2.1. */
export const JWT_BEARER_GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
/** draft-ietf-oauth-identity-assertion-authz-grant-04 section 3: the JWT `typ` header of an ID-JAG. */
export const ID_JAG_TYP = 'oauth-id-jag+jwt';
/** draft-ietf-oauth-identity-assertion-authz-grant-04 section 9.1: the token type URI of an ID-JAG. */
export const ID_JAG_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:id-jag';
/** The descriptor's assertion type for the assertions of the verified-email flow. */
export const VERIFIED_EMAIL_ASSERTION = 'verified_email';

/** Signature algorithms accepted: asymmetric only (an HMAC key would be a secret shared with the IdP). */
export const ASSERTION_ALGORITHMS = [
  'ES256',
  'ES384',
  'ES512',
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'EdDSA',
  'Ed25519',
] as const;

/** An assertion issued longer ago than this is refused, whatever its `exp`: ID-JAGs are short-lived. */
export const MAX_ASSERTION_AGE_S = 10 * 60;
/** Clock difference tolerated between us and an identity provider. */
export const CLOCK_TOLERANCE_S = 30;
/** A trusted issuer's JWKS is fetched again after this long, or on an unknown key id (not more than every 30 s). */
const JWKS_CACHE_MS = 10 * 60_000;
const JWKS_COOLDOWN_MS = 30_000;

export type TrustedIssuer = Config['auth']['trusted_issuers'][number];

/** What a checked assertion says. */
export interface IdentityAssertion {
  issuer: string;
  /** True for our own verified-email assertions. */
  self: boolean;
  /** The issuer's entry in `auth.trusted_issuers` (null for our own). */
  trusted: TrustedIssuer | null;
  subject: string;
  jti: string;
  /** After this the assertion is refused however it is presented: `exp`, or `iat` + the age limit if sooner. */
  acceptableUntil: Date;
  email: string | null;
  emailVerified: boolean | null;
  /** `scope` claim, split; null when absent. */
  scopes: string[] | null;
  /** `resource` claim; null when absent. */
  resource: string | null;
}

export type AssertionCheck = { ok: true; assertion: IdentityAssertion } | { ok: false; description: string };

export interface AssertionVerifierOptions {
  config: Config;
  db: Kysely<Database>;
  secrets: SecretBox;
  fetch: SafeFetch;
  now: () => Date;
}

export class IdentityAssertionVerifier {
  readonly #config: Config;
  readonly #db: Kysely<Database>;
  readonly #secrets: SecretBox;
  readonly #now: () => Date;
  readonly #remote = new Map<string, JWTVerifyGetKey>();
  readonly #fetch: FetchImplementation;

  constructor(options: AssertionVerifierOptions) {
    this.#config = options.config;
    this.#db = options.db;
    this.#secrets = options.secrets;
    this.#now = options.now;
    const safe = options.fetch;
    // jose hands a WHATWG Headers and a signal; the SSRF-safe fetcher accepts both.
    this.#fetch = ((url: string, init: unknown) =>
      safe(url, init as never)) as unknown as FetchImplementation;
  }

  get issuer(): string {
    return this.#config.auth_url;
  }

  /** Checks `assertion` presented by the authenticated client `clientId`. */
  async verify(assertion: string, clientId: string): Promise<AssertionCheck> {
    const refuse = (description: string): AssertionCheck => ({ ok: false, description });
    let header: ReturnType<typeof decodeProtectedHeader>;
    let unverified: JWTPayload;
    try {
      header = decodeProtectedHeader(assertion);
      unverified = decodeJwt(assertion);
    } catch {
      return refuse('the assertion is not a signed JWT (compact JWS)');
    }
    if (assertion.split('.').length !== 3) return refuse('the assertion is not a signed JWT (compact JWS)');
    if (header.typ !== ID_JAG_TYP) return refuse(`the assertion's typ header must be ${ID_JAG_TYP}`);
    if (typeof header.alg !== 'string' || !(ASSERTION_ALGORITHMS as readonly string[]).includes(header.alg))
      return refuse(`the assertion's alg must be one of ${ASSERTION_ALGORITHMS.join(', ')}`);

    const iss = unverified.iss;
    if (typeof iss !== 'string') return refuse('the assertion has no iss claim');
    const self = iss === this.issuer;
    const trusted = self ? null : (this.#config.auth.trusted_issuers.find((t) => t.issuer === iss) ?? null);
    if (!self && !trusted) return refuse(`the issuer ${iss} is not trusted by this authorization server`);
    const keys = trusted ? this.#keysOf(trusted) : await this.#ownKeys();

    const aud = unverified.aud;
    if (Array.isArray(aud) && aud.length !== 1)
      return refuse(`the assertion's aud must be this authorization server's issuer alone (${this.issuer})`);

    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(assertion, keys, {
        issuer: iss,
        audience: this.issuer,
        typ: ID_JAG_TYP,
        algorithms: [...ASSERTION_ALGORITHMS],
        requiredClaims: ['iss', 'sub', 'aud', 'exp', 'iat', 'jti', 'client_id'],
        maxTokenAge: MAX_ASSERTION_AGE_S,
        clockTolerance: CLOCK_TOLERANCE_S,
        currentDate: this.#now(),
      }));
    } catch (err) {
      return refuse(describeFailure(err, this.issuer));
    }
    if (payload.client_id !== clientId)
      return refuse('the assertion was issued to another client (client_id does not match)');
    if (typeof payload.sub !== 'string' || !payload.sub) return refuse('the assertion has no sub');
    if (typeof payload.jti !== 'string' || !payload.jti) return refuse('the assertion has no jti');
    // These are stored (identity_links, assertion_jtis), and PostgreSQL cannot store NUL (`servers/input.ts`).
    for (const claim of ['sub', 'jti', 'email'] as const)
      if (typeof payload[claim] === 'string' && (payload[claim] as string).includes('\u0000'))
        return refuse(`the assertion's ${claim} must not contain NUL characters`);
    if (payload.scope !== undefined && typeof payload.scope !== 'string')
      return refuse('the assertion scope claim must be a string');
    if (payload.resource !== undefined && typeof payload.resource !== 'string')
      return refuse('the assertion resource claim must be a single URI');
    const email = typeof payload.email === 'string' ? payload.email.trim().toLowerCase() : null;
    const emailVerified = typeof payload.email_verified === 'boolean' ? payload.email_verified : null;
    return {
      ok: true,
      assertion: {
        issuer: iss,
        self,
        trusted,
        subject: payload.sub,
        jti: payload.jti,
        acceptableUntil: new Date(
          Math.min(payload.exp as number, (payload.iat as number) + MAX_ASSERTION_AGE_S) * 1000,
        ),
        email,
        emailVerified,
        scopes: typeof payload.scope === 'string' ? payload.scope.split(' ').filter(Boolean) : null,
        resource: typeof payload.resource === 'string' ? payload.resource : null,
      },
    };
  }

  /** Our own published keys: a verified-email assertion may come from another process, signed with its key. */
  async #ownKeys(): Promise<JWTVerifyGetKey> {
    return createLocalJWKSet({ keys: await publishedPublicKeys(this.#db, this.#secrets, this.#now) });
  }

  #keysOf(trusted: TrustedIssuer): JWTVerifyGetKey {
    let keys = this.#remote.get(trusted.issuer);
    if (!keys) {
      keys = createRemoteJWKSet(new URL(trusted.jwks_uri), {
        cacheMaxAge: JWKS_CACHE_MS,
        cooldownDuration: JWKS_COOLDOWN_MS,
        timeoutDuration: this.#config.outbound.timeout_ms,
        [customFetch]: this.#fetch,
      });
      this.#remote.set(trusted.issuer, keys);
    }
    return keys;
  }
}

function describeFailure(err: unknown, issuer: string): string {
  if (err instanceof joseErrors.JWTExpired)
    return err.claim === 'iat'
      ? `the assertion was issued more than ${MAX_ASSERTION_AGE_S} s ago`
      : 'the assertion has expired';
  if (err instanceof joseErrors.JWTClaimValidationFailed) {
    switch (err.claim) {
      case 'aud':
        return `the assertion's aud must be this authorization server's issuer (${issuer})`;
      case 'iat':
        return 'the assertion was issued in the future';
      case 'typ':
        return `the assertion's typ header must be ${ID_JAG_TYP}`;
      default:
        return `the assertion's ${err.claim} claim is missing or invalid`;
    }
  }
  if (err instanceof joseErrors.JWSSignatureVerificationFailed)
    return "the assertion's signature does not verify with its issuer's keys";
  if (err instanceof joseErrors.JWKSNoMatchingKey)
    return "no key of the issuer's JWKS matches the assertion's kid and alg";
  if (err instanceof joseErrors.JOSEAlgNotAllowed) return "the assertion's alg is not accepted";
  if (err instanceof joseErrors.JWKSTimeout || err instanceof joseErrors.JWKSInvalid)
    return "the issuer's JWKS could not be read";
  if (err instanceof joseErrors.JOSEError) return 'the assertion is not a valid JWT';
  // A network failure fetching the JWKS (refused destination, connection error).
  return "the issuer's JWKS could not be fetched";
}
