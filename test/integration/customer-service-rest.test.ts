/**
 * Surface A over REST against the real service and database, once per dialect.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/databases.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

const validRequest = {
  brand_domain: 'netflix.com',
  name: 'Jane Doe',
  contact: 'jane@example.com',
  order_number: 'NF-2026-1',
  card_last4: '4242',
  date: '2026-11-02',
  amount: 15.49,
  currency: 'USD',
  message: 'Charged twice this month, please refund one.',
  protocol: 'email',
};

describe.each(dialects)('customer service agent over REST (%s)', (dialect) => {
  let service: TestService;
  let base: string;

  beforeAll(async () => {
    service = await startTestService(dialect, { 'rate_limits.unauthenticated_writes.points': 1000 });
    base = service.config.base_url;
  });
  afterAll(() => service?.close());

  const post = (body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${base}/return`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });

  describe('GET /agent', () => {
    it('finds the brand behind a messy statement line', async () => {
      const res = await fetch(
        `${base}/agent?charge=${encodeURIComponent('CHECKCARD 0312 NETFLIX.COM 866-579-7172 CA')}`,
      );
      expect(res.status).toBe(200);
      const body = await res.json();
      expect(body.normalized).toBe('NETFLIX');
      expect(body.matches[0]).toMatchObject({ domain: 'netflix.com', level: 'very_high' });
      expect(body.matches[0].confidence).toBeGreaterThanOrEqual(0.95);
    });

    it('reports the processor separately from the merchant', async () => {
      const res = await fetch(
        `${base}/agent?charge=${encodeURIComponent('PAYPAL *NETFLIX 402-935-7733 CA')}`,
      );
      const body = await res.json();
      expect(body.processor).toEqual({
        name: 'PayPal',
        domain: 'paypal.com',
        kind: 'facilitator',
        merchant_of_record: false,
      });
      expect(body.matches[0]).toMatchObject({ domain: 'netflix.com', processor: { name: 'PayPal' } });
    });

    it('answers an unknown charge with no matches, not an error', async () => {
      const res = await fetch(`${base}/agent?charge=${encodeURIComponent('XQZW VRPLK 0042')}`);
      expect(res.status).toBe(200);
      expect((await res.json()).matches).toEqual([]);
    });

    it('names the merchant as read from the line even when no brand matches', async () => {
      const line =
        'SQ *STARRY NIGHT ESPRESSO Fort Collins CO Date 10/22/22 24692162295100625169423 5814 %% Card 10 #5780';
      const res = await fetch(`${base}/agent?charge=${encodeURIComponent(line)}`);
      const body = await res.json();
      expect(body.matches).toEqual([]);
      expect(body.processor).toMatchObject({ name: 'Square', kind: 'facilitator' });
      expect(body.merchant).toEqual({
        name: 'STARRY NIGHT ESPRESSO',
        city: 'FORT COLLINS',
        region: 'CO',
        country: 'US',
        phone: null,
        website_hint: null,
      });
      const card = await (
        await fetch(
          `${base}/agent?charge=${encodeURIComponent('#229120000008 MANYPETS INC MANYPETS.COM DE')}`,
        )
      ).json();
      expect(card.merchant).toMatchObject({ name: 'MANYPETS INC', website_hint: 'manypets.com' });
    });

    it.each([
      ['', 'is required'],
      ['?charge=', 'must not be empty'],
      ['?charge=%20%20', 'must not be empty'],
      [`?charge=${'A'.repeat(201)}`, 'at most 200'],
      ['?charge=a&charge=b', 'expected string'],
      ['?charge=NETFLIX&extra=1', 'not a known field'],
    ])('rejects %s with a 400 naming the field', async (query, message) => {
      const res = await fetch(`${base}/agent${query}`);
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      const problem = await res.json();
      expect(problem.code).toBe('validation_failed');
      expect(problem.errors.map((e: { message: string }) => e.message).join(' ')).toContain(message);
      expect(problem.errors[0].field).toMatch(/charge|extra/);
    });
  });

  describe('POST /return and GET /status', () => {
    it('stores the request before replying and reports its status without personal data', async () => {
      const res = await post(validRequest);
      expect(res.status).toBe(200);
      const started = await res.json();
      // UUIDv7 (db/ids.ts): its first 48 bits are the millisecond it was made.
      expect(started.request_id).toMatch(
        /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
      );
      const madeAt = Number.parseInt(started.request_id.replaceAll('-', '').slice(0, 12), 16);
      expect(Math.abs(madeAt - Date.parse(started.created_at))).toBeLessThan(1000);
      expect(started.status_url).toBe(`${base}/status?request_id=${started.request_id}`);
      expect(started.brand).toMatchObject({ domain: 'netflix.com', name: 'Netflix', known: true });
      expect(started.status).toBe('awaiting_channel');
      expect(started.delivery.channel).toBeNull();

      const row = await service.database.db
        .selectFrom('return_requests')
        .selectAll()
        .where('id', '=', started.request_id)
        .executeTakeFirstOrThrow();
      expect(row).toMatchObject({
        contact: 'jane@example.com',
        amount_cents: 1549,
        purchase_date: '2026-11-02',
      });

      const status = await fetch(started.status_url);
      expect(status.status).toBe(200);
      const body = await status.json();
      expect(body).toMatchObject({
        request_id: started.request_id,
        status: 'awaiting_channel',
        brand_domain: 'netflix.com',
        final: false,
        next_step: { by: 'brand' },
      });
      expect(body.history.map((h: { status: string }) => h.status)).toEqual(['received', 'awaiting_channel']);
      const text = JSON.stringify(body);
      expect(text).not.toContain('jane@example.com');
      expect(text).not.toContain('Jane Doe');
      expect(text).not.toContain('4242');
    });

    it('accepts an unknown brand domain and an E.164 phone contact', async () => {
      const res = await post({ brand_domain: 'tiny-shop.co.uk', name: 'Ann', contact: '+447911123456' });
      expect(res.status).toBe(200);
      const body = await res.json();
      expect(body.brand).toMatchObject({ domain: 'tiny-shop.co.uk', name: null, known: false });
    });

    it.each([
      [{ ...validRequest, brand_domain: 'Netflix' }, 'brand_domain'],
      [{ ...validRequest, brand_domain: 'co.uk' }, 'brand_domain'],
      [{ ...validRequest, brand_domain: 'help.netflix.com' }, 'brand_domain'],
      [{ ...validRequest, brand_domain: '192.168.0.1' }, 'brand_domain'],
      [{ ...validRequest, contact: 'jane@' }, 'contact'],
      [{ ...validRequest, contact: '+1 555 0100' }, 'contact'],
      [{ ...validRequest, contact: '+10000000000' }, 'contact'],
      [{ ...validRequest, date: '2026-02-30' }, 'date'],
      [{ ...validRequest, date: '02/11/2026' }, 'date'],
      [{ ...validRequest, date: '2999-01-01' }, 'date'],
      [{ ...validRequest, amount: 0 }, 'amount'],
      [{ ...validRequest, amount: -5 }, 'amount'],
      [{ ...validRequest, amount: 10.001 }, 'amount'],
      [{ ...validRequest, amount: '10.00' }, 'amount'],
      [{ ...validRequest, card_last4: '123' }, 'card_last4'],
      [{ ...validRequest, card_last4: '12a4' }, 'card_last4'],
      [{ ...validRequest, protocol: 'carrier-pigeon' }, 'protocol'],
      [{ ...validRequest, protocol: 'phone' }, 'protocol'],
      [{ ...validRequest, protocol: 'webhook' }, 'callback_url'],
      [{ ...validRequest, callback_url: 'https://agent.example/cb' }, 'callback_url'],
      [{ ...validRequest, currency: 'XYZ' }, 'currency'],
      [{ ...validRequest, approval_proof: { format: 'jws', jws: 'not-a-jws' } }, 'approval_proof.jws'],
      [{ ...validRequest, approval_proof: { format: 'magic' } }, 'approval_proof.format'],
      [{ ...validRequest, name: '   ' }, 'name'],
      [{ ...validRequest, brand: 'netflix.com' }, 'brand'],
      [{ name: 'x' }, 'brand_domain'],
    ])('rejects bad field %#: 400 naming %s', async (body, field) => {
      const res = await post(body);
      expect(res.status).toBe(400);
      const problem = await res.json();
      expect(problem.code).toBe('validation_failed');
      expect(problem.errors.map((e: { field: string }) => e.field)).toContain(field);
    });

    it('rejects a body that is not a JSON object', async () => {
      for (const body of ['[]', '"text"', 'null']) {
        const res = await post(body);
        expect(res.status).toBe(400);
      }
    });

    it('answers 400 for a status query that is not a UUID, 404 for an unknown one', async () => {
      const bad = await fetch(`${base}/status?request_id=42`);
      expect(bad.status).toBe(400);
      expect((await bad.json()).errors[0].field).toBe('request_id');
      const missing = await fetch(`${base}/status`);
      expect(missing.status).toBe(400);
      const unknown = await fetch(`${base}/status?request_id=${crypto.randomUUID()}`);
      expect(unknown.status).toBe(404);
      expect((await unknown.json()).code).toBe('not_found');
    });
  });

  describe('Idempotency-Key', () => {
    it('returns the same request for the same key and body, 409 for another body', async () => {
      const key = crypto.randomUUID();
      const first = await (await post(validRequest, { 'Idempotency-Key': key })).json();
      const again = await post(validRequest, { 'Idempotency-Key': key });
      expect(again.status).toBe(200);
      expect((await again.json()).request_id).toBe(first.request_id);
      const other = await post({ ...validRequest, amount: 99 }, { 'Idempotency-Key': key });
      expect(other.status).toBe(409);
      expect((await other.json()).code).toBe('idempotency_key_reused');
      const count = await service.database.db
        .selectFrom('return_requests')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('order_number', '=', validRequest.order_number)
        .where('id', '=', first.request_id)
        .executeTakeFirstOrThrow();
      expect(Number(count.n)).toBe(1);
    });

    it('creates one request when the same key arrives concurrently', async () => {
      const key = crypto.randomUUID();
      const body = { ...validRequest, order_number: `concurrent-${key}` };
      const responses = await Promise.all(
        Array.from({ length: 8 }, () => post(body, { 'Idempotency-Key': key })),
      );
      const ids = new Set<string>();
      for (const res of responses) {
        expect(res.status).toBe(200);
        ids.add((await res.json()).request_id);
      }
      expect(ids.size).toBe(1);
      const rows = await service.database.db
        .selectFrom('return_requests')
        .select('id')
        .where('order_number', '=', body.order_number)
        .execute();
      expect(rows).toHaveLength(1);
    });

    it('rejects a malformed key', async () => {
      const res = await post(validRequest, { 'Idempotency-Key': 'x'.repeat(300) });
      expect(res.status).toBe(400);
      expect((await res.json()).errors[0].field).toBe('Idempotency-Key');
    });
  });

  describe('HTTP errors', () => {
    it('405 with Allow for a wrong method', async () => {
      const res = await fetch(`${base}/agent`, { method: 'DELETE' });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('GET, HEAD');
      const post405 = await fetch(`${base}/status`, { method: 'POST' });
      expect(post405.status).toBe(405);
      const get405 = await fetch(`${base}/return`);
      expect(get405.headers.get('allow')).toBe('POST');
      expect((await get405.json()).code).toBe('method_not_allowed');
    });

    it('415 for a body that is not JSON, 400 for malformed JSON, 413 over the limit', async () => {
      const form = await fetch(`${base}/return`, {
        method: 'POST',
        headers: { 'content-type': 'text/plain' },
        body: 'hi',
      });
      expect(form.status).toBe(415);
      expect((await form.json()).code).toBe('unsupported_media_type');
      const malformed = await post('{"brand_domain": ');
      expect(malformed.status).toBe(400);
      expect((await malformed.json()).code).toBe('malformed_json');
      const huge = await post({ ...validRequest, message: 'x'.repeat(70_000) });
      expect(huge.status).toBe(413);
      expect((await huge.json()).code).toBe('payload_too_large');
    });

    it('404 problem for an unknown route, with a request id', async () => {
      const res = await fetch(`${base}/nope`);
      expect(res.status).toBe(404);
      const problem = await res.json();
      expect(problem).toMatchObject({ code: 'route_not_found', status: 404, instance: '/cs/nope' });
      expect(problem.request_id).toBe(res.headers.get('x-request-id'));
      const doc = await fetch(problem.type);
      expect((await doc.json()).code).toBe('route_not_found');
    });

    it('reports health with version and database reachability', async () => {
      const res = await fetch(`${service.url}/api/public/health`);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ status: 'ok', database: { dialect, reachable: true } });
    });
  });
});

describe.each(dialects)('rate limit on unauthenticated writes (%s)', (dialect) => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService(dialect, { 'rate_limits.unauthenticated_writes.points': 3 });
  });
  afterAll(() => service?.close());

  it('answers 429 with Retry-After once the address used its budget; reads stay open', async () => {
    const statuses: number[] = [];
    let last: Response = await fetch(`${service.url}/cs/agent?charge=warmup`);
    for (let i = 0; i < 5; i++) {
      last = await fetch(`${service.url}/cs/return`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ...validRequest, order_number: `rl-${i}` }),
      });
      statuses.push(last.status);
    }
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
    const wait = Number(last.headers.get('retry-after'));
    expect(wait).toBeGreaterThan(0);
    expect(await last.json()).toMatchObject({ code: 'rate_limited', retry_after_s: wait });
    const read = await fetch(`${service.url}/cs/agent?charge=NETFLIX`);
    expect(read.status).toBe(200);

    // The same budget over MCP: the tool failure carries the wait, since an MCP client sees no headers.
    const client = new Client({ name: 'rate-limit-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(service.config.mcp_url)));
    try {
      const refused = await client.callTool({
        name: 'start_return_request',
        arguments: { ...validRequest, order_number: 'rl-mcp' },
      });
      expect(refused.isError).toBe(true);
      const [content] = refused.content as [{ type: string; text: string }];
      const body = JSON.parse(content.text);
      expect(body).toMatchObject({ code: 'rate_limited' });
      expect(body.retry_after_s).toBeGreaterThan(0);
      expect(body.retry_after_s).toBeLessThanOrEqual(wait);
    } finally {
      await client.close();
    }
  });
});
