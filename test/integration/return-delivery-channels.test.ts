/**
 * Delivery on the best channel a brand has (issue 29 part 2), once per dialect, end to end against
 * real local peers: the brand world of `test/helpers/brand-sites.ts` (sites by `Host` on loopback
 * behind a DNS server) with a brand whose A2A agent (the SDK's server) answers with a task, one
 * whose agent fails in every way a peer can before its email takes the request (a real SMTP
 * server), and one that registered an MCP server (the MCP SDK); the requester's own agent is a
 * real A2A server that hears of every change. What is checked is what each side sees: the message
 * the brand's agent got, the request's status, thread and history, the notifications.
 */
import { type Message, TaskState } from '@a2a-js/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Dialect } from '../../db/database.ts';
import { sweepChannelFailures } from '../../servers/features/returns/channels/repository.ts';
import { type A2aAgent, startA2aAgent } from '../helpers/a2a-agent.ts';
import { type BrandWorld, brandDomains, startBrandWorld } from '../helpers/brand-sites.ts';
import { dialects } from '../helpers/databases.ts';
import { startSmtpServer, waitFor } from '../helpers/receivers.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are checked field by field
type Json = any;

/** The data part of an A2A message (the event the message carries). */
const dataOf = (message: Message): Json =>
  message.parts.find((p) => p.content?.$case === 'data')?.content?.value as Json;
const textOf = (message: Message): string =>
  message.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');

