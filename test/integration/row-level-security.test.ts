/**
 * Row-level security of the owner tools (issue 4, section 3), once per dialect. A property test
 * (fast-check) stores random accounts with sites, traffic rollups, scans and findings - domains
 * shared between accounts, anonymous scans beside them - and checks that each owner tool returns
 * exactly the calling account's rows, with the same traffic figures as GET /site-stats. On
 * PostgreSQL a direct SQL check shows the policies hide other accounts' rows from a query that
 * forgets the filter.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import type pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OWNER_READER_ROLE } from '../../db/scoped.ts';
import { ServiceError } from '../../servers/errors.ts';
import {
  getMyTraffic,
  listMyFindings,
  listMyScans,
  listMySites,
  ownerOperations,
} from '../../servers/features/owner/operations.ts';
import { getPixelStatus, getSiteStats } from '../../servers/features/traffic/operations.ts';
import { type AnyOperation, invokeOperation, type OperationContext } from '../../servers/operation.ts';
import { operations } from '../../servers/registry.ts';
import { dialects } from '../helpers/databases.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

const DOMAINS = ['shared-one.com', 'shared-two.com', 'shared-three.com', 'shared-four.com'];
const CATEGORIES = ['human', 'ai_training', 'ai_search', 'ai_referred', 'other_bot'] as const;
const AGENTS = ['', 'GPTBot', 'ChatGPT', 'Googlebot'] as const;
const COMPONENTS = ['technical_foundation', 'content_depth', 'citation_signals'] as const;
const SEVERITIES = ['critical', 'warning', 'info'] as const;
const DAY_MS = 86_400_000;

const siteArb = fc.record({
  daily: fc.uniqueArray(
    fc.record({
      dayOffset: fc.integer({ min: 0, max: 35 }),
      category: fc.constantFrom(...CATEGORIES),
      agent: fc.constantFrom(...AGENTS),
      events: fc.integer({ min: 1, max: 50 }),
    }),
    { maxLength: 6, selector: (r) => `${r.dayOffset}|${r.category}|${r.agent}` },
  ),
  pages: fc.uniqueArray(
    fc.record({
      category: fc.constantFrom(...CATEGORIES),
      path: fc.constantFrom('/', '/pricing', '/docs'),
      events: fc.integer({ min: 1, max: 20 }),
    }),
    { maxLength: 3, selector: (r) => `${r.category}|${r.path}` },
  ),
  sources: fc.subarray(['beacon', 'server'] as const),
  verified: fc.boolean(),
});

const scanArb = fc.record({
  domain: fc.constantFrom(...DOMAINS),
  status: fc.constantFrom('done', 'done', 'failed', 'queued'),
  isPublic: fc.boolean(),
  findings: fc.array(
    fc.record({ component: fc.constantFrom(...COMPONENTS), severity: fc.constantFrom(...SEVERITIES) }),
    { maxLength: 3 },
  ),
});

const accountArb = fc.record({
  domains: fc.uniqueArray(fc.constantFrom(...DOMAINS), { maxLength: 3 }),
  sites: fc.array(siteArb, { minLength: 3, maxLength: 3 }),
  scans: fc.array(scanArb, { maxLength: 3 }),
});

const worldArb = fc.record({
  accounts: fc.array(accountArb, { minLength: 2, maxLength: 4 }),
  anonymousScans: fc.array(scanArb, { maxLength: 2 }),
});

type World = typeof worldArb extends fc.Arbitrary<infer W> ? W : never;

/** What one account owns, as stored, for comparing with what the tools return. */
interface Owned {
  accountId: string;
  sites: { id: string; domain: string; events30d: number; eventsTotal: number }[];
  scans: { id: string; domain: string; status: string; findings: string[] }[];
}

