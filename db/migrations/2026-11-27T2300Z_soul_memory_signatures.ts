/**
 * Frozen: never edit a migration that has shipped; add a new one.
 * Signed soul logs (issue 28, item 6; docs/guides/souls.md "Checking a log"): whoever holds the
 * database can no longer rewrite a soul's memories unseen.
 *
 * - `soul_log_keys`: the service's ES256 keys that sign entries written by accounts and payers, and
 *   the checkpoints; published at `{site_url}/api/soul/jwks.json` for good, since past entries must
 *   stay verifiable. At most one is unretired (`soul_log_keys_one_active`); `private_jwk` is stored
 *   as the OAuth keys' is (sealed with SECRETS_KEY), null for a key whose private half is gone.
 * - `soul_memories.signature`, `signature_kid`, `signature_origin`: each entry's compact JWS - the
 *   soul's own JWT for its writes, the service's JWS over `digest` for the others.
 * - `soul_keys.endorsement`, `endorsement_kid`, `endorsement_origin`: a rotated-in key's JWS by the
 *   key before it (null for the first key, which the agent_id binds).
 * - `souls.checkpoint`: the service's JWS over the log's head `{agent_id, sequence, digest, issued_at}`.
 *
 * What exists already is signed here by a key made for this migration alone (kid
 * `soul-log-migration`): its public half is published with the others and its private half is
 * never stored, so nobody - the service included - can sign as the migration again. Those rows
 * get `origin = 'migration'`: signed by the service when the log was migrated, not by their writer.
 * Every process must run this version once it has run: an older one would write unsigned entries.
 */
import { CompactSign, exportJWK, generateKeyPair } from 'jose';
import { type Kysely, PostgresAdapter, sql } from 'kysely';

const MIGRATION_KID = 'soul-log-migration';
const PAGE = 500;

// biome-ignore lint/suspicious/noExplicitAny: migrations are typed loosely (kysely recommendation)
export async function up(db: Kysely<any>): Promise<void> {
  const [ts, json] =
    db.getExecutor().adapter instanceof PostgresAdapter
      ? [sql`timestamptz`, sql`jsonb`]
      : [sql`text`, sql`text`];
  await db.schema
    .createTable('soul_log_keys')
    .addColumn('kid', 'text', (c) => c.primaryKey())
    .addColumn('public_jwk', json, (c) => c.notNull())
    .addColumn('private_jwk', 'text')
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('retired_at', ts)
    .execute();
  await sql`create unique index soul_log_keys_one_active on soul_log_keys ((retired_at is null)) where retired_at is null`.execute(
    db,
  );
  // One column a statement: SQLite adds no more.
  for (const [table, columns] of [
    ['soul_memories', ['signature', 'signature_kid', 'signature_origin']],
    ['soul_keys', ['endorsement', 'endorsement_kid', 'endorsement_origin']],
    ['souls', ['checkpoint']],
  ] as const) {
    for (const column of columns) await db.schema.alterTable(table).addColumn(column, 'text').execute();
  }

  const souls = (await db.selectFrom('souls').select('agent_id').execute()) as { agent_id: string }[];
  if (souls.length === 0) return;
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const at = new Date().toISOString();
  await db
    .insertInto('soul_log_keys')
    .values({
      kid: MIGRATION_KID,
      public_jwk: JSON.stringify({
        ...(await exportJWK(publicKey)),
        kid: MIGRATION_KID,
        alg: 'ES256',
        use: 'sig',
      }),
      private_jwk: null,
      created_at: at,
      retired_at: at,
    })
    .execute();
  const sign = (typ: string, payload: string) =>
    new CompactSign(new TextEncoder().encode(payload))
      .setProtectedHeader({ alg: 'ES256', kid: MIGRATION_KID, typ })
      .sign(privateKey);
  const marked = { kid: MIGRATION_KID, origin: 'migration' };

  for (const { agent_id } of souls) {
    const keys = (await db
      .selectFrom('soul_keys')
      .select(['thumbprint', 'valid_from'])
      .where('agent_id', '=', agent_id)
      .orderBy('valid_from', 'asc')
      .execute()) as { thumbprint: string; valid_from: string }[];
    for (const key of keys.slice(1)) {
      const payload = JSON.stringify({ agent_id, new_key: key.thumbprint, valid_from: key.valid_from });
      await db
        .updateTable('soul_keys')
        .set({
          endorsement: await sign('soul-key+jws', payload),
          endorsement_kid: marked.kid,
          endorsement_origin: marked.origin,
        })
        .where('thumbprint', '=', key.thumbprint)
        .execute();
    }

    let head: { sequence: number; digest: string | null } = { sequence: 0, digest: null };
    for (;;) {
      const page = (await db
        .selectFrom('soul_memories')
        .select(['id', 'sequence', 'digest'])
        .where('agent_id', '=', agent_id)
        .where('sequence', '>', head.sequence)
        .orderBy('sequence', 'asc')
        .limit(PAGE)
        .execute()) as { id: string; sequence: number; digest: string }[];
      for (const entry of page) {
        await db
          .updateTable('soul_memories')
          .set({
            signature: await sign('soul-memory+jws', entry.digest),
            signature_kid: marked.kid,
            signature_origin: marked.origin,
          })
          .where('id', '=', entry.id)
          .execute();
        head = entry;
      }
      if (page.length < PAGE) break;
    }
    const checkpoint = JSON.stringify({
      agent_id,
      sequence: head.sequence,
      digest: head.digest,
      issued_at: at,
    });
    await db
      .updateTable('souls')
      .set({ checkpoint: await sign('soul-checkpoint+jws', checkpoint) })
      .where('agent_id', '=', agent_id)
      .execute();
  }
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('souls').dropColumn('checkpoint').execute();
  for (const column of ['endorsement', 'endorsement_kid', 'endorsement_origin'])
    await db.schema.alterTable('soul_keys').dropColumn(column).execute();
  for (const column of ['signature', 'signature_kid', 'signature_origin'])
    await db.schema.alterTable('soul_memories').dropColumn(column).execute();
  await db.schema.dropTable('soul_log_keys').execute();
}
