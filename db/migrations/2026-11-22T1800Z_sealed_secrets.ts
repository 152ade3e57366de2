/**
 * Frozen: never edit a migration that has shipped; add a new one.
 * Signing keys may be stored sealed (`servers/secrets.ts`, SECRETS_KEY): `private_jwk` holds text,
 * a JWK in clear or a sealed value, so PostgreSQL's `jsonb` column becomes `text`. (SQLite's
 * column is text already.)
 */
import { type Kysely, PostgresAdapter, sql } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations are typed loosely (kysely recommendation)
export async function up(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await sql`alter table oauth_signing_keys alter column private_jwk type text using private_jwk::text`.execute(
    db,
  );
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await sql`alter table oauth_signing_keys alter column private_jwk type jsonb using private_jwk::jsonb`.execute(
    db,
  );
}
