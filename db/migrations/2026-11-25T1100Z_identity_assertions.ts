/**
 * Frozen: never edit a migration that has shipped; add a new one.
 * Identity assertions (issue 11, section 2): the jwt-bearer grant at `{auth_url}/oauth/token`
 * links an identity provider's subject to an account once (`identity_links`), accepts each
 * assertion's `jti` once per issuer across every process (`assertion_jtis`, kept until the
 * assertion expires), and the verified-email flow keeps its one-time codes as keyed digests
 * (`email_codes`).
 */
import { type Kysely, PostgresAdapter, sql } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations are typed loosely (kysely recommendation)
export async function up(db: Kysely<any>): Promise<void> {
  const pg = db.getExecutor().adapter instanceof PostgresAdapter;
  const ts = pg ? sql`timestamptz` : sql`text`;
  const uuid = pg ? sql`uuid` : sql`text`;

  await db.schema
    .createTable('identity_links')
    .addColumn('issuer', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('account_id', uuid, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('created_at', ts, (c) => c.notNull())
    .addPrimaryKeyConstraint('identity_links_pk', ['issuer', 'subject'])
    .execute();
  await db.schema.createIndex('identity_links_account').on('identity_links').column('account_id').execute();

  await db.schema
    .createTable('assertion_jtis')
    .addColumn('issuer', 'text', (c) => c.notNull())
    .addColumn('jti', 'text', (c) => c.notNull())
    .addColumn('expires_at', ts, (c) => c.notNull())
    .addPrimaryKeyConstraint('assertion_jtis_pk', ['issuer', 'jti'])
    .execute();
  await db.schema.createIndex('assertion_jtis_expires').on('assertion_jtis').column('expires_at').execute();

  await db.schema
    .createTable('email_codes')
    .addColumn('id', uuid, (c) => c.primaryKey())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('code_hash', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('expires_at', ts, (c) => c.notNull())
    .addColumn('used_at', ts)
    .execute();
  await db.schema.createIndex('email_codes_expires').on('email_codes').column('expires_at').execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('email_codes').execute();
  await db.schema.dropTable('assertion_jtis').execute();
  await db.schema.dropTable('identity_links').execute();
}
