/**
 * Following the tasks brands' A2A agents open for return requests (issue 29 part 2), from the
 * `brand_tasks` queue (`servers/outbox-worker.ts`: lease, backoff, one process per task at a time):
 * each attempt reads the task (`tasks/get`, `a2a-delivery.ts`) and records what changed in the
 * transaction that puts the row back - the brand's new messages and artifacts in the thread, a
 * question or a decision as the request's status (`brand-answer.ts`), the requester told through
 * the notifications those queue. A task still open is read again after `poll_ms`, then every tenth
 * of its age (at most `max_poll_ms`), for `follow_days`; a finished one ends the row. A task the
 * agent failed or cancelled sends the request to the brand's next channel (`channel-fallback.ts`).
 * A poll that fails (the agent down, garbage) is retried with backoff like a delivery; polls that
 * succeed forget those failures.
 */

import type { Task } from '@a2a-js/sdk';
import type { Kysely } from 'kysely';
import { timeOrderedId } from '../../../db/ids.ts';
import { newOutboxRow } from '../../../db/leases.ts';
import type { BrandTaskRow, Database } from '../../../db/schema.ts';
import type { Config } from '../../config.ts';
import {
  type OutboxAttempt,
  OutboxWorker,
  type OutboxWorkerDeps,
  type Settled,
} from '../../outbox-worker.ts';
import {
  a2aFailure,
  type BrandA2aClient,
  isFinishedTask,
  readA2aAnswer,
  taskStateName,
} from './a2a-delivery.ts';
import { type BrandAnswer, recordAnswer } from './brand-answer.ts';
import { type FallbackDeps, fallBack } from './channel-fallback.ts';
import { findReturnRequest } from './repository.ts';
import { isFinal, type ReturnStatus } from './state-machine.ts';
import { appendMessage } from './thread.ts';

type Db = Kysely<Database>;
const DAY_MS = 86_400_000;

/** A task as the agent answered it, read. */
export interface TaskReading {
  task: Pick<Task, 'id' | 'contextId' | 'status'>;
  answer: BrandAnswer;
}

/**
 * Starts following a task the agent opened for a delivery (or notes its new state when it is
 * followed already), in the transaction that records the delivery. A finished task is not followed.
 */
export async function followTask(
  trx: Db,
  settings: Config['returns']['brand_tasks'],
  opened: { request_id: string; delivery_id: string; agent_url: string; task: TaskReading['task'] },
  at: Date,
): Promise<void> {
  const state = taskStateName(opened.task.status?.state);
  const existing = await trx
    .selectFrom('brand_tasks')
    .select('id')
    .where('request_id', '=', opened.request_id)
    .where('task_id', '=', opened.task.id)
    .executeTakeFirst();
  if (existing) {
    await trx.updateTable('brand_tasks').set({ task_state: state }).where('id', '=', existing.id).execute();
    return;
  }
  if (isFinishedTask(opened.task)) return;
  const iso = at.toISOString();
  await trx
    .insertInto('brand_tasks')
    .values({
      id: timeOrderedId(),
      request_id: opened.request_id,
      delivery_id: opened.delivery_id,
      agent_url: opened.agent_url,
      task_id: opened.task.id,
      context_id: opened.task.contextId,
      task_state: state,
      follow_until: new Date(at.getTime() + settings.follow_days * DAY_MS).toISOString(),
      ...newOutboxRow(iso),
      next_attempt_at: new Date(at.getTime() + settings.poll_ms).toISOString(),
    })
    .execute();
}

/** The request's latest task that takes a message now (a follow-up goes to it), or undefined. */
export async function openTaskOf(db: Db, requestId: string): Promise<BrandTaskRow | undefined> {
  const tasks = await db
    .selectFrom('brand_tasks')
    .selectAll()
    .where('request_id', '=', requestId)
    .orderBy('created_at', 'desc')
    .execute();
  return tasks.find((t) => ['submitted', 'working', 'input-required'].includes(t.task_state));
}

