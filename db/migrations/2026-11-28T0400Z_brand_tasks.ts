/**
 * Frozen: never edit a migration that has shipped; add a new one.
 * Delivery on every channel a brand has (issue 29 part 2): the A2A tasks brands' agents opened for
 * return requests, followed until they finish (`brand_tasks`, a leased queue like `deliveries`:
 * one row per task, polled by one process at a time, its last seen state kept so a poll after a
 * restart knows where it was).
 */
import type { Kysely } from 'kysely';
import { columnTypes } from '../column-types.ts';

// biome-ignore lint/suspicious/noExplicitAny: migrations are typed loosely (kysely recommendation)
export async function up(db: Kysely<any>): Promise<void> {
  const { ts, uuid } = columnTypes(db);
  await db.schema
    .createTable('brand_tasks')
    .addColumn('id', uuid, (c) => c.primaryKey())
    .addColumn('request_id', uuid, (c) => c.notNull().references('return_requests.id').onDelete('cascade'))
    .addColumn('delivery_id', uuid, (c) => c.notNull())
    .addColumn('agent_url', 'text', (c) => c.notNull())
    .addColumn('task_id', 'text', (c) => c.notNull())
    .addColumn('context_id', 'text', (c) => c.notNull())
    .addColumn('task_state', 'text', (c) => c.notNull())
    .addColumn('follow_until', ts, (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', ts, (c) => c.notNull())
    .addColumn('lease_owner', 'text')
    .addColumn('lease_expires_at', ts)
    .addColumn('last_error', 'text')
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('delivered_at', ts)
    .addUniqueConstraint('brand_tasks_request_task', ['request_id', 'task_id'])
    .execute();
  await db.schema
    .createIndex('brand_tasks_due')
    .on('brand_tasks')
    .columns(['state', 'next_attempt_at'])
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('brand_tasks').execute();
}