describe.each(dialects)('row-level security of the owner tools (%s)', (dialect) => {
  let service: TestService;

  beforeAll(async () => {
    service = await startTestService(dialect);
  });
  afterAll(() => service?.close());

  const ctxFor = (accountId: string): OperationContext => ({
    services: service.services,
    operations,
    request: { id: randomUUID(), ip: '127.0.0.1', via: 'mcp', headers: {} },
    log: pino({ level: 'silent' }),
    signal: new AbortController().signal,
    account: { id: accountId, keyId: null },
    // What the owner MCP endpoint sets from a verified access token (the flow itself: oauth*.test.ts).
    grant: {
      accountId,
      clientId: 'row-level-security-test',
      grantId: randomUUID(),
      scopes: ['agent-service'],
    },
  });

  // biome-ignore lint/suspicious/noExplicitAny: outputs are compared structurally
  const call = (op: AnyOperation, accountId: string, input: unknown = {}): Promise<any> =>
    invokeOperation(op, ctxFor(accountId), input);

  /** Stores a world through the service's own connection (the table owner, not under RLS). */
  async function store(world: World): Promise<Owned[]> {
    const { db } = service.services;
    const now = service.services.now();
    const today = now.toISOString().slice(0, 10);
    const day = (offset: number) => new Date(Date.parse(today) - offset * DAY_MS).toISOString().slice(0, 10);
    const at = now.toISOString();
    const insertScans = async (accountId: string | null, scans: World['anonymousScans']) => {
      const stored: Owned['scans'] = [];
      for (const [i, scan] of scans.entries()) {
        const id = randomUUID();
        const done = scan.status === 'done';
        await db
          .insertInto('scans')
          .values({
            id,
            domain: scan.domain,
            account_id: accountId,
            is_public: Number(scan.isPublic),
            depth: 'full',
            status: scan.status,
            progress_done: 0,
            progress_total: 0,
            attempts: 0,
            requested_at: new Date(now.getTime() - i * 1000).toISOString(),
            finished_at: scan.status === 'queued' ? null : at,
            score: done ? 40 + i : null,
            tier: done ? 'faint' : null,
            error: scan.status === 'failed' ? 'unreachable' : null,
          })
          .execute();
        const findings = done ? scan.findings : [];
        if (findings.length) {
          await db
            .insertInto('scan_findings')
            .values(
              findings.map((f, seq) => ({
                scan_id: id,
                seq: seq + 1,
                finding_id: `check_${seq}`,
                component: f.component,
                severity: f.severity,
                seen: 'seen',
                fix: 'fix',
                evidence_url: null,
              })),
            )
            .execute();
        }
        stored.push({
          id,
          domain: scan.domain,
          status: scan.status,
          findings: findings.map((_, s) => `check_${s}`),
        });
      }
      return stored;
    };
    await insertScans(null, world.anonymousScans);
    const owned: Owned[] = [];
    for (const account of world.accounts) {
      const accountId = randomUUID();
      await db
        .insertInto('accounts')
        .values({ id: accountId, email: `${accountId}@example.com`, password_hash: null, created_at: at })
        .execute();
      const sites: Owned['sites'] = [];
      for (const [i, domain] of account.domains.entries()) {
        const spec = account.sites[i] as World['accounts'][number]['sites'][number];
        const id = randomUUID();
        await db
          .insertInto('sites')
          .values({
            id,
            account_id: accountId,
            domain,
            verification_token: randomUUID(),
            verified_at: spec.verified ? at : null,
            verification_method: spec.verified ? 'http' : null,
            share_network: 0,
            created_at: new Date(now.getTime() + i).toISOString(),
          })
          .execute();
        if (spec.daily.length) {
          await db
            .insertInto('traffic_daily')
            .values(
              spec.daily.map((d) => ({
                site_id: id,
                day: day(d.dayOffset),
                category: d.category,
                agent: d.agent,
                operator: null,
                events: d.events,
              })),
            )
            .execute();
        }
        if (spec.pages.length) {
          await db
            .insertInto('traffic_pages_daily')
            .values(spec.pages.map((p) => ({ site_id: id, day: today, ...p })))
            .execute();
        }
        for (const source of spec.sources) {
          await db
            .insertInto('traffic_site_sources')
            .values({ site_id: id, source, first_event_at: at, last_event_at: at, events: 7 })
            .execute();
          await db
            .insertInto('traffic_hourly')
            .values({ site_id: id, hour: at.slice(0, 13), source, events: 3 })
            .execute();
        }
        sites.push({
          id,
          domain,
          events30d: spec.daily.filter((d) => d.dayOffset < 30).reduce((n, d) => n + d.events, 0),
          eventsTotal: 7 * spec.sources.length,
        });
      }
      owned.push({ accountId, sites, scans: await insertScans(accountId, account.scans) });
    }
    return owned;
  }

  it('no owner tool ever returns another account’s rows, and each returns all of the account’s own', async () => {
    await fc.assert(
      fc.asyncProperty(worldArb, async (world) => {
        const owned = await store(world);
        for (const [index, own] of owned.entries()) {
          const other = owned[(index + 1) % owned.length] as Owned;

          const { sites } = await call(listMySites, own.accountId);
          expect(sites.map((s: { site_id: string }) => s.site_id)).toEqual(own.sites.map((s) => s.id));
          for (const site of own.sites) {
            const listed = sites.find((s: { site_id: string }) => s.site_id === site.id);
            expect(listed.domain).toBe(site.domain);
            expect(listed.pixel.events_total.total).toBe(site.eventsTotal);
          }
          const pixel = await call(getPixelStatus, own.accountId, {});
          expect(sites.map((s: { pixel: unknown }) => s.pixel)).toEqual(
            pixel.sites.map(
              ({ site_id: _s, domain: _d, verified: _v, ...rest }: Record<string, unknown>) => rest,
            ),
          );

          const traffic = await call(getMyTraffic, own.accountId, {});
          expect(traffic).toEqual(await call(getSiteStats, own.accountId, {}));
          expect(traffic.sites.map((s: { site_id: string }) => s.site_id)).toEqual(
            own.sites.map((s) => s.id),
          );
          for (const site of own.sites) {
            const stats = traffic.sites.find((s: { site_id: string }) => s.site_id === site.id);
            expect(stats.totals.events).toBe(site.events30d);
          }
          for (const foreign of other.sites) {
            await expect(call(getMyTraffic, own.accountId, { site_id: foreign.id })).rejects.toMatchObject({
              code: 'not_found',
            });
            await expect(call(listMyFindings, own.accountId, { site_id: foreign.id })).rejects.toBeInstanceOf(
              ServiceError,
            );
          }

          const { scans } = await call(listMyScans, own.accountId, { limit: 100 });
          expect(scans.map((s: { scan_id: string }) => s.scan_id).sort()).toEqual(
            own.scans.map((s) => s.id).sort(),
          );
          for (const scan of scans) {
            const stored = own.scans.find((s) => s.id === scan.scan_id) as Owned['scans'][number];
            expect(scan.findings).toBe(stored.findings.length);
          }

          const { findings } = await call(listMyFindings, own.accountId, { limit: 500 });
          const key = (scanId: string, id: string) => `${scanId}/${id}`;
          expect(findings.map((f: { scan_id: string; id: string }) => key(f.scan_id, f.id)).sort()).toEqual(
            own.scans.flatMap((s) => s.findings.map((f) => key(s.id, f))).sort(),
          );
          for (const domain of DOMAINS) {
            const filtered = await call(listMyFindings, own.accountId, { domain, limit: 500 });
            const expected = own.scans.filter((s) => s.domain === domain).flatMap((s) => s.findings);
            expect(filtered.findings).toHaveLength(expected.length);
            expect(filtered.findings.every((f: { domain: string }) => f.domain === domain)).toBe(true);
          }
        }
      }),
      { numRuns: 15 },
    );
  });

  it('every owner tool requires an account', async () => {
    for (const op of ownerOperations as AnyOperation[]) {
      const ctx = { ...ctxFor(randomUUID()), account: undefined };
      await expect(invokeOperation(op, ctx, {})).rejects.toMatchObject({ code: 'unauthorized' });
    }
  });

  it.runIf(dialect === 'postgres')(
    'the PostgreSQL policies hide other accounts’ rows from a query without an account filter',
    async () => {
      const owned = await store({
        accounts: [
          {
            domains: ['shared-one.com', 'shared-two.com'],
            sites: Array.from({ length: 3 }, () => ({
              daily: [{ dayOffset: 1, category: 'human' as const, agent: '' as const, events: 5 }],
              pages: [],
              sources: ['beacon' as const],
              verified: true,
            })),
            scans: [
              {
                domain: 'shared-one.com',
                status: 'done',
                isPublic: false,
                findings: [{ component: 'content_depth', severity: 'warning' }],
              },
            ],
          },
          {
            domains: ['shared-one.com'],
            sites: Array.from({ length: 3 }, () => ({
              daily: [{ dayOffset: 2, category: 'ai_search' as const, agent: 'GPTBot' as const, events: 9 }],
              pages: [],
              sources: ['server' as const],
              verified: false,
            })),
            scans: [
              {
                domain: 'shared-one.com',
                status: 'done',
                isPublic: true,
                findings: [{ component: 'citation_signals', severity: 'critical' }],
              },
            ],
          },
        ],
        anonymousScans: [],
      });
      const [mine, theirs] = owned as [Owned, Owned];
      const raw = service.db.handle.raw;
      if (raw.kind !== 'postgres') throw new Error('expected PostgreSQL');
      const client: pg.PoolClient = await raw.pool.connect();
      try {
        const asOwner = async <T extends pg.QueryResultRow>(accountId: string | null, query: string) => {
          await client.query('begin');
          try {
            await client.query(`set local role ${OWNER_READER_ROLE}`);
            if (accountId) await client.query(`select set_config('app.account_id', $1, true)`, [accountId]);
            return (await client.query<T>(query)).rows;
          } finally {
            await client.query('rollback');
          }
        };
        const sites = await asOwner<{ id: string; account_id: string }>(
          mine.accountId,
          'select * from sites',
        );
        expect(sites.map((s) => s.id).sort()).toEqual(mine.sites.map((s) => s.id).sort());
        expect(sites.every((s) => s.account_id === mine.accountId)).toBe(true);
        const daily = await asOwner<{ site_id: string }>(mine.accountId, 'select * from traffic_daily');
        expect(new Set(daily.map((d) => d.site_id))).toEqual(new Set(mine.sites.map((s) => s.id)));
        const findings = await asOwner<{ scan_id: string }>(mine.accountId, 'select * from scan_findings');
        expect(findings.map((f) => f.scan_id)).toEqual(mine.scans.map((s) => s.id));
        const scans = await asOwner<{ id: string }>(theirs.accountId, 'select * from scans');
        expect(scans.map((s) => s.id)).toEqual(theirs.scans.map((s) => s.id));

        // Without the account setting nothing is visible, and other tables are not readable at all.
        expect(await asOwner(null, 'select * from sites')).toEqual([]);
        expect(await asOwner(null, 'select * from traffic_site_sources')).toEqual([]);
        await expect(asOwner(mine.accountId, 'select * from accounts')).rejects.toThrow(/permission denied/);

        // The role and the setting end with the transaction: the pooled connection reads as before.
        const after = await client.query<{ n: number; role: string }>(
          `select count(*)::int as n, current_user as role from sites`,
        );
        expect(after.rows[0]?.n).toBeGreaterThanOrEqual(mine.sites.length + theirs.sites.length);
        expect(after.rows[0]?.role).not.toBe(OWNER_READER_ROLE);
      } finally {
        client.release();
      }
    },
  );
});
