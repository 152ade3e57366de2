/**
 * Scopes of the authorization server (SPEC "Authentication", rule 7: the service, profile, email,
 * offline_access) and how the consent screen names each in plain words.
 */

/** The scope that lets a client call the owner-scoped MCP server. */
export const SERVICE_SCOPE = 'agent-service';

/** Scopes an access token for the owner-scoped MCP server can carry (RFC 9728 `scopes_supported`). */
export const resourceScopes = [SERVICE_SCOPE, 'profile', 'email'] as const;

/** Every scope a client may request. */
export const supportedScopes = [...resourceScopes, 'offline_access'] as const;

/** What approving each scope lets the client do, as the consent screen says it. */
export const scopeDescriptions: Record<string, string> = {
  [SERVICE_SCOPE]:
    'Read your own sites, their agent-versus-human traffic and the stored scan findings of your sites, and start batches of scans under your account',
  profile: 'See your account identifier',
  email: 'See the email address of your account',
  offline_access: 'Stay connected after you close this window, until you sign out or revoke it',
  openid: 'Confirm that it is you who signed in',
};

export function describeScope(scope: string): string {
  return scopeDescriptions[scope] ?? scope;
}
