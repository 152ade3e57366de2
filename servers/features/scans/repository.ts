/**
 * Data access for scans, findings, the latest public score per domain and period snapshots.
 * Functions of `(db | trx)` (STYLE.md 10); callers own the transaction.
 */
import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../../../db/database.ts';
import { claimLeased } from '../../../db/leases.ts';
import type { Database, DomainScoreRow, ScanRow, ScansTable } from '../../../db/schema.ts';
import { DELIVERED_PAYMENT_STATUSES } from '../../payments/sign-in.ts';
import type { Finding } from './schemas.ts';

type Db = Kysely<Database>;

export async function insertScan(
  db: Db,
  row: Pick<ScansTable, 'id' | 'domain' | 'account_id' | 'is_public' | 'depth' | 'requested_at'> &
    Partial<Pick<ScansTable, 'anonymous_session_id' | 'read_token_hash' | 'profile'>>,
  /** Inserted already running under this lease (the caller runs it now), so no worker claims it. */
  running?: { owner: string; leaseUntil: string },
): Promise<void> {
  await db
    .insertInto('scans')
    .values({
      ...row,
      status: running ? 'running' : 'queued',
      progress_done: 0,
      progress_total: 0,
      attempts: running ? 1 : 0,
      ...(running
        ? { lease_owner: running.owner, lease_expires_at: running.leaseUntil, started_at: row.requested_at }
        : {}),
    })
    .execute();
}

