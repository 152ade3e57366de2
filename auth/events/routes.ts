/**
 * HTTP of security events on the authorization server (`{auth_url}/ssf/...`, docs/guides/authentication/caep.md): the RFC 8935 push endpoint that receives SETs from trusted transmitters, and our
 * transmitter's stream management (SSF 1.0 section 8.1), its status and verification endpoints,
 * and its metadata (`/.well-known/ssf-configuration`, also mirrored on the site).
 *
 * Stream management is for an account: `Authorization: Bearer` with an access token of ours (for
 * the owner MCP server or the public API) or `x-service-key`. A stream gets SETs about that account.
 */
import express, { type Request, type RequestHandler, Router } from 'express';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { z } from 'zod';
import type { Database } from '../../db/schema.ts';
import type { Config } from '../../servers/config.ts';
import { invalid, notFound, ServiceError, toServiceError } from '../../servers/errors.ts';
import { fieldErrors, nulFields } from '../../servers/input.ts';
import { jsonBody } from '../../servers/json-body.ts';
import type { SafeFetch } from '../../servers/outbound/safe-fetch.ts';
import { requireCallableDestination } from '../../servers/outbound/safe-fetch.ts';
import type { RateLimits } from '../../servers/rate-limit.ts';
import type { SecretBox } from '../../servers/secrets.ts';
import type { Accounts } from '../accounts.ts';
import type { BearerVerifier } from '../bearer.ts';
import { METADATA_CACHE_CONTROL } from '../provider.ts';
import type { SecurityEventReceiver } from './receiver.ts';
import { SET_MEDIA_TYPE } from './set.ts';
import {
  CreateStream,
  countStreams,
  deleteStream,
  findStream,
  insertStream,
  listStreams,
  MIN_VERIFICATION_INTERVAL_S,
  ReplaceStream,
  StreamId,
  setStreamStatus,
  streamConfiguration,
  UpdateStatus,
  UpdateStream,
  updateStream,
  VerificationRequest,
  verificationWait,
} from './streams.ts';
import { type SecurityEventTransmitter, SSF_CONFIGURATION_PATH, ssfConfiguration } from './transmitter.ts';

/** What the receiver's push endpoint and the stream management run on; the composition root gives it. */
export interface SecurityEventRouteDeps {
  config: Config;
  db: Kysely<Database>;
  log: Logger;
  rateLimits: RateLimits;
  accounts: Pick<Accounts, 'authenticate'>;
  /** Both verifiers: a stream is managed with an access token for the owner MCP server or the public API. */
  bearer: BearerVerifier;
  publicApiBearer: BearerVerifier;
  securityEvents: { receiver: SecurityEventReceiver; transmitter: SecurityEventTransmitter };
  secrets: SecretBox;
  fetch: SafeFetch;
  now: () => Date;
}

/** Largest SET accepted on the push endpoint. */
export const MAX_SET_BYTES = 64 * 1024;

export const PUSH_PATH = '/ssf/push';

/** RFC 8935 section 2.3: `{"err": ..., "description": ...}`. */
function pushError(res: express.Response, status: number, err: string, description: string): void {
  res.status(status).set('Cache-Control', 'no-store').json({ err, description });
}

