/**
 * Sessions of the owner dashboard. A session is made when a sign-in ends with an access token the
 * owner-scoped resource server accepts, and stands for that token's grant: it lasts
 * `DASHBOARD_SESSION_TTL_MS` at most, and ends at once when the owner signs out, revokes the
 * dashboard's approval, or revokes every authorization of the account - each request checks the
 * grant as a resource server checks a token's (`bearer.ts`, stands). Stored in the
 * database, so any process serves any request of a session.
 *
 * The cookie carries 256 random bits; the table keeps their SHA-256 digest. Forms carry an
 * anti-forgery token bound to the session (an HMAC of its digest under the authorization server's
 * cookie key), compared in constant time.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.ts';
import type { BearerVerifier, OwnerGrant } from './bearer.ts';
import { csrfMatches, csrfToken } from './form-security.ts';

/** Longest a dashboard sign-in lasts; the owner signs in again after it (silently while signed in at the authorization server). */
export const DASHBOARD_SESSION_TTL_MS = 12 * 3_600_000;

export interface DashboardSession {
  idHash: string;
  grant: OwnerGrant;
  createdAt: Date;
  expiresAt: Date;
  /** The anti-forgery token of this session's forms. */
  csrf: string;
}

const digest = (value: string) => createHash('sha256').update(value).digest('hex');

export class DashboardSessions {
  readonly #db: Kysely<Database>;
  readonly #bearer: Pick<BearerVerifier, 'stands'>;
  readonly #csrfKey: string;
  readonly #now: () => Date;

  constructor(
    db: Kysely<Database>,
    bearer: Pick<BearerVerifier, 'stands'>,
    csrfKey: string,
    now: () => Date,
  ) {
    this.#db = db;
    this.#bearer = bearer;
    this.#csrfKey = csrfKey;
    this.#now = now;
  }

  /** Starts a session for a verified grant; returns the cookie value (shown only now). */
  async create(grant: OwnerGrant): Promise<{ cookie: string; session: DashboardSession }> {
    const cookie = randomBytes(32).toString('base64url');
    const idHash = digest(cookie);
    const createdAt = this.#now();
    const expiresAt = new Date(createdAt.getTime() + DASHBOARD_SESSION_TTL_MS);
    await this.#db
      .insertInto('dashboard_sessions')
      .values({
        id_hash: idHash,
        account_id: grant.accountId,
        client_id: grant.clientId,
        grant_id: grant.grantId,
        scopes: grant.scopes.join(' '),
        created_at: createdAt.toISOString(),
        expires_at: expiresAt.toISOString(),
      })
      .execute();
    return { cookie, session: this.#session(idHash, grant, createdAt, expiresAt) };
  }

  /** The session a cookie stands for, or null when it is unknown, expired or its grant was revoked. */
  async find(cookie: string | undefined): Promise<DashboardSession | null> {
    if (!cookie || !/^[\w-]{43}$/.test(cookie)) return null;
    const idHash = digest(cookie);
    const row = await this.#db
      .selectFrom('dashboard_sessions')
      .selectAll()
      .where('id_hash', '=', idHash)
      .executeTakeFirst();
    if (!row) return null;
    const expiresAt = new Date(row.expires_at);
    const grant: OwnerGrant = {
      accountId: row.account_id,
      clientId: row.client_id,
      grantId: row.grant_id,
      scopes: row.scopes.split(' ').filter(Boolean),
    };
    const createdAt = new Date(row.created_at);
    const standing =
      expiresAt <= this.#now() ? 'expired' : await this.#bearer.stands(grant, createdAt.getTime());
    if (standing !== 'in_force') {
      await this.#db.deleteFrom('dashboard_sessions').where('id_hash', '=', idHash).execute();
      return null;
    }
    return this.#session(idHash, grant, createdAt, expiresAt);
  }

  /** Ends a session (sign-out). */
  async end(session: DashboardSession): Promise<void> {
    await this.#db.deleteFrom('dashboard_sessions').where('id_hash', '=', session.idHash).execute();
  }

  csrfValid(session: DashboardSession, sent: unknown): boolean {
    return csrfMatches(this.#csrfKey, `dashboard:${session.idHash}`, sent);
  }

  /** Deletes sessions past their end (housekeeping). */
  async sweep(): Promise<number> {
    const result = await this.#db
      .deleteFrom('dashboard_sessions')
      .where('expires_at', '<', this.#now().toISOString())
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  #session(idHash: string, grant: OwnerGrant, createdAt: Date, expiresAt: Date): DashboardSession {
    return {
      idHash,
      grant,
      createdAt,
      expiresAt,
      csrf: csrfToken(this.#csrfKey, `dashboard:${idHash}`),
    };
  }
}
