import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ClientDocumentSite, startClientDocumentSite } from '../helpers/client-documents.ts';
import { dialects } from '../helpers/databases.ts';
import { authorizeInBrowser, type OwnerCredentials } from '../helpers/oauth.ts';
import { freePort } from '../helpers/ports.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

/** An MCP SDK OAuthClientProvider that names itself by its metadata document's URL. */
class DocumentClientProvider implements OAuthClientProvider {
  client?: OAuthClientInformationMixed;
  stored?: OAuthTokens;
  verifier = '';
  authorizationUrl?: URL;
  readonly redirectUrl = 'http://127.0.0.1:8977/oauth/callback';
  readonly clientMetadata: OAuthClientMetadata;
  readonly clientMetadataUrl: string;
  constructor(clientMetadataUrl: string) {
    this.clientMetadataUrl = clientMetadataUrl;
    this.clientMetadata = {
      client_name: 'Document Client',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  /** The document the client publishes at its URL. */
  document(): Record<string, unknown> {
    return { client_id: this.clientMetadataUrl, ...this.clientMetadata };
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.client = info;
  }
  tokens() {
    return this.stored;
  }
  saveTokens(tokens: OAuthTokens) {
    this.stored = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

/** An authorization request for `clientId` as a client would send it (PKCE S256). */
function authorizationUrl(service: TestService, clientId: string, redirectUri: string): string {
  const url = new URL(`${service.config.auth_url}/oauth/authorize`);
  url.search = new URLSearchParams({
    client_id: clientId,
    redirect_uri: redirectUri,
    response_type: 'code',
    scope: 'agent-service',
    state: 'state-1',
    code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGjSw9cXqs',
    code_challenge_method: 'S256',
    resource: `${service.config.mcp_url}/auth`,
  }).toString();
  return url.href;
}

interface Answer {
  status: number;
  location: string | null;
  body: string;
}

async function authorize(service: TestService, clientId: string, redirectUri: string): Promise<Answer> {
  const res = await fetch(authorizationUrl(service, clientId, redirectUri), { redirect: 'manual' });
  return { status: res.status, location: res.headers.get('location'), body: await res.text() };
}

/** The refusal a person sees: a page, not a redirect to the client (RFC 6749 section 4.1.2.1). */
function expectRefusal(answer: Answer, error: string, description: RegExp): void {
  expect(answer.location).toBeNull();
  expect(answer.status).toBe(400);
  const text = answer.body.replace(/&#(\d+);/g, (_, c) => String.fromCharCode(Number(c)));
  expect(text).toContain(`${error}:`);
  expect(text).toMatch(description);
}

const documentFor = (url: string, extra: Record<string, unknown> = {}) => ({
  client_id: url,
  client_name: 'Document Client',
  redirect_uris: ['http://127.0.0.1:8977/oauth/callback'],
  token_endpoint_auth_method: 'none',
  ...extra,
});

describe.each(dialects)('client ID metadata documents (%s)', (dialect) => {
  let service: TestService;
  let site: ClientDocumentSite;
  const owner: OwnerCredentials = { email: 'cimd-owner@example.com', password: 'a long enough passphrase' };
  let accountId: string;

  beforeAll(async () => {
    site = await startClientDocumentSite();
    service = await startTestService(dialect);
    accountId = (await service.services.accounts.create(owner)).account.id;
    await service.services.sites.register(accountId, `cimd-${dialect}.example.com`);
  });
  afterAll(async () => {
    await service?.close();
    await site?.close();
  });

  it('is advertised by both authorization server metadata documents and every protected resource', async () => {
    const auth = service.config.auth_url;
    const site_ = service.config.site_url;
    for (const url of [
      `${auth}/.well-known/oauth-authorization-server`,
      `${auth}/.well-known/openid-configuration`,
      `${site_}/.well-known/oauth-authorization-server`,
      `${site_}/.well-known/openid-configuration`,
      `${service.config.mcp_url}/auth/.well-known/oauth-protected-resource`,
      `${service.config.public_api_url}/.well-known/oauth-protected-resource`,
      `${site_}/.well-known/oauth-protected-resource`,
    ]) {
      const res = await fetch(url);
      expect(res.status, url).toBe(200);
      const body = (await res.json()) as Record<string, unknown>;
      expect(body.client_id_metadata_document_supported, url).toBe(true);
      // Dynamic registration stays.
      expect(body.registration_endpoint ?? body.resource_registration_endpoint, url).toBe(
        `${auth}/oauth/clients/register`,
      );
    }
  });

  it('takes the MCP SDK client from the 401 through consent to a token and an owner tool', async () => {
    const provider = new DocumentClientProvider(site.url('/oauth/client.json'));
    site.serve('/oauth/client.json', provider.document(), { 'cache-control': 'max-age=600' });
    const url = new URL(`${service.config.mcp_url}/auth`);

    const first = new StreamableHTTPClientTransport(url, { authProvider: provider });
    await expect(new Client({ name: 'cimd-test', version: '1.0.0' }).connect(first)).rejects.toBeInstanceOf(
      UnauthorizedError,
    );
    // No registration: the client's id is its document's URL.
    expect(provider.client?.client_id).toBe(provider.clientMetadataUrl);
    const start = provider.authorizationUrl as URL;
    expect(start.searchParams.get('client_id')).toBe(provider.clientMetadataUrl);

    const { redirect, pages } = await authorizeInBrowser(start.href, owner);
    expect(pages.map((p) => p.html?.includes('name="password"'))).toEqual([true, false]);
    const consent = pages[1]?.html ?? '';
    expect(consent).toContain('<span id="client-name">Document Client</span>');
    // The name is the client's own word; the host of its ID URL is what the person can check.
    expect(consent).toContain(`<span id="client-host">${new URL(site.origin).host}</span>`);
    expect(consent).toContain('127.0.0.1:8977');

    await first.finishAuth(redirect.searchParams.get('code') as string);
    const token = provider.stored?.access_token as string;
    expect(decodeJwt(token)).toMatchObject({
      client_id: provider.clientMetadataUrl,
      aud: url.href,
      sub: accountId,
    });
    expect(provider.stored?.refresh_token).toBeTypeOf('string');

    const client = new Client({ name: 'cimd-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }));
    try {
      const result = await client.callTool({ name: 'get_owner_context', arguments: {} });
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toMatchObject({
        account_id: accountId,
        client_id: provider.clientMetadataUrl,
      });
      const sites = await client.callTool({ name: 'list_my_sites', arguments: {} });
      const domains = (sites.structuredContent as { sites: { domain: string }[] }).sites.map((s) => s.domain);
      expect(domains).toEqual([`cimd-${dialect}.example.com`]);
    } finally {
      await client.close();
    }
    // Authorization, sign-in, consent and the token exchange each looked the client up: one fetch,
    // the document kept for its max-age.
    expect(site.hits('/oauth/client.json')).toBe(1);
  });

  it('lets a document with only loopback redirect URIs use any port, as a registration may', async () => {
    const id = site.serve(
      '/native.json',
      documentFor(site.url('/native.json'), {
        redirect_uris: ['http://127.0.0.1/callback'],
      }),
    );
    const answer = await authorize(service, id, 'http://127.0.0.1:50123/callback');
    expect(answer.status).toBe(303);
    expect(answer.location).toContain('/interaction/');
    // Another path on loopback is still not the registered one.
    const other = await authorize(service, id, 'http://127.0.0.1:50123/elsewhere');
    expectRefusal(other, 'invalid_redirect_uri', /redirect_uri did not match/);
  });

  it('refuses each kind of bad document with invalid_client, naming what is wrong, never a 5xx', async () => {
    const redirect = 'http://127.0.0.1:8977/oauth/callback';
    const closedPort = await freePort();

    const big = 'x'.repeat(6000);
    const cases: [string, string, RegExp][] = [
      [`https://127.0.0.1:${closedPort}/client.json`, 'unreachable', /could not be fetched \(ECONNREFUSED\)/],
      [
        site.serve(
          '/huge.json',
          documentFor(site.url('/huge.json'), { client_name: 'x', logo_uri: `https://a.example/${big}` }),
        ),
        'huge',
        /over 5120 bytes/,
      ],
      [
        site.handle('/endless.json', (_req, res) => {
          // No Content-Length: chunks until the reader stops.
          res.writeHead(200, { 'content-type': 'application/json' });
          const chunk = Buffer.alloc(1024, 0x20);
          const write = () => {
            while (res.write(chunk)) if (res.writableLength > 64 * 1024) break;
          };
          const timer = setInterval(write, 5);
          res.on('close', () => clearInterval(timer));
          write();
        }),
        'endless',
        /over 5120 bytes/,
      ],
      [site.handle('/slow.json', () => {}), 'slow', /did not answer within 2500 ms/],
      [site.serve('/html.json', '<!doctype html><p>client</p>'), 'not JSON', /is not JSON/],
      [site.serve('/array.json', ['client']), 'array', /is not a JSON object/],
      [
        site.serve('/mismatch.json', documentFor(site.url('/other.json'))),
        'mismatched client_id',
        /client_id "https:\/\/127\.0\.0\.1:\d+\/other\.json" is not its own URL/,
      ],
      [
        site.serve(
          '/http-redirect.json',
          documentFor(site.url('/http-redirect.json'), { redirect_uris: ['http://client.example/cb'] }),
        ),
        'http redirect URI',
        /redirect_uris\[0\]: http is only allowed to a loopback address/,
      ],
      [
        site.serve('/no-redirect.json', documentFor(site.url('/no-redirect.json'), { redirect_uris: [] })),
        'no redirect URIs',
        /redirect_uris must contain members/,
      ],
      [
        site.serve(
          '/fragment.json',
          documentFor(site.url('/fragment.json'), { redirect_uris: ['https://client.example/cb#x'] }),
        ),
        'redirect URI with a fragment',
        /redirect_uris must not contain fragments/,
      ],
      [
        site.serve(
          '/secret.json',
          documentFor(site.url('/secret.json'), { token_endpoint_auth_method: 'client_secret_basic' }),
        ),
        'shared secret',
        /must not use shared-secret/,
      ],
      [
        site.serve('/spoof.json', documentFor(site.url('/spoof.json'), { client_name: 'Safe\u202Eevil' })),
        'deceptive name',
        /client_name: control, invisible and bidirectional/,
      ],
      [site.url('/missing.json'), 'not found', /answered HTTP 404/],
      [
        site.handle('/moved.json', (_req, res) => {
          res.writeHead(302, { location: site.url('/oauth/client.json') }).end();
        }),
        'redirect',
        /answered HTTP 302/,
      ],
    ];
    for (const [id, label, description] of cases) {
      const answer = await authorize(service, id, redirect);
      expect(answer.status, label).toBeLessThan(500);
      expectRefusal(answer, 'invalid_client', description);
    }
    // Nothing past the limit was read from the endless body.
    expect(site.hits('/endless.json')).toBe(1);
  });

  it('answers the token endpoint for a bad document with invalid_client too', async () => {
    const id = site.serve('/token-mismatch.json', documentFor(site.url('/elsewhere.json')));
    const res = await fetch(`${service.config.auth_url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        client_id: id,
        code: 'not-a-code',
        redirect_uri: 'http://127.0.0.1:8977/oauth/callback',
        code_verifier: 'v'.repeat(43),
      }),
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: string; error_description: string };
    expect(body.error).toBe('invalid_client');
    expect(body.error_description).toMatch(/is not its own URL/);
  });

  it('answers a bad document sent as client_id to the verified-email code request with 400 naming client_id', async () => {
    const id = site.serve('/email-mismatch.json', documentFor(site.url('/elsewhere.json')));
    const res = await fetch(`${service.config.auth_url}/assertions/email`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: owner.email, client_id: id }),
    });
    expect(res.status).toBe(400);
    const problem = (await res.json()) as { errors?: { field: string; message: string }[] };
    expect(problem.errors?.[0]?.field).toBe('client_id');
    expect(problem.errors?.[0]?.message).toMatch(/is not its own URL/);
  });

  it('keeps no refusal: a document fixed after a refusal is used at once', async () => {
    const url = site.url('/fixed-later.json');
    site.serve('/fixed-later.json', documentFor(url, { redirect_uris: ['http://client.example/cb'] }));
    expectRefusal(
      await authorize(service, url, 'http://127.0.0.1:8977/oauth/callback'),
      'invalid_client',
      /redirect_uris\[0\]/,
    );
    site.serve('/fixed-later.json', documentFor(url));
    const answer = await authorize(service, url, 'http://127.0.0.1:8977/oauth/callback');
    expect(answer.status).toBe(303);
    expect(site.hits('/fixed-later.json')).toBe(2);
  });
});

describe.each(dialects)('client ID metadata documents without private networks (%s)', (dialect) => {
  let service: TestService;
  let site: ClientDocumentSite;

  beforeAll(async () => {
    site = await startClientDocumentSite();
    service = await startTestService(dialect, {
      'outbound.allow_private_networks': false,
      'scanner.allow_local_sites': false,
    });
  });
  afterAll(async () => {
    await service?.close();
    await site?.close();
  });

  it('does not fetch a document from a private address', async () => {
    const id = site.serve('/client.json', documentFor(site.url('/client.json')));
    const answer = await authorize(service, id, 'http://127.0.0.1:8977/oauth/callback');
    expectRefusal(
      answer,
      'invalid_client',
      /client_id must not point at a non-public address \(127\.0\.0\.1\)/,
    );
    expect(site.hits('/client.json')).toBe(0);
  });
});

describe('client ID metadata documents turned off', () => {
  let service: TestService;

  beforeAll(async () => {
    service = await startTestService('sqlite', { 'auth.client_id_metadata_documents.enabled': false });
  });
  afterAll(async () => {
    await service?.close();
  });

  it('advertises nothing and treats a URL client_id as an unknown client', async () => {
    const meta = (await (
      await fetch(`${service.config.auth_url}/.well-known/oauth-authorization-server`)
    ).json()) as Record<string, unknown>;
    expect(meta.client_id_metadata_document_supported).toBeUndefined();
    const prm = (await (
      await fetch(`${service.config.mcp_url}/auth/.well-known/oauth-protected-resource`)
    ).json()) as Record<string, unknown>;
    expect(prm.client_id_metadata_document_supported).toBeUndefined();
    const answer = await authorize(
      service,
      'https://client.example/client.json',
      'http://127.0.0.1:8977/oauth/callback',
    );
    expectRefusal(answer, 'invalid_client', /client is invalid/);
  });
});
