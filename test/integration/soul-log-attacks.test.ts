/**
 * Issue 28, item 6, written as the attack, once per dialect: someone who holds the database - but
 * neither a soul's private key nor SECRETS_KEY - rewrites a soul's memory log, and the client
 * check of docs/guides/souls.md "Checking a log" (test/helpers/soul-log-check.ts, written from the
 * documentation, not from the service's code) must see it. An entry rewritten with every digest
 * recomputed fails on its signature; re-signed with the attacker's own key, on the key; a cut tail,
 * on the checkpoint, and an older checkpoint put back, for a reader who kept the newer one. Also:
 * soul writes that do not sign what they write are refused, a rotated service key keeps verifying
 * what it signed, and a log written before logs were signed is signed by the migration, marked so,
 * and checks out.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CompactSign,
  type CryptoKey,
  calculateJwkThumbprint,
  calculateJwkThumbprintUri,
  generateKeyPair,
  SignJWT,
} from 'jose';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest, migrateUpTo, migrationNames } from '../../db/migrate.ts';
import type { Database } from '../../db/schema.ts';
import { rotateLogKey } from '../../servers/features/souls/log-keys.ts';
import { SecretBox, SecretsKey } from '../../servers/secrets.ts';
import { createTestDatabase, dialects } from '../helpers/databases.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { newKey, SoulClient, send, type TestKey } from '../helpers/soul-client.ts';
import { checkpointOf, checkSoulLog, digestOf } from '../helpers/soul-log-check.ts';
import { newAccount, payingFetch } from '../helpers/x402-payer.ts';

// biome-ignore lint/suspicious/noExplicitAny: rows and bodies are read field by field
type Json = any;

const sha = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
const MIGRATION = '2026-11-27T2300Z_soul_memory_signatures';

/**
 * What the database holder does: entry `sequence` gets new content, and every digest from it on
 * is recomputed by the documented formula, so the chain is consistent again. `resign` may put a
 * signature of the attacker's making on the rewritten entry.
 */
async function rewrite(
  db: Kysely<Database>,
  agentId: string,
  sequence: number,
  content: string,
  resign?: (digest: string, row: Json) => Promise<{ signature: string; signature_kid: string }>,
): Promise<void> {
  const rows = await db
    .selectFrom('soul_memories')
    .selectAll()
    .where('agent_id', '=', agentId)
    .orderBy('sequence', 'asc')
    .execute();
  let previous: string | null = null;
  for (const row of rows) {
    if (row.sequence >= sequence) {
      const changed = row.sequence === sequence;
      const fields = {
        ...row,
        content: changed ? content : row.content,
        content_digest: changed ? sha(content) : row.content_digest,
        previous_digest: previous,
      };
      const digest = digestOf({ ...fields, writer: { kind: row.writer_kind, id: row.writer_id } });
      await db
        .updateTable('soul_memories')
        .set({
          content: fields.content,
          content_digest: fields.content_digest,
          previous_digest: previous,
          digest,
          ...(changed && resign ? await resign(digest, fields) : {}),
        })
        .where('id', '=', row.id)
        .execute();
      previous = digest;
    } else {
      previous = row.digest;
    }
  }
}

const serviceJws = (key: CryptoKey, kid: string, typ: string, payload: string) =>
  new CompactSign(new TextEncoder().encode(payload)).setProtectedHeader({ alg: 'ES256', kid, typ }).sign(key);

