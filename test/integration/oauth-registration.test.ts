/**
 * Open dynamic client registration (RFC 7591) is an unauthenticated write: limited per client
 * address like the others, answered in the OAuth error format.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/databases.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

describe.each(dialects)('client registration (%s)', (dialect) => {
  let service: TestService;

  beforeAll(async () => {
    service = await startTestService(dialect, { 'rate_limits.unauthenticated_writes.points': 2 });
  });
  afterAll(async () => {
    await service?.close();
  });

  const register = (metadata: Record<string, unknown>) =>
    fetch(`${service.config.auth_url}/oauth/clients/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(metadata),
    });

  it('registers a public client for the code flow, then rate limits the address', async () => {
    const res = await register({ client_name: 'First', redirect_uris: ['http://127.0.0.1/callback'] });
    expect(res.status).toBe(201);
    const client = (await res.json()) as Record<string, unknown>;
    expect(client).toMatchObject({
      application_type: 'native',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    });

    const bad = await register({ redirect_uris: ['http://127.0.0.1/cb'], response_types: ['token'] });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: string }).error).toBe('invalid_client_metadata');

    const limited = await register({ redirect_uris: ['http://127.0.0.1/callback'] });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(((await limited.json()) as { error: string }).error).toBe('temporarily_unavailable');
  });
});
