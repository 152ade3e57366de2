/**
 * The request log line (`servers/request-log.ts`) keeps every field - service, level, time,
 * request id, method, path without its query, status, duration, message - whether or not the
 * handler logged; what a handler logs carries the request id; and the service's buffered
 * destination (`servers/logger.ts`) writes everything out when the process exits on SIGTERM.
 */
import { spawn } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { loggerOn } from '../../servers/logger.ts';
import { requestLog } from '../../servers/request-log.ts';
import { type ServiceProcess, spawnService } from '../helpers/process.ts';

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
