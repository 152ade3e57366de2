import { simpleParser } from 'mailparser';
import { describe, expect, it } from 'vitest';
import { inboundMailEnabled, loadConfig, productionChecks } from '../../servers/config.ts';
import {
  deliveryReportOf,
  isDeliveryReport,
} from '../../servers/features/returns/inbound/delivery-report.ts';
import { replyText } from '../../servers/features/returns/inbound/inbound-mail.ts';
import { ReplyAddresses } from '../../servers/features/returns/inbound/reply-address.ts';
import { isBrandSender, type SenderCheck } from '../../servers/features/returns/inbound/sender-check.ts';

const requestId = '019ac9a0-54f2-7c31-9a10-4b6c0f2d8e11';

describe('per-request reply addresses', () => {
  const addresses = new ReplyAddresses('a-service-secret', 'Replies.Agents.Example');

  it('round-trips, in any case, within 64 octets of local part', () => {
    const address = addresses.addressOf(requestId);
    expect(address).toMatch(
      /^returns\+019ac9a0-54f2-7c31-9a10-4b6c0f2d8e11\.[a-z2-7]{16}@replies\.agents\.example$/,
    );
    expect((address.split('@')[0] as string).length).toBeLessThanOrEqual(64);
    expect(addresses.requestOf(address)).toBe(requestId);
    expect(addresses.requestOf(address.toUpperCase())).toBe(requestId);
    expect(addresses.requestOf(`${address}.`)).toBe(requestId);
  });

  it('refuses another token, another request, another key or domain, and other forms', () => {
    const address = addresses.addressOf(requestId);
    const [local, domain] = address.split('@') as [string, string];
    const token = local.split('.').pop() as string;
    const other = '019ac9a0-54f2-7c31-9a10-4b6c0f2d8e12';
    expect(addresses.requestOf(`returns+${other}.${token}@${domain}`)).toBeNull();
    expect(
      addresses.requestOf(`${local.slice(0, -1)}${token.endsWith('a') ? 'b' : 'a'}@${domain}`),
    ).toBeNull();
    expect(addresses.requestOf(`${local}x@${domain}`)).toBeNull();
    expect(new ReplyAddresses('another-secret', domain).requestOf(address)).toBeNull();
    expect(addresses.requestOf(`${local}@elsewhere.example`)).toBeNull();
    for (const bad of [
      '',
      '@',
      'returns+@replies.agents.example',
      `returns+${requestId}@${domain}`,
      'postmaster',
    ]) {
      expect(addresses.requestOf(bad)).toBeNull();
    }
  });
});

describe('delivery status notifications', () => {
  const dsn = (action: string, returned: string) =>
    [
      'From: MAILER-DAEMON@mx.brand.example',
      'Message-ID: <dsn-1@mx.brand.example>',
      'Content-Type: multipart/report; report-type="delivery-status"; boundary="B"',
      '',
      '--B',
      'Content-Type: text/plain',
      '',
      'Action: failed (this line is prose, not the report)',
      '--B',
      'Content-Type: message/delivery-status',
      '',
      'Reporting-MTA: dns; mx.brand.example',
      '',
      'Final-Recipient: rfc822; <Returns@Brand.Example>',
      `Action: ${action}`,
      'Status: 5.1.1 (bad mailbox)',
      'Diagnostic-Code: smtp; 550 5.1.1 User unknown,',
      '  see the help pages',
      '',
      '--B',
      returned,
      '--B--',
      '',
    ].join('\r\n');

  it('reads each recipient, the failure, and our delivery id from the returned headers', async () => {
    const mail = await simpleParser(
      dsn(
        'failed',
        'Content-Type: text/rfc822-headers\r\n\r\nMessage-ID: <019ac9a0-54f2-7c31-9a10-4b6c0f2d8e11@agents.example>\r\n',
      ),
      { keepDeliveryStatus: true },
    );
    expect(isDeliveryReport(mail)).toBe(true);
    expect(deliveryReportOf(mail)).toEqual({
      recipients: [
        {
          finalRecipient: 'returns@brand.example',
          action: 'failed',
          status: '5.1.1',
          diagnostic: '550 5.1.1 User unknown, see the help pages',
        },
      ],
      failed: true,
      deliveryId: requestId,
    });
  });

  it('tells a delay from a failure, and a report without our headers from one with them', async () => {
    const mail = await simpleParser(dsn('delayed', 'Content-Type: text/plain\r\n\r\nnothing'), {
      keepDeliveryStatus: true,
    });
    const report = deliveryReportOf(mail);
    expect(report.failed).toBe(false);
    expect(report.deliveryId).toBeNull();
    const plain = await simpleParser('From: a@b.example\r\nSubject: hi\r\n\r\nAction: failed\r\n');
    expect(isDeliveryReport(plain)).toBe(false);
  });
});

