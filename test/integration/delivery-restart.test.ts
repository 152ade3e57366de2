/**
 * A restart never loses or duplicates a delivery: the process is killed (SIGKILL) between accepting
 * a request and completing its delivery, a new process starts on the same database, and the brand's
 * webhook processes the request exactly once by its delivery id. The same holds for the
 * notifications to the requester's agent: killed while some are pending and one is in flight, each
 * status change is told once, by its event id. And for a brand's A2A agent: killed while the
 * request's message is in flight, then while the task it opened is being read, the agent gets the
 * message once (by its messageId) and its answer moves the request once, told once.
 */
import { randomUUID } from 'node:crypto';
import { TaskState } from '@a2a-js/sdk';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { insertBrandAgent } from '../../servers/features/directory/repository.ts';
import { upsertBrandChannel } from '../../servers/features/returns/repository.ts';
import { SecretBox } from '../../servers/secrets.ts';
import { type BrandWorld, brandDomains, startBrandWorld } from '../helpers/brand-sites.ts';
import { createTestDatabase, dialects, type TestDatabase } from '../helpers/databases.ts';
import { type ServiceProcess, spawnService } from '../helpers/process.ts';
import { startWebhookReceiver, type WebhookReceiver, waitFor } from '../helpers/receivers.ts';

// Real child processes start slowly on a loaded machine: room to start, never a timing assertion.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

const deliveryEnv = {
  OUTBOUND_ALLOW_PRIVATE: '1',
  DELIVERY_LEASE_MS: '1500',
  DELIVERY_POLL_INTERVAL_MS: '100',
  DELIVERY_BASE_DELAY_MS: '200',
};

/** A service process on `db` whose brand `domain` receives requests at `receiver`'s webhook. */
async function startWithBrand(db: TestDatabase, domain: string, receiver: WebhookReceiver) {
  const channel = {
    brand_domain: domain,
    webhook_url: receiver.url,
    webhook_secret: receiver.secret,
    email: null,
  };
  await upsertBrandChannel(db.handle.db, new SecretBox(null), channel, new Date().toISOString());
  return spawnService({ ...db.env, ...deliveryEnv });
}

describe.each(dialects)('delivery across a crash (%s)', (dialect) => {
  let db: TestDatabase | undefined;
  let receiver: WebhookReceiver | undefined;
  const processes: ServiceProcess[] = [];

  afterEach(async () => {
    for (const p of processes.splice(0)) await p.kill();
    await receiver?.close();
    await db?.drop();
  });

  async function setUp(respond: Parameters<typeof startWebhookReceiver>[0]) {
    db = await createTestDatabase(dialect);
    receiver = await startWebhookReceiver(respond);
    const first = await startWithBrand(db, 'crash-brand.example', receiver);
    processes.push(first);
    const res = await fetch(`${first.url}/cs/return`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        brand_domain: 'crash-brand.example',
        name: 'Jane Doe',
        contact: 'jane@example.com',
      }),
    });
    expect(res.status).toBe(200);
    return { first, started: (await res.json()) as { request_id: string } };
  }

  it('redelivers a delivery that was in flight when the process died, with the same delivery id', async () => {
    // The brand holds the first attempt open; the process dies while waiting for it.
    const { first, started } = await setUp((attempt) => (attempt === 1 ? 'hang' : 200));
    const r = receiver as WebhookReceiver;
    await waitFor(() => r.requests.length === 1);
    await first.kill();

    const second = await spawnService({ ...(db as TestDatabase).env, ...deliveryEnv });
    processes.push(second);
    await waitFor(() => r.processed.size === 1);
    await waitFor(async () => {
      const status = await (await fetch(`${second.url}/cs/status?request_id=${started.request_id}`)).json();
      return status.status === 'delivered';
    });
    expect(new Set(r.requests.map((x) => x.id)).size).toBe(1);
    expect(r.processed.size).toBe(1);
    const rows = await (db as TestDatabase).handle.db.selectFrom('deliveries').selectAll().execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ state: 'delivered', attempts: 2 });
  });

  it('delivers exactly once when the process is killed right after accepting', async () => {
    const { first, started } = await setUp(() => 200);
    await first.kill();
    const second = await spawnService({ ...(db as TestDatabase).env, ...deliveryEnv });
    processes.push(second);
    const r = receiver as WebhookReceiver;
    await waitFor(async () => {
      const status = await (await fetch(`${second.url}/cs/status?request_id=${started.request_id}`)).json();
      return status.status === 'delivered';
    });
    expect(r.processed.size).toBe(1);
    expect(new Set(r.requests.map((x) => x.id)).size).toBe(1);
    // Let the new process run a few more polls: nothing is sent again.
    const seen = r.requests.length;
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(r.requests.length).toBe(seen);
  });

  it('finishes in-flight deliveries on SIGTERM before exiting', async () => {
    const { first, started } = await setUp(() => 200);
    const code = await first.stop();
    expect(code).toBe(0);
    const status = await (db as TestDatabase).handle.db
      .selectFrom('return_requests')
      .select('status')
      .where('id', '=', started.request_id)
      .executeTakeFirstOrThrow();
    // Either delivered before the stop, or still queued, unleased, for the next process - never lost.
    expect(['delivered', 'received']).toContain(status.status);
    const delivery = await (db as TestDatabase).handle.db
      .selectFrom('deliveries')
      .selectAll()
      .where('request_id', '=', started.request_id)
      .executeTakeFirstOrThrow();
    if (status.status === 'received') expect(delivery).toMatchObject({ state: 'pending', lease_owner: null });
    else expect(delivery.state).toBe('delivered');
  });
});

