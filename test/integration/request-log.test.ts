/**
 * The request log line (`servers/request-log.ts`) keeps every field - service, level, time,
 * request id, method, path without its query, status, duration, message - whether or not the
 * handler logged; what a handler logs carries the request id; the service's buffered
 * destination (`servers/logger.ts`) writes everything out when the process exits on SIGTERM; and
 * only faults are logged at error.
 */
import { spawn } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import express from 'express';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { loggerOn } from '../../servers/logger.ts';
import { defineOperation } from '../../servers/operation.ts';
import { operations } from '../../servers/registry.ts';
import { requestLog } from '../../servers/request-log.ts';
import { dialects } from '../helpers/databases.ts';
import { type ServiceProcess, spawnService } from '../helpers/process.ts';
import { waitFor } from '../helpers/receivers.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

type Line = Record<string, unknown>;

describe('request log', () => {
  let service: ServiceProcess | undefined;
  afterEach(async () => {
    await service?.kill();
    service = undefined;
  });

  it('writes one line per request with every field, and binds the request id to what handlers log', async () => {
    const lines: Line[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const text of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(text));
        done();
      },
    });
    const log = loggerOn({ log_level: 'info' }, sink);
    const app = express();
    app.use(requestLog(app, log));
    app.get('/quiet', (_req, res) => {
      res.json({ ok: true });
    });
    app.get('/chatty', (req, res) => {
      req.log.warn({ detail: 'x' }, 'handler says');
      res.status(201).json({ ok: true });
    });
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const quiet = await fetch(`${base}/quiet?email=private@example.com`, {
        headers: { 'x-request-id': 'given-id-1' },
      });
      expect(quiet.headers.get('x-request-id')).toBe('given-id-1');
      expect(quiet.headers.get('x-content-type-options')).toBe('nosniff');
      const chatty = await fetch(`${base}/chatty`);
      const chattyId = chatty.headers.get('x-request-id');
      expect(chattyId).toMatch(/^[0-9a-f-]{36}$/);
      await new Promise((resolve) => setImmediate(resolve));

      const requestLines = lines.filter((l) => l.msg === 'request completed');
      expect(requestLines).toEqual([
        {
          level: 30,
          time: expect.any(Number),
          service: 'agent-service',
          req_id: 'given-id-1',
          method: 'GET',
          path: '/quiet',
          status: 200,
          ms: expect.any(Number),
          msg: 'request completed',
        },
        expect.objectContaining({ req_id: chattyId, method: 'GET', path: '/chatty', status: 201 }),
      ]);
      expect(lines.find((l) => l.msg === 'handler says')).toMatchObject({
        level: 40,
        service: 'agent-service',
        req_id: chattyId,
        detail: 'x',
      });
      expect(JSON.stringify(lines)).not.toContain('private@example.com');
    } finally {
      server.close();
    }
  });

  /** Runs `body` in a fresh process with the service's logger as `log`; its stdout's lines. */
  async function logOf(body: string): Promise<{ lines: Line[]; code: number | null }> {
    const script =
      `import { createLogger } from ${JSON.stringify(new URL('../../servers/logger.ts', import.meta.url).href)};\n` +
      `const log = createLogger({ log_level: 'info' });\n${body}`;
    const child = spawn(
      process.execPath,
      [
        '--experimental-strip-types',
        '--disable-warning=ExperimentalWarning',
        '--input-type=module',
        '-e',
        script,
      ],
      { stdio: ['ignore', 'pipe', 'ignore'] },
    );
    // Decoded as a stream: a read can end inside a character that spans two of the writes' chunks.
    child.stdout.setEncoding('utf8');
    let output = '';
    child.stdout.on('data', (chunk: string) => {
      output += chunk;
    });
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    return {
      code,
      lines: output
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Line),
    };
  }

  it('writes out every buffered line, whole and in order, however the process ends', async () => {
    // The thread pool kept busy: a write handed to it (sonic-boom's asynchronous mode) would still be
    // waiting when the process exits.
    const lines =
      'import { pbkdf2 } from "node:crypto";\n' +
      'for (let i = 0; i < 8; i++) pbkdf2("x", "y", 300_000, 32, "sha256", () => {});\n' +
      'for (let i = 0; i < 3000; i++) log.info({ i, text: "é ✓ ü" }, "line");';
    const numbers = Array.from({ length: 3000 }, (_, i) => i);
    // The event loop runs dry, process.exit, an uncaught exception logged as fatal first.
    const ends = [
      '',
      'process.exit(3);',
      'process.on("uncaughtExceptionMonitor", (err) => log.fatal({ err }, "fatal error"));\n' +
        'setTimeout(() => { throw new Error("boom"); }, 5);',
    ];
    for (const end of ends) {
      const { lines: written, code } = await logOf(`${lines}\n${end}`);
      const numbered = written.filter((l) => l.msg === 'line');
      expect(numbered.map((l) => l.i)).toEqual(numbers);
      expect(numbered.every((l) => l.text === 'é ✓ ü')).toBe(true);
      if (end.includes('boom')) {
        expect(code).not.toBe(0);
        expect(written.at(-1)).toMatchObject({ level: 60, msg: 'fatal error', err: { message: 'boom' } });
      }
    }
  }, 60_000);

  it('writes out every buffered line when the service exits on SIGTERM', async () => {
    service = await spawnService({});
    let output = '';
    service.child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    const ids = Array.from({ length: 5 }, (_, i) => `buffered-${i}`);
    for (const id of ids) {
      const res = await fetch(`${service.url}/cs/agent?charge=NETFLIX.COM`, {
        headers: { 'x-request-id': id },
      });
      expect(res.status).toBe(200);
    }
    expect(await service.stop()).toBe(0);
    service = undefined;
    const lines = output
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Line);
    for (const id of ids) {
      expect(lines).toContainEqual(
        expect.objectContaining({ req_id: id, path: '/cs/agent', status: 200, msg: 'request completed' }),
      );
    }
    expect(lines).toContainEqual(expect.objectContaining({ msg: 'shutting down', signal: 'SIGTERM' }));
  }, 120_000);
});

