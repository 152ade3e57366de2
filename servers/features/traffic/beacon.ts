/**
 * `GET {public_api_url}/beacon?site=<site_id>&url=<page>&ref=<referrer>[&img=1]`: the pixel.
 * Not an operation: it answers an image or nothing, never JSON, and must stay the cheapest request
 * of the service (no schema, cached site lookup, group-committed write). 204 by default; `img=1`
 * (the `<noscript>` form) answers a 1x1 transparent GIF - either only once the transaction holding
 * the hit committed (`ingest.ts`), so nothing answered 2xx is lost, a crash included. A hit naming
 * no page (no `url`, no Referer) is stored with the page `(unknown)`; one naming a page outside the
 * site's domain is refused. Both paths below record through `TrafficService`, so they cannot
 * differ. Errors are problem+json like everywhere else: 400 without a site id, for a page off the
 * site or a field holding NUL, 404 for an unknown site, 503 with `Retry-After` when ingestion is
 * over capacity or the hit could not be written within `traffic.write_timeout_ms`.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseQuery } from 'node:querystring';
import { type RequestHandler, Router } from 'express';
import proxyaddr from 'proxy-addr';
import { invalid, ServiceError } from '../../errors.ts';
import { nulFields } from '../../input.ts';
import type { OperationServices } from '../../operation-services.ts';
import { requestTracker } from '../../request-log.ts';
import { BEACON_PATH } from '../sites/snippets.ts';

/** What the pixel records with: the configured URLs, the traffic service, the log. */
type BeaconDeps = Pick<OperationServices, 'config' | 'traffic' | 'log'>;

/** A 1x1 transparent GIF (42 bytes). */
const GIF = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/** Trust function Express compiled from `trust_proxy` (`app.get('trust proxy fn')`). */
export type TrustProxy = (address: string, hop: number) => boolean;

/**
 * The beacon's fast path, run before the HTTP framework: a GET to the beacon path for a site that
 * is already in the site cache is recorded and answered here once written, with the same headers
 * and bodies as the route below. Anything refused before the write (other paths, a site not cached
 * yet, a page off the site, over capacity) returns false and goes through Express, which answers
 * it - errors as problem+json. A write that fails is answered here as the route would: the same
 * problem, logged with its request line. Successful beacon hits are not logged one by one: they
 * are the highest-volume request and are counted in the traffic rollups instead.
 */
export function beaconFastPath(
  services: BeaconDeps,
  trustProxy: TrustProxy,
  /** Answers a failure as the REST adapter does (`sendFailure`), once the request is tracked. */
  fail: (req: IncomingMessage, res: ServerResponse, err: unknown) => void,
): (req: IncomingMessage, res: ServerResponse) => boolean {
  const { config, traffic, log } = services;
  const track = requestTracker(log);
  const api = new URL(config.public_api_url);
  const path = `${api.pathname.replace(/\/+$/, '')}${BEACON_PATH}`;
  const requiredHost = api.host === new URL(config.site_url).host ? undefined : api.host;
  // Without a trusted proxy the client is the socket's peer; proxy-addr would parse headers for nothing.
  const clientAddress =
    config.trust_proxy === false
      ? (req: IncomingMessage) => req.socket.remoteAddress ?? ''
      : (req: IncomingMessage) => proxyaddr(req, trustProxy);
  return (req, res) => {
    const url = req.url ?? '';
    if (req.method !== 'GET' || !url.startsWith(path) || url.charCodeAt(path.length) !== 63 /* ? */)
      return false;
    if (requiredHost !== undefined && req.headers.host !== requiredHost) return false;
    // A percent-encoded NUL is refused by the route below, naming the field.
    if (url.includes('%00')) return false;
    const query = parseQuery(url.slice(path.length + 1));
    const site = text(query.site);
    if (!site) return false;
    let written: Promise<unknown> | undefined;
    try {
      written = traffic.collectBeaconIfCached({
        site,
        url: text(query.url),
        ref: text(query.ref),
        userAgent: req.headers['user-agent'] ?? '',
        ip: clientAddress(req),
        headers: req.headers,
      });
    } catch {
      return false;
    }
    if (written === undefined) return false;
    const image = query.img === '1';
    written.then(
      () => {
        const incoming = req.headers['x-request-id'];
        const headers: Record<string, string | number> = {
          'X-Request-Id':
            typeof incoming === 'string' && /^[\w.:-]{1,64}$/.test(incoming) ? incoming : randomUUID(),
          'X-Content-Type-Options': 'nosniff',
          'Cache-Control': 'no-store',
        };
        if (image) {
          res
            .writeHead(200, { ...headers, 'Content-Type': 'image/gif', 'Content-Length': GIF.length })
            .end(GIF);
        } else {
          res.writeHead(204, headers).end();
        }
      },
      (err: unknown) => {
        req.id = track(req, res);
        fail(req, res, err);
      },
    );
    return true;
  };
}

export function beaconRouter(
  services: BeaconDeps,
  methodNotAllowed: (methods: string[]) => RequestHandler,
): Router {
  const router = Router();
  router.get(BEACON_PATH, async (req, res, next) => {
    const nul = nulFields(req.query);
    if (nul.length > 0) {
      next(invalid(nul));
      return;
    }
    const site = text(req.query.site);
    if (!site) {
      next(
        new ServiceError('validation_failed', {
          detail: 'site: is required',
          errors: [{ field: 'site', message: 'is required' }],
        }),
      );
      return;
    }
    try {
      await services.traffic.collectBeacon({
        site,
        url: text(req.query.url),
        ref: text(req.query.ref),
        userAgent: req.headers['user-agent'] ?? '',
        ip: req.ip ?? req.socket.remoteAddress ?? '',
        headers: req.headers,
      });
    } catch (err) {
      next(err);
      return;
    }
    res.setHeader('Cache-Control', 'no-store');
    if (req.query.img === '1') {
      res.statusCode = 200;
      res.setHeader('Content-Type', 'image/gif');
      res.setHeader('Content-Length', GIF.length);
      res.end(GIF);
      return;
    }
    res.statusCode = 204;
    res.end();
  });
  router.all(BEACON_PATH, methodNotAllowed(['GET', 'HEAD']));
  return router;
}
