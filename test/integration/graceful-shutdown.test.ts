/**
 * SIGTERM on a real `npm start` process (both dialects): readiness turns 503 while the process
 * drains, new connections are refused, a request in flight (its body still arriving) completes and
 * its events are in the database after the exit, as is every beacon hit answered before, exit code 0.
 */
import http from 'node:http';
import net from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createTestDatabase, dialects, type TestDatabase } from '../helpers/databases.ts';
import { type ServiceProcess, spawnService } from '../helpers/process.ts';
import { waitFor } from '../helpers/receivers.ts';

// Real child processes start slowly on a loaded machine: room to start, never a timing assertion.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

const CHROME =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';
const GPTBOT =
  'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.1; +https://openai.com/gptbot)';

/** A raw connection that reads one HTTP/1.1 response at a time (Content-Length bodies). */
class RawConnection {
  #buffer = '';
  #waiting: (() => void) | null = null;
  readonly socket: net.Socket;
  private constructor(socket: net.Socket) {
    this.socket = socket;
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      this.#buffer += chunk;
      this.#waiting?.();
    });
    socket.on('close', () => this.#waiting?.());
  }

  static open(port: number): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1', () => resolve(new RawConnection(socket)));
      socket.once('error', reject);
    });
  }

  async response(): Promise<{ status: number; headers: string; body: string }> {
    for (;;) {
      const end = this.#buffer.indexOf('\r\n\r\n');
      if (end !== -1) {
        const headers = this.#buffer.slice(0, end);
        const length = Number(/content-length:\s*(\d+)/i.exec(headers)?.[1] ?? 0);
        if (this.#buffer.length >= end + 4 + length) {
          const body = this.#buffer.slice(end + 4, end + 4 + length);
          this.#buffer = this.#buffer.slice(end + 4 + length);
          return { status: Number(headers.split(' ')[1]), headers, body };
        }
      }
      if (this.socket.destroyed) throw new Error(`connection closed; got ${JSON.stringify(this.#buffer)}`);
      await new Promise<void>((resolve) => {
        this.#waiting = resolve;
      });
      this.#waiting = null;
    }
  }
}

const refused = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
  });

describe.each(dialects)('graceful shutdown on SIGTERM (%s)', (dialect) => {
  let db: TestDatabase | undefined;
  let service: ServiceProcess | undefined;

  afterEach(async () => {
    if (service && service.child.exitCode === null) await service.kill();
    await db?.drop();
  });

  it('drains: readiness 503, new connections refused, the in-flight request answered and its events kept, exit 0', async () => {
    db = await createTestDatabase(dialect);
    service = await spawnService({ ...db.env, SHUTDOWN_TIMEOUT_MS: '20000' });
    const api = `${service.url}/api/public`;
    const port = Number(new URL(service.url).port);

    const ready = await fetch(`${api}/health/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({
      ready: true,
      failed: [],
      checks: { database: true, migrations: true, draining: false },
    });

    const account = await fetch(`${api}/account`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'drain-owner@example.com', password: 'correct horse battery' }),
    });
    expect(account.status).toBe(201);
    const key: string = (await account.json()).key.service_key;
    const install = await fetch(`${api}/pixel-install`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-key': key },
      body: JSON.stringify({ domain: 'drain-shutdown.com' }),
    });
    expect(install.status).toBeLessThan(300);
    const siteId: string = (await install.json()).site_id;

    const hit = await fetch(
      `${api}/beacon?${new URLSearchParams({ site: siteId, url: 'https://drain-shutdown.com/answered' })}`,
      { headers: { 'user-agent': CHROME } },
    );
    expect(hit.status).toBe(204);
    const stored = () =>
      (db as TestDatabase).handle.db
        .selectFrom('traffic_events')
        .select(['path', 'source'])
        .where('site_id', '=', siteId)
        .orderBy('path')
        .execute();
    // Answered once written.
    expect(await stored()).toEqual([{ path: '/answered', source: 'beacon' }]);

    // A request in flight: headers read by the service (100 Continue), body not sent yet.
    const body = JSON.stringify({
      site_id: siteId,
      events: [{ ts: Date.now(), url: '/in-flight', user_agent: GPTBOT }],
    });
    const slow = http.request(`${api}/events`, {
      method: 'POST',
      agent: false,
      headers: {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        'x-service-key': key,
        expect: '100-continue',
      },
    });
    const continued = new Promise<void>((resolve) => slow.once('continue', resolve));
    const slowResponse = new Promise<{ status: number; body: string }>((resolve, reject) => {
      slow.once('response', (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          text += d;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      });
      slow.once('error', reject);
    });
    slow.flushHeaders();
    await continued;

    // A kept-alive connection with the next request begun (not idle, so it is not closed at once).
    const probe = await RawConnection.open(port);
    probe.socket.write(`GET /api/public/health HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
    expect((await probe.response()).status).toBe(200);
    probe.socket.write(`GET /api/public/health/ready HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n`);

    const exited = service.stop();
    await waitFor(() => refused(port));

    probe.socket.write('\r\n');
    const draining = await probe.response();
    expect(draining.status).toBe(503);
    expect(draining.headers).toMatch(/connection: close/i);
    expect(JSON.parse(draining.body)).toMatchObject({ ready: false, failed: ['draining'] });

    slow.end(body);
    const completed = await slowResponse;
    expect(completed.status).toBe(200);
    expect(JSON.parse(completed.body)).toMatchObject({ accepted: 1 });

    expect(await exited).toBe(0);
    expect(await refused(port)).toBe(true);
    expect(await stored()).toEqual([
      { path: '/answered', source: 'beacon' },
      { path: '/in-flight', source: 'server' },
    ]);
  });
});
