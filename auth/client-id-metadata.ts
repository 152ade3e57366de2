/**
 * Client ID metadata documents (draft-ietf-oauth-client-id-metadata-document-02; MCP authorization,
 * "Client ID Metadata Documents"): a client names itself with an https URL as `client_id`, and the
 * authorization server reads the client's metadata from that URL instead of from a registration.
 *
 * oidc-provider's experimental `features.clientIdMetadataDocument` does the protocol: it recognises
 * such a `client_id`, fetches it with no redirects, checks `client_id`, refuses shared-secret
 * authentication, builds the client and keeps the document in an LRU of 100 per process for its
 * `Cache-Control: max-age` held within `cacheDuration` (failures are not kept). What this file adds:
 *
 * - the fetch goes through our SSRF-safe fetcher, with its address policy (`outbound.*`) checked before
 *   the request and again at connect time, within `max_bytes` and `timeout_ms`;
 * - a document is held to the rules of open registration (`client-metadata.ts`), loopback-only
 *   redirect URIs making a native client (RFC 8252 section 7.3) as they do there, before oidc-provider
 *   reads it, so a refused document is not cached;
 * - every failure is `invalid_client` with a description saying what is wrong with the document,
 *   wherever the client is looked up (authorization, token and revocation endpoints, our pages).
 *
 * The cache is per process: processes sharing a database may each fetch a document once per
 * `cache_min_s`..`cache_max_s`, and a changed document is seen everywhere within `cache_max_s`.
 */
import type Provider from 'oidc-provider';
import { errors } from 'oidc-provider';
import type { Config } from '../servers/config.ts';
import { readLimitedBody, type SafeFetch } from '../servers/outbound/safe-fetch.ts';
import { clientMetadataProblem, nativeWhenLoopback } from './client-metadata.ts';

/** The draft version oidc-provider implements, acknowledged as its experimental features require. */
export const CLIENT_ID_METADATA_DOCUMENT_VERSION = 'draft-02';

export type ClientIdMetadataSettings = Config['auth']['client_id_metadata_documents'];

/** Why a client ID metadata document is not used; its message is shown to the client. */
export class ClientIdMetadataRefusal extends Error {
  override name = 'ClientIdMetadataRefusal';
}

/**
 * Whether `clientId` names a client by its metadata document's URL. For display (the consent page
 * shows its host); oidc-provider decides which URLs it resolves (draft-02 section 3).
 */
export function isClientIdUrl(clientId: unknown): clientId is string {
  return typeof clientId === 'string' && clientId.startsWith('https://') && URL.canParse(clientId);
}

/** The host a client ID URL names: what the person deciding can check the self-chosen name against. */
export function clientIdHost(clientId: string): string | undefined {
  return isClientIdUrl(clientId) ? new URL(clientId).host : undefined;
}

/** `features.clientIdMetadataDocument` of the provider configuration. */
export function clientIdMetadataDocumentFeature(settings: ClientIdMetadataSettings, fetch: SafeFetch) {
  // Documents each request has asked for. oidc-provider calls `allowFetch` only for a document it
  // does not hold, so a second call in one request means the first fetch was refused (or, rarely,
  // the document left the cache meanwhile) - and its authorization error handler looks the client
  // up again to decide where the error goes, which would fetch a refused document twice.
  const asked = new WeakMap<object, Set<string>>();
  return {
    enabled: settings.enabled,
    ack: CLIENT_ID_METADATA_DOCUMENT_VERSION,
    async allowFetch(ctx: object | undefined, clientId: string) {
      if (ctx) {
        const urls = asked.get(ctx) ?? new Set<string>();
        if (urls.has(clientId))
          throw new errors.InvalidClient('the client ID metadata document could not be used');
        asked.set(ctx, urls.add(clientId));
      }
      // Checked before any request so that the refusal can say why; the connection is checked again.
      const problem = await fetch.destinationProblem(clientId);
      if (problem) throw new errors.InvalidClient(`client_id ${problem}`);
      return true;
    },
    cacheDuration: { min: settings.cache_min_s, max: settings.cache_max_s },
  };
}

/**
 * The provider's `fetch`: every request oidc-provider makes goes through the SSRF-safe fetcher
 * (it replaces the dispatcher oidc-provider sets). A client ID metadata document - the one thing
 * oidc-provider fetches with `redirect: 'manual'` (draft-02 section 5: no redirects) - is read
 * here whole and handed on checked and normalised.
 */