describe('the text of a reply', () => {
  it('keeps its own words and drops the quoted history', () => {
    expect(
      replyText({
        text: 'We approved it.\r\nThanks.\r\n\r\nOn Mon, 2 Nov 2026 at 10:00, Returns desk <r@a.example> wrote:\r\n> Customer: Jane\r\n',
      }),
    ).toBe('We approved it.\nThanks.');
    expect(replyText({ text: 'Inline:\n> your question\nour answer' })).toBe('Inline:\nour answer');
    expect(replyText({ text: 'Top\n-----Original Message-----\nFrom: x' })).toBe('Top');
    expect(replyText({ text: '> only a quote' })).toBe('> only a quote');
    expect(replyText({ text: '  ' })).toBeNull();
    expect(replyText({ text: undefined })).toBeNull();
  });
});

describe('whether an authenticated author is the brand', () => {
  const author = (domain: string, authenticated = true): SenderCheck => ({
    from: `support@${domain}`,
    authorDomain: domain,
    dmarc: authenticated ? 'pass' : 'fail',
    authenticated,
  });
  const brand = { domain: 'shoes.com', mailedDomains: ['shoes.helpdesk-host.com'] };

  it("takes the brand's domain and its subdomains, and exactly the domain the request was mailed to", () => {
    expect(isBrandSender(author('shoes.com'), brand)).toBe(true);
    expect(isBrandSender(author('Mail.Shoes.com.'), brand)).toBe(true);
    expect(isBrandSender(author('shoes.helpdesk-host.com'), brand)).toBe(true);
  });

  it("refuses another customer of the brand's help desk, lookalikes, and anything unauthenticated", () => {
    expect(isBrandSender(author('boots.helpdesk-host.com'), brand)).toBe(false);
    expect(isBrandSender(author('helpdesk-host.com'), brand)).toBe(false);
    expect(isBrandSender(author('shoes.com.evil.com'), brand)).toBe(false);
    expect(isBrandSender(author('myshoes.com'), brand)).toBe(false);
    expect(isBrandSender(author('shoes.com', false), brand)).toBe(false);
    expect(isBrandSender({ ...author('shoes.com'), authorDomain: null }, brand)).toBe(false);
  });
});

describe('returns.inbound_mail settings', () => {
  it('is off by default, on with a port and a domain, which go together', () => {
    expect(inboundMailEnabled(loadConfig({ env: {} }))).toBe(false);
    const on = loadConfig({ env: { INBOUND_SMTP_PORT: '2525', INBOUND_MAIL_DOMAIN: 'Replies.Example.COM' } });
    expect(inboundMailEnabled(on)).toBe(true);
    expect(on.returns.inbound_mail).toMatchObject({ port: 2525, domain: 'replies.example.com' });
    expect(() => loadConfig({ env: { INBOUND_SMTP_PORT: '2525' } })).toThrow(
      /returns\.inbound_mail\.domain: port \(INBOUND_SMTP_PORT\) and domain \(INBOUND_MAIL_DOMAIN\) are set together/,
    );
    expect(() =>
      loadConfig({ env: { INBOUND_SMTP_PORT: '2525', INBOUND_MAIL_DOMAIN: 'not a domain' } }),
    ).toThrow(/returns\.inbound_mail\.domain: must be a domain name/);
    expect(() =>
      loadConfig({
        env: {
          INBOUND_SMTP_PORT: '2525',
          INBOUND_MAIL_DOMAIN: 'r.example.com',
          INBOUND_SMTP_TLS_KEY_FILE: '/k.pem',
        },
      }),
    ).toThrow(/tls_key_file and tls_cert_file are set together/);
  });

  it('warns in production mode without TLS or without SMTP to send the addresses with', () => {
    const config = loadConfig({
      env: { INBOUND_SMTP_PORT: '25', INBOUND_MAIL_DOMAIN: 'r.example.com', NODE_ENV: 'production' },
      overrides: {
        site_url: 'https://a.example.com',
        base_url: 'https://a.example.com/cs',
        public_api_url: 'https://a.example.com/api/public',
        mcp_url: 'https://a.example.com/mcp',
        auth_url: 'https://a.example.com/auth/v1',
        functions_url: 'https://a.example.com/functions/v1',
      },
    });
    const { warnings } = productionChecks(config);
    expect(warnings.some((w) => w.includes('INBOUND_SMTP_TLS_KEY_FILE'))).toBe(true);
    expect(warnings.some((w) => w.includes('SMTP_URL'))).toBe(true);
  });
});
