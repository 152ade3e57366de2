/**
 * Messages every process of a deployment sees, for what only the process holding some in-memory
 * state can act on (an MCP request in flight: `adapters/mcp.ts` cancellations). On PostgreSQL,
 * LISTEN/NOTIFY on one channel: each process listens on a connection of its own, outside the pool,
 * opened again a second after it drops (what is published meanwhile is missed: a message here is
 * a hint, never the record of anything). SQLite serves one process: a message reaches this
 * process's own subscribers.
 */
import pg from 'pg';
import type { Logger } from 'pino';
import { z } from 'zod';
import type { DatabaseHandle } from '../db/database.ts';

export interface Broadcast {
  /** Delivers `message`, as JSON, to the subscribers of `topic` in every process, this one included. */
  publish(topic: string, message: unknown): Promise<void>;
  /** `handler` gets each message of `topic` as JSON parsed: check it before use. */
  subscribe(topic: string, handler: (message: unknown) => void): void;
  close(): Promise<void>;
}

const CHANNEL = 'agent_service_broadcast';
const RECONNECT_MS = 1_000;

/** What goes over the channel. */
const Sent = z.object({ topic: z.string(), message: z.unknown() });

function jsonOrUndefined(text: string | undefined): unknown {
  try {
    return text === undefined ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
}

export function createBroadcast(database: DatabaseHandle, log: Pick<Logger, 'warn'>): Broadcast {
  const handlers = new Map<string, ((message: unknown) => void)[]>();
  const deliver = (topic: string, message: unknown) => {
    for (const handler of handlers.get(topic) ?? []) handler(message);
  };
  const subscribe = (topic: string, handler: (message: unknown) => void) => {
    handlers.set(topic, [...(handlers.get(topic) ?? []), handler]);
  };
  const raw = database.raw;
  if (raw.kind !== 'postgres') {
    return {
      publish: async (topic, message) => deliver(topic, JSON.parse(JSON.stringify(message))),
      subscribe,
      close: async () => {},
    };
  }

  const { connectionString, options, keepAlive, connectionTimeoutMillis } = raw.pool.options;
  let listener: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  let closed = false;
  // Said once per outage, not on every attempt.
  let failing = false;
  const failed = (err: unknown) => {
    if (!failing && !closed) log.warn({ err }, 'broadcast: not listening; trying again every second');
    failing = true;
  };
  const listen = async (): Promise<void> => {
    const client = new pg.Client({
      ...(connectionString ? { connectionString } : {}),
      ...(options ? { options } : {}),
      ...(keepAlive !== undefined ? { keepAlive } : {}),
      ...(connectionTimeoutMillis !== undefined ? { connectionTimeoutMillis } : {}),
    });
    const again = () => {
      if (listener === client) listener = undefined;
      client.end().catch(() => {});
      if (!closed && !retry) {
        retry = setTimeout(() => {
          retry = undefined;
          void listen();
        }, RECONNECT_MS);
        retry.unref();
      }
    };
    client.on('error', (err) => {
      failed(err);
      again();
    });
    client.on('end', again);
    client.on('notification', (note) => {
      const sent = note.channel === CHANNEL ? Sent.safeParse(jsonOrUndefined(note.payload)) : undefined;
      if (sent?.success) deliver(sent.data.topic, sent.data.message);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANNEL}`);
      failing = false;
      if (closed) await client.end();
      else listener = client;
    } catch (err) {
      failed(err);
      again();
    }
  };
  void listen();

  return {
    async publish(topic, message) {
      await raw.pool.query('select pg_notify($1, $2)', [CHANNEL, JSON.stringify({ topic, message })]);
    },
    subscribe,
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      await listener?.end().catch(() => {});
    },
  };
}
