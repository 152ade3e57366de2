/**
 * Secrets at rest (hardening issue, item 7): with SECRETS_KEY set, the signing keys, cookie and
 * rate-limit keys and brand webhook secrets are sealed (AES-256-GCM) in the database, so a reader of
 * the database cannot sign tokens or webhooks; the service still works with them; a key rotation
 * reseals everything on start; a missing or unknown key stops the start rather than minting new
 * secrets. Paid calls' results kept for replay (they can hold a private scan's read token) are sealed
 * too, and still replayed. Written as the attack: reading the tables.
 */
import { randomBytes } from 'node:crypto';
import type { PaymentPayload } from '@x402/core/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SecretBox, SecretsKey, SecretsKeyMissingError } from '../../servers/secrets.ts';
import { createTestDatabase, dialects, type TestDatabase } from '../helpers/databases.ts';
import { TEST_SKU, withTestSku } from '../helpers/paid-operations.ts';
import { startWebhookReceiver, type WebhookReceiver, waitFor } from '../helpers/receivers.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { newAccount, paymentHeader, paymentRequiredOf, stockClient } from '../helpers/x402-payer.ts';

// biome-ignore lint/suspicious/noExplicitAny: JSON bodies
type Json = any;

const STREAM_HEADER = 'Bearer stream-receiver-secret';
const newKey = () => randomBytes(32).toString('base64');
const keyId = (text: string) => (SecretsKey.parse(text) as SecretsKey).id;

describe('SecretBox', () => {
  const key = SecretsKey.parse(newKey()) as SecretsKey;
  const box = new SecretBox(key);

  it('seals with a fresh nonce and opens only at the place it was sealed for', () => {
    const a = box.seal('whsec_abc', 'brand_channels/a.com/webhook_secret');
    const b = box.seal('whsec_abc', 'brand_channels/a.com/webhook_secret');
    expect(a).not.toBe(b);
    expect(a.startsWith(`sealed:v1:${key.id}:`)).toBe(true);
    expect(a).not.toContain('whsec_abc');
    expect(box.open(a, 'brand_channels/a.com/webhook_secret')).toBe('whsec_abc');
    // Copied to another brand's row, it does not open there.
    expect(() => box.open(a, 'brand_channels/b.com/webhook_secret')).toThrow();
    const tampered = `${a.slice(0, -4)}${a.slice(-4) === 'AAAA' ? 'BBBB' : 'AAAA'}`;
    expect(() => box.open(tampered, 'brand_channels/a.com/webhook_secret')).toThrow();
  });

  it('accepts 32-byte keys as base64, base64url or hex, and nothing shorter', () => {
    const bytes = randomBytes(32);
    const ids = [bytes.toString('base64'), bytes.toString('base64url'), bytes.toString('hex')].map(keyId);
    expect(new Set(ids).size).toBe(1);
    expect(SecretsKey.parse(randomBytes(16).toString('base64'))).toBeNull();
    expect(SecretsKey.parse('changeme')).toBeNull();
    expect(JSON.stringify({ key })).toBe(JSON.stringify({ key: { id: key.id } }));
  });
});

