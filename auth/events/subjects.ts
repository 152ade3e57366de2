/**
 * Subject identifiers of the Shared Signals Framework (RFC 9493, SSF 1.0 section 3) and how they
 * name our accounts (docs/guides/authentication/caep.md):
 * - `email` {email}: the account with that email, when the transmitter is trusted for emails
 *   (`auth.trusted_transmitters[].email_subjects`);
 * - `iss_sub` {iss, sub}: with `iss` = our issuer (`auth_url`), `sub` is the account id (the `sub`
 *   of our tokens); with `iss` = the transmitter's own issuer, the account that subject is linked
 *   to by an identity assertion (`identity_links`, `auth/assertions/`); any other issuer's
 *   subjects name no account here (a transmitter speaks for its own subjects only);
 * - `opaque` {id}: the account id, as our tokens' `sub`;
 * - `complex` {user, ...}: its `user` member, one of the above (session and device members are
 *   not tracked apart from the account).
 */
import type { Kysely } from 'kysely';
import { z } from 'zod';
import type { Database } from '../../db/schema.ts';
import { linkedAccount } from '../assertions/repository.ts';

const Simple = z.discriminatedUnion('format', [
  z.object({ format: z.literal('email'), email: z.string().min(3).max(254) }),
  z.object({
    format: z.literal('iss_sub'),
    iss: z.string().min(1).max(2048),
    sub: z.string().min(1).max(255),
  }),
  z.object({ format: z.literal('opaque'), id: z.string().min(1).max(255) }),
]);
type Simple = z.infer<typeof Simple>;

export const SubjectIdentifier = z.union([
  Simple,
  z.object({ format: z.literal('complex'), user: Simple }).loose(),
]);
export type SubjectIdentifier = z.infer<typeof SubjectIdentifier>;

/** The formats this receiver reads, for the documentation and error messages. */
export const SUBJECT_FORMATS = ['email', 'iss_sub', 'opaque', 'complex (user)'] as const;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface SubjectContext {
  /** Our issuer (`auth_url`). */
  issuer: string;
  /** The transmitter's issuer (the SET's `iss`): its own `iss_sub` subjects may be linked to accounts. */
  transmitter: string;
  /** Whether this transmitter's email identifiers may name accounts. */
  emailSubjects: boolean;
}

/** The account the subject names, or null when it names none of ours. */
export async function accountOfSubject(
  db: Kysely<Database>,
  subject: SubjectIdentifier,
  context: SubjectContext,
): Promise<string | null> {
  const simple: Simple = subject.format === 'complex' ? subject.user : subject;
  let query = db.selectFrom('accounts').select('id');
  switch (simple.format) {
    case 'email':
      if (!context.emailSubjects) return null;
      query = query.where('email', '=', simple.email.trim().toLowerCase());
      break;
    case 'iss_sub':
      if (simple.iss === context.transmitter && simple.iss !== context.issuer) {
        return (await linkedAccount(db, simple.iss, simple.sub)) ?? null;
      }
      if (simple.iss !== context.issuer || !UUID.test(simple.sub)) return null;
      query = query.where('id', '=', simple.sub.toLowerCase());
      break;
    case 'opaque':
      if (!UUID.test(simple.id)) return null;
      query = query.where('id', '=', simple.id.toLowerCase());
      break;
  }
  return (await query.executeTakeFirst())?.id ?? null;
}

/** How our own SETs name an account: our issuer and the account id, as in our tokens. */
export const accountSubject = (issuer: string, accountId: string) =>
  ({ format: 'iss_sub', iss: issuer, sub: accountId }) as const;
