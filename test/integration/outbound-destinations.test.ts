/**
 * URLs the service stores now and calls later - a brand agent's endpoint, a personal agent's
 * callback_url - are refused when registered if outbound calls could not or must not reach them
 * (hardening issue, item 9): a private or loopback address, a name that resolves to one, a URL
 * carrying credentials. Written as the attack, with `outbound.allow_private_networks` off.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/databases.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

// biome-ignore lint/suspicious/noExplicitAny: JSON bodies
type Json = any;

/** A public unicast address: a literal needs no DNS, which this machine does not have for public names. */
const PUBLIC_LITERAL = '93.184.216.34';

const refused: [string, RegExp][] = [
  ['https://127.0.0.1/hook', /non-public address/],
  ['https://10.1.2.3/hook', /non-public address/],
  ['https://169.254.169.254/latest/meta-data', /non-public address/],
  ['https://[::1]/hook', /non-public address/],
  ['https://[::ffff:7f00:1]/hook', /non-public address/],
  // A name, not a literal: only resolving it shows where it points.
  ['https://localhost/hook', /resolves to a non-public address/],
  ['https://no-such-host.invalid/hook', /does not resolve/],
  [`https://user:secret@${PUBLIC_LITERAL}/hook`, /credentials/],
  [`https://token@${PUBLIC_LITERAL}/hook`, /credentials/],
];

describe.each(dialects)('outbound destinations are checked when registered (%s)', (dialect) => {
  let service: TestService;
  let key: string;
  const brandDomain = `outbound-${dialect}.com`;

  beforeAll(async () => {
    service = await startTestService(dialect, {
      'outbound.allow_private_networks': false,
      'scanner.allow_local_sites': false,
      'rate_limits.unauthenticated_writes.points': 1000,
    });
    const account = await post(`${service.config.public_api_url}/account`, {
      email: `outbound-${dialect}@example.com`,
    });
    key = account.body.key.service_key;
    const site = await post(`${service.config.public_api_url}/pixel-install`, { domain: brandDomain }, key);
    // The proof of ownership is tested elsewhere; here the domain only has to count as verified.
    await service.services.db
      .updateTable('sites')
      .set({ verified_at: new Date().toISOString(), verification_method: 'dns' })
      .where('id', '=', site.body.site_id)
      .execute();
  });
  afterAll(() => service?.close());

  async function post(url: string, body: unknown, serviceKey?: string) {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(serviceKey ? { 'x-service-key': serviceKey } : {}) },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Json };
  }

  const brandAgent = (endpoint: string) =>
    post(
      `${service.config.public_api_url}/brand-agent`,
      {
        domain: brandDomain,
        endpoint,
        protocols: ['webhook'],
        support_contact: { email: 'help@example.com' },
      },
      key,
    );

  const returnWithCallback = (callback_url: string) =>
    post(`${service.config.base_url}/return`, {
      brand_domain: 'netflix.com',
      name: 'Jane Doe',
      contact: 'jane@example.com',
      protocol: 'webhook',
      callback_url,
    });

  it("refuses a brand agent's endpoint that is private, resolves privately or carries credentials", async () => {
    for (const [endpoint, why] of [
      ...refused,
      ['http://brand.example.com/hook', /https/] as [string, RegExp],
    ]) {
      const res = await brandAgent(endpoint);
      expect(res.status, endpoint).toBe(400);
      expect(res.body.errors, endpoint).toEqual([{ field: 'endpoint', message: expect.stringMatching(why) }]);
    }
    const agents = await fetch(`${service.config.public_api_url}/agents?kind=brand`).then((r) => r.json());
    expect(JSON.stringify(agents)).not.toContain(brandDomain);
  });

  it('registers a brand agent at a public address', async () => {
    const res = await brandAgent(`https://${PUBLIC_LITERAL}/hook`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ domain: brandDomain, endpoint: `https://${PUBLIC_LITERAL}/hook` });
  });

  it("refuses a personal agent's callback_url the same way, and stores nothing", async () => {
    const before = await service.services.db
      .selectFrom('return_requests')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    for (const [callback, why] of refused) {
      const res = await returnWithCallback(callback);
      expect(res.status, callback).toBe(400);
      expect(res.body.errors, callback).toEqual([
        { field: 'callback_url', message: expect.stringMatching(why) },
      ]);
    }
    const after = await service.services.db
      .selectFrom('return_requests')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(after.n)).toBe(Number(before.n));
    const accepted = await returnWithCallback(`https://${PUBLIC_LITERAL}/callback`);
    expect(accepted.status).toBe(200);
  });
});
