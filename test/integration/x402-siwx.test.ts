/**
 * x402 sign-in-with-x (issue 31 item 5): the wallet that paid for a private scan (or a boost
 * campaign) reads it again by signing the extension's challenge, beside the bearer link its
 * purchase answered. Bought with the stock x402 client and read with the stock SIWX client
 * extension of `@x402/extensions` (over `@x402/fetch`) and `createSIWxPayload`, over REST and MCP.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { decodePaymentResponseHeader } from '@x402/core/http';
import {
  type CompleteSIWxInfo,
  createSIWxClientExtension,
  createSIWxPayload,
  encodeSIWxHeader,
  SIGN_IN_WITH_X,
  type SIWxExtension,
} from '@x402/extensions/sign-in-with-x';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import type { LocalAccount } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/databases.ts';
import { type FixtureSite, startFixtureSite } from '../helpers/fixture-sites.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { newAccount, payingFetch, paymentRequiredOf, stockClient } from '../helpers/x402-payer.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are checked structurally
type Json = Record<string, any>;

/** `fetch` that answers a sign-in-with-x challenge with `account`, as an x402 client application would. */
const signingInFetch = (account: LocalAccount) =>
  wrapFetchWithPayment(
    fetch,
    new x402Client().registerExtension(createSIWxClientExtension({ signers: [account] })),
  );

/** The challenge of a 402 (PAYMENT-REQUIRED `extensions["sign-in-with-x"]`). */
function challengeOf(res: Response): SIWxExtension {
  const extension = paymentRequiredOf(res).extensions?.[SIGN_IN_WITH_X] as SIWxExtension | undefined;
  expect(extension, 'extensions["sign-in-with-x"]').toBeDefined();
  return extension as SIWxExtension;
}

/** The SIGN-IN-WITH-X header for `challenge`, signed by `account` (info fields overridden). */
async function signedHeader(
  challenge: SIWxExtension,
  account: LocalAccount,
  url: string,
  override: Partial<CompleteSIWxInfo> = {},
): Promise<string> {
  const chain = challenge.supportedChains[0] as SIWxExtension['supportedChains'][number];
  const info = { ...challenge.info, chainId: chain.chainId, type: chain.type, ...override };
  return encodeSIWxHeader(await createSIWxPayload(info, account, url));
}

