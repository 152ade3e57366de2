/**
 * One discovery of a brand's channels from its own site (issue 29 part 1), as a capable person
 * would look: the home page; the A2A agent card and the MCP catalog at their well-known paths; the
 * contact, help, support, customer-service and returns pages the home page links to or the sitemap
 * lists (and the contact pages those link to), up to a page cap; on every page read, schema.org
 * `ContactPoint`s, `mailto:` and `tel:` links, a contact form, a chat widget and the return policy.
 * Emails are kept only under `email.ts`'s rules (a role, the brand's domain, a domain that takes
 * mail), phones only as valid E.164 numbers, and every URL kept passes the public-address rule.
 *
 * Every fetch goes through the PageReader over the SSRF-safe fetcher (robots.txt obeyed for the
 * scanner's token, redirects followed hop by hop and capped, bodies capped), and the whole run under
 * one signal: when the time budget runs out what was read so far is the answer (`partial`). Nothing
 * here throws for what a site does: a slow, huge, looping or broken site is an outcome and notes.
 * The session is one object with one method per phase (STYLE.md: no crawl as one closure).
 */

import type { FetchLike } from '@modelcontextprotocol/client';
import * as cheerio from 'cheerio';
import type { CountryCode } from 'libphonenumber-js/min';
import { getDomain } from 'tldts';
import { cappedFetch } from '../../../outbound/capped-fetch.ts';
import type { OutboundResolver } from '../../../outbound/dns-lookup.ts';
import type { SafeFetch } from '../../../outbound/safe-fetch.ts';
import { type DomainPolicy, publicUrlProblem } from '../../../public-address.ts';
import { readMcpCatalog } from '../../scans/collectors/discovery.ts';
import { parseSitemap } from '../../scans/collectors/sitemap.ts';
import type { PageOutcome, PageReader, ReadKind } from '../../scans/page-reader.ts';
import { readAgentCard } from './a2a.ts';
import { chatWidget } from './chat.ts';
import { judgeAddress, takesMail } from './email.ts';
import { contactForm } from './form.ts';
import { contactPoints, returnPolicies } from './json-ld.ts';
import { mailtoAddresses } from './mailto.ts';
import { listTools, mcpChannel, serverOfCard } from './mcp.ts';
import {
  contactPageLinks,
  contactPagesOf,
  type HtmlPage,
  onBrandSite,
  type PageLink,
  returnPolicyLinks,
} from './pages.ts';
import { countryOfDomain, normalisePhone, telLinks } from './phone.ts';
import type {
  DiscoveryAttempt,
  DiscoveryOutcome,
  DiscoveryReport,
  FoundChannel,
  RefusedCandidate,
} from './schemas.ts';

export const AGENT_CARD_PATH = '/.well-known/agent-card.json';
export const MCP_CATALOG_PATH = '/.well-known/mcp/catalog.json';
export const LEGACY_MCP_CARD_PATH = '/.well-known/mcp/server-card.json';

/** Server cards of one catalog looked at, sitemaps read (an index and its first children). */
const MAX_SERVER_CARDS = 2;
const MAX_SITEMAPS = 3;
/** A linked page this promising (contact, customer service) is followed one more level. */
const FOLLOW_SCORE = 6;
/**
 * Refusals, and pages skipped at the cap, a report lists (a sitemap of 50,000 help pages is not
 * stored as 50,000 skips); a note counts the rest.
 */
const MAX_REPORTED = 50;
const MAX_SKIPS_LISTED = 20;

/** ContactPoint types that are not for customers: their addresses are not return channels. */
const notForCustomers =
  /\b(?:sales|press|media|investor|partner|career|jobs?|recruit|advertis|marketing|legal|privacy|security|abuse|wholesale|affiliate)/i;

export interface DiscoveryDeps {
  /** A reader for this run (its robots.txt cache lives as long as the run). */
  reader: PageReader;
  /** The SSRF-safe fetcher the MCP client talks through. */
  fetch: SafeFetch;
  dns: Pick<OutboundResolver, 'resolveMx' | 'resolve4' | 'resolve6'>;
  policy: DomainPolicy;
  /** HTML pages read at most, the home page included. */
  maxPages: number;
  /** Largest body read from the MCP server. */
  maxBytes: number;
  /** The home page URL of a host (`https://host/`, or another scheme or port when configured). */
  homeUrl: (host: string) => string;
}