describe.each(dialects)('requester notifications across a crash (%s)', (dialect) => {
  let db: TestDatabase | undefined;
  const receivers: WebhookReceiver[] = [];
  const processes: ServiceProcess[] = [];

  afterEach(async () => {
    for (const p of processes.splice(0)) await p.kill();
    for (const r of receivers.splice(0)) await r.close();
    await db?.drop();
  });

  it('tells every pending status change once after a kill -9, under the same event ids', async () => {
    db = await createTestDatabase(dialect);
    const brand = await startWebhookReceiver();
    // The agent holds every attempt open while the first process lives; it dies waiting.
    let firstAlive = true;
    const agent = await startWebhookReceiver(() => (firstAlive ? 'hang' : 200));
    receivers.push(brand, agent);
    const first = await startWithBrand(db, 'notify-crash.example', brand);
    processes.push(first);
    const post = async (path: string, body: unknown) => {
      const res = await fetch(`${first.url}/cs${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(res.status).toBe(200);
      return (await res.json()) as {
        request_id: string;
        request_token: string;
        notifications: { callback_secret: string };
      };
    };
    const started = await post('/return', {
      brand_domain: 'notify-crash.example',
      name: 'Jane Doe',
      contact: 'jane@example.com',
      protocol: 'webhook',
      callback_url: agent.url,
    });
    agent.secret = started.notifications.callback_secret;
    // received -> delivered is told (and held open by the agent); then the requester cancels.
    await waitFor(() => agent.requests.length >= 1);
    await post('/return/cancel', { request_id: started.request_id, request_token: started.request_token });
    await first.kill();
    firstAlive = false;

    const rows = () =>
      (db as TestDatabase).handle.db
        .selectFrom('return_notifications')
        .selectAll()
        .where('request_id', '=', started.request_id)
        .execute();
    const queued = await rows();
    expect(queued).toHaveLength(2);
    expect(queued.some((r) => r.state === 'pending')).toBe(true);

    const second = await spawnService({ ...(db as TestDatabase).env, ...deliveryEnv });
    processes.push(second);
    await waitFor(() => agent.processed.size === 2);
    await waitFor(async () => (await rows()).every((r) => r.state === 'delivered'));
    const ids = new Set(queued.map((r) => r.id));
    // Every attempt, before and after the crash, carried one of the two event ids: nothing new.
    expect(new Set(agent.requests.map((r) => r.id))).toEqual(ids);
    expect(new Set(agent.processed.keys())).toEqual(ids);
    const statuses = [...agent.processed.values()].map(
      (w) => (w.payload as { data: { status: string } }).data.status,
    );
    expect(statuses.sort()).toEqual(['cancelled', 'delivered']);
    // A few more polls of the new process send nothing again.
    const seen = agent.requests.length;
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(agent.requests.length).toBe(seen);
  });
});

describe.each(dialects)("a brand's A2A agent across crashes (%s)", (dialect) => {
  let db: TestDatabase | undefined;
  let world: BrandWorld | undefined;
  let requester: WebhookReceiver | undefined;
  const processes: ServiceProcess[] = [];

  afterEach(async () => {
    for (const p of processes.splice(0)) await p.kill();
    await requester?.close();
    await world?.close();
    await db?.drop();
  });

  // Three processes start one after the other: room for a loaded machine, never a timing assertion.
  it('sends the message once and records the task once after a kill -9 in the send and one in a poll', async () => {
    db = await createTestDatabase(dialect);
    world = await startBrandWorld();
    requester = await startWebhookReceiver();
    const agent = world.a2aAgent;
    let hang = false;
    agent.respond = () => (hang ? 'hang' : 'ok');
    const domain = brandDomains.a2a;
    const at = new Date().toISOString();
    // The brand registered its A2A agent (no discovery: the registered agent outranks anything).
    const accountId = randomUUID();
    await db.handle.db
      .insertInto('accounts')
      .values({ id: accountId, email: `owner@${domain}`, password_hash: null, created_at: at })
      .execute();
    await insertBrandAgent(db.handle.db, {
      id: randomUUID(),
      account_id: accountId,
      domain,
      name: 'Agentic Shoe Outlet',
      endpoint: `${world.origin('a2a')}/.well-known/agent-card.json`,
      protocols: JSON.stringify(['a2a']),
      support_contact: JSON.stringify({ url: `${world.origin('a2a')}/` }),
      return_contact: JSON.stringify({ url: `${world.origin('a2a')}/` }),
      return_policy: null,
      created_at: at,
      updated_at: at,
    });
    const env = {
      ...(db as TestDatabase).env,
      ...deliveryEnv,
      OUTBOUND_DNS_SERVERS: world.dns.address,
      RETURNS_TASK_POLL_MS: '100',
    };
    const spawn = async () => {
      const p = await spawnService(env);
      processes.push(p);
      return p;
    };

    // Killed while its message waits at the brand's agent.
    hang = true;
    const first = await spawn();
    const res = await fetch(`${first.url}/cs/return`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        brand_domain: domain,
        name: 'Jane Doe',
        contact: 'jane@example.com',
        protocol: 'webhook',
        callback_url: requester.url,
      }),
    });
    expect(res.status).toBe(200);
    const started = (await res.json()) as {
      request_id: string;
      delivery: { channel: string };
      notifications: { callback_secret: string };
    };
    expect(started.delivery.channel).toBe('a2a');
    requester.secret = started.notifications.callback_secret;
    await waitFor(() => agent.calls >= 1);
    await first.kill();

    // The next process sends it again, under the same messageId; the agent opens one task.
    hang = false;
    const second = await spawn();
    const statusOf = async (p: ServiceProcess) =>
      (await (await fetch(`${p.url}/cs/status?request_id=${started.request_id}`)).json()) as {
        status: string;
        history: { status: string }[];
        thread: { direction: string; excerpt: string | null }[];
      };
    await waitFor(async () => (await statusOf(second)).status === 'delivered');
    expect(agent.received).toHaveLength(1);
    const rows = () =>
      (db as TestDatabase).handle.db
        .selectFrom('brand_tasks')
        .selectAll()
        .where('request_id', '=', started.request_id)
        .execute();
    const [task] = await rows();
    expect(task).toMatchObject({ state: 'pending', task_state: 'submitted' });
    const delivery = await (db as TestDatabase).handle.db
      .selectFrom('deliveries')
      .selectAll()
      .where('request_id', '=', started.request_id)
      .executeTakeFirstOrThrow();
    expect(agent.received[0]?.messageId).toBe(delivery.id);
    expect(delivery).toMatchObject({ state: 'delivered', attempts: 2 });

    // Killed while it reads the task the brand has just decided.
    hang = true;
    const calls = agent.calls;
    await agent.moveTask(task?.task_id as string, {
      state: TaskState.TASK_STATE_COMPLETED,
      message: 'Refund approved.',
      artifact: { name: 'Decision', data: { status: 'approved' } },
    });
    await waitFor(() => agent.calls > calls);
    await second.kill();
    expect((await rows())[0]).toMatchObject({ state: 'pending', task_state: 'submitted' });

    hang = false;
    const third = await spawn();
    await waitFor(async () => (await statusOf(third)).status === 'approved');
    await waitFor(async () => (await rows())[0]?.state === 'delivered');
    const final = await statusOf(third);
    expect(final.history.map((h) => h.status)).toEqual(['received', 'delivered', 'approved']);
    expect(final.thread.filter((m) => m.direction === 'from_brand').map((m) => m.excerpt)).toEqual([
      'Refund approved.',
      '{"status":"approved"}',
    ]);
    expect(final.thread.filter((m) => m.direction === 'to_brand')).toHaveLength(1);
    expect(agent.received).toHaveLength(1);

    // The requester's agent is told each change and each message once, under one id each.
    const r = requester as WebhookReceiver;
    await waitFor(() => r.processed.size === 4);
    const events = [...r.processed.values()].map(
      (w) => w.payload as { type: string; data: { status?: string } },
    );
    expect(events.map((e) => e.data.status ?? e.type).sort()).toEqual([
      'approved',
      'delivered',
      'return.message',
      'return.message',
    ]);
    const seen = r.requests.length;
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(r.requests.length).toBe(seen);
  }, 300_000);
});
