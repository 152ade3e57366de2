/**
 * Spotlight placements (issue 12), bought with the stock `@x402/fetch` client (embedded facilitator,
 * offline: payments are `authorized`): 30 days on the agent hub, the scoreboard's sponsored list and
 * the live catalog, the full scan queued at purchase, the slot limit refused before payment, and
 * expiry by moving the services' clock (never sleeping).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/databases.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { newAccount, payingFetch } from '../helpers/x402-payer.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are checked structurally
type Json = Record<string, any>;

describe.each(dialects)('spotlight placements (%s)', (dialect) => {
  let service: TestService;
  /** When set, the services' clock stands at this time. */
  let fixedAt: number | null = null;

  beforeAll(async () => {
    service = await startTestService(
      dialect,
      { 'payments.pay_to': newAccount().address, 'marketplace.spotlight_slots': 2 },
      // No scan worker: the scan is only queued here (its domains do not resolve).
      { background: false, now: () => new Date(fixedAt ?? Date.now()) },
    );
  });
  afterAll(() => service?.close());

  const url = () => `${service.config.site_url}/api/public/x402/spotlight`;
  const api = () => service.config.public_api_url;
  const getJson = async (u: string): Promise<Json> => (await (await fetch(u)).json()) as Json;
  const buy = (body: Json, pay = true) =>
    (pay ? payingFetch(newAccount(), 30) : fetch)(url(), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const surfaces = async () => ({
    hub: ((await getJson(`${api()}/agenthub`)).spotlight as Json[]).map((p) => p.domain),
    board: (await getJson(`${api()}/leaderboard`)) as Json,
    catalog: ((await getJson(`${service.config.functions_url}/catalog`)).spotlight as Json[]).map(
      (p) => p.domain,
    ),
  });

  let first: Json;

  it('places a spotlight for 30 days on the three surfaces and queues the full scan', async () => {
    const unpaid = await buy({ domain: 'spot-one.com' }, false);
    expect(unpaid.status).toBe(402);
    const res = await buy({
      domain: 'spot-one.com',
      url: 'https://spot-one.com/agents',
      blurb: 'Agents welcome',
      agent_handle: 'spot-agent',
      business_name: 'Spot One',
    });
    expect(res.status).toBe(200);
    first = (await res.json()) as Json;
    expect(first).toMatchObject({
      domain: 'spot-one.com',
      url: 'https://spot-one.com/agents',
      blurb: 'Agents welcome',
      agent_handle: 'spot-agent',
      business_name: 'Spot One',
    });
    expect(Date.parse(first.ends_at) - Date.parse(first.starts_at)).toBe(30 * 86_400_000);
    expect(first.placements.map((p: Json) => p.surface)).toEqual(['agent_hub', 'scoreboard', 'catalog']);

    const scan = await service.db.handle.db
      .selectFrom('scans')
      .selectAll()
      .where('id', '=', first.scan.scan_id)
      .executeTakeFirst();
    expect(scan).toMatchObject({ domain: 'spot-one.com', depth: 'full', status: 'queued', is_public: 1 });
    expect(first.scan.status_url).toContain(first.scan.scan_id);

    const now = await surfaces();
    expect(now.hub).toEqual(['spot-one.com']);
    expect(now.catalog).toEqual(['spot-one.com']);
    expect(now.board.spotlight).toEqual([
      expect.objectContaining({ domain: 'spot-one.com', sponsored: true, ends_at: first.ends_at }),
    ]);
    // Sponsored placements stay out of the ranking.
    expect((now.board.entries as Json[]).some((e) => e.domain === 'spot-one.com')).toBe(false);
  });

  it('refuses a purchase when every slot is taken with 409 and the next opening, before payment', async () => {
    expect((await buy({ domain: 'spot-two.com' })).status).toBe(200);
    const full = await buy({ domain: 'spot-three.com' }, false);
    expect(full.status).toBe(409);
    expect(full.headers.get('payment-required')).toBeNull();
    expect(await full.json()).toMatchObject({ code: 'spotlight_full', next_opening_at: first.ends_at });
    const payer = newAccount();
    const paid = await payingFetch(payer, 30)(url(), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ domain: 'spot-three.com' }),
    });
    expect(paid.status).toBe(409);
    const rows = await service.db.handle.db
      .selectFrom('payments')
      .select('id')
      .where('payer', '=', payer.address.toLowerCase())
      .execute();
    expect(rows).toEqual([]);
    expect((await surfaces()).hub).toEqual(['spot-one.com', 'spot-two.com']);
  });

  it('leaves every surface when its 30 days end, which opens a slot', async () => {
    fixedAt = Date.parse(first.ends_at);
    try {
      const later = await surfaces();
      expect(later.hub).toEqual(['spot-two.com']);
      expect(later.catalog).toEqual(['spot-two.com']);
      expect((later.board.spotlight as Json[]).map((p) => p.domain)).toEqual(['spot-two.com']);
      const open = await buy({ domain: 'spot-three.com' }, false);
      expect(open.status).toBe(402);
    } finally {
      fixedAt = null;
    }
  });
});
