/**
 * The Featured Brand auction (issue 12), bought as a customer buys it: the stock `@x402/fetch`
 * client on the local chain of test/helpers/chain.ts, the embedded facilitator settling with the
 * settler key, and the settler paying credits back as USDC transfers. The services' clock is moved
 * (never slept) for the bid placed a day ago and for expiry.
 */
import type { LocalAccount } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalChain, startLocalChain, USDC } from '../helpers/chain.ts';
import { dialects } from '../helpers/databases.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { payingFetch } from '../helpers/x402-payer.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are checked structurally
type Json = Record<string, any>;

const DAY_MS = 86_400_000;

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe.each(dialects)('featured-bid auction on a local chain (%s)', (dialect) => {
  let chain: LocalChain;
  let service: TestService;
  let offsetMs = 0;

  beforeAll(async () => {
    chain = await startLocalChain({ payerUsdc: 0n });
    // Credits are transferred from the settler's address: it holds USDC for them.
    await chain.mint(chain.accounts.settler.address, 1_000n * USDC);
    service = await startTestService(
      dialect,
      {
        'payments.pay_to': chain.accounts.payTo.address,
        'payments.rpc_url': chain.rpcUrl,
        'payments.settler_private_key': chain.accounts.settler.privateKey,
        'payments.settler_poll_interval_ms': 100,
      },
      { now: () => new Date(Date.now() + offsetMs) },
    );
  });
  afterAll(async () => {
    await service?.close();
    await chain?.close();
  });

  const bidUrl = () => `${service.config.site_url}/api/public/x402/featured-bid`;
  const api = () => service.config.public_api_url;
  const getJson = async (url: string): Promise<Json> => (await (await fetch(url)).json()) as Json;
  const featured = () => getJson(`${api()}/featured`);
  const payer = async (usdc: bigint): Promise<LocalAccount> =>
    privateKeyToAccount((await chain.newAccount(usdc)).privateKey);
  const bid = (account: LocalAccount | null, body: Json) =>
    (account ? payingFetch(account, 100) : fetch)(bidUrl(), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  let first: LocalAccount;
  let firstBid: Json;

  it('opens at 1.00 USDC a day: the slot is free, then held by the first paid bid', async () => {
    expect(await featured()).toMatchObject({ holder: null, minimum_next_bid_usdc: 1, opening_bid_usdc: 1 });
    const low = await bid(null, { domain: 'alpha-shop.com', bid_usdc: 0.5 });
    expect(low.status).toBe(400);
    expect(((await low.json()) as Json).errors[0].field).toBe('bid_usdc');
    const unpaid = await bid(null, { domain: 'alpha-shop.com', bid_usdc: 2, days: 3 });
    expect(unpaid.status).toBe(402);
    // The 402 names the amount asked (2 USDC a day for 3 days), not the SKU's floor price.
    expect(((await unpaid.json()) as Json).detail).toMatch(/^featured-bid costs 6 USDC: /);

    // Placed a day ago (the clock moved back), for 3 days at 2.00 a day: 6.00 USDC.
    first = await payer(10n * USDC);
    offsetMs = -DAY_MS;
    let res: Response;
    try {
      res = await bid(first, {
        domain: 'alpha-shop.com',
        bid_usdc: 2,
        days: 3,
        url: 'https://www.alpha-shop.com/spring',
        blurb: 'Alpha, ready for agents',
      });
    } finally {
      offsetMs = 0;
    }
    expect(res.status, await res.clone().text()).toBe(200);
    firstBid = (await res.json()) as Json;
    expect(firstBid).toMatchObject({
      domain: 'alpha-shop.com',
      status: 'holding',
      bid_usdc: 2,
      days: 3,
      amount_usdc: 6,
      minimum_next_bid_usdc: 2.01,
      credited_usdc: 0,
    });
    expect(await chain.balanceOf(first.address)).toBe(4n * USDC);

    const slot = await featured();
    expect(slot.holder).toMatchObject({
      bid_id: firstBid.bid_id,
      domain: 'alpha-shop.com',
      url: 'https://www.alpha-shop.com/spring',
      blurb: 'Alpha, ready for agents',
      bid_usdc: 2,
      since: firstBid.holds_from,
      until: firstBid.holds_until,
    });
    expect(slot.minimum_next_bid_usdc).toBe(2.01);
    const hub = await getJson(`${api()}/agenthub`);
    expect(hub.featured).toEqual([
      {
        domain: 'alpha-shop.com',
        url: 'https://www.alpha-shop.com/spring',
        blurb: 'Alpha, ready for agents',
        ends_at: firstBid.holds_until,
      },
    ]);
    const live = await getJson(`${service.config.functions_url}/catalog`);
    const entry = live.skus.find((s: Json) => s.sku === 'featured-bid');
    expect(entry).toMatchObject({ available: true, current_minimum_usdc: 2.01 });
  });

  it('refuses a bid that cannot win with 409 and the price it would need, before any payment', async () => {
    const unpaid = await bid(null, { domain: 'beta-shop.com', bid_usdc: 2 });
    expect(unpaid.status).toBe(409);
    expect(unpaid.headers.get('payment-required')).toBeNull();
    expect(await unpaid.json()).toMatchObject({ code: 'bid_too_low', minimum_bid_usdc: 2.01 });

    const account = await payer(5n * USDC);
    const paid = await bid(account, { domain: 'beta-shop.com', bid_usdc: 2 });
    expect(paid.status).toBe(409);
    expect(await chain.balanceOf(account.address)).toBe(5n * USDC);
    const rows = await service.db.handle.db
      .selectFrom('payments')
      .select('id')
      .where('payer', '=', account.address.toLowerCase())
      .execute();
    expect(rows).toEqual([]);
  });

  it('outbids: the holder is credited the unused time pro rata by the second, paid back on chain', async () => {
    const second = await payer(10n * USDC);
    const res = await bid(second, { domain: 'beta-shop.com', bid_usdc: 2.5 });
    expect(res.status).toBe(200);
    const won = (await res.json()) as Json;
    expect(won).toMatchObject({ status: 'holding', amount_usdc: 2.5, minimum_next_bid_usdc: 2.51 });
    expect(await chain.balanceOf(second.address)).toBe(7_500_000n);

    const slot = await featured();
    expect(slot.holder.bid_id).toBe(won.bid_id);
    const outbid = slot.history.find((h: Json) => h.bid_id === firstBid.bid_id);
    expect(outbid.status).toBe('outbid');
    // credit = floor(amount x remaining whole seconds / (days x 86 400)), remaining from the outbid.
    const remaining = Math.floor((Date.parse(firstBid.holds_until) - Date.parse(outbid.until)) / 1000);
    expect(remaining).toBeGreaterThan(2 * 86_400 - 60);
    expect(remaining).toBeLessThanOrEqual(2 * 86_400);
    const expected = (6_000_000n * BigInt(remaining)) / (3n * 86_400n);
    expect(outbid.credited_usdc).toBe(Number(expected) / 1e6);

    const credits = await until(
      () => getJson(`${api()}/credits?payer=${first.address}`),
      (c) => c.credits[0]?.status === 'paid',
      'the credit to be paid',
    );
    expect(credits).toMatchObject({ payer: first.address.toLowerCase(), owed_usdc: 0 });
    expect(credits.credits).toEqual([
      expect.objectContaining({
        reason: 'featured_outbid',
        subject_id: firstBid.bid_id,
        amount_usdc: Number(expected) / 1e6,
        transaction_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      }),
    ]);
    expect(credits.paid_usdc).toBe(Number(expected) / 1e6);
    expect(await chain.balanceOf(first.address)).toBe(4n * USDC + expected);
  });

  it('serialises two winning bids paid at the same moment: one holds the slot, the other is credited or not charged', async () => {
    const c = await payer(10n * USDC);
    const d = await payer(10n * USDC);
    const [rc, rd] = await Promise.all([
      bid(c, { domain: 'gamma-shop.com', bid_usdc: 5 }),
      bid(d, { domain: 'delta-shop.com', bid_usdc: 6 }),
    ]);
    const statuses = [rc.status, rd.status];
    for (const s of statuses) expect([200, 409]).toContain(s);
    expect(statuses).toContain(200);
    const slot = await featured();
    const holding = await service.db.handle.db
      .selectFrom('featured_bids')
      .select(['domain'])
      .where('status', '=', 'holding')
      .where('domain', 'in', ['gamma-shop.com', 'delta-shop.com'])
      .execute();
    expect(holding).toHaveLength(1);
    expect(slot.holder.domain).toBe(holding[0]?.domain);
    // Whoever lost: refused before its money moved (409), or outbid and credited what it had left.
    for (const [account, res, domain, paid] of [
      [c, rc, 'gamma-shop.com', 5n * USDC],
      [d, rd, 'delta-shop.com', 6n * USDC],
    ] as const) {
      if (slot.holder.domain === domain) {
        expect(await chain.balanceOf(account.address)).toBe(10n * USDC - paid);
      } else if (res.status === 409) {
        expect(await chain.balanceOf(account.address)).toBe(10n * USDC);
      } else {
        const credits = await until(
          () => getJson(`${api()}/credits?payer=${account.address}`),
          (x) => x.credits[0]?.status === 'paid',
          'the loser to be credited',
        );
        const credited = BigInt(Math.round(credits.paid_usdc * 1e6));
        expect(credited).toBeGreaterThan(paid - (paid * 120n) / 86_400n);
        expect(await chain.balanceOf(account.address)).toBe(10n * USDC - paid + credited);
      }
    }
  });

  it('expires: past the paid days the slot is free again on every surface', async () => {
    const slot = await featured();
    offsetMs = Date.parse(slot.holder.until) - Date.now() + 1000;
    try {
      const later = await featured();
      expect(later).toMatchObject({ holder: null, minimum_next_bid_usdc: 1 });
      expect(later.history.find((h: Json) => h.bid_id === slot.holder.bid_id)?.status).toBe('expired');
      expect((await getJson(`${api()}/agenthub`)).featured).toEqual([]);
      const live = await getJson(`${service.config.functions_url}/catalog`);
      expect(live.skus.find((s: Json) => s.sku === 'featured-bid').current_minimum_usdc).toBe(1);
    } finally {
      offsetMs = 0;
    }
  });

  it('answers the credits of an address nobody credited, and refuses a malformed one', async () => {
    expect(await getJson(`${api()}/credits?payer=0x${'ab'.repeat(20)}`)).toEqual({
      payer: `0x${'ab'.repeat(20)}`,
      owed_usdc: 0,
      paid_usdc: 0,
      credits: [],
    });
    const bad = await fetch(`${api()}/credits?payer=alice`);
    expect(bad.status).toBe(400);
  });

  it('keeps a credit owed while no settler is configured, and pays it once one is', async () => {
    const offline = await startTestService(
      dialect,
      { 'payments.pay_to': chain.accounts.payTo.address },
      { background: false },
    );
    let online: TestService | undefined;
    try {
      const a = await payer(5n * USDC);
      const b = await payer(5n * USDC);
      const url = `${offline.config.site_url}/api/public/x402/featured-bid`;
      const post = (account: LocalAccount, body: Json) =>
        payingFetch(account, 100)(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
      expect((await post(a, { domain: 'owed-one.com', bid_usdc: 1, days: 2 })).status).toBe(200);
      expect((await post(b, { domain: 'owed-two.com', bid_usdc: 1.5 })).status).toBe(200);
      const owed = await getJson(`${offline.config.public_api_url}/credits?payer=${a.address}`);
      expect(owed.credits).toEqual([expect.objectContaining({ status: 'owed', reason: 'featured_outbid' })]);
      const amount = BigInt(Math.round(owed.owed_usdc * 1e6));
      expect(amount).toBeGreaterThan(2n * USDC - 120n * 24n); // at most two minutes used of two days
      // Nothing moved on chain yet: the payments are authorized, the credit owed.
      expect(await chain.balanceOf(a.address)).toBe(5n * USDC);

      // Another process on the same database, with a chain and the settler key.
      online = await startTestService(
        dialect,
        {
          'payments.pay_to': chain.accounts.payTo.address,
          'payments.rpc_url': chain.rpcUrl,
          'payments.settler_private_key': chain.accounts.settler.privateKey,
          'payments.settler_poll_interval_ms': 100,
        },
        { database: offline.db },
      );
      const onlineApi = online.config.public_api_url;
      const paid = await until(
        () => getJson(`${onlineApi}/credits?payer=${a.address}`),
        (c) => c.credits[0]?.status === 'paid',
        'the owed credit to be paid',
      );
      expect(paid).toMatchObject({ owed_usdc: 0, paid_usdc: Number(amount) / 1e6 });
      expect(await chain.balanceOf(a.address)).toBe(5n * USDC - 2n * USDC + amount);
    } finally {
      await online?.close();
      await offline.close();
    }
  });
});
