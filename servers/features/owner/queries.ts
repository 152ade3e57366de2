/**
 * The owner tools' reads. Each takes an `OwnerScope` (`db/scoped.ts`) and reads only through it:
 * on PostgreSQL inside the row-level-security transaction, on SQLite through its pre-filtered
 * builders. The traffic figures come from the same functions as GET /pixel and GET /site-stats.
 */
import type { SiteRow } from '../../../db/schema.ts';
import type { OwnerScope } from '../../../db/scoped.ts';
import { notFound } from '../../errors.ts';
import type { Finding } from '../scans/schemas.ts';
import { siteInfo } from '../sites/operations.ts';
import { rollupReads } from '../traffic/rollups.ts';
import type { SiteStatsResult } from '../traffic/schemas.ts';
import { periodOf, pixelStatusOf, siteStatsOf } from '../traffic/service.ts';
import type {
  GetMyTrafficInput,
  ListMyFindingsInput,
  ListMyFindingsResult,
  ListMyScansInput,
  ListMyScansResult,
  ListMySitesResult,
} from './schemas.ts';

const sitesOf = (scope: OwnerScope) =>
  scope.sites().selectAll('sites').orderBy('sites.created_at').orderBy('sites.id').execute();

async function siteOf(scope: OwnerScope, siteId: string) {
  const site = await scope.sites().selectAll('sites').where('sites.id', '=', siteId).executeTakeFirst();
  if (!site) throw notFound(`No site ${siteId} on this account`);
  return site;
}

export async function mySites(scope: OwnerScope, now: Date): Promise<ListMySitesResult> {
  const sites = await sitesOf(scope);
  const { sites: pixel } = await pixelStatusOf(scope.reads(rollupReads), sites, now);
  // pixelStatusOf answers one entry per site, in the order given.
  return {
    sites: pixel.map(({ site_id: _id, domain: _domain, verified: _verified, ...status }, i) => ({
      ...siteInfo(sites[i] as SiteRow),
      pixel: status,
    })),
  };
}

export async function myTraffic(
  scope: OwnerScope,
  input: GetMyTrafficInput,
  now: Date,
): Promise<SiteStatsResult> {
  const period = periodOf(input, now);
  const sites = input.site_id ? [await siteOf(scope, input.site_id)] : await sitesOf(scope);
  return siteStatsOf(scope.reads(rollupReads), sites, period, input.top ?? 10);
}

/** `domain` is already normalized by the operation. */
export async function myFindings(
  scope: OwnerScope,
  input: Omit<ListMyFindingsInput, 'domain'> & { domain?: string | undefined },
): Promise<ListMyFindingsResult> {
  const domain = input.site_id ? (await siteOf(scope, input.site_id)).domain : input.domain;
  const rows = await scope
    .findings()
    .select([
      'scan_findings.finding_id as id',
      'scan_findings.component',
      'scan_findings.severity',
      'scan_findings.title',
      'scan_findings.goal',
      'scan_findings.seen',
      'scan_findings.fix',
      'scan_findings.spec_url',
      'scan_findings.agent_prompt',
      'scan_findings.evidence_url',
      'scan_findings.evidence',
      'scans.id as scan_id',
      'scans.domain',
      'scans.finished_at',
    ])
    .where('scans.status', '=', 'done')
    .$if(domain !== undefined, (q) => q.where('scans.domain', '=', domain ?? ''))
    .$if(input.component !== undefined, (q) => q.where('scan_findings.component', '=', input.component ?? ''))
    .$if(input.severity !== undefined, (q) =>
      q.where('scan_findings.severity', '=', input.severity ?? 'info'),
    )
    .orderBy('scans.finished_at', 'desc')
    .orderBy('scans.id')
    .orderBy('scan_findings.seq')
    .limit(input.limit)
    .execute();
  return {
    findings: rows.map(({ finished_at, component, title, goal, agent_prompt, evidence, ...row }) => ({
      ...row,
      component: component as Finding['component'],
      // Findings stored before scoring version 2 have no title, goal, prompt or evidence.
      title: title ?? row.id,
      goal: goal ?? '',
      agent_prompt: agent_prompt ?? '',
      evidence: evidence ? (JSON.parse(evidence) as Finding['evidence']) : [],
      // Findings are stored with the scan's completion, so a done scan always has finished_at.
      scanned_at: finished_at ?? '',
    })),
  };
}

export async function myScans(
  scope: OwnerScope,
  input: Omit<ListMyScansInput, 'domain'> & { domain?: string | undefined },
): Promise<ListMyScansResult> {
  const rows = await scope
    .scans()
    .select([
      'scans.id',
      'scans.domain',
      'scans.is_public',
      'scans.depth',
      'scans.status',
      'scans.requested_at',
      'scans.finished_at',
      'scans.score',
      'scans.tier',
      'scans.error',
    ])
    .$if(input.domain !== undefined, (q) => q.where('scans.domain', '=', input.domain ?? ''))
    .orderBy('scans.requested_at', 'desc')
    .orderBy('scans.id')
    .limit(input.limit)
    .execute();
  const ids = rows.map((r) => r.id);
  const counts =
    ids.length === 0
      ? []
      : await scope
          .findings()
          .select(['scans.id', (eb) => eb.fn.countAll<number>().as('n')])
          .where('scans.id', 'in', ids)
          .groupBy('scans.id')
          .execute();
  const findings = new Map(counts.map((c) => [c.id, Number(c.n)]));
  return {
    scans: rows.map((r) => ({
      scan_id: r.id,
      domain: r.domain,
      public: r.is_public === 1,
      depth: r.depth,
      status: r.status,
      requested_at: r.requested_at,
      finished_at: r.finished_at,
      score: r.score,
      tier: r.tier,
      error: r.error,
      findings: findings.get(r.id) ?? 0,
    })),
  };
}
