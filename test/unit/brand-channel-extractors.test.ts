/**
 * The pure parts of channel discovery (`servers/features/returns/channels/`): what each extractor
 * reads from a page or document, the email rules (with a real DNS server for the mail domains),
 * phone normalisation, and the ranking of channels from every source.
 */
import * as cheerio from 'cheerio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readAgentCard } from '../../servers/features/returns/channels/a2a.ts';
import { chatWidget } from '../../servers/features/returns/channels/chat.ts';
import { judgeAddress, takesMail } from '../../servers/features/returns/channels/email.ts';
import { contactForm } from '../../servers/features/returns/channels/form.ts';
import { contactPoints, returnPolicies } from '../../servers/features/returns/channels/json-ld.ts';
import { mailtoAddresses } from '../../servers/features/returns/channels/mailto.ts';
import { serverOfCard, supportTool } from '../../servers/features/returns/channels/mcp.ts';
import {
  contactPageLinks,
  type HtmlPage,
  onBrandSite,
  returnPolicyLinks,
} from '../../servers/features/returns/channels/pages.ts';
import { countryOfDomain, normalisePhone } from '../../servers/features/returns/channels/phone.ts';
import { rankChannels } from '../../servers/features/returns/channels/ranking.ts';
import { outboundResolver } from '../../servers/outbound/dns-lookup.ts';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server.ts';

const pageOf = (body: string, url = 'https://brand.com/contact'): HtmlPage => ({
  url: new URL(url),
  $: cheerio.load(body),
});

describe('email rules', () => {
  it('takes role addresses of the brand, its subdomains included', () => {
    for (const address of [
      'support@brand.com',
      'Customer.Service@brand.com',
      'returns-uk@brand.com',
      'help+orders@brand.com',
      'cs@help.brand.com',
      'hello@brand.com',
    ]) {
      expect(judgeAddress(address, 'brand.com'), address).toMatchObject({ ok: true });
    }
  });

  it('refuses an address that names a person or is no known role, and one on another domain', () => {
    expect(judgeAddress('jane.doe@brand.com', 'brand.com')).toEqual({
      ok: false,
      reason: expect.stringContaining('names a person'),
    });
    for (const address of ['jdoe@brand.com', 'support.jane@brand.com', 'm.smith2@brand.com']) {
      expect(judgeAddress(address, 'brand.com'), address).toEqual({
        ok: false,
        reason: expect.stringMatching(/not a role address|names a person/),
      });
    }
    expect(judgeAddress('support@brand-help.com', 'brand.com')).toEqual({
      ok: false,
      reason: 'on another domain than brand.com',
    });
    expect(judgeAddress('support@', 'brand.com')).toEqual({ ok: false, reason: 'not an email address' });
  });

  describe('a domain that takes mail', () => {
    let dns: TestDnsServer;
    beforeAll(async () => {
      dns = await startDnsServer();
      dns.mx.set('mx.example.com', [{ exchange: 'in.mx.example.com', preference: 10 }]);
      dns.a.set('a-only.example.com', ['192.0.2.1']);
      dns.mx.set('null.example.com', [{ exchange: '.', preference: 0 }]);
      dns.a.set('null.example.com', ['192.0.2.2']);
      dns.txt.set('nothing.example.com', ['v=spf1 -all']);
    });
    afterAll(() => dns?.close());

    it('is one with an MX, or with an address and no MX (RFC 5321 5.1); not a null MX or a missing name', async () => {
      const resolver = outboundResolver([dns.address]);
      expect(await takesMail(resolver, 'mx.example.com')).toEqual({ ok: true, via: 'mx' });
      expect(await takesMail(resolver, 'a-only.example.com')).toEqual({ ok: true, via: 'address' });
      expect(await takesMail(resolver, 'null.example.com')).toEqual({
        ok: false,
        reason: expect.stringContaining('null MX'),
      });
      expect(await takesMail(resolver, 'nothing.example.com')).toEqual({
        ok: false,
        reason: 'nothing.example.com has no MX, A or AAAA record: it takes no mail',
      });
      expect(await takesMail(resolver, 'gone.example.com')).toEqual({
        ok: false,
        reason: 'gone.example.com does not exist in DNS',
      });
    });
  });
});

describe('phones', () => {
  it('normalises to E.164, reading a national number only in a known country', () => {
    expect(normalisePhone('tel:+1-415-555-0100', undefined)).toEqual({ ok: true, e164: '+14155550100' });
    expect(normalisePhone('020 7946 0018', 'GB')).toEqual({ ok: true, e164: '+442079460018' });
    expect(normalisePhone('020 7946 0018', undefined)).toMatchObject({ ok: false });
    expect(normalisePhone('+1 555', undefined)).toEqual({ ok: false, reason: 'not a valid phone number' });
    expect(countryOfDomain('brand.co.uk')).toBe('GB');
    expect(countryOfDomain('brand.de')).toBe('DE');
    expect(countryOfDomain('brand.com')).toBeUndefined();
  });
});

