/**
 * Issue 28, class 1: placements on private addresses. With the scanner's and outbound calls'
 * private-network settings off, a paid featured bid, boost or spotlight for a loopback host answered
 * 200: every page's header then linked to it, and `GET /r/<id>` redirected to it. Each attack below is
 * the request a hostile client sends, paying with the stock x402 client; every one must be refused
 * 400 naming the field before any payment is asked for. Placements bought while a deployment allowed
 * local names (self-hosting) are no longer published or followed once it does not.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, dialects, type TestDatabase } from '../helpers/databases.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { newAccount, payingFetch } from '../helpers/x402-payer.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are checked structurally
type Json = Record<string, any>;

const PORT = 31_337;

/** Settings off, as in production; payments on, with the embedded facilitator (no chain). */
const production = (payTo: string) => ({
  'payments.pay_to': payTo,
  'scanner.allow_private_networks': false,
  // Development mode allows local names by default (`auto`); production mode does not.
  'scanner.allow_local_sites': false,
  'outbound.allow_private_networks': false,
});

describe.each(dialects)('placements on private addresses, attacked (%s)', (dialect) => {
  let database: TestDatabase;
  let service: TestService;
  const payTo = newAccount().address;
  const attacker = newAccount();

  beforeAll(async () => {
    database = await createTestDatabase(dialect);
    service = await startTestService(dialect, production(payTo), { database });
  });
  afterAll(async () => {
    await service?.close();
    await database?.drop();
  });

  const buy = async (sku: string, body: Json): Promise<{ status: number; body: Json }> => {
    const res = await payingFetch(attacker, 100)(`${service.config.site_url}/api/public/x402/${sku}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Json };
  };
  const fieldsOf = (body: Json) => (body.errors as { field: string; message: string }[]).map((e) => e.field);

  const hosts = [`127.0.0.1:${PORT}`, `[::1]:${PORT}`, 'localhost', `localhost:${PORT}`, '10.0.0.8'];

  it('refuses a featured bid for a loopback or private host, and its URL, before any 402', async () => {
    for (const host of hosts) {
      const answer = await buy('featured-bid', {
        domain: host,
        url: `http://${host}/admin`,
        bid_usdc: 1,
        days: 1,
      });
      expect(answer.status, host).toBe(400);
      expect(answer.body.code).toBe('validation_failed');
      expect(fieldsOf(answer.body), host).toEqual(expect.arrayContaining(['domain', 'url']));
    }
  });

  it('refuses a boost whose URL would be the target of GET /r/<id>', async () => {
    for (const host of hosts) {
      const answer = await buy('boost', { domain: host, url: `http://${host}/admin`, amount_usdc: 5 });
      expect(answer.status, host).toBe(400);
      expect(fieldsOf(answer.body), host).toContain('domain');
    }
    // A public domain does not carry a private URL in: through credentials, or a numeric host.
    for (const url of [
      'https://boost-shop.com@127.0.0.1/admin',
      'https://user:secret@boost-shop.com/',
      'http://2130706433/admin',
    ]) {
      const answer = await buy('boost', { domain: 'boost-shop.com', url, amount_usdc: 5 });
      expect(answer.status, url).toBe(400);
      expect(fieldsOf(answer.body), url).toContain('url');
    }
  });

  it('refuses a spotlight for a loopback host', async () => {
    const answer = await buy('spotlight', { domain: `[::1]:${PORT}`, url: `http://[::1]:${PORT}/` });
    expect(answer.status).toBe(400);
    expect(fieldsOf(answer.body)).toEqual(expect.arrayContaining(['domain', 'url']));
  });

  it('refuses a return request to a loopback brand, which development mode takes', async () => {
    for (const host of [`localhost:${PORT}`, `127.0.0.1:${PORT}`]) {
      const res = await fetch(`${service.config.base_url}/return`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ brand_domain: host, name: 'Jane Doe', contact: 'jane@example.com' }),
      });
      expect(res.status).toBe(400);
      expect(fieldsOf((await res.json()) as Json)).toEqual(['brand_domain']);
    }
  });

  it('took no payment for any of them', async () => {
    const count = await service.services.db
      .selectFrom('payments')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(0);
  });
});

describe.each(dialects)('placements bought while local names were allowed (%s)', (dialect) => {
  let database: TestDatabase;
  const payTo = newAccount().address;
  const buyer = newAccount();
  let campaign: Json;

  beforeAll(async () => {
    database = await createTestDatabase(dialect);
    // A self-hosted deployment that allowed local names sold a boost and a featured slot for one.
    const selfHosted = await startTestService(
      dialect,
      { ...production(payTo), 'scanner.allow_private_networks': true },
      { database },
    );
    const pay = payingFetch(buyer, 100);
    const post = (sku: string, body: Json) =>
      pay(`${selfHosted.config.site_url}/api/public/x402/${sku}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const boost = await post('boost', {
      domain: `[::1]:${PORT}`,
      url: `http://[::1]:${PORT}/admin`,
      amount_usdc: 5,
    });
    expect(boost.status).toBe(200);
    campaign = (await boost.json()) as Json;
    const bid = await post('featured-bid', {
      domain: `127.0.0.1:${PORT}`,
      url: `http://127.0.0.1:${PORT}/admin`,
      bid_usdc: 1,
      days: 1,
    });
    expect(bid.status).toBe(200);
    await selfHosted.close();
  });
  afterAll(async () => {
    await database?.drop();
  });

  it('neither redirects to them nor links them from any page once local names are off', async () => {
    const service = await startTestService(dialect, production(payTo), { database });
    try {
      const click = await fetch(`${service.config.site_url}/r/${campaign.campaign_id}`, {
        redirect: 'manual',
      });
      expect(click.status).toBe(404);
      expect(click.headers.get('location')).toBeNull();
      const home = await (await fetch(`${service.config.site_url}/`)).text();
      expect(home).not.toContain(`127.0.0.1:${PORT}`);
      expect(home).not.toContain('Featured Brand:');
    } finally {
      await service.close();
    }
  });
});
