/**
 * Issue 35: the `commerce` check (x402 and MPP on a live 402; UCP, ACP and AP2 manifests) and the
 * `mcp_era` check, on fixture sites that pass, fail and are not applicable, and their judges on
 * their own.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ap2OfAgentCard,
  authChallenges,
  checkAcpDiscovery,
  checkUcpProfile,
  mppChallengesOf,
  x402TermsOf,
} from '../../servers/features/scans/collectors/commerce.ts';
import type { Fetched } from '../../servers/features/scans/collectors/soft-404.ts';
import { crawlSite, type SiteFacts } from '../../servers/features/scans/crawler.ts';
import { commerceEvaluation } from '../../servers/features/scans/scoring/commerce.ts';
import { mcpEraEvaluation } from '../../servers/features/scans/scoring/mcp-era.ts';
import { type CheckResult, type SignalScore, scoreSite } from '../../servers/features/scans/scoring.ts';
import type { CommerceFacts } from '../../servers/features/scans/site-facts.ts';
import { createSafeFetch, type SafeFetch } from '../../servers/outbound/safe-fetch.ts';
import { type FixtureKind, scannerToken, startFixtureSite } from '../helpers/fixture-sites.ts';

const kinds = [
  'shopCommerce',
  'shopBrokenCommerce',
  'shop',
  'paidApi',
  'wellPrepared',
  'mcpBothEras',
  'blog',
] as const satisfies readonly FixtureKind[];

const fetched = (body: unknown, status = 200): Fetched => ({
  url: 'https://shop.example/.well-known/x',
  status,
  content_type: 'application/json',
  body: typeof body === 'string' ? body : JSON.stringify(body),
});

const v2Terms = {
  x402Version: 2,
  error: 'payment required',
  resource: { url: 'https://api.example/paid', description: 'A report', mimeType: 'application/json' },
  accepts: [
    {
      scheme: 'exact',
      network: 'eip155:8453',
      amount: '10000',
      asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
      payTo: '0x1111111111111111111111111111111111111111',
      maxTimeoutSeconds: 300,
      extra: { name: 'USD Coin', version: '2' },
    },
  ],
};
const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64');
const b64url = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

describe('commerce judges', () => {
  it('accepts x402 v2 terms in PAYMENT-REQUIRED and v1 terms in the body, by the x402 schemas', () => {
    expect(x402TermsOf(402, b64(v2Terms), '{}')).toMatchObject({
      valid: true,
      version: 2,
      options: ['exact eip155:8453'],
    });
    const v1 = {
      x402Version: 1,
      error: 'payment required',
      accepts: [
        {
          scheme: 'exact',
          network: 'base',
          maxAmountRequired: '10000',
          resource: 'https://api.example/paid',
          description: 'A report',
          mimeType: 'application/json',
          payTo: '0x1111111111111111111111111111111111111111',
          maxTimeoutSeconds: 300,
          asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
        },
      ],
    };
    expect(x402TermsOf(402, null, JSON.stringify(v1))).toMatchObject({ valid: true, version: 1 });
  });

  it('names what is wrong with x402 terms, and refuses anything but a 402', () => {
    const noPayee = { ...v2Terms, accepts: [{ ...v2Terms.accepts[0], payTo: undefined }] };
    const bad = x402TermsOf(402, b64(noPayee), '{}');
    expect(bad.valid).toBe(false);
    expect(bad.note).toMatch(/accepts\.0\.payTo/);
    expect(x402TermsOf(402, 'not base64 json!', '{}').note).toBe('PAYMENT-REQUIRED is not base64 JSON');
    expect(x402TermsOf(200, b64(v2Terms), '{}').note).toBe('answered HTTP 200, not 402');
  });

  it('reads MPP Payment challenges beside other schemes, and names what a broken one lacks', () => {
    const request = b64url({ amount: '1000', currency: 'usd' });
    const header = `Bearer realm="api", Payment id="a1", realm="api.example", method="tempo", intent="charge", request="${request}", Payment id="a2", realm="api.example", method="stripe", intent="charge", request="${request}"`;
    expect(authChallenges(header).map((c) => c.scheme)).toEqual(['bearer', 'payment', 'payment']);
    expect(mppChallengesOf(402, header)).toMatchObject({
      offered: true,
      valid: true,
      challenges: [
        { method: 'tempo', intent: 'charge', realm: 'api.example' },
        { method: 'stripe', intent: 'charge' },
      ],
    });
    expect(mppChallengesOf(402, 'Payment id="a1", realm="api.example", method="tempo"')).toMatchObject({
      offered: true,
      valid: false,
      note: 'a Payment challenge lacks intent, request',
    });
    expect(
      mppChallengesOf(402, 'Payment id="a", realm="r", method="m", intent="charge", request="%%%"').note,
    ).toMatch(/not base64url JSON/);
    expect(
      mppChallengesOf(401, `Payment id="a", realm="r", method="m", intent="c", request="${request}"`),
    ).toMatchObject({
      valid: false,
      note: 'a Payment challenge on HTTP 401, not 402',
    });
    expect(mppChallengesOf(402, 'Bearer realm="x"').offered).toBe(false);
  });

  it('judges a UCP profile by its version, services and capabilities', () => {
    const profile = {
      ucp: {
        version: '2026-04-08',
        services: {
          'dev.ucp.shopping': [
            { version: '2026-04-08', transport: 'rest', endpoint: 'https://s.example/ucp' },
          ],
        },
        capabilities: { 'dev.ucp.shopping.checkout': [{ version: '2026-04-08' }] },
      },
    };
    expect(checkUcpProfile(fetched(profile), 'u', null)).toMatchObject({
      present: true,
      valid: true,
      version: '2026-04-08',
      endpoints: ['https://s.example/ucp'],
    });
    const broken = checkUcpProfile(
      fetched({ ucp: { ...profile.ucp, version: 'v1', capabilities: {} } }),
      'u',
      null,
    );
    expect(broken).toMatchObject({ present: true, valid: false });
    expect(broken.note).toBe('ucp.version is not a date (YYYY-MM-DD); no capabilities');
    expect(checkUcpProfile(fetched('nope', 404), 'u', null).present).toBe(false);
  });

  it('judges an ACP discovery document by its conformance checklist', () => {
    const doc = {
      protocol: { name: 'acp', version: '2026-01-30', supported_versions: ['2026-01-30'] },
      api_base_url: 'https://s.example/acp',
      transports: ['rest'],
      capabilities: { services: ['checkout'] },
    };
    expect(checkAcpDiscovery(fetched(doc), 'u', null)).toMatchObject({ valid: true, names: ['checkout'] });
    const broken = checkAcpDiscovery(fetched({ ...doc, transports: ['mcp'], api_base_url: 'x' }), 'u', null);
    expect(broken.note).toBe('no api_base_url; transports lacks "rest"');
  });

  it('finds the AP2 extension on an A2A card and checks its roles', () => {
    const card = (params: unknown) =>
      JSON.stringify({
        name: 'a',
        capabilities: {
          extensions: [{ uri: 'https://github.com/google-agentic-commerce/ap2/tree/v0.1', params }],
        },
      });
    expect(ap2OfAgentCard(card({ roles: ['merchant'] }), 'c')).toMatchObject({ declared: true, valid: true });
    expect(ap2OfAgentCard(card({ roles: ['seller'] }), 'c')?.note).toBe('unknown AP2 role(s): seller');
    expect(ap2OfAgentCard(card({}), 'c')?.valid).toBe(false);
    expect(ap2OfAgentCard(JSON.stringify({ name: 'a', capabilities: {} }), 'c')?.declared).toBe(false);
  });
});

describe('the commerce and mcp_era evaluators', () => {
  const none = {
    present: false,
    valid: false,
    url: 'https://s.example/.well-known/ucp',
    note: 'HTTP 404',
    version: null,
    names: [],
    endpoints: [],
  };
  const facts = (over: Partial<CommerceFacts>): CommerceFacts => ({
    paid: [],
    ucp: none,
    acp: { ...none, url: 'https://s.example/.well-known/acp.json' },
    ap2: null,
    ...over,
  });

  it('gives 0.75 when one protocol is spoken and another published is broken, and points at the broken one', () => {
    const e = commerceEvaluation(
      facts({
        ucp: {
          ...none,
          present: true,
          valid: true,
          note: null,
          version: '2026-04-08',
          names: ['dev.ucp.shopping'],
        },
        ap2: {
          card_url: 'c',
          declared: true,
          valid: false,
          roles: [],
          note: 'the AP2 extension names no params.roles',
        },
      }),
    );
    expect(e.score).toBe(0.75);
    expect(e.spec_url).toBe('https://ap2-protocol.org/a2a-extension');
    expect(e.seen).toMatch(
      /AP2: broken - the A2A card's AP2 extension: the AP2 extension names no params.roles/,
    );
  });

  it('counts a paid resource that asks for input first as neither spoken nor broken', () => {
    const e = commerceEvaluation(
      facts({
        paid: [
          {
            url: 'https://s.example/paid',
            source: 'x402',
            status: 422,
            x402: { valid: false, version: null, options: [], note: 'answered HTTP 422, not 402' },
            mpp: { offered: false, valid: false, challenges: [], note: null },
          },
        ],
      }),
    );
    expect(e.score).toBe(0);
  });

  it('calls a listed paid resource that answers 200 a broken x402', () => {
    const e = commerceEvaluation(
      facts({
        paid: [
          {
            url: 'https://s.example/paid',
            source: 'x402',
            status: 200,
            x402: { valid: false, version: null, options: [], note: 'answered HTTP 200, not 402' },
            mpp: { offered: false, valid: false, challenges: [], note: null },
          },
        ],
      }),
    );
    expect(e).toMatchObject({
      score: 0.25,
      spec_url: 'https://github.com/coinbase/x402/blob/main/specs/x402-specification.md',
    });
    expect(e.seen).toMatch(/x402: broken - \/paid: answered HTTP 200, not 402/);
  });

  it('weighs the eras and the server card 0.4, 0.4 and 0.2', () => {
    const e = mcpEraEvaluation('https://s.example/mcp', {
      modern: { speaks: true, versions: ['2026-07-28'], error: null },
      legacy: { speaks: false, version: null, error: 'Unsupported protocol version' },
      server_card: { url: 'https://s.example/mcp/server-card', found: true, note: null },
    });
    expect(e.score).toBeCloseTo(0.6);
    expect(e.seen).toBe(
      '2026-07-28: server/discover offers 2026-07-28; 2025-11-25: no (Unsupported protocol version); server card at https://s.example/mcp/server-card',
    );
  });
});

describe('commerce and mcp_era on fixture sites', () => {
  let fetch: SafeFetch;
  const facts = new Map<string, SiteFacts>();
  const scores = new Map<string, SignalScore>();
  const check = (kind: string, id: string): CheckResult =>
    scores
      .get(kind)
      ?.components.flatMap((c) => c.checks)
      .find((k) => k.id === id) as CheckResult;

  beforeAll(async () => {
    fetch = createSafeFetch({
      allowPrivateNetworks: true,
      timeoutMs: 3000,
      userAgent: `${scannerToken}/0.1.0`,
    });
    const limits = {
      max_pages: 10,
      max_bytes: 1_000_000,
      request_timeout_ms: 3000,
      scan_timeout_ms: 30_000,
      concurrency: 4,
      delay_ms: 0,
      max_redirects: 5,
      max_sitemaps: 5,
    };
    for (const kind of kinds) {
      const site = await startFixtureSite(kind);
      try {
        const f = await crawlSite({
          domain: site.domain,
          fetch,
          userAgent: `${scannerToken}/0.1.0`,
          limits,
          schemes: ['http'],
        });
        facts.set(kind, f);
        scores.set(kind, scoreSite(f, null));
      } finally {
        await site.close();
      }
    }
  }, 120_000);
  afterAll(() => fetch?.close());

  it('scores a shop that publishes UCP and ACP: pass, and the profile says why it is a shop', () => {
    const c = check('shopCommerce', 'commerce');
    expect(c).toMatchObject({ status: 'pass', score: 1, weight: 3 });
    expect(c.seen).toMatch(/UCP: \/\.well-known\/ucp version 2026-04-08/);
    expect(c.seen).toMatch(/ACP: \/\.well-known\/acp\.json version 2026-01-30 \(checkout\)/);
    expect(c.seen).toMatch(/not offered: x402, MPP, AP2/);
    expect(scores.get('shopCommerce')?.profile).toMatchObject({ id: 'shop' });
    expect(scores.get('shopCommerce')?.profile.reasons).toContain('UCP profile');
  });

  it('fails a shop whose manifests are broken, with a finding that points at the broken spec', () => {
    const c = check('shopBrokenCommerce', 'commerce');
    expect(c).toMatchObject({ status: 'partial', score: 0.25 });
    expect(c.seen).toMatch(/UCP: broken - \/\.well-known\/ucp: no capabilities/);
    expect(c.seen).toMatch(/ACP: broken - \/\.well-known\/acp\.json: transports lacks "rest"/);
    const finding = scores.get('shopBrokenCommerce')?.findings.find((f) => f.id === 'commerce');
    expect(finding?.spec_url).toBe('https://ucp.dev/specification/overview');
    expect(finding?.evidence.some((e) => e.url.endsWith('/.well-known/ucp'))).toBe(true);
  });

  it('reports the same broken manifests on an API site as information: no weight, an info finding', () => {
    const asApi = scoreSite(facts.get('shopBrokenCommerce') as SiteFacts, null, null, { profile: 'api' });
    const c = asApi.components.flatMap((k) => k.checks).find((k) => k.id === 'commerce');
    expect(c).toMatchObject({ status: 'partial', score: 0.25, weight: 0 });
    expect(asApi.findings.find((f) => f.id === 'commerce')?.severity).toBe('info');
    expect(asApi.next_level?.checks.map((k) => k.id) ?? []).not.toContain('commerce');
  });

  it('fails a shop that offers agents no way to buy, and scores it on that', () => {
    const c = check('shop', 'commerce');
    expect(c).toMatchObject({ status: 'fail', score: 0, weight: 3 });
    expect(scores.get('shop')?.findings.map((f) => f.id)).toContain('commerce');
  });

  it('reports x402, MPP and AP2 on an API site as information, with no weight', () => {
    const c = check('paidApi', 'commerce');
    expect(c).toMatchObject({ status: 'pass', weight: 0 });
    expect(c.seen).toMatch(/x402: \/api\/paid answers 402 with v2 terms \(exact eip155:8453\)/);
    expect(c.seen).toMatch(
      /MPP: \/api\/paid challenges with tempo charge; \/api\/fortune challenges with tempo charge/,
    );
    expect(c.seen).toMatch(/AP2: the A2A card's AP2 extension \(roles merchant\)/);
    const paid = facts.get('paidApi')?.commerce?.paid ?? [];
    expect(paid.map((p) => [new URL(p.url).pathname, p.source])).toEqual([
      ['/api/paid', 'x402'],
      ['/api/fortune', 'openapi'],
    ]);
    // The x402 check reads the same answers: the resource was asked for once.
    expect(facts.get('paidApi')?.requests?.filter((r) => r.url.endsWith('/api/paid'))).toHaveLength(1);
    expect(check('paidApi', 'x402')).toMatchObject({ status: 'pass' });
  });

  it('leaves a content site without commerce unscored: no value, no finding', () => {
    expect(check('blog', 'commerce')).toMatchObject({ status: 'no_data', score: null, weight: 0 });
    expect(scores.get('blog')?.findings.map((f) => f.id)).not.toContain('commerce');
  });

  it('passes mcp_era for a server of both eras with its server card', () => {
    const c = check('mcpBothEras', 'mcp_era');
    expect(c).toMatchObject({ status: 'pass', score: 1 });
    expect(c.seen).toMatch(/2026-07-28: server\/discover offers 2026-07-28/);
    expect(c.seen).toMatch(/2025-11-25: initialize answers 2025-11-25/);
    expect(c.seen).toMatch(/server card at http:\/\/127\.0\.0\.1:\d+\/mcp\/server-card/);
    expect(check('mcpBothEras', 'mcp_live')).toMatchObject({ status: 'pass' });
  });

  it('gives a 2025-only server without a card at its endpoint part of mcp_era, and says what is missing', () => {
    const c = check('wellPrepared', 'mcp_era');
    expect(c).toMatchObject({ status: 'partial', score: 0.4 });
    expect(c.seen).toMatch(/2026-07-28: no \(server\/discover did not offer 2026-07-28/);
    expect(c.seen).toMatch(/no server card at http:\/\/127\.0\.0\.1:\d+\/mcp\/server-card \(HTTP 404\)/);
  });

  it('does not apply mcp_era to a content site', () => {
    expect(check('blog', 'mcp_era')).toMatchObject({ status: 'not_applicable', score: null });
  });

  it('is unable to check commerce and mcp_era on facts stored before them', () => {
    const old = structuredClone(facts.get('mcpBothEras') as SiteFacts);
    delete old.commerce;
    delete old.verification?.mcp?.eras;
    const rescored = scoreSite(old, null).components.flatMap((c) => c.checks);
    expect(rescored.find((k) => k.id === 'commerce')?.status).toBe('unable_to_check');
    expect(rescored.find((k) => k.id === 'mcp_era')?.status).toBe('unable_to_check');
  });
});