describe('page extractors', () => {
  it('reads ContactPoints typed or not, in @graph, with mailto: and tel: prefixes, and the return policy', () => {
    const page = pageOf(
      `<script type="application/ld+json">${JSON.stringify({
        '@context': 'https://schema.org',
        '@graph': [
          {
            '@type': 'Organization',
            contactPoint: [{ contactType: 'Returns', email: 'mailto:returns@brand.com', areaServed: 'GB' }],
          },
          { '@type': 'ContactPoint', contactType: 'customer service', telephone: 'tel:+18005550100' },
          {
            '@type': 'Product',
            offers: {
              hasMerchantReturnPolicy: { '@type': 'MerchantReturnPolicy', merchantReturnLink: '/returns' },
            },
          },
        ],
      })}</script><script type="application/ld+json">{not json</script>`,
    );
    expect(contactPoints(page)).toEqual([
      { email: 'returns@brand.com', telephone: null, contact_type: 'Returns', country: 'GB' },
      { email: null, telephone: '+18005550100', contact_type: 'customer service', country: null },
    ]);
    expect(returnPolicies(page, (u) => onBrandSite(u, 'brand.com'))).toEqual([
      expect.objectContaining({ kind: 'return_policy', address: 'https://brand.com/returns' }),
    ]);
  });

  it('reads mailto: links, every address once, decoded', () => {
    const page = pageOf(
      '<a href="mailto:Support@Brand.com?subject=x">a</a><a href="MAILTO:returns%40brand.com,help@brand.com">b</a><a href="mailto:%E0%A4%A">c</a>',
    );
    expect(mailtoAddresses(page)).toEqual(['support@brand.com', 'returns@brand.com', 'help@brand.com']);
  });

  it("follows links to contact, help and returns pages of the brand's site only, best first", () => {
    const page = pageOf(
      `<a href="/about">About</a><a href="/faq">FAQ</a><a href="https://help.brand.com/">Help center</a>
<a href="/contact-us">Contact us</a><a href="https://other.com/contact">Contact</a><a href="/policies/refund-policy">Refund policy</a>`,
      'https://brand.com/',
    );
    expect(contactPageLinks(page, 'brand.com').map((l) => l.url)).toEqual([
      'https://brand.com/contact-us',
      'https://brand.com/policies/refund-policy',
      'https://help.brand.com/',
      'https://brand.com/faq',
    ]);
    expect(returnPolicyLinks(page, (u) => onBrandSite(u, 'brand.com')).map((c) => c.address)).toEqual([
      'https://brand.com/policies/refund-policy',
    ]);
  });

  it('knows a contact form from a newsletter, search or sign-in form', () => {
    expect(
      contactForm(pageOf('<form><input name="name"><input type="email"><button>Join</button></form>')),
    ).toBeNull();
    expect(contactForm(pageOf('<form role="search"><textarea></textarea></form>'))).toBeNull();
    expect(
      contactForm(pageOf('<form><input type="email"><input type="password"><textarea></textarea></form>')),
    ).toBeNull();
    expect(
      contactForm(pageOf('<form><input type="email"><textarea name="message"></textarea></form>')),
    ).toMatchObject({
      kind: 'form',
      address: 'https://brand.com/contact',
    });
  });

  it('recognises a chat vendor by its script, inline loader included', () => {
    expect(
      chatWidget(
        pageOf(
          '<script>(function(){var s=document.createElement("script");s.src="https://widget.intercom.io/widget/abc";})()</script>',
        ),
      ),
    ).toMatchObject({ kind: 'chat', detail: { vendor: 'Intercom' } });
    expect(
      chatWidget(
        pageOf('<script id="ze-snippet" src="https://static.zdassets.com/ekr/snippet.js?key=k"></script>'),
      ),
    ).toMatchObject({
      detail: { vendor: 'Zendesk' },
    });
    expect(chatWidget(pageOf('<script src="/app.js"></script>'))).toBeNull();
  });
});

