/**
 * The SKUs of issue 9 - signal, scan, llms-txt - bought as a customer buys them: the stock
 * `@x402/fetch` v2 client with a viem account over REST (POST and GET), and the MCP SDK client over
 * `_meta["x402/payment"]`, against a loopback fixture site. Nothing here calls a handler directly:
 * the registry, the payment core (embedded facilitator, offline: payments are `authorized`) and the
 * real crawler run as in production. A SKU that cannot do its work is not charged.
 */

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { decodePaymentResponseHeader } from '@x402/core/http';
import type { PaymentRequired } from '@x402/core/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseLlmsTxt } from '../../servers/features/scans/collectors/llms-txt.ts';
import { dialects } from '../helpers/databases.ts';
import { type FixtureSite, startFixtureSite } from '../helpers/fixture-sites.ts';
import { waitFor } from '../helpers/receivers.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import {
  newAccount,
  payingFetch,
  paymentHeader,
  paymentRequiredOf,
  stockClient,
} from '../helpers/x402-payer.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are checked structurally
type Json = Record<string, any>;

describe.each(dialects)('buying the SKUs of issue 9 with x402 (%s)', (dialect) => {
  let service: TestService;
  let site: FixtureSite;
  let domain: string;
  const payTo = newAccount().address;

  beforeAll(async () => {
    site = await startFixtureSite('wellPrepared');
    domain = new URL(site.url).host;
    service = await startTestService(dialect, {
      'payments.pay_to': payTo,
      'scanner.allow_private_networks': true,
      'scanner.delay_ms': 0,
      'scanner.poll_interval_ms': 50,
    });
  });
  afterAll(async () => {
    await service?.close();
    await site?.close();
  });

  const skuUrl = (sku: string) => `${service.config.site_url}/api/public/x402/${sku}`;
  const ledger = () => service.db.handle.db.selectFrom('payments').selectAll().execute();

  function receiptOf(res: Response): Json {
    const header = res.headers.get('payment-response');
    expect(header, `status ${res.status}`).toBeTruthy();
    return decodePaymentResponseHeader(header as string) as Json;
  }

  it('sells signal for exactly 0.10 USDC: a fresh score with ranked recommendations and a receipt', async () => {
    const payer = newAccount();
    const unpaid = await fetch(skuUrl('signal'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ domain }),
    });
    expect(unpaid.status).toBe(402);

    const res = await payingFetch(payer)(skuUrl('signal'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ domain }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Json;
    expect(body).toMatchObject({ domain, score: expect.any(Number), tier: { id: expect.any(String) } });
    expect(body.scan_id).toEqual(expect.any(String));
    const receipt = receiptOf(res);
    expect(receipt).toMatchObject({
      success: true,
      status: 'authorized',
      payer: payer.address.toLowerCase(),
    });
    const row = (await ledger()).find((p) => p.id === receipt.id);
    expect(row).toMatchObject({ sku: 'signal', amount: 100000, status: 'authorized' });
  });

  it('sells scan over GET with query parameters, a private one with its read token', async () => {
    const payer = newAccount();
    const res = await payingFetch(payer)(
      `${skuUrl('scan')}?domain=${encodeURIComponent(domain)}&public=false`,
    );
    expect([200, 202]).toContain(res.status);
    const body = (await res.json()) as Json;
    expect(body.read_token).toMatch(/^agsvc_scan_/);
    const receipt = receiptOf(res);
    expect((await ledger()).find((p) => p.id === receipt.id)).toMatchObject({
      sku: 'scan',
      amount: 100000,
    });
    // The payer reads the private scan later without an account; nobody else can. Without the
    // token the answer asks for the paying wallet (x402 sign-in-with-x, test/integration/x402-siwx.test.ts).
    const scanId = body.scan_id as string;
    const withToken = await fetch(
      `${service.config.public_api_url}/scans/${scanId}?token=${encodeURIComponent(body.read_token)}`,
    );
    expect(withToken.status).toBe(200);
    const withoutToken = await fetch(`${service.config.public_api_url}/scans/${scanId}`);
    expect(withoutToken.status).toBe(402);
    expect(((await withoutToken.json()) as Json).code).toBe('sign_in_required');
    const wrongToken = await fetch(`${service.config.public_api_url}/scans/${scanId}?token=agsvc_scan_wrong`);
    expect(wrongToken.status).toBe(404);
  });

  it('scans again for a payment whose scan failed, and for another domain the released authorization pays for', async () => {
    const unreachable = '127.0.0.1:1';
    const buy = (target: string, headers: Record<string, string> = {}) =>
      fetch(skuUrl('scan'), {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ domain: target }),
      });
    const scansOf = (target: string) =>
      service.db.handle.db
        .selectFrom('scans')
        .select(['id', 'status'])
        .where('domain', '=', target)
        .execute();
    const payer = newAccount();
    const payload = await stockClient(payer).createPaymentPayload(paymentRequiredOf(await buy(unreachable)));
    const header = { 'PAYMENT-SIGNATURE': paymentHeader(payload) };

    const first = await buy(unreachable, header);
    expect(first.status).toBe(422);
    expect(((await first.json()) as Json).code).toBe('site_unreachable');
    const before = await scansOf(unreachable);
    expect(before.map((s) => s.status)).toEqual(['failed']);
    // The payment was released, not spent: sent again for the same site, it buys a new scan (the
    // site may be back), not the failed one it bought first.
    const second = await buy(unreachable, header);
    expect(second.status).toBe(422);
    const after = await scansOf(unreachable);
    expect(after).toHaveLength(2);
    // Spent on another site, it buys that site's scan.
    const third = await buy(domain, header);
    expect([200, 202]).toContain(third.status);
    const body = (await third.json()) as Json;
    expect(body.domain).toBe(domain);
    const bought = await service.db.handle.db
      .selectFrom('paid_scans')
      .select('scan_id')
      .where('payment_id', '=', receiptOf(third).id)
      .execute();
    expect(bought).toEqual([{ scan_id: body.scan_id }]);
  });

  it("spends an authorization released by a payer who hung up on another domain: that domain's scan, not the first", async () => {
    let knocks = 0;
    const stalled = createServer(() => {
      knocks += 1;
    });
    await new Promise<void>((resolve) => stalled.listen(0, '127.0.0.1', resolve));
    const slow = `127.0.0.1:${(stalled.address() as AddressInfo).port}`;
    try {
      const buy = (target: string, init: RequestInit = {}) =>
        fetch(skuUrl('scan'), {
          method: 'POST',
          body: JSON.stringify({ domain: target }),
          ...init,
          headers: { 'content-type': 'application/json', ...(init.headers as Record<string, string>) },
        });
      const payer = newAccount();
      const payload = await stockClient(payer).createPaymentPayload(paymentRequiredOf(await buy(slow)));
      const header = { 'PAYMENT-SIGNATURE': paymentHeader(payload) };
      const hangUp = new AbortController();
      const first = buy(slow, { headers: header, signal: hangUp.signal }).catch(() => 'hung up');
      await waitFor(() => knocks > 0);
      hangUp.abort();
      expect(await first).toBe('hung up');
      // The handler stops with the caller and releases the payment; its scan of the slow site goes on.
      await waitFor(async () =>
        (await ledger()).some((p) => p.payer === payer.address.toLowerCase() && p.status === 'released'),
      );
      const res = await buy(domain, { headers: header });
      expect([200, 202]).toContain(res.status);
      expect(((await res.json()) as Json).domain).toBe(domain);
    } finally {
      stalled.closeAllConnections();
      stalled.close();
    }
  });

  it('sells llms-txt for 1.00 USDC: files our own scanner reads as valid', async () => {
    const payer = newAccount();
    const res = await payingFetch(payer)(skuUrl('llms-txt'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ domain }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Json;
    const llms = parseLlmsTxt(body.files.llms_txt.content);
    expect(llms.valid).toBe(true);
    const receipt = receiptOf(res);
    expect((await ledger()).find((p) => p.id === receipt.id)).toMatchObject({
      sku: 'llms-txt',
      amount: 1000000,
    });
  });

  it('sells signal as a tool of the public MCP server, paid through _meta', async () => {
    const client = new Client({ name: 'sku-buyer', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(service.config.mcp_url)));
    try {
      const unpaid = await client.callTool({ name: 'buy_signal_check', arguments: { domain } });
      expect(unpaid.isError).toBe(true);
      const required = unpaid.structuredContent as Json;
      expect(required).toMatchObject({ x402Version: 2, accepts: [{ amount: '100000', payTo }] });
      const payer = newAccount();
      const payload = await stockClient(payer).createPaymentPayload(required as unknown as PaymentRequired);
      const paid = await client.callTool({
        name: 'buy_signal_check',
        arguments: { domain },
        _meta: { 'x402/payment': payload },
      });
      expect(paid.isError).toBeFalsy();
      expect(paid.structuredContent).toMatchObject({ domain, score: expect.any(Number) });
      expect((paid._meta as Json)['x402/payment-response']).toMatchObject({
        success: true,
        payer: payer.address.toLowerCase(),
      });
    } finally {
      await client.close();
    }
  });

  it('does not charge for a site it cannot crawl, and the authorization pays for the next call', async () => {
    const payer = newAccount();
    const unreachable = '127.0.0.1:1';
    const res = await payingFetch(payer)(skuUrl('signal'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ domain: unreachable }),
    });
    expect(res.status).toBe(422);
    expect(((await res.json()) as Json).code).toBe('site_unreachable');
    expect(res.headers.get('payment-response')).toBeNull();
    const rows = (await ledger()).filter((p) => p.payer === payer.address.toLowerCase());
    expect(rows.map((r) => r.status)).toEqual(['released']);
  });
});
