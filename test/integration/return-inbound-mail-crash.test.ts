/**
 * A brand's reply taken with `250` is in the database before the `250` (issue 29, "a process killed
 * at any point loses nothing and sends nothing twice"): replies are sent to a real service process,
 * the whole process group is killed (SIGKILL) the moment the last `250` arrives, and a new process
 * on the same database shows every acknowledged reply in the request's thread, once. The sending
 * server's retries of the same mails (it may not have seen a `250` before the crash) change nothing.
 */
import nodemailer from 'nodemailer';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ReplyAddresses } from '../../servers/features/returns/inbound/reply-address.ts';
import { createTestDatabase, dialects, type TestDatabase } from '../helpers/databases.ts';
import { freePort } from '../helpers/ports.ts';
import { type ServiceProcess, spawnService } from '../helpers/process.ts';

// Real child processes start slowly on a loaded machine: room to start, never a timing assertion.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

const DOMAIN = 'replies.agents.example';
const REPLIES = 5;

describe.each(dialects)('inbound mail across a crash (%s)', (dialect) => {
  let db: TestDatabase | undefined;
  const processes: ServiceProcess[] = [];

  afterEach(async () => {
    for (const p of processes.splice(0)) if (p.child.exitCode === null) await p.kill();
    await db?.drop();
  });

  /** A service process with the inbound listener on a port of its own. */
  async function start(database: TestDatabase) {
    const port = await freePort();
    const service = await spawnService(
      {
        ...database.env,
        INBOUND_SMTP_PORT: String(port),
        INBOUND_SMTP_HOST: '127.0.0.1',
        INBOUND_MAIL_DOMAIN: DOMAIN,
      },
      undefined,
      { processGroup: true },
    );
    processes.push(service);
    return { service, port };
  }

  it('keeps every reply answered 250 when the process dies right after, and records a retried one once', async () => {
    db = await createTestDatabase(dialect);
    const first = await start(db);
    const res = await fetch(`${first.service.url}/cs/return`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        brand_domain: 'crash-replies.example',
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
    const mails = Array.from({ length: REPLIES }, (_, i) => ({
      from: 'support@crash-replies.example',
      to,
      subject: `Reply ${i + 1}`,
      text: `Reply number ${i + 1} about your return.`,
      messageId: `<crash-reply-${i + 1}@crash-replies.example>`,
    }));
    /** Sends every mail over one connection; the codes the listener answered DATA with. */
    const sendAll = async (port: number) => {
      const transport = nodemailer.createTransport({ host: '127.0.0.1', port, ignoreTLS: true, pool: true });
      try {
        const codes: number[] = [];
        for (const mail of mails) codes.push(Number((await transport.sendMail(mail)).response.slice(0, 3)));
        return codes;
      } finally {
        transport.close();
      }
    };

    expect(await sendAll(first.port)).toEqual(Array(REPLIES).fill(250));
    // Killed the moment the last 250 arrived: no shutdown hook, no drain.
    await first.service.killGroup();

    const second = await start(db);
    const thread = async () => {
      const status = (await (await fetch(`${second.service.url}/cs/status?request_id=${id}`)).json()) as {
        thread: { subject: string; direction: string }[];
      };
      return status.thread.filter((m) => m.direction === 'from_brand').map((m) => m.subject);
    };
    const subjects = mails.map((m) => m.subject);
    expect(await thread()).toEqual(subjects);

    // The sending server retries what it may not have seen acknowledged: taken, and recorded once.
    expect(await sendAll(second.port)).toEqual(Array(REPLIES).fill(250));
    expect(await thread()).toEqual(subjects);
  });
});
