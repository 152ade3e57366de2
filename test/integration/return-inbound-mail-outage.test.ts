/**
 * A brand's reply arrives while PostgreSQL is unreachable: a real service process reaches the
 * database through the test's TCP proxy, which cuts every connection. The listener still answers
 * RCPT (the address is checked without the database), then answers the DATA `451` - a temporary
 * failure, so the sending server keeps the mail and tries again - never 250 for what it did not
 * write, never a permanent 5xx for a fault of ours; the process goes on. Once the database is back
 * the same mail is taken and recorded once.
 *
 * PostgreSQL only: SQLite is a file in the process, with no connection to lose.
 */
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ReplyAddresses } from '../../servers/features/returns/inbound/reply-address.ts';
import { createTestDatabase, postgresUrl, type TestDatabase } from '../helpers/databases.ts';
import { freePort } from '../helpers/ports.ts';
import { type ServiceProcess, spawnService } from '../helpers/process.ts';
import { waitFor } from '../helpers/receivers.ts';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.ts';

// Real child processes start slowly on a loaded machine: room to start, never a timing assertion.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

const DOMAIN = 'replies.agents.example';

describe.skipIf(!postgresUrl)('inbound mail while the database is unreachable (postgres)', () => {
  let db: TestDatabase;
  let proxy: TcpProxy;
  let service: ServiceProcess;
  let smtpPort: number;

  beforeAll(async () => {
    db = await createTestDatabase('postgres');
    const upstream = new URL(postgresUrl as string);
    proxy = await startTcpProxy({ host: upstream.hostname, port: Number(upstream.port || 5432) });
    const through = new URL(db.env.DATABASE_URL as string);
    through.hostname = '127.0.0.1';
    through.port = String(proxy.port);
    smtpPort = await freePort();
    service = await spawnService({
      DATABASE_URL: through.toString(),
      INBOUND_SMTP_PORT: String(smtpPort),
      INBOUND_SMTP_HOST: '127.0.0.1',
      INBOUND_MAIL_DOMAIN: DOMAIN,
    });
  });
  afterAll(async () => {
    if (service?.child.exitCode === null) await service.kill();
    await proxy?.close();
    await db?.drop();
  });

  it('answers 451 while the database is cut, then records the retried mail once', async () => {
    const base = `${service.url}/cs`;
    const res = await fetch(`${base}/return`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        brand_domain: 'outage-brand.example',
        name: 'Jane Doe',
        contact: 'jane@example.com',
      }),
    });
    expect(res.status).toBe(200);
    const { request_id: id } = (await res.json()) as { request_id: string };
    const { value } = await db.handle.db
      .selectFrom('service_secrets')
      .select('value')
      .where('name', '=', 'inbound_reply_key')
      .executeTakeFirstOrThrow();
    const to = new ReplyAddresses(value, DOMAIN).addressOf(id);
    const mail = {
      from: 'support@outage-brand.example',
      to,
      subject: 'About your return',
      text: 'We have it.',
      messageId: '<outage-reply-1@outage-brand.example>',
    };
    const send = async () => {
      const transport = nodemailer.createTransport({ host: '127.0.0.1', port: smtpPort, ignoreTLS: true });
      try {
        return await transport.sendMail(mail).then(
          (info) => ({ code: Number(info.response.slice(0, 3)), command: 'DATA' }),
          (err: Error & { responseCode?: number; command?: string }) => ({
            code: err.responseCode ?? 0,
            command: err.command ?? '',
          }),
        );
      } finally {
        transport.close();
      }
    };

    await proxy.cut();
    const during = await send();
    expect(during).toEqual({ code: 451, command: 'DATA' });
    expect(service.child.exitCode).toBeNull();

    await proxy.restore();
    await waitFor(async () => (await send()).code === 250, 60_000);
    // A sender's second try after the first one succeeded changes nothing either.
    expect((await send()).code).toBe(250);
    const status = (await (await fetch(`${base}/status?request_id=${id}`)).json()) as {
      thread: { subject: string; direction: string }[];
    };
    expect(status.thread.filter((m) => m.direction === 'from_brand').map((m) => m.subject)).toEqual([
      'About your return',
    ]);
  });
});
