/**
 * Real local peers for what the service talks to: a brand's webhook endpoint (verifying Standard
 * Webhooks signatures with the `standardwebhooks` library, independent of our signing code) and an
 * SMTP server (`smtp-server`, from the nodemailer project).
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { Webhook } from 'standardwebhooks';

export interface ReceivedWebhook {
  id: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  verified: boolean;
  payload: unknown;
}

export type Responder = (attempt: number, request: ReceivedWebhook) => number | 'hang';

export interface WebhookReceiver {
  url: string;
  /** The secret signatures are verified with; may be set after start (a callback's, returned with a request). */
  secret: string;
  /** Every request received, in order, including duplicates. */
  requests: ReceivedWebhook[];
  /** Distinct delivery ids accepted with a 2xx (what a receiver that keeps ids processes). */
  processed: Map<string, ReceivedWebhook>;
  respond: Responder;
  waitFor(predicate: () => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export function newWebhookSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

export async function startWebhookReceiver(
  respond: Responder = () => 200,
  options: { port?: number; secret?: string } = {},
): Promise<WebhookReceiver> {
  const secret = options.secret ?? newWebhookSecret();
  const hanging: http.ServerResponse[] = [];
  const receiver: WebhookReceiver = {
    url: '',
    secret,
    requests: [],
    processed: new Map(),
    respond,
    waitFor: (predicate, timeoutMs = 15_000) => waitFor(predicate, timeoutMs),
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let verified = false;
      let payload: unknown = null;
      try {
        payload = new Webhook(receiver.secret).verify(body, req.headers as Record<string, string>);
        verified = true;
      } catch {
        verified = false;
      }
      const received: ReceivedWebhook = {
        id: String(req.headers['webhook-id']),
        headers: req.headers,
        body,
        verified,
        payload,
      };
      receiver.requests.push(received);
      const outcome = receiver.respond(receiver.requests.length, received);
      if (outcome === 'hang') {
        hanging.push(res);
        return;
      }
      if (outcome >= 200 && outcome < 300 && verified && !receiver.processed.has(received.id)) {
        receiver.processed.set(received.id, received);
      }
      res.writeHead(outcome, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', () => resolve()));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/returns`;
  return receiver;
}

export interface ReceivedMail {
  from: string | undefined;
  to: string[];
  raw: string;
}

export async function startSmtpServer(
  options: {
    reject?: (mail: ReceivedMail) => number | undefined;
    /** Listen on this port (a server that comes back where it was); default: any free port. */
    port?: number;
    /** Start with these mails already received (the same mailbox across a restart). */
    mails?: ReceivedMail[];
  } = {},
): Promise<{ url: string; port: number; mails: ReceivedMail[]; close(): Promise<void> }> {
  const mails: ReceivedMail[] = options.mails ?? [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const mail: ReceivedMail = {
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : undefined,
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        };
        const code = options.reject?.(mail);
        if (code) {
          const err = new Error('rejected') as Error & { responseCode: number };
          err.responseCode = code;
          return callback(err);
        }
        mails.push(mail);
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', () => resolve()));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    port,
    mails,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export async function waitFor(
  predicate: () => boolean | Promise<boolean>,
  timeoutMs = 15_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
