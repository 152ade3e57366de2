/**
 * An OAuth client's web site on loopback: an HTTPS server (a client ID URL is https, draft-ietf-
 * oauth-client-id-metadata-document-02 section 3) that serves client ID metadata documents, or
 * misbehaves on purpose. Its certificate is made for 127.0.0.1 by `selfsigned` and added to this
 * process's trusted certificates (`tls.setDefaultCACertificates`, what NODE_EXTRA_CA_CERTS does for
 * a process at its start), so the service in this process verifies it like any site's.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import tls from 'node:tls';
import { generate } from 'selfsigned';

export type DocumentHandler = (req: IncomingMessage, res: ServerResponse) => void;

export interface ClientDocumentSite {
  origin: string;
  /** `https://127.0.0.1:<port><path>`. */
  url(path: string): string;
  /** Serves `body` (JSON-encoded unless a string) at `path` with 200 and these headers. */
  serve(path: string, body: unknown, headers?: Record<string, string>): string;
  /** Answers `path` with `handler`. */
  handle(path: string, handler: DocumentHandler): string;
  /** Requests received for `path`. */
  hits(path: string): number;
  close(): Promise<void>;
}

let trusted: Promise<{ key: string; cert: string }> | undefined;

/** One certificate per test process, trusted once. */
function loopbackCertificate(): Promise<{ key: string; cert: string }> {
  trusted ??= (async () => {
    const pems = await generate([{ name: 'commonName', value: '127.0.0.1' }], {
      keyType: 'ec',
      curve: 'P-256',
      algorithm: 'sha256',
      extensions: [
        { name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] },
        { name: 'extKeyUsage', serverAuth: true },
      ],
    });
    tls.setDefaultCACertificates([...tls.getCACertificates('default'), pems.cert]);
    return { key: pems.private, cert: pems.cert };
  })();
  return trusted;
}

export async function startClientDocumentSite(): Promise<ClientDocumentSite> {
  const { key, cert } = await loopbackCertificate();
  const handlers = new Map<string, DocumentHandler>();
  const counts = new Map<string, number>();
  const server = https.createServer({ key, cert }, (req, res) => {
    const path = new URL(req.url ?? '/', 'https://127.0.0.1').pathname;
    counts.set(path, (counts.get(path) ?? 0) + 1);
    const handler = handlers.get(path);
    if (handler) return handler(req, res);
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const site: ClientDocumentSite = {
    origin,
    url: (path) => `${origin}${path}`,
    serve(path, body, headers = {}) {
      return site.handle(path, (_req, res) => {
        res
          .writeHead(200, { 'content-type': 'application/json', ...headers })
          .end(typeof body === 'string' ? body : JSON.stringify(body));
      });
    },
    handle(path, handler) {
      handlers.set(path, handler);
      return site.url(path);
    },
    hits: (path) => counts.get(path) ?? 0,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return site;
}
