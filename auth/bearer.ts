/**
 * Resource-server side of the owner-scoped MCP server: verifies an access token from our
 * authorization server and yields the principal it stands for (RFC 6750, RFC 9068, RFC 9728).
 *
 * Accepted: `Authorization: Bearer` only (SPEC "Authentication" rule 1), a JWT of type `at+jwt`
 * signed ES256 by a key of our JWKS, our issuer, audience = the owner MCP URL, unexpired, with a
 * `client_id` claim (a copied application-session JWT has none, rule 5), whose grant still exists
 * and whose account has not revoked every token issued before it. Failures are values with the
 * RFC 6750 error code the challenge carries.
 *
 * A token whose key id this process does not know (another process sharing the database rotated
 * the key and restarted) makes the verifier reload the published keys from the database, at most
 * once per `KEY_RELOAD_INTERVAL_MS` so tokens with made-up key ids cannot turn every request into
 * a query.
 *
 * What is cached, and what is not: a JWT access token cannot change, so what its text proves - the
 * signature, issuer, audience, type and claims - is remembered by its text until its `exp`, and the
 * signature is checked once per token rather than once per request. Whether the token still
 * stands is not cached: every request reads its grant (still there, for the same account and
 * client, unexpired) and the account's revoked-before time, in one indexed query shared by the
 * requests of one turn of the event loop (a query that starts after each of them arrived). A revocation
 * made by any process sharing the database (the revocation endpoint deleting the grant, an account
 * signing out everywhere, a security event) is therefore refused on the next request, in every
 * process, with nothing to invalidate: a cache of the standing as well would need each process to
 * learn of revocations through the database anyway - a read per request, or LISTEN/NOTIFY that
 * SQLite has no counterpart of - and would refuse late by whatever it missed.
 */
import {
  createLocalJWKSet,
  type FlattenedJWSInput,
  type JWSHeaderParameters,
  type JWTPayload,
  errors as joseErrors,
  jwtVerify,
} from 'jose';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.ts';
import type { SecretBox } from '../servers/secrets.ts';
import { publicJwk, publishedPublicKeys, type SigningJwk } from './keys.ts';
import { GRANT_CLAIM } from './provider.ts';
import { SERVICE_SCOPE } from './scopes.ts';

/** Least time between two reloads of the signing keys on an unknown key id. */
export const KEY_RELOAD_INTERVAL_MS = 5_000;
/** Verified tokens remembered at most (oldest dropped first); each only until its `exp`. */
const VERIFIED_TOKENS = 10_000;

/** Whether a grant still stands: its row, and its account's revoked-before time. */
interface GrantStanding {
  account_id: string | null;
  client_id: string | null;
  expires_at: string | null;
  revoked_before: string | null;
}

/** What a token's text proved once its signature and claims were checked. */
interface VerifiedToken {
  accountId: string;
  clientId: string;
  grantId: string;
  scopes: string[];
  /** `iat` and `exp`, in milliseconds. */
  issuedAt: number;
  expiresAt: number;
}

/** Who an owner-scoped request acts for, taken from the token (never from the input). */
export interface OwnerGrant {
  accountId: string;
  clientId: string;
  grantId: string;
  scopes: string[];
}

export type BearerResult =
  | { ok: true; grant: OwnerGrant }
  | {
      ok: false;
      status: 400 | 401 | 403;
      error?: 'invalid_request' | 'invalid_token' | 'insufficient_scope';
      description?: string;
    };

export interface BearerVerifierOptions {
  db: Kysely<Database>;
  issuer: string;
  /** The resource (RFC 8707) tokens must be issued for; any one of a list. */
  audience: string | string[];
  /** Signing keys of the authorization server; only their public parts are used. */
  keys: SigningJwk[];
  /** Opens the stored signing keys when they are reloaded (they may be sealed). */
  secrets: SecretBox;
  now?: () => Date;
}

export class BearerVerifier {
  readonly #db: Kysely<Database>;
  readonly #issuer: string;
  readonly #audience: string | string[];
  #jwks: ReturnType<typeof createLocalJWKSet>;
  #lastReload = Number.NEGATIVE_INFINITY;
  #reloading: Promise<void> | undefined;
  readonly #now: () => Date;
  readonly #secrets: SecretBox;
  readonly #verified = new Map<string, VerifiedToken>();
  /** Grants whose standing the requests of this turn wait for (`#standingOf`). */
  #standings = new Map<
    string,
    {
      promise: Promise<GrantStanding | undefined>;
      resolve: (standing: GrantStanding | undefined) => void;
      reject: (err: unknown) => void;
    }
  >();

  constructor(options: BearerVerifierOptions) {
    this.#db = options.db;
    this.#secrets = options.secrets;
    this.#issuer = options.issuer;
    this.#audience = options.audience;
    this.#now = options.now ?? (() => new Date());
    this.#jwks = createLocalJWKSet({ keys: options.keys.map(publicJwk) });
  }