describe.each(dialects)('soul log attacks (%s)', (dialect) => {
  let service: TestService;
  let agent: SoulClient;
  // Production-like: the service's log key is sealed with a key the database holder lacks.
  const secretsKey = randomBytes(32).toString('base64');
  const settings = {
    'rate_limits.unauthenticated_writes.points': 1000,
    'payments.pay_to': newAccount().address,
    'secrets.key': secretsKey,
  };
  const payer = newAccount();

  beforeAll(async () => {
    service = await startTestService(dialect, settings);
    agent = new SoulClient(service.config);
  });
  afterAll(async () => {
    await service?.close();
  });

  const db = () => service.db.handle.db;
  let handles = 0;

  /** A soul whose log mixes its own writes (1, 3, 4) and paid ones the service signs (2, 5). */
  async function mixedLog(): Promise<{ key: TestKey; agentId: string }> {
    const key = await newKey('ES256');
    handles += 1;
    const made = await agent.register(key, {
      handle: `attacked-${dialect}-${handles}-${randomUUID().slice(0, 6)}`,
      name: 'Attacked',
      description: 'Its log is rewritten below.',
    });
    expect(made.status).toBe(201);
    const agentId = made.body.agent_id as string;
    for (const [i, content] of ['one', 'two', 'three', 'four', 'five'].entries()) {
      if (i === 1 || i === 4) {
        const paid = await payingFetch(payer)(`${service.config.site_url}/api/public/x402/soul-write`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ agent_id: agentId, content, kind: 'validation' }),
        });
        expect(paid.status).toBe(200);
      } else {
        expect((await agent.write(key, agentId, { content })).status).toBe(201);
      }
    }
    expect(await checkSoulLog(await agent.readLog(agentId))).toBeNull();
    return { key, agentId };
  }

  it('the attack: an entry rewritten with every digest recomputed fails the check on its signature (REST and MCP)', async () => {
    // The soul's own entry: its JWT signed the old content's digest.
    const bySoul = await mixedLog();
    await rewrite(db(), bySoul.agentId, 3, 'I never said that.');
    const rewritten = await agent.readLog(bySoul.agentId);
    expect(rewritten.entries[2].content).toBe('I never said that.');
    expect(await checkSoulLog(rewritten)).toBe('signature of 3 signs another entry');

    // A payer's entry, which the service signed: its JWS names the old digest.
    const byPayer = await mixedLog();
    await rewrite(db(), byPayer.agentId, 2, 'Terrible work.');
    expect(await checkSoulLog(await agent.readLog(byPayer.agentId))).toBe(
      'signature of 2 signs another entry',
    );

    // The log over MCP is the same projection: the same entries, signatures included, fail the same way.
    const mcp = new Client({ name: 'soul-log-reader', version: '1' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(service.config.mcp_url)));
    try {
      const doc = (await mcp.callTool({ name: 'get_soul', arguments: { agent_id: byPayer.agentId } }))
        .structuredContent as Json;
      const page = (
        await mcp.callTool({ name: 'list_soul_memories', arguments: { agent_id: byPayer.agentId } })
      ).structuredContent as Json;
      expect(page.memories.map((m: Json) => m.signature.jws)).toEqual(
        (await agent.allMemories(byPayer.agentId)).map((m) => m.signature.jws),
      );
      const jwks = (await send('GET', doc.urls.signing_keys)).body;
      expect(await checkSoulLog({ document: doc, entries: page.memories, jwks })).toBe(
        'signature of 2 signs another entry',
      );
    } finally {
      await mcp.close();
    }
  });

  it("re-signing a rewritten entry with a key not in the soul's history or the service's JWKS still fails", async () => {
    const { key, agentId } = await mixedLog();
    const saved = await db()
      .selectFrom('soul_memories')
      .selectAll()
      .where('agent_id', '=', agentId)
      .execute();
    const restore = async () => {
      for (const row of saved)
        await db().updateTable('soul_memories').set(row).where('id', '=', row.id).execute();
    };
    const intruder = await newKey('ES256');
    const intruderKid = await calculateJwkThumbprint(intruder.publicJwk);
    const soulKid = await calculateJwkThumbprint(key.publicJwk);
    const forgedJwt = (content: string) =>
      new SignJWT({ memory: { content_digest: sha(content), layer: 'episodic', kind: 'memory' } })
        .setProtectedHeader({ alg: 'ES256' })
        .setIssuer(agentId)
        .setIssuedAt()
        .setExpirationTime('2m')
        .sign(intruder.privateKey);

    // The soul's entry 4, re-signed with the intruder's key under its own kid, then under the soul's.
    const lie = 'I agreed to pay twice.';
    await rewrite(db(), agentId, 4, lie, async () => ({
      signature: await forgedJwt(lie),
      signature_kid: intruderKid,
    }));
    expect(await checkSoulLog(await agent.readLog(agentId))).toBe(
      'signature of 4 names a key the soul never had',
    );
    await rewrite(db(), agentId, 4, lie, async () => ({
      signature: await forgedJwt(lie),
      signature_kid: soulKid,
    }));
    expect(await checkSoulLog(await agent.readLog(agentId))).toBe('signature of 4 does not verify');

    // The intruder's key slipped into the soul's keys as if rotated in: the key history gives it away.
    const first = await db()
      .selectFrom('soul_keys')
      .selectAll()
      .where('agent_id', '=', agentId)
      .executeTakeFirstOrThrow();
    const at = saved.find((r) => r.sequence === 4)?.recorded_at as string;
    const before = new Date(Date.parse(at) - 1).toISOString();
    await db()
      .updateTable('soul_keys')
      .set({ valid_until: before })
      .where('thumbprint', '=', first.thumbprint)
      .execute();
    await db()
      .insertInto('soul_keys')
      .values({
        thumbprint: intruderKid,
        agent_id: agentId,
        jwk: JSON.stringify(intruder.publicJwk),
        valid_from: before,
        valid_until: null,
        endorsement: null,
        endorsement_kid: null,
        endorsement_origin: null,
      })
      .execute();
    await rewrite(db(), agentId, 4, lie, async () => ({
      signature: await forgedJwt(lie),
      signature_kid: intruderKid,
    }));
    expect(await checkSoulLog(await agent.readLog(agentId))).toBe('key 2 is not endorsed');
    // Endorsed by itself, claiming to be the soul's old key: it does not verify with that key.
    const selfEndorsed = await new SignJWT({ new_key: intruderKid })
      .setProtectedHeader({ alg: 'ES256' })
      .setIssuer(agentId)
      .setIssuedAt()
      .setExpirationTime('2m')
      .sign(intruder.privateKey);
    await db()
      .updateTable('soul_keys')
      .set({ endorsement: selfEndorsed, endorsement_kid: first.thumbprint, endorsement_origin: 'writer' })
      .where('thumbprint', '=', intruderKid)
      .execute();
    expect(await checkSoulLog(await agent.readLog(agentId))).toBe('endorsement of key 2 does not verify');
    await db().deleteFrom('soul_keys').where('thumbprint', '=', intruderKid).execute();
    await db()
      .updateTable('soul_keys')
      .set({ valid_until: null })
      .where('thumbprint', '=', first.thumbprint)
      .execute();
    await restore();
    expect(await checkSoulLog(await agent.readLog(agentId))).toBeNull();

    // The payer's entry 5, re-signed by a key of the attacker's: under a made-up kid, then under the service's.
    const { privateKey: forger } = await generateKeyPair('ES256');
    const serviceKid = saved.find((r) => r.sequence === 5)?.signature_kid as string;
    const praise = 'Best agent ever.';
    await rewrite(db(), agentId, 5, praise, async (digest) => ({
      signature: await serviceJws(forger, 'attacker', 'soul-memory+jws', digest),
      signature_kid: 'attacker',
    }));
    expect(await checkSoulLog(await agent.readLog(agentId))).toBe(
      "signature of 5 names a key not in the service's JWKS",
    );
    await rewrite(db(), agentId, 5, praise, async (digest) => ({
      signature: await serviceJws(forger, serviceKid, 'soul-memory+jws', digest),
      signature_kid: serviceKid,
    }));
    expect(await checkSoulLog(await agent.readLog(agentId))).toBe('signature of 5 does not verify');
  });

  it('a cut tail is seen by the checkpoint, and an older checkpoint put back by a reader who kept the newer', async () => {
    const { agentId } = await mixedLog();
    const { document } = await agent.readLog(agentId);
    expect(document.checkpoint).toMatchObject({ sequence: 5, digest: document.head.digest });
    const atThree = await db()
      .selectFrom('soul_memories')
      .select('digest')
      .where('agent_id', '=', agentId)
      .where('sequence', '=', 3)
      .executeTakeFirstOrThrow();

    await db()
      .deleteFrom('soul_memories')
      .where('agent_id', '=', agentId)
      .where('sequence', '>', 3)
      .execute();
    expect(await checkSoulLog(await agent.readLog(agentId))).toBe(
      'log cut: it ends at 3, the checkpoint names 5',
    );

    // A checkpoint of the attacker's making for the shorter log: not the service's.
    const { privateKey: forger } = await generateKeyPair('ES256');
    const forged = (kid: string) =>
      serviceJws(
        forger,
        kid,
        'soul-checkpoint+jws',
        JSON.stringify({
          agent_id: agentId,
          sequence: 3,
          digest: atThree.digest,
          issued_at: new Date().toISOString(),
        }),
      );
    await db()
      .updateTable('souls')
      .set({ checkpoint: await forged('attacker') })
      .where('agent_id', '=', agentId)
      .execute();
    expect(await checkSoulLog(await agent.readLog(agentId))).toBe(
      "checkpoint names a key not in the service's JWKS",
    );
    await db()
      .updateTable('souls')
      .set({ checkpoint: await forged(document.checkpoint.kid) })
      .where('agent_id', '=', agentId)
      .execute();
    expect(await checkSoulLog(await agent.readLog(agentId))).toBe('checkpoint does not verify');

    // The database rolled back whole, with a genuine older checkpoint (the one of entry 3, kept
    // from before): a first-time reader cannot tell; a reader who kept the newer one can.
    const older = await mixedLog();
    const olderDoc = await db()
      .selectFrom('souls')
      .select('checkpoint')
      .where('agent_id', '=', older.agentId)
      .executeTakeFirstOrThrow();
    const seenOlder = checkpointOf((await agent.readLog(older.agentId)).document);
    await agent.write(older.key, older.agentId, { content: 'six' });
    const newest = checkpointOf((await agent.readLog(older.agentId)).document);
    expect(newest.sequence).toBe(seenOlder.sequence + 1);
    await db()
      .deleteFrom('soul_memories')
      .where('agent_id', '=', older.agentId)
      .where('sequence', '>', seenOlder.sequence)
      .execute();
    await db()
      .updateTable('souls')
      .set({ checkpoint: olderDoc.checkpoint })
      .where('agent_id', '=', older.agentId)
      .execute();
    const rolledBack = await agent.readLog(older.agentId);
    expect(await checkSoulLog(rolledBack)).toBeNull();
    expect(await checkSoulLog({ ...rolledBack, lastSeen: newest })).toBe(
      'checkpoint is older than one seen before',
    );
  });

  it('a soul write must sign what it writes: the memory claim, and the head it expects if it names one', async () => {
    const key = await newKey('EdDSA');
    const agentId = (
      await agent.register(key, {
        handle: `signer-${dialect}`,
        name: 'Signer',
        description: 'Signs its writes.',
      })
    ).body.agent_id as string;
    const url = `${agent.soulApi}/agents/${agentId}/memories`;
    const entry = { content: 'Shipped the release.', layer: 'semantic' };

    /** Writes `body` with a JWT whose memory claim signs `signed`. */
    const post = async (
      body: { content: string; layer?: string },
      signed: Parameters<SoulClient['memoryJwt']>[2],
    ) => send('POST', url, body, await agent.memoryJwt(key, agentId, signed));
    const fields = (res: Json) => res.body.errors.map((e: Json) => e.field);

    const unsigned = await send('POST', url, entry, await agent.soulJwt(key, agentId));
    expect(unsigned.status).toBe(400);
    expect(fields(unsigned)).toEqual(['memory']);
    const other = await post(entry, { ...entry, content: 'Something else.' });
    expect([other.status, ...fields(other)]).toEqual([400, 'content']);
    // The layer defaults to episodic in the body: the claim must say what is written, defaults included.
    const layer = await post(entry, { content: entry.content });
    expect([layer.status, ...fields(layer)]).toEqual([400, 'layer']);

    // previous_digest pins the entry after a head: null for the first, then the head it read.
    const first = await post(entry, { ...entry, previous_digest: null });
    expect(first.status).toBe(201);
    const second = { content: 'Second.' };
    const stale = await post(second, { ...second, previous_digest: null });
    expect([stale.status, stale.body.code]).toEqual([409, 'conflict']);
    const next = await post(second, { ...second, previous_digest: first.body.digest });
    expect(next.status).toBe(201);
    expect(next.body.previous_digest).toBe(first.body.digest);
    expect(await checkSoulLog(await agent.readLog(agentId))).toBeNull();

    // A rotation's Bearer JWT must name the new key it endorses.
    const replacement = await newKey('ES256');
    const rotate = async (bearer: string) =>
      send(
        'POST',
        `${agent.soulApi}/agents/${agentId}/keys`,
        { public_key: replacement.publicJwk, proof: await agent.soulJwt(replacement, agentId) },
        bearer,
      );
    const unnamed = await rotate(await agent.soulJwt(key, agentId));
    expect(unnamed.status).toBe(400);
    expect(unnamed.body.errors[0].field).toBe('new_key');
    const wrong = await rotate(await agent.rotationJwt(key, agentId, await newKey('ES256')));
    expect(wrong.body.errors[0].field).toBe('new_key');
    expect((await rotate(await agent.rotationJwt(key, agentId, replacement))).status).toBe(200);
    expect((await agent.write(replacement, agentId, { content: 'After the rotation.' })).status).toBe(201);
    expect(await checkSoulLog(await agent.readLog(agentId))).toBeNull();
  });

  it('a rotated service key stays published, and what it signed keeps verifying; the key is sealed', async () => {
    const { key, agentId } = await mixedLog();
    const before = (await agent.readLog(agentId)).jwks.keys.map((k: Json) => k.kid);
    const stored = await db()
      .selectFrom('soul_log_keys')
      .select('private_jwk')
      .where('retired_at', 'is', null)
      .executeTakeFirstOrThrow();
    expect(stored.private_jwk).toMatch(/^sealed:v1:/);

    const box = new SecretBox(SecretsKey.parse(secretsKey));
    const kid = await rotateLogKey(db(), box, () => new Date());
    // A process started after the rotation signs with the new key; the old one stays in the JWKS.
    const restarted = await startTestService(dialect, settings, { database: service.db, background: false });
    try {
      const elsewhere = new SoulClient(restarted.config);
      const paid = await payingFetch(payer)(`${restarted.config.site_url}/api/public/x402/soul-write`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ agent_id: agentId, content: 'After the rotation.' }),
      });
      expect(paid.status).toBe(200);
      expect(((await paid.json()) as Json).signature).toMatchObject({ signer: 'service', kid });
      expect((await elsewhere.write(key, agentId, { content: 'Mine, after it.' })).status).toBe(201);
      const log = await elsewhere.readLog(agentId);
      expect(log.jwks.keys.map((k: Json) => k.kid)).toEqual([...before, kid]);
      expect(log.document.checkpoint.kid).toBe(kid);
      expect(
        new Set(log.entries.filter((e) => e.signature.signer === 'service').map((e) => e.signature.kid)).size,
      ).toBe(2);
      expect(await checkSoulLog(log)).toBeNull();
    } finally {
      await restarted.close();
    }
  });
});