describe.each(dialects)('x402 sign-in-with-x (%s)', (dialect) => {
  let service: TestService;
  let site: FixtureSite;
  let domain: string;
  const payer = newAccount();
  const stranger = newAccount();
  let scan: Json;
  let scanUrl: string;

  beforeAll(async () => {
    site = await startFixtureSite('wellPrepared');
    domain = new URL(site.url).host;
    service = await startTestService(dialect, {
      'payments.pay_to': newAccount().address,
      'scanner.allow_private_networks': true,
      'scanner.delay_ms': 0,
      'scanner.poll_interval_ms': 50,
    });
    const res = await payingFetch(payer)(`${service.config.site_url}/api/public/x402/scan`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ domain, public: false }),
    });
    expect([200, 202]).toContain(res.status);
    scan = (await res.json()) as Json;
    // The receipt tells the payer it can sign in later.
    const receipt = decodePaymentResponseHeader(res.headers.get('payment-response') as string) as Json;
    expect(receipt.extensions?.[SIGN_IN_WITH_X]).toMatchObject({
      address: payer.address.toLowerCase(),
      supportedChains: [{ chainId: 'eip155:8453', type: 'eip191' }],
    });
    scanUrl = `${service.config.public_api_url}/scans/${scan.scan_id}`;
  });
  afterAll(async () => {
    await service?.close();
    await site?.close();
  });

  it("lists sign-in-with-x in /.well-known/x402, not in a SKU's 402 (each purchase is new)", async () => {
    const unpaid = await fetch(`${service.config.site_url}/api/public/x402/scan`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ domain, public: false }),
    });
    expect(unpaid.status).toBe(402);
    const required = paymentRequiredOf(unpaid);
    expect(Object.keys(required.extensions ?? {}).sort()).toEqual(['bazaar', 'payment-identifier']);

    const document = (await (await fetch(`${service.config.site_url}/.well-known/x402`)).json()) as Json;
    expect(document.extensions).toEqual(
      expect.arrayContaining(['bazaar', 'payment-identifier', SIGN_IN_WITH_X]),
    );
    for (const resource of document.resources as Json[])
      expect(resource.extensions).toEqual(['bazaar', 'payment-identifier']);
  });

  it('answers a read with neither the link nor a signature with the challenge, in the header and the body', async () => {
    const res = await fetch(scanUrl);
    expect(res.status).toBe(402);
    const problem = (await res.json()) as Json;
    expect(problem.code).toBe('sign_in_required');
    const required = paymentRequiredOf(res);
    expect(required).toMatchObject({ x402Version: 2, accepts: [], resource: { url: scanUrl } });
    const challenge = challengeOf(res);
    expect(challenge.info).toMatchObject({
      domain: new URL(scanUrl).host,
      uri: scanUrl,
      version: '1',
      nonce: expect.stringMatching(/^[0-9a-f]{32}$/),
      issuedAt: expect.any(String),
      expirationTime: expect.any(String),
      statement: expect.stringContaining('wallet that paid'),
    });
    expect(challenge.supportedChains).toEqual([{ chainId: 'eip155:8453', type: 'eip191' }]);
    expect(problem.extensions[SIGN_IN_WITH_X].info.uri).toBe(scanUrl);
    // The bearer link keeps working.
    const withToken = await fetch(scan.status_url);
    expect(withToken.status).toBe(200);
    expect(((await withToken.json()) as Json).scan_id).toBe(scan.scan_id);
  });

  it('reads the private scan for the paying wallet, signed in with the stock SIWX client extension', async () => {
    const res = await signingInFetch(payer)(scanUrl);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Json;
    expect(body).toMatchObject({ scan_id: scan.scan_id, domain, public: false, status_url: scanUrl });
    // The fix sheet too: the same resource.
    const fixes = await signingInFetch(payer)(`${scanUrl}/fixes.md`);
    expect(fixes.status).toBe(200);
    expect(fixes.headers.get('content-type')).toMatch(/^text\/markdown/);
  });

  it('refuses another wallet 403, naming why', async () => {
    const res = await signingInFetch(stranger)(scanUrl);
    expect(res.status).toBe(403);
    const problem = (await res.json()) as Json;
    expect(problem.code).toBe('sign_in_not_payer');
    expect(problem.detail).toContain(stranger.address);
    expect(problem.detail).toContain('did not pay');
  });

  it('reads once per message: a replayed nonce, an old message or one for another resource is refused', async () => {
    const challenge = challengeOf(await fetch(scanUrl));
    const header = await signedHeader(challenge, payer, scanUrl);
    expect((await fetch(scanUrl, { headers: { 'SIGN-IN-WITH-X': header } })).status).toBe(200);
    const replayed = await fetch(scanUrl, { headers: { 'SIGN-IN-WITH-X': header } });
    expect(replayed.status).toBe(402);
    expect(((await replayed.json()) as Json).code).toBe('sign_in_invalid');
    expect(paymentRequiredOf(replayed).error).toBe('invalid_siwx_nonce');
    // A fresh challenge comes with the refusal.
    expect(challengeOf(replayed).info.nonce).not.toBe(challenge.info.nonce);

    const fresh = challengeOf(await fetch(scanUrl));
    const old = new Date(Date.now() - 10 * 60_000);
    const expired = await fetch(scanUrl, {
      headers: {
        'SIGN-IN-WITH-X': await signedHeader(fresh, payer, scanUrl, {
          issuedAt: old.toISOString(),
          expirationTime: new Date(old.getTime() + 5 * 60_000).toISOString(),
        }),
      },
    });
    expect(expired.status).toBe(402);
    expect(((await expired.json()) as Json).code).toBe('sign_in_invalid');
    expect(paymentRequiredOf(expired).error).toMatch(/^invalid_siwx_(issued_at_too_old|expired)$/);

    const elsewhere = `${service.config.public_api_url}/scans/00000000-0000-4000-8000-000000000000`;
    const misdirected = await fetch(scanUrl, {
      headers: { 'SIGN-IN-WITH-X': await signedHeader(fresh, payer, scanUrl, { uri: elsewhere }) },
    });
    expect(misdirected.status).toBe(402);
    expect(paymentRequiredOf(misdirected).error).toBe('invalid_siwx_uri_mismatch');

    // A tampered message (another address than the one that signed) does not recover.
    const forged = JSON.parse(Buffer.from(await signedHeader(fresh, stranger, scanUrl), 'base64').toString());
    forged.address = payer.address;
    const refused = await fetch(scanUrl, {
      headers: { 'SIGN-IN-WITH-X': Buffer.from(JSON.stringify(forged)).toString('base64') },
    });
    expect(refused.status).toBe(402);
    expect(paymentRequiredOf(refused).error).toBe('invalid_siwx_signature');

    const garbage = await fetch(scanUrl, { headers: { 'SIGN-IN-WITH-X': 'not base64 json!' } });
    expect(garbage.status).toBe(402);
    expect(((await garbage.json()) as Json).code).toBe('sign_in_invalid');
  });

  it('signs in over MCP with _meta["x402/sign-in-with-x"]', async () => {
    const client = new Client({ name: 'siwx-reader', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(service.config.mcp_url)));
    try {
      const asked = await client.callTool({ name: 'get_scan', arguments: { scan_id: scan.scan_id } });
      expect(asked.isError).toBe(true);
      const required = asked.structuredContent as Json;
      expect(required).toMatchObject({ x402Version: 2, accepts: [], code: 'sign_in_required' });
      const challenge = required.extensions[SIGN_IN_WITH_X] as SIWxExtension;
      const header = await signedHeader(challenge, payer, service.config.mcp_url);
      const read = await client.callTool({
        name: 'get_scan',
        arguments: { scan_id: scan.scan_id },
        _meta: { 'x402/sign-in-with-x': header },
      });
      expect(read.isError).toBeFalsy();
      expect(read.structuredContent).toMatchObject({ scan_id: scan.scan_id, public: false });

      const strangers = await client.callTool({
        name: 'get_scan',
        arguments: { scan_id: scan.scan_id },
        _meta: { 'x402/sign-in-with-x': await signedHeader(challenge, stranger, service.config.mcp_url) },
      });
      expect(strangers.isError).toBe(true);
      expect(JSON.parse((strangers.content as { text: string }[])[0]?.text ?? '{}')).toMatchObject({
        code: 'sign_in_not_payer',
      });
    } finally {
      await client.close();
    }
  });

  it('reads a boost campaign for the wallet that paid for it, and for nobody else', async () => {
    const campaignPayer = newAccount();
    const bought = await wrapFetchWithPayment(fetch, stockClient(campaignPayer, 20))(
      `${service.config.site_url}/api/public/x402/boost`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          domain: 'boost-shop.com',
          url: 'https://boost-shop.com/sale',
          amount_usdc: 5,
        }),
      },
    );
    expect(bought.status).toBe(200);
    const campaign = (await bought.json()) as Json;
    const url = `${service.config.public_api_url}/boost/${campaign.campaign_id}`;
    const asked = await fetch(url);
    expect(asked.status).toBe(402);
    expect(challengeOf(asked).info.uri).toBe(url);

    const read = await signingInFetch(campaignPayer)(url);
    expect(read.status).toBe(200);
    expect(await read.json()).toMatchObject({
      campaign_id: campaign.campaign_id,
      status: 'active',
      budget_usdc: 5,
    });
    expect((await signingInFetch(payer)(url)).status).toBe(403);
    // Its status link keeps working.
    expect((await fetch(campaign.status_url)).status).toBe(200);
  });
});
