/**
 * Secrets the service keeps in its database: generated on first start (`serviceSecret`) or given by
 * a brand (webhook secrets), shared by every process on that database, never logged or shown again.
 *
 * With `SECRETS_KEY` set (environment only), each is sealed with AES-256-GCM before it is written:
 * `sealed:v1:<key id>:<base64url(iv | ciphertext | tag)>`, the additional authenticated data naming
 * where the value lives (table, row and column), so a sealed value copied to another row does not
 * open. Without a key, values are stored in clear (development); production mode warns about it.
 *
 * Rotation: start every process with the new key as `SECRETS_KEY` and the old one in
 * `SECRETS_KEY_PREVIOUS`; each start reseals whatever is not under the current key
 * (`resealStoredSecrets`), after which the old key can be dropped (docs/operations/security.md, "Secrets at rest").
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { inspect } from 'node:util';
import { type Kysely, type SelectQueryBuilder, sql } from 'kysely';
import type { Database } from '../db/schema.ts';

const SEALED_PREFIX = 'sealed:v1:';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A 256-bit key for sealing secrets; its id is public (it names the key a value was sealed with). */
export class SecretsKey {
  readonly id: string;
  readonly #bytes: Buffer;

  private constructor(bytes: Buffer) {
    this.#bytes = bytes;
    this.id = createHash('sha256')
      .update('agent-service secrets key')
      .update(bytes)
      .digest('base64url')
      .slice(0, 8);
  }

