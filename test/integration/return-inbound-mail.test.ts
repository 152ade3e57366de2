/**
 * Brands' replies by email (issue 29 part 3), once per dialect, against real peers: an SMTP server
 * (`smtp-server`) as the brand's mailbox receives the delivery and, as the person's mailbox, the
 * forwarded reply; the brand answers through our inbound listener with nodemailer's SMTP client,
 * signing with DKIM (nodemailer) under a key published by the local DNS server that the service
 * resolves through (`outbound.dns_servers`, used by mailauth); the requester's agent is a Standard
 * Webhooks receiver.
 */
import { generateKeyPairSync } from 'node:crypto';
import { simpleParser } from 'mailparser';
import nodemailer, { type SendMailOptions } from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/databases.ts';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server.ts';
import {
  type ReceivedMail,
  startSmtpServer,
  startWebhookReceiver,
  type WebhookReceiver,
  waitFor,
} from '../helpers/receivers.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

// biome-ignore lint/suspicious/noExplicitAny: JSON bodies are checked structurally
type Json = any;

const INBOUND_DOMAIN = 'replies.agents.example';
const MAX_BYTES = 200_000;

const pem = (key: { export(o: { type: 'pkcs8'; format: 'pem' }): string | Buffer }) =>
  key.export({ type: 'pkcs8', format: 'pem' }).toString();

