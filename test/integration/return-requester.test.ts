/**
 * The requester's side of a return request (issue 29 parts 4-7), once per dialect, against real
 * peers: a brand's Standard Webhooks endpoint, the requester's own webhook (signatures verified
 * with the `standardwebhooks` library and the secret returned with the request), a real A2A agent
 * (`@a2a-js/sdk` server) as the requester's agent, an SMTP server as the person's mailbox, and
 * the MCP SDK's client for the public tools. A brand reply arrives the way the inbound channels
 * record one: `appendMessage` and `transitionRequest` in one transaction.
 */
import { randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { transitionRequest } from '../../servers/features/returns/repository.ts';
import { appendMessage } from '../../servers/features/returns/thread.ts';
import { SecretsKey } from '../../servers/secrets.ts';
import { type A2aAgent, startA2aAgent } from '../helpers/a2a-agent.ts';
import { createTestDatabase, dialects } from '../helpers/databases.ts';
import {
  type ReceivedWebhook,
  startSmtpServer,
  startWebhookReceiver,
  type WebhookReceiver,
  waitFor,
} from '../helpers/receivers.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

// biome-ignore lint/suspicious/noExplicitAny: JSON bodies are checked structurally
type Json = any;

const person = {
  name: 'Jane Doe',
  contact: 'jane.doe@example.com',
  order_number: 'A-1001',
  card_last4: '4242',
  date: '2026-11-02',
  amount: 42.5,
  currency: 'EUR',
  message: 'Wrong size. Reach me at jane.doe@example.com, Jane.',
};

describe.each(dialects)('the requester of a return request (%s)', (dialect) => {
  let service: TestService;
  let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
  let brand: WebhookReceiver;
  let mcp: Client;
  let seq = 0;
  const brandDomain = () => `requester-${dialect}-${++seq}.example`;
  const secretsKey = Buffer.alloc(32, 7).toString('base64');

  beforeAll(async () => {
    smtp = await startSmtpServer();
    brand = await startWebhookReceiver();
    service = await startTestService(dialect, {
      'rate_limits.unauthenticated_writes.points': 1000,
      'returns.delivery.max_attempts': 4,
      'smtp.url': smtp.url,
      'smtp.from': 'Returns desk <returns@agents.example>',
      'secrets.key': secretsKey,
    });
    mcp = new Client({ name: 'requester-test', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(service.config.mcp_url)));
  });
  afterAll(async () => {
    await mcp?.close();
    await service?.close();
    await brand?.close();
    await smtp?.close();
  });

  const connect = (domain: string, receiver: WebhookReceiver) =>
    service.services.returns.connectBrandChannel({
      brand_domain: domain,
      webhook_url: receiver.url,
      webhook_secret: receiver.secret,
      email: null,
    });

  async function post(path: string, body: unknown, headers: Record<string, string> = {}) {
    const res = await fetch(`${service.config.base_url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Json };
  }
  const statusOf = async (id: string): Promise<Json> =>
    (await fetch(`${service.config.base_url}/status?request_id=${id}`)).json();
  const brandEvents = (requestId: string, type?: string) =>
    [...brand.processed.values()].filter(
      (w) =>
        (w.payload as Json).data.request_id === requestId && (!type || (w.payload as Json).type === type),
    );

  /** The request's rows of an outbox. */
  const rowsOf = (table: 'deliveries' | 'return_notifications', requestId: string) =>
    service.database.db.selectFrom(table).selectAll().where('request_id', '=', requestId).execute();
  const notificationStates = async (requestId: string) =>
    (await rowsOf('return_notifications', requestId)).map((r) => r.state);

  /** The brand replies through an inbound channel and acknowledges, in one transaction. */
  async function brandReplies(requestId: string, text: string, externalId: string) {
    const { db, dialect: d } = service.services;
    const at = new Date().toISOString();
    await db.transaction().execute(async (trx) => {
      const { recorded } = await appendMessage(trx, {
        request_id: requestId,
        direction: 'from_brand',
        channel: 'email',
        sender: 'support@brand.example',
        sender_verified: true,
        subject: 'Your return',
        text,
        attachments: ['label.pdf'],
        external_id: externalId,
        at,
      });
      if (recorded)
        await transitionRequest(trx, d, requestId, 'acknowledged', 'brand', 'Replied by email', at);
    });
    service.services.notifications.nudge();
  }

  it('returns a request token once, stored only as a hash, and replays the same sealed response', async () => {
    const domain = brandDomain();
    const key = crypto.randomUUID();
    const first = await post('/return', { brand_domain: domain, ...person }, { 'Idempotency-Key': key });
    expect(first.status).toBe(200);
    expect(first.body.request_token).toMatch(/^rrt_[A-Za-z0-9_-]{43}$/);
    expect(first.body.notifications).toEqual({ channel: 'email', callback_secret: null });
    const replay = await post('/return', { brand_domain: domain, ...person }, { 'Idempotency-Key': key });
    expect(replay.body).toEqual(first.body);

    const token = first.body.request_token as string;
    const row = await service.database.db
      .selectFrom('return_requests')
      .selectAll()
      .where('id', '=', first.body.request_id)
      .executeTakeFirstOrThrow();
    expect(row.request_token_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(row)).not.toContain(token);
    const kept = await service.database.db
      .selectFrom('idempotency_keys')
      .select('response')
      .where('key', '=', key)
      .executeTakeFirstOrThrow();
    expect(kept.response).not.toContain(token);
    expect(kept.response).toMatch(/^"sealed:v1:/);
    expect(JSON.stringify(await statusOf(first.body.request_id))).not.toContain(token);
  });

  it('refuses cancel and message without the right token (403), changing nothing; cancels with it', async () => {
    const domain = brandDomain();
    const started = (await post('/return', { brand_domain: domain, ...person })).body;
    const before = await statusOf(started.request_id);
    for (const token of [undefined, '', 'rrt_wrong', `${started.request_token}x`]) {
      const body = {
        request_id: started.request_id,
        ...(token === undefined ? {} : { request_token: token }),
      };
      const cancel = await post('/return/cancel', body);
      expect(cancel.status).toBe(403);
      expect(cancel.body.code).toBe('forbidden');
      expect(cancel.body.detail).toMatch(/request_token/);
      const message = await post('/return/message', { ...body, message: 'Hello?' });
      expect(message.status).toBe(403);
    }
    expect(await statusOf(started.request_id)).toEqual(before);

    const cancelled = await post('/return/cancel', {
      request_id: started.request_id,
      request_token: started.request_token,
      reason: 'Found the parcel',
    });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ status: 'cancelled', final: true, next_step: null });
    expect(cancelled.body.history.at(-1)).toMatchObject({
      status: 'cancelled',
      by: 'requester',
      note: 'Found the parcel',
    });
    const again = await post('/return/cancel', {
      request_id: started.request_id,
      request_token: started.request_token,
    });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('illegal_transition');
    const late = await post('/return/message', {
      request_id: started.request_id,
      request_token: started.request_token,
      message: 'One more thing',
    });
    expect(late.status).toBe(409);
    // Nothing ever reached a brand for it: no cancellation is sent.
    expect(await rowsOf('deliveries', started.request_id)).toEqual([]);
  });

  it('sends a follow-up and a cancellation to the brand on the request channel, the same id on retries', async () => {
    const domain = brandDomain();
    await connect(domain, brand);
    const started = (await post('/return', { brand_domain: domain, ...person })).body;
    await waitFor(async () => (await statusOf(started.request_id)).status === 'delivered');

    let failing = 2;
    brand.respond = (_attempt, request) =>
      (request.payload as Json)?.type === 'return_request.message' && failing-- > 0 ? 503 : 200;
    const sent = await post('/return/message', {
      request_id: started.request_id,
      request_token: started.request_token,
      message: 'I can also send it back by post. Call me on +1 415 555 0123 if easier.',
    });
    expect(sent.status).toBe(200);
    expect(sent.body.delivery).toEqual({ channel: 'webhook', sent_as: 'follow_up' });
    expect(sent.body.message).toMatchObject({
      direction: 'from_requester',
      sender: 'requester',
      sender_verified: true,
    });
    await waitFor(() => brandEvents(started.request_id, 'return_request.message').length === 1);
    const attempts = brand.requests.filter((r) => (r.payload as Json)?.type === 'return_request.message');
    expect(attempts.length).toBe(3);
    expect(new Set(attempts.map((r) => r.id)).size).toBe(1);
    const followUp = brandEvents(started.request_id, 'return_request.message')[0] as ReceivedWebhook;
    expect(followUp.verified).toBe(true);
    expect((followUp.payload as Json).data).toMatchObject({
      request_id: started.request_id,
      brand_domain: domain,
      message: { message_id: sent.body.message.message_id, text: expect.stringContaining('+1 415 555 0123') },
    });
    brand.respond = () => 200;

    const cancelled = await post('/return/cancel', {
      request_id: started.request_id,
      request_token: started.request_token,
      reason: 'Bought elsewhere',
    });
    expect(cancelled.body.status).toBe('cancelled');
    await waitFor(() => brandEvents(started.request_id, 'return_request.cancelled').length === 1);
    const cancel = brandEvents(started.request_id, 'return_request.cancelled')[0] as ReceivedWebhook;
    expect((cancel.payload as Json).data).toMatchObject({
      request_id: started.request_id,
      reason: 'Bought elsewhere',
    });

    await waitFor(async () => (await statusOf(started.request_id)).thread.length === 3);
    const { thread } = await statusOf(started.request_id);
    expect(thread.map((m: Json) => [m.direction, m.channel])).toEqual([
      ['to_brand', 'webhook'],
      ['from_requester', 'webhook'],
      ['to_brand', 'webhook'],
    ]);
    // The person's own data is redacted in the thread; the brand received the text as written.
    expect(thread[0].excerpt).toBe('Wrong size. Reach me at [the person’s email], [name].');
    expect(JSON.stringify(thread)).not.toMatch(/jane|Doe|415 555/i);
  });

  it('carries a follow-up written before any channel existed with the request, once', async () => {
    const domain = brandDomain();
    const receiver = await startWebhookReceiver();
    try {
      const started = (await post('/return', { brand_domain: domain, ...person })).body;
      expect(started.status).toBe('awaiting_channel');
      const sent = await post('/return/message', {
        request_id: started.request_id,
        request_token: started.request_token,
        message: 'Order was a gift.',
      });
      expect(sent.body.delivery).toEqual({ channel: null, sent_as: 'with_request' });
      await connect(domain, receiver);
      await waitFor(() => receiver.processed.size === 1);
      const delivered = [...receiver.processed.values()][0] as ReceivedWebhook;
      expect((delivered.payload as Json).data.follow_ups).toEqual([
        { message_id: sent.body.message.message_id, text: 'Order was a gift.', at: sent.body.message.at },
      ]);
      await waitFor(async () => (await statusOf(started.request_id)).status === 'delivered');
      expect(receiver.requests.length).toBe(1);
      const { thread } = await statusOf(started.request_id);
      expect(thread.map((m: Json) => [m.direction, m.channel])).toEqual([
        ['from_requester', 'webhook'],
        ['to_brand', 'webhook'],
      ]);
    } finally {
      await receiver.close();
    }
  });

  it('tells a webhook callback of every status change and brand reply, signed with the returned secret', async () => {
    const agent = await startWebhookReceiver((attempt) => (attempt === 1 ? 503 : 200));
    try {
      const domain = brandDomain();
      await connect(domain, brand);
      const res = await post('/return', {
        brand_domain: domain,
        ...person,
        protocol: 'webhook',
        callback_url: agent.url,
      });
      const started = res.body;
      expect(started.notifications.channel).toBe('webhook');
      expect(started.notifications.callback_secret).toMatch(/^whsec_/);
      // The agent verifies with the secret the request returned (standardwebhooks library).
      agent.secret = started.notifications.callback_secret;
      await waitFor(async () => (await statusOf(started.request_id)).status === 'delivered');
      await waitFor(() => agent.processed.size === 1);
      await brandReplies(
        started.request_id,
        'Hi Jane Doe, send it back with the label. Questions: +18005550100.',
        '<r1@brand.example>',
      );
      // The same reply arriving again is recorded once and told once.
      await brandReplies(started.request_id, 'duplicate', '<r1@brand.example>');
      await waitFor(() => agent.processed.size === 3);
      await waitFor(async () =>
        (await notificationStates(started.request_id)).every((s) => s === 'delivered'),
      );
      const events = [...agent.processed.values()].map((w) => w.payload as Json);
      expect(events.map((e) => e.type).sort()).toEqual([
        'return.message',
        'return.status_changed',
        'return.status_changed',
      ]);
      expect(events.every((e) => e.data.status_url === started.status_url)).toBe(true);
      const changes = events.filter((e) => e.type === 'return.status_changed').map((e) => e.data);
      expect(changes).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ status: 'delivered', previous_status: 'received', by: 'service' }),
          expect.objectContaining({ status: 'acknowledged', previous_status: 'delivered', by: 'brand' }),
        ]),
      );
      const reply = events.find((e) => e.type === 'return.message').data.message;
      expect(reply).toMatchObject({
        direction: 'from_brand',
        sender: 'support@brand.example',
        sender_verified: true,
        excerpt: 'Hi [the person’s name], send it back with the label. Questions: +18005550100.',
        attachments: ['label.pdf'],
      });
      // The failed first attempt was retried with the same webhook-id.
      const ids = agent.requests.map((r) => r.id);
      expect(new Set(ids).size).toBe(3);
      expect(ids.length).toBe(4);
      const rows = await rowsOf('return_notifications', started.request_id);
      expect(rows.map((r) => [r.state, r.channel])).toEqual(Array(3).fill(['delivered', 'webhook']));
    } finally {
      await agent.close();
    }
  });

  it('tells an A2A agent with the official client: one message per change, the same messageId on retries', async () => {
    let agent: A2aAgent | undefined;
    try {
      agent = await startA2aAgent((call) => (call === 1 ? 503 : 'ok'));
      const a = agent;
      const domain = brandDomain();
      await connect(domain, brand);
      const started = (
        await post('/return', { brand_domain: domain, ...person, protocol: 'a2a', callback_url: a.url })
      ).body;
      expect(started.notifications).toEqual({ channel: 'a2a', callback_secret: null });
      await waitFor(() => a.messages.length === 1);
      await brandReplies(started.request_id, 'Refund on its way.', '<r2@brand.example>');
      await waitFor(() => a.messages.length === 3);
      await waitFor(async () =>
        (await notificationStates(started.request_id)).every((s) => s === 'delivered'),
      );
      const rows = await rowsOf('return_notifications', started.request_id);
      expect(a.messages.map((m) => m.messageId).sort()).toEqual(rows.map((r) => r.id).sort());
      for (const message of a.messages) {
        expect(message.contextId).toBe(started.request_id);
        const text = message.parts.find((p) => p.content?.$case === 'text')?.content as { value: string };
        const data = message.parts.find((p) => p.content?.$case === 'data')?.content as { value: Json };
        expect(text.value).toMatch(/return request/);
        expect(data.value.data.request_id).toBe(started.request_id);
      }
      expect(a.calls).toBe(4);
    } finally {
      await agent?.close();
    }
  });

  it('mails the person when the protocol is email, with the event id as Message-ID', async () => {
    const domain = brandDomain();
    await connect(domain, brand);
    const started = (await post('/return', { brand_domain: domain, ...person })).body;
    await waitFor(() =>
      smtp.mails.some((m) => m.raw.includes(started.request_id) && m.to.includes(person.contact)),
    );
    const mail = smtp.mails.find((m) => m.raw.includes(started.request_id)) as { raw: string; to: string[] };
    expect(mail.to).toEqual([person.contact]);
    expect(mail.raw).toMatch(/^Subject: Your return request with .*: delivered/m);
    const [row] = await rowsOf('return_notifications', started.request_id);
    expect(mail.raw).toMatch(new RegExp(`^Message-ID: <${row?.id}@`, 'm'));
  });

  it('pushes nothing for protocol poll', async () => {
    const domain = brandDomain();
    await connect(domain, brand);
    const started = (await post('/return', { brand_domain: domain, ...person, protocol: 'poll' })).body;
    expect(started.notifications).toEqual({ channel: null, callback_secret: null });
    await waitFor(async () => (await statusOf(started.request_id)).status === 'delivered');
    expect(await rowsOf('return_notifications', started.request_id)).toEqual([]);
  });

  it('gives a kit while nothing can deliver: channels, a drafted message, the policy and the dispute route', async () => {
    const started = (await post('/return', { brand_domain: 'netflix.com', ...person })).body;
    expect(started.status).toBe('awaiting_channel');
    const kit = started.next_step.kit;
    // The ranking's order (`channels/ranking.ts`): the person's channels after any that deliver.
    expect(kit.channels).toEqual([
      { kind: 'phone', address: '+18665797172', source: 'registry' },
      { kind: 'support_page', address: 'https://help.netflix.com/', source: 'registry' },
      { kind: 'return_policy', address: 'https://help.netflix.com/legal/termsofuse', source: 'registry' },
    ]);
    expect(kit.return_policy_url).toBe('https://help.netflix.com/legal/termsofuse');
    expect(kit.draft).toMatchObject({
      personal_data: 'filled',
      subject: 'Return or refund request for order A-1001',
    });
    expect(kit.draft.body).toContain('card ending in 4242');
    expect(kit.draft.body).toContain('Jane Doe');
    expect(kit.card_dispute.time_limits.map((l: Json) => [l.days, l.approximate_last_day])).toEqual([
      [120, '2027-03-02'],
      [120, '2027-03-02'],
      [60, null],
    ]);
    for (const limit of kit.card_dispute.time_limits) expect(limit.source.url).toMatch(/^https:\/\//);

    const status = await statusOf(started.request_id);
    expect(status.next_step.kit.draft.personal_data).toBe('placeholders');
    expect(status.next_step.kit.draft.body).toContain('[your name]');
    expect(status.next_step.kit.draft.body).toContain('[last 4 digits of the card]');
    const text = JSON.stringify(status);
    for (const secret of ['jane.doe@example.com', 'Jane', 'Doe', '4242']) expect(text).not.toContain(secret);
  });

  it('offers cancel and message as public MCP tools with the token in the input', async () => {
    const domain = brandDomain();
    const started = (await post('/return', { brand_domain: domain, ...person })).body;
    const refused = await mcp.callTool({
      name: 'send_return_message',
      arguments: { request_id: started.request_id, request_token: 'rrt_nope', message: 'Hi' },
    });
    expect(refused.isError).toBe(true);
    expect(JSON.stringify(refused.content)).toMatch(/forbidden/);
    const sent = await mcp.callTool({
      name: 'send_return_message',
      arguments: { request_id: started.request_id, request_token: started.request_token, message: 'Hi' },
    });
    expect(sent.isError).toBeFalsy();
    expect((sent.structuredContent as Json).delivery.sent_as).toBe('with_request');
    const cancelled = await mcp.callTool({
      name: 'cancel_return_request',
      arguments: { request_id: started.request_id, request_token: started.request_token },
    });
    expect((cancelled.structuredContent as Json).status).toBe('cancelled');
    const { tools } = await mcp.listTools();
    const cancelTool = tools.find((t) => t.name === 'cancel_return_request');
    expect(cancelTool?.annotations).toMatchObject({ destructiveHint: true, readOnlyHint: false });
    expect(Object.keys(cancelTool?.inputSchema.properties ?? {})).toContain('request_token');
  });
});

describe.each(dialects)('secrets of a return request across a key rotation (%s)', (dialect) => {
  it('reseals the kept response and the callback secret under the new key; a retry gets the same token', async () => {
    const db = await createTestDatabase(dialect);
    const [oldKey, newKey] = [randomBytes(32).toString('base64'), randomBytes(32).toString('base64')];
    const start = (keys: Record<string, unknown>) =>
      startTestService(
        dialect,
        { 'rate_limits.unauthenticated_writes.points': 1000, ...keys },
        { database: db },
      );
    const body = {
      brand_domain: `rotation-${dialect}.example`,
      name: 'Jane Doe',
      contact: 'jane@example.com',
      protocol: 'webhook',
      callback_url: 'http://127.0.0.1:9/hooks',
    };
    const send = async (running: TestService) =>
      (
        await fetch(`${running.config.base_url}/return`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'Idempotency-Key': 'rotation-key' },
          body: JSON.stringify(body),
        })
      ).json() as Promise<Json>;
    let service = await start({ 'secrets.key': oldKey });
    try {
      const first = await send(service);
      expect(first.notifications.callback_secret).toMatch(/^whsec_/);
      await service.close();
      service = await start({ 'secrets.key': newKey, 'secrets.previous_keys': [oldKey] });
      const sealedUnder = `sealed:v1:${(SecretsKey.parse(newKey) as SecretsKey).id}:`;
      const kept = await db.handle.db
        .selectFrom('idempotency_keys')
        .select('response')
        .executeTakeFirstOrThrow();
      expect(kept.response.startsWith(`"${sealedUnder}`)).toBe(true);
      const request = await db.handle.db
        .selectFrom('return_requests')
        .select('callback_secret')
        .executeTakeFirstOrThrow();
      expect(request.callback_secret?.startsWith(sealedUnder)).toBe(true);
      expect(await send(service)).toEqual(first);
    } finally {
      await service.close();
      await db.drop();
    }
  });
});
