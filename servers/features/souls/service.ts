/**
 * Souls (issue 11, docs/guides/souls.md): permanent agent identities bound to a key, registered by
 * answering a challenge with that key; their profile, key rotation and retirement; and each soul's
 * append-only, hash-chained memories (`chain.ts`), written by the soul, its linked account, or
 * anyone who pays (the soul-write SKU).
 *
 * Everything a reply reports is stored before it is sent. Appends are safe under concurrency on
 * both dialects: the position is unique per soul, and an append that loses the race for it reads
 * the new head and tries again.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { decodeProtectedHeader } from 'jose';
import type { Kysely } from 'kysely';
import { verifyMessage } from 'viem';
import { bearerChallenge } from '../../../auth/public-api-challenge.ts';
import { isUniqueViolation } from '../../../db/database.ts';
import type { Database, SignatureOrigin, SoulKeyRow, SoulMemoryRow, SoulRow } from '../../../db/schema.ts';
import type { Config } from '../../config.ts';
import { type FieldError, invalid, notFound, ServiceError } from '../../errors.ts';
import { DEFAULT_LIMIT, decodeCursor, encodeCursor, likePattern } from '../../pagination.ts';
import type { AccountPrincipal } from '../accounts/service.ts';
import { entryDigest, sha256Hex } from './chain.ts';
import {
  agentIdOf,
  canonicalJwk,
  type PublicJwk,
  type SoulToken,
  signsText,
  thumbprintOf,
  verifySoulJwt,
} from './keys.ts';
import { type Checkpoint, type LogSigner, publishedLogKeys, signCheckpoint, signEntry } from './log-keys.ts';
import {
  currentKeyOf,
  findSoul,
  headOf,
  keysOf,
  memoryCounts,
  memoryPage,
  registrationsOf,
  soulPage,
  validationsOf,
} from './repository.ts';
import {
  type LogJwks,
  type Memory,
  MemoryClaim,
  type MemoryLayer,
  type RegisterSoulInput,
  type Signature,
  type SoulDocument,
} from './schemas.ts';

/** A challenge lives five minutes (issue 11). */
export const CHALLENGE_TTL_MS = 5 * 60_000;
/** Appends that lose the race for a position retry this many times before answering 503. */
const APPEND_ATTEMPTS = 20;
/** Validations shown in the identity document. */
const LATEST_VALIDATIONS = 10;

export interface SoulsDeps {
  db: Kysely<Database>;
  config: Config;
  now: () => Date;
  /** The service's soul log key (`log-keys.ts`), loaded at start. */
  signer: LogSigner;
}

/** Who writes: the soul with the JWT that signs the write, its linked account, or a payer. */
export type Writer =
  | { kind: 'soul'; id: string; token: SoulToken }
  | { kind: 'account' | 'payer'; id: string };

type TokenVerdict = { ok: true; token: SoulToken } | { ok: false; description: string };

export type Endpoints = { mcp?: string; a2a?: string; web?: string };
export type Operator = { name?: string; url?: string; email?: string };

/** The soul API URL: the audience of soul-signed JWTs. */
export const soulApiUrl = (config: Config): string => `${config.site_url}/api/soul`;
export const soulDocumentUrl = (config: Config, agentId: string): string =>
  `${soulApiUrl(config)}/agents/${agentId}`;
/** The service's soul log keys (`log-keys.ts`). */
export const soulLogJwksUrl = (config: Config): string => `${soulApiUrl(config)}/jwks.json`;

/** The message the owner of an ERC-8004 identity signs (EIP-191) to link it to a soul. */
export const erc8004LinkMessage = (input: {
  agentId: string;
  agentRegistry: string;
  erc8004AgentId: string;
}) => `Link ERC-8004 agent ${input.erc8004AgentId} of ${input.agentRegistry} to soul ${input.agentId}`;

const hashChallenge = (challenge: string): string => createHash('sha256').update(challenge).digest('hex');

