/**
 * What the authorization server needs of site owners' accounts, declared here so that auth imports
 * no feature: `servers/features/accounts/service.ts` (`AccountsService`) implements it, and the
 * composition root hands it in. Each file here asks for the methods it uses (`Pick<Accounts, ...>`).
 */
import type { Kysely } from 'kysely';
import { z } from 'zod';
import type { AccountRow, Database } from '../db/schema.ts';

/** The account a request is authenticated as. */
export interface AccountPrincipal {
  id: string;
  /** The service key used (null when authenticated another way, e.g. an OAuth token). */
  keyId: string | null;
}

export const Email = z
  .email({ message: 'must be an email address' })
  .max(254)
  .describe('Email address of the site owner; also the sign-in name on the consent screen.');

export const Password = z
  .string()
  .min(12, { message: 'must be at least 12 characters' })
  .max(200, { message: 'must be at most 200 characters' })
  .describe(
    'Password for signing in on the OAuth consent screen (12 to 200 characters). Stored with scrypt.',
  );

export interface Accounts {
  get(accountId: string): Promise<AccountRow | undefined>;
  /** The account with this email (compared lower-cased, as accounts store it). */
  getByEmail(email: string): Promise<AccountRow | undefined>;
  /** Opens an account with its first service key; `also` runs in the same transaction (a claim). */
  create<T = undefined>(
    input: { email: string; password?: string | undefined },
    also?: (trx: Kysely<Database>, account: AccountRow) => Promise<T>,
  ): Promise<{ account: AccountRow; key: { service_key: string }; extra: T }>;
  /** The account whose password this is, or null; every attempt counts against the sign-in limits. */
  signIn(email: string, password: string, clientAddress: string): Promise<AccountRow | null>;
  /** The account behind a service key, or null. */
  authenticate(key: string | undefined): Promise<AccountPrincipal | null>;
}
