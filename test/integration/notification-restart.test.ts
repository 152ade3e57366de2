/**
 * A restart never loses or duplicates a notification to the requester's agent: the process is
 * killed (SIGKILL) while notifications are pending and one is in flight, a new process starts on
 * the same database, and the agent's webhook receives each status change once, by its event id.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { upsertBrandChannel } from '../../servers/features/returns/repository.ts';
import { SecretBox } from '../../servers/secrets.ts';
import { createTestDatabase, dialects, type TestDatabase } from '../helpers/databases.ts';
import { type ServiceProcess, spawnService } from '../helpers/process.ts';
import { startWebhookReceiver, type WebhookReceiver, waitFor } from '../helpers/receivers.ts';

// Real child processes start slowly on a loaded machine: room to start, never a timing assertion.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

const outboxEnv = {
  OUTBOUND_ALLOW_PRIVATE: '1',
  DELIVERY_LEASE_MS: '1500',
  DELIVERY_POLL_INTERVAL_MS: '100',
  DELIVERY_BASE_DELAY_MS: '200',
};

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
    await upsertBrandChannel(
      db.handle.db,
      new SecretBox(null),
      {
        brand_domain: 'notify-crash.example',
        webhook_url: brand.url,
        webhook_secret: brand.secret,
        email: null,
      },
      new Date().toISOString(),
    );
    const first = await spawnService({ ...db.env, ...outboxEnv });
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

    const second = await spawnService({ ...(db as TestDatabase).env, ...outboxEnv });
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
