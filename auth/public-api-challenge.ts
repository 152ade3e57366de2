/**
 * The `WWW-Authenticate` challenge of the public API as a protected resource (RFC 6750 section 3),
 * pointing at its metadata (RFC 9728 section 5.1): what the call pipeline and the soul API answer a
 * Bearer write that is missing or refused with. A leaf: it needs the configured URL and nothing else.
 */
import type { Config } from '../servers/config.ts';
import { SERVICE_SCOPE } from './scopes.ts';

/** Where the public API's protected resource metadata is (RFC 9728 section 3.1, under the resource). */
export const publicApiResourceMetadataUrl = (config: Pick<Config, 'public_api_url'>): string =>
  `${config.public_api_url}/.well-known/oauth-protected-resource`;

/** RFC 6750 section 3 challenge pointing at the public API's protected resource metadata (RFC 9728). */
export function bearerChallenge(config: Pick<Config, 'public_api_url'>, error?: string): string {
  const params = [`resource_metadata="${publicApiResourceMetadataUrl(config)}"`, `scope="${SERVICE_SCOPE}"`];
  if (error) params.push(`error="${error}"`);
  return `Bearer ${params.join(', ')}`;
}
