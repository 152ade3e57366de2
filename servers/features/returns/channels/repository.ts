/**
 * Storage of brand channel discovery: each domain's run and its lease (`brand_discoveries`), the
 * channels found (`discovered_channels`) and the channels deliveries found broken
 * (`channel_failures`). Functions of `(db | trx)` (STYLE.md 10); callers own the transaction, so
 * the delivery worker can mark a channel failed in the transaction that settles its delivery.
 */
import type { Kysely } from 'kysely';
import { timeOrderedId } from '../../../../db/ids.ts';
import { prepared } from '../../../../db/prepared.ts';
import type {
  BrandDiscoveryRow,
  ChannelFailureRow,
  Database,
  DiscoveredChannelRow,
} from '../../../../db/schema.ts';
import type { ChannelKind, DiscoveryOutcome, DiscoveryReport, FoundChannel } from './schemas.ts';

type Db = Kysely<Database>;

const discoveryOf = prepared('brand discovery', (db: Db, domain: string) =>
  db.selectFrom('brand_discoveries').selectAll().where('domain', '=', domain),
);

export function findDiscovery(db: Db, domain: string): Promise<BrandDiscoveryRow | undefined> {
  return discoveryOf.first(db, domain);
}

const channelsOf = prepared('discovered channels', (db: Db, domain: string) =>
  db.selectFrom('discovered_channels').selectAll().where('domain', '=', domain),
);

export function discoveredChannels(db: Db, domain: string): Promise<DiscoveredChannelRow[]> {
  return channelsOf.all(db, domain);
}

const failuresOf = prepared('channel failures', (db: Db, domain: string, now: string) =>
  db.selectFrom('channel_failures').selectAll().where('domain', '=', domain).where('failed_until', '>', now),
);

/** The domain's channels that failed a delivery and are still skipped at `now`. */
export function activeFailures(db: Db, domain: string, now: string): Promise<ChannelFailureRow[]> {
  return failuresOf.all(db, domain, now);
}

/**
 * Takes the domain's discovery for `owner` until `leaseUntil`, when no other process holds a lease
 * that still runs and the last run is due (`expires_at` passed or never set). One statement, so
 * two processes asking at once cannot both get it. True when taken.
 */
export async function claimDiscovery(
  db: Db,
  domain: string,
  owner: string,
  now: string,
  leaseUntil: string,
): Promise<boolean> {
  const claimed = await db
    .insertInto('brand_discoveries')
    .values({
      domain,
      outcome: null,
      report: null,
      started_at: now,
      finished_at: null,
      expires_at: null,
      refresh_reason: null,
      lease_owner: owner,
      lease_expires_at: leaseUntil,
    })
    .onConflict((oc) =>
      oc
        .column('domain')
        .doUpdateSet({ started_at: now, lease_owner: owner, lease_expires_at: leaseUntil })
        .where((eb) =>
          eb.and([
            eb.or([
              eb('brand_discoveries.lease_expires_at', 'is', null),
              eb('brand_discoveries.lease_expires_at', '<', now),
            ]),
            eb.or([
              eb('brand_discoveries.expires_at', 'is', null),
              eb('brand_discoveries.expires_at', '<=', now),
            ]),
          ]),
        ),
    )
    .returning('domain')
    .executeTakeFirst();
  return claimed !== undefined;
}

export interface FinishedDiscovery {
  domain: string;
  owner: string;
  outcome: DiscoveryOutcome;
  report: DiscoveryReport;
  channels: readonly FoundChannel[];
  at: string;
  expiresAt: string;
}

/**
 * Records a finished run and its channels, and lets the lease go; false (nothing written) when the
 * lease was lost meanwhile. A complete run replaces the domain's channels; a partial one adds what
 * it found and keeps the rest (what it could not read may still be there); an unreachable site
 * keeps every channel known (a site down for an hour has not changed its contacts).
 */
