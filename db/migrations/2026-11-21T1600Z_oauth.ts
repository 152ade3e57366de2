/**
 * Frozen: never edit a migration that has shipped; add a new one.
 * Authorization server (issue 4): oidc-provider's stored models, its signing keys, and the
 * per-account time before which every access token is refused.
 */
import { type Kysely, PostgresAdapter, sql } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations are typed loosely (kysely recommendation)
export async function up(db: Kysely<any>): Promise<void> {
  const pg = db.getExecutor().adapter instanceof PostgresAdapter;
  const ts = pg ? sql`timestamptz` : sql`text`;
  const json = pg ? sql`jsonb` : sql`text`;

  await db.schema
    .createTable('oauth_records')
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('grant_id', 'text')
    .addColumn('uid', 'text')
    .addColumn('user_code', 'text')
    .addColumn('account_id', 'text')
    .addColumn('payload', json, (c) => c.notNull())
    .addColumn('expires_at', ts)
    .addColumn('consumed_at', ts)
    .addPrimaryKeyConstraint('oauth_records_pk', ['id', 'model'])
    .execute();
  await db.schema.createIndex('oauth_records_grant').on('oauth_records').column('grant_id').execute();
  await db.schema.createIndex('oauth_records_uid').on('oauth_records').column('uid').execute();
  await db.schema.createIndex('oauth_records_user_code').on('oauth_records').column('user_code').execute();
  await db.schema.createIndex('oauth_records_expires').on('oauth_records').column('expires_at').execute();

  await db.schema
    .createTable('oauth_signing_keys')
    .addColumn('kid', 'text', (c) => c.primaryKey())
    .addColumn('private_jwk', json, (c) => c.notNull())
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('retired_at', ts)
    .execute();

  await db.schema
    .createTable('oauth_account_revocations')
    .addColumn('account_id', 'text', (c) => c.primaryKey())
    .addColumn('revoked_before', ts, (c) => c.notNull())
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['oauth_account_revocations', 'oauth_signing_keys', 'oauth_records']) {
    await db.schema.dropTable(table).execute();
  }
}
