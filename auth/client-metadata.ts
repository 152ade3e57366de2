/**
 * What open dynamic client registration (RFC 7591) accepts on top of oidc-provider's own checks.
 * Anyone may register, and what a client registers is shown to people (its name heads the consent
 * page) and decides where they are sent with an authorization code, so the metadata is held to
 * what an honest client needs. Refusals use RFC 7591 section 3.2.2's error codes.
 */
import { isLoopbackRedirect } from './redirects.ts';

export const MAX_METADATA_BYTES = 16 * 1024;
export const MAX_REDIRECT_URIS = 10;
export const MAX_CLIENT_NAME_LENGTH = 200;

export interface MetadataProblem {
  error: 'invalid_redirect_uri' | 'invalid_client_metadata';
  error_description: string;
}

/**
 * Characters that make a name read other than it is: C0/C1 controls, line and paragraph
 * separators, the bidirectional formatting characters (Unicode Technical Report 36 section 2.4,
 * "Trojan Source": U+061C, U+200E/F, U+202A-E, U+2066-9) and invisible ones (zero-width space,
 * word joiner and invisible operators, byte order mark, interlinear annotation).
 */
const DECEPTIVE = /[\p{Cc}\p{Zl}\p{Zp}\p{Bidi_Control}\u200B\u2060-\u2064\uFEFF\uFFF9-\uFFFB]/u;

/** Every redirect URI list of the metadata: where codes go, and where sign-out returns. */
const REDIRECT_LISTS = ['redirect_uris', 'post_logout_redirect_uris'] as const;

export function clientMetadataProblem(metadata: Record<string, unknown>): MetadataProblem | undefined {
  for (const field of REDIRECT_LISTS) {
    const uris = metadata[field];
    if (!Array.isArray(uris)) continue;
    if (uris.length > MAX_REDIRECT_URIS) {
      return {
        error: 'invalid_redirect_uri',
        error_description: `${field}: at most ${MAX_REDIRECT_URIS} URIs`,
      };
    }
    for (const [i, uri] of uris.entries()) {
      // Anything but an http URL is oidc-provider's to judge (https, private-use schemes of native apps).
      if (typeof uri !== 'string' || !/^http:/i.test(uri) || isLoopbackRedirect(uri)) continue;
      return {
        error: 'invalid_redirect_uri',
        error_description: `${field}[${i}]: http is only allowed to a loopback address (RFC 8252 section 7.3); use https`,
      };
    }
  }
  // `client_name` and its language-tagged forms (`client_name#fr`, RFC 7591 section 2.2).
  for (const [field, value] of Object.entries(metadata)) {
    if (field !== 'client_name' && !field.startsWith('client_name#')) continue;
    if (typeof value !== 'string') continue;
    if ([...value].length > MAX_CLIENT_NAME_LENGTH) {
      return {
        error: 'invalid_client_metadata',
        error_description: `${field}: at most ${MAX_CLIENT_NAME_LENGTH} characters`,
      };
    }
    if (DECEPTIVE.test(value)) {
      return {
        error: 'invalid_client_metadata',
        error_description: `${field}: control, invisible and bidirectional formatting characters are not allowed`,
      };
    }
  }
  return undefined;
}

/**
 * RFC 8252 section 7.3: a native client's loopback redirect may use any port. oidc-provider applies
 * that to clients registered as `native`; a client that registers only loopback redirect URIs and
 * names no application type (as MCP clients do) is registered as one.
 */
export function nativeWhenLoopback(metadata: Record<string, unknown>): void {
  const uris = metadata.redirect_uris;
  if (metadata.application_type !== undefined || !Array.isArray(uris) || uris.length === 0) return;
  if (uris.every((u) => typeof u === 'string' && isLoopbackRedirect(u))) metadata.application_type = 'native';
}
