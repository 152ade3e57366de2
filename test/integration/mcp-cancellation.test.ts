/**
 * MCP cancellation (MCP 2025-11-25 basic/utilities/cancellation), once per dialect, against a site
 * that never answers (`startHeldSite`), so a scan of it lasts until it is stopped - the scanner's
 * own timeouts are set minutes away. The MCP SDK client cancels a tool call as it does
 * when its AbortSignal fires: `notifications/cancelled` in a POST of its own. The scan stops (the
 * site sees its requests given up), no JSON-RPC response is sent for the cancelled id, a paid call
 * cancelled is not charged, and nobody but the requester can cancel a request: not another
 * client naming the same id, nor a POST without the requester's session. On PostgreSQL the
 * cancellation reaches the request in another process of the deployment. A 2026-07-28 client
 * cancels by closing its request (the v2 SDK client pinned to that revision), and the scan stops too.
 */
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as TransportV2,
} from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { PaymentRequired } from '@x402/core/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/databases.ts';
import { type HeldSite, startHeldSite } from '../helpers/fixture-sites.ts';
import { waitFor } from '../helpers/receivers.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { newAccount, stockClient } from '../helpers/x402-payer.ts';

// biome-ignore lint/suspicious/noExplicitAny: JSON-RPC messages are inspected structurally
type Json = any;

/** One POST the SDK client made: its JSON-RPC message, and the answer's status and whole body. */
interface Exchanged {
  message: Json;
  answer: Promise<{ status: number; contentType: string | null; body: string }>;
}

