/**
 * Requests refused at the HTTP level (`servers/http-refusals.ts`), once per dialect, each written as
 * the attack: a raw client that sends an oversized request line, oversized header fields, bytes
 * that are not HTTP, a body over the limit or a body slower than `server.body_timeout_ms` - and
 * goes on sending its body after the answer came, as a client busy uploading does. Every one reads
 * a whole problem answer with `Connection: close`, and the connection ends without a reset. A
 * request refused while its body was awaited runs nothing, even when the rest of its body comes
 * after; a tool call longer than the body bound, whose body came in time, is not cut.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/databases.ts';
import { startHeldSite } from '../helpers/fixture-sites.ts';
import { waitFor } from '../helpers/receivers.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { newAccount } from '../helpers/x402-payer.ts';

/** `server.body_timeout_ms` here: short, so a slow body is refused within the test. */
const BODY_TIMEOUT_MS = 400;

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The connection ended with a reset (ECONNRESET, EPIPE) rather than the server's orderly close. */
  reset: boolean;
}

interface Sending {
  /** Bytes per write (default: all at once). */
  chunk?: number;
  /** Pause between writes. */
  paceMs?: number;
  /**
   * Called once the answer's head arrived; what it returns is sent next, and then the client stops
   * sending. Without it the client sends its whole body whatever comes back. A client still
   * sending 5 s after its answer has its connection closed (`LINGER_MS`): paced clients stop.
   */
  onAnswer?: () => string;
}

/**
 * A client on a raw connection: writes `head`, then `body` as `sending` says - on after the answer
 * has come, unless `onAnswer` says what to send instead - ends its side, and reads until the
 * server closes. Half-open, so that it may go on sending after the server's FIN.
 */
async function rawExchange(url: string, head: string, body: string, sending: Sending = {}): Promise<Answer> {
  const { hostname, port } = new URL(url);
  const socket = net.connect({ host: hostname, port: Number(port), allowHalfOpen: true });
  let received = Buffer.alloc(0);
  let reset = false;
  socket.on('data', (data: Buffer) => {
    received = Buffer.concat([received, data]);
  });
  socket.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'ECONNRESET' || err.code === 'EPIPE') reset = true;
    else throw err;
  });
  const closed = new Promise((resolve) => socket.once('close', resolve));
  const ended = new Promise((resolve) => socket.once('end', resolve));
  await new Promise((resolve) => socket.once('connect', resolve));
  const write = (data: string) =>
    new Promise<void>((resolve) => {
      if (socket.destroyed) return resolve();
      socket.write(data, () => resolve());
    });
  await write(head);
  const chunk = sending.chunk ?? Math.max(body.length, 1);
  for (let at = 0; at < body.length && !socket.destroyed; at += chunk) {
    if (sending.onAnswer && received.includes('\r\n\r\n')) {
      await write(sending.onAnswer());
      break;
    }
    await write(body.slice(at, at + chunk));
    if (sending.paceMs) await new Promise((resolve) => setTimeout(resolve, sending.paceMs));
  }
  if (!socket.destroyed) socket.end();
  await Promise.race([ended, closed]);
  await closed;
  const text = received.toString('utf8');
  const split = text.indexOf('\r\n\r\n');
  expect(split, `no answer head in ${JSON.stringify(text.slice(0, 200))}`).toBeGreaterThan(0);
  const [statusLine, ...lines] = text.slice(0, split).split('\r\n');
  const headers = Object.fromEntries(
    lines.map((line) => [
      line.slice(0, line.indexOf(':')).toLowerCase(),
      line.slice(line.indexOf(':') + 1).trim(),
    ]),
  );
  const length = Number(headers['content-length']);
  const rest = received.subarray(Buffer.byteLength(text.slice(0, split + 4)));
  return {
    status: Number(statusLine?.split(' ')[1]),
    headers,
    body: rest.subarray(0, Number.isNaN(length) ? rest.length : length).toString('utf8'),
    reset,
  };
}

/** A problem+json answer with `code`, whose connection the server closes after it. */
function expectProblem(answer: Answer, status: number, code: string): void {
  expect(answer.reset, 'the connection was reset').toBe(false);
  expect(answer.status).toBe(status);
  expect(answer.headers.connection).toBe('close');
  expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(Buffer.byteLength(answer.body)).toBe(Number(answer.headers['content-length']));
  const problem = JSON.parse(answer.body);
  expect(problem).toMatchObject({ status, code, request_id: answer.headers['x-request-id'] });
  expect(problem.detail).toEqual(expect.any(String));
}