/** Whole seconds, as JWT times are (RFC 7519 NumericDate). */
const seconds = (iso: string): number => Math.floor(Date.parse(iso) / 1000);

export class SoulsService {
  readonly #deps: SoulsDeps;

  constructor(deps: SoulsDeps) {
    this.#deps = deps;
  }

  get #db() {
    return this.#deps.db;
  }

  #now(): string {
    return this.#deps.now().toISOString();
  }

  /** A single-use challenge for this key: only its hash is stored. */
  async issueChallenge(jwk: PublicJwk): Promise<{ challenge: string; expires_at: string }> {
    const now = this.#deps.now();
    const challenge = `soul-challenge.${randomBytes(32).toString('base64url')}`;
    const expiresAt = new Date(now.getTime() + CHALLENGE_TTL_MS).toISOString();
    await this.#db.deleteFrom('soul_challenges').where('expires_at', '<', now.toISOString()).execute();
    await this.#db
      .insertInto('soul_challenges')
      .values({
        challenge_hash: hashChallenge(challenge),
        key_thumbprint: await thumbprintOf(jwk),
        created_at: now.toISOString(),
        expires_at: expiresAt,
        used_at: null,
      })
      .execute();
    return { challenge, expires_at: expiresAt };
  }

  /**
   * Registers a soul: the challenge must be one we issued for this key, unexpired and unused, and
   * `signature` a JWS of it by the key. The challenge is spent in the same transaction that stores
   * the soul, so a refused registration (handle taken) leaves it usable.
   */
  async register(input: RegisterSoulInput, accountId: string | null): Promise<SoulDocument> {
    const jwk = canonicalJwk(input.public_key);
    if (!(await signsText(jwk, input.signature, input.challenge))) {
      throw invalid([
        {
          field: 'signature',
          message: 'is not a JWS of the challenge made with the private key of public_key',
        },
      ]);
    }
    const thumbprint = await thumbprintOf(jwk);
    const agentId = await agentIdOf(jwk);
    const now = this.#now();
    const checkpoint = await signCheckpoint(this.#deps.signer, {
      agent_id: agentId,
      sequence: 0,
      digest: null,
      issued_at: now,
    });
    const soul: SoulRow = {
      id: randomUUID(),
      agent_id: agentId,
      handle: input.handle,
      name: input.name,
      name_key: input.name.toLowerCase(),
      description: input.description,
      image: input.image ?? null,
      endpoints: JSON.stringify(input.endpoints ?? {}),
      operator: input.operator ? JSON.stringify(input.operator) : null,
      account_id: accountId,
      status: 'active',
      created_at: now,
      updated_at: now,
      retired_at: null,
      checkpoint,
    };
    try {
      await this.#db.transaction().execute(async (trx) => {
        const spent = await trx
          .updateTable('soul_challenges')
          .set({ used_at: now })
          .where('challenge_hash', '=', hashChallenge(input.challenge))
          .where('key_thumbprint', '=', thumbprint)
          .where('used_at', 'is', null)
          .where('expires_at', '>', now)
          .executeTakeFirst();
        if (Number(spent.numUpdatedRows) !== 1) {
          throw invalid([
            {
              field: 'challenge',
              message: 'is unknown, expired, already used or was issued for another key',
            },
          ]);
        }
        const taken = await trx
          .selectFrom('soul_keys')
          .select('agent_id')
          .where('thumbprint', '=', thumbprint)
          .executeTakeFirst();
        if (taken) throw new ServiceError('soul_key_taken', { detail: 'This key already belongs to a soul' });
        const handle = await trx
          .selectFrom('souls')
          .select('id')
          .where('handle', '=', input.handle)
          .executeTakeFirst();
        if (handle) throw new ServiceError('handle_taken', { detail: `The handle ${input.handle} is taken` });
        await trx.insertInto('souls').values(soul).execute();
        await trx
          .insertInto('soul_keys')
          .values({
            thumbprint,
            agent_id: agentId,
            jwk: JSON.stringify(jwk),
            valid_from: now,
            valid_until: null,
            endorsement: null,
            endorsement_kid: null,
            endorsement_origin: null,
          })
          .execute();
      });
    } catch (err) {
      if (isUniqueViolation(err)) {
        // Another registration won the race for the handle or the key.
        const existing = await findSoul(this.#db, agentId);
        if (existing)
          throw new ServiceError('soul_key_taken', { detail: 'This key already belongs to a soul' });
        throw new ServiceError('handle_taken', { detail: `The handle ${input.handle} is taken` });
      }
      throw err;
    }
    return this.document(agentId);
  }

  async #soul(agentId: string): Promise<SoulRow> {
    const soul = await findSoul(this.#db, agentId);
    if (!soul) throw notFound(`No soul has the agent_id ${agentId}`);
    return soul;
  }

  async #activeSoul(agentId: string): Promise<SoulRow> {
    const soul = await this.#soul(agentId);
    if (soul.status !== 'active') throw new ServiceError('soul_retired', { detail: `${agentId} is retired` });
    return soul;
  }

  /** The soul exists and takes writes: the soul-write SKU's check before any payment. */
  async requireActive(agentId: string): Promise<void> {
    await this.#activeSoul(agentId);
  }

  async document(agentId: string): Promise<SoulDocument> {
    const { config } = this.#deps;
    const soul = await this.#soul(agentId);
    const [keys, counts, head, validations, registrations] = await Promise.all([
      keysOf(this.#db, agentId),
      memoryCounts(this.#db, agentId),
      headOf(this.#db, agentId),
      validationsOf(this.#db, agentId, LATEST_VALIDATIONS),
      registrationsOf(this.#db, agentId),
    ]);
    keys.sort((a, b) => (a.valid_until === null ? -1 : b.valid_until === null ? 1 : 0));
    const url = soulDocumentUrl(config, agentId);
    return {
      agent_id: soul.agent_id,
      handle: soul.handle,
      status: soul.status,
      profile: {
        name: soul.name,
        description: soul.description,
        image: soul.image,
        endpoints: JSON.parse(soul.endpoints) as Endpoints,
        operator: soul.operator ? (JSON.parse(soul.operator) as Operator) : null,
      },
      keys: keys.map(keyView),
      linked_account: soul.account_id !== null,
      created_at: soul.created_at,
      updated_at: soul.updated_at,
      retired_at: soul.retired_at,
      memory_counts: counts,
      head: head ? { sequence: head.sequence, digest: head.digest } : null,
      checkpoint: soul.checkpoint ? checkpointView(soul.checkpoint) : null,
      validations: { count: validations.count, latest: validations.latest.map(memoryView) },
      registrations: registrations.map((r) => ({
        agentRegistry: r.agent_registry,
        agentId: r.erc8004_agent_id,
        owner: r.owner,
        linked_at: r.created_at,
      })),
      urls: {
        document: url,
        memories: `${url}/memories`,
        erc8004_registration: `${url}/erc-8004`,
        signing_keys: soulLogJwksUrl(config),
      },
    };
  }

  /** A page of a soul's log in sequence order; the cursor is the last sequence seen. */
  async memories(input: {
    agent_id: string;
    layer?: MemoryLayer | undefined;
    cursor?: string | undefined;
    limit?: number | undefined;
  }): Promise<{ memories: Memory[]; next_cursor: string | null }> {
    const limit = input.limit ?? DEFAULT_LIMIT;
    let after = 0;
    if (input.cursor !== undefined) {
      const decoded = /^s(\d{1,9})$/.exec(Buffer.from(input.cursor, 'base64url').toString('utf8'));
      if (!decoded) throw invalid([{ field: 'cursor', message: 'is not a cursor from a previous page' }]);
      after = Number(decoded[1]);
    }
    await this.#soul(input.agent_id);
    const rows = await memoryPage(this.#db, input.agent_id, input.layer, after, limit + 1);
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return {
      memories: page.map(memoryView),
      next_cursor:
        rows.length > limit && last ? Buffer.from(`s${last.sequence}`).toString('base64url') : null,
    };
  }

  /** The JWKS of every key that ever signed a soul log. */
  async logKeys(): Promise<LogJwks> {
    return { keys: (await publishedLogKeys(this.#db)) as LogJwks['keys'] };
  }

  /** The registry, newest first; `q` matches the handle or the name. */
  async search(input: { q?: string | undefined; cursor?: string | undefined; limit?: number | undefined }) {
    const limit = input.limit ?? DEFAULT_LIMIT;
    const after = decodeCursor(input.cursor);
    const rows = await soulPage(this.#db, input.q ? likePattern(input.q) : null, after, limit + 1);
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return {
      souls: page.map((s) => ({
        agent_id: s.agent_id,
        handle: s.handle,
        name: s.name,
        description: s.description,
        status: s.status,
        created_at: s.created_at,
        url: soulDocumentUrl(this.#deps.config, s.agent_id),
      })),
      next_cursor: rows.length > limit && last ? encodeCursor({ at: last.created_at, id: last.id }) : null,
    };
  }

  /**
   * Verifies a JWT the soul signed with its current key and spends its `jti` durably (a second use,
   * in any process, is refused). Failures are values carrying the RFC 6750 description.
   */
  async verifySoulToken(token: string, agentId: string): Promise<TokenVerdict> {
    const key = await currentKeyOf(this.#db, agentId);
    if (!key) return { ok: false, description: 'No soul has this iss' };
    return this.#verifyAndSpend(token, agentId, JSON.parse(key.jwk) as PublicJwk, key.thumbprint);
  }

  async #verifyAndSpend(token: string, agentId: string, jwk: PublicJwk, kid: string): Promise<TokenVerdict> {
    const now = this.#deps.now();
    const verdict = await verifySoulJwt(token, jwk, {
      agentId,
      audience: soulApiUrl(this.#deps.config),
      now,
    });
    if (!verdict.ok) return verdict;
    await this.#db.deleteFrom('soul_token_ids').where('expires_at', '<', now.toISOString()).execute();
    try {
      await this.#db
        .insertInto('soul_token_ids')
        .values({
          agent_id: agentId,
          jti: verdict.jti,
          expires_at: new Date(verdict.exp * 1000).toISOString(),
        })
        .execute();
    } catch (err) {
      if (isUniqueViolation(err)) return { ok: false, description: 'This token was already used (jti)' };
      throw err;
    }
    return { ok: true, token: { agentId, jws: token, kid, claims: verdict.claims } };
  }

  /**
   * Who a write to `agentId` is made as: the soul (its own JWT) or its linked account (an OAuth
   * access token of ours). Anyone else: 401 without a token, 403 with one that stands for someone else.
   */
  async writerFor(
    caller: { soul?: SoulToken | undefined; account?: AccountPrincipal | undefined },
    agentId: string,
    options: { soulKeyOnly?: boolean } = {},
  ): Promise<Writer> {
    const soul = await this.#activeSoul(agentId);
    const forbidden = (detail: string) =>
      new ServiceError('forbidden', {
        detail,
        headers: { 'WWW-Authenticate': bearerChallenge(this.#deps.config, 'insufficient_scope') },
      });
    if (caller.soul) {
      if (caller.soul.agentId !== agentId) throw forbidden('The token is signed by another soul');
      return { kind: 'soul', id: agentId, token: caller.soul };
    }
    const account = caller.account?.keyId === null ? caller.account : undefined;
    if (account && !options.soulKeyOnly) {
      if (soul.account_id !== account.id)
        throw forbidden('This soul is not linked to the account of the token');
      return { kind: 'account', id: account.id };
    }
    if (account) throw forbidden("This write must be signed by the soul's current key");
    throw new ServiceError('unauthorized', {
      detail:
        "Send Authorization: Bearer with a JWT signed by the soul's current key (iss = agent_id, aud = " +
        `${soulApiUrl(this.#deps.config)}), or an access token of the linked account (resource = ` +
        `${this.#deps.config.public_api_url})`,
      headers: { 'WWW-Authenticate': bearerChallenge(this.#deps.config) },
    });
  }

  async updateProfile(
    agentId: string,
    changes: {
      name?: string | undefined;
      description?: string | undefined;
      image?: string | null | undefined;
      endpoints?: Endpoints | undefined;
      operator?: Operator | null | undefined;
    },
  ): Promise<SoulDocument> {
    const set: Partial<SoulRow> = { updated_at: this.#now() };
    if (changes.name !== undefined) {
      set.name = changes.name;
      set.name_key = changes.name.toLowerCase();
    }
    if (changes.description !== undefined) set.description = changes.description;
    if (changes.image !== undefined) set.image = changes.image;
    if (changes.endpoints !== undefined) set.endpoints = JSON.stringify(changes.endpoints);
    if (changes.operator !== undefined)
      set.operator = changes.operator ? JSON.stringify(changes.operator) : null;
    await this.#db
      .updateTable('souls')
      .set(set)
      .where('agent_id', '=', agentId)
      .where('status', '=', 'active')
      .execute();
    return this.document(agentId);
  }

  /**
   * Rotates the key: the Bearer JWT was signed by the current key (checked by the adapter) and
   * names the new key in its `new_key` claim, and `proof` is a JWT of the same rules signed by the
   * new one. The Bearer JWT is kept as the new key's endorsement, so a reader follows the keys from
   * the agent_id to the current one without trusting us. The old key stays listed, with the time
   * it stopped being valid; the agent_id does not change.
   */
  async rotateKey(
    agentId: string,
    newKey: PublicJwk,
    proof: string,
    endorsement: SoulToken,
  ): Promise<SoulDocument> {
    const jwk = canonicalJwk(newKey);
    const thumbprint = await thumbprintOf(jwk);
    if (endorsement.claims.new_key !== thumbprint) {
      throw invalid([
        {
          field: 'new_key',
          message: `claim of the Bearer JWT must be ${thumbprint}, the RFC 7638 thumbprint of public_key`,
        },
      ]);
    }
    const verdict = await this.#verifyAndSpend(proof, agentId, jwk, thumbprint);
    if (!verdict.ok) throw invalid([{ field: 'proof', message: `${verdict.description} (by the new key)` }]);
    try {
      await this.#db.transaction().execute(async (trx) => {
        const now = await this.#hold(trx, agentId, endorsement);
        if (now === null) throw new ServiceError('soul_retired', { detail: `${agentId} is retired` });
        const ended = await trx
          .updateTable('soul_keys')
          .set({ valid_until: now })
          .where('agent_id', '=', agentId)
          .where('thumbprint', '=', endorsement.kid)
          .where('valid_until', 'is', null)
          .executeTakeFirst();
        if (Number(ended.numUpdatedRows) !== 1) {
          throw new ServiceError('conflict', {
            detail: 'The key was rotated by another request; sign with the new key',
          });
        }
        await trx
          .insertInto('soul_keys')
          .values({
            thumbprint,
            agent_id: agentId,
            jwk: JSON.stringify(jwk),
            valid_from: now,
            valid_until: null,
            endorsement: endorsement.jws,
            endorsement_kid: endorsement.kid,
            endorsement_origin: 'writer',
          })
          .execute();
        await trx.updateTable('souls').set({ updated_at: now }).where('agent_id', '=', agentId).execute();
      });
    } catch (err) {
      if (isUniqueViolation(err))
        throw new ServiceError('soul_key_taken', { detail: 'This key already belongs to a soul' });
      throw err;
    }
    return this.document(agentId);
  }

  /**
   * Takes the soul's row for the rest of the transaction (an update that only matches an active
   * soul: on PostgreSQL a row lock; SQLite serializes writers anyway), so appends, rotations and
   * retirement of one soul follow one another; returns the time the change is recorded at, or null
   * when the soul is gone or retired. A soul's JWT that signs the change must still be live then:
   * a reader checks `iat - 60 <= recorded (seconds) < exp`, and the lock may have been waited for.
   */
  async #hold(trx: Kysely<Database>, agentId: string, token: SoulToken | null): Promise<string | null> {
    const held = await trx
      .updateTable('souls')
      .set((eb) => ({ status: eb.ref('status') }))
      .where('agent_id', '=', agentId)
      .where('status', '=', 'active')
      .executeTakeFirst();
    if (Number(held.numUpdatedRows) !== 1) return null;
    const now = this.#now();
    if (token && seconds(now) >= (token.claims.exp as number)) {
      throw new ServiceError('invalid_token', {
        detail: 'The token expired before the write could be recorded; sign a new one',
        headers: { 'WWW-Authenticate': 'Bearer error="invalid_token"' },
      });
    }
    return now;
  }

  /** Retires the identity: it stays readable (document, memories) and takes no more writes. */
  async retire(agentId: string): Promise<SoulDocument> {
    const now = this.#now();
    await this.#db
      .updateTable('souls')
      .set({ status: 'retired', retired_at: now, updated_at: now })
      .where('agent_id', '=', agentId)
      .where('status', '=', 'active')
      .execute();
    return this.document(agentId);
  }

  /**
   * Appends one entry to the soul's log, in a transaction that first takes the soul's row
   * (`#hold`), then reads the head and inserts at head + 1 with its signature - the soul's JWT, or
   * the service's over the digest - and re-signs the soul's checkpoint. The unique
   * (agent_id, sequence) is the backstop: an append that still loses the position retries.
   */
  async append(
    agentId: string,
    entry: {
      content: string;
      layer: MemoryLayer;
      kind: 'memory' | 'validation';
      writer: Writer;
      paymentId?: string;
    },
  ): Promise<Memory> {
    const contentDigest = sha256Hex(entry.content);
    const { writer } = entry;
    const claim = writer.kind === 'soul' ? memoryClaimOf(writer.token, { ...entry, contentDigest }) : null;
    for (let attempt = 0; attempt < APPEND_ATTEMPTS; attempt++) {
      try {
        const row = await this.#db.transaction().execute(async (trx) => {
          const recordedAt = await this.#hold(trx, agentId, writer.kind === 'soul' ? writer.token : null);
          if (recordedAt === null) return null;
          if (entry.paymentId) {
            // A paid write runs once per payment: a payment released after its entry was written
            // (its process died before the result was kept) and sent again answers that entry.
            const written = await trx
              .selectFrom('soul_memories')
              .selectAll()
              .where('payment_id', '=', entry.paymentId)
              .executeTakeFirst();
            if (written) return written;
          }
          if (writer.kind === 'soul') await stillCurrent(trx, agentId, writer.token.kid);
          const head = await headOf(trx, agentId);
          const previous = head?.digest ?? null;
          if (claim?.previous_digest !== undefined && claim.previous_digest !== previous) {
            throw new ServiceError('conflict', {
              detail:
                `The log's head is sequence ${head?.sequence ?? 0} (digest ${previous}), not the ` +
                'memory.previous_digest signed: read the head and sign again',
            });
          }
          const fields = {
            agent_id: agentId,
            sequence: (head?.sequence ?? 0) + 1,
            layer: entry.layer,
            kind: entry.kind,
            content_digest: contentDigest,
            previous_digest: previous,
            writer_kind: writer.kind,
            writer_id: writer.id,
            recorded_at: recordedAt,
          };
          const digest = entryDigest(fields);
          const { signer } = this.#deps;
          const [signature, checkpoint] = await Promise.all([
            writer.kind === 'soul' ? writer.token.jws : signEntry(signer, digest),
            signCheckpoint(signer, {
              agent_id: agentId,
              sequence: fields.sequence,
              digest,
              issued_at: recordedAt,
            }),
          ]);
          const inserted: SoulMemoryRow = {
            id: randomUUID(),
            ...fields,
            content: entry.content,
            digest,
            payment_id: entry.paymentId ?? null,
            signature,
            signature_kid: writer.kind === 'soul' ? writer.token.kid : signer.kid,
            signature_origin: 'writer',
          };
          await trx.insertInto('soul_memories').values(inserted).execute();
          await trx.updateTable('souls').set({ checkpoint }).where('agent_id', '=', agentId).execute();
          return inserted;
        });
        if (row) return memoryView(row);
        await this.#activeSoul(agentId); // not found, or retired
        throw new ServiceError('soul_retired', { detail: `${agentId} is retired` });
      } catch (err) {
        if (!isUniqueViolation(err)) throw err;
      }
    }
    throw new ServiceError('service_unavailable', {
      detail: 'Too many writes to this soul at once; nothing was written, retry',
    });
  }

  /**
   * Links an ERC-8004 identity (ERC-8004 draft, Identity Registry: `agentRegistry` +
   * `agentId`), proven by the owner's EIP-191 signature of `erc8004LinkMessage`, checked offline
   * with viem (an externally owned account; whether the address owns the token is on chain, for
   * readers to check).
   */
  async linkRegistration(input: {
    agent_id: string;
    agent_registry: string;
    erc8004_agent_id: string;
    owner: string;
    signature: string;
  }): Promise<SoulDocument> {
    await this.#activeSoul(input.agent_id);
    const message = erc8004LinkMessage({
      agentId: input.agent_id,
      agentRegistry: input.agent_registry,
      erc8004AgentId: input.erc8004_agent_id,
    });
    const valid = await verifyMessage({
      address: input.owner as `0x${string}`,
      message,
      signature: input.signature as `0x${string}`,
    }).catch(() => false);
    if (!valid) {
      throw invalid([
        { field: 'signature', message: "is not the owner's EIP-191 signature of the link message" },
      ]);
    }
    const [namespace, chain, registry] = input.agent_registry.split(':') as [string, string, string];
    try {
      await this.#db
        .insertInto('soul_registrations')
        .values({
          agent_id: input.agent_id,
          agent_registry: `${namespace}:${chain}:${registry.toLowerCase()}`,
          erc8004_agent_id: BigInt(input.erc8004_agent_id).toString(),
          owner: input.owner.toLowerCase(),
          signature: input.signature,
          created_at: this.#now(),
        })
        .execute();
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      throw new ServiceError('conflict', { detail: 'This ERC-8004 identity is already linked to a soul' });
    }
    return this.document(input.agent_id);
  }

  /**
   * The soul as an ERC-8004 agent registration file (`type` registration-v1), for the owner to
   * point the on-chain `agentURI` (tokenURI) at.
   */
  async erc8004Registration(agentId: string) {
    const doc = await this.document(agentId);
    const services: { name: string; endpoint: string; version?: string }[] = [];
    const { endpoints } = doc.profile;
    if (endpoints.web) services.push({ name: 'web', endpoint: endpoints.web });
    if (endpoints.mcp) services.push({ name: 'MCP', endpoint: endpoints.mcp, version: '2025-11-25' });
    if (endpoints.a2a) services.push({ name: 'A2A', endpoint: endpoints.a2a });
    services.push({ name: 'soul', endpoint: doc.urls.document });
    for (const owner of new Set(doc.registrations.map((r) => r.owner))) {
      const chain = doc.registrations.find((r) => r.owner === owner)?.agentRegistry.split(':')[1] ?? '8453';
      services.push({ name: 'agentWallet', endpoint: `eip155:${chain}:${owner}` });
    }
    return {
      type: 'https://eips.ethereum.org/EIPS/eip-8004#registration-v1' as const,
      name: doc.profile.name,
      description: doc.profile.description,
      image: doc.profile.image ?? '',
      services,
      x402Support: true,
      active: doc.status === 'active',
      registrations: doc.registrations.map((r) => {
        const id = BigInt(r.agentId);
        return {
          agentId: id <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(id) : r.agentId,
          agentRegistry: r.agentRegistry,
        };
      }),
      supportedTrust: [] as string[],
    };
  }
}

/**
 * The soul's JWT becomes the entry's signature, so its `memory` claim must bind what is written:
 * the content's digest, the layer and the kind (and, if the soul chose, the head it expects).
 */
function memoryClaimOf(
  token: SoulToken,
  entry: { contentDigest: string; layer: MemoryLayer; kind: 'memory' | 'validation' },
): MemoryClaim {
  const parsed = MemoryClaim.safeParse(token.claims.memory);
  if (!parsed.success) {
    throw invalid([
      {
        field: 'memory',
        message:
          'claim of the Bearer JWT must be {content_digest, layer, kind, previous_digest?}: the hex SHA-256 ' +
          `of content, the layer and the kind written (${parsed.error.issues[0]?.path.join('.') || 'memory'}: ` +
          `${parsed.error.issues[0]?.message})`,
      },
    ]);
  }
  const claim = parsed.data;
  const errors: FieldError[] = [];
  if (claim.content_digest !== entry.contentDigest)
    errors.push({ field: 'content', message: 'is not what memory.content_digest of the Bearer JWT signs' });
  if (claim.layer !== entry.layer)
    errors.push({ field: 'layer', message: `is not memory.layer of the Bearer JWT (${claim.layer})` });
  if (claim.kind !== entry.kind)
    errors.push({ field: 'kind', message: `is not memory.kind of the Bearer JWT (${claim.kind})` });
  if (errors.length > 0) throw invalid(errors);
  return claim;
}

/** The key that signed a soul's write is still its current one (no rotation slipped in between). */
async function stillCurrent(trx: Kysely<Database>, agentId: string, thumbprint: string): Promise<void> {
  if ((await currentKeyOf(trx, agentId))?.thumbprint === thumbprint) return;
  throw new ServiceError('conflict', {
    detail: "The soul's key was rotated meanwhile; sign with the new key",
  });
}

function signatureView(
  jws: string | null,
  kid: string | null,
  origin: SignatureOrigin | null,
  soulSigned: boolean,
): Signature | null {
  if (jws === null || kid === null || origin === null) return null;
  return { signer: origin === 'writer' && soulSigned ? 'soul' : 'service', kid, origin, jws };
}

function keyView(k: SoulKeyRow) {
  return {
    jwk: JSON.parse(k.jwk) as Record<string, string>,
    thumbprint: k.thumbprint,
    valid_from: k.valid_from,
    valid_until: k.valid_until,
    endorsement: signatureView(k.endorsement, k.endorsement_kid, k.endorsement_origin, true),
  };
}

/** The stored checkpoint JWS with the fields it signs beside it (decoded, not verified: ours). */
function checkpointView(jws: string) {
  const payload = JSON.parse(
    Buffer.from(jws.split('.')[1] as string, 'base64url').toString('utf8'),
  ) as Checkpoint;
  return {
    sequence: payload.sequence,
    digest: payload.digest,
    issued_at: payload.issued_at,
    kid: decodeProtectedHeader(jws).kid as string,
    jws,
  };
}

export function memoryView(row: SoulMemoryRow): Memory {
  return {
    memory_id: row.id,
    agent_id: row.agent_id,
    sequence: row.sequence,
    layer: row.layer,
    kind: row.kind,
    content: row.content,
    content_digest: row.content_digest,
    previous_digest: row.previous_digest,
    digest: row.digest,
    writer: { kind: row.writer_kind, id: row.writer_id },
    recorded_at: row.recorded_at,
    signature: signatureView(
      row.signature,
      row.signature_kid,
      row.signature_origin,
      row.writer_kind === 'soul',
    ),
  };
}
