/** Data access for souls: functions of `(db | trx)` (STYLE.md 10). */
import { type Kysely, sql } from 'kysely';
import type {
  Database,
  SoulKeyRow,
  SoulMemoryRow,
  SoulRegistrationRow,
  SoulRow,
} from '../../../db/schema.ts';
import { type Position, rowsAfter } from '../../pagination.ts';

type Db = Kysely<Database>;

export function findSoul(db: Db, agentId: string): Promise<SoulRow | undefined> {
  return db.selectFrom('souls').selectAll().where('agent_id', '=', agentId).executeTakeFirst();
}

export function keysOf(db: Db, agentId: string): Promise<SoulKeyRow[]> {
  return db
    .selectFrom('soul_keys')
    .selectAll()
    .where('agent_id', '=', agentId)
    .orderBy('valid_from', 'desc')
    .execute();
}

export function currentKeyOf(db: Db, agentId: string): Promise<SoulKeyRow | undefined> {
  return db
    .selectFrom('soul_keys')
    .selectAll()
    .where('agent_id', '=', agentId)
    .where('valid_until', 'is', null)
    .executeTakeFirst();
}

/** Newest first over `(created_at, id)`; `q` (already a LIKE pattern) matches the handle or the name. */
export function soulPage(
  db: Db,
  q: string | null,
  after: Position | null,
  limit: number,
): Promise<SoulRow[]> {
  return db
    .selectFrom('souls')
    .selectAll()
    .$if(q !== null, (query) =>
      query.where(sql<boolean>`(souls.handle like ${q} escape '\\' or souls.name_key like ${q} escape '\\')`),
    )
    .$if(after !== null, (query) => query.where(rowsAfter('souls', after as Position)))
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

export function memoryPage(
  db: Db,
  agentId: string,
  layer: string | undefined,
  afterSequence: number,
  limit: number,
): Promise<SoulMemoryRow[]> {
  return db
    .selectFrom('soul_memories')
    .selectAll()
    .where('agent_id', '=', agentId)
    .where('sequence', '>', afterSequence)
    .$if(layer !== undefined, (query) => query.where('layer', '=', layer as 'episodic'))
    .orderBy('sequence', 'asc')
    .limit(limit)
    .execute();
}

export function headOf(
  db: Db,
  agentId: string,
): Promise<Pick<SoulMemoryRow, 'sequence' | 'digest'> | undefined> {
  return db
    .selectFrom('soul_memories')
    .select(['sequence', 'digest'])
    .where('agent_id', '=', agentId)
    .orderBy('sequence', 'desc')
    .limit(1)
    .executeTakeFirst();
}

export async function memoryCounts(db: Db, agentId: string): Promise<{ episodic: number; semantic: number }> {
  const rows = await db
    .selectFrom('soul_memories')
    .select(['layer', (eb) => eb.fn.countAll<number>().as('n')])
    .where('agent_id', '=', agentId)
    .groupBy('layer')
    .execute();
  const counts = { episodic: 0, semantic: 0 };
  for (const row of rows) counts[row.layer] = Number(row.n);
  return counts;
}

export async function validationsOf(
  db: Db,
  agentId: string,
  limit: number,
): Promise<{ count: number; latest: SoulMemoryRow[] }> {
  const [count, latest] = await Promise.all([
    db
      .selectFrom('soul_memories')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('agent_id', '=', agentId)
      .where('kind', '=', 'validation')
      .executeTakeFirstOrThrow(),
    db
      .selectFrom('soul_memories')
      .selectAll()
      .where('agent_id', '=', agentId)
      .where('kind', '=', 'validation')
      .orderBy('sequence', 'desc')
      .limit(limit)
      .execute(),
  ]);
  return { count: Number(count.n), latest };
}

export function registrationsOf(db: Db, agentId: string): Promise<SoulRegistrationRow[]> {
  return db
    .selectFrom('soul_registrations')
    .selectAll()
    .where('agent_id', '=', agentId)
    .orderBy('created_at', 'asc')
    .execute();
}