describe.each(dialects)("brands' replies by email (%s)", (dialect) => {
  let service: TestService;
  let dns: TestDnsServer;
  let mailbox: Awaited<ReturnType<typeof startSmtpServer>>;
  let agent: WebhookReceiver;
  let inboundPort: number;
  let seq = 0;
  // Public-looking names (GET /brands takes public domains only); they resolve through the local DNS server.
  const brandDomain = () => `inbound-mailbrand-${dialect}-${++seq}.com`;
  // The brand's DKIM key, published at sel1._domainkey.<brand>; the forger's is published nowhere.
  const brandKey = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const forgerKey = generateKeyPairSync('rsa', { modulusLength: 2048 });

  beforeAll(async () => {
    dns = await startDnsServer();
    mailbox = await startSmtpServer();
    agent = await startWebhookReceiver();
    service = await startTestService(dialect, {
      'rate_limits.unauthenticated_writes.points': 1000,
      'smtp.url': mailbox.url,
      'smtp.from': 'Returns desk <returns@agents.example>',
      'outbound.dns_servers': [dns.address],
      'returns.inbound_mail.port': 0,
      'returns.inbound_mail.host': '127.0.0.1',
      'returns.inbound_mail.domain': INBOUND_DOMAIN,
      'returns.inbound_mail.max_bytes': MAX_BYTES,
    });
    inboundPort = service.services.inboundMail?.port as number;
  });
  afterAll(async () => {
    await service?.close();
    await agent?.close();
    await mailbox?.close();
    await dns?.close();
  });

  /** A brand whose mail is authenticated: its DKIM key, a DMARC policy, and SPF that allows no one. */
  function publishBrand(domain: string): void {
    const pub = brandKey.publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
    dns.txt.set(`sel1._domainkey.${domain}`, [`v=DKIM1; k=rsa; p=${pub}`]);
    dns.txt.set(`_dmarc.${domain}`, ['v=DMARC1; p=reject']);
    dns.txt.set(domain, ['v=spf1 -all']);
  }

  /** A request for `domain`, delivered by email to its returns address; the mail the brand got. */
  async function deliveredRequest(
    domain: string,
  ): Promise<{ id: string; token: string; mail: ReceivedMail }> {
    publishBrand(domain);
    await service.services.returns.connectBrandChannel({
      brand_domain: domain,
      webhook_url: null,
      webhook_secret: null,
      email: `returns@${domain}`,
    });
    const res = await fetch(`${service.config.base_url}/return`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        brand_domain: domain,
        name: 'Jane Doe',
        contact: 'jane.doe@example.com',
        order_number: 'A-1001',
        message: 'Wrong size.',
        protocol: 'webhook',
        callback_url: agent.url,
      }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Json;
    agent.secret = body.notifications.callback_secret;
    await waitFor(() => mailbox.mails.some((m) => m.raw.includes(body.request_id)));
    const mail = mailbox.mails.find((m) => m.raw.includes(body.request_id)) as ReceivedMail;
    await waitFor(async () => (await statusOf(body.request_id)).status === 'delivered');
    return { id: body.request_id, token: body.request_token, mail };
  }

  const statusOf = async (id: string): Promise<Json> =>
    (await fetch(`${service.config.base_url}/status?request_id=${id}`)).json();
  const agentEvents = (requestId: string, type: string) =>
    [...agent.processed.values()]
      .map((w) => w.payload as Json)
      .filter((p) => p.data.request_id === requestId && p.type === type);

  const inbound = () =>
    nodemailer.createTransport({ host: '127.0.0.1', port: inboundPort, secure: false, ignoreTLS: true });

  /** A message's bytes as nodemailer writes them, DKIM-signed with `key` for `domain` when given. */
  async function compose(
    message: SendMailOptions,
    dkim?: { domain: string; key: ReturnType<typeof generateKeyPairSync>['privateKey'] },
  ): Promise<Buffer> {
    const writer = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows' });
    const info = await writer.sendMail({
      ...message,
      ...(dkim ? { dkim: { domainName: dkim.domain, keySelector: 'sel1', privateKey: pem(dkim.key) } } : {}),
    });
    return info.message as Buffer;
  }

  /** Sends raw bytes to the listener; resolves with the SMTP answer or rejects with its error. */
  const send = (raw: Buffer | string, from: string, to: string) =>
    inbound().sendMail({ envelope: { from, to: [to] }, raw });

  it('sends from the service with the per-request address as Reply-To and envelope sender, the person in the body', async () => {
    const domain = brandDomain();
    const { id, mail } = await deliveredRequest(domain);
    const parsed = await simpleParser(mail.raw);
    const replyTo = parsed.replyTo?.value[0]?.address as string;
    expect(replyTo).toMatch(
      new RegExp(`^returns\\+${id}\\.[a-z2-7]{16}@${INBOUND_DOMAIN.replace(/\./g, '\\.')}$`),
    );
    expect(replyTo.split('@')[0]?.length).toBeLessThanOrEqual(64);
    expect(mail.from).toBe(replyTo);
    expect(parsed.from?.value[0]?.address).toBe('returns@agents.example');
    expect(parsed.text).toContain('Contact (email): jane.doe@example.com');
  });

  it('takes a DKIM-signed reply of the brand: verified, in the thread, acknowledged, agent and person told, once', async () => {
    const domain = brandDomain();
    const { id, mail } = await deliveredRequest(domain);
    const replyTo = (await simpleParser(mail.raw)).replyTo?.value[0]?.address as string;
    const raw = await compose(
      {
        from: `Brand Support <support@${domain}>`,
        to: replyTo,
        subject: 'Re: Return request',
        text: 'We will refund order A-1001 within 5 days. Call us on +1 555 0100 if needed.\n\nOn Mon, 2 Nov 2026 at 10:00, Returns desk wrote:\n> A customer asks for a return or refund\n> Customer: Jane Doe',
        attachments: [{ filename: 'return-label.pdf', content: Buffer.from('%PDF-1.4 label') }],
      },
      { domain, key: brandKey.privateKey },
    );
    const answer = await send(raw, `support@${domain}`, replyTo);
    expect(answer.response).toMatch(/^250/);

    // Durable before 250: read at once, no waiting.
    const status = await statusOf(id);
    expect(status.status).toBe('acknowledged');
    expect(status.history.at(-1)).toMatchObject({ status: 'acknowledged', from: 'delivered', by: 'brand' });
    const reply = status.thread.find((m: Json) => m.direction === 'from_brand');
    expect(reply).toMatchObject({
      channel: 'email',
      sender: `support@${domain}`,
      sender_verified: true,
      subject: 'Re: Return request',
      excerpt: 'We will refund order A-1001 within 5 days. Call us on +1 555 0100 if needed.',
      attachments: ['return-label.pdf'],
    });
    expect(JSON.stringify(status)).not.toContain('%PDF');

    await waitFor(() => agentEvents(id, 'return.message').length === 1);
    await waitFor(() =>
      agentEvents(id, 'return.status_changed').some((e) => e.data.status === 'acknowledged'),
    );
    expect(agentEvents(id, 'return.message')[0].data.message).toMatchObject({
      direction: 'from_brand',
      sender_verified: true,
    });
    // The person, who used to get the brand's replies directly, gets this one forwarded.
    await waitFor(() =>
      mailbox.mails.some((m) => m.to.includes('jane.doe@example.com') && m.raw.includes(id)),
    );
    const forwarded = mailbox.mails.find((m) => m.to.includes('jane.doe@example.com') && m.raw.includes(id));
    expect(forwarded?.raw).toContain('We will refund order A-1001');

    // The same mail again (a sender's retry): accepted, recorded once, nothing told twice.
    const again = await send(raw, `support@${domain}`, replyTo);
    expect(again.response).toMatch(/^250/);
    const after = await statusOf(id);
    expect(after.thread.filter((m: Json) => m.direction === 'from_brand')).toHaveLength(1);
    expect(after.history).toHaveLength(status.history.length);
    const rows = await service.database.db
      .selectFrom('return_notifications')
      .select('type')
      .where('request_id', '=', id)
      .where('type', '=', 'return.message')
      .execute();
    expect(rows).toHaveLength(2); // one to the agent, one forwarded to the person
  });

  it('keeps a forged or unsigned reply unverified and changes nothing else', async () => {
    const domain = brandDomain();
    const { id, mail } = await deliveredRequest(domain);
    const replyTo = (await simpleParser(mail.raw)).replyTo?.value[0]?.address as string;
    const forged = await compose(
      { from: `support@${domain}`, to: replyTo, subject: 'Refund approved', text: 'Click here to claim.' },
      { domain, key: forgerKey.privateKey },
    );
    expect((await send(forged, `support@${domain}`, replyTo)).response).toMatch(/^250/);
    const unsigned = await compose({
      from: `support@${domain}`,
      to: replyTo,
      subject: 'Refund approved (2)',
      text: 'Unsigned.',
    });
    expect((await send(unsigned, `support@${domain}`, replyTo)).response).toMatch(/^250/);
    const stranger = await compose({
      from: 'help@other-shop.example',
      to: replyTo,
      subject: 'Hello',
      text: 'Not the brand.',
    });
    expect((await send(stranger, 'help@other-shop.example', replyTo)).response).toMatch(/^250/);

    const status = await statusOf(id);
    expect(status.status).toBe('delivered');
    const replies = status.thread.filter((m: Json) => m.direction === 'from_brand');
    expect(replies.map((m: Json) => [m.subject, m.sender, m.sender_verified])).toEqual([
      ['Refund approved', `support@${domain}`, false],
      ['Refund approved (2)', `support@${domain}`, false],
      ['Hello', 'help@other-shop.example', false],
    ]);
    // The agent hears of them, marked unverified; the person is not sent them.
    await waitFor(() => agentEvents(id, 'return.message').length === 3);
    expect(agentEvents(id, 'return.message').every((e) => e.data.message.sender_verified === false)).toBe(
      true,
    );
    expect(agentEvents(id, 'return.status_changed').map((e) => e.data.status)).toEqual(['delivered']);
    const toPerson = await service.database.db
      .selectFrom('return_notifications')
      .select('id')
      .where('request_id', '=', id)
      .where('channel', '=', 'email')
      .execute();
    expect(toPerson).toHaveLength(0);
  });

  it('refuses at RCPT any address that is not a per-request address with its own token', async () => {
    const domain = brandDomain();
    const { id, mail } = await deliveredRequest(domain);
    const replyTo = (await simpleParser(mail.raw)).replyTo?.value[0]?.address as string;
    const token = replyTo.split('@')[0]?.split('.').pop() as string;
    const other = token.startsWith('a') ? `b${token.slice(1)}` : `a${token.slice(1)}`;
    const refused = [
      `returns+${id}.${other}@${INBOUND_DOMAIN}`,
      `returns+${id}@${INBOUND_DOMAIN}`,
      `returns+00000000-0000-7000-8000-000000000000.${token}@${INBOUND_DOMAIN}`,
      `postmaster@${INBOUND_DOMAIN}`,
      replyTo.replace(INBOUND_DOMAIN, 'elsewhere.example'),
    ];
    const raw = await compose({ from: `support@${domain}`, to: 'x', subject: 'x', text: 'x' });
    for (const to of refused) {
      const err = await send(raw, `support@${domain}`, to).then(
        () => null,
        (e: Error & { responseCode?: number; command?: string }) => e,
      );
      expect(err?.responseCode, to).toBe(550);
      expect(err?.command, to).toBe('RCPT TO');
    }
    // The right address in another case is the same address.
    expect((await send(raw, `support@${domain}`, replyTo.toUpperCase())).response).toMatch(/^250/);
    expect((await statusOf(id)).thread.filter((m: Json) => m.direction === 'from_brand')).toHaveLength(1);
  });

  it('takes a bounce: the email channel is held, the request undeliverable, the next request waits', async () => {
    const domain = brandDomain();
    const { id, mail } = await deliveredRequest(domain);
    const parsed = await simpleParser(mail.raw);
    const bounceTo = mail.from as string;
    const deliveryId = parsed.headers.get('x-delivery-id') as string;
    const dsn = [
      `From: Mail Delivery System <MAILER-DAEMON@mx.${domain}>`,
      `To: ${bounceTo}`,
      'Subject: Undelivered Mail Returned to Sender',
      `Message-ID: <bounce-${deliveryId}@mx.${domain}>`,
      'MIME-Version: 1.0',
      'Content-Type: multipart/report; report-type=delivery-status; boundary="REPORT"',
      '',
      '--REPORT',
      'Content-Type: text/plain',
      '',
      'Your message could not be delivered to one or more recipients.',
      '--REPORT',
      'Content-Type: message/delivery-status',
      '',
      `Reporting-MTA: dns; mx.${domain}`,
      '',
      `Final-Recipient: rfc822; returns@${domain}`,
      'Action: failed',
      'Status: 5.1.1',
      `Diagnostic-Code: smtp; 550 5.1.1 <returns@${domain}>: Recipient address rejected`,
      '',
      '--REPORT',
      'Content-Type: text/rfc822-headers',
      '',
      `Message-ID: ${parsed.messageId}`,
      `X-Delivery-Id: ${deliveryId}`,
      `Subject: ${parsed.subject}`,
      '',
      '--REPORT--',
      '',
    ].join('\r\n');
    expect((await send(dsn, '', bounceTo)).response).toMatch(/^250/);

    const status = await statusOf(id);
    expect(status.status).toBe('undeliverable');
    expect(status.history.at(-1)).toMatchObject({ from: 'delivered', by: 'service' });
    expect(status.history.at(-1).note).toMatch(/email delivery failed: bounced: 5\.1\.1/);
    expect(status.delivery).toMatchObject({ channel: 'email', state: 'failed' });
    expect(status.next_step.kit).not.toBeNull();
    // The bounce is noted, then that the brand's address did not take it (no other channel can).
    expect(status.thread.slice(-2)).toMatchObject([
      { direction: 'from_service', subject: 'Delivery failed' },
      {
        direction: 'from_service',
        subject: "The brand's email address did not take the request",
      },
    ]);
    await waitFor(() =>
      agentEvents(id, 'return.status_changed').some((e) => e.data.status === 'undeliverable'),
    );

    // Held in the channel store: shown failed, not used for the next request.
    const channels = (await (await fetch(`${service.config.base_url}/brands/${domain}`)).json()) as Json;
    const email = channels.channels.find((c: Json) => c.kind === 'email');
    expect(email.failed?.reason).toMatch(/bounced: 5\.1\.1/);
    expect(email.delivery_rank).toBeNull();
    expect(channels.delivery_channel).toBeNull();
    const next = await fetch(`${service.config.base_url}/return`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ brand_domain: domain, name: 'Sam Roe', contact: 'sam@example.com' }),
    });
    expect(((await next.json()) as Json).status).toBe('awaiting_channel');

    // The same report again: accepted, nothing changes.
    expect((await send(dsn, '', bounceTo)).response).toMatch(/^250/);
    const after = await statusOf(id);
    expect(after.history).toHaveLength(status.history.length);
    expect(after.thread).toHaveLength(status.thread.length);
  });

  it('refuses a mail over the size limit with 552 and an unreadable one with 554, and goes on serving', async () => {
    const domain = brandDomain();
    const { id, mail } = await deliveredRequest(domain);
    const replyTo = (await simpleParser(mail.raw)).replyTo?.value[0]?.address as string;
    const huge = await compose({
      from: `support@${domain}`,
      to: replyTo,
      subject: 'Photos',
      text: 'x'.repeat(MAX_BYTES + 1),
    });
    const tooBig = await send(huge, `support@${domain}`, replyTo).then(
      () => null,
      (e: Error & { responseCode?: number }) => e,
    );
    expect(tooBig?.responseCode).toBe(552);

    const noFrom = `To: ${replyTo}\r\nSubject: who am I\r\n\r\nNo author.\r\n`;
    const malformed = await send(noFrom, `support@${domain}`, replyTo).then(
      () => null,
      (e: Error & { responseCode?: number }) => e,
    );
    expect(malformed?.responseCode).toBe(554);
    const hugeHeader = `From: support@${domain}\r\nX-Junk: ${'a'.repeat(150_000)}\r\n\r\nbody\r\n`;
    const unreadable = await send(hugeHeader, `support@${domain}`, replyTo).then(
      () => null,
      (e: Error & { responseCode?: number }) => e,
    );
    expect(unreadable?.responseCode).toBe(554);

    const status = await statusOf(id);
    expect(status.status).toBe('delivered');
    expect(status.thread.filter((m: Json) => m.direction === 'from_brand')).toHaveLength(0);
    // Still listening and recording.
    const fine = await compose({ from: `support@${domain}`, to: replyTo, subject: 'ok', text: 'ok' });
    expect((await send(fine, `support@${domain}`, replyTo)).response).toMatch(/^250/);
    expect((await statusOf(id)).thread.filter((m: Json) => m.direction === 'from_brand')).toHaveLength(1);
  });
});
