import { revokeAccountAuthorizations } from '../../../auth/bearer.ts';
import { CREDENTIAL_CHANGE, SESSION_REVOKED, TOKEN_CLAIMS_CHANGE } from '../../../auth/events/set.ts';
import { listConnectedClients as connectedClientsOf, revokeGrant } from '../../../auth/grants.ts';
import type { ServiceKeyRow } from '../../../db/schema.ts';
import { notFound } from '../../errors.ts';
import { defineOperation, requireAccount } from '../../operation.ts';
import {
  ChangeEmailInput,
  ChangeEmailResult,
  ChangePasswordInput,
  ChangePasswordResult,
  CreateAccountInput,
  CreateAccountResult,
  CreateServiceKeyInput,
  IssuedServiceKey,
  ListConnectedClientsResult,
  ListServiceKeysResult,
  RevokeConnectedClientInput,
  RevokeConnectedClientResult,
  RevokeOAuthTokensResult,
  RevokeServiceKeyInput,
  ServiceKeyInfo,
} from './schemas.ts';

const keyInfo = (row: ServiceKeyRow) => ({
  key_id: row.id,
  prefix: row.prefix,
  label: row.label,
  created_at: row.created_at,
  last_used_at: row.last_used_at,
  revoked_at: row.revoked_at,
});

export const createAccount = defineOperation({
  name: 'createAccount',
  title: 'Create a site owner account',
  description:
    'Create an account for a site owner from an email (and optionally a password for the consent screen). ' +
    'Returns the account id and its first service key, shown only in this response. An email that already has ' +
    'an account is refused with 409.',
  input: CreateAccountInput,
  output: CreateAccountResult,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  access: 'public',
  http: { surface: 'public_api', method: 'POST', path: '/account', input: 'body', successStatus: 201 },
  rateLimit: 'unauthenticated_writes',
  errors: ['validation_failed', 'account_exists', 'rate_limited'],
  tags: ['accounts'],
  handler: async (ctx, input) => {
    const { account, key } = await ctx.services.accounts.create(input);
    return { account_id: account.id, email: account.email, created_at: account.created_at, key };
  },
});

export const createServiceKey = defineOperation({
  name: 'createServiceKey',
  title: 'Issue another service key',
  description:
    'Issue an additional service key for the calling account (for another server or a rotation). The key is ' +
    'shown only in this response.',
  input: CreateServiceKeyInput,
  output: IssuedServiceKey,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  access: 'service_key',
  http: { surface: 'public_api', method: 'POST', path: '/account/keys', input: 'body', successStatus: 201 },
  errors: ['validation_failed'],
  tags: ['accounts'],
  handler: async (ctx, input) => ctx.services.accounts.issueKey(requireAccount(ctx).id, input.label ?? null),
});

export const listServiceKeys = defineOperation({
  name: 'listServiceKeys',
  title: "List the account's service keys",
  description: 'Every service key of the calling account: prefix, label, creation, last use and revocation.',
  input: CreateServiceKeyInput.pick({}),
  output: ListServiceKeysResult,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  access: 'service_key',
  http: { surface: 'public_api', method: 'GET', path: '/account/keys', input: 'query' },
  tags: ['accounts'],
  handler: async (ctx) => ({
    keys: (await ctx.services.accounts.listKeys(requireAccount(ctx).id)).map(keyInfo),
  }),
});

export const revokeServiceKey = defineOperation({
  name: 'revokeServiceKey',
  title: 'Revoke a service key',
  description:
    "Revoke one of the calling account's keys at once. Revoking an already revoked key is a no-op.",
  input: RevokeServiceKeyInput,
  output: ServiceKeyInfo,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  access: 'service_key',
  http: { surface: 'public_api', method: 'DELETE', path: '/account/keys/:key_id', input: 'query' },
  errors: ['validation_failed', 'not_found'],
  tags: ['accounts'],
  handler: async (ctx, input) =>
    keyInfo(await ctx.services.accounts.revokeKey(requireAccount(ctx).id, input.key_id)),
});

export const revokeOAuthTokens = defineOperation({
  name: 'revokeOAuthTokens',
  title: 'Sign the account out of every OAuth client',
  description:
    'Revoke every OAuth authorization of the calling account at once: its access tokens are refused by the ' +
    'owner-scoped MCP server from now on, its refresh tokens and client approvals are deleted, and its ' +
    'sign-ins at the authorization server end. Clients must send the owner through sign-in and consent ' +
    'again. Service keys are not affected.',
  input: CreateServiceKeyInput.pick({}),
  output: RevokeOAuthTokensResult,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  access: 'service_key',
  http: { surface: 'public_api', method: 'POST', path: '/account/revoke-tokens', input: 'body' },
  tags: ['accounts'],
  handler: async (ctx) => {
    const accountId = requireAccount(ctx).id;
    const { transmitter } = ctx.services.securityEvents;
    let queued = 0;
    const done = await revokeAccountAuthorizations(ctx.services.db, accountId, new Date(), async (trx) => {
      queued = await transmitter.emit(trx, accountId, SESSION_REVOKED, { initiating_entity: 'user' });
    });
    if (queued > 0) transmitter.queued();
    return {
      revoked_before: done.revokedBefore.toISOString(),
      grants_revoked: done.grantsRevoked,
      sessions_ended: done.sessionsEnded,
      security_events_queued: queued,
    };
  },
});