  /** 32 bytes as base64, base64url or hex (`openssl rand -base64 32`); null when it is not one. */
  static parse(text: string): SecretsKey | null {
    const trimmed = text.trim();
    const bytes = /^[0-9a-f]{64}$/i.test(trimmed)
      ? Buffer.from(trimmed, 'hex')
      : /^[A-Za-z0-9+/_-]{43}=?$/.test(trimmed)
        ? Buffer.from(trimmed.replace(/\+/g, '-').replace(/\//g, '_').replace(/=$/, ''), 'base64url')
        : null;
    return bytes?.length === 32 ? new SecretsKey(bytes) : null;
  }

  get bytes(): Buffer {
    return this.#bytes;
  }

  /** Key material never reaches a log line or a JSON document by accident. */
  toJSON(): { id: string } {
    return { id: this.id };
  }

  [inspect.custom](): string {
    return `SecretsKey(${this.id})`;
  }
}

/** The stored value is sealed with a key this process does not have. */
export class SecretsKeyMissingError extends Error {
  constructor(where: string, keyId: string | null) {
    super(
      keyId
        ? `${where} is sealed with secrets key ${keyId}, which is neither SECRETS_KEY nor one of SECRETS_KEY_PREVIOUS`
        : `${where} is sealed, and SECRETS_KEY is not set`,
    );
    this.name = 'SecretsKeyMissingError';
  }
}

/**
 * Seals and opens stored secrets. `where` is the value's place (`service_secrets/oauth_cookie_key`):
 * it is authenticated with the ciphertext and named in errors.
 */
export class SecretBox {
  readonly #current: SecretsKey | null;
  readonly #byId: Map<string, SecretsKey>;

  constructor(current: SecretsKey | null, previous: readonly SecretsKey[] = []) {
    this.#current = current;
    this.#byId = new Map([...previous, ...(current ? [current] : [])].map((k) => [k.id, k]));
  }

  /** The id of the key values are sealed with, or null without one. */
  get currentKeyId(): string | null {
    return this.#current?.id ?? null;
  }

  /** Whether values are sealed on write. */
  get sealing(): boolean {
    return this.#current !== null;
  }

  seal(plaintext: string, where: string): string {
    const key = this.#current;
    if (!key) return plaintext;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key.bytes, iv).setAAD(Buffer.from(where));
    const body = Buffer.concat([iv, cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return `${SEALED_PREFIX}${key.id}:${body.toString('base64url')}`;
  }

  open(stored: string, where: string): string {
    if (!stored.startsWith(SEALED_PREFIX)) return stored;
    const [keyId, encoded] = stored.slice(SEALED_PREFIX.length).split(':');
    const key = keyId ? this.#byId.get(keyId) : undefined;
    if (!key || encoded === undefined)
      throw new SecretsKeyMissingError(where, this.#current ? (keyId ?? null) : null);
    const body = Buffer.from(encoded, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', key.bytes, body.subarray(0, IV_BYTES))
      .setAAD(Buffer.from(where))
      .setAuthTag(body.subarray(body.length - TAG_BYTES));
    // A wrong tag (tampered value, or one moved from another row) throws here.
    return Buffer.concat([
      decipher.update(body.subarray(IV_BYTES, body.length - TAG_BYTES)),
      decipher.final(),
    ]).toString('utf8');
  }

  /** True when the stored value is already in the form this box writes (sealed with the current key, or clear without one). */
  isCurrent(stored: string): boolean {
    return this.#current
      ? stored.startsWith(`${SEALED_PREFIX}${this.#current.id}:`)
      : !stored.startsWith(SEALED_PREFIX);
  }
}

export const isSealed = (stored: string): boolean => stored.startsWith(SEALED_PREFIX);

/**
 * A JSON document kept for later (a paid call's result, replayed to the payer who sends the same
 * payment again): sealed as a JSON string, so it stays valid in a `jsonb` column, when the box
 * seals; as it is otherwise.
 */
export function sealJson(box: SecretBox, json: string, where: string): string {
  return box.sealing ? JSON.stringify(box.seal(json, where)) : json;
}

/** The JSON document `sealJson` stored (sealed or clear). */
export function openJson(box: SecretBox, stored: string, where: string): string {
  return stored.startsWith(`"${SEALED_PREFIX}`) ? box.open(JSON.parse(stored) as string, where) : stored;
}

/** A secret of the service by name, made on first use; every process sharing the database gets the same. */
export async function serviceSecret(
  db: Kysely<Database>,
  box: SecretBox,
  name: string,
  bytes = 32,
): Promise<string> {
  const where = serviceSecretPlace(name);
  await db
    .insertInto('service_secrets')
    .values({
      name,
      value: box.seal(randomBytes(bytes).toString('base64url'), where),
      created_at: new Date().toISOString(),
    })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
  const row = await db
    .selectFrom('service_secrets')
    .select('value')
    .where('name', '=', name)
    .executeTakeFirstOrThrow();
  return box.open(row.value, where);
}

export const serviceSecretPlace = (name: string): string => `service_secrets/${name}`;
export const paymentResultPlace = (paymentId: string): string => `payments/${paymentId}/result`;
export const signingKeyPlace = (kid: string): string => `oauth_signing_keys/${kid}/private_jwk`;
export const soulLogKeyPlace = (kid: string): string => `soul_log_keys/${kid}/private_jwk`;
export const webhookSecretPlace = (domain: string): string => `brand_channels/${domain}/webhook_secret`;
/** A return request's secret for signing the notifications to its agent's webhook. */
export const callbackSecretPlace = (requestId: string): string =>
  `return_requests/${requestId}/callback_secret`;
/** A keyed write's stored response that holds secrets shown once (`idempotency.ts`). */
export const idempotencyResponsePlace = (operation: string, key: string): string =>
  `idempotency_keys/${operation}/${key}/response`;
/** A receiver's Authorization header for its SSF stream (`auth/events/streams.ts`). */
export const ssfAuthorizationPlace = (streamId: string): string =>
  `ssf_streams/${streamId}/authorization_header`;

// biome-ignore lint/suspicious/noExplicitAny: a query over the fixed list of tables resealed below
type LooseSelect = SelectQueryBuilder<any, any, any>;

/**
 * Brings every stored secret to the box's current form: seals clear values once a key is set, and
 * reseals values under a previous key. Each row is rewritten only if it still holds what was read,
 * so processes starting together do not overwrite each other's work. Returns how many changed.
 * A value sealed with an unknown key stops the start (SecretsKeyMissingError).
 */
export async function resealStoredSecrets(db: Kysely<Database>, box: SecretBox): Promise<number> {
  let changed = 0;
  /** Each value of `column` (row key `key`), rewritten only where it still holds what was read. */
  const resealColumn = async (table: string, key: string, column: string, place: (id: string) => string) => {
    // biome-ignore lint/suspicious/noExplicitAny: the tables and columns are the fixed list below
    const loose = db as Kysely<any>;
    const rows = (await loose
      .selectFrom(table)
      .select([`${key} as id`, `${column} as value`])
      .where(column, 'is not', null)
      .execute()) as { id: string; value: string }[];
    for (const row of rows) {
      if (box.isCurrent(row.value)) continue;
      const where = place(row.id);
      const result = await loose
        .updateTable(table)
        .set({ [column]: box.seal(box.open(row.value, where), where) })
        .where(key, '=', row.id)
        .where(column, '=', row.value)
        .executeTakeFirst();
      changed += Number(result.numUpdatedRows);
    }
  };
  await resealColumn('service_secrets', 'name', 'value', serviceSecretPlace);
  await resealColumn('oauth_signing_keys', 'kid', 'private_jwk', signingKeyPlace);
  await resealColumn('soul_log_keys', 'kid', 'private_jwk', soulLogKeyPlace);
  await resealColumn('brand_channels', 'brand_domain', 'webhook_secret', webhookSecretPlace);
  await resealColumn('ssf_streams', 'id', 'authorization_header', ssfAuthorizationPlace);
  await resealColumn('return_requests', 'id', 'callback_secret', callbackSecretPlace);
  // Kept JSON documents (`sealJson`): only those not yet in the current form are read.
  // (substr, not LIKE: SQLite's LIKE ignores case, and key ids are base64url.)
  const current = box.currentKeyId ? `"${SEALED_PREFIX}${box.currentKeyId}:` : `"${SEALED_PREFIX}`;
  const sealedAtAll = `"${SEALED_PREFIX}`;
  const head = (column: string, length: number) =>
    sql<string>`substr(cast(${sql.ref(column)} as text), 1, ${length})`;
  /** Each document of `column` (row keys `keys`) that `stale` selects, rewritten where it still holds what was read. */
  const resealDocuments = async (
    table: 'payments' | 'idempotency_keys',
    keys: readonly string[],
    column: string,
    place: (row: Record<string, string>) => string,
    stale: (q: LooseSelect) => LooseSelect,
  ) => {
    // biome-ignore lint/suspicious/noExplicitAny: the tables and columns are the fixed list below
    const loose = db as Kysely<any>;
    const rows = (await stale(
      loose
        .selectFrom(table)
        .select([...keys, `${column} as value`])
        .where(column, 'is not', null),
    ).execute()) as (Record<string, string> & { value: string })[];
    for (const row of rows) {
      const where = place(row);
      let update = loose
        .updateTable(table)
        .set({ [column]: sealJson(box, openJson(box, row.value, where), where) })
        .where(sql<string>`cast(${sql.ref(column)} as text)`, '=', row.value);
      for (const key of keys) update = update.where(key, '=', row[key]);
      changed += Number((await update.executeTakeFirst()).numUpdatedRows);
    }
  };
  // Paid calls' kept results (private scans' read tokens, status links): all sealed when the box seals.
  await resealDocuments(
    'payments',
    ['id'],
    'result',
    (row) => paymentResultPlace(row.id as string),
    (q) => q.where(head('result', current.length), box.sealing ? '<>' : '=', current),
  );
  // Keyed writes' responses that hold secrets (sealed when stored; the others stay in clear).
  await resealDocuments(
    'idempotency_keys',
    ['operation', 'key'],
    'response',
    (row) => idempotencyResponsePlace(row.operation as string, row.key as string),
    (q) =>
      q
        .where(head('response', sealedAtAll.length), '=', sealedAtAll)
        .$if(box.sealing, (w) => w.where(head('response', current.length), '<>', current)),
  );
  return changed;
}