export interface DiscoveryResult {
  outcome: DiscoveryOutcome;
  channels: FoundChannel[];
  report: DiscoveryReport;
}

/** Discovers `domain`'s channels within `signal`; never throws for anything the site does. */
export function discoverChannels(
  deps: DiscoveryDeps,
  domain: string,
  signal: AbortSignal,
): Promise<DiscoveryResult> {
  return new DiscoverySession(deps, domain, signal).run();
}

interface EmailCandidate {
  raw: string;
  source_url: string;
  found_by: 'json_ld_contact_point' | 'mailto_link';
  contact_type: string | null;
}

class DiscoverySession {
  readonly #deps: DiscoveryDeps;
  readonly #domain: string;
  readonly #signal: AbortSignal;
  readonly #started = Date.now();
  readonly #tried: DiscoveryAttempt[] = [];
  readonly #refused: RefusedCandidate[] = [];
  readonly #notes: string[] = [];
  readonly #channels = new Map<string, FoundChannel>();
  readonly #pages: HtmlPage[] = [];
  readonly #emails: EmailCandidate[] = [];
  /** Registrable domains whose pages belong to the brand: its own, and where its home page lives. */
  readonly #siteDomains = new Set<string>();
  #pagesLeft: number;
  #incomplete = false;

  constructor(deps: DiscoveryDeps, domain: string, signal: AbortSignal) {
    this.#deps = deps;
    this.#domain = domain;
    this.#signal = signal;
    this.#pagesLeft = deps.maxPages;
    this.#siteDomains.add(domain);
  }

