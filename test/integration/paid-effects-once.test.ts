/**
 * A paid call's effect happens once per payment, even across the narrow window in which a process
 * has committed the handler's writes but dies before the payment core keeps the result: the
 * reservation is then recovered as released (no result), and the payer's retry of the same payment
 * runs the handler again. Each paid SKU that writes answers the effect it already made instead of
 * making a second one (a second memory, a second bid deciding the slot again, a second placement or
 * booking). The state after such a recovery is set in the ledger directly, as the recovery leaves
 * it; everything else is the service as a customer meets it, with the stock x402 client.
 */
import { CompactSign, exportJWK, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/databases.ts';
import { newWebhookSecret } from '../helpers/receivers.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { newAccount, paymentHeader, paymentRequiredOf, stockClient } from '../helpers/x402-payer.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are checked structurally
type Json = Record<string, any>;

describe.each(dialects)('a paid effect happens once per payment (%s)', (dialect) => {
  let service: TestService;

  beforeAll(async () => {
    service = await startTestService(dialect, {
      'payments.pay_to': newAccount().address,
      'rate_limits.unauthenticated_writes.points': 1000,
      'marketplace.embodiment.operator_account_email': 'operator@robots.test',
      // The operator's webhook is never reached here: the delivery stays queued.
      'marketplace.embodiment.webhook_url': 'http://127.0.0.1:9/bookings',
      'marketplace.embodiment.webhook_secret': newWebhookSecret(),
    });
  });
  afterAll(async () => {
    await service?.close();
  });

  const db = () => service.db.handle.db;
  const skuUrl = (sku: string) => `${service.config.site_url}/api/public/x402/${sku}`;
  const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });

  /** Pays `sku` once, then leaves its payment as a recovery after a crash would, and pays again. */
  async function payTwiceAcrossARecovery(sku: string, body: Json, maxUsd = 1_000) {
    const payer = newAccount();
    const required = paymentRequiredOf(await post(skuUrl(sku), body));
    const payload = await stockClient(payer, maxUsd).createPaymentPayload(required);
    const header = { 'PAYMENT-SIGNATURE': paymentHeader(payload) };
    const first = await post(skuUrl(sku), body, header);
    expect(first.status, await first.clone().text()).toBe(200);
    const recovered = await db()
      .updateTable('payments')
      .set({ status: 'released', result: null, lease_owner: null, lease_expires_at: null })
      .where('payer', '=', payer.address.toLowerCase())
      .executeTakeFirst();
    expect(Number(recovered.numUpdatedRows)).toBe(1);
    const again = await post(skuUrl(sku), body, header);
    expect(again.status, await again.clone().text()).toBe(200);
    const payment = await db()
      .selectFrom('payments')
      .select(['id', 'status'])
      .where('payer', '=', payer.address.toLowerCase())
      .executeTakeFirstOrThrow();
    expect(payment.status).not.toBe('released');
    return {
      first: (await first.json()) as Json,
      again: (await again.json()) as Json,
      paymentId: payment.id,
    };
  }

  it('soul-write: the retry answers the entry already written, and the log holds it once', async () => {
    const { publicKey, privateKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
    const public_key = await exportJWK(publicKey);
    const { challenge } = (await (
      await post(`${service.config.public_api_url}/soul/challenge`, { public_key })
    ).json()) as Json;
    const signature = await new CompactSign(new TextEncoder().encode(challenge))
      .setProtectedHeader({ alg: 'EdDSA' })
      .sign(privateKey);
    const registered = await post(`${service.config.site_url}/api/soul/agents`, {
      public_key,
      challenge,
      signature,
      handle: `once-${dialect}`,
      name: 'Once',
      description: 'Written to once per payment.',
    });
    expect(registered.status).toBe(201);
    const agentId = ((await registered.json()) as Json).agent_id as string;

    const { first, again, paymentId } = await payTwiceAcrossARecovery('soul-write', {
      agent_id: agentId,
      content: 'paid for once',
    });
    expect(again.sequence).toBe(first.sequence);
    expect(again.digest).toBe(first.digest);
    const rows = await db()
      .selectFrom('soul_memories')
      .select('payment_id')
      .where('agent_id', '=', agentId)
      .execute();
    expect(rows).toEqual([{ payment_id: paymentId }]);
  });

  it('featured-bid: the retry answers the bid already placed, which holds the slot once', async () => {
    const { first, again, paymentId } = await payTwiceAcrossARecovery('featured-bid', {
      domain: 'once-bidder.com',
      bid_usdc: 2,
    });
    expect(again.bid_id).toBe(first.bid_id);
    const bids = await db()
      .selectFrom('featured_bids')
      .select(['id', 'status'])
      .where('payment_id', '=', paymentId)
      .execute();
    expect(bids).toEqual([{ id: first.bid_id, status: 'holding' }]);
    const slot = (await (await fetch(`${service.config.public_api_url}/featured`)).json()) as Json;
    expect(slot.holder.bid_id).toBe(first.bid_id);
  });

  it('spotlight and embodiment: the retry answers the placement or booking already made', async () => {
    const spot = await payTwiceAcrossARecovery('spotlight', { domain: 'once-spotlight.com' });
    expect(spot.again.spotlight_id).toBe(spot.first.spotlight_id);
    expect(spot.again.scan.scan_id).toBe(spot.first.scan.scan_id);
    const placements = await db()
      .selectFrom('spotlights')
      .select('id')
      .where('payment_id', '=', spot.paymentId)
      .execute();
    expect(placements).toHaveLength(1);

    const booking = await payTwiceAcrossARecovery('embodiment', {
      contact: 'pilot@example.com',
      agent_handle: 'once-robot',
      duration_days: 1,
    });
    expect(booking.again.booking_id).toBe(booking.first.booking_id);
    const bookings = await db()
      .selectFrom('embodiment_bookings')
      .select('id')
      .where('payment_id', '=', booking.paymentId)
      .execute();
    expect(bookings).toHaveLength(1);
    // The status link answered last is the one that works (the first was never delivered).
    expect((await fetch(booking.again.status_url)).status).toBe(200);
  });
});
