/**
 * Storage of the identity-assertion grant: subjects linked to accounts and the `jti`s already
 * accepted (migration 2026-11-25T1100Z). Functions of `(db | trx)` (STYLE.md 10).
 */
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';

/** The account an identity provider's subject is linked to, if any. */
export async function linkedAccount(
  db: Kysely<Database>,
  issuer: string,
  subject: string,
): Promise<string | undefined> {
  const row = await db
    .selectFrom('identity_links')
    .select('account_id')
    .where('issuer', '=', issuer)
    .where('subject', '=', subject)
    .executeTakeFirst();
  return row?.account_id;
}

/**
 * Links the subject to the account unless it is linked already; returns the account it is linked
 * to afterwards (the earlier link wins when two exchanges race).
 */
export async function linkSubject(
  db: Kysely<Database>,
  link: { issuer: string; subject: string; accountId: string; at: Date },
): Promise<string> {
  await db
    .insertInto('identity_links')
    .values({
      issuer: link.issuer,
      subject: link.subject,
      account_id: link.accountId,
      created_at: link.at.toISOString(),
    })
    .onConflict((oc) => oc.columns(['issuer', 'subject']).doNothing())
    .execute();
  return (await linkedAccount(db, link.issuer, link.subject)) ?? link.accountId;
}

/**
 * Records `jti` of `issuer` as used; false when it was already (a replay). The primary key makes
 * this one atomic insert, so two processes racing with the same assertion cannot both succeed.
 */
export async function consumeJti(
  db: Kysely<Database>,
  entry: { issuer: string; jti: string; acceptableUntil: Date },
): Promise<boolean> {
  const result = await db
    .insertInto('assertion_jtis')
    .values({ issuer: entry.issuer, jti: entry.jti, expires_at: entry.acceptableUntil.toISOString() })
    .onConflict((oc) => oc.columns(['issuer', 'jti']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
}

/**
 * Forgets `jti`s whose assertion could not be accepted after `before` (a replay is then refused as
 * expired or too old; callers leave the clock tolerance), and one-time email codes past their expiry.
 */
export async function sweepAssertionRecords(db: Kysely<Database>, before: Date): Promise<void> {
  const at = before.toISOString();
  await db.deleteFrom('assertion_jtis').where('expires_at', '<', at).execute();
  await db.deleteFrom('email_codes').where('expires_at', '<', at).execute();
}