  async run(): Promise<DiscoveryResult> {
    const home = await this.#readHome();
    const origin = home ? home.url.origin : new URL(this.#deps.homeUrl(this.#domain)).origin;
    const [, , sitemapLinks] = await Promise.all([
      this.#readAgentCard(origin),
      this.#readMcp(origin),
      home ? this.#readSitemaps(origin) : Promise.resolve([]),
    ]);
    if (home) {
      const first = await this.#readPages(merge(this.#pageLinks(home), sitemapLinks));
      const next = first.flatMap((page) =>
        this.#pageLinks(page).filter((l) => l.score >= FOLLOW_SCORE && !this.#wasRead(l.url)),
      );
      await this.#readPages(merge(next, []));
    }
    for (const page of this.#pages) this.#extract(page);
    await this.#checkEmails();
    if (this.#signal.aborted) this.#note('the time budget ran out: what was read by then is kept');
    const outcome: DiscoveryOutcome = !home ? 'unreachable' : this.#incomplete ? 'partial' : 'complete';
    return {
      outcome,
      channels: [...this.#channels.values()],
      report: {
        tried: this.#tried,
        refused: this.#refused,
        notes: this.#notes,
        pages_read: this.#pages.length,
        duration_ms: Date.now() - this.#started,
      },
    };
  }

  // --- phases -------------------------------------------------------------------------------

  /** The home page; a name with no address is tried again as `www.` + name. */
  async #readHome(): Promise<HtmlPage | null> {
    let outcome = await this.#read(this.#deps.homeUrl(this.#domain), 'home', 'page');
    if (!outcome.ok && /ENOTFOUND|ENODATA|no address/.test(outcome.detail) && !this.#domain.includes(':')) {
      outcome = await this.#read(this.#deps.homeUrl(`www.${this.#domain}`), 'home', 'page');
    }
    if (!outcome.ok) return null;
    const page = this.#htmlPage(outcome);
    if (!page) return null;
    // The brand's home may live on another registrable domain it redirects to: its pages are the brand's.
    const final = getDomain(page.url.hostname);
    if (final) this.#siteDomains.add(final);
    this.#pagesLeft -= 1;
    this.#pages.push(page);
    return page;
  }

  async #readAgentCard(origin: string): Promise<void> {
    const url = `${origin}${AGENT_CARD_PATH}`;
    const outcome = await this.#read(url, 'agent_card', 'document');
    if (!outcome.ok) return;
    const json = parseJson(outcome.page.body);
    const reading =
      json === undefined ? { ok: false as const, reason: 'not JSON' } : readAgentCard(json, url);
    if (!reading.ok) {
      this.#refuse('a2a', url, url, reading.reason);
      return;
    }
    const problem = publicUrlProblem(reading.channel.detail.interface_url ?? '', this.#deps.policy);
    if (problem) this.#refuse('a2a', url, url, `its interface URL ${problem}`);
    else this.#keep(reading.channel);
  }

  /** The MCP catalog's server cards (or the single legacy card), each server's live tools. */
  async #readMcp(origin: string): Promise<void> {
    const catalogUrl = `${origin}${MCP_CATALOG_PATH}`;
    const catalog = await this.#read(catalogUrl, 'mcp_catalog', 'document');
    let cards: string[] = [];
    if (catalog.ok) {
      cards = readMcpCatalog(
        {
          url: catalog.page.final_url,
          status: 200,
          content_type: catalog.page.content_type,
          body: catalog.page.body,
        },
        catalogUrl,
      ).cards;
      if (cards.length === 0)
        this.#refuse('mcp', catalogUrl, catalogUrl, 'the MCP catalog lists no server card');
    } else {
      cards = [`${origin}${LEGACY_MCP_CARD_PATH}`];
    }
    for (const cardUrl of cards.slice(0, MAX_SERVER_CARDS)) await this.#readServerCard(cardUrl, catalog.ok);
  }

  async #readServerCard(cardUrl: string, listed: boolean): Promise<void> {
    const problem = publicUrlProblem(cardUrl, this.#deps.policy);
    if (problem) {
      this.#refuse('mcp', cardUrl, cardUrl, `the server card's URL ${problem}`);
      return;
    }
    const card = await this.#read(cardUrl, 'mcp_server_card', 'document');
    if (!card.ok) {
      if (listed)
        this.#refuse('mcp', cardUrl, cardUrl, `the listed server card could not be read (${card.detail})`);
      return;
    }
    const server = serverOfCard(parseJson(card.page.body), card.page.final_url);
    if (!server) {
      this.#refuse('mcp', cardUrl, cardUrl, 'the server card names no Streamable HTTP URL');
      return;
    }
    const serverProblem = publicUrlProblem(server.url, this.#deps.policy);
    if (serverProblem) {
      this.#refuse('mcp', server.url, cardUrl, `the server URL ${serverProblem}`);
      return;
    }
    let tools: Awaited<ReturnType<typeof listTools>>;
    try {
      tools = await listTools(server.url, this.#mcpFetch(), this.#signal);
      this.#tried.push({
        url: server.url,
        what: 'mcp_server',
        outcome: 'read',
        detail: `${tools.length} tools`,
      });
    } catch (err) {
      const detail = this.#signal.aborted ? 'timed out' : (err as Error).message.slice(0, 200);
      this.#tried.push({ url: server.url, what: 'mcp_server', outcome: 'failed', detail });
      this.#refuse('mcp', server.url, cardUrl, `tools/list failed (${detail})`);
      this.#incomplete = true;
      return;
    }
    const found = mcpChannel(server, tools, cardUrl);
    if (found.ok) this.#keep(found.channel);
    else this.#refuse('mcp', server.url, cardUrl, found.reason);
  }

  /** Contact-like pages the sitemaps list: robots.txt's `Sitemap:` lines, else `/sitemap.xml`. */
  async #readSitemaps(origin: string): Promise<PageLink[]> {
    const named = (await this.#deps.reader.sitemaps(origin, this.#signal)).filter(
      (url) => URL.canParse(url) && this.#onSite(new URL(url)),
    );
    const queue = named.length > 0 ? [...named] : [`${origin}/sitemap.xml`];
    const urls: string[] = [];
    for (let read = 0; queue.length > 0 && read < MAX_SITEMAPS; read++) {
      const url = queue.shift() as string;
      const outcome = await this.#read(url, 'sitemap', 'document');
      if (!outcome.ok) continue;
      const sitemap = parseSitemap(outcome.page.body);
      if (sitemap.kind === 'urlset') urls.push(...sitemap.urls.map((u) => u.loc));
      else if (sitemap.kind === 'index') queue.push(...sitemap.sitemaps);
    }
    return contactPagesOf(urls, this.#domain);
  }

  /** Reads the best of `links` while the page cap allows; the rest is reported as skipped. */
  async #readPages(links: PageLink[]): Promise<HtmlPage[]> {
    const fresh = links.filter((l) => !this.#wasRead(l.url));
    const chosen = fresh.slice(0, Math.max(0, this.#pagesLeft));
    const skipped = fresh.slice(chosen.length);
    const listed = this.#tried.filter((t) => t.outcome === 'skipped').length;
    for (const link of skipped.slice(0, Math.max(0, MAX_SKIPS_LISTED - listed))) {
      this.#tried.push({ url: link.url, what: 'page', outcome: 'skipped', detail: 'page cap reached' });
    }
    if (skipped.length > 0) {
      this.#note(`the page cap (${this.#deps.maxPages}) was reached: ${skipped.length} more pages not read`);
    }
    this.#pagesLeft -= chosen.length;
    const outcomes = await this.#deps.reader.readAll(
      chosen.map((l) => l.url),
      this.#signal,
    );
    const pages: HtmlPage[] = [];
    outcomes.forEach((outcome, i) => {
      this.#record(chosen[i]?.url ?? '', 'page', outcome);
      const page = outcome.ok ? this.#htmlPage(outcome) : null;
      if (page) pages.push(page);
      // A page that did not answer in time may answer next time; a 404 or a robots rule will not.
      else if (!outcome.ok && outcome.reason === 'failed') this.#incomplete = true;
    });
    this.#pages.push(...pages);
    return pages;
  }

  /** Every channel a page shows; emails are judged afterwards, once each. */
  #extract(page: HtmlPage): void {
    const onSite = (url: URL) => this.#onSite(url);
    const country = countryOfDomain(this.#domain);
    for (const point of contactPoints(page)) {
      if (point.email) {
        if (point.contact_type && notForCustomers.test(point.contact_type)) {
          this.#refuse(
            'email',
            point.email,
            page.url.href,
            `its contactType "${point.contact_type}" is not for customers`,
          );
        } else {
          this.#emails.push({
            raw: point.email,
            source_url: page.url.href,
            found_by: 'json_ld_contact_point',
            contact_type: point.contact_type,
          });
        }
      }
      if (point.telephone) {
        this.#phone(
          point.telephone,
          page,
          'json_ld_contact_point',
          point.contact_type,
          point.country ?? country,
        );
      }
    }
    for (const raw of mailtoAddresses(page)) {
      this.#emails.push({ raw, source_url: page.url.href, found_by: 'mailto_link', contact_type: null });
    }
    for (const raw of telLinks(page)) this.#phone(raw, page, 'tel_link', null, country);
    const form = contactForm(page);
    if (form) this.#keep(form);
    const chat = chatWidget(page);
    if (chat) this.#keep(chat);
    for (const policy of [...returnPolicies(page, onSite), ...returnPolicyLinks(page, onSite)]) {
      if (this.#publishable(policy.address)) this.#keep(policy);
    }
  }