describe.each(dialects)('delivery on every channel a brand has (%s)', (dialect: Dialect) => {
  let world: BrandWorld;
  let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
  let requester: A2aAgent;
  let service: TestService;

  beforeAll(async () => {
    world = await startBrandWorld();
    smtp = await startSmtpServer();
    requester = await startA2aAgent();
    service = await startTestService(dialect, {
      ...world.overrides,
      'outbound.allow_private_networks': true,
      // A peer that has not answered in 1.5 s has timed out: the attempt fails and is retried.
      'outbound.timeout_ms': 1500,
      'returns.discovery.request_budget_ms': 30_000,
      'returns.discovery.request_timeout_ms': 1000,
      'returns.delivery.poll_interval_ms': 50,
      'returns.delivery.base_delay_ms': 50,
      'returns.delivery.max_delay_ms': 200,
      'returns.delivery.max_attempts': 3,
      'returns.brand_tasks.poll_ms': 100,
      'returns.brand_tasks.max_poll_ms': 200,
      'smtp.url': smtp.url,
      'rate_limits.unauthenticated_writes.points': 1000,
    });
  });
  afterAll(async () => {
    await service?.close();
    await requester?.close();
    await world?.close();
    await smtp?.close();
  });

  const post = async (path: string, body: unknown): Promise<Json> => {
    const res = await fetch(`${service.config.base_url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    return res.json();
  };
  const statusOf = async (id: string): Promise<Json> =>
    (await fetch(`${service.config.base_url}/status?request_id=${id}`)).json();
  const until = async (id: string, status: string): Promise<Json> => {
    let last: Json;
    await waitFor(async () => {
      last = await statusOf(id);
      return last.status === status;
    }, 30_000);
    return last;
  };
  const fileReturn = (brand_domain: string, extra: Record<string, unknown> = {}) =>
    post('/return', {
      brand_domain,
      name: 'Jane Doe',
      contact: 'jane@example.com',
      order_number: 'A-1001',
      amount: 42.5,
      currency: 'EUR',
      message: 'The shoes are a size too small.',
      ...extra,
    });
  /** What the requester's agent was told about `requestId`, in order. */
  const toldOf = (requestId: string): Json[] =>
    requester.messages.map(dataOf).filter((event) => event?.data?.request_id === requestId);

  it("delivers to the brand's A2A agent, follows its task through a question and a decision, and tells the requester", async () => {
    const started = await fileReturn(brandDomains.a2a, { protocol: 'a2a', callback_url: requester.url });
    expect(started).toMatchObject({ status: 'received', delivery: { channel: 'a2a' } });
    const agent = world.a2aAgent;
    const before = agent.received.length;
    await waitFor(() => agent.received.length > before);
    const sent = agent.received[before] as Message;
    const delivery = await service.database.db
      .selectFrom('deliveries')
      .selectAll()
      .where('request_id', '=', started.request_id)
      .executeTakeFirstOrThrow();
    // The message as brands are told it comes (brand guide): the delivery id, the request as context.
    expect(sent.messageId).toBe(delivery.id);
    expect(sent.contextId).toBe(started.request_id);
    expect(textOf(sent)).toContain('Customer: Jane Doe');
    expect(dataOf(sent)).toMatchObject({
      type: 'return_request.created',
      data: { request_id: started.request_id, customer: { contact: 'jane@example.com' } },
    });

    // The agent opened a task (submitted): the request is delivered, the task followed.
    await until(started.request_id, 'delivered');
    const task = await service.database.db
      .selectFrom('brand_tasks')
      .selectAll()
      .where('request_id', '=', started.request_id)
      .executeTakeFirstOrThrow();
    expect(task).toMatchObject({
      state: 'pending',
      task_state: 'submitted',
      agent_url: `${world.origin('a2a')}/.well-known/agent-card.json`,
    });

    // The brand's agent asks something: acknowledged, the question in the thread.
    await agent.moveTask(task.task_id, {
      state: TaskState.TASK_STATE_INPUT_REQUIRED,
      message: 'Which size would you like instead, or do you prefer a refund?',
    });
    const asked = await until(started.request_id, 'acknowledged');
    expect(asked.history.at(-1)).toMatchObject({ status: 'acknowledged', by: 'brand' });
    expect(asked.thread).toContainEqual(
      expect.objectContaining({
        direction: 'from_brand',
        channel: 'a2a',
        sender_verified: true,
        excerpt: 'Which size would you like instead, or do you prefer a refund?',
      }),
    );

    // The requester answers: the follow-up goes to the open task, which works on.
    const seen = agent.received.length;
    await post('/return/message', {
      request_id: started.request_id,
      request_token: started.request_token,
      message: 'A refund, please.',
    });
    await waitFor(() => agent.received.length > seen);
    const followUp = agent.received[seen] as Message;
    expect(followUp.taskId).toBe(task.task_id);
    expect(dataOf(followUp)).toMatchObject({
      type: 'return_request.message',
      data: { message: { text: 'A refund, please.' } },
    });
    await waitFor(async () => {
      const row = await service.database.db
        .selectFrom('brand_tasks')
        .select('task_state')
        .where('id', '=', task.id)
        .executeTakeFirstOrThrow();
      return row.task_state === 'working';
    });

    // The brand decides: the task completes with an artifact naming the decision.
    await agent.moveTask(task.task_id, {
      state: TaskState.TASK_STATE_COMPLETED,
      message: 'Your refund of 42.50 EUR is on its way.',
      artifact: { name: 'Refund decision', data: { status: 'approved', amount: 42.5 } },
    });
    const approved = await until(started.request_id, 'approved');
    expect(approved.history.map((h: Json) => h.status)).toEqual([
      'received',
      'delivered',
      'acknowledged',
      'approved',
    ]);
    expect(
      approved.thread.filter((m: Json) => m.direction === 'from_brand').map((m: Json) => m.excerpt),
    ).toEqual([
      'Which size would you like instead, or do you prefer a refund?',
      'Your refund of 42.50 EUR is on its way.',
      '{"status":"approved","amount":42.5}',
    ]);
    await waitFor(async () => {
      const row = await service.database.db
        .selectFrom('brand_tasks')
        .selectAll()
        .where('id', '=', task.id)
        .executeTakeFirstOrThrow();
      return row.state === 'delivered' && row.task_state === 'completed';
    });

    // The requester's agent heard of each change and each message of the brand, once.
    await waitFor(() => toldOf(started.request_id).filter((e) => e.type === 'return.message').length >= 3);
    await waitFor(() =>
      toldOf(started.request_id).some(
        (e) => e.type === 'return.status_changed' && e.data.status === 'approved',
      ),
    );
    const told = toldOf(started.request_id);
    expect(told.filter((e) => e.type === 'return.status_changed').map((e) => e.data.status)).toEqual([
      'delivered',
      'acknowledged',
      'approved',
    ]);
    expect(new Set(requester.messages.map((m) => m.messageId)).size).toBe(requester.messages.length);
  });

  it("sends the requester's cancellation to the task the brand's agent has open, and stops following it", async () => {
    const agent = world.a2aAgent;
    const started = await fileReturn(brandDomains.a2a);
    await until(started.request_id, 'delivered');
    const task = await service.database.db
      .selectFrom('brand_tasks')
      .selectAll()
      .where('request_id', '=', started.request_id)
      .executeTakeFirstOrThrow();
    const seen = agent.received.length;
    await post('/return/cancel', {
      request_id: started.request_id,
      request_token: started.request_token,
      reason: 'Bought the right size in a shop',
    });
    await waitFor(() => agent.received.length > seen);
    const cancel = agent.received[seen] as Message;
    expect(cancel.taskId).toBe(task.task_id);
    expect(cancel.contextId).toBe(started.request_id);
    expect(dataOf(cancel)).toMatchObject({
      type: 'return_request.cancelled',
      data: { reason: 'Bought the right size in a shop' },
    });
    await waitFor(async () => {
      const row = await service.database.db
        .selectFrom('brand_tasks')
        .select('state')
        .where('id', '=', task.id)
        .executeTakeFirstOrThrow();
      return row.state === 'delivered';
    });
    expect((await statusOf(started.request_id)).status).toBe('cancelled');
  });

  it("sends the request again by email when the brand's agent fails the task it had opened", async () => {
    const flaky = world.flakyAgent;
    flaky.respond = () => 'ok';
    const started = await fileReturn(brandDomains.a2aFlaky);
    expect(started.delivery.channel).toBe('a2a');
    await until(started.request_id, 'delivered');
    const task = await service.database.db
      .selectFrom('brand_tasks')
      .selectAll()
      .where('request_id', '=', started.request_id)
      .executeTakeFirstOrThrow();
    try {
      await flaky.moveTask(task.task_id, {
        state: TaskState.TASK_STATE_FAILED,
        message: 'Our returns system is down.',
      });
      const mailed = () =>
        smtp.mails.filter(
          (m) => m.to.includes(`support@${brandDomains.a2aFlaky}`) && m.raw.includes(started.request_id),
        );
      await waitFor(() => mailed().length === 1, 30_000);
      let status: Json;
      await waitFor(async () => {
        status = await statusOf(started.request_id);
        return status.delivery.channel === 'email' && status.delivery.state === 'delivered';
      });
      // It had reached the brand: it stays delivered; the thread says what happened and where it went.
      expect(status.status).toBe('delivered');
      expect(status.thread.map((m: Json) => [m.direction, m.channel])).toEqual([
        ['to_brand', 'a2a'],
        ['from_brand', 'a2a'],
        ['from_service', 'a2a'],
        ['to_brand', 'email'],
      ]);
      expect(status.thread[1].excerpt).toBe('Our returns system is down.');
      expect(status.thread[2].excerpt).toBe(
        "A2A task failed: Our returns system is down. The request is sent again by the brand's email address.",
      );
    } finally {
      // The hold on the failed agent ends (housekeeping after `failed_channel_hold_hours`), whatever
      // this test found: the next one files a request to the same agent.
      await sweepChannelFailures(service.database.db, new Date(Date.now() + 400 * 3_600_000).toISOString());
    }
  });

  it('retries an A2A agent that errors, answers garbage or hangs, then falls back to the email on its site', async () => {
    const flaky = world.flakyAgent;
    // Three attempts, three ways to fail: an HTTP error, a page that is not JSON-RPC, no answer.
    const fates = [500, 'garbage', 'hang'] as const;
    const first = flaky.calls;
    flaky.respond = (call) => fates[(call - first - 1) % fates.length] ?? 500;
    const started = await fileReturn(brandDomains.a2aFlaky);
    expect(started).toMatchObject({ status: 'received', delivery: { channel: 'a2a' } });

    await waitFor(() => smtp.mails.some((m) => m.to.includes(`support@${brandDomains.a2aFlaky}`)), 30_000);
    const delivered = await until(started.request_id, 'delivered');
    expect(flaky.calls - first).toBe(3);
    expect(delivered.history.map((h: Json) => [h.status, h.note])).toEqual([
      ['received', 'Request received'],
      ['delivered', 'Delivered by email'],
    ]);
    expect(delivered.delivery).toMatchObject({ channel: 'email', state: 'delivered' });
    expect(delivered.thread).toContainEqual(
      expect.objectContaining({
        direction: 'from_service',
        subject: "The brand's A2A agent did not take the request",
        excerpt: expect.stringMatching(
          /^a2a delivery failed after 3 attempt\(s\): A2A agent timed out\. The request is sent again by the brand's email address\.$/,
        ),
      }),
    );
    const rows = await service.database.db
      .selectFrom('deliveries')
      .select(['channel', 'state', 'attempts'])
      .where('request_id', '=', started.request_id)
      .orderBy('created_at')
      .execute();
    expect(rows).toEqual([
      { channel: 'a2a', state: 'failed', attempts: 3 },
      { channel: 'email', state: 'delivered', attempts: 1 },
    ]);

    // The failed agent is held out of delivery, and the brand is discovered again at the next read.
    const res = await fetch(`${service.config.base_url}/brands/${brandDomains.a2aFlaky}`);
    expect(res.status).toBe(200);
    const channels = (await res.json()) as Json;
    expect(channels.channels.find((c: Json) => c.kind === 'a2a')).toMatchObject({
      delivery_rank: null,
      failed: { reason: expect.stringContaining('A2A agent timed out') },
    });
    expect(channels.delivery_channel).toBe('email');
  });

  it('delivers to a registered MCP server by calling its returns tool, and records its answer', async () => {
    const domain = brandDomains.mcpRegistered;
    const { account } = await service.services.accounts.create({ email: `owner-${dialect}@${domain}` });
    const registered = await service.services.directory.registerBrandAgent(account.id, domain, {
      domain,
      endpoint: `http://${domain}:${world.port}/mcp`,
      protocols: ['mcp'],
      support_contact: { url: `http://${domain}:${world.port}/` },
    });
    expect(registered.channel).toBe('mcp');

    const seen = world.mcpCalls.length;
    const started = await fileReturn(domain);
    expect(started).toMatchObject({ status: 'received', delivery: { channel: 'mcp' } });
    const acknowledged = await until(started.request_id, 'acknowledged');
    expect(world.mcpCalls.slice(seen)).toEqual([
      {
        name: 'open_return_case',
        arguments: {
          order_number: 'A-1001',
          reason: expect.stringContaining('The shoes are a size too small.'),
          customer_email: 'jane@example.com',
          request_id: started.request_id,
        },
      },
    ]);
    expect(acknowledged.history.map((h: Json) => [h.status, h.by])).toEqual([
      ['received', 'service'],
      ['delivered', 'service'],
      ['acknowledged', 'brand'],
    ]);
    expect(acknowledged.thread).toContainEqual(
      expect.objectContaining({
        direction: 'from_brand',
        channel: 'mcp',
        excerpt: expect.stringContaining(`Case RC-${seen + 1} opened`),
      }),
    );
  });
});