/** `fetch` for the SDK client's transport that keeps a copy of every POST and its answer. */
function recordingFetch(exchanged: Exchanged[]): typeof fetch {
  return async (input, init) => {
    if (init?.method !== 'POST' || typeof init.body !== 'string') return fetch(input, init);
    const sent = fetch(input, init);
    const copies = sent.then((res) => (res.body ? res.body.tee() : [null, null]));
    exchanged.push({
      message: JSON.parse(init.body),
      answer: Promise.all([sent, copies]).then(async ([res, [kept]]) => ({
        status: res.status,
        contentType: res.headers.get('content-type'),
        body: await new Response(kept).text(),
      })),
    });
    const [res, [, passed]] = await Promise.all([sent, copies]);
    return new Response(passed, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
}

describe.each(dialects)('MCP cancellation (%s)', (dialect) => {
  let service: TestService;
  let site: HeldSite;

  const settings = {
    'payments.pay_to': newAccount().address,
    'scanner.allow_private_networks': true,
    'scanner.delay_ms': 0,
    'scanner.request_timeout_ms': 300_000,
    'scanner.scan_timeout_ms': 600_000,
    'outbound.timeout_ms': 300_000,
  };
  beforeAll(async () => {
    service = await startTestService(dialect, settings);
  });
  afterAll(async () => {
    await service?.close();
    await site?.close();
  });

  /** A new site that never answers, for one test (a domain's quick check is shared while it runs). */
  async function heldSite(): Promise<HeldSite> {
    await site?.close();
    site = await startHeldSite();
    return site;
  }

  async function connect(exchanged: Exchanged[] = []): Promise<Client> {
    const client = new Client({ name: 'cancelling-agent', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(service.config.mcp_url), {
        fetch: recordingFetch(exchanged),
      }),
    );
    return client;
  }

  const rawPost = (message: unknown, headers: Record<string, string> = {}, to = service) =>
    fetch(to.config.mcp_url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...headers,
      },
      body: JSON.stringify(message),
    });
  const initialize = (name: string, headers: Record<string, string> = {}) =>
    rawPost(
      {
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name, version: '1' } },
      },
      headers,
    );

  it('stops a scan the SDK client cancels, and sends no response for it', async () => {
    const target = await heldSite();
    const exchanged: Exchanged[] = [];
    const client = await connect(exchanged);
    const errors: Error[] = [];
    client.onerror = (err) => errors.push(err);
    try {
      const abort = new AbortController();
      const call = client.callTool({ name: 'get_signal', arguments: { domain: target.domain } }, undefined, {
        signal: abort.signal,
      });
      await waitFor(() => target.waiting() > 0);
      abort.abort('the person changed their mind');
      await expect(call).rejects.toThrow();
      // The scan stops: every request it had waiting on the site is given up.
      await waitFor(() => target.waiting() === 0);

      const called = exchanged.find((e) => e.message.method === 'tools/call') as Exchanged;
      const cancelled = exchanged.find((e) => e.message.method === 'notifications/cancelled') as Exchanged;
      expect(cancelled.message.params.requestId).toBe(called.message.id);
      expect((await cancelled.answer).status).toBe(202);
      // The call's POST ends without a JSON-RPC response.
      expect(await called.answer).toEqual({ status: 200, contentType: 'text/event-stream', body: '' });
      expect(errors).toEqual([]);
      // The client goes on: the next call on the same connection is answered.
      const next = await client.callTool({ name: 'get_catalog', arguments: {} });
      expect(next.isError).toBeFalsy();
    } finally {
      await client.close();
    }
  });

  it('stops a scan a 2026-07-28 client cancels by closing the request (the v2 SDK client, pinned)', async () => {
    const target = await heldSite();
    const client = new ClientV2(
      { name: 'cancelling-agent', version: '2' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    await client.connect(new TransportV2(new URL(service.config.mcp_url)));
    try {
      expect(client.getProtocolEra()).toBe('modern');
      const abort = new AbortController();
      const call = client.callTool(
        { name: 'get_signal', arguments: { domain: target.domain } },
        { signal: abort.signal },
      );
      await waitFor(() => target.waiting() > 0);
      abort.abort('the person changed their mind');
      await expect(call).rejects.toThrow();
      // MCP 2026-07-28: the stream closed is the cancellation; the scan stops.
      await waitFor(() => target.waiting() === 0);
      const next = await client.callTool({ name: 'get_catalog', arguments: {} });
      expect(next.isError).toBeFalsy();
    } finally {
      await client.close();
    }
  });

  it('cancels a streamed call sent through the router (with Origin): its stream ends without a response', async () => {
    const target = await heldSite();
    const origin = { origin: new URL(service.config.mcp_url).origin };
    const init = await initialize('raw', origin);
    expect(init.status).toBe(200);
    const session = init.headers.get('mcp-session-id') as string;
    expect(session).toMatch(/^[0-9a-f-]{36}$/);
    const mine = { ...origin, 'mcp-session-id': session };
    const call = await rawPost(
      {
        jsonrpc: '2.0',
        id: 'scan-1',
        method: 'tools/call',
        params: { name: 'get_signal', arguments: { domain: target.domain }, _meta: { progressToken: 'p1' } },
      },
      mine,
    );
    expect(call.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const stream = call.text();
    await waitFor(() => target.waiting() > 0);
    const cancel = await rawPost(
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'scan-1', reason: 'done' } },
      mine,
    );
    expect(cancel.status).toBe(202);
    const events = await stream;
    expect(events).not.toContain('"result"');
    expect(events).not.toContain('"error"');
    await waitFor(() => target.waiting() === 0);
  });

  it('does not charge a paid call cancelled while it runs', async () => {
    const target = await heldSite();
    const client = await connect();
    try {
      const unpaid = await client.callTool({
        name: 'buy_signal_check',
        arguments: { domain: target.domain },
      });
      expect(unpaid.isError).toBe(true);
      const payer = newAccount();
      const payment = await stockClient(payer).createPaymentPayload(
        unpaid.structuredContent as unknown as PaymentRequired,
      );
      const abort = new AbortController();
      const call = client.callTool(
        {
          name: 'buy_signal_check',
          arguments: { domain: target.domain },
          _meta: { 'x402/payment': payment },
        },
        undefined,
        { signal: abort.signal },
      );
      await waitFor(() => target.waiting() > 0);
      abort.abort();
      await expect(call).rejects.toThrow();
      await waitFor(() => target.waiting() === 0);
      const payments = () =>
        service.db.handle.db
          .selectFrom('payments')
          .select('status')
          .where('payer', '=', payer.address.toLowerCase())
          .execute();
      await waitFor(async () => (await payments()).some((p) => p.status === 'released'));
      expect(await payments()).toEqual([{ status: 'released' }]);
    } finally {
      await client.close();
    }
  });

  it("refuses to cancel another client's call: the same id from another session, or from none", async () => {
    const target = await heldSite();
    const exchanged: Exchanged[] = [];
    const victim = await connect(exchanged);
    try {
      const call = victim.callTool({ name: 'get_signal', arguments: { domain: target.domain } });
      await waitFor(() => target.waiting() > 0);
      const id = (exchanged.find((e) => e.message.method === 'tools/call') as Exchanged).message.id;

      // Another client that did initialize, and a POST that names no session at all.
      const attacker = await initialize('attacker');
      const attackerSession = attacker.headers.get('mcp-session-id') as string;
      const attacks: Record<string, string>[] = [{ 'mcp-session-id': attackerSession }, {}];
      for (const headers of attacks) {
        const cancel = await rawPost(
          { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id } },
          headers,
        );
        expect(cancel.status).toBe(202);
      }
      // Nothing was stopped: released, the site is scanned and the victim gets its result.
      expect(target.waiting()).toBeGreaterThan(0);
      target.release();
      const result = await call;
      expect(result.isError).toBeFalsy();
      expect((result.structuredContent as Json).domain).toBe(target.domain);
    } finally {
      await victim.close();
    }
  });

  it.runIf(dialect === 'postgres')(
    'cancels a call running in another process than the one its cancellation reaches',
    async () => {
      // Two processes of one deployment behind a load balancer: the call went to one, the
      // cancellation POST (another connection) to the other.
      const other = await startTestService(dialect, settings, { database: service.db, background: false });
      const target = await heldSite();
      try {
        const session = (await initialize('balanced')).headers.get('mcp-session-id') as string;
        const call = rawPost(
          {
            jsonrpc: '2.0',
            id: 7,
            method: 'tools/call',
            params: { name: 'get_signal', arguments: { domain: target.domain } },
          },
          { 'mcp-session-id': session },
        );
        await waitFor(() => target.waiting() > 0);
        const cancel = await rawPost(
          { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 7 } },
          { 'mcp-session-id': session },
          other,
        );
        expect(cancel.status).toBe(202);
        await waitFor(() => target.waiting() === 0);
        const res = await call;
        expect(res.headers.get('content-type')).toBe('text/event-stream');
        expect(await res.text()).toBe('');
      } finally {
        await other.close();
      }
    },
  );
});
