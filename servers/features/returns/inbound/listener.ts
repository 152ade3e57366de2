/**
 * The SMTP listener for brands' replies (`returns.inbound_mail`), on `smtp-server` (the nodemailer
 * project's SMTP server). It is the MX of the inbound domain and takes mail for per-request
 * addresses only:
 *
 * - `RCPT TO` an address that is not a per-request address with its right token: `550 5.1.1`
 *   (nothing is accepted for anyone else: no relay, no catch-all); more than `MAX_RECIPIENTS`: 452.
 * - A message over `max_bytes`: `552` (the limit is announced with `SIZE`, and a client that sends
 *   more anyway is refused after its DATA; the rest is not kept in memory).
 * - A message is answered `250` only once `InboundMail.receive` has committed it. A failure of
 *   ours (the database) is `451 4.3.0`, so the sending server tries again later; a message the
 *   parser cannot read, or a reply without a From header, is `554 5.6.0`. Nothing a client
 *   sends can stop the process.
 *
 * No AUTH (nobody submits mail here); STARTTLS when a key and certificate are configured.
 * Several processes (`WORKERS`, node:cluster) each call `listen` on the one port, as they do for
 * HTTP: the primary holds the socket and hands connections round-robin to the workers.
 */
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';
import type { Config } from '../../../config.ts';
import { type InboundMail, MalformedMailError } from './inbound-mail.ts';

/** Recipients of one message, at most (a brand replies to one request at a time). */
const MAX_RECIPIENTS = 10;

/** An error smtp-server answers with `code` and `message`. */
function smtpError(code: number, message: string): Error {
  return Object.assign(new Error(message), { responseCode: code });
}

export class InboundMailListener {
  readonly #settings: Config['returns']['inbound_mail'] & { domain: string };
  readonly #inbound: InboundMail;
  readonly #log: Logger;
  readonly #closeTimeoutMs: number;
  #server: SMTPServer | null = null;
  #port: number | null = null;

  constructor(config: Config, inbound: InboundMail, log: Logger) {
    const settings = config.returns.inbound_mail;
    if (settings.domain === null) throw new Error('returns.inbound_mail.domain is not set');
    this.#settings = { ...settings, domain: settings.domain };
    this.#inbound = inbound;
    this.#log = log;
    this.#closeTimeoutMs = config.server.shutdown_timeout_ms;
  }

  /** The port listened on (the one given, or the one picked for port 0), once listening. */
  get port(): number | null {
    return this.#port;
  }

  async listen(): Promise<number> {
    const settings = this.#settings;
    const tls =
      settings.tls_key_file && settings.tls_cert_file
        ? { key: readFileSync(settings.tls_key_file), cert: readFileSync(settings.tls_cert_file) }
        : null;
    const server = new SMTPServer({
      name: settings.domain,
      banner: 'replies to return requests only',
      size: settings.max_bytes,
      rejectOversized: true,
      maxClients: settings.max_clients,
      authOptional: true,
      disabledCommands: tls ? ['AUTH'] : ['AUTH', 'STARTTLS'],
      ...(tls ?? {}),
      logger: false,
      closeTimeout: this.#closeTimeoutMs,
      onRcptTo: (address, session, callback) => {
        if (session.envelope.rcptTo.length >= MAX_RECIPIENTS) {
          return callback(smtpError(452, 'Too many recipients'));
        }
        if (!this.#inbound.requestOf(address.address)) {
          return callback(smtpError(550, `No such recipient: ${address.address.slice(0, 100)}`));
        }
        callback();
      },
      onData: (stream, session, callback) => this.#onData(stream, session, callback),
    });
    server.on('error', (err) => this.#log.warn({ err }, 'inbound mail connection error'));
    await new Promise<void>((resolve, reject) => {
      server.server.once('error', reject);
      server.listen(settings.port ?? 0, settings.host, () => {
        server.server.off('error', reject);
        resolve();
      });
    });
    this.#server = server;
    this.#port = (server.server.address() as AddressInfo).port;
    return this.#port;
  }

  /** Stops taking connections; sessions under way get `server.shutdown_timeout_ms` to finish. */
  async close(): Promise<void> {
    const server = this.#server;
    if (!server) return;
    this.#server = null;
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  #onData(
    stream: SMTPServerDataStream,
    session: SMTPServerSession,
    callback: (err?: Error | null) => void,
  ): void {
    const chunks: Buffer[] = [];
    let bytes = 0;
    let answered = false;
    const answer = (err?: Error) => {
      if (answered) return;
      answered = true;
      callback(err ?? null);
    };
    stream.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      // Past the limit the rest is read and dropped; smtp-server answers 552 (`rejectOversized`).
      if (bytes <= this.#settings.max_bytes) chunks.push(chunk);
    });
    stream.once('error', (err) => {
      this.#log.warn({ err }, 'inbound mail stream failed');
      answer(smtpError(451, '4.3.0 Message not received, try again later'));
    });
    stream.once('end', () => {
      if (stream.sizeExceeded) return answer(smtpError(552, 'Message exceeds the size limit'));
      const requests = [
        ...new Set(
          session.envelope.rcptTo.flatMap((r) => {
            const id = this.#inbound.requestOf(r.address);
            return id ? [id] : [];
          }),
        ),
      ];
      const raw = Buffer.concat(chunks);
      this.#inbound
        .receive(raw, {
          requests,
          ip: session.remoteAddress,
          helo: session.hostNameAppearsAs || null,
          mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
        })
        .then(
          () => answer(),
          (err: unknown) => {
            if (err instanceof MalformedMailError) {
              this.#log.info({ reason: err.message }, 'inbound mail refused');
              return answer(smtpError(554, `5.6.0 ${err.message}`));
            }
            this.#log.error({ err }, 'inbound mail could not be recorded');
            answer(smtpError(451, '4.3.0 Message not recorded, try again later'));
          },
        );
    });
  }
}
