/**
 * Frozen: never edit a migration that has shipped; add a new one.
 * Souls (issue 11): permanent agent identities bound to a key (`souls`, `soul_keys`), the
 * registration challenges (`soul_challenges`, stored hashed), the single-use ids of soul-signed
 * JWTs (`soul_token_ids`), each soul's append-only hash-chained memories (`soul_memories`) and the
 * ERC-8004 identities a soul links (`soul_registrations`).
 */
import { type Kysely, PostgresAdapter, sql } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations are typed loosely (kysely recommendation)
export async function up(db: Kysely<any>): Promise<void> {
  const pg = db.getExecutor().adapter instanceof PostgresAdapter;
  const ts = pg ? sql`timestamptz` : sql`text`;
  const json = pg ? sql`jsonb` : sql`text`;
  const uuid = pg ? sql`uuid` : sql`text`;

  await db.schema
    .createTable('soul_challenges')
    .addColumn('challenge_hash', 'text', (c) => c.primaryKey())
    .addColumn('key_thumbprint', 'text', (c) => c.notNull())
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('expires_at', ts, (c) => c.notNull())
    .addColumn('used_at', ts)
    .execute();
  await db.schema.createIndex('soul_challenges_expiry').on('soul_challenges').column('expires_at').execute();

  await db.schema
    .createTable('souls')
    .addColumn('id', uuid, (c) => c.primaryKey())
    .addColumn('agent_id', 'text', (c) => c.notNull().unique())
    .addColumn('handle', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('name_key', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('image', 'text')
    .addColumn('endpoints', json, (c) => c.notNull())
    .addColumn('operator', json)
    .addColumn('account_id', uuid, (c) => c.references('accounts.id').onDelete('set null'))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .addColumn('retired_at', ts)
    .execute();
  await db.schema.createIndex('souls_created').on('souls').columns(['created_at', 'id']).execute();
  await db.schema.createIndex('souls_account').on('souls').column('account_id').execute();

  await db.schema
    .createTable('soul_keys')
    // A key belongs to one soul, ever: its thumbprint is unique across the registry.
    .addColumn('thumbprint', 'text', (c) => c.primaryKey())
    .addColumn('agent_id', 'text', (c) => c.notNull().references('souls.agent_id').onDelete('cascade'))
    .addColumn('jwk', json, (c) => c.notNull())
    .addColumn('valid_from', ts, (c) => c.notNull())
    .addColumn('valid_until', ts)
    .execute();
  await db.schema.createIndex('soul_keys_agent').on('soul_keys').column('agent_id').execute();

  await db.schema
    .createTable('soul_token_ids')
    .addColumn('agent_id', 'text', (c) => c.notNull())
    .addColumn('jti', 'text', (c) => c.notNull())
    .addColumn('expires_at', ts, (c) => c.notNull())
    .addPrimaryKeyConstraint('soul_token_ids_pk', ['agent_id', 'jti'])
    .execute();
  await db.schema.createIndex('soul_token_ids_expiry').on('soul_token_ids').column('expires_at').execute();

  await db.schema
    .createTable('soul_memories')
    .addColumn('id', uuid, (c) => c.primaryKey())
    .addColumn('agent_id', 'text', (c) => c.notNull().references('souls.agent_id').onDelete('cascade'))
    .addColumn('sequence', 'integer', (c) => c.notNull())
    .addColumn('layer', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('content', 'text', (c) => c.notNull())
    .addColumn('content_digest', 'text', (c) => c.notNull())
    .addColumn('previous_digest', 'text')
    .addColumn('digest', 'text', (c) => c.notNull())
    .addColumn('writer_kind', 'text', (c) => c.notNull())
    .addColumn('writer_id', 'text', (c) => c.notNull())
    .addColumn('payment_id', uuid)
    .addColumn('recorded_at', ts, (c) => c.notNull())
    // The chain's order: two appends racing for the same position cannot both land.
    .addUniqueConstraint('soul_memories_position', ['agent_id', 'sequence'])
    .execute();
  await db.schema
    .createIndex('soul_memories_layer')
    .on('soul_memories')
    .columns(['agent_id', 'layer', 'sequence'])
    .execute();

  await db.schema
    .createTable('soul_registrations')
    .addColumn('agent_id', 'text', (c) => c.notNull().references('souls.agent_id').onDelete('cascade'))
    .addColumn('agent_registry', 'text', (c) => c.notNull())
    .addColumn('erc8004_agent_id', 'text', (c) => c.notNull())
    .addColumn('owner', 'text', (c) => c.notNull())
    .addColumn('signature', 'text', (c) => c.notNull())
    .addColumn('created_at', ts, (c) => c.notNull())
    // One on-chain identity links one soul.
    .addPrimaryKeyConstraint('soul_registrations_pk', ['agent_registry', 'erc8004_agent_id'])
    .execute();
  await db.schema
    .createIndex('soul_registrations_agent')
    .on('soul_registrations')
    .column('agent_id')
    .execute();
}
