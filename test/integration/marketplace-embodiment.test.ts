/**
 * Robot embodiment bookings (issue 12): the deposit paid with the stock `@x402/fetch` client
 * (embedded facilitator, offline: payments `authorized`), the booking delivered to a real webhook
 * receiver standing in for the robot operator (Standard Webhooks signature checked by the
 * `standardwebhooks` library), every transition made with the operator's service key, the
 * requester's keyless status URL, and the deposit credited back when declined or cancelled.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/databases.ts';
import {
  startSmtpServer,
  startWebhookReceiver,
  type WebhookReceiver,
  waitFor,
} from '../helpers/receivers.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { newAccount, payingFetch } from '../helpers/x402-payer.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are checked structurally
type Json = Record<string, any>;

const OPERATOR = 'robots@operator-example.com';

describe.each(dialects)('embodiment bookings (%s)', (dialect) => {
  let service: TestService;
  let receiver: WebhookReceiver;
  let operatorKey: string;
  let otherKey: string;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    service = await startTestService(dialect, {
      'payments.pay_to': newAccount().address,
      'marketplace.embodiment.operator_account_email': OPERATOR,
      'marketplace.embodiment.webhook_url': receiver.url,
      'marketplace.embodiment.webhook_secret': receiver.secret,
    });
    const keyOf = async (email: string) => {
      const res = await fetch(`${service.config.public_api_url}/account`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email, password: 'correct horse battery staple' }),
      });
      return ((await res.json()) as Json).key.service_key as string;
    };
    operatorKey = await keyOf(OPERATOR);
    otherKey = await keyOf(`someone-${dialect}@example.com`);
  });
  afterAll(async () => {
    await service?.close();
    await receiver?.close();
  });

  const api = () => service.config.public_api_url;
  const book = async (payer = newAccount()) => {
    const res = await payingFetch(payer, 1000)(`${service.config.site_url}/api/public/x402/embodiment`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        contact: 'owner@requester-example.com',
        agent_handle: 'shop-agent',
        duration_days: 2,
      }),
    });
    expect(res.status).toBe(200);
    return { payer, booking: (await res.json()) as Json };
  };
  const move = (id: string, body: Json, key = operatorKey) =>
    fetch(`${api()}/embodiment/bookings/${id}/status`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-key': key },
      body: JSON.stringify(body),
    });
  const status = async (statusUrl: string) => (await (await fetch(statusUrl)).json()) as Json;

  it('opens a booking for the 650.00 deposit and delivers it, signed, to the operator', async () => {
    const { booking } = await book();
    expect(booking).toMatchObject({
      agent_handle: 'shop-agent',
      duration_days: 2,
      status: 'requested',
      deposit_usdc: 650,
      quote: null,
    });
    expect(booking.status_url).toMatch(/\/embodiment\/bookings\/[0-9a-f-]{36}\?token=agsvc_booking_/);
    await receiver.waitFor(() =>
      [...receiver.processed.values()].some(
        (r) => (r.payload as Json).data.booking_id === booking.booking_id,
      ),
    );
    const delivered = [...receiver.processed.values()].find(
      (r) => (r.payload as Json).data.booking_id === booking.booking_id,
    );
    expect(delivered?.verified).toBe(true);
    expect(delivered?.payload).toMatchObject({
      type: 'embodiment.booking.requested',
      data: { contact: 'owner@requester-example.com', agent_handle: 'shop-agent', deposit_usdc: 650 },
    });
    // The requester's status URL: no key, no contact.
    const read = await status(booking.status_url);
    expect(read).toMatchObject({ booking_id: booking.booking_id, status: 'requested' });
    expect(JSON.stringify(read)).not.toContain('requester-example.com');
    const wrong = booking.status_url.replace(/token=.*/, 'token=agsvc_booking_wrong');
    expect((await fetch(wrong)).status).toBe(404);
  });

  it('walks requested -> quoted -> scheduled -> active -> completed with the operator key only', async () => {
    const { booking } = await book();
    const id = booking.booking_id as string;
    expect((await move(id, { status: 'quoted', quote_usdc: 4200 }, otherKey)).status).toBe(403);
    const noQuote = await move(id, { status: 'quoted' });
    expect(noQuote.status).toBe(400);
    expect(((await noQuote.json()) as Json).errors.map((e: Json) => e.field)).toContain('quote_usdc');
    expect((await move(id, { status: 'active' })).status).toBe(409);

    const validUntil = new Date(Date.now() + 7 * 86_400_000).toISOString();
    const quoted = await move(id, {
      status: 'quoted',
      quote_usdc: 4200.5,
      quote_valid_until: validUntil,
      note: 'Two units',
    });
    expect(quoted.status).toBe(200);
    expect(await quoted.json()).toMatchObject({
      status: 'quoted',
      quote: { amount_usdc: 4200.5, valid_until: validUntil },
    });
    const start = new Date(Date.now() + 14 * 86_400_000).toISOString();
    expect((await move(id, { status: 'scheduled', scheduled_for: start })).status).toBe(200);
    expect((await move(id, { status: 'active' })).status).toBe(200);
    const done = await move(id, { status: 'completed' });
    expect(done.status).toBe(200);
    const read = await status(booking.status_url);
    expect(read).toMatchObject({ status: 'completed', scheduled_for: start, deposit_credited: false });
    expect(read.history.map((h: Json) => h.to)).toEqual([
      'requested',
      'quoted',
      'scheduled',
      'active',
      'completed',
    ]);
    expect(read.history[1].note).toBe('Two units');
    expect((await move(id, { status: 'cancelled' })).status).toBe(409);
    expect((await move('00000000-0000-4000-8000-000000000000', { status: 'declined' })).status).toBe(404);
  });

  it('credits the deposit back when declined, and when cancelled', async () => {
    for (const to of ['declined', 'cancelled'] as const) {
      const { payer, booking } = await book();
      const res = await move(booking.booking_id, { status: to, note: 'No robot free' });
      expect(res.status).toBe(200);
      expect(await status(booking.status_url)).toMatchObject({ status: to, deposit_credited: true });
      const credits = (await (await fetch(`${api()}/credits?payer=${payer.address}`)).json()) as Json;
      // Owed until the deposit's payment is settled (offline here: it is authorized) and a settler key pays it.
      expect(credits).toMatchObject({ owed_usdc: 650, paid_usdc: 0 });
      expect(credits.credits).toEqual([
        expect.objectContaining({
          reason: 'embodiment_deposit',
          subject_id: booking.booking_id,
          status: 'owed',
          amount_usdc: 650,
        }),
      ]);
    }
  });
});

