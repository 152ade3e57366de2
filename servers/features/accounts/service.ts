/**
 * Accounts of site owners and their service keys. A key is shown once, when it is made; afterwards
 * only its digest and display prefix exist. Authentication keeps a short in-process cache of
 * digests it has already checked, so the ingestion hot path does not query per request; revoking
 * takes effect at once in this process and within `KEY_CACHE_MS` in the others.
 */
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { AccountPrincipal, Accounts } from '../../../auth/accounts.ts';
import { isUniqueViolation } from '../../../db/database.ts';
import type { AccountRow, Database, ServiceKeyRow } from '../../../db/schema.ts';
import { invalid, notFound, ServiceError } from '../../errors.ts';
import type { RateLimits } from '../../rate-limit.ts';
import {
  generateServiceKey,
  hashPassword,
  hashServiceKey,
  looksLikeServiceKey,
  sameDigest,
  verifyPassword,
} from './credentials.ts';

export type { AccountPrincipal };

export interface IssuedKey {
  key_id: string;
  service_key: string;
  prefix: string;
  label: string | null;
  created_at: string;
}

const KEY_CACHE_MS = 10_000;
const KEY_CACHE_MAX = 10_000;
/** `last_used_at` is a hint for owners; it is written at most this often per key. */
const LAST_USED_RESOLUTION_MS = 60_000;

interface CachedKey {
  principal: AccountPrincipal;
  hash: string;
  expires: number;
  lastUsedWritten: number;
}

export class AccountsService implements Accounts {
  readonly #db: Kysely<Database>;
  readonly #now: () => Date;
  readonly #limits: RateLimits;
  readonly #keys = new Map<string, CachedKey>();

  constructor(db: Kysely<Database>, limits: RateLimits, now: () => Date = () => new Date()) {
    this.#db = db;
    this.#limits = limits;
    this.#now = now;
  }

