/**
 * Boost campaigns (issue 12): POST /boost and GET /boost/{id} with the keys of two accounts, the
 * payment URL paid with the stock `@x402/fetch` client (embedded facilitator, offline), a real ad
 * network receiver getting the signed campaign (verified by the `standardwebhooks` library) and
 * reporting impressions back signed with the same library, the budget spent at the configured CPM
 * until the campaign stops, the click redirect (counted, no other target), the sponsored entries of
 * /agents and /agenthub, and a cancelled campaign's remainder credited back.
 */
import canonicalize from 'canonicalize';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/databases.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/receivers.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { newAccount, payingFetch } from '../helpers/x402-payer.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are checked structurally
type Json = Record<string, any>;

const DOMAIN = 'boost-shop.com';

describe.each(dialects)('boost campaigns (%s)', (dialect) => {
  let service: TestService;
  let network: WebhookReceiver;
  let keyA: string;
  let keyB: string;

  beforeAll(async () => {
    network = await startWebhookReceiver();
    service = await startTestService(dialect, {
      'payments.pay_to': newAccount().address,
      'marketplace.boost_cpm_usdc': 2,
      'marketplace.ad_networks': [{ name: 'adnet', webhook_url: network.url, secret: network.secret }],
      // Two account creations and one click from this address; clicks past it are not counted.
      'rate_limits.unauthenticated_writes': { points: 3, duration_s: 3600 },
    });
    const api = service.config.public_api_url;
    const keyOf = async (email: string) => {
      const res = await fetch(`${api}/account`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email, password: 'correct horse battery staple' }),
      });
      return ((await res.json()) as Json).key.service_key as string;
    };
    keyA = await keyOf(`boost-a-${dialect}@example.com`);
    keyB = await keyOf(`boost-b-${dialect}@example.com`);
    // A verified domain of account A (the proof itself is tested with loopback sites elsewhere).
    const site = await fetch(`${api}/pixel-install`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-key': keyA },
      body: JSON.stringify({ domain: DOMAIN }),
    });
    const siteId = ((await site.json()) as Json).site_id as string;
    await service.services.db
      .updateTable('sites')
      .set({ verified_at: new Date().toISOString(), verification_method: 'dns' })
      .where('id', '=', siteId)
      .execute();
  });
  afterAll(async () => {
    await service?.close();
    await network?.close();
  });

  const api = () => service.config.public_api_url;
  const call = async (method: string, path: string, body?: Json, key?: string) => {
    const res = await fetch(`${api()}${path}`, {
      method,
      headers: { 'content-type': 'application/json', ...(key ? { 'x-service-key': key } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, body: (await res.json()) as Json };
  };
  const create = (amount: number, key = keyA) =>
    call(
      'POST',
      '/boost',
      { domain: DOMAIN, url: `https://${DOMAIN}/launch`, amount_usdc: amount, note: 'Launch' },
      key,
    );
  const report = (campaignId: string, body: Json, sign = network.secret) => {
    const payload = canonicalize(body) as string;
    const id = `msg_${crypto.randomUUID()}`;
    const at = new Date();
    return fetch(`${api()}/boost/${campaignId}/impressions`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'webhook-id': id,
        'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
        'webhook-signature': new Webhook(sign).sign(id, at, payload),
      },
      body: payload,
    });
  };

  let campaign: Json;

  it('makes a campaign for a verified domain with POST /boost; only its account reads it', async () => {
    const unverified = await call(
      'POST',
      '/boost',
      { domain: 'not-mine.com', url: 'https://not-mine.com/', amount_usdc: 10 },
      keyA,
    );
    expect(unverified).toMatchObject({ status: 403, body: { code: 'domain_not_verified' } });
    expect((await create(10, keyB)).status).toBe(403);
    expect(
      (await call('POST', '/boost', { domain: DOMAIN, url: `https://${DOMAIN}/`, amount_usdc: 10 })).status,
    ).toBe(401);

    const made = await create(10);
    expect(made.status).toBe(201);
    campaign = made.body;
    expect(campaign).toMatchObject({
      status: 'pending_payment',
      budget_usdc: 10,
      spent_usdc: 0,
      domain: DOMAIN,
    });
    expect(campaign.payment_url).toContain(`campaign_id=${campaign.campaign_id}`);

    const path = `/boost/${campaign.campaign_id}`;
    expect((await call('GET', path, undefined, keyA)).body.status).toBe('pending_payment');
    expect((await call('GET', path, undefined, keyB)).status).toBe(404);
    expect((await call('GET', path)).status).toBe(404);
  });

  it('starts when its payment URL is paid, and the ad network receives it signed', async () => {
    const res = await payingFetch(newAccount(), 20)(campaign.payment_url);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      campaign_id: campaign.campaign_id,
      status: 'active',
      budget_usdc: 10,
    });
    // Paid once: the same URL again is refused before any payment.
    expect((await fetch(campaign.payment_url)).status).toBe(409);

    await network.waitFor(() =>
      [...network.processed.values()].some(
        (r) => (r.payload as Json).data.campaign_id === campaign.campaign_id,
      ),
    );
    const sent = [...network.processed.values()].find(
      (r) => (r.payload as Json).data.campaign_id === campaign.campaign_id,
    );
    expect(sent?.verified).toBe(true);
    expect(sent?.payload).toMatchObject({
      type: 'boost.campaign.started',
      data: {
        network: 'adnet',
        domain: DOMAIN,
        click_url: `${service.config.site_url}/r/${campaign.campaign_id}`,
        budget_usdc: 10,
        cpm_usdc: 2,
        impressions_url: `${api()}/boost/${campaign.campaign_id}/impressions`,
      },
    });

    const agents = await call('GET', '/agents');
    expect(agents.body.sponsored).toEqual([
      {
        campaign_id: campaign.campaign_id,
        domain: DOMAIN,
        url: `${service.config.site_url}/r/${campaign.campaign_id}`,
        note: 'Launch',
        sponsored: true,
      },
    ]);
    expect((await call('GET', '/agenthub')).body.boosted.map((b: Json) => b.campaign_id)).toEqual([
      campaign.campaign_id,
    ]);
  });

  it('counts a click and redirects to the campaign URL only; past the address limit, uncounted', async () => {
    const click = `${service.config.site_url}/r/${campaign.campaign_id}`;
    const res = await fetch(click, { redirect: 'manual' });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe(`https://${DOMAIN}/launch`);
    const elsewhere = await fetch(`${click}?to=${encodeURIComponent('https://evil.example.org/')}`, {
      redirect: 'manual',
    });
    expect(elsewhere.status).toBe(400);
    expect(
      (await fetch(`${service.config.site_url}/r/${crypto.randomUUID()}`, { redirect: 'manual' })).status,
    ).toBe(404);
    expect((await call('GET', `/boost/${campaign.campaign_id}`, undefined, keyA)).body.clicks).toBe(1);
    // This address has used its unauthenticated writes: the link still works, the click is not counted.
    const again = await fetch(click, { redirect: 'manual' });
    expect(again.status).toBe(302);
    expect(again.headers.get('location')).toBe(`https://${DOMAIN}/launch`);
    expect((await call('GET', `/boost/${campaign.campaign_id}`, undefined, keyA)).body.clicks).toBe(1);
  });

  it('spends the budget on signed impression reports at the CPM, once per report, and stops at zero', async () => {
    const id = campaign.campaign_id as string;
    const unsigned = await fetch(`${api()}/boost/${id}/impressions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ network: 'adnet', report_id: 'r0', impressions: 1000 }),
    });
    expect(unsigned.status).toBe(401);
    const forged = await report(
      id,
      { network: 'adnet', report_id: 'r0', impressions: 1000 },
      `whsec_${btoa('x'.repeat(24))}`,
    );
    expect(forged.status).toBe(401);

    const first = await report(id, { network: 'adnet', report_id: 'r1', impressions: 1000 });
    expect(first.status).toBe(200);
    expect(await first.json()).toMatchObject({
      charged_usdc: 2,
      campaign: { spent_usdc: 2, remaining_usdc: 8, impressions: 1000 },
    });
    const again = await report(id, { network: 'adnet', report_id: 'r1', impressions: 1000 });
    expect((await again.json()).campaign.spent_usdc).toBe(2);

    const last = await report(id, { network: 'adnet', report_id: 'r2', impressions: 5000 });
    expect(await last.json()).toMatchObject({
      charged_usdc: 8,
      campaign: { status: 'completed', spent_usdc: 10, remaining_usdc: 0 },
    });
    const after = await report(id, { network: 'adnet', report_id: 'r3', impressions: 1000 });
    expect((await after.json()).charged_usdc).toBe(0);
    expect((await call('GET', '/agents')).body.sponsored).toEqual([]);
    // An ended campaign's links still lead to its page, uncounted.
    expect((await fetch(`${service.config.site_url}/r/${id}`, { redirect: 'manual' })).status).toBe(302);
    expect((await call('GET', `/boost/${id}`, undefined, keyA)).body.clicks).toBe(1);
  });

  it('credits a cancelled campaign its remainder; a direct purchase is read with its status token', async () => {
    const payer = newAccount();
    const res = await payingFetch(payer, 20)(`${service.config.site_url}/api/public/x402/boost`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-key': keyA },
      body: JSON.stringify({ domain: DOMAIN, url: `https://${DOMAIN}/sale`, amount_usdc: 6 }),
    });
    expect(res.status).toBe(200);
    const bought = (await res.json()) as Json;
    expect(bought.status_url).toContain('token=agsvc_boost_');
    expect(await (await fetch(bought.status_url)).json()).toMatchObject({ status: 'active', budget_usdc: 6 });
    expect(
      (await report(bought.campaign_id, { network: 'adnet', report_id: 'c1', impressions: 500 })).status,
    ).toBe(200);

    expect((await call('POST', `/boost/${bought.campaign_id}/cancel`, {}, keyB)).status).toBe(404);
    const cancelled = await call('POST', `/boost/${bought.campaign_id}/cancel`, {}, keyA);
    expect(cancelled.body).toMatchObject({ status: 'cancelled', spent_usdc: 1, remaining_usdc: 5 });
    const credits = await call('GET', `/credits?payer=${payer.address}`);
    expect(credits.body).toMatchObject({ owed_usdc: 5 });
    expect(credits.body.credits).toEqual([
      expect.objectContaining({ reason: 'boost_remainder', subject_id: bought.campaign_id, amount_usdc: 5 }),
    ]);
    expect((await call('POST', `/boost/${bought.campaign_id}/cancel`, {}, keyA)).status).toBe(409);
  });
});