export function findScan(db: Db, id: string): Promise<ScanRow | undefined> {
  return db.selectFrom('scans').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The scan a payment of the `scan` SKU bought (queued or joined), if it did. */
export function findPaidScan(db: Db, paymentId: string): Promise<ScanRow | undefined> {
  return db
    .selectFrom('paid_scans')
    .innerJoin('scans', 'scans.id', 'paid_scans.scan_id')
    .selectAll('scans')
    .where('paid_scans.payment_id', '=', paymentId)
    .executeTakeFirst();
}

/**
 * The wallets (lower-case) whose payment of the `scan` SKU bought this scan and was delivered: who
 * may read a private scan by signing in with x402 sign-in-with-x.
 */
export async function scanPayers(db: Db, scanId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('paid_scans')
    .innerJoin('payments', 'payments.id', 'paid_scans.payment_id')
    .select('payments.payer')
    .where('paid_scans.scan_id', '=', scanId)
    .where('payments.status', 'in', [...DELIVERED_PAYMENT_STATUSES])
    .execute();
  return [...new Set(rows.map((r) => r.payer.toLowerCase()))];
}

/** Records the scan a payment bought; a payment that buys again (its earlier scan failed) moves on to the new one. */
export async function recordPaidScan(db: Db, paymentId: string, scanId: string, now: string): Promise<void> {
  await db
    .insertInto('paid_scans')
    .values({ payment_id: paymentId, scan_id: scanId, created_at: now })
    .onConflict((oc) => oc.column('payment_id').doUpdateSet({ scan_id: scanId, created_at: now }))
    .execute();
}

/** Replaces the digest of a private scan's read token (the token made before was never handed out). */
export async function setReadTokenHash(db: Db, scanId: string, hash: string): Promise<void> {
  await db.updateTable('scans').set({ read_token_hash: hash }).where('id', '=', scanId).execute();
}

/** A scan of the domain still queued or running, so a second request joins it instead of queueing another. */
export function findActiveScan(db: Db, domain: string, isPublic: number, accountId: string | null) {
  return db
    .selectFrom('scans')
    .selectAll()
    .where('domain', '=', domain)
    .where('status', 'in', ['queued', 'running'])
    .where('is_public', '=', isPublic)
    .$if(isPublic === 0, (q) => q.where('account_id', '=', accountId))
    .orderBy('requested_at', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/** A scan of the domain this anonymous session still has queued or running. */
export function findActiveScanOfSession(db: Db, domain: string, isPublic: number, sessionId: string) {
  return db
    .selectFrom('scans')
    .selectAll()
    .where('domain', '=', domain)
    .where('status', 'in', ['queued', 'running'])
    .where('is_public', '=', isPublic)
    .where('anonymous_session_id', '=', sessionId)
    .orderBy('requested_at', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/**
 * Claims up to `limit` queued scans (or running ones whose lease expired: their worker died) for
 * `owner`. PostgreSQL skips rows other processes hold (`FOR UPDATE SKIP LOCKED`); SQLite has one writer.
 */
export function claimScans(
  db: Db,
  dialect: Dialect,
  owner: string,
  now: string,
  leaseUntil: string,
  limit: number,
): Promise<ScanRow[]> {
  // A queued scan holds no lease and a running one always does: the claim takes the queued ones
  // and the running ones whose lease expired.
  return claimLeased(db, dialect, 'scans', {
    owner,
    now,
    leaseUntil,
    limit,
    due: (eb) => eb('status', 'in', ['queued', 'running']),
    orderBy: 'requested_at',
    set: (eb) => ({ status: 'running' as const, started_at: eb.fn.coalesce('started_at', eb.val(now)) }),
  });
}

export async function recordProgress(
  db: Db,
  id: string,
  owner: string,
  progress: { phase: string; done: number; total: number; message: string },
  leaseUntil: string,
): Promise<void> {
  await db
    .updateTable('scans')
    .set({
      phase: progress.phase,
      progress_done: progress.done,
      progress_total: progress.total,
      progress_message: progress.message.slice(0, 300),
      lease_expires_at: leaseUntil,
    })
    .where('id', '=', id)
    .where('lease_owner', '=', owner)
    .execute();
}

export async function failScan(
  db: Db,
  id: string,
  owner: string | null,
  error: string,
  at: string,
): Promise<void> {
  await db
    .updateTable('scans')
    .set({ status: 'failed', error, finished_at: at, lease_owner: null, lease_expires_at: null })
    .where('id', '=', id)
    .$if(owner !== null, (q) => q.where('lease_owner', '=', owner))
    .execute();
}

export interface ScanOutcome {
  score: number;
  tier: string;
  note: string | null;
  components: string;
  recommended_next_tools: string;
  facts: string;
  scoring_version: number;
  /** JSON: `{traffic, previous}` (db/schema.ts). */
  scoring_inputs: string;
  findings: Finding[];
  adoption: Pick<
    DomainScoreRow,
    'has_llms_txt' | 'has_robots_ai_rules' | 'has_api_catalog' | 'has_mcp' | 'has_markdown'
  >;
}

/**
 * Stores a finished scan with its findings and, for a public scan, makes it the domain's latest
 * score - unless it is a quick check and a full scan is already known. Returns false when the
 * lease was lost (another worker took the scan over).
 */
export async function completeScan(
  trx: Db,
  scan: Pick<ScanRow, 'id' | 'domain' | 'is_public' | 'depth'>,
  owner: string | null,
  outcome: ScanOutcome,
  at: string,
): Promise<boolean> {
  const updated = await trx
    .updateTable('scans')
    .set({
      status: 'done',
      phase: 'done',
      finished_at: at,
      lease_owner: null,
      lease_expires_at: null,
      score: outcome.score,
      tier: outcome.tier,
      note: outcome.note,
      components: outcome.components,
      recommended_next_tools: outcome.recommended_next_tools,
      facts: outcome.facts,
      scoring_version: outcome.scoring_version,
      scoring_inputs: outcome.scoring_inputs,
      error: null,
    })
    .where('id', '=', scan.id)
    .where('status', '=', 'running')
    .$if(owner !== null, (q) => q.where('lease_owner', '=', owner))
    .executeTakeFirst();
  if (Number(updated.numUpdatedRows) !== 1) return false;
  await insertFindings(trx, scan.id, outcome.findings);
  if (scan.is_public === 1) {
    const row = {
      domain: scan.domain,
      scan_id: scan.id,
      depth: scan.depth,
      score: outcome.score,
      tier: outcome.tier,
      scanned_at: at,
      scoring_version: outcome.scoring_version,
      ...outcome.adoption,
    };
    const { domain: _domain, ...changes } = row;
    await trx
      .insertInto('domain_scores')
      .values(row)
      .onConflict((oc) => {
        const update = oc.column('domain').doUpdateSet((eb) => ({
          ...changes,
          // A full scan replacing a full one keeps it as the previous scan (movement since the last scan).
          previous_scan_id:
            scan.depth === 'full'
              ? eb.case().when('domain_scores.depth', '=', 'full').then(eb.ref('domain_scores.scan_id')).end()
              : null,
          previous_score:
            scan.depth === 'full'
              ? eb.case().when('domain_scores.depth', '=', 'full').then(eb.ref('domain_scores.score')).end()
              : null,
        }));
        // A quick check never replaces a full scan's score.
        return scan.depth === 'quick' ? update.where('domain_scores.depth', '=', 'quick') : update;
      })
      .execute();
  }
  return true;
}

async function insertFindings(trx: Db, scanId: string, findings: readonly Finding[]): Promise<void> {
  if (findings.length === 0) return;
  await trx
    .insertInto('scan_findings')
    .values(
      findings.map((f, i) => ({
        scan_id: scanId,
        seq: i + 1,
        finding_id: f.id,
        component: f.component,
        severity: f.severity,
        seen: f.seen,
        fix: f.fix,
        evidence_url: f.evidence_url,
        title: f.title,
        goal: f.goal,
        spec_url: f.spec_url,
        agent_prompt: f.agent_prompt,
        evidence: JSON.stringify(f.evidence),
      })),
    )
    .execute();
}

/** Findings as stored; rows written before scoring version 2 lack title, goal, prompt and evidence. */
export async function listFindings(db: Db, scanId: string): Promise<Finding[]> {
  const rows = await db
    .selectFrom('scan_findings')
    .select([
      'finding_id as id',
      'component',
      'severity',
      'title',
      'goal',
      'seen',
      'fix',
      'spec_url',
      'agent_prompt',
      'evidence_url',
      'evidence',
    ])
    .where('scan_id', '=', scanId)
    .orderBy('seq')
    .execute();
  return rows.map((r) => ({
    ...r,
    component: r.component as Finding['component'],
    title: r.title ?? r.id,
    goal: r.goal ?? '',
    agent_prompt: r.agent_prompt ?? '',
    evidence: r.evidence ? (JSON.parse(r.evidence) as Finding['evidence']) : [],
  }));
}

/** `scoring_inputs` of one scan (small), without reading its facts. */
export function scoringInputsOf(db: Db, scanId: string): Promise<string | null> {
  return db
    .selectFrom('scans')
    .select('scoring_inputs')
    .where('id', '=', scanId)
    .executeTakeFirst()
    .then((r) => r?.scoring_inputs ?? null);
}

/** Done scans whose score an older scoring version computed, newest first. */
export function scansToRescore(db: Db, version: number, limit: number): Promise<ScanRow[]> {
  return db
    .selectFrom('scans')
    .selectAll()
    .where('status', '=', 'done')
    .where((w) => w.or([w('scoring_version', 'is', null), w('scoring_version', '<', version)]))
    .where('facts', 'is not', null)
    .orderBy('finished_at', 'desc')
    .limit(limit)
    .execute();
}

/**
 * Replaces a stored scan's score with one computed by a newer scoring version (the facts stay),
 * and the domain's leaderboard row when this scan is the one it shows.
 */
export async function storeRescore(
  trx: Db,
  scanId: string,
  outcome: Omit<ScanOutcome, 'facts' | 'adoption'>,
): Promise<void> {
  await trx
    .updateTable('scans')
    .set({
      score: outcome.score,
      tier: outcome.tier,
      note: outcome.note,
      components: outcome.components,
      recommended_next_tools: outcome.recommended_next_tools,
      scoring_version: outcome.scoring_version,
      scoring_inputs: outcome.scoring_inputs,
    })
    .where('id', '=', scanId)
    .execute();
  await trx.deleteFrom('scan_findings').where('scan_id', '=', scanId).execute();
  await insertFindings(trx, scanId, outcome.findings);
  await trx
    .updateTable('domain_scores')
    .set({ score: outcome.score, tier: outcome.tier, scoring_version: outcome.scoring_version })
    .where('scan_id', '=', scanId)
    .execute();
  await trx
    .updateTable('domain_scores')
    .set({ previous_score: outcome.score })
    .where('previous_scan_id', '=', scanId)
    .execute();
}

export function findDomainScore(db: Db, domain: string): Promise<DomainScoreRow | undefined> {
  return db.selectFrom('domain_scores').selectAll().where('domain', '=', domain).executeTakeFirst();
}

/** The score of the domain's latest finished public full scan before `before`, for the score trend. */
export function previousPublicScore(db: Db, domain: string, before: string) {
  return db
    .selectFrom('scans')
    .select(['score', 'finished_at'])
    .where('domain', '=', domain)
    .where('status', '=', 'done')
    .where('is_public', '=', 1)
    .where('depth', '=', 'full')
    .where('finished_at', '<', before)
    .orderBy('finished_at', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/** One leaderboard page after (score, domain), walking `domain_scores_rank`. */
export function leaderboardPage(db: Db, after: { score: number; domain: string } | null, limit: number) {
  return db
    .selectFrom('domain_scores')
    .select([
      'domain',
      'scan_id',
      'score',
      'tier',
      'depth',
      'scanned_at',
      'scoring_version',
      'previous_scan_id',
      'previous_score',
    ])
    .$if(after !== null, (q) =>
      q.where((w) =>
        w.or([
          w('score', '<', (after as { score: number }).score),
          w.and([
            w('score', '=', (after as { score: number }).score),
            w('domain', '>', (after as { domain: string }).domain),
          ]),
        ]),
      ),
    )
    .orderBy('score', 'desc')
    .orderBy('domain')
    .limit(limit)
    .execute();
}

export function snapshotRanks(db: Db, period: string, domains: string[]) {
  if (domains.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('leaderboard_snapshots')
    .select(['domain', 'rank', 'score'])
    .where('period', '=', period)
    .where('domain', 'in', domains)
    .execute();
}

export function latestSnapshotPeriod(db: Db, before: string): Promise<string | undefined> {
  return db
    .selectFrom('readiness_snapshots')
    .select('period')
    .where('period', '<=', before)
    .orderBy('period', 'desc')
    .limit(1)
    .executeTakeFirst()
    .then((r) => r?.period);
}

export interface NetworkAggregate {
  domains: number;
  average_score: number | null;
  tiers: Record<string, number>;
  adoption: { llms_txt: number; robots_ai_rules: number; api_catalog: number; mcp: number; markdown: number };
}

export async function aggregateScores(db: Db): Promise<NetworkAggregate> {
  const [totals, byTier] = await Promise.all([
    db
      .selectFrom('domain_scores')
      .select((eb) => [
        eb.fn.countAll<number>().as('domains'),
        eb.fn.avg<number>('score').as('average_score'),
        eb.fn.sum<number>('has_llms_txt').as('llms_txt'),
        eb.fn.sum<number>('has_robots_ai_rules').as('robots_ai_rules'),
        eb.fn.sum<number>('has_api_catalog').as('api_catalog'),
        eb.fn.sum<number>('has_mcp').as('mcp'),
        eb.fn.sum<number>('has_markdown').as('markdown'),
      ])
      .executeTakeFirstOrThrow(),
    db
      .selectFrom('domain_scores')
      .select(['tier', (eb) => eb.fn.countAll<number>().as('n')])
      .groupBy('tier')
      .execute(),
  ]);
  const n = Number(totals.domains);
  const share = (v: unknown) => (n === 0 ? 0 : Math.round((Number(v ?? 0) / n) * 1000) / 1000);
  return {
    domains: n,
    average_score: n === 0 ? null : Math.round(Number(totals.average_score) * 10) / 10,
    tiers: Object.fromEntries(byTier.map((t) => [t.tier, Number(t.n)])),
    adoption: {
      llms_txt: share(totals.llms_txt),
      robots_ai_rules: share(totals.robots_ai_rules),
      api_catalog: share(totals.api_catalog),
      mcp: share(totals.mcp),
      markdown: share(totals.markdown),
    },
  };
}

/**
 * Takes the snapshots of a period once, whichever process gets there first: the readiness row is
 * the claim (primary key on period), the leaderboard ranks follow in the same transaction.
 */
export async function takeSnapshots(db: Db, period: string, at: string): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const aggregate = await aggregateScores(trx);
    const inserted = await trx
      .insertInto('readiness_snapshots')
      .values({
        period,
        taken_at: at,
        domains: aggregate.domains,
        tiers: JSON.stringify(aggregate.tiers),
        adoption: JSON.stringify({ ...aggregate.adoption, average_score: aggregate.average_score }),
      })
      .onConflict((oc) => oc.column('period').doNothing())
      .returning('period')
      .executeTakeFirst();
    if (!inserted) return false;
    await sql`insert into leaderboard_snapshots (period, domain, rank, score, tier)
      select ${period}, domain, row_number() over (order by score desc, domain), score, tier from domain_scores`.execute(
      trx,
    );
    return true;
  });
}

export function readinessHistory(db: Db, limit: number) {
  return db.selectFrom('readiness_snapshots').selectAll().orderBy('period', 'desc').limit(limit).execute();
}

export function scansOfAccount(db: Db, accountId: string, limit: number): Promise<ScanRow[]> {
  return db
    .selectFrom('scans')
    .selectAll()
    .where('account_id', '=', accountId)
    .orderBy('requested_at', 'desc')
    .limit(limit)
    .execute();
}
