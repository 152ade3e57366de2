/**
 * HTTP of identity assertions on the authorization server (mounted at `auth_url`):
 *
 * - `POST /assertions/email` and `POST /assertions/email/verify`: the verified-email flow
 *   (`email-codes.ts`). JSON in, JSON out; errors are `application/problem+json`.
 * - `POST /logout` with `Authorization: Bearer <access token>`: an agent's revocation (the
 *   descriptor's `revocation` endpoint). It revokes every grant the token's account gave the
 *   token's client - the token itself, its siblings and any refresh token under them - so the next
 *   call to the owner MCP server with any of them is refused. Without a bearer header the request
 *   is the browser sign-out of oidc-provider (`rpInitiatedLogout`), which ends the sign-in session.
 */
import { type RequestHandler, Router } from 'express';
import type { Kysely } from 'kysely';
import { errors } from 'oidc-provider';
import type { Logger } from 'pino';
import { z } from 'zod';
import type { Database } from '../../db/schema.ts';
import { invalid, ServiceError, toServiceError } from '../../servers/errors.ts';
import { fieldErrors, nulFields } from '../../servers/input.ts';
import { jsonBody } from '../../servers/json-body.ts';
import { Email } from '../accounts.ts';
import type { BearerResult, BearerVerifier } from '../bearer.ts';
import type { AuthorizationServer } from '../provider.ts';
import { EMAIL_CODE_PATH, EMAIL_VERIFY_PATH, type EmailCodes } from './email-codes.ts';
import { JWT_BEARER_GRANT } from './verify.ts';

export const EmailCodeRequest = z.strictObject({
  email: Email.describe('The email of the person the agent acts for; the code is sent there.'),
  client_id: z
    .string()
    .min(1)
    .max(200)
    .describe(
      'The OAuth client that will exchange the assertion (registered with the jwt-bearer grant type).',
    ),
});
export type EmailCodeRequest = z.infer<typeof EmailCodeRequest>;

export const EmailCodeCheck = z.strictObject({
  request_id: z.uuid().describe('The request_id of the code request.'),
  code: z
    .string()
    .regex(/^\d{6}$/, 'must be the six digits of the code')
    .describe('The six-digit code the person read in the email.'),
});
export type EmailCodeCheck = z.infer<typeof EmailCodeCheck>;

function parse<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  const nul = nulFields(body);
  if (nul.length > 0) throw invalid(nul);
  const parsed = schema.safeParse(body ?? {}, { reportInput: true });
  if (!parsed.success) throw invalid(fieldErrors(parsed.error));
  return parsed.data;
}

const noStore = { 'Cache-Control': 'no-store', Pragma: 'no-cache' };

export function identityAssertionRouter(
  services: AgentLogoutDeps,
  authz: AuthorizationServer,
  emailCodes: EmailCodes,
): Router {
  const router = Router();
  const json = jsonBody('4kb');

  router.post(EMAIL_CODE_PATH, json, async (req, res, next) => {
    try {
      const input = parse(EmailCodeRequest, req.body);
      const client = await authz.provider.Client.find(input.client_id).catch((err: unknown) => {
        // A client ID metadata document that cannot be used (`client-id-metadata.ts`).
        if (err instanceof errors.OIDCProviderError && err.expose)
          throw invalid([{ field: 'client_id', message: err.error_description ?? err.message }]);
        throw err;
      });
      if (!client) throw invalid([{ field: 'client_id', message: 'is not a client registered here' }]);
      if (!client.grantTypeAllowed(JWT_BEARER_GRANT))
        throw invalid([
          {
            field: 'client_id',
            message: `is not registered for the grant type ${JWT_BEARER_GRANT} (add it to grant_types)`,
          },
        ]);
      const sent = await emailCodes.request({
        email: input.email,
        clientId: input.client_id,
        address: req.ip ?? 'unknown',
      });
      res.status(201).set(noStore).json(sent);
    } catch (err) {
      next(toServiceError(err));
    }
  });

  router.post(EMAIL_VERIFY_PATH, json, async (req, res, next) => {
    try {
      const input = parse(EmailCodeCheck, req.body);
      const assertion = await emailCodes.verify({
        requestId: input.request_id,
        code: input.code,
        address: req.ip ?? 'unknown',
      });
      res.status(200).set(noStore).json(assertion);
    } catch (err) {
      next(toServiceError(err));
    }
  });

  router.post('/logout', agentLogout(services));
  return router;
}

/** `POST {auth_url}/logout` with a bearer token: see the module comment. */
/** What the agents' sign-out reads: both token verifiers, the database, the log. */
export interface AgentLogoutDeps {
  db: Kysely<Database>;
  log: Logger;
  bearer: BearerVerifier;
  publicApiBearer: BearerVerifier;
}

function agentLogout(services: AgentLogoutDeps): RequestHandler {
  return async (req, res, next) => {
    const authorization = req.headers.authorization;
    if (!authorization || !/^bearer /i.test(authorization)) return next();
    try {
      let result: BearerResult = await services.bearer.verify(authorization, undefined);
      if (!result.ok && result.error === 'invalid_token')
        result = await services.publicApiBearer.verify(authorization, undefined);
      if (!result.ok) {
        const error = result.error ?? 'invalid_token';
        const description = result.description ?? 'The access token is not valid';
        res
          .status(401)
          .set({
            ...noStore,
            'WWW-Authenticate': `Bearer error="${error}", error_description="${description.replace(/"/g, "'")}"`,
          })
          .json({ error, error_description: description });
        return;
      }
      const { accountId, clientId } = result.grant;
      const revoked = await revokeClientGrants(services.db, accountId, clientId);
      services.log.info({ account_id: accountId, client_id: clientId, grants: revoked }, 'agent signed out');
      res.status(200).set(noStore).json({ revoked: true, grants_revoked: revoked });
    } catch (err) {
      next(err instanceof ServiceError ? err : toServiceError(err));
    }
  };
}

/**
 * Deletes every grant `accountId` gave `clientId`, with every token, code and refresh token stored
 * under them; access tokens (JWTs) of those grants are refused from then on (`bearer.ts` checks that
 * the grant exists). Returns how many grants were revoked.
 */
export async function revokeClientGrants(
  db: Kysely<Database>,
  accountId: string,
  clientId: string,
): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const rows = await trx
      .selectFrom('oauth_records')
      .select('id')
      .where('model', '=', 'Grant')
      .where('account_id', '=', accountId)
      .where('client_id', '=', clientId)
      .execute();
    const ids = rows.map((row) => row.id);
    if (ids.length === 0) return 0;
    await trx.deleteFrom('oauth_records').where('grant_id', 'in', ids).execute();
    await trx.deleteFrom('oauth_records').where('model', '=', 'Grant').where('id', 'in', ids).execute();
    return ids.length;
  });
}