export function providerFetch(fetch: SafeFetch, settings: ClientIdMetadataSettings) {
  return async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const url = input instanceof Request ? input.url : String(input);
    if (init.redirect === 'manual') return readClientIdMetadataDocument(fetch, url, settings);
    const headers = Object.fromEntries(new Headers(init.headers));
    // oidc-provider blanks the user agent; ours names the service.
    if (headers['user-agent'] === '') delete headers['user-agent'];
    return (await fetch(url, { ...(init as object), headers })) as unknown as Response;
  };
}

/**
 * Fetches and checks the document at `url`; throws `ClientIdMetadataRefusal` saying what is wrong.
 * The answer is the document as oidc-provider should read it, with the caching headers it came with.
 */
export async function readClientIdMetadataDocument(
  fetch: SafeFetch,
  url: string,
  settings: ClientIdMetadataSettings,
): Promise<Response> {
  let response: Awaited<ReturnType<SafeFetch>>;
  try {
    response = await fetch(url, {
      headers: { accept: 'application/json' },
      redirect: 'manual',
      signal: AbortSignal.timeout(settings.timeout_ms),
    });
  } catch (err) {
    throw new ClientIdMetadataRefusal(fetchFailure(err, settings));
  }
  if (response.status !== 200) {
    await response.body?.cancel().catch(() => {});
    throw new ClientIdMetadataRefusal(
      `it answered HTTP ${response.status}; a document is served with 200, without redirects`,
    );
  }
  let body: Awaited<ReturnType<typeof readLimitedBody>>;
  try {
    body = await readLimitedBody(response, settings.max_bytes);
  } catch (err) {
    throw new ClientIdMetadataRefusal(fetchFailure(err, settings));
  }
  if (body.truncated) throw new ClientIdMetadataRefusal(`it is over ${settings.max_bytes} bytes`);
  let document: unknown;
  try {
    document = JSON.parse(body.bytes.toString('utf8'));
  } catch {
    throw new ClientIdMetadataRefusal('it is not JSON');
  }
  if (typeof document !== 'object' || document === null || Array.isArray(document))
    throw new ClientIdMetadataRefusal('it is not a JSON object');
  const metadata = document as Record<string, unknown>;
  // draft-02 section 4: the document names the URL it is served from, byte for byte.
  if (metadata.client_id !== url)
    throw new ClientIdMetadataRefusal(
      `its client_id ${JSON.stringify(metadata.client_id)} is not its own URL`,
    );
  const problem = clientMetadataProblem(metadata);
  if (problem) throw new ClientIdMetadataRefusal(problem.error_description);
  nativeWhenLoopback(metadata);
  const headers = new Headers({ 'content-type': 'application/json' });
  for (const name of ['cache-control', 'expires']) {
    const value = response.headers.get(name);
    if (value !== null) headers.set(name, value);
  }
  return new Response(JSON.stringify(metadata), { status: 200, headers });
}

function fetchFailure(err: unknown, settings: ClientIdMetadataSettings): string {
  const e = err as Error & { cause?: Error & { code?: string } };
  if (e.name === 'TimeoutError' || e.name === 'AbortError' || e.cause?.name === 'HeadersTimeoutError')
    return `it did not answer within ${settings.timeout_ms} ms`;
  if (e.name === 'BlockedDestinationError') return e.message;
  if (e.cause?.name === 'BlockedDestinationError') return e.cause.message;
  return `it could not be fetched${e.cause?.code ? ` (${e.cause.code})` : ''}`;
}

/**
 * Makes every failure to resolve a client ID URL an `invalid_client` (RFC 6749 section 5.2; the
 * authorization endpoint shows it without redirecting, section 4.1.2.1) whose description says what
 * is wrong, wherever oidc-provider or our pages look a client up: its own refusals of a document
 * are `invalid_client_metadata` / `invalid_redirect_uri`, RFC 7591 codes for a registration request
 * there was none of, and a fetch that failed is a bare "fetch failed".
 */
export function clientIdUrlFailuresAsInvalidClient(provider: Provider): void {
  const Client = provider.Client;
  const find = Client.find.bind(Client);
  Client.find = async (id: string) => {
    try {
      return await find(id);
    } catch (err) {
      if (!isClientIdUrl(id) || !(err instanceof errors.OIDCProviderError)) throw err;
      const cause = (err as { cause?: unknown }).cause;
      const description =
        cause instanceof ClientIdMetadataRefusal
          ? cause.message
          : err instanceof errors.InvalidClientMetadata
            ? (err.error_description ?? err.message)
            : undefined;
      if (description === undefined) throw err;
      throw new errors.InvalidClient(`client ID metadata document ${id}: ${description}`, { cause: err });
    }
  };
}