/**
 * Issue 28 item 11, written as what an operator's alerts see: answers the service gives by design
 * - a paid SKU this deployment cannot sell (503 `sku_unavailable`), a client's mistake - log no
 * line at error; a fault (a handler that throws) logs its request line and its cause at error.
 */
describe.each(dialects)('log levels of answers (%s)', (dialect) => {
  let service: TestService | undefined;
  const lines: Line[] = [];
  const faulty = defineOperation({
    name: 'testFault',
    title: 'Fails (test operation)',
    description: 'Throws, as a bug would.',
    input: z.strictObject({}),
    output: z.object({}),
    annotations: { readOnlyHint: true, openWorldHint: false },
    access: 'public',
    http: { surface: 'public_api', method: 'GET', path: '/test-fault', input: 'query' },
    handler: async () => {
      throw new Error('a bug');
    },
  });

  beforeAll(async () => {
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const text of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(text));
        done();
      },
    });
    // No payments.pay_to: every paid SKU answers 503 sku_unavailable.
    service = await startTestService(
      dialect,
      {},
      { log: loggerOn({ log_level: 'info' }, sink), operations: [...operations, faulty] },
    );
  });
  afterAll(async () => {
    await service?.close();
  });

  const ERROR = 50;
  const WARN = 40;

  it('logs a 503 sku_unavailable, over REST and MCP, below error', async () => {
    const running = service as TestService;
    const from = lines.length;
    const rest = await fetch(`${running.config.site_url}/api/public/x402/signal`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-request-id': 'unavailable-rest' },
      body: JSON.stringify({ domain: 'example.com' }),
    });
    expect(rest.status).toBe(503);
    expect(((await rest.json()) as { code: string }).code).toBe('sku_unavailable');

    const mcp = await fetch(running.config.mcp_url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'x-request-id': 'unavailable-mcp',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'buy_signal_check', arguments: { domain: 'example.com' } },
      }),
    });
    const reply = (await mcp.json()) as { result: { isError: boolean; content: { text: string }[] } };
    expect(reply.result.isError).toBe(true);
    expect(JSON.parse(reply.result.content[0]?.text ?? '{}').code).toBe('sku_unavailable');

    await waitFor(() => lines.slice(from).filter((l) => l.msg === 'request completed').length >= 2);
    const written = lines.slice(from);
    expect(written.find((l) => l.req_id === 'unavailable-rest')).toMatchObject({ status: 503, level: WARN });
    expect(written.find((l) => l.req_id === 'unavailable-mcp')).toMatchObject({ status: 200 });
    expect(written.filter((l) => (l.level as number) >= ERROR)).toEqual([]);
  });

  it('logs a fault at error, its request line and its cause', async () => {
    const running = service as TestService;
    const from = lines.length;
    const res = await fetch(`${running.config.public_api_url}/test-fault`, {
      headers: { 'x-request-id': 'a-fault' },
    });
    expect(res.status).toBe(500);
    expect(JSON.stringify(await res.json())).not.toContain('a bug');
    await waitFor(() => lines.slice(from).some((l) => l.msg === 'request completed'));
    const written = lines.slice(from).filter((l) => l.req_id === 'a-fault');
    expect(written).toContainEqual(
      expect.objectContaining({ level: ERROR, msg: 'request completed', status: 500 }),
    );
    expect(written).toContainEqual(
      expect.objectContaining({
        level: ERROR,
        msg: 'request failed',
        err: expect.objectContaining({ message: 'a bug' }),
      }),
    );
  });
});
