import { z } from 'zod';
import { Email, Password } from '../../../auth/accounts.ts';

// The sign-in name and password are the authorization server's (its consent screen signs in with them).
export { Email, Password };

export const CreateAccountInput = z.strictObject({
  email: Email,
  password: Password.optional(),
});

const ServiceKeySecret = z
  .string()
  .describe(
    'The service key, shown only now: send it as the x-service-key header. It starts with agsvc_sk_ so a leaked ' +
      'key can be recognised; store it as a secret.',
  );

export const IssuedServiceKey = z.object({
  key_id: z.uuid().describe('Id of the key (for listing and revoking).'),
  service_key: ServiceKeySecret,
  prefix: z.string().describe('First characters of the key, as shown in listings.'),
  label: z.string().nullable().describe('Your label for the key.'),
  created_at: z.iso.datetime(),
});

export const CreateAccountResult = z.object({
  account_id: z.uuid(),
  email: z.string(),
  created_at: z.iso.datetime(),
  key: IssuedServiceKey,
});

export const CreateServiceKeyInput = z.strictObject({
  label: z
    .string()
    .trim()
    .min(1)
    .max(100)
    .optional()
    .describe('A name to tell the key apart, e.g. "nginx shipper".'),
});

export const ServiceKeyInfo = z.object({
  key_id: z.uuid(),
  prefix: z.string().describe('First characters of the key.'),
  label: z.string().nullable(),
  created_at: z.iso.datetime(),
  last_used_at: z.iso.datetime().nullable().describe('Last use, to the minute.'),
  revoked_at: z.iso.datetime().nullable(),
});

export const ListServiceKeysResult = z.object({ keys: z.array(ServiceKeyInfo) });

export const RevokeServiceKeyInput = z.strictObject({
  key_id: z.uuid().describe('Id of the key to revoke.'),
});

export const RevokeOAuthTokensResult = z.object({
  revoked_before: z.iso
    .datetime()
    .describe('Access tokens issued before this time are refused by the owner MCP server.'),
  grants_revoked: z
    .number()
    .int()
    .describe('Client approvals deleted, with their refresh tokens; each client must ask again.'),
  sessions_ended: z.number().int().describe('Sign-ins at the authorization server that were ended.'),
  security_events_queued: z
    .number()
    .int()
    .describe("session-revoked SETs queued for the account's security event streams."),
});

export const ChangePasswordInput = z.strictObject({
  current_password: z
    .string()
    .max(200)
    .optional()
    .describe('The present password; required when the account has one.'),
  new_password: Password,
});

export const ChangePasswordResult = z.object({
  changed_at: z.iso.datetime(),
  security_events_queued: z
    .number()
    .int()
    .describe("credential-change SETs queued for the account's security event streams."),
});

export const ChangeEmailInput = z.strictObject({ email: Email });

export const ChangeEmailResult = z.object({
  account_id: z.uuid(),
  email: z.string().describe('The account email now (lower case).'),
  security_events_queued: z
    .number()
    .int()
    .describe("token-claims-change SETs queued for the account's security event streams."),
});

export const ConnectedClient = z.object({
  grant_id: z
    .string()
    .describe('Id of the approval (the grant_id claim of the access tokens issued under it).'),
  client_id: z.string().describe('The OAuth client the account approved.'),
  client_name: z.string().nullable().describe('Name the client registered with, if any.'),
  scopes: z.array(z.string()).describe('Scopes approved.'),
  resources: z.array(z.string()).describe('Resources (RFC 8707) its tokens are issued for.'),
  approved_at: z.iso.datetime(),
  expires_at: z.iso
    .datetime()
    .nullable()
    .describe('When the approval lapses unless the owner signs in again.'),
  first_party: z.boolean().describe("The service's own owner dashboard."),
});
export type ConnectedClient = z.infer<typeof ConnectedClient>;

export const ListConnectedClientsResult = z.object({
  clients: z.array(ConnectedClient).describe('Approvals in force, newest first.'),
});

export const RevokeConnectedClientInput = z.strictObject({
  grant_id: z.string().min(1).max(200).describe('Id of the approval to revoke (from GET /account/clients).'),
});

export const RevokeConnectedClientResult = z.object({
  grant_id: z.string(),
  revoked: z.literal(true),
});
