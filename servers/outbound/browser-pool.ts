/**
 * Headless Chromium for reading pages as a browser would (the scanner's WebMCP check): a small pool
 * of browsers, each launched on first use and reused, each running one page's context at a time,
 * and a hard time budget per visit after which the context is closed whatever the page is doing.
 *
 * The browser itself gets no network of its own: names resolve to nothing
 * (`--host-resolver-rules`), everything else is sent to a proxy that does not exist, UDP outside a
 * proxy is off (WebRTC), and QUIC is off. Callers answer every request the page makes themselves
 * (`context.route`, through the SSRF-safe fetcher) and refuse WebSockets, so what the page reaches
 * is decided by our address policy, not by Chromium.
 */
import type { Logger } from 'pino';
import type { Browser, BrowserContext } from 'playwright-core';

export interface BrowserPoolOptions {
  executablePath: string;
  /** Browsers at once; each runs one visit at a time. */
  size: number;
  /** The User-Agent the pages see (`navigator.userAgent`). */
  userAgent: string;
  log: Logger;
}

/** How a visit ended: finished, or stopped at its time budget (what it did until then is kept). */
export type VisitEnd = 'finished' | 'time_budget';

/** How long a context may take to close before its whole browser is closed instead. */
const CLOSE_GRACE_MS = 3000;

/** A proxy address nothing listens on: a connection Chromium tries on its own fails. */
const NO_NETWORK_PROXY = 'socks5://127.0.0.1:9';

const launchArgs = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--host-resolver-rules=MAP * ~NOTFOUND',
  `--proxy-server=${NO_NETWORK_PROXY}`,
  '--proxy-bypass-list=<-loopback>',
  '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
  '--disable-quic',
];

interface Slot {
  browser: Promise<Browser> | null;
}

export class BrowserPool {
  readonly #options: BrowserPoolOptions;
  readonly #free: Slot[];
  readonly #waiting: ((slot: Slot) => void)[] = [];
  readonly #slots: Slot[];
  #closed = false;

  constructor(options: BrowserPoolOptions) {
    this.#options = options;
    this.#slots = Array.from({ length: options.size }, () => ({ browser: null }));
    this.#free = [...this.#slots];
  }

  /**
   * Runs `visit` in a fresh context (no cookies, downloads refused, service workers blocked) of a
   * free browser, waiting for one. At `budgetMs` the signal aborts and the context is closed, so
   * whatever `visit` awaits fails; the visit then ends as `time_budget`.
   */
  async visit(
    budgetMs: number,
    visit: (context: BrowserContext, signal: AbortSignal) => Promise<void>,
  ): Promise<VisitEnd> {
    if (this.#closed) throw new Error('browser pool closed');
    const slot = await this.#take();
    try {
      if (this.#closed) throw new Error('browser pool closed');
      const browser = await this.#browserOf(slot);
      const context = await browser.newContext({
        acceptDownloads: false,
        serviceWorkers: 'block',
        userAgent: this.#options.userAgent,
        javaScriptEnabled: true,
      });
      const deadline = new AbortController();
      const timer = setTimeout(() => deadline.abort(new Error('page time budget exhausted')), budgetMs);
      const ended = new Promise<'time_budget'>((resolve) =>
        deadline.signal.addEventListener('abort', () => resolve('time_budget'), { once: true }),
      );
      const run = visit(context, deadline.signal).then(() => 'finished' as const);
      // After the budget the visit's own failures (its context closed under it) are expected.
      run.catch(() => {});
      try {
        return await Promise.race([run, ended]);
      } finally {
        clearTimeout(timer);
        await this.#closeContext(slot, context);
      }
    } finally {
      this.#give(slot);
    }
  }

  /** Closes every browser; visits under way fail. */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all(this.#slots.map((slot) => this.#closeBrowser(slot)));
  }

  #take(): Promise<Slot> {
    const slot = this.#free.pop();
    if (slot) return Promise.resolve(slot);
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  #give(slot: Slot): void {
    const next = this.#waiting.shift();
    if (next) next(slot);
    else this.#free.push(slot);
  }

  /** The slot's browser, launched again when it is not running (first use, crashed, closed). */
  async #browserOf(slot: Slot): Promise<Browser> {
    const current = slot.browser ? await slot.browser.catch(() => null) : null;
    if (current?.isConnected()) return current;
    // playwright-core is loaded on the first launch, not at start: it was a tenth of every start's
    // CPU, for a check most deployments leave off (`scanner.webmcp.enabled`).
    const launching = import('playwright-core').then(({ chromium }) =>
      chromium.launch({ executablePath: this.#options.executablePath, args: launchArgs }),
    );
    slot.browser = launching;
    launching.catch(() => {
      if (slot.browser === launching) slot.browser = null;
    });
    return launching;
  }

  /** A context whose page is stuck (a script that never yields) may not close: its browser goes. */
  async #closeContext(slot: Slot, context: BrowserContext): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const closed = await Promise.race([
      context.close().then(
        () => true,
        () => true,
      ),
      new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), CLOSE_GRACE_MS);
      }),
    ]);
    clearTimeout(timer);
    if (!closed) {
      this.#options.log.warn('a browser context did not close in time; its browser is closed');
      await this.#closeBrowser(slot);
    }
  }

  async #closeBrowser(slot: Slot): Promise<void> {
    const browser = slot.browser ? await slot.browser.catch(() => null) : null;
    slot.browser = null;
    await browser?.close().catch(() => {});
  }
}
