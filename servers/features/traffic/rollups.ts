/**
 * The rollup queries behind the per-site reads (GET /pixel, GET /site-stats and the owner tools).
 * Functions of `(db | trx)` (STYLE.md 10). With an account id, every query also keeps only rows
 * of that account's sites: the owner-scoped layer (`db/scoped.ts`) reads through this form, so a
 * caller that passes the wrong site id still gets nothing of another account's.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../../../db/schema.ts';

export interface DailyRow {
  day: string;
  category: string;
  agent: string;
  operator: string | null;
  events: number | string;
}

export interface TrafficReads {
  /** `traffic_daily` rows of one site within [from, to]. */
  daily(siteId: string, from: string, to: string): Promise<DailyRow[]>;
  /** Events per category and path of one site within [from, to]. */
  pages(
    siteId: string,
    from: string,
    to: string,
  ): Promise<{ category: string; path: string; events: number }[]>;
  /** First, last and total events per site and source. */
  sources(
    siteIds: string[],
  ): Promise<
    { site_id: string; source: string; first_event_at: string; last_event_at: string; events: number }[]
  >;
  /** Events per site and source from the hour `since` (`YYYY-MM-DDTHH`) on. */
  hourlySince(
    siteIds: string[],
    since: string,
  ): Promise<{ site_id: string; source: string; events: number }[]>;
}

/** Rollup reads; with `accountId`, restricted to the sites of that account. */
export function rollupReads(db: Kysely<Database>, accountId: string | null = null): TrafficReads {
  const scoped = accountId !== null;
  const own = () =>
    db
      .selectFrom('sites')
      .select('sites.id')
      .where('sites.account_id', '=', accountId ?? '');
  return {
    daily: (siteId, from, to) =>
      db
        .selectFrom('traffic_daily')
        .select(['day', 'category', 'agent', 'operator', 'events'])
        .where('site_id', '=', siteId)
        .where('day', '>=', from)
        .where('day', '<=', to)
        .$if(scoped, (q) => q.where('site_id', 'in', own()))
        .execute(),
    pages: (siteId, from, to) =>
      db
        .selectFrom('traffic_pages_daily')
        .select(['category', 'path', (eb) => eb.fn.sum<number>('events').as('events')])
        .where('site_id', '=', siteId)
        .where('day', '>=', from)
        .where('day', '<=', to)
        .$if(scoped, (q) => q.where('site_id', 'in', own()))
        .groupBy(['category', 'path'])
        .execute(),
    sources: (siteIds) =>
      siteIds.length === 0
        ? Promise.resolve([])
        : db
            .selectFrom('traffic_site_sources')
            .select(['site_id', 'source', 'first_event_at', 'last_event_at', 'events'])
            .where('site_id', 'in', siteIds)
            .$if(scoped, (q) => q.where('site_id', 'in', own()))
            .execute(),
    hourlySince: (siteIds, since) =>
      siteIds.length === 0
        ? Promise.resolve([])
        : db
            .selectFrom('traffic_hourly')
            .select(['site_id', 'source', (eb) => eb.fn.sum<number>('events').as('events')])
            .where('site_id', 'in', siteIds)
            .where('hour', '>=', since)
            .$if(scoped, (q) => q.where('site_id', 'in', own()))
            .groupBy(['site_id', 'source'])
            .execute(),
  };
}