/** `POST {auth_url}/ssf/push`: RFC 8935 section 2. */
export function pushEndpoint(services: SecurityEventRouteDeps): RequestHandler {
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

/** The account a stream management request acts for, from its token or service key. */
async function streamOwner(services: SecurityEventRouteDeps, req: Request): Promise<string> {
  const authorization = req.get('authorization');
  if (authorization) {
    for (const verifier of [services.bearer, services.publicApiBearer]) {
      const result = await verifier.verify(authorization, undefined);
      if (result.ok) return result.grant.accountId;
    }
    throw new ServiceError('invalid_token', {
      detail: 'The access token is not valid',
      headers: { 'WWW-Authenticate': 'Bearer error="invalid_token"' },
    });
  }
  const key = req.get('x-service-key');
  const account = key ? await services.accounts.authenticate(key) : null;
  if (account) return account.id;
  throw new ServiceError(key ? 'invalid_token' : 'unauthorized', {
    detail: 'Stream management needs an access token of this authorization server or an x-service-key',
    headers: { 'WWW-Authenticate': 'Bearer' },
  });
}

function parse<T extends z.ZodType>(schema: T, value: unknown): z.infer<T> {
  // Stored text cannot hold NUL on PostgreSQL (`servers/input.ts`): refused naming the field.
  const nul = nulFields(value);
  if (nul.length > 0) throw invalid(nul);
  const parsed = schema.safeParse(value ?? {});
  if (!parsed.success) throw invalid(fieldErrors(parsed.error));
  return parsed.data;
}

/** Mounted on the authorization server's router (`auth/router.ts`). */
export function securityEventsRouter(services: SecurityEventRouteDeps): Router {
  const router = Router();
  router.post(PUSH_PATH, pushEndpoint(services));
  // The agent authentication descriptor names it as `revocation_uri`: any other method is a 405.
  router.all(PUSH_PATH, (req, _res, next) =>
    next(
      new ServiceError('method_not_allowed', {
        detail: `${req.method} is not allowed here; use POST`,
        headers: { Allow: 'POST' },
      }),
    ),
  );
  router.get(SSF_CONFIGURATION_PATH, serveSsfConfiguration(services));
  mountStreamRoutes(router, services);
  mountStatusRoutes(router, services);
  return router;
}

type ManagementHandler = (accountId: string, req: Request, res: express.Response) => Promise<void>;

/** Runs a management handler: the owner first, then the body, errors as problem+json. */
function managed(services: SecurityEventRouteDeps, handler: ManagementHandler): RequestHandler {
  return async (req, res, next) => {
    try {
      const accountId = await streamOwner(services, req);
      res.set('Cache-Control', 'no-store');
      await handler(accountId, req, res);
    } catch (err) {
      next(toServiceError(err));
    }
  };
}

/** The account's stream named by `streamId`, or 404. */
async function ownedStream(db: SecurityEventRouteDeps['db'], accountId: string, streamId: unknown) {
  const id = parse(StreamId, streamId);
  const row = await findStream(db, accountId, id);
  if (!row) throw notFound(`No stream ${id}`);
  return row;
}

/** SSF 1.0 section 8.1.1: creating, reading, updating, replacing and deleting an account's streams. */
function mountStreamRoutes(router: Router, services: SecurityEventRouteDeps): void {
  const { config, db, secrets: box } = services;
  const json = jsonBody('16kb');
  const issuer = config.auth_url;
  const owned = (accountId: string, streamId: unknown) => ownedStream(db, accountId, streamId);
  const checkEndpoint = (url: string | undefined) =>
    url ? requireCallableDestination(services.fetch, url, 'delivery.endpoint_url') : Promise.resolve();

  router.post(
    '/ssf/streams',
    json,
    managed(services, async (accountId, req, res) => {
      const input = parse(CreateStream, req.body);
      await checkEndpoint(input.delivery.endpoint_url);
      const max = config.auth.security_events.max_streams_per_account;
      if ((await countStreams(db, accountId)) >= max) {
        throw new ServiceError('forbidden', { detail: `An account may hold at most ${max} streams` });
      }
      const row = await insertStream(db, box, accountId, input, services.now());
      res.status(201).json(streamConfiguration(row, issuer));
    }),
  );
  router.get(
    '/ssf/streams',
    managed(services, async (accountId, req, res) => {
      if (req.query.stream_id === undefined) {
        res.json((await listStreams(db, accountId)).map((row) => streamConfiguration(row, issuer)));
        return;
      }
      res.json(streamConfiguration(await owned(accountId, req.query.stream_id), issuer));
    }),
  );
  for (const method of ['patch', 'put'] as const) {
    router[method](
      '/ssf/streams',
      json,
      managed(services, async (accountId, req, res) => {
        const replace = method === 'put';
        const change = replace ? parse(ReplaceStream, req.body) : parse(UpdateStream, req.body);
        const row = await owned(accountId, change.stream_id);
        await checkEndpoint(change.delivery?.endpoint_url);
        res.json(
          streamConfiguration(await updateStream(db, box, row, change, replace, services.now()), issuer),
        );
      }),
    );
  }
  router.delete(
    '/ssf/streams',
    managed(services, async (accountId, req, res) => {
      await deleteStream(db, await owned(accountId, req.query.stream_id));
      res.status(204).end();
    }),
  );
}

/** SSF 1.0 sections 8.1.2 and 8.1.4: a stream's status, and verification events asked for. */
function mountStatusRoutes(router: Router, services: SecurityEventRouteDeps): void {
  const { db } = services;
  const json = jsonBody('16kb');
  const { transmitter } = services.securityEvents;
  const owned = (accountId: string, streamId: unknown) => ownedStream(db, accountId, streamId);

  router.get(
    '/ssf/status',
    managed(services, async (accountId, req, res) => {
      const row = await owned(accountId, req.query.stream_id);
      res.json({
        stream_id: row.id,
        status: row.status,
        ...(row.status_reason ? { reason: row.status_reason } : {}),
      });
    }),
  );
  router.post(
    '/ssf/status',
    json,
    managed(services, async (accountId, req, res) => {
      const input = parse(UpdateStatus, req.body);
      const row = await setStreamStatus(
        db,
        await owned(accountId, input.stream_id),
        input.status,
        input.reason ?? null,
        services.now(),
      );
      if (row.status === 'enabled') transmitter.queued();
      res.json({
        stream_id: row.id,
        status: row.status,
        ...(row.status_reason ? { reason: row.status_reason } : {}),
      });
    }),
  );
  router.post(
    '/ssf/verify',
    json,
    managed(services, async (accountId, req, res) => {
      const input = parse(VerificationRequest, req.body);
      const row = await owned(accountId, input.stream_id);
      if (row.status === 'disabled') {
        throw new ServiceError('forbidden', { detail: 'The stream is disabled; enable it to verify it' });
      }
      const wait = await verificationWait(db, row.id, services.now());
      if (wait > 0) {
        throw new ServiceError('rate_limited', {
          detail: `One verification per stream every ${MIN_VERIFICATION_INTERVAL_S} seconds (min_verification_interval)`,
          headers: { 'Retry-After': String(wait) },
        });
      }
      await transmitter.verify(db, row, input.state);
      res.status(204).end();
    }),
  );
}

/** SSF 1.0 section 7: the transmitter configuration metadata. */
export function serveSsfConfiguration(services: { config: Config }): RequestHandler {
  const body = JSON.stringify(ssfConfiguration(services.config), null, 2);
  return (_req, res) => {
    res
      .set({ 'Access-Control-Allow-Origin': '*', 'Cache-Control': METADATA_CACHE_CONTROL })
      .type('application/json')
      .send(body);
  };
}

/**
 * On `site_url`: the metadata at `/.well-known/ssf-configuration` and, for an issuer with a path,
 * path-inserted after it (SSF 1.0 section 7.2, as RFC 8414 section 3.1).
 */
export function ssfConfigurationMirror(services: { config: Config }): Router {
  const router = Router();
  const authPath = new URL(services.config.auth_url).pathname.replace(/\/+$/, '');
  router.get(SSF_CONFIGURATION_PATH, serveSsfConfiguration(services));
  if (authPath) router.get(`${SSF_CONFIGURATION_PATH}${authPath}`, serveSsfConfiguration(services));
  return router;
}