export const listConnectedClients = defineOperation({
  name: 'listConnectedClients',
  title: 'List the OAuth clients the account approved',
  description:
    'Every OAuth client the account owner approved on the consent screen (MCP clients, agents) and the owner ' +
    'dashboard, with the scopes and resources approved and when the approval lapses. revokeConnectedClient ' +
    'ends one of them.',
  input: CreateServiceKeyInput.pick({}),
  output: ListConnectedClientsResult,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  access: 'service_key',
  http: { surface: 'public_api', method: 'GET', path: '/account/clients', input: 'query' },
  tags: ['accounts'],
  handler: async (ctx) => ({
    clients: await connectedClientsOf(ctx.services.db, requireAccount(ctx).id, ctx.services.now()),
  }),
});

export const revokeConnectedClient = defineOperation({
  name: 'revokeConnectedClient',
  title: 'Revoke one OAuth client',
  description:
    "Revoke one approval of the calling account at once: the client's refresh tokens and codes are deleted and " +
    'its access tokens are refused by the owner-scoped MCP server from now on. The client must send the owner ' +
    'through sign-in and consent again. Other clients and service keys are not affected.',
  input: RevokeConnectedClientInput,
  output: RevokeConnectedClientResult,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  access: 'service_key',
  http: { surface: 'public_api', method: 'DELETE', path: '/account/clients/:grant_id', input: 'query' },
  errors: ['validation_failed', 'not_found'],
  tags: ['accounts'],
  handler: async (ctx, input) => {
    const revoked = await revokeGrant(ctx.services.db, requireAccount(ctx).id, input.grant_id);
    if (!revoked) throw notFound(`No approval ${input.grant_id} on this account`);
    return { grant_id: input.grant_id, revoked: true as const };
  },
});

export const changePassword = defineOperation({
  name: 'changePassword',
  title: "Change the account's password",
  description:
    'Set the password used on the OAuth sign-in page. current_password is required when the account has one. ' +
    "The account's security event streams receive a CAEP credential-change event. Tokens already issued are " +
    'not revoked; use revokeOAuthTokens for that.',
  input: ChangePasswordInput,
  output: ChangePasswordResult,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  access: 'service_key',
  http: { surface: 'public_api', method: 'POST', path: '/account/password', input: 'body' },
  errors: ['validation_failed'],
  tags: ['accounts'],
  handler: async (ctx, input) => {
    const accountId = requireAccount(ctx).id;
    const { transmitter } = ctx.services.securityEvents;
    let queued = 0;
    await ctx.services.accounts.changePassword(
      accountId,
      input.current_password,
      input.new_password,
      async (trx, replaced) => {
        queued = await transmitter.emit(trx, accountId, CREDENTIAL_CHANGE, {
          credential_type: 'password',
          change_type: replaced ? 'update' : 'create',
          initiating_entity: 'user',
        });
      },
    );
    if (queued > 0) transmitter.queued();
    return { changed_at: ctx.services.now().toISOString(), security_events_queued: queued };
  },
});

export const changeEmail = defineOperation({
  name: 'changeEmail',
  title: "Change the account's email",
  description:
    'Change the email of the calling account (also its sign-in name). An email another account has is refused ' +
    "with 409. The account's security event streams receive a CAEP token-claims-change event with the new email.",
  input: ChangeEmailInput,
  output: ChangeEmailResult,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  access: 'service_key',
  http: { surface: 'public_api', method: 'POST', path: '/account/email', input: 'body' },
  errors: ['validation_failed', 'account_exists'],
  tags: ['accounts'],
  handler: async (ctx, input) => {
    const accountId = requireAccount(ctx).id;
    const { transmitter } = ctx.services.securityEvents;
    let queued = 0;
    const account = await ctx.services.accounts.changeEmail(accountId, input.email, async (trx) => {
      queued = await transmitter.emit(trx, accountId, TOKEN_CLAIMS_CHANGE, {
        claims: { email: input.email.trim().toLowerCase() },
        initiating_entity: 'user',
      });
    });
    if (queued > 0) transmitter.queued();
    return { account_id: account.id, email: account.email, security_events_queued: queued };
  },
});

export const accountOperations = [
  createAccount,
  createServiceKey,
  listServiceKeys,
  revokeServiceKey,
  revokeOAuthTokens,
  listConnectedClients,
  revokeConnectedClient,
  changePassword,
  changeEmail,
];
