/**
 * Delivery to a brand's A2A agent (issue 29 part 2): the request, a follow-up or the cancellation
 * sent as an A2A message (`brand-notice.ts` `brandA2aMessage`: messageId = the delivery id,
 * contextId = the request id) with the official client (`@a2a-js/sdk` ClientFactory, JSON-RPC or
 * HTTP+JSON as the agent's card offers) over the SSRF-safe fetcher, every call bounded in time and
 * every answer in size; then the task the agent opened, read back with `tasks/get`.
 *
 * A2A task states onto ours (`readA2aAnswer`):
 * - submitted, working: the brand has it (`delivered`); the task is followed (`brand-tasks.ts`);
 * - input-required: the brand asks something - `acknowledged`, its question in the thread; the
 *   requester's follow-up goes to the same task;
 * - completed: the brand's decision when the task carries one (a data part `{"status": "approved"}`,
 *   `denied` or `refunded`), else `acknowledged`; an answer that is a message, not a task, likewise;
 * - rejected: the brand's agent declined the request - `denied`;
 * - failed, canceled (not by us), auth-required, or a state the client cannot read: the agent did
 *   not take it - the delivery is retried and then falls back to the brand's next channel.
 * Every message and artifact of the brand goes into the thread, once (by its id).
 */
import { type Message, type Part, Role, type Task, TaskState } from '@a2a-js/sdk';
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
} from '@a2a-js/sdk/client';
import { A2AError } from '@a2a-js/sdk/errors';
import { cappedFetch } from '../../outbound/capped-fetch.ts';
import type { SafeFetch } from '../../outbound/safe-fetch.ts';
import { type Attempt, networkFailure } from '../../outbox-worker.ts';
import { JSON_MEDIA_TYPE } from './a2a-message.ts';
import { type BrandAnswer, type BrandMessage, dataAsText, decisionIn } from './brand-answer.ts';

/** Largest answer read from a brand's agent (its card included); a longer one is garbage to us. */
const MAX_ANSWER_BYTES = 1_048_576;
/** Messages of a task's history asked for on each read. */
const HISTORY_LENGTH = 50;

/** A2A state names as the protocol's JSON spells them (`TASK_STATE_INPUT_REQUIRED` -> `input-required`). */
export function taskStateName(state: TaskState | undefined): string {
  if (state === undefined || state === TaskState.UNRECOGNIZED) return 'unknown';
  const name = TaskState[state];
  return name
    ? name
        .replace(/^TASK_STATE_/, '')
        .toLowerCase()
        .replace(/_/g, '-')
    : 'unknown';
}

/** States in which a task will not change any more: nothing left to follow. */
const finished = new Set<TaskState>([
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_REJECTED,
]);

export function isFinishedTask(task: Pick<Task, 'status'>): boolean {
  return finished.has(task.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED);
}

/** Whether a task can take a message now (a message to a finished task is refused by A2A). */
export function takesMessages(stateName: string): boolean {
  return ['submitted', 'working', 'input-required'].includes(stateName);
}

/** The agent answered with a message (no task) or a task. */
export const isTask = (answer: Message | Task): answer is Task => !('messageId' in answer);

/** What the agent's answer means for the request (see the file's header). */
export function readA2aAnswer(answer: Message | Task): BrandAnswer {
  if (!isTask(answer)) {
    const message = brandMessageOf(answer, null);
    return {
      outcome: 'decided',
      decision: decisionOfParts(answer.parts) ?? 'acknowledged',
      note: "The brand's agent answered",
      messages: message ? [message] : [],
    };
  }
  const state = answer.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED;
  const name = taskStateName(state);
  const messages = taskMessages(answer);
  const said = answer.status?.message ? textOfParts(answer.status.message.parts) : null;
  const note = `The brand's agent ${name === 'completed' ? 'completed' : `set ${name} on`} its task${
    said ? `: ${said.slice(0, 200)}` : ''
  }`;
  switch (state) {
    case TaskState.TASK_STATE_SUBMITTED:
    case TaskState.TASK_STATE_WORKING:
      return { outcome: 'working', decision: null, note, messages };
    case TaskState.TASK_STATE_INPUT_REQUIRED:
      return { outcome: 'decided', decision: 'acknowledged', note, messages };
    case TaskState.TASK_STATE_COMPLETED: {
      const decision =
        decisionOfParts([
          ...(answer.status?.message?.parts ?? []),
          ...answer.artifacts.flatMap((a) => a.parts),
        ]) ?? 'acknowledged';
      return { outcome: 'decided', decision, note, messages };
    }
    case TaskState.TASK_STATE_REJECTED:
      return { outcome: 'decided', decision: 'denied', note, messages };
    default:
      return {
        outcome: 'gave_up',
        decision: null,
        note: `A2A task ${name}${said ? `: ${said.slice(0, 200)}` : ''}`,
        messages,
      };
  }
}