describe('agent cards and MCP server cards', () => {
  const card = (skills: unknown[], extra: Record<string, unknown> = {}) => ({
    name: 'Brand support',
    description: 'Support',
    supportedInterfaces: [
      { url: 'https://brand.com/a2a', protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
    ],
    version: '1',
    capabilities: {},
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills,
    ...extra,
  });

  it('finds the returns skill of an A2A 1.0 card, and of a 0.3 card through the SDK compatibility layer', () => {
    const skills = [
      { id: 'faq', name: 'FAQ', description: 'Answers', tags: ['faq'] },
      { id: 'rma', name: 'Open a case', description: 'Start a refund for an order', tags: [] },
    ];
    expect(readAgentCard(card(skills), 'https://brand.com/.well-known/agent-card.json')).toMatchObject({
      ok: true,
      channel: {
        kind: 'a2a',
        detail: { skill_id: 'rma', interface_url: 'https://brand.com/a2a', protocol_version: '1.0' },
      },
    });
    const legacy = {
      name: 'Brand support',
      description: 'Support',
      url: 'https://brand.com/a2a/v03',
      protocolVersion: '0.3.0',
      version: '1',
      capabilities: {},
      defaultInputModes: ['text/plain'],
      defaultOutputModes: ['text/plain'],
      skills: [{ id: 'customer_service', name: 'Customer service', description: 'Help', tags: ['support'] }],
    };
    expect(readAgentCard(legacy, 'https://brand.com/.well-known/agent-card.json')).toMatchObject({
      ok: true,
      channel: { detail: { skill_id: 'customer_service', interface_url: 'https://brand.com/a2a/v03' } },
    });
  });

  it('says why a card offers no channel', () => {
    expect(
      readAgentCard(card([{ id: 'weather', name: 'Weather', description: 'Forecasts', tags: [] }]), 'u'),
    ).toEqual({
      ok: false,
      reason: 'the agent card lists no skill for customer service, returns or refunds (skills: weather)',
    });
    expect(readAgentCard(card([], { supportedInterfaces: [] }), 'u')).toMatchObject({ ok: false });
    expect(readAgentCard('not a card', 'u')).toMatchObject({ ok: false });
  });

  it('reads the server URL of a SEP-2127 card and picks the refund tool', () => {
    expect(
      serverOfCard(
        {
          name: 'x',
          remotes: [
            { type: 'sse', url: '/sse' },
            { type: 'streamable-http', url: '/mcp' },
          ],
        },
        'https://brand.com/mcp/server-card',
      ),
    ).toEqual({ url: 'https://brand.com/mcp', name: 'x' });
    expect(serverOfCard({ name: 'x' }, 'https://brand.com/c')).toBeNull();
    expect(
      supportTool([
        { name: 'search_products' },
        { name: 'open_ticket' },
        { name: 'create_return', description: 'Return an item' },
      ]),
    ).toEqual({ name: 'create_return', description: 'Return an item' });
    expect(supportTool([{ name: 'search_products' }])).toBeNull();
  });
});

describe('ranking', () => {
  const at = '2026-11-28T00:00:00.000Z';
  const found = (kind: string, address: string, found_by: string, detail: Record<string, string> = {}) => ({
    id: address,
    domain: 'brand.com',
    kind,
    address,
    detail: JSON.stringify(detail),
    source_url: 'https://brand.com/',
    found_by,
    found_at: at,
    seen_at: at,
  });

  it('puts registered > own A2A > registry email > site emails by contact type > mailto, then the kit, failures out', () => {
    const ranked = rankChannels({
      registered: {
        brand_domain: 'brand.com',
        webhook_url: 'https://hooks.brand.com/r',
        webhook_secret: 'whsec_x',
        email: null,
        created_at: at,
        updated_at: at,
      },
      agent: undefined,
      brand: {
        contact: { email: 'help@brand.com', phone: '+18005550100' },
        returns: { policy_url: 'https://brand.com/p' },
      },
      found: [
        found('phone', '+14155550100', 'tel_link'),
        found('email', 'info@brand.com', 'mailto_link'),
        found('email', 'billing@brand.com', 'json_ld_contact_point', { contact_type: 'billing' }),
        found('email', 'returns@brand.com', 'json_ld_contact_point', { contact_type: 'returns' }),
        found('a2a', 'https://brand.com/.well-known/agent-card.json', 'a2a_agent_card', {
          skill_id: 'returns',
        }),
        found('form', 'https://brand.com/contact', 'contact_form'),
        found('email', 'help@brand.com', 'mailto_link'),
      ],
      failures: [
        {
          domain: 'brand.com',
          kind: 'email',
          address: 'billing@brand.com',
          reason: 'SMTP 550',
          failed_at: at,
          failed_until: '2099-01-01T00:00:00.000Z',
        },
      ],
    });
    expect(ranked.map((c) => [c.kind, c.address, c.source, c.delivery_rank])).toEqual([
      ['webhook', 'https://hooks.brand.com/r', 'registered', 1],
      ['a2a', 'https://brand.com/.well-known/agent-card.json', 'site', 2],
      ['email', 'help@brand.com', 'registry', 3],
      ['email', 'returns@brand.com', 'site', 4],
      ['email', 'billing@brand.com', 'site', null],
      ['email', 'info@brand.com', 'site', 5],
      ['form', 'https://brand.com/contact', 'site', null],
      ['phone', '+18005550100', 'registry', null],
      ['phone', '+14155550100', 'site', null],
      ['return_policy', 'https://brand.com/p', 'registry', null],
    ]);
    expect(ranked[0]?.private).toBe(true);
    expect(ranked.find((c) => c.address === 'billing@brand.com')?.failed).toMatchObject({
      reason: 'SMTP 550',
    });
  });
});
