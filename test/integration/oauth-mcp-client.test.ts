/**
 * The owner-scoped MCP server with the MCP SDK's own client and its OAuth support: discovery from
 * the 401 challenge, dynamic client registration, PKCE authorization (the sign-in and consent pages
 * driven as a browser would), the token exchange, then tools on `{mcp_url}/auth`.
 */

import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/databases.ts';
import { authorizeInBrowser, type OwnerCredentials } from '../helpers/oauth.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

/** An OAuthClientProvider that keeps everything in memory and remembers where it was sent. */
class MemoryProvider implements OAuthClientProvider {
  client?: OAuthClientInformationMixed;
  stored?: OAuthTokens;
  verifier = '';
  authorizationUrl?: URL;
  readonly redirectUrl = 'http://127.0.0.1:8976/oauth/callback';
  readonly clientMetadata: OAuthClientMetadata = {
    client_name: 'MCP SDK test client',
    redirect_uris: [this.redirectUrl],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
    scope: 'agent-service email offline_access',
  };
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

describe.each(dialects)('owner MCP server with the MCP SDK OAuth client (%s)', (dialect) => {
  let service: TestService;
  const owner: OwnerCredentials = { email: 'sdk-owner@example.com', password: 'a long enough passphrase' };
  let accountId: string;

  beforeAll(async () => {
    service = await startTestService(dialect);
    accountId = (await service.services.accounts.create(owner)).account.id;
    await service.services.sites.register(accountId, `owned-${dialect}.example.com`);
    const other = await service.services.accounts.create({ email: 'someone-else@example.com' });
    await service.services.sites.register(other.account.id, `not-mine-${dialect}.example.com`);
  });
  afterAll(async () => {
    await service?.close();
  });

  it('discovers, registers, authorizes with PKCE and calls get_owner_context', async () => {
    const url = new URL(`${service.config.mcp_url}/auth`);
    const provider = new MemoryProvider();

    const first = new StreamableHTTPClientTransport(url, { authProvider: provider });
    await expect(new Client({ name: 'sdk-test', version: '1.0.0' }).connect(first)).rejects.toBeInstanceOf(
      UnauthorizedError,
    );
    const authorizationUrl = provider.authorizationUrl as URL;
    expect(authorizationUrl.origin + authorizationUrl.pathname).toBe(
      `${service.config.auth_url}/oauth/authorize`,
    );
    expect(authorizationUrl.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorizationUrl.searchParams.get('resource')).toBe(url.href);
    // The SDK asks for the scope the 401 challenge named.
    expect(authorizationUrl.searchParams.get('scope')).toBe('agent-service');
    expect(provider.client?.client_id).toBeTypeOf('string');

    const { redirect, pages } = await authorizeInBrowser(authorizationUrl.href, owner);
    expect(pages.map((p) => p.html?.includes('name="password"'))).toEqual([true, false]);
    expect(pages[1]?.html).toContain('MCP SDK test client');
    expect(pages[1]?.html).toContain('127.0.0.1:8976');
    const code = redirect.searchParams.get('code') as string;
    await first.finishAuth(code);
    expect(provider.stored?.access_token).toBeTypeOf('string');
    expect(provider.stored?.refresh_token).toBeTypeOf('string');

    const client = new Client({ name: 'sdk-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }));
    try {
      expect(client.getServerVersion()?.name).toBe('agent-service-owner');
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toContain('get_owner_context');
      for (const tool of tools) expect(tool.outputSchema?.type).toBe('object');
      const result = await client.callTool({ name: 'get_owner_context', arguments: {} });
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toEqual({
        account_id: accountId,
        email: null,
        client_id: provider.client?.client_id,
        scopes: ['agent-service'],
      });
      // A row-level-security tool through the same token: this account's sites and no one else's.
      const sites = await client.callTool({ name: 'list_my_sites', arguments: {} });
      expect(sites.isError).toBeFalsy();
      const domains = (sites.structuredContent as { sites: { domain: string }[] }).sites.map((s) => s.domain);
      expect(domains).toEqual([`owned-${dialect}.example.com`]);
    } finally {
      await client.close();
    }
  });

  it('keeps owner tools off the public MCP server', async () => {
    const client = new Client({ name: 'sdk-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(service.config.mcp_url)));
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).not.toContain('get_owner_context');
      await expect(client.callTool({ name: 'get_owner_context', arguments: {} })).rejects.toThrow(
        /Unknown tool/,
      );
    } finally {
      await client.close();
    }
  });
});