  /**
   * Creates an account with its first service key; `account_exists` (409) if the email is taken.
   * `also` runs in the same transaction, so what the caller adds (a first site) exists exactly when
   * the account does.
   */
  async create<T = undefined>(
    input: { email: string; password?: string | undefined },
    also?: (trx: Kysely<Database>, account: AccountRow) => Promise<T>,
  ): Promise<{ account: AccountRow; key: IssuedKey; extra: T }> {
    const createdAt = this.#now().toISOString();
    const account: AccountRow = {
      id: randomUUID(),
      email: input.email.toLowerCase(),
      password_hash: input.password ? await hashPassword(input.password) : null,
      created_at: createdAt,
    };
    try {
      return await this.#db.transaction().execute(async (trx) => {
        await trx.insertInto('accounts').values(account).execute();
        const key = await this.#insertKey(trx, account.id, 'first key');
        const extra = (also ? await also(trx, account) : undefined) as T;
        return { account, key, extra };
      });
    } catch (err) {
      if (isUniqueViolation(err)) {
        throw new ServiceError('account_exists', {
          detail: 'An account cannot be created with this email. Use the service key issued for it.',
        });
      }
      throw err;
    }
  }

  /** The account behind a service key, or null for a missing, malformed, unknown or revoked key. */
  async authenticate(key: string | undefined): Promise<AccountPrincipal | null> {
    if (!key || !looksLikeServiceKey(key)) return null;
    const hash = hashServiceKey(key);
    const now = this.#now().getTime();
    const cached = this.#keys.get(hash);
    if (cached && cached.expires > now && sameDigest(cached.hash, hash)) {
      this.#touch(cached, now);
      return cached.principal;
    }
    const row = await this.#db
      .selectFrom('service_keys')
      .select(['id', 'account_id', 'key_hash', 'revoked_at'])
      .where('key_hash', '=', hash)
      .executeTakeFirst();
    if (!row || row.revoked_at !== null || !sameDigest(row.key_hash, hash)) {
      this.#keys.delete(hash);
      return null;
    }
    if (this.#keys.size >= KEY_CACHE_MAX) this.#keys.delete(this.#keys.keys().next().value as string);
    const entry: CachedKey = {
      principal: { id: row.account_id, keyId: row.id },
      hash,
      expires: now + KEY_CACHE_MS,
      lastUsedWritten: 0,
    };
    this.#keys.set(hash, entry);
    this.#touch(entry, now);
    return entry.principal;
  }

  /**
   * A person signing in with email and password (the OAuth sign-in form, the claim form): the
   * account, or null for a wrong email or password; `rate_limited` (429) past the guessing limits
   * (OWASP Authentication Cheat Sheet, "Protect against automated attacks"). Every attempt counts
   * against the client address and the account before any hashing, so a refused guess costs no
   * scrypt and concurrent guesses cannot all start before the first failure is counted; a success
   * gives its attempt back to the address and ends the account's run of failures. The account key
   * is the normalised email whether or not an account has it: an unknown email is counted,
   * refused and hashed like a known one, so neither the answers nor their timing tell them apart.
   */
  async signIn(email: string, password: string, clientAddress: string): Promise<AccountRow | null> {
    const normalised = email.trim().toLowerCase();
    await this.#limits.consume('sign_in_failures_per_address', clientAddress);
    await this.#limits.consume('sign_in_failures_per_account', normalised);
    let account: AccountRow | null;
    try {
      account = await this.verifyPassword(normalised, password);
    } catch (err) {
      // Not checked (the hashing queue was full): the attempt does not count.
      await Promise.all([
        this.#limits.refund('sign_in_failures_per_address', clientAddress),
        this.#limits.refund('sign_in_failures_per_account', normalised),
      ]);
      throw err;
    }
    if (account) {
      await Promise.all([
        this.#limits.refund('sign_in_failures_per_address', clientAddress),
        this.#limits.reset('sign_in_failures_per_account', normalised),
      ]);
    }
    return account;
  }

  /**
   * The account for an email and password, or null; the same work for an unknown email. Without
   * the guessing limits: people signing in go through `signIn`.
   */
  async verifyPassword(email: string, password: string): Promise<AccountRow | null> {
    const account = await this.#db
      .selectFrom('accounts')
      .selectAll()
      .where('email', '=', email.toLowerCase())
      .executeTakeFirst();
    const ok = await verifyPassword(password, account?.password_hash ?? DUMMY_HASH);
    return ok && account?.password_hash ? account : null;
  }

  /**
   * Sets the account's password; `current` must match when it has one. `also` runs in the same
   * transaction (the security event it emits). Returns whether a password existed before.
   */
  async changePassword(
    accountId: string,
    current: string | undefined,
    next: string,
    also?: (trx: Kysely<Database>, replaced: boolean) => Promise<void>,
  ): Promise<{ replaced: boolean }> {
    const account = await this.get(accountId);
    if (!account) throw notFound('No such account');
    const replaced = account.password_hash !== null;
    if (
      replaced &&
      !(current !== undefined && (await verifyPassword(current, account.password_hash as string)))
    ) {
      throw invalid([{ field: 'current_password', message: 'does not match the account password' }]);
    }
    const password_hash = await hashPassword(next);
    await this.#db.transaction().execute(async (trx) => {
      await trx.updateTable('accounts').set({ password_hash }).where('id', '=', accountId).execute();
      await also?.(trx, replaced);
    });
    return { replaced };
  }

  /** Changes the account's email (its sign-in name); `account_exists` (409) if another account has it. */
  async changeEmail(
    accountId: string,
    email: string,
    also?: (trx: Kysely<Database>, previous: string) => Promise<void>,
  ): Promise<AccountRow> {
    const normalised = email.trim().toLowerCase();
    try {
      return await this.#db.transaction().execute(async (trx) => {
        const account = await trx
          .selectFrom('accounts')
          .selectAll()
          .where('id', '=', accountId)
          .executeTakeFirst();
        if (!account) throw notFound('No such account');
        if (account.email === normalised) return account;
        await trx.updateTable('accounts').set({ email: normalised }).where('id', '=', accountId).execute();
        await also?.(trx, account.email);
        return { ...account, email: normalised };
      });
    } catch (err) {
      if (isUniqueViolation(err)) {
        throw new ServiceError('account_exists', { detail: 'Another account has this email.' });
      }
      throw err;
    }
  }

  async get(accountId: string): Promise<AccountRow | undefined> {
    return this.#db.selectFrom('accounts').selectAll().where('id', '=', accountId).executeTakeFirst();
  }

  /** The account with this email (compared lower-cased, as accounts store it). */
  async getByEmail(email: string): Promise<AccountRow | undefined> {
    return this.#db
      .selectFrom('accounts')
      .selectAll()
      .where('email', '=', email.trim().toLowerCase())
      .executeTakeFirst();
  }

  async issueKey(accountId: string, label: string | null): Promise<IssuedKey> {
    return this.#insertKey(this.#db, accountId, label);
  }

  async listKeys(accountId: string): Promise<ServiceKeyRow[]> {
    return this.#db
      .selectFrom('service_keys')
      .selectAll()
      .where('account_id', '=', accountId)
      .orderBy('created_at')
      .execute();
  }

  /** Revokes one of the account's own keys; another account's key id is answered as not found. */
  async revokeKey(accountId: string, keyId: string): Promise<ServiceKeyRow> {
    const revokedAt = this.#now().toISOString();
    const row = await this.#db
      .updateTable('service_keys')
      .set({ revoked_at: revokedAt })
      .where('id', '=', keyId)
      .where('account_id', '=', accountId)
      .where('revoked_at', 'is', null)
      .returningAll()
      .executeTakeFirst();
    const key =
      row ??
      (await this.#db
        .selectFrom('service_keys')
        .selectAll()
        .where('id', '=', keyId)
        .where('account_id', '=', accountId)
        .executeTakeFirst());
    if (!key) throw notFound(`No key ${keyId} on this account`);
    for (const [hash, cached] of this.#keys) if (cached.principal.keyId === keyId) this.#keys.delete(hash);
    return key;
  }

  async #insertKey(db: Kysely<Database>, accountId: string, label: string | null): Promise<IssuedKey> {
    const { key, hash, prefix } = generateServiceKey();
    const row = {
      id: randomUUID(),
      account_id: accountId,
      key_hash: hash,
      prefix,
      label,
      created_at: this.#now().toISOString(),
    };
    await db.insertInto('service_keys').values(row).execute();
    return { key_id: row.id, service_key: key, prefix, label, created_at: row.created_at };
  }

  #touch(entry: CachedKey, now: number): void {
    if (now - entry.lastUsedWritten < LAST_USED_RESOLUTION_MS || entry.principal.keyId === null) return;
    entry.lastUsedWritten = now;
    void this.#db
      .updateTable('service_keys')
      .set({ last_used_at: new Date(now).toISOString() })
      .where('id', '=', entry.principal.keyId)
      .execute()
      .catch(() => {
        entry.lastUsedWritten = 0;
      });
  }
}

/** Verified against when the email is unknown, so timing does not reveal which emails exist. */
const DUMMY_HASH = '$scrypt$ln=17,r=8,p=1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