describe.each(dialects)('requests refused at the HTTP level are answered in full (%s)', (dialect) => {
  let service: TestService;
  let host: string;

  beforeAll(async () => {
    service = await startTestService(dialect, {
      'server.body_timeout_ms': BODY_TIMEOUT_MS,
      'payments.pay_to': newAccount().address,
      'scanner.allow_private_networks': true,
      'scanner.request_timeout_ms': 60_000,
      'scanner.delay_ms': 0,
    });
    host = new URL(service.url).host;
  });
  afterAll(async () => {
    await service?.close();
  });

  const paidPath = '/api/public/x402/signal';
  const postHead = (path: string, headers: Record<string, string | number>) =>
    `POST ${path} HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\n${Object.entries(headers)
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('')}\r\n`;
  const mcpHeaders = { Accept: 'application/json, text/event-stream' };
  /** A paid endpoint and the MCP endpoint, with the headers each wants besides the body's. */
  const pathsAttacked = [
    [paidPath, {}],
    ['/mcp', mcpHeaders],
  ] as const;
  /** A megabyte of JSON text. */
  const megabyte = `{"domain":"${'a'.repeat(1024 * 1024)}"}`;

  it('answers a 100 KB query string 431 while the client still sends its body, on a paid endpoint and the MCP endpoint', async () => {
    const query = `?q=${'x'.repeat(100_000)}`;
    for (const [path, extra] of pathsAttacked) {
      const answer = await rawExchange(
        service.url,
        postHead(`${path}${query}`, { ...extra, 'Content-Length': megabyte.length }),
        megabyte,
        { chunk: 16 * 1024 },
      );
      expectProblem(answer, 431, 'request_header_fields_too_large');
    }
  });

  it('answers header fields over the limit 431, and bytes that are not HTTP 400', async () => {
    const many = Array.from({ length: 1000 }, (_, i) => [`X-Padding-${i}`, 'v'.repeat(20)]);
    const tooMany = await rawExchange(
      service.url,
      postHead(paidPath, { ...Object.fromEntries(many), 'Content-Length': 2 }),
      '{}',
    );
    expectProblem(tooMany, 431, 'request_header_fields_too_large');

    const garbage = await rawExchange(service.url, 'HELLO\u0001 / HTTP/1.1\r\n\r\n', megabyte, {
      chunk: 16 * 1024,
    });
    expectProblem(garbage, 400, 'malformed_request');

    // A broken chunk inside the body of a request being read: the refusal is that request's answer.
    const broken = await rawExchange(
      service.url,
      postHead(paidPath, { 'Transfer-Encoding': 'chunked' }),
      '4\r\n{"do\r\nzz\r\nmain"}\r\n0\r\n\r\n',
    );
    expectProblem(broken, 400, 'malformed_request');
  });

  it('answers a body over the limit 413 with Connection: close while the client still sends it', async () => {
    // 16 KiB every 5 ms: most of the body is still to come when it is refused; the client stops
    // sending once it has the answer.
    const uploading = { chunk: 16 * 1024, paceMs: 5, onAnswer: () => '' };
    const declared = { 'Content-Length': megabyte.length };
    const paid = await rawExchange(service.url, postHead(paidPath, declared), megabyte, uploading);
    expectProblem(paid, 413, 'payload_too_large');

    // MCP, declared or not: the same close, the error in JSON-RPC form.
    const chunked = `${`${(16 * 1024).toString(16)}\r\n${'a'.repeat(16 * 1024)}\r\n`.repeat(64)}0\r\n\r\n`;
    for (const [headers, body, sending] of [
      [declared, megabyte, uploading],
      [{ 'Transfer-Encoding': 'chunked' }, chunked, { ...uploading, chunk: 16 * 1024 + 10 }],
    ] as const) {
      const mcp = await rawExchange(
        service.url,
        postHead('/mcp', { ...mcpHeaders, ...headers }),
        body,
        sending,
      );
      expect(mcp.reset).toBe(false);
      expect(mcp.status).toBe(413);
      expect(mcp.headers.connection).toBe('close');
      expect(JSON.parse(mcp.body)).toMatchObject({ jsonrpc: '2.0', error: { code: -32600 } });
    }
  });

  it('answers a body slower than server.body_timeout_ms 408 with Connection: close, REST and MCP', async () => {
    const body = JSON.stringify({ domain: 'example.com', padding: 'x'.repeat(40) });
    for (const [path, extra] of pathsAttacked) {
      // A byte every 50 ms: the whole body would take several times the bound.
      const answer = await rawExchange(
        service.url,
        postHead(path, { ...extra, 'Content-Length': body.length }),
        body,
        { chunk: 1, paceMs: 50, onAnswer: () => '' },
      );
      expectProblem(answer, 408, 'request_timeout');
    }
  });

  it('runs nothing for a request refused 408, even when the rest of its body comes after the answer', async () => {
    const email = `slow-${Date.now()}@example.com`;
    const body = JSON.stringify({ email, password: 'correct horse battery staple' });
    const cut = 10;
    const answer = await rawExchange(
      service.url,
      postHead('/api/public/account', { 'Content-Length': body.length }),
      body,
      { chunk: cut, paceMs: BODY_TIMEOUT_MS, onAnswer: () => body.slice(cut) },
    );
    expectProblem(answer, 408, 'request_timeout');
    // An account made after it, the same way, is there; the refused one is not.
    const other = `after-${Date.now()}@example.com`;
    const created = await fetch(`${service.config.public_api_url}/account`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: other, password: 'correct horse battery staple' }),
    });
    expect(created.status).toBe(201);
    const emails = (await service.db.handle.db.selectFrom('accounts').select('email').execute()).map(
      (a) => a.email,
    );
    expect(emails).toContain(other);
    expect(emails).not.toContain(email);
  });

  it('does not cut a tool call that runs longer than the body bound once its body is in', async () => {
    // The scan, and so the call, lasts until the site is released.
    const site = await startHeldSite();
    try {
      const call = fetch(service.config.mcp_url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...mcpHeaders },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'get_signal', arguments: { domain: site.domain } },
        }),
      });
      await waitFor(() => site.waiting() > 0);
      // Held for several body bounds: only the body's arrival is bounded, not the handler.
      await new Promise((resolve) => setTimeout(resolve, 4 * BODY_TIMEOUT_MS));
      site.release();
      const res = await call;
      expect(res.status).toBe(200);
      const reply = (await res.json()) as { id: number; result: { structuredContent: { domain: string } } };
      expect(reply.id).toBe(1);
      expect(reply.result.structuredContent.domain).toBe(site.domain);
    } finally {
      await site.close();
    }
  });
});
