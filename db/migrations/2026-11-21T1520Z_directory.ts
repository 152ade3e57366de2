/**
 * Frozen: never edit a migration that has shipped; add a new one.
 * Directory: listings of verified domains and the agents brands register for their domains.
 */
import { type Kysely, PostgresAdapter, sql } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations are typed loosely (kysely recommendation)
export async function up(db: Kysely<any>): Promise<void> {
  const pg = db.getExecutor().adapter instanceof PostgresAdapter;
  const ts = pg ? sql`timestamptz` : sql`text`;
  const json = pg ? sql`jsonb` : sql`text`;
  const uuid = pg ? sql`uuid` : sql`text`;

  await db.schema
    .createTable('listings')
    .addColumn('id', uuid, (c) => c.primaryKey())
    .addColumn('account_id', uuid, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('domain', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('category', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('tags', json, (c) => c.notNull())
    .addColumn('contact', json, (c) => c.notNull())
    .addColumn('search_text', 'text', (c) => c.notNull())
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .addUniqueConstraint('listings_account_domain', ['account_id', 'domain'])
    .execute();
  await db.schema.createIndex('listings_recent').on('listings').columns(['created_at', 'id']).execute();
  await db.schema.createIndex('listings_category').on('listings').column('category').execute();

  await db.schema
    .createTable('brand_agents')
    .addColumn('id', uuid, (c) => c.primaryKey())
    .addColumn('account_id', uuid, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('domain', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('endpoint', 'text', (c) => c.notNull())
    .addColumn('protocols', json, (c) => c.notNull())
    .addColumn('support_contact', json, (c) => c.notNull())
    .addColumn('return_contact', json, (c) => c.notNull())
    .addColumn('return_policy', json)
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('brand_agents_account').on('brand_agents').column('account_id').execute();
  await db.schema
    .createIndex('brand_agents_recent')
    .on('brand_agents')
    .columns(['created_at', 'id'])
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['brand_agents', 'listings']) await db.schema.dropTable(table).execute();
}