describe.each(dialects)('secrets at rest (%s)', (dialect) => {
  let db: TestDatabase;
  let receiver: WebhookReceiver;
  let service: TestService | undefined;
  const first = newKey();
  const second = newKey();
  const domain = `sealed-${dialect}.com`;

  beforeAll(async () => {
    db = await createTestDatabase(dialect);
    receiver = await startWebhookReceiver();
  });
  afterAll(async () => {
    await service?.close();
    await receiver?.close();
    await db?.drop();
  });

  const payTo = newAccount().address;
  const start = (secrets: { key?: string; previous?: string[] }) =>
    startTestService(
      dialect,
      {
        'rate_limits.unauthenticated_writes.points': 1000,
        'payments.pay_to': payTo,
        ...(secrets.key ? { 'secrets.key': secrets.key } : {}),
        ...(secrets.previous ? { 'secrets.previous_keys': secrets.previous } : {}),
      },
      { database: db, operations: withTestSku() },
    );

  /** The result a paid call left for replay, as stored (the test SKU, paid once in the first test). */
  const paid = { payload: null as PaymentPayload | null, execution: '' };
  const PAID_TEXT = 'kept-for-replay-only';
  const storedResult = async (): Promise<string> =>
    (await db.handle.db.selectFrom('payments').select('result').executeTakeFirstOrThrow()).result as string;
  async function replay(running: TestService): Promise<string> {
    const url = `${running.config.site_url}/api/public/x402/${TEST_SKU}`;
    // Each restart here listens on a new port, so its SITE_URL - and the SKU's URL the payment names
    // (`resource.url`, which binds it) - moves; a deployment keeps its SITE_URL. The same signed
    // authorization is sent, naming where the SKU is sold now.
    const payload = { ...(paid.payload as PaymentPayload), resource: { url } };
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'PAYMENT-SIGNATURE': paymentHeader(payload) },
      body: JSON.stringify({ text: PAID_TEXT }),
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as Json).execution;
  }

  async function storedSecrets(): Promise<string[]> {
    const rows = [
      ...(await db.handle.db.selectFrom('service_secrets').select('value').execute()).map((r) => r.value),
      ...(await db.handle.db.selectFrom('oauth_signing_keys').select('private_jwk').execute()).map(
        (r) => r.private_jwk,
      ),
      ...(await db.handle.db.selectFrom('soul_log_keys').select('private_jwk').execute()).map(
        (r) => r.private_jwk as string,
      ),
      ...(await db.handle.db.selectFrom('brand_channels').select('webhook_secret').execute()).map(
        (r) => r.webhook_secret as string,
      ),
      ...(await db.handle.db.selectFrom('ssf_streams').select('authorization_header').execute()).map(
        (r) => r.authorization_header as string,
      ),
    ];
    return rows;
  }

  async function jwksKids(running: TestService): Promise<string[]> {
    const jwks = (await (await fetch(`${running.config.auth_url}/oauth/jwks`)).json()) as Json;
    return jwks.keys.map((k: Json) => k.kid).sort();
  }

  async function post(url: string, body: unknown, key?: string) {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(key ? { 'x-service-key': key } : {}) },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Json };
  }

  /** A return request to the brand; resolves once the receiver verified its signature. */
  async function deliverOne(running: TestService): Promise<void> {
    const before = receiver.processed.size;
    const res = await post(`${running.config.base_url}/return`, {
      brand_domain: domain,
      name: 'Jane Doe',
      contact: 'jane@example.com',
    });
    expect(res.status).toBe(200);
    await waitFor(() => receiver.processed.size === before + 1);
  }

  let kids: string[] = [];

  it('seals every stored secret and still signs tokens and webhooks with them', async () => {
    service = await start({ key: first });
    const account = await post(`${service.config.public_api_url}/account`, {
      email: `sealed-${dialect}@example.com`,
    });
    const key = account.body.key.service_key as string;
    const site = await post(`${service.config.public_api_url}/pixel-install`, { domain }, key);
    await db.handle.db
      .updateTable('sites')
      .set({ verified_at: new Date().toISOString(), verification_method: 'dns' })
      .where('id', '=', site.body.site_id)
      .execute();
    const registered = await post(
      `${service.config.public_api_url}/brand-agent`,
      {
        domain,
        endpoint: receiver.url,
        protocols: ['webhook'],
        webhook_secret: receiver.secret,
        support_contact: { email: 'help@example.com' },
      },
      key,
    );
    expect(registered.status).toBe(200);
    await deliverOne(service);
    // A security event stream's Authorization header, sent with each push of our SETs.
    const stream = await fetch(`${service.config.auth_url}/ssf/streams`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-key': key },
      body: JSON.stringify({
        delivery: {
          method: 'urn:ietf:rfc:8935',
          endpoint_url: receiver.url,
          authorization_header: STREAM_HEADER,
        },
      }),
    });
    expect(stream.status).toBe(201);

    // A paid call: its result is kept to answer the same payment sent again.
    const url = `${service.config.site_url}/api/public/x402/${TEST_SKU}`;
    const unpaid = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: PAID_TEXT }),
    });
    paid.payload = await stockClient(newAccount()).createPaymentPayload(paymentRequiredOf(unpaid));
    paid.execution = await replay(service);
    const result = await storedResult();
    expect(result.startsWith(`"sealed:v1:${keyId(first)}:`)).toBe(true);
    expect(result).not.toContain(PAID_TEXT);
    expect(await replay(service)).toBe(paid.execution);

    const stored = await storedSecrets();
    expect(stored.length).toBeGreaterThanOrEqual(6); // rate-limit, cookie, signing and soul log keys, webhook secret, stream header
    for (const value of stored) expect(value.startsWith(`sealed:v1:${keyId(first)}:`)).toBe(true);
    const dump = stored.join('\n');
    expect(dump).not.toContain(receiver.secret);
    expect(dump).not.toContain(STREAM_HEADER);
    expect(dump).not.toContain('"d":'); // no private JWK member in clear
    kids = await jwksKids(service);
    await service.close();
    service = undefined;
  });

  it('reseals under a new key on start, keeping every secret (same signing keys, same webhook secret)', async () => {
    service = await start({ key: second, previous: [first] });
    for (const value of await storedSecrets())
      expect(value.startsWith(`sealed:v1:${keyId(second)}:`)).toBe(true);
    expect(await jwksKids(service)).toEqual(kids);
    await deliverOne(service);
    expect((await storedResult()).startsWith(`"sealed:v1:${keyId(second)}:`)).toBe(true);
    expect(await replay(service)).toBe(paid.execution);
    await service.close();
    service = undefined;
  });

  it('refuses to start without the key, or with only the retired one, instead of making new secrets', async () => {
    await expect(start({})).rejects.toBeInstanceOf(SecretsKeyMissingError);
    await expect(start({ key: first })).rejects.toThrow(
      /neither SECRETS_KEY nor one of SECRETS_KEY_PREVIOUS/,
    );
    for (const value of await storedSecrets())
      expect(value.startsWith(`sealed:v1:${keyId(second)}:`)).toBe(true);
  });

  it('turns sealing off when the last key is only given as previous', async () => {
    service = await start({ previous: [second] });
    for (const value of await storedSecrets()) expect(value.startsWith('sealed:')).toBe(false);
    expect(await jwksKids(service)).toEqual(kids);
    await deliverOne(service);
    expect(JSON.parse(await storedResult())).toMatchObject({ echo: PAID_TEXT, execution: paid.execution });
    expect(await replay(service)).toBe(paid.execution);
  });
});
