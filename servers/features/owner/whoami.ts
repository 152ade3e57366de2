/**
 * Who an owner-scoped MCP session acts for: the approved account and the OAuth client and scopes
 * it approved. Identity comes from the access token, never from the input (STYLE.md 3).
 */
import { z } from 'zod';
import { ServiceError } from '../../errors.ts';
import { defineOperation } from '../../operation.ts';

export const OwnerContext = z.object({
  account_id: z.string().describe('The account the token was approved by'),
  email: z.string().nullable().describe('Email of the account; null unless the email scope was granted'),
  client_id: z.string().describe('The OAuth client this session runs as'),
  scopes: z.array(z.string()).describe('Scopes the account owner granted this client'),
});
export type OwnerContext = z.infer<typeof OwnerContext>;

export const getOwnerContext = defineOperation({
  name: 'getOwnerContext',
  title: 'Who am I connected as',
  description:
    'Returns the account this owner-scoped session acts for (its id, and its email when the email ' +
    'scope was granted), the OAuth client it was approved for and the scopes granted. Call it first ' +
    'to confirm whose sites, traffic and scan findings the other tools will return.',
  input: z.strictObject({}),
  output: OwnerContext,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  access: 'owner',
  mcp: ['owner'],
  handler: async (ctx) => {
    const grant = ctx.grant;
    if (!grant) throw new ServiceError('unauthorized');
    const account = grant.scopes.includes('email')
      ? await ctx.services.accounts.get(grant.accountId)
      : undefined;
    if (grant.scopes.includes('email') && !account) throw new ServiceError('unauthorized');
    return {
      account_id: grant.accountId,
      email: account?.email ?? null,
      client_id: grant.clientId,
      scopes: grant.scopes,
    };
  },
});

export const ownerContextOperations = [getOwnerContext];
