/**
 * The owner-scoped MCP server under load needs a real access token: an account is created on the
 * running service, an independent OAuth client (oauth4webapi) registers itself, and the code flow
 * with PKCE is driven through the sign-in and consent pages as a browser would
 * (`test/helpers/oauth.ts`). Tokens live 10 minutes, so `token()` mints a fresh one for each run.
 */
import { OwnerTokenClient } from '../test/helpers/oauth.ts';

export interface OwnerMcp {
  /** `{mcp_url}/auth` on the loopback address the load generator uses. */
  url: string;
  /** A new access token for the owner MCP server. */
  token(): Promise<string>;
}

/**
 * `serviceUrl` is where the load generator connects (http://127.0.0.1:PORT); the service publishes
 * its URLs as http://localhost:PORT (mcp.config.json), and the token's audience is the published
 * owner MCP URL.
 */
export async function ownerMcp(serviceUrl: string): Promise<OwnerMcp> {
  const site = `http://localhost:${new URL(serviceUrl).port}`;
  const owner = { email: `bench-owner-${Date.now()}@example.com`, password: 'correct horse battery staple' };
  const created = await fetch(`${serviceUrl}/api/public/account`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(owner),
  });
  if (created.status !== 201) throw new Error(`account: ${created.status} ${await created.text()}`);
  const client = await OwnerTokenClient.register(`${site}/auth/v1`);
  const resource = `${site}/mcp/auth`;
  return {
    url: `${serviceUrl}/mcp/auth`,
    token: async () => (await client.tokens(owner, resource)).access_token,
  };
}
