/**
 * The jwt-bearer grant (RFC 7523 section 2.1) inside oidc-provider (`provider.registerGrantType`):
 * `POST {auth_url}/oauth/token` with `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer` and
 * `assertion=<ID-JAG>` (draft-ietf-oauth-identity-assertion-authz-grant-04 section 4.3), after the
 * provider has authenticated the client and checked that its registration allows this grant type.
 *
 * The answer is the access token of the code flow: a JWT (`at+jwt`, ES256) for one resource with
 * `client_id`, `scope` and `grant_id`, so the owner MCP server (`bearer.ts`) accepts it as it is.
 * Each exchange makes its own Grant that lives as long as the token; no refresh token is issued
 * (section 4.4: the client asks its identity provider for a new ID-JAG instead). Revoking the grant
 * at `{auth_url}/logout` (`revocation.ts`) ends the token at once.
 *
 * Scope and resource: the ID-JAG's `scope` and `resource` claims are what the identity provider
 * allowed; the request's `scope` and `resource` may narrow them, never widen. The resource defaults
 * to the owner MCP server and must be one we issue tokens for; scopes must be among its scopes.
 *
 * The subject: our own verified-email assertions name an email (the account with it, created on
 * first use); a trusted provider's subject must be linked to an account, either already, or now by
 * its `email` claim when the provider is `trusted_for_email` and an account has that email.
 */

import type { Kysely } from 'kysely';
import Provider, { errors, type KoaContextWithOIDC } from 'oidc-provider';
import type { Logger } from 'pino';
import type { Database } from '../../db/schema.ts';
import type { Config } from '../../servers/config.ts';
import type { Accounts } from '../accounts.ts';
import { ownerMcpUrl, resourceServerInfo, tokenLifetimes } from '../provider.ts';
import { SERVICE_SCOPE } from '../scopes.ts';
import { consumeJti, linkedAccount, linkSubject } from './repository.ts';
import { type IdentityAssertion, type IdentityAssertionVerifier, JWT_BEARER_GRANT } from './verify.ts';

/** Parameters of the grant besides `grant_type` and client authentication. */
const PARAMETERS = ['assertion', 'scope', 'resource'];

const invalidGrant = (description: string) =>
  new errors.CustomOIDCProviderError('invalid_grant', description);

export interface JwtBearerGrantDeps {
  services: {
    config: Config;
    db: Kysely<Database>;
    accounts: Pick<Accounts, 'getByEmail' | 'create'>;
    log: Logger;
  };
  verifier: IdentityAssertionVerifier;
  now: () => Date;
}

export function registerJwtBearerGrant(provider: Provider, deps: JwtBearerGrantDeps): void {
  const { config, db, log } = deps.services;
  provider.registerGrantType(
    JWT_BEARER_GRANT,
    async (ctx: KoaContextWithOIDC) => {
      const { params, client } = ctx.oidc;
      if (!client) throw new errors.InvalidClient('client authentication failed');
      const raw = params?.assertion;
      if (typeof raw !== 'string' || !raw)
        throw new errors.InvalidRequest("missing required parameter 'assertion'");

      const check = await deps.verifier.verify(raw, client.clientId);
      if (!check.ok) throw invalidGrant(check.description);
      const assertion = check.assertion;

      const resource = resolveResource(assertion, params?.resource, ownerMcpUrl(config));
      const info = resourceServerInfo(config, resource);
      if (!info) throw new errors.InvalidTarget(`tokens are not issued for ${resource}`);
      const scopes = resolveScopes(assertion, params?.scope, info.scope.split(' '));

      const accountId = await accountFor(assertion, deps);
      // Last, once everything else holds: a refused assertion may be corrected and sent again.
      if (!(await consumeJti(db, assertion)))
        throw invalidGrant('the assertion was already used (its jti was seen before)');

      const grant = new provider.Grant({ accountId, clientId: client.clientId });
      // Outlives its one access token by a minute; nothing else is issued under it.
      // (oidc-provider's BaseToken reads `expiresIn` when saving; its typings omit it on Grant.)
      Object.assign(grant, { expiresIn: tokenLifetimes.AccessToken + 60 });
      grant.addResourceScope(resource, scopes.join(' '));
      const grantId = await grant.save();

      const token = new provider.AccessToken({ accountId, client, grantId, gty: JWT_BEARER_GRANT });
      token.resourceServer = new provider.ResourceServer(resource, info);
      token.scope = scopes.join(' ');
      ctx.oidc.entity('Grant', grant);
      ctx.oidc.entity('AccessToken', token);
      const accessToken = await token.save();
      log.info(
        { client_id: client.clientId, account_id: accountId, iss: assertion.issuer, grant_id: grantId },
        'identity assertion exchanged',
      );
      ctx.body = {
        access_token: accessToken,
        // RFC 8693 section 2.2.1, which the draft's examples follow.
        issued_token_type: 'urn:ietf:params:oauth:token-type:access_token',
        token_type: token.tokenType,
        expires_in: token.expiration,
        scope: token.scope,
      };
    },
    PARAMETERS,
  );
}

function resolveResource(assertion: IdentityAssertion, requested: unknown, fallback: string): string {
  if (requested !== undefined && typeof requested !== 'string')
    throw new errors.InvalidTarget('only one resource may be requested');
  if (requested && assertion.resource && requested !== assertion.resource)
    throw new errors.InvalidTarget(`the assertion allows the resource ${assertion.resource} only`);
  return requested || assertion.resource || fallback;
}

function resolveScopes(assertion: IdentityAssertion, requested: unknown, available: string[]): string[] {
  const asked =
    typeof requested === 'string' && requested.trim()
      ? requested.split(' ').filter(Boolean)
      : (assertion.scopes ?? [SERVICE_SCOPE]);
  if (assertion.scopes) {
    const allowed = new Set(assertion.scopes);
    const beyond = asked.filter((s) => !allowed.has(s));
    if (beyond.length > 0)
      throw new errors.InvalidScope(`the assertion does not allow ${beyond.join(' ')}`, beyond.join(' '));
  }
  const unknown = asked.filter((s) => !available.includes(s));
  if (unknown.length > 0)
    throw new errors.InvalidScope(
      `scopes not available for this resource: ${unknown.join(' ')}`,
      unknown.join(' '),
    );
  if (asked.length === 0) throw new errors.InvalidScope('no scope requested', '');
  return [...new Set(asked)];
}

async function accountFor(assertion: IdentityAssertion, deps: JwtBearerGrantDeps): Promise<string> {
  const { db, accounts } = deps.services;
  if (assertion.self) {
    // Our verified-email assertion: its subject is the email a person proved they read.
    const email = assertion.email;
    if (!email || assertion.emailVerified !== true)
      throw invalidGrant('the assertion carries no verified email');
    const existing = await accounts.getByEmail(email);
    if (existing) return existing.id;
    try {
      return (await accounts.create({ email })).account.id;
    } catch (err) {
      const raced = await accounts.getByEmail(email);
      if (raced) return raced.id;
      throw err;
    }
  }
  const linked = await linkedAccount(db, assertion.issuer, assertion.subject);
  if (linked) return linked;
  if (assertion.trusted?.trusted_for_email && assertion.email && assertion.emailVerified !== false) {
    const account = await accounts.getByEmail(assertion.email);
    if (account)
      return linkSubject(db, {
        issuer: assertion.issuer,
        subject: assertion.subject,
        accountId: account.id,
        at: deps.now(),
      });
  }
  throw invalidGrant(
    `the subject ${assertion.subject} of ${assertion.issuer} is not linked to an account of this service`,
  );
}
