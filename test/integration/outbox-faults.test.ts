import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/databases.ts';
import { freePort } from '../helpers/ports.ts';
import {
  type ReceivedMail,
  startSmtpServer,
  startWebhookReceiver,
  type WebhookReceiver,
  waitFor,
} from '../helpers/receivers.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { type LocalSetReceiver, startSetReceiver } from '../helpers/ssf.ts';
import { newAccount, payingFetch } from '../helpers/x402-payer.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are checked structurally
type Json = Record<string, any>;

const OPERATOR = 'robots@outbox-operator.example';

/** A port nobody listens on now (the SMTP server is down), to start the server on later. */
const closedPort = freePort;

describe.each(dialects)('outboxes against failing peers (%s)', (dialect) => {
  let service: TestService;
  let smtpPort: number;
  let smtp: Awaited<ReturnType<typeof startSmtpServer>> | undefined;
  const mails: ReceivedMail[] = [];
  const receivers: { close(): Promise<void> }[] = [];
  /** Answers the embodiment webhook: hangs twice, then 200 (switched on by the test that needs it). */
  let operator: WebhookReceiver;
  let serviceKey: string;

  beforeAll(async () => {
    smtpPort = await closedPort();
    operator = await startWebhookReceiver(() => 200);
    receivers.push(operator);
    service = await startTestService(dialect, {
      'smtp.url': `smtp://127.0.0.1:${smtpPort}`,
      'payments.pay_to': newAccount().address,
      'marketplace.embodiment.operator_account_email': OPERATOR,
      'marketplace.embodiment.webhook_url': operator.url,
      'marketplace.embodiment.webhook_secret': operator.secret,
      'marketplace.embodiment.email': 'bookings@outbox-operator.example',
      'rate_limits.unauthenticated_writes.points': 1000,
      // A receiver that has not answered in 400 ms is slow: the attempt fails and is retried.
      'outbound.timeout_ms': 400,
      'returns.delivery.max_attempts': 50,
      'returns.delivery.max_delay_ms': 400,
      'marketplace.delivery.max_attempts': 50,
      'marketplace.delivery.max_delay_ms': 400,
      'auth.security_events.delivery.poll_interval_ms': 50,
      'auth.security_events.delivery.base_delay_ms': 50,
      'auth.security_events.delivery.max_delay_ms': 400,
      'auth.security_events.delivery.max_attempts': 50,
    });
    await service.services.accounts.create({ email: OPERATOR });
    serviceKey = (await service.services.accounts.create({ email: `ssf-${dialect}@outbox.example` })).key
      .service_key;
  });
  afterAll(async () => {
    await service?.close();
    await smtp?.close();
    await Promise.all(receivers.map((r) => r.close()));
  });

  const startReturn = async (brand_domain: string) => {
    const res = await fetch(`${service.url}/cs/return`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        brand_domain,
        name: 'Jane Doe',
        contact: 'jane@example.com',
        order_number: 'F-1',
      }),
    });
    expect(res.status).toBe(200);
    return (await res.json()) as Json;
  };
  const statusOf = async (url: string) => (await (await fetch(url)).json()) as Json;
  const returnDelivery = (requestId: string) =>
    service.database.db
      .selectFrom('deliveries')
      .selectAll()
      .where('request_id', '=', requestId)
      .executeTakeFirstOrThrow();
  const book = async (agent_handle: string) => {
    const res = await payingFetch(newAccount(), 1000)(
      `${service.config.site_url}/api/public/x402/embodiment`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ contact: 'owner@requester.example', agent_handle }),
      },
    );
    expect(res.status).toBe(200);
    return (await res.json()) as Json;
  };
  const bookingDeliveries = (bookingId: string) =>
    service.database.db
      .selectFrom('marketplace_deliveries')
      .selectAll()
      .where('subject_id', '=', bookingId)
      .execute();

  it('keeps email deliveries of both outboxes pending while SMTP is down, retrying, and sends each once it is back', async () => {
    const brand = `mail-down-${dialect}.example`;
    await service.services.returns.connectBrandChannel({
      brand_domain: brand,
      webhook_url: null,
      webhook_secret: null,
      email: `returns@${brand}`,
    });
    const started = await startReturn(brand);
    const booking = await book('mail-down-agent');

    // SMTP refuses connections: both deliveries stay pending, retried with backoff.
    await waitFor(async () => (await returnDelivery(started.request_id)).attempts >= 3, 30_000);
    expect(await returnDelivery(started.request_id)).toMatchObject({
      state: 'pending',
      last_error: expect.stringMatching(/ESOCKET|ECONNECTION|ECONNREFUSED/),
    });
    expect((await statusOf(started.status_url)).status).toBe('received');
    await waitFor(
      async () =>
        (await bookingDeliveries(booking.booking_id)).some((d) => d.channel === 'email' && d.attempts >= 3),
      30_000,
    );
    const mailDelivery = (await bookingDeliveries(booking.booking_id)).find((d) => d.channel === 'email');
    expect(mailDelivery).toMatchObject({ state: 'pending', last_error: expect.any(String) });

    // SMTP comes back where it was: each is sent, once.
    smtp = await startSmtpServer({ port: smtpPort, mails });
    await waitFor(async () => (await statusOf(started.status_url)).status === 'delivered', 30_000);
    await waitFor(
      async () => (await bookingDeliveries(booking.booking_id)).every((d) => d.state === 'delivered'),
      30_000,
    );
    const delivery = await returnDelivery(started.request_id);
    const toBrand = mails.filter((m) => m.to.includes(`returns@${brand}`));
    expect(toBrand).toHaveLength(1);
    expect(toBrand[0]?.raw).toMatch(new RegExp(`^Message-ID: <${delivery.id}@`, 'm'));
    expect(mails.filter((m) => m.raw.includes(booking.booking_id))).toHaveLength(1);
  });

  it('retries a return request at a webhook receiver too slow to answer, and delivers it once when it answers', async () => {
    const receiver = await startWebhookReceiver((attempt) => (attempt <= 2 ? 'hang' : 200));
    receivers.push(receiver);
    const brand = `slow-hook-${dialect}.example`;
    await service.services.returns.connectBrandChannel({
      brand_domain: brand,
      webhook_url: receiver.url,
      webhook_secret: receiver.secret,
      email: null,
    });
    const started = await startReturn(brand);
    await waitFor(async () => (await statusOf(started.status_url)).status === 'delivered', 30_000);
    expect(receiver.requests).toHaveLength(3);
    expect(new Set(receiver.requests.map((r) => r.id)).size).toBe(1);
    expect(receiver.processed.size).toBe(1);
    expect(await returnDelivery(started.request_id)).toMatchObject({ state: 'delivered', attempts: 3 });
  });

  it('retries an embodiment booking at a slow operator webhook, and delivers it once when it answers', async () => {
    const seen = operator.requests.length;
    operator.respond = (attempt) => (attempt - seen <= 2 ? 'hang' : 200);
    const booking = await book('slow-hook-agent');
    const ofBooking = () =>
      operator.requests.filter((r) => (r.payload as Json | null)?.data?.booking_id === booking.booking_id);
    await waitFor(
      async () =>
        (await bookingDeliveries(booking.booking_id)).find((d) => d.channel === 'webhook')?.state ===
        'delivered',
      30_000,
    );
    expect(ofBooking()).toHaveLength(3);
    expect(new Set(ofBooking().map((r) => r.id)).size).toBe(1);
    expect([...operator.processed.values()].filter((r) => ofBooking().includes(r))).toHaveLength(1);
  });

  it('retries a security event at a slow SSF receiver with the same SET, and delivers it when it answers', async () => {
    const receiver: LocalSetReceiver = await startSetReceiver(
      () => ({
        issuer: service.config.auth_url,
        jwksUri: `${service.config.auth_url}/oauth/jwks`,
        audience: receiver.url,
      }),
      (attempt) => (attempt <= 2 ? 'hang' : 202),
    );
    receivers.push(receiver);
    const api = (path: string, body: unknown) =>
      fetch(`${service.config.auth_url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-service-key': serviceKey },
        body: JSON.stringify(body),
      });
    const created = await api('/ssf/streams', {
      delivery: { method: 'urn:ietf:rfc:8935', endpoint_url: receiver.url },
      events_requested: ['https://schemas.openid.net/secevent/caep/event-type/session-revoked'],
    });
    expect(created.status).toBe(201);
    const { stream_id } = (await created.json()) as Json;
    expect((await api('/ssf/verify', { stream_id })).status).toBe(204);
    const row = () =>
      service.database.db
        .selectFrom('ssf_deliveries')
        .selectAll()
        .where('stream_id', '=', stream_id)
        .executeTakeFirst();
    await waitFor(async () => (await row())?.state === 'delivered', 30_000);
    expect(receiver.received).toHaveLength(3);
    expect(new Set(receiver.received.map((s) => s.token)).size).toBe(1);
    expect(receiver.received.every((s) => s.payload !== undefined)).toBe(true);
    expect(await row()).toMatchObject({ attempts: 3 });
  });
});
