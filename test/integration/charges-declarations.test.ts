/**
 * Statement descriptors declared by brands, over real HTTP, once per dialect. Domains are verified
 * the real way, by DNS TXT record against a DNS server on loopback. Written as the attacks: an
 * owner who has not verified the domain, another account, another domain claiming a declared
 * descriptor, anyone claiming a descriptor the registry gives to a famous brand, malformed input.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/databases.ts';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server.ts';
import { waitFor } from '../helpers/receivers.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are checked field by field
type Json = any;

describe.each(dialects)('declared statement descriptors (%s)', (dialect) => {
  let service: TestService;
  let dns: TestDnsServer;
  let api: string;
  const marker = randomBytes(3).toString('hex');

  beforeAll(async () => {
    dns = await startDnsServer();
    service = await startTestService(dialect, {
      'rate_limits.unauthenticated_writes.points': 1000,
      'sites.verification_dns_servers': [dns.address],
    });
    api = service.config.public_api_url;
  });
  afterAll(async () => {
    await service?.close();
    await dns?.close();
  });

  const call = async (method: string, path: string, body?: unknown, key?: string) => {
    const res = await fetch(`${api}${path}`, {
      method,
      headers: {
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(key ? { 'x-service-key': key } : {}),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as Json };
  };

  const lookup = async (charge: string): Promise<Json> => {
    const res = await fetch(`${service.config.base_url}/agent?charge=${encodeURIComponent(charge)}`);
    expect(res.status).toBe(200);
    return res.json();
  };

  let n = 0;
  async function newAccount(): Promise<string> {
    const res = await call('POST', '/account', { email: `decl${++n}-${marker}@example.com` });
    expect(res.status).toBe(201);
    return res.body.key.service_key;
  }

  /** Registers `domain`; with `verify`, publishes its TXT record and verifies it. */
  async function addSite(key: string, domain: string, verify: boolean): Promise<string> {
    const res = await call('POST', '/pixel-install', { domain }, key);
    expect(res.status).toBe(200);
    if (verify) {
      dns.txt.set(domain, [...(dns.txt.get(domain) ?? []), res.body.verification.dns.value]);
      const verified = await call('POST', `/sites/${res.body.site_id}/verify`, undefined, key);
      expect(verified.body.verified).toBe(true);
    }
    return res.body.site_id;
  }

  const domainFor = (name: string) => `${name}${marker}.com`;
  const declare = (key: string, siteId: string, descriptors: unknown) =>
    call('POST', `/sites/${siteId}/descriptors`, { descriptors }, key);

  it('refuses declarations for a domain the account has not verified, for another account’s site, and without a key', async () => {
    const owner = await newAccount();
    const siteId = await addSite(owner, domainFor('unverified'), false);
    const refused = await declare(owner, siteId, ['UNVRFD SHOP']);
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('domain_not_verified');

    const verifiedSite = await addSite(owner, domainFor('mine'), true);
    const stranger = await newAccount();
    expect((await declare(stranger, verifiedSite, ['MINE SHOP'])).status).toBe(404);
    expect((await declare('', verifiedSite, ['MINE SHOP'])).status).toBe(401);
    expect((await call('GET', `/sites/${verifiedSite}/descriptors`, undefined, stranger)).status).toBe(404);
    expect((await lookup('UNVRFD SHOP OAKLAND CA')).matches).toEqual([]);
  });

  it('matches what a verified owner declares at very_high, shown as brand_declared; a processor prefix binds it to that processor', async () => {
    const owner = await newAccount();
    const domain = domainFor('hlcyn');
    const siteId = await addSite(owner, domain, true);
    const declared = await declare(owner, siteId, ['hlcyn  rstrs', 'SQ *HALCYON ROASTING CO']);
    expect(declared.status).toBe(200);
    expect(declared.body).toMatchObject({
      site_id: siteId,
      domain,
      descriptors: [
        { descriptor: 'HLCYN RSTRS', processor: null },
        { descriptor: 'SQ *HALCYON ROASTING CO', processor: 'square' },
      ],
    });
    expect((await call('GET', `/sites/${siteId}/descriptors`, undefined, owner)).body).toEqual(declared.body);

    const plain = await lookup('HLCYN RSTRS OAKLAND CA');
    expect(plain.matches[0]).toMatchObject({
      domain,
      level: 'very_high',
      matched_on: 'descriptor',
      matched_text: 'HLCYN RSTRS',
      source: 'brand_declared',
    });
    expect(plain.resolution).toBeUndefined();
    expect((await lookup('SQ *HALCYON ROASTING OAKLAND CA')).matches[0]).toMatchObject({
      domain,
      level: 'very_high',
      source: 'brand_declared',
      processor: { name: 'Square' },
    });
    // Words after a declared descriptor are unexplained: high, not very_high.
    expect((await lookup('HLCYN RSTRS SUBSCRIPTION GIFT')).matches[0]).toMatchObject({
      domain,
      level: 'high',
    });
    expect((await lookup('TST* HALCYON ROASTING OAKLAND CA')).matches).toEqual([]);

    // Replacing the list drops what is no longer declared.
    expect((await declare(owner, siteId, ['HLCYN RSTRS'])).body.descriptors).toHaveLength(1);
    expect((await lookup('SQ *HALCYON ROASTING OAKLAND CA')).matches).toEqual([]);
    expect((await declare(owner, siteId, [])).body.descriptors).toEqual([]);
    expect((await lookup('HLCYN RSTRS OAKLAND CA')).matches).toEqual([]);
  });

  it('lets no other domain, and no other account of the same domain, take a declared descriptor', async () => {
    const owner = await newAccount();
    const domain = domainFor('brightside');
    const siteId = await addSite(owner, domain, true);
    expect((await declare(owner, siteId, ['BRGHTSD BAKERY'])).status).toBe(200);

    const rival = await newAccount();
    const rivalSite = await addSite(rival, domainFor('copycat'), true);
    const taken = await declare(rival, rivalSite, ['CAFE COPYCAT', 'Brghtsd   Bakery']);
    expect(taken.status).toBe(409);
    expect(taken.body.code).toBe('descriptor_taken');
    expect(taken.body.errors).toEqual([{ field: 'descriptors.1', message: 'is declared by another domain' }]);
    expect((await call('GET', `/sites/${rivalSite}/descriptors`, undefined, rival)).body.descriptors).toEqual(
      [],
    );

    // A second account that also verified the same domain cannot replace the owner's set.
    const coOwner = await newAccount();
    const coSite = await addSite(coOwner, domain, true);
    const replaced = await declare(coOwner, coSite, ['BRGHTSD CAFE']);
    expect(replaced.status).toBe(409);
    expect(replaced.body.code).toBe('descriptor_taken');

    expect((await lookup('BRGHTSD BAKERY PORTLAND OR')).matches[0]).toMatchObject({
      domain,
      source: 'brand_declared',
    });
  });

  it('lets nobody declare a descriptor the registry gives to another brand', async () => {
    const owner = await newAccount();
    const siteId = await addSite(owner, domainFor('squatter'), true);
    for (const famous of ['NETFLIX.COM', 'PAYPAL *NETFLIX', 'UBER *TRIP', 'Amazon Prime', 'netflix']) {
      const res = await declare(owner, siteId, ['SQTTR GOODS', famous]);
      expect(res.status, famous).toBe(409);
      expect(res.body.code).toBe('descriptor_taken');
      expect(res.body.errors).toEqual([
        {
          field: 'descriptors.1',
          message: expect.stringMatching(/^is the statement descriptor of .+ \(.+\)$/),
        },
      ]);
    }
    expect((await call('GET', `/sites/${siteId}/descriptors`, undefined, owner)).body.descriptors).toEqual(
      [],
    );
    expect((await lookup('NETFLIX.COM 866-579-7172 CA')).matches[0]).toMatchObject({
      domain: 'netflix.com',
      source: 'registry',
    });

    // A business whose name only starts with a famous brand's word declares its own full name.
    const dental = await newAccount();
    const dentalSite = await addSite(dental, domainFor('deltadental'), true);
    expect((await declare(dental, dentalSite, ['DELTA DENTAL INS'])).status).toBe(200);
    expect((await lookup('DELTA DENTAL INS 800-765-6003 CA')).matches[0]).toMatchObject({
      domain: domainFor('deltadental'),
      source: 'brand_declared',
    });
  });

  it('refuses malformed descriptors, naming each field', async () => {
    const owner = await newAccount();
    const siteId = await addSite(owner, domainFor('valid'), true);
    const cases: [unknown, string, RegExp][] = [
      [['X'.repeat(41)], 'descriptors.0', /at most 40 characters/],
      [['OK NAME', 'BELL\u0007SHOP'], 'descriptors.1', /control characters/],
      [['NUL\u0000SHOP'], 'descriptors.0', /NUL/],
      [['   '], 'descriptors.0', /blank/],
      [['SQ *'], 'descriptors.0', /at least 4 letters/],
      [['APPLE.COM/BILL'], 'descriptors.0', /besides a processor prefix/],
      [['AB 12'], 'descriptors.0', /at least 4 letters/],
      [
        Array.from({ length: 21 }, (_, i) => `VALID SHOP ${String.fromCharCode(65 + i)}`),
        'descriptors',
        /at most 20/,
      ],
      ['VALID SHOP', 'descriptors', /.+/],
    ];
    for (const [descriptors, field, message] of cases) {
      const res = await declare(owner, siteId, descriptors);
      expect(res.status, field).toBe(400);
      expect(res.body.code).toBe('validation_failed');
      expect(res.body.errors).toContainEqual({ field, message: expect.stringMatching(message) });
    }
    expect((await call('GET', `/sites/${siteId}/descriptors`, undefined, owner)).body.descriptors).toEqual(
      [],
    );
  });

  it('takes statement_descriptors on POST /brand-agent and names the brand as its agent does', async () => {
    const owner = await newAccount();
    const domain = domainFor('northside');
    await addSite(owner, domain, true);
    const agent = {
      domain,
      name: 'Northside Provisions',
      endpoint: 'http://127.0.0.1:9/agent',
      protocols: ['mcp'],
      support_contact: { url: `https://${domain}/help`, email: `help@${domain}` },
    };
    const registered = await call(
      'POST',
      '/brand-agent',
      { ...agent, statement_descriptors: ['NRTHSD PROV'] },
      owner,
    );
    expect(registered.status).toBe(200);
    expect(registered.body.statement_descriptors).toEqual(['NRTHSD PROV']);
    expect((await lookup('NRTHSD PROV BERKELEY CA')).matches[0]).toMatchObject({
      brand: 'Northside Provisions',
      domain,
      level: 'very_high',
      source: 'brand_declared',
      contact: { support_url: `https://${domain}/help`, email: `help@${domain}` },
    });

    // Without the field the declarations stay as they are.
    const updated = await call('POST', '/brand-agent', agent, owner);
    expect(updated.body.statement_descriptors).toEqual(['NRTHSD PROV']);

    // A refused descriptor leaves the agent and its declarations unchanged.
    const refused = await call(
      'POST',
      '/brand-agent',
      { ...agent, name: 'Renamed', statement_descriptors: ['NETFLIX.COM'] },
      owner,
    );
    expect(refused.status).toBe(409);
    expect(refused.body.errors).toEqual([
      { field: 'statement_descriptors.0', message: expect.stringContaining('Netflix') },
    ]);
    const agents = await call('GET', '/agents');
    expect(agents.body.agents.find((a: Json) => a.domain === domain).name).toBe('Northside Provisions');
  });

  it('matches in every process what one process declared, and stops matching what it cleared', async () => {
    const other = await startTestService(dialect, {}, { database: service.db });
    try {
      const owner = await newAccount();
      const domain = domainFor('shared');
      const siteId = await addSite(owner, domain, true);
      const charge = encodeURIComponent('SHRD GOODS OAKLAND CA');
      const lookupOther = async () =>
        (await (await fetch(`${other.config.base_url}/agent?charge=${charge}`)).json()) as Json;
      expect((await lookupOther()).matches).toEqual([]);
      await declare(owner, siteId, ['SHRD GOODS']);
      await waitFor(async () => (await lookupOther()).matches[0]?.domain === domain);
      await declare(owner, siteId, []);
      expect((await lookupOther()).matches).toEqual([]);
    } finally {
      await other.close();
    }
  });

  it('stops matching a declaration once its domain is no longer verified for the declaring account', async () => {
    const owner = await newAccount();
    const domain = domainFor('lapsed');
    const siteId = await addSite(owner, domain, true);
    await declare(owner, siteId, ['LPSD STUDIO']);
    expect((await lookup('LPSD STUDIO')).matches[0]).toMatchObject({ domain });
    await service.services.db
      .updateTable('sites')
      .set({ verified_at: null })
      .where('id', '=', siteId)
      .execute();
    expect((await lookup('LPSD STUDIO')).matches).toEqual([]);
  });

  it('lets the registry’s exact alias of another brand win over a declaration made before the registry knew it', async () => {
    const owner = await newAccount();
    const domain = domainFor('early');
    const siteId = await addSite(owner, domain, true);
    const account = await service.services.db
      .selectFrom('sites')
      .select('account_id')
      .where('id', '=', siteId)
      .executeTakeFirstOrThrow();
    await service.services.db
      .insertInto('declared_descriptors')
      .values({
        id: randomUUID(),
        account_id: account.account_id,
        domain,
        descriptor: 'NETFLIX',
        descriptor_key: 'NETFLIX',
        processor: null,
        created_at: new Date().toISOString(),
      })
      .execute();
    // Written behind this process's back: it is matched once the declared keys are read again.
    let body: Json;
    await waitFor(async () => {
      body = await lookup('NETFLIX.COM');
      return body.matches.length > 1;
    });
    expect(body.matches[0]).toMatchObject({ domain: 'netflix.com', level: 'very_high', source: 'registry' });
    expect(body.matches[1]).toMatchObject({ domain, level: 'medium', source: 'brand_declared' });
  });

  it('reads the line the way a person does: its own website, a bank export form, a glued tail (issue 32)', async () => {
    // A website the registry does not hold, agreeing with the name: a match from the line, at medium.
    const label = `zumbro${marker.replace(/\d/g, (d) => 'ghijklmnop'[Number(d)] as string)}`;
    const site = await lookup(`WWW.${label.toUpperCase()}.COM 866-555-0100`);
    expect(site.merchant.website_hint).toBe(`${label}.com`);
    expect(site.matches[0]).toMatchObject({
      domain: `${label}.com`,
      level: 'medium',
      matched_on: 'domain',
      source: 'line',
    });
    // One that disagrees with the name is left as the hint.
    const other = await lookup('ZORBLAX WIDGETS QUARTLEY.COM');
    expect(other.merchant.website_hint).toBe('quartley.com');
    expect(other.matches.filter((m: Json) => m.domain === 'quartley.com')).toEqual([]);
    // An ACH export line reads to its company, never to the account holder.
    const ach = await lookup('NETFLIX DES:ENTERTAINM ID:0412 INDN:JANE DOE CO ID:1234567 WEB');
    expect(ach.normalized).toBe('NETFLIX');
    expect(ach.matches[0]).toMatchObject({ domain: 'netflix.com', level: 'very_high', source: 'registry' });
    // A processor with another separator; a brand glued to a country tail.
    expect((await lookup('PAYPAL_SPOTIFY')).matches[0]).toMatchObject({ domain: 'spotify.com' });
    expect((await lookup('NETFLIXUSA')).matches[0]).toMatchObject({ domain: 'netflix.com', level: 'high' });
  });
});
