/**
 * Delivery of return requests to brands through the outbox, against real local peers: a webhook
 * endpoint verifying Standard Webhooks signatures, and an SMTP server. Once per dialect.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/databases.ts';
import {
  startSmtpServer,
  startWebhookReceiver,
  type WebhookReceiver,
  waitFor,
} from '../helpers/receivers.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

const request = (brand_domain: string, extra: Record<string, unknown> = {}) => ({
  brand_domain,
  name: 'Jane Doe',
  contact: 'jane@example.com',
  order_number: 'A-1001',
  amount: 42.5,
  currency: 'EUR',
  ...extra,
});

async function start(
  service: TestService,
  body: unknown,
): Promise<{ request_id: string; status_url: string; status: string; delivery: { channel: string | null } }> {
  const res = await fetch(`${service.url}/cs/return`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
  return res.json();
}

async function statusOf(url: string) {
  return (await fetch(url)).json();
}

describe.each(dialects)('return request delivery (%s)', (dialect) => {
  let service: TestService;
  let receiver: WebhookReceiver | undefined;
  let brandSeq = 0;
  const brandDomain = () => `brand-${dialect}-${++brandSeq}.example`;

  beforeAll(async () => {
    service = await startTestService(dialect, {
      'returns.delivery.max_attempts': 3,
      'rate_limits.unauthenticated_writes.points': 1000,
    });
  });
  afterEach(async () => {
    await receiver?.close();
    receiver = undefined;
  });
  afterAll(() => service?.close());

  const connect = (domain: string, r: WebhookReceiver) =>
    service.services.returns.connectBrandChannel({
      brand_domain: domain,
      webhook_url: r.url,
      webhook_secret: r.secret,
      email: null,
    });

  it('delivers a signed webhook once and marks the request delivered', async () => {
    receiver = await startWebhookReceiver();
    const domain = brandDomain();
    await connect(domain, receiver);
    const started = await start(service, request(domain, { message: 'Wrong size', protocol: 'email' }));
    expect(started.status).toBe('received');
    expect(started.delivery.channel).toBe('webhook');

    const r = receiver;
    await waitFor(() => r.processed.size === 1);
    const [delivered] = [...r.processed.values()];
    expect(delivered?.verified).toBe(true);
    expect(delivered?.headers['content-type']).toBe('application/json');
    expect(delivered?.payload).toMatchObject({
      type: 'return_request.created',
      data: {
        request_id: started.request_id,
        brand_domain: domain,
        status_url: started.status_url,
        customer: { name: 'Jane Doe', contact: 'jane@example.com', contact_kind: 'email' },
        order: { number: 'A-1001', amount: 42.5, currency: 'EUR' },
        message: 'Wrong size',
        reply: { protocol: 'email' },
      },
    });
    await waitFor(async () => (await statusOf(started.status_url)).status === 'delivered');
    const status = await statusOf(started.status_url);
    expect(status.history.map((h: { status: string }) => h.status)).toEqual(['received', 'delivered']);
    expect(status.delivery).toMatchObject({ channel: 'webhook', state: 'delivered', attempts: 1 });
    expect(status.next_step).toMatchObject({
      by: 'brand',
      expected: ['acknowledged', 'approved', 'denied', 'cancelled', 'undeliverable'],
    });
    expect(r.requests).toHaveLength(1);
  });

  it('retries failures with backoff under the same delivery id, then delivers', async () => {
    receiver = await startWebhookReceiver((attempt) => (attempt < 3 ? 503 : 200));
    const domain = brandDomain();
    await connect(domain, receiver);
    const started = await start(service, request(domain));
    const r = receiver;
    await waitFor(() => r.processed.size === 1);
    expect(r.requests).toHaveLength(3);
    expect(new Set(r.requests.map((x) => x.id)).size).toBe(1);
    await waitFor(async () => (await statusOf(started.status_url)).status === 'delivered');
    expect((await statusOf(started.status_url)).delivery.attempts).toBe(3);
  });

  it('gives up after max_attempts and marks the request undeliverable', async () => {
    receiver = await startWebhookReceiver(() => 500);
    const domain = brandDomain();
    await connect(domain, receiver);
    const started = await start(service, request(domain));
    await waitFor(async () => (await statusOf(started.status_url)).status === 'undeliverable');
    const status = await statusOf(started.status_url);
    expect(receiver.requests).toHaveLength(3);
    expect(status.delivery).toMatchObject({ state: 'failed', attempts: 3 });
    expect(status.next_step.by).toBe('requester');
    expect(status.history.at(-1).note).toMatch(/failed after 3 attempt\(s\): HTTP 500/);
  });

  it('does not retry a permanent rejection', async () => {
    receiver = await startWebhookReceiver(() => 410);
    const domain = brandDomain();
    await connect(domain, receiver);
    const started = await start(service, request(domain));
    await waitFor(async () => (await statusOf(started.status_url)).status === 'undeliverable');
    expect(receiver.requests).toHaveLength(1);
  });

  it('keeps requests for a brand without a channel waiting, and delivers them once it connects', async () => {
    const domain = brandDomain();
    const started = await start(service, request(domain));
    expect(started.status).toBe('awaiting_channel');
    receiver = await startWebhookReceiver();
    expect(await connect(domain, receiver)).toEqual({ channel: 'webhook', queued: 1 });
    const r = receiver;
    await waitFor(() => r.processed.size === 1);
    await waitFor(async () => (await statusOf(started.status_url)).status === 'delivered');
    const history = (await statusOf(started.status_url)).history.map((h: { status: string }) => h.status);
    expect(history).toEqual(['received', 'awaiting_channel', 'received', 'delivered']);
  });
});

describe.each(dialects)('return request delivery by email and outbound safety (%s)', (dialect) => {
  let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
  let service: TestService;

  beforeAll(async () => {
    smtp = await startSmtpServer({
      reject: (mail) => (mail.to.includes('gone@brand.example') ? 550 : undefined),
    });
    service = await startTestService(dialect, {
      'smtp.url': smtp.url,
      'smtp.from': 'Returns desk <returns@agents.example>',
      'outbound.allow_private_networks': false,
      'scanner.allow_local_sites': false,
      'returns.delivery.max_attempts': 2,
    });
  });
  afterAll(async () => {
    await service?.close();
    await smtp?.close();
  });

  it('emails the brand over SMTP with the delivery id as Message-ID and the person as Reply-To', async () => {
    await service.services.returns.connectBrandChannel({
      brand_domain: 'mail-brand.example',
      webhook_url: null,
      webhook_secret: null,
      email: 'returns@mail-brand.example',
    });
    const started = await start(service, request('mail-brand.example'));
    expect(started.delivery.channel).toBe('email');
    await waitFor(() => smtp.mails.length === 1);
    const mail = smtp.mails[0];
    expect(mail?.to).toEqual(['returns@mail-brand.example']);
    expect(mail?.raw).toMatch(/^Reply-To: jane@example\.com/m);
    expect(mail?.raw).toMatch(new RegExp(`^X-Return-Request-Id: ${started.request_id}$`, 'im'));
    expect(mail?.raw).toContain('Order number: A-1001');
    const delivery = await service.database.db
      .selectFrom('deliveries')
      .select('id')
      .where('request_id', '=', started.request_id)
      .executeTakeFirstOrThrow();
    expect(mail?.raw).toMatch(new RegExp(`^Message-ID: <${delivery.id}@`, 'm'));
    await waitFor(async () => (await statusOf(started.status_url)).status === 'delivered');
  });

  it('treats a permanent SMTP rejection as undeliverable', async () => {
    await service.services.returns.connectBrandChannel({
      brand_domain: 'gone-brand.example',
      webhook_url: null,
      webhook_secret: null,
      email: 'gone@brand.example',
    });
    const started = await start(service, request('gone-brand.example'));
    await waitFor(async () => (await statusOf(started.status_url)).status === 'undeliverable');
    expect((await statusOf(started.status_url)).history.at(-1).note).toMatch(/SMTP 550/);
  });

  it('never posts a webhook to a private address when private networks are not allowed', async () => {
    const receiver = await startWebhookReceiver();
    try {
      await service.services.returns.connectBrandChannel({
        brand_domain: 'ssrf-brand.example',
        webhook_url: receiver.url,
        webhook_secret: receiver.secret,
        email: null,
      });
      const started = await start(service, request('ssrf-brand.example'));
      await waitFor(async () => (await statusOf(started.status_url)).status === 'undeliverable');
      expect(receiver.requests).toHaveLength(0);
      expect((await statusOf(started.status_url)).history.at(-1).note).toMatch(/destination not allowed/);
    } finally {
      await receiver.close();
    }
  });
});