  /** jose key resolver: the known keys, then once more after a reload when the key id is new. */
  readonly #key = async (header: JWSHeaderParameters, token: FlattenedJWSInput) => {
    try {
      return await this.#jwks(header, token);
    } catch (err) {
      if (!(err instanceof joseErrors.JWKSNoMatchingKey)) throw err;
      if (this.#now().getTime() - this.#lastReload < KEY_RELOAD_INTERVAL_MS && !this.#reloading) throw err;
      await this.#reloadKeys();
      return this.#jwks(header, token);
    }
  };

  #reloadKeys(): Promise<void> {
    this.#reloading ??= (async () => {
      try {
        this.#lastReload = this.#now().getTime();
        this.#jwks = createLocalJWKSet({
          keys: await publishedPublicKeys(this.#db, this.#secrets, this.#now),
        });
      } finally {
        this.#reloading = undefined;
      }
    })();
    return this.#reloading;
  }

  /** `authorization` is the request's header; `queryToken` an `access_token` query parameter, if any. */
  async verify(authorization: string | undefined, queryToken: unknown): Promise<BearerResult> {
    if (queryToken !== undefined) {
      return {
        ok: false,
        status: 400,
        error: 'invalid_request',
        description: 'Send the access token in the Authorization header; tokens in the URL are refused',
      };
    }
    if (!authorization) return { ok: false, status: 401 };
    const match = /^Bearer ([A-Za-z0-9\-._~+/]+=*)$/i.exec(authorization.trim());
    if (!match) {
      return {
        ok: false,
        status: 401,
        error: 'invalid_request',
        description: 'Expected Authorization: Bearer <token>',
      };
    }
    const token = match[1] as string;
    const now = this.#now().getTime();
    let verified = this.#verified.get(token);
    if (!verified || verified.expiresAt <= now) {
      this.#verified.delete(token);
      const checked = await this.#check(token);
      if (!('grantId' in checked)) return checked;
      verified = checked;
      if (this.#verified.size >= VERIFIED_TOKENS)
        this.#verified.delete(this.#verified.keys().next().value as string);
      this.#verified.set(token, verified);
    }

    const standing = await this.stands(verified, verified.issuedAt);
    if (standing === 'grant_revoked') return invalid('The grant of this access token was revoked');
    if (standing === 'account_revoked') return invalid('The account revoked its access tokens');
    if (!verified.scopes.includes(SERVICE_SCOPE)) {
      return {
        ok: false,
        status: 403,
        error: 'insufficient_scope',
        description: `The ${SERVICE_SCOPE} scope is required`,
      };
    }
    const { accountId, clientId, grantId, scopes } = verified;
    return { ok: true, grant: { accountId, clientId, grantId, scopes } };
  }

  /**
   * Whether what was issued at `issuedAt` (ms) under this grant still stands: the grant exists,
   * unexpired, for that account and client, and the account has revoked nothing issued since. The
   * check behind every token, and behind every request of an owner dashboard session
   * (`dashboard-sessions.ts`), which stands for the grant its sign-in was approved under.
   */
  async stands(
    grant: { accountId: string; clientId: string; grantId: string },
    issuedAt: number,
  ): Promise<'in_force' | 'grant_revoked' | 'account_revoked'> {
    const standing = await this.#standingOf(grant.grantId);
    if (
      !standing ||
      (standing.expires_at !== null && Date.parse(standing.expires_at) <= this.#now().getTime()) ||
      standing.account_id !== grant.accountId ||
      standing.client_id !== grant.clientId
    ) {
      return 'grant_revoked';
    }
    if (standing.revoked_before !== null && issuedAt < Date.parse(standing.revoked_before)) {
      return 'account_revoked';
    }
    return 'in_force';
  }

  /**
   * The grant's row and its account's revoked-before time. The requests of one turn of the event
   * loop share one query (a DataLoader-style batch read in `setImmediate`): it starts after every
   * one of them arrived, so each still sees every revocation committed before it came in.
   */
  #standingOf(grantId: string): Promise<GrantStanding | undefined> {
    let pending = this.#standings.get(grantId);
    if (!pending) {
      if (this.#standings.size === 0) setImmediate(() => void this.#readStandings());
      let resolve!: (standing: GrantStanding | undefined) => void;
      let reject!: (err: unknown) => void;
      const promise = new Promise<GrantStanding | undefined>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      pending = { promise, resolve, reject };
      this.#standings.set(grantId, pending);
    }
    return pending.promise;
  }

  async #readStandings(): Promise<void> {
    const batch = this.#standings;
    this.#standings = new Map();
    try {
      const rows = await this.#db
        .selectFrom('oauth_records as grants')
        .leftJoin('oauth_account_revocations as revocations', 'revocations.account_id', 'grants.account_id')
        .select([
          'grants.id',
          'grants.account_id',
          'grants.client_id',
          'grants.expires_at',
          'revocations.revoked_before',
        ])
        .where('grants.id', 'in', [...batch.keys()])
        .where('grants.model', '=', 'Grant')
        .execute();
      const byId = new Map(rows.map((row) => [row.id, row]));
      for (const [grantId, pending] of batch) pending.resolve(byId.get(grantId));
    } catch (err) {
      for (const pending of batch.values()) pending.reject(err);
    }
  }

  /** The signature and claims of a token this process has not verified yet (or that expired). */
  async #check(token: string): Promise<VerifiedToken | Extract<BearerResult, { ok: false }>> {
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, this.#key, {
        issuer: this.#issuer,
        audience: this.#audience,
        typ: 'at+jwt',
        algorithms: ['ES256'],
        requiredClaims: ['exp', 'sub', 'iat'],
        currentDate: this.#now(),
      }));
    } catch (err) {
      if (err instanceof joseErrors.JWTExpired) return invalid('The access token has expired');
      if (err instanceof joseErrors.JOSEError)
        return invalid('The access token is not valid for this resource');
      throw err;
    }
    const clientId = payload.client_id;
    if (typeof clientId !== 'string' || !clientId) {
      return invalid('The token has no client_id claim; use an access token issued to an OAuth client');
    }
    const grantId = payload[GRANT_CLAIM];
    if (typeof grantId !== 'string') return invalid('The access token names no grant');
    return {
      accountId: payload.sub as string,
      clientId,
      grantId,
      scopes: typeof payload.scope === 'string' ? payload.scope.split(' ').filter(Boolean) : [],
      issuedAt: (payload.iat as number) * 1000,
      expiresAt: (payload.exp as number) * 1000,
    };
  }
}