export interface BrandTaskDeps extends OutboxWorkerDeps, FallbackDeps {
  config: Config;
  a2a: BrandA2aClient;
  /** Wakes the workers a recorded change may have queued for (notifications, a fallback delivery). */
  changed: () => void;
}

export class BrandTaskWorker extends OutboxWorker<'brand_tasks', TaskReading> {
  private readonly deps: BrandTaskDeps;

  constructor(deps: BrandTaskDeps) {
    // Polls like deliveries are retried (`returns.delivery.*`), between reads of `brand_tasks`.
    super(deps, { name: 'brand task', table: 'brand_tasks', settings: deps.config.returns.delivery });
    this.deps = deps;
  }

  protected override afterSettle(): void {
    this.deps.changed();
  }

  protected async attempt(row: BrandTaskRow): Promise<OutboxAttempt<TaskReading>> {
    const now = this.deps.now();
    // A request that is gone or final (withdrawn, closed) has nothing left to learn from the task.
    const request = await findReturnRequest(this.deps.db, row.request_id);
    if (!request || isFinal(request.status as ReturnStatus)) return { ok: true };
    if (row.follow_until < now.toISOString()) {
      return { ok: false, retryable: false, error: 'the task did not finish while it was followed' };
    }
    let task: Task;
    try {
      task = await this.deps.a2a.task(row.agent_url, row.task_id);
    } catch (err) {
      return a2aFailure(err);
    }
    const reading = { task, answer: readA2aAnswer(task) };
    if (isFinishedTask(task)) return { ok: true, result: reading };
    return {
      ok: false,
      deferMs: this.#pollDelay(row, now),
      reason: `task ${taskStateName(task.status?.state)}`,
      result: reading,
      resetAttempts: true,
    };
  }

  /** `poll_ms` at first, then a tenth of the task's age, at most `max_poll_ms`. */
  #pollDelay(row: BrandTaskRow, now: Date): number {
    const { poll_ms, max_poll_ms } = this.deps.config.returns.brand_tasks;
    const age = now.getTime() - Date.parse(row.created_at);
    return Math.min(max_poll_ms, Math.max(poll_ms, Math.round(age / 10)));
  }

  protected override async deferred(
    trx: Db,
    row: BrandTaskRow,
    reading: TaskReading,
    at: string,
  ): Promise<void> {
    await this.#record(trx, row, reading, at);
  }

  protected override async settled(trx: Db, row: BrandTaskRow, outcome: Settled<TaskReading>): Promise<void> {
    if (outcome.result) {
      await this.#record(trx, row, outcome.result, outcome.at);
      return;
    }
    if (outcome.state !== 'failed') return;
    // The agent stopped answering about its task: said in the thread, for the requester's agent.
    await appendMessage(trx, {
      request_id: row.request_id,
      direction: 'from_service',
      channel: 'a2a',
      sender: 'service',
      sender_verified: true,
      subject: "The brand's agent stopped answering about this request",
      text: `Following its task stopped: ${outcome.error}.`,
      attachments: [],
      external_id: `task-lost:${row.id}`,
      at: outcome.at,
    });
  }

  async #record(trx: Db, row: BrandTaskRow, reading: TaskReading, at: string): Promise<void> {
    const { dialect } = this.deps;
    const state = taskStateName(reading.task.status?.state);
    await trx.updateTable('brand_tasks').set({ task_state: state }).where('id', '=', row.id).execute();
    const { after } = await recordAnswer(
      trx,
      dialect,
      row.request_id,
      'a2a',
      row.agent_url,
      reading.answer,
      at,
    );
    if (reading.answer.outcome !== 'gave_up') return;
    const request = await findReturnRequest(trx, row.request_id);
    if (!request) return;
    await fallBack(
      trx,
      this.deps,
      request,
      { channel: 'a2a', target: row.agent_url, reason: reading.answer.note, key: row.id },
      new Date(after),
    );
  }
}