  #phone(
    raw: string,
    page: HtmlPage,
    foundBy: 'json_ld_contact_point' | 'tel_link',
    contactType: string | null,
    country: CountryCode | string | null | undefined,
  ): void {
    const result = normalisePhone(raw, (country ?? undefined) as CountryCode | undefined);
    if (!result.ok) {
      this.#refuse('phone', raw, page.url.href, result.reason);
      return;
    }
    this.#keep({
      kind: 'phone',
      address: result.e164,
      detail: contactType ? { contact_type: contactType } : {},
      source_url: page.url.href,
      found_by: foundBy,
    });
  }

  /** Rules 1 and 2 of `email.ts` for each address, then rule 3 once per mail domain. */
  async #checkEmails(): Promise<void> {
    const judged = new Map<string, EmailCandidate & { domain: string; address: string }>();
    for (const candidate of this.#emails) {
      const verdict = judgeAddress(candidate.raw, this.#domain);
      if (!verdict.ok) {
        this.#refuse('email', candidate.raw, candidate.source_url, verdict.reason);
        continue;
      }
      if (!judged.has(verdict.address)) judged.set(verdict.address, { ...candidate, ...verdict });
    }
    const domains = new Map<string, ReturnType<typeof takesMail>>();
    for (const { domain } of judged.values()) {
      if (!domains.has(domain)) domains.set(domain, takesMail(this.#deps.dns, domain));
    }
    for (const candidate of judged.values()) {
      const mail = await (domains.get(candidate.domain) as ReturnType<typeof takesMail>);
      if (!mail.ok) {
        this.#refuse('email', candidate.address, candidate.source_url, mail.reason);
        if (/failed \(/.test(mail.reason)) this.#incomplete = true;
        continue;
      }
      this.#keep({
        kind: 'email',
        address: candidate.address,
        detail: candidate.contact_type ? { contact_type: candidate.contact_type } : {},
        source_url: candidate.source_url,
        found_by: candidate.found_by,
      });
    }
  }

  // --- helpers ------------------------------------------------------------------------------

  async #read(
    url: string,
    what: DiscoveryAttempt['what'],
    kind: ReadKind,
  ): Promise<PageOutcome & { detail: string }> {
    if (this.#signal.aborted) {
      this.#tried.push({ url, what, outcome: 'skipped', detail: 'time budget' });
      this.#incomplete = true;
      return { ok: false, url, reason: 'failed', detail: 'time budget' };
    }
    const outcome = await this.#deps.reader.read(url, this.#signal, kind);
    this.#record(url, what, outcome);
    return outcome.ok ? { ...outcome, detail: '' } : outcome;
  }

  #record(url: string, what: DiscoveryAttempt['what'], outcome: PageOutcome): void {
    if (outcome.ok) {
      const truncated = outcome.page.truncated ? ', cut at the size limit' : '';
      this.#tried.push({ url, what, outcome: 'read', detail: `${outcome.page.content_type}${truncated}` });
      return;
    }
    const detail = outcome.url !== url ? `${outcome.detail} (at ${outcome.url})` : outcome.detail;
    this.#tried.push({ url, what, outcome: outcome.reason, detail });
  }

  #htmlPage(outcome: Extract<PageOutcome, { ok: true }>): HtmlPage | null {
    try {
      return { url: new URL(outcome.page.final_url), $: cheerio.load(outcome.page.body) };
    } catch {
      return null;
    }
  }

  #pageLinks(page: HtmlPage): PageLink[] {
    return [...this.#siteDomains].flatMap((domain) => contactPageLinks(page, domain));
  }

  #wasRead(url: string): boolean {
    return this.#tried.some((t) => t.url === url) || this.#pages.some((p) => p.url.href === url);
  }

  #onSite(url: URL): boolean {
    return [...this.#siteDomains].some((domain) => onBrandSite(url, domain));
  }

  #publishable(url: string): boolean {
    return publicUrlProblem(url, this.#deps.policy) === null;
  }

  #keep(channel: FoundChannel): void {
    const key = `${channel.kind} ${channel.address}`;
    if (!this.#channels.has(key)) this.#channels.set(key, channel);
  }

  #refuse(kind: RefusedCandidate['kind'], address: string, sourceUrl: string, reason: string): void {
    if (this.#refused.some((r) => r.kind === kind && r.address === address && r.reason === reason)) return;
    if (this.#refused.length >= MAX_REPORTED) {
      this.#note(`more than ${MAX_REPORTED} candidates were refused: the first ${MAX_REPORTED} are listed`);
      return;
    }
    this.#refused.push({ kind, address: address.slice(0, 320), source_url: sourceUrl, reason });
  }

  #note(note: string): void {
    if (!this.#notes.includes(note)) this.#notes.push(note);
  }

  /** The safe fetcher for the MCP client: within this run's signal, each body capped. */
  #mcpFetch(): FetchLike {
    return cappedFetch(this.#deps.fetch, this.#signal, this.#deps.maxBytes);
  }
}

/** Links from several sources, each URL once with its best score, best first (stable). */
function merge(first: PageLink[], second: PageLink[]): PageLink[] {
  const best = new Map<string, PageLink>();
  for (const link of [...first, ...second]) {
    const known = best.get(link.url);
    if (!known || known.score < link.score) best.set(link.url, link);
  }
  return [...best.values()].sort((a, b) => b.score - a.score);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
