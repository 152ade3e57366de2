/**
 * Spotlight placements (issue 12): 30 days from payment, pinned on the agent hub storefront, the
 * public scoreboard (its own sponsored list, apart from the ranking) and the live catalog. At most
 * `marketplace.spotlight_slots` are shown at once: a purchase is decided holding the `spotlight`
 * lock row (`marketplace_locks`), so two purchases of the last slot never both get it. A placement
 * whose payment later fails is not shown. Every read filters by the clock, so an expired placement
 * leaves every surface at its `ends_at` with nothing to sweep.
 */
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { z } from 'zod';
import type { Database, SpotlightRow } from '../../../../db/schema.ts';
import type { Config } from '../../../config.ts';
import { ServiceError } from '../../../errors.ts';

/** SPEC: "30 days of premium placement". */
export const SPOTLIGHT_DAYS = 30;
const DAY_MS = 86_400_000;

/** Payments that stand: a placement paid by one of these is shown. */
const STANDING = ['reserved', 'authorized', 'settled', 'reconciling'] as const;

export const SpotlightPlacement = z
  .object({
    spotlight_id: z.uuid(),
    domain: z.string(),
    url: z.string(),
    blurb: z.string().nullable(),
    business_name: z.string().nullable(),
    agent_handle: z.string().nullable(),
    starts_at: z.string().describe('ISO 8601.'),
    ends_at: z.string().describe('ISO 8601: the placement is shown until then.'),
    sponsored: z.literal(true).describe('A paid placement (spotlight SKU), not a ranking.'),
  })
  .describe('A 30-day spotlight placement, paid (spotlight SKU).');
export type SpotlightPlacement = z.infer<typeof SpotlightPlacement>;

const placementOf = (row: SpotlightRow): SpotlightPlacement => ({
  spotlight_id: row.id,
  domain: row.domain,
  url: row.url,
  blurb: row.blurb,
  business_name: row.business_name,
  agent_handle: row.agent_handle,
  starts_at: row.starts_at,
  ends_at: row.ends_at,
  sponsored: true,
});

export function spotlightFull(nextOpening: string | null, slots: number): ServiceError {
  return new ServiceError('spotlight_full', {
    detail: `All ${slots} spotlight slots are taken; the next one opens at ${nextOpening ?? 'an unknown time'}`,
    extensions: { next_opening_at: nextOpening },
  });
}

export interface NewSpotlight {
  paymentId: string;
  domain: string;
  url: string;
  blurb: string | null;
  agentHandle: string | null;
  businessName: string | null;
}

export class SpotlightPlacements {
  readonly #db: Kysely<Database>;
  readonly #config: Config;
  readonly #now: () => Date;

  constructor(deps: { db: Kysely<Database>; config: Config; now: () => Date }) {
    this.#db = deps.db;
    this.#config = deps.config;
    this.#now = deps.now;
  }

  get slots(): number {
    return this.#config.marketplace.spotlight_slots;
  }

  /** Placements shown now, oldest first. */
  async active(db: Kysely<Database> = this.#db): Promise<SpotlightPlacement[]> {
    const now = this.#now().toISOString();
    const rows = await db
      .selectFrom('spotlights as s')
      .innerJoin('payments as p', 'p.id', 's.payment_id')
      .selectAll('s')
      .where('s.starts_at', '<=', now)
      .where('s.ends_at', '>', now)
      .where('p.status', 'in', STANDING)
      .orderBy('s.starts_at')
      .orderBy('s.id')
      .execute();
    return rows.map(placementOf);
  }

  /** Refuses a purchase while every slot is taken (409 with the next opening). */
  async admit(): Promise<void> {
    const active = await this.active();
    if (active.length >= this.slots) throw spotlightFull(nextOpening(active), this.slots);
  }

  /** Takes a slot for 30 days from now, or refuses (nothing written) when none is free. */
  async place(spotlight: NewSpotlight): Promise<SpotlightRow> {
    const at = this.#now();
    const now = at.toISOString();
    return this.#db.transaction().execute(async (trx) => {
      await trx
        .updateTable('marketplace_locks')
        .set({ updated_at: now })
        .where('id', '=', 'spotlight')
        .execute();
      // One placement per payment (see featured-bid's placeBid).
      const placed = await trx
        .selectFrom('spotlights')
        .selectAll()
        .where('payment_id', '=', spotlight.paymentId)
        .executeTakeFirst();
      if (placed) return placed;
      const active = await this.active(trx);
      if (active.length >= this.slots) throw spotlightFull(nextOpening(active), this.slots);
      const row: SpotlightRow = {
        id: randomUUID(),
        payment_id: spotlight.paymentId,
        domain: spotlight.domain,
        url: spotlight.url,
        blurb: spotlight.blurb,
        agent_handle: spotlight.agentHandle,
        business_name: spotlight.businessName,
        scan_id: null,
        starts_at: now,
        ends_at: new Date(at.getTime() + SPOTLIGHT_DAYS * DAY_MS).toISOString(),
        created_at: now,
      };
      await trx.insertInto('spotlights').values(row).execute();
      return row;
    });
  }

  async attachScan(id: string, scanId: string): Promise<void> {
    await this.#db.updateTable('spotlights').set({ scan_id: scanId }).where('id', '=', id).execute();
  }
}

/** The earliest end among the shown placements: when the next slot opens. */
function nextOpening(active: SpotlightPlacement[]): string | null {
  return active.map((p) => p.ends_at).sort()[0] ?? null;
}
