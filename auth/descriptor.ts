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
 * The fields an auth.md agent reads first are those of the auth.md protocol
 * (https://workos.com/auth-md/docs/auth-md, "1b. Fetch the Authorization Server metadata"): `skill`,
 * `register_uri` (our anonymous sign-up, the one registration that needs nothing), `claim_uri`,
 * `revocation_uri` (where an identity provider pushes the security events that revoke a credential:
 * our CAEP receiver), `identity_types_supported` with one block per type naming its assertion and
 * credential types, and `events_supported`. `methods` then says how each way in works, endpoint by
 * endpoint.
 *
 * Only what works is published, and the methods follow SPEC "Authentication": OAuth with dynamic
 * client registration, `identity_assertion` (ID-JAG from a trusted identity provider, or our own
 * verified-email assertion, both exchanged with the jwt-bearer grant: `assertions/`), and
 * `anonymous`. The `events_supported` of `identity_assertion` are the CAEP event types SPEC
 * "Events" names (the receiver is `events/`).
 */
import type { Config } from '../servers/config.ts';
import {
  ASSERTION_TTL_S,
  CODE_TTL_S,
  EMAIL_CODE_PATH,
  EMAIL_VERIFY_PATH,
  MAX_ATTEMPTS,
} from './assertions/email-codes.ts';
import {
  ID_JAG_TOKEN_TYPE,
  ID_JAG_TYP,
  JWT_BEARER_GRANT,
  VERIFIED_EMAIL_ASSERTION,
} from './assertions/verify.ts';
import { supportedScopes } from './scopes.ts';

export const AGENT_AUTH_PATH = '/.well-known/agent-auth.json';
export const SKILL_NAME = 'auth.md';

export const descriptorUrl = (config: Config): string => `${config.site_url}${AGENT_AUTH_PATH}`;
export const skillUrl = (config: Config): string => `${config.site_url}/${SKILL_NAME}`;
export const registerUrl = (config: Config): string => `${config.site_url}/register`;
export const signupUrl = (config: Config): string => `${config.auth_url}/signup`;
export const agentLogoutUrl = (config: Config): string => `${config.auth_url}/logout`;
export const emailCodeUrl = (config: Config): string => `${config.auth_url}${EMAIL_CODE_PATH}`;
export const emailVerifyUrl = (config: Config): string => `${config.auth_url}${EMAIL_VERIFY_PATH}`;

/** SPEC "Events": the security event types of the identity_assertion method (OpenID CAEP 1.0). */
export const caepEventTypes = [
  'https://schemas.openid.net/secevent/caep/event-type/credential-change',
  'https://schemas.openid.net/secevent/caep/event-type/session-revoked',
  'https://schemas.openid.net/secevent/caep/event-type/token-claims-change',
] as const;

export function agentAuthDescriptor(config: Config) {
  const auth = config.auth_url;
  return {
    descriptor_uri: descriptorUrl(config),
    issuer: auth,
    skill: skillUrl(config),
    skill_name: SKILL_NAME,
    claim_uri: registerUrl(config),
    register_uri: signupUrl(config),
    // The CAEP receiver's push endpoint (`events/routes.ts` PUSH_PATH; importing it would close a cycle).
    revocation_uri: `${auth}/ssf/push`,
    identity_types_supported: ['identity_assertion', 'anonymous'],
    identity_assertion: {
      assertion_types_supported: [ID_JAG_TOKEN_TYPE, VERIFIED_EMAIL_ASSERTION],
      credential_types_supported: ['bearer_token', 'jwt'],
    },
    anonymous: { credential_types_supported: ['bearer_token'] },
    events_supported: [...caepEventTypes],
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
        // Instead of registering, a client may use its metadata document's https URL as client_id.
        client_id_metadata_document_supported: config.auth.client_id_metadata_documents.enabled,
        scopes_supported: [...supportedScopes],
        credential_types_supported: ['oauth_client_credentials', 'bearer_token'],
        bearer_methods_supported: ['header'],
      },
      {
        method: 'identity_assertion',
        endpoints: {
          token: `${auth}/oauth/token`,
          revocation: agentLogoutUrl(config),
          claim: registerUrl(config),
        },
        grant_types_supported: [JWT_BEARER_GRANT],
        assertion_types_supported: [ID_JAG_TOKEN_TYPE, VERIFIED_EMAIL_ASSERTION],
        credential_types_supported: ['bearer_token', 'jwt'],
        bearer_methods_supported: ['header'],
        events_supported: [...caepEventTypes],
        trusted_issuers: config.auth.trusted_issuers.map((t) => t.issuer),
        verified_email: {
          code_request: emailCodeUrl(config),
          code_verification: emailVerifyUrl(config),
          code_lifetime_s: CODE_TTL_S,
          attempts_allowed: MAX_ATTEMPTS,
          assertion_lifetime_s: ASSERTION_TTL_S,
        },
        description:
          `Exchange an identity assertion (a JWT with typ ${ID_JAG_TYP}: an ID-JAG from a trusted identity ` +
          'provider, or the verified_email assertion this server signs after a one-time code) at the token ' +
          'endpoint with the jwt-bearer grant for an access token to the owner MCP server; sign out at the ' +
          'revocation endpoint with that token.',
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

/** The skill an agent reads to authenticate: the ways in, step by step. */
export function authSkill(config: Config): string {
  const auth = config.auth_url;
  const { scan_limit, session_ttl_s } = config.auth.anonymous;
  const owner = `${config.mcp_url}/auth`;
  const issuers = config.auth.trusted_issuers.map((t) => t.issuer);
  const trusted = issuers.length
    ? `Identity providers trusted here: ${issuers.map((i) => `\`${i}\``).join(', ')}.`
    : 'No identity provider is trusted on this deployment yet: use the verified-email assertion (4b).';
  return `# ${SKILL_NAME}

You are an agent. This service offers three ways to authenticate; pick one, then send the credential
as \`Authorization: Bearer <token>\` (header only, never in the query string).

Descriptor: ${descriptorUrl(config)} (also the \`agent_auth\` field of
${auth}/.well-known/oauth-authorization-server).

## 1. Acting for an account owner: OAuth 2.1 with dynamic client registration

Use this for the owner-scoped MCP server ${owner}.

1. \`GET ${config.mcp_url}/auth/.well-known/oauth-protected-resource\`: the resource and its
   authorization server (${auth}).
2. Register a client: \`POST ${auth}/oauth/clients/register\` with JSON
   \`{"client_name": "...", "redirect_uris": ["http://127.0.0.1:<port>/callback"], "token_endpoint_auth_method": "none"}\`.${
     config.auth.client_id_metadata_documents.enabled
       ? `
   Or register nothing: publish that JSON, with \`"client_id"\` set to its own https URL, and use
   the URL as your \`client_id\` (a client ID metadata document; the consent page shows its host).`
       : ''
   }
3. Authorization code flow with PKCE (\`code_challenge_method=S256\`, required) at
   \`${auth}/oauth/authorize\` with \`resource=${owner}\` and
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

## 4. Identity assertion: no browser, a person's identity proven another way

The token endpoint \`${auth}/oauth/token\` accepts
\`grant_type=${JWT_BEARER_GRANT}\` (RFC 7523) with \`assertion=<JWT>\`, where the JWT is an
Identity Assertion JWT Authorization Grant (draft-ietf-oauth-identity-assertion-authz-grant, header
\`typ: ${ID_JAG_TYP}\`). The answer is the same access token as the code flow, for ${owner}
(or \`resource=${config.public_api_url}\`), living ten minutes, without a refresh token: get a new
assertion when it expires.

First register a client allowed this grant:
\`POST ${auth}/oauth/clients/register\`
\`{"client_name": "...", "grant_types": ["${JWT_BEARER_GRANT}"], "response_types": [], "redirect_uris": [], "token_endpoint_auth_method": "client_secret_basic"}\`.
Keep the \`client_id\` and \`client_secret\`; authenticate at the token endpoint with them.

### 4a. From your person's identity provider (ID-JAG)

${trusted}

1. At your identity provider, exchange the person's ID token for an ID-JAG (RFC 8693 token
   exchange, \`requested_token_type=${ID_JAG_TOKEN_TYPE}\`, \`audience=${auth}\`,
   \`resource=${owner}\`, \`scope=agent-service\`). It must carry \`aud\` = \`${auth}\`, your
   \`client_id\`, a unique \`jti\`, \`exp\` and \`iat\` (at most ten minutes old).
2. \`POST ${auth}/oauth/token\` with client authentication and
   \`grant_type=${JWT_BEARER_GRANT}&assertion=<ID-JAG>\` (optionally \`scope\` and \`resource\`,
   which may narrow what the ID-JAG allows, never widen it).
3. The ID-JAG's subject must be linked to an account here: it is linked the first time when the
   provider is trusted for email and an account has the ID-JAG's \`email\`. Otherwise the answer is
   \`400 invalid_grant\` saying the subject is not linked.
4. Each ID-JAG works once (its \`jti\`). Refusals are \`400 invalid_grant\` with an
   \`error_description\` naming the check that failed.

### 4b. No identity provider: a verified email (one-time code)

1. \`POST ${emailCodeUrl(config)}\` \`{"email": "person@example.com", "client_id": "<your client_id>"}\`
   -> \`201 {"request_id": "...", "expires_in": ${CODE_TTL_S}, "attempts_allowed": ${MAX_ATTEMPTS}}\`.
   A six-digit code goes to that email. Requests are rate limited per email and per address (429).
2. Ask the person to read you the code from the email.
3. \`POST ${emailVerifyUrl(config)}\` \`{"request_id": "...", "code": "123456"}\`
   -> \`200 {"assertion": "<JWT>", "assertion_type": "${VERIFIED_EMAIL_ASSERTION}", "expires_in": ${ASSERTION_TTL_S}}\`.
   A wrong code is \`400 email_code_invalid\` with the tries left; the ${MAX_ATTEMPTS}th wrong code
   locks it (\`403 email_code_locked\`); after ${CODE_TTL_S / 60} minutes or once used it is
   \`410 email_code_expired\`. Then ask for a new code.
4. Exchange the assertion as in 4a step 2, within ${ASSERTION_TTL_S / 60} minutes. You act for the account
   with that email (one is made for it if none exists).

### Sign out

\`POST ${agentLogoutUrl(config)}\` with \`Authorization: Bearer <access token>\` revokes every grant the
person gave your client: that token and any other of yours stop working at once.
\`200 {"revoked": true, "grants_revoked": n}\`.

### Security events

The identity_assertion method supports the CAEP event types
${caepEventTypes.map((t) => `\`${t}\``).join(', ')}: when the person's identity provider reports one,
tokens issued to you may stop working before they expire; get a new assertion.
`;
}
