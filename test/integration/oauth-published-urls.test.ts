/**
 * Every URL the service publishes comes from its configuration, never from the request: metadata
 * documents, the registration response, the authorization server's redirects and forms, asked for
 * with a forged `Host`, `X-Forwarded-Host` and `X-Forwarded-Proto`. The service trusts its proxy
 * (`trust_proxy: true`), the setting under which forwarded headers would otherwise count.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/databases.ts';
import { cookiesOf, formAction, formField, type RawResponse, rawRequest } from '../helpers/oauth.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

const forgeries: Record<string, string>[] = [
  { host: 'evil.example' },
  { 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' },
  { host: 'evil.example:8443', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' },
];

describe.each(dialects)('published URLs come from configuration (%s)', (dialect) => {
  let service: TestService;
  let site: string;
  let auth: string;

  beforeAll(async () => {
    service = await startTestService(dialect, {
      trust_proxy: true,
      'rate_limits.unauthenticated_writes.points': 1000,
    });
    site = service.config.site_url;
    auth = service.config.auth_url;
  });
  afterAll(async () => {
    await service?.close();
  });

  /** Every absolute URL in a response, none of them forged: only configured origins appear. */
  function expectOnlyConfiguredUrls(res: RawResponse, where: string): void {
    const text = `${res.body} ${res.headers.location ?? ''}`;
    expect(text, where).not.toContain('evil.example');
    const host = new URL(site).host;
    const ours = (text.match(/https?:\/\/[^"'\s<>\\]+/g) ?? []).filter((u) => u.includes(host));
    for (const u of ours) expect(u.startsWith(`${site}/`) || u === site, `${where}: ${u}`).toBe(true);
  }

  it('serves metadata that names only configured URLs, with a Cache-Control', async () => {
    const documents = [
      `${auth}/.well-known/openid-configuration`,
      `${auth}/.well-known/oauth-authorization-server`,
      `${site}/.well-known/oauth-authorization-server`,
      `${site}/.well-known/openid-configuration`,
      `${site}/.well-known/oauth-authorization-server/auth/v1`,
      `${auth}/oauth/jwks`,
      `${service.config.mcp_url}/auth/.well-known/oauth-protected-resource`,
      `${site}/.well-known/oauth-protected-resource/mcp/auth`,
      `${service.config.public_api_url}/.well-known/oauth-protected-resource`,
      `${site}/.well-known/agent-auth.json`,
    ];
    for (const url of documents) {
      for (const headers of forgeries) {
        const res = await rawRequest(url, { headers });
        const where = `${url} with ${JSON.stringify(headers)}`;
        expect(res.status, where).toBe(200);
        expect(res.headers['cache-control'], where).toBe('public, max-age=300');
        expectOnlyConfiguredUrls(res, where);
      }
    }
    const metadata = JSON.parse(
      (await rawRequest(`${auth}/.well-known/oauth-authorization-server`, { headers: forgeries[2] })).body,
    ) as Record<string, string>;
    expect(metadata).toMatchObject({
      issuer: auth,
      authorization_endpoint: `${auth}/oauth/authorize`,
      token_endpoint: `${auth}/oauth/token`,
      registration_endpoint: `${auth}/oauth/clients/register`,
      revocation_endpoint: `${auth}/oauth/revoke`,
      jwks_uri: `${auth}/oauth/jwks`,
      end_session_endpoint: `${auth}/logout`,
    });
  });

  it('registers, redirects, resumes and signs out with configured URLs whatever the request says', async () => {
    const owner = { email: 'host-header@example.com', password: 'correct horse battery staple' };
    await service.services.accounts.create(owner);
    for (const headers of forgeries) {
      const what = JSON.stringify(headers);
      const registered = await rawRequest(`${auth}/oauth/clients/register`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify({ client_name: 'Forged host', redirect_uris: ['http://127.0.0.1:7777/cb'] }),
      });
      expect(registered.status, what).toBe(201);
      const client = JSON.parse(registered.body) as { client_id: string; registration_client_uri: string };
      expect(client.registration_client_uri).toBe(`${auth}/oauth/clients/register/${client.client_id}`);
      expectOnlyConfiguredUrls(registered, `registration with ${what}`);

      const authorize = new URL(`${auth}/oauth/authorize`);
      authorize.search = new URLSearchParams({
        client_id: client.client_id,
        redirect_uri: 'http://127.0.0.1:7777/cb',
        response_type: 'code',
        scope: 'agent-service',
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        code_challenge_method: 'S256',
      }).toString();
      const started = await rawRequest(authorize.href, { headers });
      expect(started.status, what).toBe(303);
      expect(started.headers.location).toMatch(new RegExp(`^${auth}/interaction/`));
      let cookie = cookiesOf(started.headers);

      const page = await rawRequest(started.headers.location as string, { headers: { ...headers, cookie } });
      const login = await rawRequest(new URL(formAction(page.body) as string, auth).href, {
        method: 'POST',
        headers: { ...headers, cookie, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ csrf: formField(page.body, 'csrf') as string, ...owner }).toString(),
      });
      expect(login.status, what).toBe(303);
      expect(login.headers.location).toMatch(new RegExp(`^${auth}/oauth/authorize/`));
      cookie = [cookie, cookiesOf(login.headers)].filter(Boolean).join('; ');

      const resumed = await rawRequest(login.headers.location as string, { headers: { ...headers, cookie } });
      expectOnlyConfiguredUrls(resumed, `resume with ${what}`);
      cookie = [cookie, cookiesOf(resumed.headers)].filter(Boolean).join('; ');

      const logout = await rawRequest(`${auth}/logout`, { headers: { ...headers, cookie } });
      expect(logout.status, what).toBe(200);
      expect(logout.body).toContain(`action="${auth}/logout/confirm"`);
      expectOnlyConfiguredUrls(logout, `sign-out page with ${what}`);
    }
  });
});