export async function saveDiscovery(trx: Db, run: FinishedDiscovery): Promise<boolean> {
  const updated = await trx
    .updateTable('brand_discoveries')
    .set({
      outcome: run.outcome,
      report: JSON.stringify(run.report),
      finished_at: run.at,
      expires_at: run.expiresAt,
      refresh_reason: null,
      lease_owner: null,
      lease_expires_at: null,
    })
    .where('domain', '=', run.domain)
    .where('lease_owner', '=', run.owner)
    .executeTakeFirst();
  if (Number(updated.numUpdatedRows) !== 1) return false;
  for (const channel of run.channels) {
    await trx
      .insertInto('discovered_channels')
      .values({
        id: timeOrderedId(),
        domain: run.domain,
        kind: channel.kind,
        address: channel.address,
        detail: JSON.stringify(channel.detail),
        source_url: channel.source_url,
        found_by: channel.found_by,
        found_at: run.at,
        seen_at: run.at,
      })
      .onConflict((oc) =>
        oc.columns(['domain', 'kind', 'address']).doUpdateSet({
          detail: JSON.stringify(channel.detail),
          source_url: channel.source_url,
          found_by: channel.found_by,
          seen_at: run.at,
        }),
      )
      .execute();
  }
  if (run.outcome === 'complete') {
    await trx
      .deleteFrom('discovered_channels')
      .where('domain', '=', run.domain)
      .where('seen_at', '<', run.at)
      .execute();
  }
  return true;
}

/** Lets the lease go after a run that could not finish, and says when to try again. */
export async function releaseDiscovery(
  db: Db,
  domain: string,
  owner: string,
  retryAt: string,
): Promise<void> {
  await db
    .updateTable('brand_discoveries')
    .set({ lease_owner: null, lease_expires_at: null, expires_at: retryAt })
    .where('domain', '=', domain)
    .where('lease_owner', '=', owner)
    .execute();
}

/**
 * Asks for the domain's next discovery now rather than at its TTL (`reason` is shown with it): a
 * channel failed, the brand's contacts may have changed. Nothing to do for a domain never
 * discovered, whose first read discovers it anyway.
 */
export async function refreshSoon(db: Db, domain: string, at: string, reason: string): Promise<void> {
  await db
    .updateTable('brand_discoveries')
    .set({ expires_at: at, refresh_reason: reason.slice(0, 300) })
    .where('domain', '=', domain)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', at)]))
    .execute();
}

export interface ChannelFailure {
  domain: string;
  kind: ChannelKind;
  /** The channel's address as ranked (the email address, webhook URL, agent card URL...). */
  address: string;
  /** Short technical reason (`SMTP 550`, `A2A task failed`); no personal data. */
  reason: string;
}

/**
 * For the delivery worker: this channel failed a delivery. Delivery skips it until `at + holdMs`
 * (whoever lists it: registration, registry or site), and the domain is discovered again at the
 * next read (`refreshSoon`). Call it in the transaction that settles the delivery.
 */
export async function markChannelFailed(
  trx: Db,
  failure: ChannelFailure,
  at: Date,
  holdMs: number,
): Promise<void> {
  const failedAt = at.toISOString();
  const until = new Date(at.getTime() + holdMs).toISOString();
  const reason = failure.reason.slice(0, 300);
  await trx
    .insertInto('channel_failures')
    .values({ ...failure, reason, failed_at: failedAt, failed_until: until })
    .onConflict((oc) =>
      oc
        .columns(['domain', 'kind', 'address'])
        .doUpdateSet({ reason, failed_at: failedAt, failed_until: until }),
    )
    .execute();
  await refreshSoon(trx, failure.domain, failedAt, `a delivery by ${failure.kind} failed: ${reason}`);
}

/** Failures whose hold ended (housekeeping). */
export async function sweepChannelFailures(db: Db, now: string): Promise<void> {
  await db.deleteFrom('channel_failures').where('failed_until', '<=', now).execute();
}