const invalid = (description: string): Extract<BearerResult, { ok: false }> => ({
  ok: false,
  status: 401,
  error: 'invalid_token',
  description,
});

/** Refuses every access token of the account issued before `at`. */
export async function revokeAccountTokens(db: Kysely<Database>, accountId: string, at: Date): Promise<void> {
  const revoked_before = at.toISOString();
  await db
    .insertInto('oauth_account_revocations')
    .values({ account_id: accountId, revoked_before })
    .onConflict((oc) => oc.column('account_id').doUpdateSet({ revoked_before }))
    .execute();
}

export interface AccountRevocation {
  revokedBefore: Date;
  grantsRevoked: number;
  sessionsEnded: number;
}

/**
 * Signs the account out everywhere: ends its sign-in sessions at the authorization server, deletes
 * its grants with every refresh token and code issued under them, and refuses its access tokens
 * issued before this second. `iat` has second precision (RFC 7519 section 2, NumericDate), so the
 * time is cut to the second: a token issued later in the same second is refused by the grant check
 * alone, and a client that signs in again right away is not refused for the rest of the second.
 */
export async function revokeAccountAuthorizations(
  db: Kysely<Database>,
  accountId: string,
  now: Date,
  also?: (trx: Kysely<Database>, revocation: AccountRevocation) => Promise<void>,
): Promise<AccountRevocation> {
  return db.transaction().execute(async (trx) => {
    const revocation = await revokeAccountAuthorizationsIn(trx, accountId, now);
    await also?.(trx, revocation);
    return revocation;
  });
}

/** `revokeAccountAuthorizations` inside the caller's transaction (a security event's receipt). */
export async function revokeAccountAuthorizationsIn(
  trx: Kysely<Database>,
  accountId: string,
  now: Date,
): Promise<AccountRevocation> {
  const revokedBefore = new Date(Math.floor(now.getTime() / 1000) * 1000);
  {
    const grants = await trx
      .selectFrom('oauth_records')
      .select('id')
      .where('model', '=', 'Grant')
      .where('account_id', '=', accountId)
      .execute();
    const grantIds = grants.map((g) => g.id);
    if (grantIds.length > 0) {
      await trx.deleteFrom('oauth_records').where('grant_id', 'in', grantIds).execute();
      await trx
        .deleteFrom('oauth_records')
        .where('model', '=', 'Grant')
        .where('id', 'in', grantIds)
        .execute();
    }
    const sessions = await trx
      .deleteFrom('oauth_records')
      .where('model', '=', 'Session')
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    await raiseRevokedBefore(trx, accountId, revokedBefore);
    return {
      revokedBefore,
      grantsRevoked: grantIds.length,
      sessionsEnded: Number(sessions.numDeletedRows),
    };
  }
}

/**
 * Refuses the account's access tokens issued before `at`, never moving an earlier revocation's
 * later time back (security events may arrive out of order).
 */
export async function raiseRevokedBefore(db: Kysely<Database>, accountId: string, at: Date): Promise<void> {
  const revoked_before = at.toISOString();
  await db
    .insertInto('oauth_account_revocations')
    .values({ account_id: accountId, revoked_before })
    .onConflict((oc) => oc.column('account_id').doNothing())
    .execute();
  await db
    .updateTable('oauth_account_revocations')
    .set({ revoked_before })
    .where('account_id', '=', accountId)
    .where('revoked_before', '<', revoked_before)
    .execute();
}