describe.each(dialects)('soul logs written before signatures (%s)', (dialect) => {
  it('the migration signs every entry, rotated key and checkpoint with its own key, marked migration; the log checks out and grows signed', async () => {
    const database = await createTestDatabase(dialect, { migrate: false });
    let service: TestService | undefined;
    try {
      const names = await migrationNames();
      await migrateUpTo(database.handle.db, names[names.indexOf(MIGRATION) - 1] as string);
      // biome-ignore lint/suspicious/noExplicitAny: the tables as they were before the migration
      const db = database.handle.db as any;
      const first = await newKey('EdDSA');
      const second = await newKey('ES256');
      const agentId = await calculateJwkThumbprintUri(first.publicJwk, 'sha256');
      const t = (minutes: number) => new Date(Date.UTC(2026, 10, 26, 10, minutes)).toISOString();
      await db
        .insertInto('souls')
        .values({
          id: randomUUID(),
          agent_id: agentId,
          handle: `before-${dialect}`,
          name: 'Before',
          name_key: 'before',
          description: 'Written before logs were signed.',
          image: null,
          endpoints: '{}',
          operator: null,
          account_id: null,
          status: 'active',
          created_at: t(0),
          updated_at: t(30),
          retired_at: null,
        })
        .execute();
      const keyRow = async (key: TestKey, from: string, until: string | null) => ({
        thumbprint: await calculateJwkThumbprint(key.publicJwk),
        agent_id: agentId,
        jwk: JSON.stringify(key.publicJwk),
        valid_from: from,
        valid_until: until,
      });
      await db
        .insertInto('soul_keys')
        .values([await keyRow(first, t(0), t(30)), await keyRow(second, t(30), null)])
        .execute();
      let previous: string | null = null;
      const writers = [
        { kind: 'soul', id: agentId },
        { kind: 'payer', id: newAccount().address.toLowerCase() },
        { kind: 'soul', id: agentId },
      ];
      for (const [i, writer] of writers.entries()) {
        const entry = {
          agent_id: agentId,
          sequence: i + 1,
          layer: 'episodic',
          kind: 'memory',
          content: `old ${i + 1}`,
          content_digest: sha(`old ${i + 1}`),
          previous_digest: previous,
          writer,
          recorded_at: t(10 + 20 * i),
        };
        const digest = digestOf(entry);
        await db
          .insertInto('soul_memories')
          .values({
            id: randomUUID(),
            agent_id: agentId,
            sequence: entry.sequence,
            layer: entry.layer,
            kind: entry.kind,
            content: entry.content,
            content_digest: entry.content_digest,
            previous_digest: previous,
            digest,
            writer_kind: writer.kind,
            writer_id: writer.id,
            payment_id: null,
            recorded_at: entry.recorded_at,
          })
          .execute();
        previous = digest;
      }

      await migrateToLatest(database.handle.db);
      const logKey = await database.handle.db
        .selectFrom('soul_log_keys')
        .selectAll()
        .executeTakeFirstOrThrow();
      expect(logKey).toMatchObject({ kid: 'soul-log-migration', private_jwk: null });
      expect(logKey.retired_at).not.toBeNull();

      service = await startTestService(
        dialect,
        { 'rate_limits.unauthenticated_writes.points': 1000 },
        { database, background: false },
      );
      const agent = new SoulClient(service.config);
      const log = await agent.readLog(agentId);
      expect(log.entries.map((e) => e.signature)).toEqual(
        Array(3).fill(
          expect.objectContaining({ signer: 'service', origin: 'migration', kid: 'soul-log-migration' }),
        ),
      );
      const [newest, oldest] = log.document.keys;
      expect(oldest.endorsement).toBeNull();
      expect(newest.endorsement).toMatchObject({
        signer: 'service',
        origin: 'migration',
        kid: 'soul-log-migration',
      });
      expect(log.document.checkpoint).toMatchObject({
        sequence: 3,
        digest: previous,
        kid: 'soul-log-migration',
      });
      expect(log.jwks.keys.map((k: Json) => k.kid)).toContain('soul-log-migration');
      expect(await checkSoulLog(log)).toBeNull();

      // The soul writes on with its current key: signed by it, the checkpoint by the live key.
      expect((await agent.write(second, agentId, { content: 'new 4' })).status).toBe(201);
      const grown = await agent.readLog(agentId);
      expect(grown.entries[3].signature).toMatchObject({ signer: 'soul', origin: 'writer' });
      expect(grown.document.checkpoint.kid).not.toBe('soul-log-migration');
      expect(await checkSoulLog(grown)).toBeNull();

      // A migrated entry rewritten consistently fails on its signature, and re-signed under the
      // migration's kid it does not verify: that key's private half was never kept.
      await rewrite(database.handle.db, agentId, 2, 'rewritten');
      expect(await checkSoulLog(await agent.readLog(agentId))).toBe('signature of 2 signs another entry');
      const { privateKey: forger } = await generateKeyPair('ES256');
      await rewrite(database.handle.db, agentId, 2, 'rewritten', async (digest) => ({
        signature: await serviceJws(forger, 'soul-log-migration', 'soul-memory+jws', digest),
        signature_kid: 'soul-log-migration',
      }));
      expect(await checkSoulLog(await agent.readLog(agentId))).toBe('signature of 2 does not verify');
    } finally {
      await service?.close();
      await database.drop();
    }
  });
});
