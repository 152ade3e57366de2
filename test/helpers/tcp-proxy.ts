/**
 * A TCP proxy on loopback in front of a server the tests share (PostgreSQL on 127.0.0.1:5432): the
 * service under test connects through it, and the test takes that server away from the service
 * alone - `cut()` resets every open connection and stops listening, so new connections are refused
 * as by a server that went down; `stall()` resets them too but keeps accepting new ones and never
 * answers (a peer that hangs); `restore()` serves again on the same port. The shared server itself
 * is never touched (other suites are using it).
 */
import net from 'node:net';

export interface TcpProxy {
  port: number;
  /** Connections opened through the proxy so far. */
  readonly connections: number;
  /** Resets every open connection and refuses new ones. */
  cut(): Promise<void>;
  /** Resets every open connection; new ones are accepted and held without an answer. */
  stall(): Promise<void>;
  /** Accepts connections again, on the same port. */
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const open = new Set<net.Socket>();
  let connections = 0;
  let stalled = false;
  const server = net.createServer((client) => {
    connections++;
    if (stalled) {
      open.add(client);
      client.on('error', () => client.destroy()).on('close', () => open.delete(client));
      return;
    }
    const upstream = net.connect(target.port, target.host);
    open.add(client);
    open.add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
  await listen(0);
  const { port } = server.address() as net.AddressInfo;
  const stopListening = () =>
    new Promise<void>((resolve) => (server.listening ? server.close(() => resolve()) : resolve()));
  return {
    port,
    get connections() {
      return connections;
    },
    async cut() {
      const closed = stopListening();
      // resetAndDestroy: an RST, as from a server host that went away, not a polite FIN.
      for (const socket of open) socket.resetAndDestroy();
      open.clear();
      await closed;
    },
    async stall() {
      stalled = true;
      for (const socket of open) socket.resetAndDestroy();
      open.clear();
    },
    async restore() {
      if (stalled) {
        stalled = false;
        for (const socket of open) socket.destroy();
        open.clear();
      }
      if (!server.listening) await listen(port);
    },
    async close() {
      for (const socket of open) socket.destroy();
      open.clear();
      await stopListening();
    },
  };
}
