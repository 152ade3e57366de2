/**
 * Frozen: never edit a migration that has shipped; add a new one.
 * Card charge lookup for the long tail (issue 10): merchants resolved live to a website, with the
 * evidence (`resolved_merchants`, found and not found alike), and the statement descriptors brands
 * declare for their verified domains (`declared_descriptors`).
 */
import { type Kysely, PostgresAdapter, sql } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations are typed loosely (kysely recommendation)
export async function up(db: Kysely<any>): Promise<void> {
  const pg = db.getExecutor().adapter instanceof PostgresAdapter;
  const ts = pg ? sql`timestamptz` : sql`text`;
  const json = pg ? sql`jsonb` : sql`text`;
  const uuid = pg ? sql`uuid` : sql`text`;
  const real = pg ? sql`double precision` : sql`real`;

  await db.schema
    .createTable('resolved_merchants')
    .addColumn('name_key', 'text', (c) => c.notNull())
    .addColumn('city_key', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('domain', 'text')
    .addColumn('name', 'text')
    .addColumn('category', 'text')
    .addColumn('confidence', real)
    .addColumn('evidence', json, (c) => c.notNull())
    .addColumn('checked_at', ts, (c) => c.notNull())
    .addColumn('expires_at', ts, (c) => c.notNull())
    .addPrimaryKeyConstraint('resolved_merchants_pk', ['name_key', 'city_key'])
    .execute();
  await db.schema
    .createIndex('resolved_merchants_expiry')
    .on('resolved_merchants')
    .column('expires_at')
    .execute();

  await db.schema
    .createTable('declared_descriptors')
    .addColumn('id', uuid, (c) => c.primaryKey())
    .addColumn('account_id', uuid, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('domain', 'text', (c) => c.notNull())
    .addColumn('descriptor', 'text', (c) => c.notNull())
    // One domain per descriptor: the unique key is what stops a second domain from claiming it.
    .addColumn('descriptor_key', 'text', (c) => c.notNull().unique())
    .addColumn('processor', 'text')
    .addColumn('created_at', ts, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('declared_descriptors_domain')
    .on('declared_descriptors')
    .column('domain')
    .execute();
  // Each process keeps the set of declared keys and reads what was declared since its last look.
  await db.schema
    .createIndex('declared_descriptors_created')
    .on('declared_descriptors')
    .column('created_at')
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['declared_descriptors', 'resolved_merchants'])
    await db.schema.dropTable(table).execute();
}
