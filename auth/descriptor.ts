/**
 * The agent authentication descriptor (SPEC "Authentication", the descriptor table) and its skill,
 * `auth.md`: how an agent gets credentials here, derived from the configuration so every address
 * is the one the service answers at.
 *
 * The descriptor is served at `{site_url}/.well-known/agent-auth.json` and embedded as `agent_auth`
 * in the authorization server metadata. The embedded block is the auth.md convention (an agent
 * reads `agent_auth` after RFC 8414 discovery); the standalone document is for an agent that knows
 * only the site: RFC 8615 reserves `/.well-known/` for site-wide metadata, and no registered name
 * exists for this document yet, so it takes the name of the block it mirrors.
 *
 * Only what works is published. The `identity_assertion` method of the specification (ID-JAG and
 * verified-email assertions, CAEP events) is not built yet, so it is absent from `methods`
 * and from `identity_types_supported` until its token endpoint accepts assertions.
 */
import type { Config } from '../servers/config.ts';
import { supportedScopes } from './scopes.ts';

export const AGENT_AUTH_PATH = '/.well-known/agent-auth.json';
export const SKILL_NAME = 'auth.md';

export const descriptorUrl = (config: Config): string => `${config.site_url}${AGENT_AUTH_PATH}`;
export const skillUrl = (config: Config): string => `${config.site_url}/${SKILL_NAME}`;
export const registerUrl = (config: Config): string => `${config.site_url}/register`;
export const signupUrl = (config: Config): string => `${config.auth_url}/signup`;

export function agentAuthDescriptor(config: Config) {
  const auth = config.auth_url;
  return {
    descriptor_uri: descriptorUrl(config),
    issuer: auth,
    skill: skillUrl(config),
    skill_name: SKILL_NAME,
    claim_uri: registerUrl(config),
    identity_types_supported: ['anonymous'],
    methods: [
      {
        method: 'oauth_dynamic_client_registration',
        endpoints: {
          registration: `${auth}/oauth/clients/register`,
          authorization: `${auth}/oauth/authorize`,
          token: `${auth}/oauth/token`,
          revocation: `${auth}/oauth/revoke`,
        },
        grant_types_supported: ['authorization_code', 'refresh_token'],
        code_challenge_methods_supported: ['S256'],
        scopes_supported: [...supportedScopes],
        credential_types_supported: ['oauth_client_credentials', 'bearer_token'],
        bearer_methods_supported: ['header'],
      },
      {
        method: 'anonymous',
        endpoints: { token: signupUrl(config), claim: registerUrl(config) },
        credential_types_supported: ['bearer_token'],
        bearer_methods_supported: ['header'],
        scan_limit: config.auth.anonymous.scan_limit,
        session_lifetime_s: config.auth.anonymous.session_ttl_s,
        description:
          'An anonymous session reads public data and runs a limited number of scans; a person claims it ' +
          'at the claim address to keep its results in their account.',
      },
    ],
  };
}

export type AgentAuthDescriptor = ReturnType<typeof agentAuthDescriptor>;

/** The skill an agent reads to authenticate: the three ways in, step by step. */
export function authSkill(config: Config): string {
  const auth = config.auth_url;
  const { scan_limit, session_ttl_s } = config.auth.anonymous;
  return `# ${SKILL_NAME}

You are an agent. This service offers two ways to authenticate; pick one, then send the credential
as \`Authorization: Bearer <token>\` (header only, never in the query string).

Descriptor: ${descriptorUrl(config)} (also the \`agent_auth\` field of
${auth}/.well-known/oauth-authorization-server).

## 1. Acting for an account owner: OAuth 2.1 with dynamic client registration

Use this for the owner-scoped MCP server ${config.mcp_url}/auth.

1. \`GET ${config.mcp_url}/auth/.well-known/oauth-protected-resource\`: the resource and its
   authorization server (${auth}).
2. Register a client: \`POST ${auth}/oauth/clients/register\` with JSON
   \`{"client_name": "...", "redirect_uris": ["http://127.0.0.1:<port>/callback"], "token_endpoint_auth_method": "none"}\`.
3. Authorization code flow with PKCE (\`code_challenge_method=S256\`, required) at
   \`${auth}/oauth/authorize\` with \`resource=${config.mcp_url}/auth\` and
   \`scope=${supportedScopes.join(' ')}\`. The person signs in and approves on a consent page.
4. Exchange the code at \`${auth}/oauth/token\` (grants \`authorization_code\`, \`refresh_token\`).
   Access tokens live ten minutes; refresh tokens rotate on every use.
5. Revoke with \`POST ${auth}/oauth/revoke\`.

## 2. No account: an anonymous session

1. \`POST ${signupUrl(config)}\` (no body needed). The answer:
   \`{"access_token": "agsvc_anon_...", "token_type": "Bearer", "expires_in": ${session_ttl_s}, "scan_limit": ${scan_limit}, "scans_used": 0, "claim_url": "${registerUrl(config)}?claim=..."}\`.
   Sign-ups are rate limited per client address.
2. Read public data (every GET of ${config.public_api_url}, the public MCP server ${config.mcp_url})
   with or without the token.
3. Run up to ${scan_limit} scans: \`POST ${config.public_api_url}/scans\` \`{"domain": "example.com"}\`
   with the token. The scans belong to the session (\`"public": false\` keeps one private to it).
   Past the limit the answer is \`403\` with code \`anonymous_scan_limit_reached\`.
4. A \`401\` with \`WWW-Authenticate: Bearer error="invalid_token"\` means the session expired or
   was claimed: drop the token; sign up again if you still need one.

## 3. Claim: keep an anonymous session's results

Give the person the \`claim_url\` (keep the token to yourself: the claim code in the URL is a
different secret). At ${registerUrl(config)} they sign in or create an account; the session's scans
move to that account and the session's token stops working. A claim code works once. From then on
use the account's own credentials (its service key or the OAuth flow above).
`;
}