describe.each(dialects)('embodiment without an operator (%s)', (dialect) => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService(dialect, { 'payments.pay_to': newAccount().address });
  });
  afterAll(() => service?.close());

  it('is sku_unavailable, not a 402', async () => {
    const res = await fetch(`${service.config.site_url}/api/public/x402/embodiment`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ contact: '+14155550123', agent_handle: 'shop-agent' }),
    });
    expect(res.status).toBe(503);
    expect(res.headers.get('payment-required')).toBeNull();
    expect(await res.json()).toMatchObject({
      code: 'sku_unavailable',
      detail: expect.stringContaining('operator'),
    });
  });
});

describe.each(dialects)('embodiment delivered by email (%s)', (dialect) => {
  let service: TestService;
  let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
  beforeAll(async () => {
    smtp = await startSmtpServer();
    service = await startTestService(dialect, {
      'payments.pay_to': newAccount().address,
      'smtp.url': smtp.url,
      'marketplace.embodiment.operator_account_email': OPERATOR,
      'marketplace.embodiment.email': 'bookings@operator-example.com',
    });
  });
  afterAll(async () => {
    await service?.close();
    await smtp?.close();
  });

  it('emails the operator the booking with the contact and the route to move it', async () => {
    const res = await payingFetch(newAccount(), 1000)(
      `${service.config.site_url}/api/public/x402/embodiment`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ contact: '+14155550123', agent_handle: 'mail-agent' }),
      },
    );
    expect(res.status).toBe(200);
    const booking = (await res.json()) as Json;
    await waitFor(() => smtp.mails.some((m) => m.raw.includes(booking.booking_id)));
    const mail = smtp.mails.find((m) => m.raw.includes(booking.booking_id));
    expect(mail?.to).toEqual(['bookings@operator-example.com']);
    const text = (mail?.raw ?? '').replace(/=\r?\n/g, ''); // quoted-printable soft line breaks
    expect(text).toContain('+14155550123');
    expect(text).toContain(`/embodiment/bookings/${booking.booking_id}/status`);
  });
});
