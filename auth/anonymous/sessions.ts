/**
 * Anonymous sessions: the `anonymous` method of the agent authentication descriptor (SPEC
 * "Authentication"). An agent without an account signs up and gets a bearer token that reads
 * public data and runs `auth.anonymous.scan_limit` scans; a person claims the session with its
 * one-time claim code, and the session's scans move to their account.
 *
 * Both secrets carry 256 random bits, so a SHA-256 digest is enough to store them and lets them be
 * found by an index lookup, as with service keys (`accounts/credentials.ts`). The claim code is a
 * different secret from the token: the token is what the agent keeps, the code is what it hands
 * to a person, and handing it over does not hand over the token.
 *
 * A claimed session's token stops working: from then on the scans belong to the account and are
 * read with its credentials (service key or OAuth), so there is no second credential for it.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';
import type { Config } from '../../servers/config.ts';
import { ServiceError } from '../../servers/errors.ts';

/** Prefixes let secret scanners (and people) recognise each secret, and tell the token apart. */
export const ANONYMOUS_TOKEN_PREFIX = 'agsvc_anon_';
const CLAIM_CODE_PREFIX = 'agsvc_claim_';
const TOKEN_PATTERN = /^agsvc_anon_[A-Za-z0-9_-]{43}$/;
const CLAIM_CODE_PATTERN = /^agsvc_claim_[A-Za-z0-9_-]{43}$/;

/** The anonymous session a request is authenticated as (`ctx.anonymous`). */
export interface AnonymousPrincipal {
  sessionId: string;
}

/** `POST {auth_url}/signup`: an access token response (RFC 6749 section 5.1) plus the session's quota. */
export interface AnonymousSignup {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  scan_limit: number;
  scans_used: number;
  claim_url: string;
}

/** What a claim code opens, shown before the person decides. */
export interface ClaimPreview {
  sessionId: string;
  scans: number;
}

/** What a claim moved to the account. */
export interface ClaimResult {
  sessionId: string;
  accountId: string;
  scans: { scan_id: string; domain: string; public: boolean }[];
}

export const digestOf = (secret: string): string => createHash('sha256').update(secret).digest('hex');

export const looksLikeAnonymousToken = (value: string): boolean => TOKEN_PATTERN.test(value);

export const claimUrl = (config: Config, code: string): string =>
  `${config.site_url}/register?claim=${encodeURIComponent(code)}`;

export class AnonymousSessions {
  readonly #db: Kysely<Database>;
  readonly #config: Config;
  readonly #now: () => Date;

  constructor(db: Kysely<Database>, config: Config, now: () => Date) {
    this.#db = db;
    this.#config = config;
    this.#now = now;
  }

