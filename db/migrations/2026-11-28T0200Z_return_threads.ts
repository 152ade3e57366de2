/**
 * Frozen: never edit a migration that has shipped; add a new one.
 * The requester's side of a return request (issue 29 parts 4-6): the request's thread of messages,
 * the requester's capability (`request_token_hash`) and notification channel with its signing
 * secret, what each brand delivery carries (`kind`, `message_id`), and the outbox of notifications
 * to the requester's agent.
 */
import type { Kysely } from 'kysely';
import { columnTypes } from '../column-types.ts';

// biome-ignore lint/suspicious/noExplicitAny: migrations are typed loosely (kysely recommendation)
export async function up(db: Kysely<any>): Promise<void> {
  const { ts, json, uuid } = columnTypes(db);

  await db.schema
    .createTable('return_messages')
    .addColumn('id', uuid, (c) => c.primaryKey())
    .addColumn('request_id', uuid, (c) => c.notNull().references('return_requests.id').onDelete('cascade'))
    .addColumn('direction', 'text', (c) => c.notNull())
    .addColumn('channel', 'text')
    .addColumn('sender', 'text')
    .addColumn('sender_verified', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('subject', 'text')
    .addColumn('excerpt', 'text')
    .addColumn('attachments', json, (c) => c.notNull())
    .addColumn('external_id', 'text')
    .addColumn('at', ts, (c) => c.notNull())
    .addUniqueConstraint('return_messages_request_external', ['request_id', 'external_id'])
    .execute();
  await db.schema
    .createIndex('return_messages_request_at')
    .on('return_messages')
    .columns(['request_id', 'at'])
    .execute();

  await db.schema.alterTable('return_requests').addColumn('request_token_hash', 'text').execute();
  await db.schema.alterTable('return_requests').addColumn('notify_channel', 'text').execute();
  await db.schema.alterTable('return_requests').addColumn('callback_secret', 'text').execute();

  await db.schema
    .alterTable('deliveries')
    .addColumn('kind', 'text', (c) => c.notNull().defaultTo('request'))
    .execute();
  await db.schema
    .alterTable('deliveries')
    .addColumn('message_id', uuid, (c) => c.references('return_messages.id').onDelete('set null'))
    .execute();

  // The outbox columns of `deliveries` (migration 2026-11-21T1200Z_returns), in the same types.
  const queue: [string, typeof ts | 'text' | 'integer', 'not null' | 'default 0' | 'null'][] = [
    ['state', 'text', 'not null'],
    ['attempts', 'integer', 'default 0'],
    ['next_attempt_at', ts, 'not null'],
    ['lease_owner', 'text', 'null'],
    ['lease_expires_at', ts, 'null'],
    ['last_error', 'text', 'null'],
    ['created_at', ts, 'not null'],
    ['delivered_at', ts, 'null'],
  ];
  let notifications = db.schema
    .createTable('return_notifications')
    .addColumn('id', uuid, (c) => c.primaryKey())
    .addColumn('request_id', uuid, (c) => c.notNull().references('return_requests.id').onDelete('cascade'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('channel', 'text', (c) => c.notNull())
    .addColumn('data', json, (c) => c.notNull());
  for (const [name, type, constraint] of queue) {
    notifications = notifications.addColumn(name, type, (c) =>
      constraint === 'not null' ? c.notNull() : constraint === 'default 0' ? c.notNull().defaultTo(0) : c,
    );
  }
  await notifications.execute();
  await db.schema
    .createIndex('return_notifications_due')
    .on('return_notifications')
    .columns(['state', 'next_attempt_at'])
    .execute();
  await db.schema
    .createIndex('return_notifications_request')
    .on('return_notifications')
    .column('request_id')
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('return_notifications').execute();
  await db.schema.alterTable('deliveries').dropColumn('message_id').execute();
  await db.schema.alterTable('deliveries').dropColumn('kind').execute();
  for (const column of ['callback_secret', 'notify_channel', 'request_token_hash']) {
    await db.schema.alterTable('return_requests').dropColumn(column).execute();
  }
  await db.schema.dropTable('return_messages').execute();
}
