/**
 * `WORKERS=N npm start` (node:cluster): on PostgreSQL two workers answer on one port (told apart by
 * the `pid` label of /metrics), and SIGTERM to the primary drains both and exits 0; the inbound SMTP
 * listener is shared the same way; on SQLite more than one worker is refused at start with a
 * message naming the fix.
 */
import http from 'node:http';
import nodemailer from 'nodemailer';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ReplyAddresses } from '../../servers/features/returns/inbound/reply-address.ts';
import { createTestDatabase, postgresUrl, type TestDatabase } from '../helpers/databases.ts';
import { freePort } from '../helpers/ports.ts';
import { type ServiceProcess, spawnService } from '../helpers/process.ts';
import { waitFor } from '../helpers/receivers.ts';

// Real child processes start slowly on a loaded machine: room to start, never a timing assertion.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

/** GET on a connection of its own, so the primary hands each request to the next worker. */
const getOnNewConnection = (url: string) =>
  new Promise<{ status: number; body: string }>((resolve, reject) => {
    http
      .get(url, { agent: false }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          body += d;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      })
      .once('error', reject);
  });

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('WORKERS on SQLite (sqlite)', () => {
  it('refuses more than one worker, naming PostgreSQL, with exit code 78', async () => {
    const db = await createTestDatabase('sqlite');
    try {
      await expect(spawnService({ ...db.env, WORKERS: '2' })).rejects.toThrow(
        /exited with 78: Invalid configuration:\n {2}- WORKERS=2 needs PostgreSQL \(DATABASE_URL=postgres:\/\/\.\.\.\)/,
      );
    } finally {
      await db.drop();
    }
  });
});

describe.runIf(postgresUrl)('WORKERS=2 on PostgreSQL (postgres)', () => {
  let db: TestDatabase | undefined;
  let service: ServiceProcess | undefined;

  afterEach(async () => {
    if (service && service.child.exitCode === null) await service.kill();
    await db?.drop();
  });

  it('answers from two worker processes on one port; SIGTERM to the primary stops both, exit 0', async () => {
    db = await createTestDatabase('postgres');
    service = await spawnService({ ...db.env, WORKERS: '2', METRICS_ENABLED: '1' });
    const primary = service.child.pid as number;
    const pids = new Set<number>();
    await waitFor(async () => {
      const res = await getOnNewConnection(`${service?.url}/metrics`);
      // A worker listens from its first moment and answers 503 until its services are up.
      if (res.status === 503) return false;
      expect(res.status).toBe(200);
      const pid = /^agent_service_process_start_time_seconds\{pid="(\d+)"\}/m.exec(res.body)?.[1];
      pids.add(Number(pid));
      return pids.size === 2;
    }, 60_000);
    expect(pids.has(primary)).toBe(false);
    for (const pid of pids) expect(alive(pid)).toBe(true);

    // Both serve the application, not only metrics.
    const ready = await getOnNewConnection(`${service.url}/api/public/health/ready`);
    expect(ready.status).toBe(200);

    expect(await service.stop()).toBe(0);
    await waitFor(() => [...pids].every((pid) => !alive(pid)));
  }, 180_000);

  it('shares the inbound SMTP port between the workers as it does HTTP: mail on separate connections is recorded', async () => {
    db = await createTestDatabase('postgres');
    const port = await freePort();
    service = await spawnService({
      ...db.env,
      WORKERS: '2',
      METRICS_ENABLED: '1',
      INBOUND_SMTP_PORT: String(port),
      INBOUND_SMTP_HOST: '127.0.0.1',
      INBOUND_MAIL_DOMAIN: 'replies.agents.example',
    });
    const pids = new Set<number>();
    await waitFor(async () => {
      const res = await getOnNewConnection(`${service?.url}/metrics`);
      const pid = /^agent_service_process_start_time_seconds\{pid="(\d+)"\}/m.exec(res.body)?.[1];
      if (res.status === 200) pids.add(Number(pid));
      return pids.size === 2;
    }, 60_000);
    const base = `${service.url}/cs`;
    const res = await fetch(`${base}/return`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        brand_domain: 'cluster-brand.example',
        name: 'Jane Doe',
        contact: 'jane@example.com',
      }),
    });
    const { request_id: id } = (await res.json()) as { request_id: string };
    // The address the service would put in Reply-To: the key is the service secret every worker shares.
    const { value } = await db.handle.db
      .selectFrom('service_secrets')
      .select('value')
      .where('name', '=', 'inbound_reply_key')
      .executeTakeFirstOrThrow();
    const address = new ReplyAddresses(value, 'replies.agents.example').addressOf(id);
    // One connection per mail: the primary hands each to the next worker.
    for (let i = 1; i <= 4; i++) {
      const transport = nodemailer.createTransport({
        host: '127.0.0.1',
        port,
        secure: false,
        ignoreTLS: true,
      });
      const sent = await transport.sendMail({
        from: 'support@cluster-brand.example',
        to: address,
        subject: `Reply ${i}`,
        text: `Reply number ${i}.`,
      });
      expect(sent.response).toMatch(/^250/);
      transport.close();
    }
    const status = (await (await fetch(`${base}/status?request_id=${id}`)).json()) as {
      thread: { subject: string; sender_verified: boolean }[];
    };
    expect(status.thread.map((m) => m.subject).sort()).toEqual(['Reply 1', 'Reply 2', 'Reply 3', 'Reply 4']);
    expect(await service.stop()).toBe(0);
  }, 180_000);
});
