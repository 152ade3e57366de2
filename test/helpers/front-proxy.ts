/**
 * One public address in front of several service processes, as a load balancer puts them. Every
 * process is configured with the front's URL (so they share one issuer and one MCP URL), and the
 * test chooses which process answers the next requests. Requests pass through unchanged, `Host`
 * included.
 *
 * It also stands for a shared web host: `routeHost` sends the requests for one host name to its own
 * origin, so names that a test DNS server resolves to loopback reach different fixture sites on
 * one address and port, chosen by `Host` as virtual hosting does.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FrontProxy {
  url: string;
  /** Sends the following requests to this origin (`http://127.0.0.1:<port>`). */
  route(origin: string): void;
  /** Sends each following request to the next of these origins in turn (round robin). */
  rotate(origins: string[]): void;
  /** Sends requests whose `Host` names `hostname` (any port) to this origin, whatever `route` says. */
  routeHost(hostname: string, origin: string): void;
  close(): Promise<void>;
}

export async function startFrontProxy(): Promise<FrontProxy> {
  let fallback: URL | undefined;
  let rotation: URL[] = [];
  let turn = 0;
  const byHost = new Map<string, URL>();
  const server = http.createServer((req, res) => {
    const hostname = (req.headers.host ?? '').replace(/:\d+$/, '').toLowerCase();
    const target = byHost.get(hostname) ?? (rotation.length ? rotation[turn++ % rotation.length] : fallback);
    if (!target) {
      res.writeHead(503).end('no process routed');
      return;
    }
    const upstream = http.request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', (err) => {
      if (!res.headersSent) res.writeHead(502);
      res.end(String(err));
    });
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    route(origin) {
      rotation = [];
      fallback = new URL(origin);
    },
    rotate(origins) {
      rotation = origins.map((o) => new URL(o));
      turn = 0;
    },
    routeHost(hostname, origin) {
      byHost.set(hostname.toLowerCase(), new URL(origin));
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