/** The brand's messages of a task: its agent's turns in the history, the status message, the artifacts. */
function taskMessages(task: Task): BrandMessage[] {
  const out: BrandMessage[] = [];
  const add = (message: BrandMessage | null) => {
    if (message && !out.some((m) => m.external_id === message.external_id)) out.push(message);
  };
  for (const message of task.history)
    if (message.role === Role.ROLE_AGENT) add(brandMessageOf(message, task));
  if (task.status?.message) add(brandMessageOf(task.status.message, task));
  for (const artifact of task.artifacts) {
    const text = textOfParts(artifact.parts);
    const attachments = filesOfParts(artifact.parts);
    if (!text && attachments.length === 0) continue;
    add({
      external_id: `a2a:${task.id}:artifact:${artifact.artifactId}`,
      subject: artifact.name || null,
      text,
      attachments,
    });
  }
  return out;
}

function brandMessageOf(message: Message, task: Task | null): BrandMessage | null {
  const text = textOfParts(message.parts);
  const attachments = filesOfParts(message.parts);
  if (!text && attachments.length === 0) return null;
  const id = message.messageId || `${task?.id ?? 'message'}:${taskStateName(task?.status?.state)}`;
  return { external_id: `a2a:${id}`, subject: null, text, attachments };
}

/** The text and data parts as text: what a person reads of the message. */
function textOfParts(parts: readonly Part[]): string | null {
  const texts = parts.flatMap((part) => {
    if (part.content?.$case === 'text') return [part.content.value];
    if (part.content?.$case === 'data') return [dataAsText(part.content.value)];
    return [];
  });
  const text = texts.join('\n').trim();
  return text === '' ? null : text;
}

/** File parts, by name (their content is not kept). */
function filesOfParts(parts: readonly Part[]): string[] {
  return parts.flatMap((part) => {
    if (part.content?.$case !== 'raw' && part.content?.$case !== 'url') return [];
    if (part.filename) return [part.filename];
    if (part.content.$case === 'url') return [part.content.value.split('/').pop() || part.content.value];
    return ['attachment'];
  });
}

function decisionOfParts(parts: readonly Part[]): ReturnType<typeof decisionIn> {
  for (const part of parts) {
    if (part.content?.$case !== 'data') continue;
    const decision = decisionIn(part.content.value);
    if (decision) return decision;
  }
  return null;
}

/**
 * A call that failed, classified: the address policy refusing the agent is final, anything else -
 * an HTTP error, a JSON-RPC error, a timeout, an answer that is not A2A - retryable. The reason
 * names the kind of failure, never what the agent said (it may echo the person's data).
 */
export function a2aFailure(err: unknown): Attempt {
  const e = err as Error & { name?: string; cause?: { name?: string; code?: string } };
  if (e.name === 'BlockedDestinationError' || e.cause?.name === 'BlockedDestinationError') {
    return networkFailure(err);
  }
  if (e.name === 'TimeoutError' || e.name === 'AbortError') {
    return { ok: false, retryable: true, error: 'A2A agent timed out' };
  }
  const status = /HTTP error .*Status: (\d{3})/.exec(e.message ?? '')?.[1];
  if (status) return { ok: false, retryable: true, error: `A2A HTTP ${status}` };
  if (err instanceof A2AError) return { ok: false, retryable: true, error: `A2A error: ${e.name}` };
  if (e.name === 'TypeError' && e.cause) return networkFailure(err);
  if (/^response larger than/.test(e.message ?? '')) {
    return { ok: false, retryable: true, error: 'A2A answer too large' };
  }
  return { ok: false, retryable: true, error: 'A2A agent answered something that is not A2A' };
}

/** The official A2A client of brands' agents, over the SSRF-safe fetcher. */
export class BrandA2aClient {
  readonly #fetch: SafeFetch;
  readonly #timeoutMs: number;

  constructor(fetch: SafeFetch, timeoutMs: number) {
    this.#fetch = fetch;
    this.#timeoutMs = timeoutMs;
  }

  /**
   * Sends `message` to the agent at `url` (its card's URL, or its base URL: the card is then read
   * at `/.well-known/agent-card.json`), not waiting for the task to finish (`returnImmediately`).
   */
  async send(url: string, message: Message): Promise<Message | Task> {
    const signal = AbortSignal.timeout(this.#timeoutMs);
    const client = await this.#client(url, signal);
    return client.sendMessage(
      {
        tenant: '',
        message,
        configuration: {
          acceptedOutputModes: ['text/plain', JSON_MEDIA_TYPE],
          taskPushNotificationConfig: undefined,
          historyLength: HISTORY_LENGTH,
          returnImmediately: true,
        },
        metadata: undefined,
      },
      { signal },
    );
  }

  /** The task as the agent has it now (`tasks/get`). */
  async task(url: string, taskId: string): Promise<Task> {
    const signal = AbortSignal.timeout(this.#timeoutMs);
    const client = await this.#client(url, signal);
    return client.getTask({ tenant: '', id: taskId, historyLength: HISTORY_LENGTH }, { signal });
  }

  #client(url: string, signal: AbortSignal) {
    // Every request of the client - the card, the calls - goes through the safe fetcher, bounded by
    // this call's time and in size.
    const fetchImpl = cappedFetch(this.#fetch, signal, MAX_ANSWER_BYTES);
    const factory = new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
        transports: [new JsonRpcTransportFactory({ fetchImpl }), new RestTransportFactory({ fetchImpl })],
        cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
      }),
    );
    // A URL naming the card itself is read as is; any other URL is the agent's base URL.
    const cardPath = new URL(url).pathname.endsWith('.json') ? '' : undefined;
    return factory.createFromUrl(url, cardPath);
  }
}
