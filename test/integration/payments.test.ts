/**
 * The x402 payment core end to end, without a chain (the embedded facilitator verifies offline and
 * records payments `authorized`): the stock v2 client over REST (POST and GET), a v1 client over
 * X-PAYMENT, the MCP SDK client over `_meta`; every refusal of issue 9 section 4 with its precise
 * error and nothing run; replays, concurrent replays, a failing handler; input before payment.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { decodePaymentResponseHeader } from '@x402/core/http';
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from '@x402/core/types';
import type { PaymentRequiredV1 } from '@x402/core/types/v1';
import type { LocalAccount } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/databases.ts';
import { type EchoCounter, TEST_PRICE_ATOMIC, TEST_SKU, withTestSku } from '../helpers/paid-operations.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import {
  newAccount,
  payingFetch,
  paymentHeader,
  paymentRequiredOf,
  signPayment,
  stockClient,
} from '../helpers/x402-payer.ts';

const USDC = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are checked structurally
type Json = Record<string, any>;

describe.each(dialects)('x402 payments (%s)', (dialect) => {
  let service: TestService;
  let url: string;
  const counter: EchoCounter = { runs: new Map() };
  const payTo = newAccount().address;
  const payer = newAccount();

  beforeAll(async () => {
    service = await startTestService(
      dialect,
      { 'payments.pay_to': payTo },
      { operations: withTestSku(counter) },
    );
    url = `${service.config.site_url}/api/public/x402/${TEST_SKU}`;
  });
  afterAll(() => service?.close());

  const post = (body: unknown, headers: Record<string, string> = {}, target = url) =>
    fetch(target, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });

  /** The terms of the 402 for this request. */
  async function terms(body: Json = { text: 'terms' }): Promise<PaymentRequired> {
    const res = await post(body);
    expect(res.status).toBe(402);
    return paymentRequiredOf(res);
  }

  const payments = () => service.db.handle.db.selectFrom('payments').selectAll().execute();
  const paymentsOf = async (from: string) => (await payments()).filter((p) => p.payer === from.toLowerCase());

  it('answers an unpaid call 402 with the x402 v2 terms in PAYMENT-REQUIRED and the v1 terms in the body', async () => {
    const res = await post({ text: 'hello' });
    expect(res.status).toBe(402);
    const required = paymentRequiredOf(res);
    expect(required).toMatchObject({
      x402Version: 2,
      resource: { url, mimeType: 'application/json' },
      accepts: [
        {
          scheme: 'exact',
          network: 'eip155:8453',
          amount: TEST_PRICE_ATOMIC,
          asset: USDC,
          payTo,
          maxTimeoutSeconds: 300,
          extra: { name: 'USD Coin', version: '2' },
        },
      ],
    });
    const body = (await res.json()) as Json;
    expect(body).toMatchObject({ status: 402, code: 'payment_required', x402Version: 1 });
    expect(body.accepts[0]).toMatchObject({
      scheme: 'exact',
      network: 'base',
      maxAmountRequired: TEST_PRICE_ATOMIC,
      resource: url,
      asset: USDC,
      payTo,
      extra: { name: 'USD Coin', version: '2' },
    });
    expect(res.headers.get('access-control-expose-headers')).toContain('PAYMENT-REQUIRED');
    expect(counter.runs.get('hello')).toBeUndefined();
  });

  it('is paid by the stock @x402/fetch v2 client with a viem account: result, receipt, ledger row', async () => {
    const pay = payingFetch(payer);
    const res = await pay(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'paid hello' }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Json;
    expect(body).toMatchObject({ echo: 'paid hello', run: 1 });
    const receipt = decodePaymentResponseHeader(res.headers.get('payment-response') as string) as Json;
    expect(receipt).toMatchObject({
      success: true,
      status: 'authorized',
      network: 'eip155:8453',
      transaction: '',
      payer: payer.address.toLowerCase(),
    });
    expect(body.payment_id).toBe(receipt.id);

    const record = await fetch(`${service.config.public_api_url}/payments/${receipt.id}`);
    expect(record.status).toBe(200);
    expect(await record.json()).toEqual({
      success: true,
      id: receipt.id,
      status: 'authorized',
      network: 'eip155:8453',
      transaction: '',
      payer: payer.address.toLowerCase(),
      sku: TEST_SKU,
      amount_usdc: 0.1,
      created_at: expect.any(String),
      settled_at: null,
    });
    const [row] = await paymentsOf(payer.address);
    expect(row).toMatchObject({
      id: receipt.id,
      sku: TEST_SKU,
      amount: 100000,
      network: 'eip155:8453',
      asset: USDC.toLowerCase(),
      pay_to: payTo.toLowerCase(),
      x402_version: 2,
      facilitator: 'embedded',
      status: 'authorized',
    });
    expect(JSON.parse(row?.result ?? 'null')).toEqual(body);
  });

  it('sells the same SKU over GET with query parameters, typed as the input schema says', async () => {
    const pay = payingFetch(newAccount());
    const res = await pay(`${url}?text=hi&times=2&loud=true`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ echo: 'HI HI' });
    expect(res.headers.get('payment-response')).toBeTruthy();
    // A query value that is not of the input's type is a 400, not a 402.
    const bad = await fetch(`${url}?text=hi&times=lots`);
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as Json).errors[0].field).toBe('times');
  });

  it('is paid by an x402 v1 client over X-PAYMENT and answered in v1 form', async () => {
    const v1Payer = newAccount();
    const unpaid = await post({ text: 'v1 hello' });
    const body = (await unpaid.json()) as PaymentRequiredV1;
    expect(body.x402Version).toBe(1);
    const payload = await stockClient(v1Payer).createPaymentPayload(body as unknown as PaymentRequired);
    expect(payload.x402Version).toBe(1);
    const res = await post({ text: 'v1 hello' }, { 'X-PAYMENT': paymentHeader(payload) });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ echo: 'v1 hello' });
    expect(res.headers.get('payment-response')).toBeNull();
    const receipt = decodePaymentResponseHeader(res.headers.get('x-payment-response') as string) as Json;
    expect(receipt).toMatchObject({ success: true, network: 'base', status: 'authorized' });
    const [row] = await paymentsOf(v1Payer.address);
    expect(row).toMatchObject({ x402_version: 1, network: 'eip155:8453', status: 'authorized' });
  });

  it('is paid by the MCP SDK client through _meta["x402/payment"] (x402 MCP transport)', async () => {
    const client = new Client({ name: 'x402-test', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(service.config.mcp_url)));
    try {
      const { tools } = await client.listTools();
      const tool = tools.find((t) => t.name === 'test_echo') as Json;
      expect(tool._meta['x402/price']).toMatchObject({ amount_usdc: 0.1, asset: 'USDC' });

      const unpaid = await client.callTool({ name: 'test_echo', arguments: { text: 'mcp hello' } });
      expect(unpaid.isError).toBe(true);
      const required = unpaid.structuredContent as Json;
      expect(required).toMatchObject({
        x402Version: 2,
        code: 'payment_required',
        resource: { url: 'mcp://tool/test_echo' },
        accepts: [{ amount: TEST_PRICE_ATOMIC, network: 'eip155:8453', payTo }],
      });
      expect(JSON.parse((unpaid.content as Json[])[0]?.text)).toEqual(required);
      expect(counter.runs.get('mcp hello')).toBeUndefined();

      const mcpPayer = newAccount();
      const payload = await stockClient(mcpPayer).createPaymentPayload(
        required as unknown as PaymentRequired,
      );
      const paid = await client.callTool({
        name: 'test_echo',
        arguments: { text: 'mcp hello' },
        _meta: { 'x402/payment': payload },
      });
      expect(paid.isError).toBeFalsy();
      expect(paid.structuredContent).toMatchObject({ echo: 'mcp hello', run: 1 });
      expect((paid._meta as Json)['x402/payment-response']).toMatchObject({
        success: true,
        status: 'authorized',
        network: 'eip155:8453',
        payer: mcpPayer.address.toLowerCase(),
      });

      // The same payment again: the stored result and receipt, the tool not run twice.
      const replay = await client.callTool({
        name: 'test_echo',
        arguments: { text: 'mcp hello' },
        _meta: { 'x402/payment': payload },
      });
      expect(replay.structuredContent).toEqual(paid.structuredContent);
      expect(counter.runs.get('mcp hello')).toBe(1);
    } finally {
      await client.close();
    }
  });

  describe('refuses, running nothing and recording nothing', () => {
    async function expectRefused(
      res: Response,
      code: string,
      field: string | null,
      reason: string | RegExp,
      text: string,
    ): Promise<Json> {
      expect(res.status).toBe(402);
      const body = (await res.json()) as Json;
      expect(body.code).toBe(code);
      if (field) expect(body.errors?.map((e: Json) => e.field)).toEqual([field]);
      const required = paymentRequiredOf(res);
      expect(required.error).toMatch(reason);
      expect(required.accepts[0]?.amount).toBe(TEST_PRICE_ATOMIC);
      expect(counter.runs.get(text)).toBeUndefined();
      return body;
    }

    /** Signs for `text` with the terms of the 402, with one thing changed. */
    async function tampered(
      text: string,
      change: (accepted: PaymentRequirements) => PaymentRequirements,
      signer: LocalAccount = newAccount(),
      authorization: Parameters<typeof signPayment>[3] = {},
    ): Promise<{ payload: PaymentPayload; signer: LocalAccount }> {
      const required = await terms({ text });
      const accepted = change(required.accepts[0] as PaymentRequirements);
      return { payload: await signPayment(signer, accepted, required.resource, authorization), signer };
    }

    it('no payment: payment_required', async () => {
      await expectRefused(
        await post({ text: 'r-none' }),
        'payment_required',
        null,
        /PAYMENT-SIGNATURE/,
        'r-none',
      );
    });

    it('a lower amount, accepted or signed: payment_invalid naming the field', async () => {
      const { payload, signer } = await tampered('r-amount', (a) => ({ ...a, amount: '50000' }));
      await expectRefused(
        await post({ text: 'r-amount' }, { 'PAYMENT-SIGNATURE': paymentHeader(payload) }),
        'payment_invalid',
        'PAYMENT-SIGNATURE.accepted.amount',
        'invalid_exact_evm_payload_authorization_value_mismatch',
        'r-amount',
      );
      const signedLow = await tampered('r-amount', (a) => a, undefined, { value: '99999' });
      await expectRefused(
        await post({ text: 'r-amount' }, { 'PAYMENT-SIGNATURE': paymentHeader(signedLow.payload) }),
        'payment_invalid',
        'PAYMENT-SIGNATURE.payload.authorization.value',
        'invalid_exact_evm_payload_authorization_value_mismatch',
        'r-amount',
      );
      expect(await paymentsOf(signer.address)).toEqual([]);
    });

    it('another payTo: payment_invalid', async () => {
      const other = newAccount().address;
      const { payload } = await tampered('r-payto', (a) => ({ ...a, payTo: other }));
      await expectRefused(
        await post({ text: 'r-payto' }, { 'PAYMENT-SIGNATURE': paymentHeader(payload) }),
        'payment_invalid',
        'PAYMENT-SIGNATURE.accepted.payTo',
        'invalid_exact_evm_payload_recipient_mismatch',
        'r-payto',
      );
      const signedOther = await tampered('r-payto', (a) => a, undefined, { to: other });
      await expectRefused(
        await post({ text: 'r-payto' }, { 'PAYMENT-SIGNATURE': paymentHeader(signedOther.payload) }),
        'payment_invalid',
        'PAYMENT-SIGNATURE.payload.authorization.to',
        'invalid_exact_evm_payload_recipient_mismatch',
        'r-payto',
      );
    });

    it('another asset or network: payment_invalid', async () => {
      const asset = await tampered('r-asset', (a) => ({
        ...a,
        asset: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
      }));
      await expectRefused(
        await post({ text: 'r-asset' }, { 'PAYMENT-SIGNATURE': paymentHeader(asset.payload) }),
        'payment_invalid',
        'PAYMENT-SIGNATURE.accepted.asset',
        'invalid_payment_requirements',
        'r-asset',
      );
      const network = await tampered('r-network', (a) => ({ ...a, network: 'eip155:84532' }));
      await expectRefused(
        await post({ text: 'r-network' }, { 'PAYMENT-SIGNATURE': paymentHeader(network.payload) }),
        'payment_invalid',
        'PAYMENT-SIGNATURE.accepted.network',
        'invalid_network',
        'r-network',
      );
    });

    it('an expired or not yet valid authorization: payment_invalid', async () => {
      const now = BigInt(Math.floor(Date.now() / 1000));
      const expired = await tampered('r-window', (a) => a, undefined, { validBefore: now - 60n });
      await expectRefused(
        await post({ text: 'r-window' }, { 'PAYMENT-SIGNATURE': paymentHeader(expired.payload) }),
        'payment_invalid',
        'PAYMENT-SIGNATURE.payload.authorization.validBefore',
        'invalid_exact_evm_payload_authorization_valid_before',
        'r-window',
      );
      const early = await tampered('r-window', (a) => a, undefined, { validAfter: now + 3600n });
      await expectRefused(
        await post({ text: 'r-window' }, { 'PAYMENT-SIGNATURE': paymentHeader(early.payload) }),
        'payment_invalid',
        'PAYMENT-SIGNATURE.payload.authorization.validAfter',
        'invalid_exact_evm_payload_authorization_valid_after',
        'r-window',
      );
    });

    it('a signature that does not recover the payer: payment_invalid', async () => {
      const victim = newAccount();
      const { payload } = await tampered('r-signature', (a) => a, newAccount(), { from: victim.address });
      await expectRefused(
        await post({ text: 'r-signature' }, { 'PAYMENT-SIGNATURE': paymentHeader(payload) }),
        'payment_invalid',
        'PAYMENT-SIGNATURE.payload.signature',
        'invalid_exact_evm_signature',
        'r-signature',
      );
      expect(await paymentsOf(victim.address)).toEqual([]);
    });

    it('a malformed header: payment_invalid naming it', async () => {
      await expectRefused(
        await post({ text: 'r-malformed' }, { 'PAYMENT-SIGNATURE': 'not base64 at all!' }),
        'payment_invalid',
        'PAYMENT-SIGNATURE',
        'invalid_payload',
        'r-malformed',
      );
      const required = await terms({ text: 'r-malformed' });
      const noNonce = {
        x402Version: 2,
        accepted: required.accepts[0],
        payload: { signature: 'not hex', authorization: { from: newAccount().address } },
      };
      await expectRefused(
        await post({ text: 'r-malformed' }, { 'PAYMENT-SIGNATURE': paymentHeader(noNonce) }),
        'payment_invalid',
        'PAYMENT-SIGNATURE.payload.signature',
        'invalid_payload',
        'r-malformed',
      );
    });

    it('a v2 payload in X-PAYMENT, and a v1 payload in PAYMENT-SIGNATURE: payment_invalid', async () => {
      const v2 = await tampered('r-version', (a) => a);
      await expectRefused(
        await post({ text: 'r-version' }, { 'X-PAYMENT': paymentHeader(v2.payload) }),
        'payment_invalid',
        'X-PAYMENT.x402Version',
        'invalid_x402_version',
        'r-version',
      );
      const unpaid = await post({ text: 'r-version' });
      const v1 = await stockClient(newAccount()).createPaymentPayload(
        (await unpaid.json()) as unknown as PaymentRequired,
      );
      await expectRefused(
        await post({ text: 'r-version' }, { 'PAYMENT-SIGNATURE': paymentHeader(v1) }),
        'payment_invalid',
        'PAYMENT-SIGNATURE.x402Version',
        'invalid_x402_version',
        'r-version',
      );
    });
  });

  it('runs the handler once for 20 concurrent replays of one signature; later replays get the stored result', async () => {
    const replayer = newAccount();
    const body = { text: 'concurrent', delay_ms: 300 };
    const payload = await stockClient(replayer).createPaymentPayload(await terms(body));
    const header = { 'PAYMENT-SIGNATURE': paymentHeader(payload) };
    const responses = await Promise.all(Array.from({ length: 20 }, () => post(body, header)));
    expect(counter.runs.get('concurrent')).toBe(1);
    const answers = await Promise.all(
      responses.map(async (res) => ({
        status: res.status,
        body: (await res.json()) as Json,
        receipt: res.headers.get('payment-response'),
      })),
    );
    const ok = answers.filter((a) => a.status === 200);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    for (const a of ok) {
      expect(a.body).toEqual(ok[0]?.body);
      expect(a.receipt).toBe(ok[0]?.receipt);
    }
    for (const a of answers.filter((x) => x.status !== 200)) {
      expect(a.status).toBe(402);
      expect(a.body.code).toBe('payment_already_used');
    }
    const rows = await paymentsOf(replayer.address);
    expect(rows).toHaveLength(1);
    expect(rows[0]?.status).toBe('authorized');

    const later = await post(body, header);
    expect(later.status).toBe(200);
    expect(await later.json()).toEqual(ok[0]?.body);
    expect(counter.runs.get('concurrent')).toBe(1);
    // The same authorization for another request is refused: it paid for one execution.
    const other = await post({ text: 'concurrent-other' }, header);
    expect(other.status).toBe(402);
    expect(((await other.json()) as Json).code).toBe('payment_already_used');
    expect(counter.runs.get('concurrent-other')).toBeUndefined();
  });

  it('charges nothing for a failing handler, and the authorization pays for the next request', async () => {
    const unlucky = newAccount();
    const payload = await stockClient(unlucky).createPaymentPayload(
      await terms({ text: 'flaky', fail: true }),
    );
    const header = { 'PAYMENT-SIGNATURE': paymentHeader(payload) };
    const failed = await post({ text: 'flaky', fail: true }, header);
    expect(failed.status).toBe(500);
    expect(failed.headers.get('payment-response')).toBeNull();
    expect((await paymentsOf(unlucky.address)).map((r) => r.status)).toEqual(['released']);

    const retried = await post({ text: 'flaky' }, header);
    expect(retried.status).toBe(200);
    expect(await retried.json()).toMatchObject({ echo: 'flaky', run: 2 });
    expect((await paymentsOf(unlucky.address)).map((r) => r.status)).toEqual(['authorized']);
  });

  it('validates the input before asking for payment: a bad input is 400, paid or not, and records nothing', async () => {
    const unpaid = await post({ text: '' });
    expect(unpaid.status).toBe(400);
    expect(((await unpaid.json()) as Json).errors[0].field).toBe('text');
    expect(unpaid.headers.get('payment-required')).toBeNull();

    const careful = newAccount();
    const payload = await stockClient(careful).createPaymentPayload(await terms({ text: 'fine' }));
    const paid = await post({ text: 'fine', times: 99 }, { 'PAYMENT-SIGNATURE': paymentHeader(payload) });
    expect(paid.status).toBe(400);
    expect(((await paid.json()) as Json).errors[0].field).toBe('times');
    const unknownField = await post(
      { text: 'fine', colour: 'red' },
      { 'PAYMENT-SIGNATURE': paymentHeader(payload) },
    );
    expect(unknownField.status).toBe(400);
    expect(await paymentsOf(careful.address)).toEqual([]);
    // The payment is still good for a valid request.
    expect((await post({ text: 'fine' }, { 'PAYMENT-SIGNATURE': paymentHeader(payload) })).status).toBe(200);
  });

  it('settler: an authorization that expires unsettled fails (nothing collected); a stopped request is recovered', async () => {
    const required = await terms({ text: 'short-lived' });
    const shortLived = newAccount();
    const payload = await signPayment(
      shortLived,
      required.accepts[0] as PaymentRequirements,
      required.resource,
      { validBefore: BigInt(Math.floor(Date.now() / 1000) + 8) },
    );
    const res = await post({ text: 'short-lived' }, { 'PAYMENT-SIGNATURE': paymentHeader(payload) });
    expect(res.status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 3000));
    await service.services.settler.tick();
    const [expired] = await paymentsOf(shortLived.address);
    expect(expired).toMatchObject({
      status: 'failed',
      error: 'authorization expired before it could be settled',
    });

    // Two requests whose process stopped mid-way (their rows left reserved, long ago): the one that
    // had stored its result (settlement may have been submitted) is reconciled, the other released.
    const db = service.db.handle.db;
    const [died, diedSettling] = [newAccount(), newAccount()];
    for (const [account, text] of [
      [died, 'died'],
      [diedSettling, 'died-settling'],
    ] as const) {
      const p = await stockClient(account).createPaymentPayload(await terms({ text }));
      expect((await post({ text }, { 'PAYMENT-SIGNATURE': paymentHeader(p) })).status).toBe(200);
    }
    const longAgo = new Date(Date.now() - 3_600_000).toISOString();
    await db
      .updateTable('payments')
      .set({ status: 'reserved', result: null, updated_at: longAgo })
      .where('payer', '=', died.address.toLowerCase())
      .execute();
    await db
      .updateTable('payments')
      .set({ status: 'reserved', updated_at: longAgo })
      .where('payer', '=', diedSettling.address.toLowerCase())
      .execute();
    await service.services.settler.tick();
    expect((await paymentsOf(died.address)).map((r) => r.status)).toEqual(['released']);
    // Without a chain to read, the reconciling payment waits for one.
    expect((await paymentsOf(diedSettling.address)).map((r) => r.status)).toEqual(['reconciling']);
  });

  it('credits referral handles: registration, ref on a paid call, balance; unknown 404, malformed 400', async () => {
    const api = service.config.public_api_url;
    const account = async (email: string) => {
      const res = await fetch(`${api}/account`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email, password: 'correct horse battery staple' }),
      });
      return ((await res.json()) as Json).key.service_key as string;
    };
    const alice = await account(`alice-${dialect}@example.com`);
    const mallory = await account(`mallory-${dialect}@example.com`);
    const register = (key: string, handle: string) =>
      post({ handle }, { 'x-service-key': key }, `${api}/referral-handle`);

    const registered = await register(alice, 'Alice-Agent');
    expect(registered.status).toBe(201);
    expect(await registered.json()).toMatchObject({
      handle: 'alice-agent',
      balance_url: expect.stringContaining('handle=alice-agent'),
    });
    expect((await register(alice, 'alice-agent')).status).toBe(201);
    const taken = await register(mallory, 'alice-agent');
    expect(taken.status).toBe(409);
    expect(((await taken.json()) as Json).code).toBe('referral_handle_taken');
    expect((await register(alice, 'another-one')).status).toBe(409);
    expect((await post({ handle: 'alice-agent' }, {}, `${api}/referral-handle`)).status).toBe(401);

    // A paid call naming an unknown or malformed handle is a bad input: 400, never 402.
    for (const ref of ['nobody-here', 'no spaces!']) {
      const res = await post({ text: 'referred', ref });
      expect(res.status).toBe(400);
      expect(((await res.json()) as Json).errors[0].field).toBe('ref');
    }

    const referred = newAccount();
    const pay = payingFetch(referred);
    expect(
      (
        await pay(`${url}?ref=alice-agent`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ text: 'referred' }),
        })
      ).status,
    ).toBe(200);
    expect((await pay(`${url}?text=referred-get&ref=alice-agent`)).status).toBe(200);
    expect(
      (
        await pay(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ text: 'referred-body', ref: 'ALICE-AGENT' }),
        })
      ).status,
    ).toBe(200);
    const rows = await paymentsOf(referred.address);
    expect(rows.map((r) => [r.referral_handle, r.referral_credit])).toEqual([
      ['alice-agent', 10000],
      ['alice-agent', 10000],
      ['alice-agent', 10000],
    ]);

    // Authorized (verified, not on chain): pending, not balance.
    const balance = await fetch(`${api}/referral-balance?handle=alice-agent`);
    expect(balance.status).toBe(200);
    expect(await balance.json()).toEqual({
      handle: 'alice-agent',
      balance_usdc: 0,
      pending_usdc: 0.03,
      count: 0,
      since: expect.any(String),
    });
    expect((await fetch(`${api}/referral-balance?handle=nobody-here`)).status).toBe(404);
    const malformed = await fetch(`${api}/referral-balance?handle=${encodeURIComponent('a b')}`);
    expect(malformed.status).toBe(400);
    expect(((await malformed.json()) as Json).errors[0].field).toBe('handle');
    expect((await fetch(`${api}/referral-balance`)).status).toBe(400);
  });

  it('refuses over MCP as over REST, with the PaymentRequired in the tool result', async () => {
    const client = new Client({ name: 'x402-test', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(service.config.mcp_url)));
    try {
      const unpaid = await client.callTool({ name: 'test_echo', arguments: { text: 'mcp-refused' } });
      const required = unpaid.structuredContent as unknown as PaymentRequired;
      const forged = await signPayment(
        newAccount(),
        required.accepts[0] as PaymentRequirements,
        required.resource,
        {
          from: newAccount().address,
        },
      );
      const refused = await client.callTool({
        name: 'test_echo',
        arguments: { text: 'mcp-refused' },
        _meta: { 'x402/payment': forged },
      });
      expect(refused.isError).toBe(true);
      expect(refused.structuredContent).toMatchObject({
        x402Version: 2,
        code: 'payment_invalid',
        error: 'invalid_exact_evm_signature',
        errors: [{ field: '_meta.x402/payment.payload.signature' }],
      });
      const invalidInput = await client.callTool({ name: 'test_echo', arguments: { text: '' } });
      expect(invalidInput.isError).toBe(true);
      expect(invalidInput.structuredContent).toBeUndefined();
      expect(JSON.parse((invalidInput.content as Json[])[0]?.text).code).toBe('validation_failed');
      expect(counter.runs.get('mcp-refused')).toBeUndefined();
    } finally {
      await client.close();
    }
  });

  it('documents the SKU: OpenAPI (POST and GET, 402 and its headers), x402.json, the receipt route', async () => {
    const doc = (await (await fetch(`${service.config.site_url}/openapi.json`)).json()) as Json;
    const path = doc.paths[`/api/public/x402/${TEST_SKU}`];
    for (const method of ['post', 'get']) {
      const entry = path[method];
      expect(entry.operationId).toBe(method === 'post' ? 'testEcho' : 'testEchoByQuery');
      expect(entry['x-x402']).toMatchObject({ price_usdc: 0.1, network: 'eip155:8453', asset: USDC });
      expect(entry.parameters.map((p: Json) => `${p.in}:${p.name}`)).toEqual(
        expect.arrayContaining(['header:PAYMENT-SIGNATURE', 'header:X-PAYMENT', 'query:ref']),
      );
      expect(Object.keys(entry.responses['402'].headers)).toContain('PAYMENT-REQUIRED');
      expect(entry.responses['402'].description).toContain('payment_required');
      expect(Object.keys(entry.responses['200'].headers)).toContain('PAYMENT-RESPONSE');
      expect(entry.responses['503'].description).toContain('sku_unavailable');
    }
    expect(path.get.parameters.map((p: Json) => p.name)).toEqual(expect.arrayContaining(['text', 'times']));

    const x402 = (await (await fetch(`${service.config.site_url}/.well-known/x402.json`)).json()) as Json;
    expect(x402.payments_enabled).toBe(true);
    const resource = x402.resources.find((r: Json) => r.sku === TEST_SKU);
    expect(resource).toMatchObject({
      resource: url,
      methods: ['POST', 'GET'],
      price_usdc: 0.1,
      pricing: 'fixed',
      mcp_tool: 'test_echo',
      accepts: [{ scheme: 'exact', network: 'eip155:8453', amount: TEST_PRICE_ATOMIC, asset: USDC, payTo }],
      available: true,
      unavailable_reason: null,
    });
    expect(resource.input_schema.properties.text).toBeDefined();
    expect(x402.mcp).toMatchObject({ url: service.config.mcp_url });
    expect(x402.mcp.tools).toContain('test_echo');
    // A SKU that cannot be sold here is listed with its terms withheld and the reason: people-search
    // without a web search provider, embodiment without a robot operator configured.
    expect(x402.resources.find((r: Json) => r.sku === 'people-search')).toMatchObject({
      available: false,
      accepts: [],
      unavailable_reason: expect.stringContaining('search'),
    });
    expect(x402.resources.find((r: Json) => r.sku === 'embodiment')).toMatchObject({
      available: false,
      accepts: [],
      unavailable_reason: expect.stringContaining('no robot operator configured'),
    });

    expect((await fetch(`${service.config.public_api_url}/payments/${crypto.randomUUID()}`)).status).toBe(
      404,
    );
    expect((await fetch(`${service.config.public_api_url}/payments/not-a-uuid`)).status).toBe(400);
  });
});

describe.each(dialects)('x402 payments without payments.pay_to (%s)', (dialect) => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService(dialect, {}, { operations: withTestSku() });
  });
  afterAll(() => service?.close());

  it('answers every paid SKU 503 sku_unavailable naming PAY_TO, never 402; bad input still 400', async () => {
    const url = `${service.config.site_url}/api/public/x402/${TEST_SKU}`;
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'hello' }),
    });
    expect(res.status).toBe(503);
    const body = (await res.json()) as Json;
    expect(body.code).toBe('sku_unavailable');
    expect(body.detail).toContain('PAY_TO');
    expect(res.headers.get('payment-required')).toBeNull();
    expect((await fetch(`${url}?text=`)).status).toBe(400);
    const x402 = (await (await fetch(`${service.config.site_url}/.well-known/x402.json`)).json()) as Json;
    expect(x402.payments_enabled).toBe(false);
    expect(x402.resources[0].accepts).toEqual([]);
  });
});
