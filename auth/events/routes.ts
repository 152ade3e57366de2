/**
 * HTTP of security events on the authorization server (`{auth_url}/ssf/...`, README "Security
 * events"): the RFC 8935 push endpoint that receives SETs from trusted transmitters.
 */
import express, { type RequestHandler, Router } from 'express';
import { toServiceError } from '../../servers/errors.ts';
import type { Services } from '../../servers/services.ts';
import { SET_MEDIA_TYPE } from './set.ts';

/** Largest SET accepted on the push endpoint. */
export const MAX_SET_BYTES = 64 * 1024;

export const PUSH_PATH = '/ssf/push';

/** RFC 8935 section 2.3: `{"err": ..., "description": ...}`. */
function pushError(res: express.Response, status: number, err: string, description: string): void {
  res.status(status).set('Cache-Control', 'no-store').json({ err, description });
}

/** `POST {auth_url}/ssf/push`: RFC 8935 section 2. */
export function pushEndpoint(services: Services): RequestHandler {
  const body = express.text({ type: () => true, limit: MAX_SET_BYTES });
  return async (req, res) => {
    const type = (req.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase();
    if (type !== SET_MEDIA_TYPE) {
      pushError(res, 400, 'invalid_request', `The request body must be a SET sent as ${SET_MEDIA_TYPE}`);
      return;
    }
    const address = req.ip ?? 'unknown';
    try {
      // Anyone can post here: every request counts against the address until its SET is accepted,
      // so a trusted transmitter's traffic costs nothing and forgeries are limited.
      await services.rateLimits.consume('unauthenticated_writes', address);
    } catch (err) {
      const error = toServiceError(err);
      res.set(error.headers);
      pushError(res, error.status, 'temporarily_unavailable', error.publicDetail);
      return;
    }
    body(req, res, async (err?: unknown) => {
      if (err) {
        const tooLarge = (err as { type?: string }).type === 'entity.too.large';
        pushError(
          res,
          tooLarge ? 413 : 400,
          'invalid_request',
          tooLarge
            ? `The SET is larger than ${MAX_SET_BYTES / 1024} KiB`
            : 'The request body could not be read',
        );
        return;
      }
      try {
        const result = await services.securityEvents.receiver.receive(
          typeof req.body === 'string' ? req.body : '',
          req.get('authorization'),
        );
        if (!result.ok) {
          pushError(res, result.status, result.err, result.description);
          return;
        }
        await services.rateLimits.refund('unauthenticated_writes', address);
        res.status(202).set('Cache-Control', 'no-store').end();
      } catch (error) {
        services.log.error({ err: error }, 'security event could not be processed');
        pushError(res, 500, 'temporarily_unavailable', 'The SET could not be processed; send it again later');
      }
    });
  };
}

/** Mounted on the authorization server's router (`auth/router.ts`). */
export function securityEventsRouter(services: Services): Router {
  const router = Router();
  router.post(PUSH_PATH, pushEndpoint(services));
  return router;
}
