/**
 * One resolution per merchant even when a lookup's read of the stored verdicts is slow: the read
 * that misses may come back after another lookup's whole resolution has stored its verdict and
 * left the in-flight map. The race is made to happen every time, on each dialect, by holding that
 * read's result (a Kysely plugin, the database itself untouched) until the first resolution is done;
 * the merchant's site is a real HTTP server on loopback reached through the resolver's own fetcher.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  type KyselyPlugin,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryResult,
  type RootOperationNode,
  TableNode,
  type UnknownRow,
} from 'kysely';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Dialect } from '../../db/database.ts';
import { loadConfig } from '../../servers/config.ts';
import { MerchantResolver } from '../../servers/features/charges/resolution.ts';
import { outboundResolver } from '../../servers/outbound/dns-lookup.ts';
import { createTestDatabase, dialects, type TestDatabase } from '../helpers/databases.ts';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server.ts';

/** Holds the result of the `nth` read of `resolved_merchants` until `release()`. */
class HoldNthVerdictRead implements KyselyPlugin {
  readonly #nth: number;
  readonly #reads = new WeakSet<object>();
  #count = 0;
  #release: () => void = () => {};
  readonly #released = new Promise<void>((resolve) => {
    this.#release = resolve;
  });
  /** Settles once the held read has run and its result is being held. */
  readonly holding: Promise<void>;
  #holding: () => void = () => {};

  constructor(nth: number) {
    this.#nth = nth;
    this.holding = new Promise<void>((resolve) => {
      this.#holding = resolve;
    });
  }

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    const node = args.node;
    if (node.kind === 'SelectQueryNode') {
      const from = node.from?.froms[0];
      if (from && TableNode.is(from) && from.table.identifier.name === 'resolved_merchants') {
        this.#count += 1;
        if (this.#count === this.#nth) this.#reads.add(args.queryId);
      }
    }
    return node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    if (this.#reads.has(args.queryId)) {
      this.#holding();
      await this.#released;
    }
    return args.result;
  }

  release(): void {
    this.#release();
  }
}

describe.each(dialects)('live resolution single-flight (%s)', (dialect: Dialect) => {
  let database: TestDatabase;
  let dns: TestDnsServer;
  let site: Server;
  let homeRequests = 0;

  beforeAll(async () => {
    database = await createTestDatabase(dialect);
    dns = await startDnsServer();
    site = createServer((req, res) => {
      if (req.url === '/' && req.headers.host?.startsWith('halcyonroasters.com')) homeRequests += 1;
      const page = req.headers.host?.startsWith('halcyonroasters.com')
        ? '<!doctype html><html><head><title>Halcyon Roasters</title><meta property="og:site_name" content="Halcyon Roasters"></head><body><h1>Halcyon Roasters</h1></body></html>'
        : '<!doctype html><html><head><title>Elsewhere</title></head><body>Nothing here</body></html>';
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page);
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    dns.a.set('halcyonroasters.com', ['127.0.0.1']);
  });

  afterAll(async () => {
    site?.closeAllConnections();
    await new Promise<void>((resolve) => (site ? site.close(() => resolve()) : resolve()));
    await dns?.close();
    await database?.drop();
  });

  it('fetches the site once when a second lookup read the table before the first stored its verdict', async () => {
    const gate = new HoldNthVerdictRead(2);
    const config = loadConfig({
      env: {},
      overrides: {
        'scanner.allow_private_networks': true,
        'charges.live_resolution.enabled': true,
        'charges.live_resolution.time_budget_ms': 30_000,
        'charges.live_resolution.home_page_scheme': 'http',
        'charges.live_resolution.home_page_port': (site.address() as AddressInfo).port,
        'outbound.dns_servers': [dns.address],
      },
    });
    const resolver = new MerchantResolver({
      db: database.handle.db.withPlugin(gate),
      config,
      lookup: outboundResolver(config.outbound.dns_servers).lookup,
      search: null,
      log: pino({ level: 'silent' }),
      now: () => new Date(),
    });
    try {
      const merchant = {
        nameTokens: ['HALCYON', 'ROASTERS'],
        cityTokens: [],
        country: 'US',
        region: null,
        cut: false,
        websiteHint: null,
      };
      const first = resolver.resolve(merchant);
      const second = resolver.resolve(merchant);
      // The second read ran before anything was stored; its empty answer is held back until the
      // first lookup's resolution has fetched the site, stored the verdict and finished.
      await gate.holding;
      expect(await first).toMatchObject({ status: 'resolved', domain: 'halcyonroasters.com' });
      gate.release();
      expect(await second).toMatchObject({ status: 'resolved', domain: 'halcyonroasters.com' });
      expect(homeRequests).toBe(1);
    } finally {
      gate.release();
      await resolver.stop();
    }
  });
});
