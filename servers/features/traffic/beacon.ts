/**
 * `GET {public_api_url}/beacon?site=<site_id>&url=<page>&ref=<referrer>[&img=1]`: the pixel.
 * Not an operation: it answers an image or nothing, never JSON, and must stay the cheapest request
 * of the service (no schema, cached site lookup, queued write). 204 by default; `img=1` (the
 * `<noscript>` form) answers a 1x1 transparent GIF. Hits for pages outside the site's domain are
 * answered the same and not stored. Errors are problem+json like everywhere else: 400 without a
 * site id, 404 for an unknown site, 503 with `Retry-After` when ingestion is over capacity.
 */
import { type RequestHandler, Router } from 'express';
import { ServiceError } from '../../errors.ts';
import type { Services } from '../../services.ts';
import { BEACON_PATH } from '../sites/snippets.ts';

/** A 1x1 transparent GIF (42 bytes). */
const GIF = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

export function beaconRouter(
  services: Services,
  methodNotAllowed: (methods: string[]) => RequestHandler,
): Router {
  const router = Router();
  router.get(BEACON_PATH, async (req, res, next) => {
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
