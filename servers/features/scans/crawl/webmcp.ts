/**
 * The WebMCP phase: the home page run in headless Chromium (`outbound/browser-pool.ts`) with the
 * WebMCP shim injected before any page script (`collectors/webmcp.ts`), and the tools it registered
 * read from the shim's reports.
 *
 * The page reaches nothing by itself. Every request it makes is answered here through the crawl
 * session's `get` - the SSRF-safe fetcher with the scanner's address policy, the politeness limiter,
 * the scan's time budget, `max_bytes` per answer and an evidence record under the topic `webmcp` -
 * or refused: methods other than GET and HEAD (reading a page must not change anything), images,
 * fonts, media and style sheets (no tool needs them), frames other than the page itself,
 * navigations off the site, what robots.txt keeps from our token, and anything past the page's
 * request and byte caps. WebSockets are refused outright.
 */
import type { BrowserContext, Request, Route } from 'playwright-core';
import { z } from 'zod';
import { MAX_TOOLS, toolsOf, WEBMCP_BINDING, type WebMcpReport, webmcpShim } from '../collectors/webmcp.ts';
import type { WebMcpFacts } from '../site-facts.ts';
import type { WebMcpBrowser } from './session.ts';
import type { Site } from './site.ts';

/** Requests answered for one page, and the bytes of their answers together. */
const MAX_PAGE_REQUESTS = 40;
const MAX_BLOCKED_KEPT = 10;
/** A page shorter than this within the scan's budget is not worth opening. */
const MIN_BUDGET_MS = 1000;
/** After the load event, how long scripts may go on registering tools. */
const SETTLE_MS = 1500;

const skippedTypes = new Set(['image', 'media', 'font', 'stylesheet', 'texttrack', 'manifest', 'ping']);

const ToolReport = z.object({
  op: z.literal('register'),
  via: z.enum(['document', 'navigator', 'provideContext', 'form']),
  name: z.string().max(200),
  title: z.string().max(200).nullable(),
  description: z.string().max(2000),
  schema: z
    .string()
    .max(64 * 1024)
    .nullable(),
  schema_error: z.string().max(500).nullable(),
  has_execute: z.boolean(),
  read_only: z.boolean(),
});
/** What the page sends the binding: the shim's reports, or anything a hostile page makes up. */
const Report = z.discriminatedUnion('op', [
  ToolReport,
  z.object({ op: z.literal('unregister'), name: z.string().max(200) }),
  z.object({ op: z.literal('clear') }),
]);

/** Runs the home page in the browser and reads its WebMCP tools. */
export async function readWebMcp(site: Site, browser: WebMcpBrowser): Promise<WebMcpFacts> {
  const { session } = site;
  const url = site.home;
  const base = { url, tools: [], requests: 0, blocked: [] };
  if (!site.mayFetch(url)) return { ...base, outcome: 'failed', note: 'robots.txt disallows the home page' };
  const left = session.limits.scan_timeout_ms - (Date.now() - session.started);
  const budget = Math.min(browser.page_budget_ms, left);
  if (session.signal.aborted || budget < MIN_BUDGET_MS)
    return { ...base, outcome: 'failed', note: 'scan time budget exhausted before the browser ran' };
  const reports: WebMcpReport[] = [];
  const answered = new PageRequests(site);
  let loaded = false;
  let failure: string | null = null;
  try {
    await browser.pool.visit(budget, async (context, signal) => {
      await prepare(context, reports, answered, signal);
      const page = await context.newPage();
      const response = await page.goto(url, { waitUntil: 'load', timeout: budget });
      if (!response) throw new Error('no answer to the page request');
      loaded = true;
      await page.waitForTimeout(Math.min(SETTLE_MS, Math.max(0, budget / 4)));
    });
  } catch (err) {
    failure = describe(err);
  }
  const facts = { url, tools: toolsOf(reports), requests: answered.count, blocked: answered.blocked };
  if (failure !== null) return { ...facts, outcome: reports.length ? 'loaded' : 'failed', note: failure };
  // The load event came, or the budget ended first (then what was registered until then counts).
  if (!loaded)
    return { ...facts, outcome: 'time_budget', note: `the page did not finish loading within ${budget} ms` };
  return { ...facts, outcome: 'loaded', note: null };
}

/** The shim before any script, its reports kept (main frame only), every request answered by us. */
async function prepare(
  context: BrowserContext,
  reports: WebMcpReport[],
  answered: PageRequests,
  signal: AbortSignal,
): Promise<void> {
  await context.exposeBinding(WEBMCP_BINDING, (source, raw: unknown) => {
    if (source.frame !== source.page.mainFrame() || reports.length >= MAX_TOOLS * 4) return;
    const report = Report.safeParse(raw);
    if (report.success) reports.push(report.data);
  });
  await context.addInitScript({ content: webmcpShim });
  await context.routeWebSocket(/.*/, (ws) => ws.close({ code: 1008, reason: 'not reachable from a scan' }));
  await context.route('**/*', (route) => answered.answer(route, signal));
}

/** The requests of one page: each answered through the crawl session, or refused. */
class PageRequests {
  count = 0;
  bytes = 0;
  readonly blocked: string[] = [];
  readonly #site: Site;

  constructor(site: Site) {
    this.#site = site;
  }

  async answer(route: Route, signal: AbortSignal): Promise<void> {
    const request = route.request();
    const refusal = this.#refusal(request, signal);
    if (refusal) return route.abort(refusal).catch(() => {});
    this.count++;
    const { session } = this.#site;
    const outcome = await session.get(request.url(), request.headers().accept ?? '*/*', undefined, {
      topic: 'webmcp',
      method: request.method() === 'HEAD' ? 'HEAD' : 'GET',
    });
    if (!outcome.ok) {
      if (outcome.blocked && this.blocked.length < MAX_BLOCKED_KEPT) this.blocked.push(request.url());
      return route.abort(outcome.blocked ? 'addressunreachable' : 'failed').catch(() => {});
    }
    const { result } = outcome;
    this.bytes += result.bytes;
    await route
      .fulfill({
        status: result.status,
        ...(result.content_type ? { contentType: result.content_type } : {}),
        body: result.body,
      })
      .catch(() => {});
  }

  /** Why a request is not made, as Playwright's error code; null: it is made. */
  #refusal(request: Request, signal: AbortSignal): string | null {
    if (signal.aborted || this.#site.session.signal.aborted) return 'timedout';
    const url = request.url();
    if (!/^https?:/.test(url)) return 'blockedbyclient';
    const method = request.method();
    if (method !== 'GET' && method !== 'HEAD') return 'blockedbyclient';
    if (skippedTypes.has(request.resourceType())) return 'blockedbyclient';
    const frame = request.frame();
    if (request.isNavigationRequest() && (frame.parentFrame() !== null || !this.#site.onSite(url)))
      return 'blockedbyclient';
    if (this.#site.onSite(url) && !this.#site.mayFetch(url)) return 'blockedbyclient';
    if (this.count >= MAX_PAGE_REQUESTS || this.bytes >= this.#site.session.limits.max_bytes * 2)
      return 'blockedbyclient';
    return null;
  }
}

function describe(err: unknown): string {
  const message = (err as Error)?.message ?? 'browser failure';
  if (/Executable doesn't exist|ENOENT|Failed to launch/i.test(message)) return 'the browser could not start';
  if (/net::ERR_ADDRESS_UNREACHABLE/.test(message)) return 'destination not allowed';
  return `the page could not be opened (${message.split('\n')[0]?.slice(0, 120)})`;
}