  async create(): Promise<AnonymousSignup> {
    const { scan_limit, session_ttl_s } = this.#config.auth.anonymous;
    const token = ANONYMOUS_TOKEN_PREFIX + randomBytes(32).toString('base64url');
    const code = CLAIM_CODE_PREFIX + randomBytes(32).toString('base64url');
    const now = this.#now();
    await this.#db
      .insertInto('anonymous_sessions')
      .values({
        id: randomUUID(),
        token_hash: digestOf(token),
        claim_code_hash: digestOf(code),
        scan_limit,
        scans_used: 0,
        created_at: now.toISOString(),
        expires_at: new Date(now.getTime() + session_ttl_s * 1000).toISOString(),
      })
      .execute();
    return {
      access_token: token,
      token_type: 'Bearer',
      expires_in: session_ttl_s,
      scan_limit,
      scans_used: 0,
      claim_url: claimUrl(this.#config, code),
    };
  }

  /** The live (unexpired, unclaimed) session of a token, or null. */
  async authenticate(token: string): Promise<AnonymousPrincipal | null> {
    if (!looksLikeAnonymousToken(token)) return null;
    const row = await this.#db
      .selectFrom('anonymous_sessions')
      .select('id')
      .where('token_hash', '=', digestOf(token))
      .where('claimed_at', 'is', null)
      .where('expires_at', '>', this.#now().toISOString())
      .executeTakeFirst();
    return row ? { sessionId: row.id } : null;
  }

  /**
   * Counts one scan against the session's quota, in the caller's transaction so a scan that is not
   * stored is not counted. One conditional update: concurrent requests cannot overshoot the limit.
   */
  async reserveScan(db: Kysely<Database>, principal: AnonymousPrincipal): Promise<void> {
    const row = await db
      .updateTable('anonymous_sessions')
      .set((eb) => ({ scans_used: eb('scans_used', '+', 1) }))
      .where('id', '=', principal.sessionId)
      .where('claimed_at', 'is', null)
      .where((eb) => eb('scans_used', '<', eb.ref('scan_limit')))
      .returning(['scans_used', 'scan_limit'])
      .executeTakeFirst();
    if (row) return;
    const session = await db
      .selectFrom('anonymous_sessions')
      .select(['scan_limit', 'claimed_at'])
      .where('id', '=', principal.sessionId)
      .executeTakeFirst();
    if (!session || session.claimed_at !== null) throw invalidToken();
    throw new ServiceError('anonymous_scan_limit_reached', {
      detail:
        `This anonymous session may run ${session.scan_limit} scans and has used them. ` +
        'Have a person claim it at its claim_url to keep its results, then scan with an account.',
    });
  }

  /** The unclaimed, unexpired session a claim code opens, or null. */
  async preview(code: string): Promise<ClaimPreview | null> {
    if (!CLAIM_CODE_PATTERN.test(code)) return null;
    const row = await this.#db
      .selectFrom('anonymous_sessions')
      .select('id')
      .where('claim_code_hash', '=', digestOf(code))
      .where('claimed_at', 'is', null)
      .where('expires_at', '>', this.#now().toISOString())
      .executeTakeFirst();
    if (!row) return null;
    const count = await this.#db
      .selectFrom('scans')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('anonymous_session_id', '=', row.id)
      .executeTakeFirstOrThrow();
    return { sessionId: row.id, scans: Number(count.n) };
  }

  /**
   * Redeems a claim code for an account: marks the session claimed (so the code and the token stop
   * working) and moves its scans to the account, in one transaction. Null when the code is unknown,
   * expired or already used - also when another claim of the same code won the race.
   */
  async claim(code: string, accountId: string): Promise<ClaimResult | null> {
    return this.#db.transaction().execute((trx) => this.claimIn(trx, code, accountId));
  }

  /** `claim()` inside the caller's transaction (an account created in it claims atomically). */
  async claimIn(trx: Kysely<Database>, code: string, accountId: string): Promise<ClaimResult | null> {
    if (!CLAIM_CODE_PATTERN.test(code)) return null;
    const at = this.#now().toISOString();
    const session = await trx
      .updateTable('anonymous_sessions')
      .set({ claimed_at: at, claimed_by: accountId })
      .where('claim_code_hash', '=', digestOf(code))
      .where('claimed_at', 'is', null)
      .where('expires_at', '>', at)
      .returning('id')
      .executeTakeFirst();
    if (!session) return null;
    const moved = await trx
      .updateTable('scans')
      .set({ account_id: accountId })
      .where('anonymous_session_id', '=', session.id)
      .returning(['id', 'domain', 'is_public'])
      .execute();
    return {
      sessionId: session.id,
      accountId,
      scans: moved.map((s) => ({ scan_id: s.id, domain: s.domain, public: s.is_public === 1 })),
    };
  }

  /** Removes sessions that expired unclaimed; their scans stay, attributed to no one. */
  async sweep(): Promise<void> {
    await this.#db
      .deleteFrom('anonymous_sessions')
      .where('claimed_at', 'is', null)
      .where('expires_at', '<=', this.#now().toISOString())
      .execute();
  }
}

/** RFC 6750 section 3.1: the token is expired, revoked or otherwise invalid. */
export function invalidToken(): ServiceError {
  return new ServiceError('invalid_token', {
    detail:
      'The bearer token is not a live anonymous session: it is unknown, expired or its session was claimed. ' +
      'Sign up again (POST /signup on the authorization server) or use the account that claimed it.',
    headers: {
      'WWW-Authenticate': 'Bearer error="invalid_token", error_description="The access token is not valid"',
    },
  });
}
