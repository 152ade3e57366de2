/**
 * What the service makes of a brand's answer on each delivery channel (issue 29 part 2), without a
 * network: A2A answers read into states, messages and decisions (`a2a-delivery.ts`), an MCP tool's
 * arguments from its input schema (`mcp-delivery.ts`), and the kit read off the channel ranking
 * with what a registered agent publishes (`kit.ts`, `channels/ranking.ts`).
 */
import { type Message, Role, type Task, TaskState } from '@a2a-js/sdk';
import { describe, expect, it } from 'vitest';
import type { BrandAgentRow } from '../../db/schema.ts';
import { loadConfig } from '../../servers/config.ts';
import { readA2aAnswer, taskStateName } from '../../servers/features/returns/a2a-delivery.ts';
import { decisionIn } from '../../servers/features/returns/brand-answer.ts';
import { exampleNotice } from '../../servers/features/returns/brand-guide.ts';
import { buildUpdateNotice } from '../../servers/features/returns/brand-notice.ts';
import { rankChannels } from '../../servers/features/returns/channels/ranking.ts';
import { knownContactChannels } from '../../servers/features/returns/kit.ts';
import { toolArguments } from '../../servers/features/returns/mcp-delivery.ts';

const text = (value: string) => ({
  content: { $case: 'text' as const, value },
  metadata: undefined,
  filename: '',
  mediaType: 'text/plain',
});
const data = (value: unknown) => ({
  content: { $case: 'data' as const, value },
  metadata: undefined,
  filename: '',
  mediaType: 'application/json',
});
const message = (id: string, role: Role, parts: Message['parts']): Message => ({
  messageId: id,
  contextId: 'ctx',
  taskId: 't1',
  role,
  parts,
  metadata: undefined,
  extensions: [],
  referenceTaskIds: [],
});
const task = (state: TaskState, extra: Partial<Task> = {}): Task => ({
  id: 't1',
  contextId: 'ctx',
  status: { state, message: undefined, timestamp: undefined },
  artifacts: [],
  history: [message('ours', Role.ROLE_USER, [text('the request')])],
  metadata: undefined,
  ...extra,
});

describe('readA2aAnswer', () => {
  it('maps every A2A task state onto what it does to the request', () => {
    const outcomes = [
      TaskState.TASK_STATE_SUBMITTED,
      TaskState.TASK_STATE_WORKING,
      TaskState.TASK_STATE_INPUT_REQUIRED,
      TaskState.TASK_STATE_COMPLETED,
      TaskState.TASK_STATE_REJECTED,
      TaskState.TASK_STATE_FAILED,
      TaskState.TASK_STATE_CANCELED,
      TaskState.TASK_STATE_AUTH_REQUIRED,
      TaskState.TASK_STATE_UNSPECIFIED,
    ].map((state) => {
      const answer = readA2aAnswer(task(state));
      return [taskStateName(state), answer.outcome, answer.decision];
    });
    expect(outcomes).toEqual([
      ['submitted', 'working', null],
      ['working', 'working', null],
      ['input-required', 'decided', 'acknowledged'],
      ['completed', 'decided', 'acknowledged'],
      ['rejected', 'decided', 'denied'],
      ['failed', 'gave_up', null],
      ['canceled', 'gave_up', null],
      ['auth-required', 'gave_up', null],
      ['unspecified', 'gave_up', null],
    ]);
  });

  it("reads the decision a completed task carries, and the brand's messages and artifacts, not ours", () => {
    const answer = readA2aAnswer(
      task(TaskState.TASK_STATE_COMPLETED, {
        status: {
          state: TaskState.TASK_STATE_COMPLETED,
          message: message('m2', Role.ROLE_AGENT, [text('Refund sent.')]),
          timestamp: undefined,
        },
        history: [
          message('ours', Role.ROLE_USER, [text('the request')]),
          message('m1', Role.ROLE_AGENT, [text('Looking into it.')]),
          message('m2', Role.ROLE_AGENT, [text('Refund sent.')]),
        ],
        artifacts: [
          {
            artifactId: 'a1',
            name: 'Receipt',
            description: '',
            parts: [
              data({ status: 'Refunded', amount: 10 }),
              {
                content: { $case: 'url', value: 'https://brand.example/r/receipt.pdf' },
                metadata: undefined,
                filename: '',
                mediaType: 'application/pdf',
              },
            ],
            metadata: undefined,
            extensions: [],
          },
        ],
      }),
    );
    expect(answer).toMatchObject({ outcome: 'decided', decision: 'refunded' });
    expect(answer.messages).toEqual([
      { external_id: 'a2a:m1', subject: null, text: 'Looking into it.', attachments: [] },
      { external_id: 'a2a:m2', subject: null, text: 'Refund sent.', attachments: [] },
      {
        external_id: 'a2a:t1:artifact:a1',
        subject: 'Receipt',
        text: '{"status":"Refunded","amount":10}',
        attachments: ['receipt.pdf'],
      },
    ]);
  });

  it('takes an answer that is a message as an acknowledgement, or the decision in its data', () => {
    expect(readA2aAnswer(message('x', Role.ROLE_AGENT, [text('Noted.')]))).toMatchObject({
      outcome: 'decided',
      decision: 'acknowledged',
      messages: [{ external_id: 'a2a:x', text: 'Noted.' }],
    });
    expect(
      readA2aAnswer(message('y', Role.ROLE_AGENT, [data({ decision: 'denied', reason: 'final sale' })])),
    ).toMatchObject({ decision: 'denied' });
  });

  it('names only decisions a brand can make', () => {
    expect(decisionIn({ status: 'approved' })).toBe('approved');
    expect(decisionIn({ status: 'cancelled' })).toBeNull();
    expect(decisionIn({ status: 'closed' })).toBeNull();
    expect(decisionIn(['approved'])).toBeNull();
    expect(decisionIn('approved')).toBeNull();
  });
});

describe('toolArguments', () => {
  const config = loadConfig({ env: {} });
  const notice = exampleNotice(config);

  it("fills the tool's inputs from the event by their names, each as the schema types it", () => {
    const tool = {
      name: 'open_return_case',
      inputSchema: {
        properties: {
          orderId: { type: 'string' },
          reason: { type: 'string' },
          customer_email: { type: 'string' },
          amount: { type: 'string' },
          last4: { type: 'integer' },
          event: { type: 'object' },
          colour: { type: 'string' },
        },
        required: ['orderId', 'reason'],
      },
    };
    const filled = toolArguments(tool, notice, 'the text');
    expect(filled).toEqual({
      ok: true,
      arguments: {
        orderId: 'A-1001',
        reason: 'the text',
        customer_email: 'jane@example.com',
        amount: '42.5',
        last4: 4242,
        event: notice,
      },
    });
  });

  it('names the required inputs the event cannot fill, and gives a tool without inputs the event', () => {
    const update = buildUpdateNotice(
      { id: notice.data.request_id, brand_domain: notice.data.brand_domain },
      'd2',
      notice.data.status_url,
      new Date(),
      { reason: null },
    );
    const tool = {
      name: 'refund',
      inputSchema: {
        properties: { order_number: { type: 'string' }, sku: { type: 'string' } },
        required: ['sku'],
      },
    };
    expect(toolArguments(tool, update, 't')).toEqual({ ok: false, missing: ['sku'] });
    expect(toolArguments({ name: 'support' }, notice, 't')).toEqual({
      ok: true,
      arguments: { event: notice, message: 't' },
    });
  });

  it('gives a follow-up or a cancellation its type and text, not the order facts only the request carries', () => {
    const cancel = buildUpdateNotice(
      { id: notice.data.request_id, brand_domain: notice.data.brand_domain },
      'd3',
      notice.data.status_url,
      new Date(),
      { reason: 'changed my mind' },
    );
    const tool = {
      name: 'open_return_case',
      inputSchema: {
        properties: {
          order_number: { type: 'string' },
          type: { type: 'string' },
          message: { type: 'string' },
        },
      },
    };
    expect(toolArguments(tool, cancel, 'The customer withdraws')).toEqual({
      ok: true,
      arguments: { type: 'return_request.cancelled', message: 'The customer withdraws' },
    });
  });
});

describe('the kit, from the ranking', () => {
  const at = '2026-11-28T00:00:00.000Z';
  const agent: BrandAgentRow = {
    id: 'a',
    account_id: 'acc',
    domain: 'brand.com',
    name: 'Brand',
    endpoint: 'https://agent.brand.com/a2a',
    protocols: JSON.stringify(['a2a', 'email']),
    support_contact: JSON.stringify({
      email: 'help@brand.com',
      url: 'https://brand.com/help',
      phone: '+18005550100',
    }),
    return_contact: JSON.stringify({ email: 'returns@brand.com' }),
    return_policy: JSON.stringify({ url: 'https://brand.com/returns' }),
    created_at: at,
    updated_at: at,
  };

  it('lists the registered agent and what it publishes, never its private return address, and delivers on what it registered', () => {
    const ranked = rankChannels({
      registered: {
        brand_domain: 'brand.com',
        webhook_url: null,
        webhook_secret: null,
        email: 'returns@brand.com',
        created_at: at,
        updated_at: at,
      },
      agent,
      brand: undefined,
      found: [],
      failures: [],
    });
    expect(ranked.map((c) => [c.kind, c.address, c.private, c.delivery_rank])).toEqual([
      ['a2a', 'https://agent.brand.com/a2a', false, 1],
      ['email', 'returns@brand.com', true, 2],
      ['email', 'help@brand.com', false, null],
      ['phone', '+18005550100', false, null],
      ['support_page', 'https://brand.com/help', false, null],
      ['return_policy', 'https://brand.com/returns', false, null],
    ]);
    expect(knownContactChannels(ranked)).toEqual([
      { kind: 'agent_a2a', address: 'https://agent.brand.com/a2a', source: 'brand_agent' },
      { kind: 'email', address: 'help@brand.com', source: 'brand_agent' },
      { kind: 'phone', address: '+18005550100', source: 'brand_agent' },
      { kind: 'support_page', address: 'https://brand.com/help', source: 'brand_agent' },
      { kind: 'return_policy', address: 'https://brand.com/returns', source: 'brand_agent' },
    ]);
  });

  it('shows a return address the brand also publishes, and still delivers there', () => {
    const ranked = rankChannels({
      registered: {
        brand_domain: 'brand.com',
        webhook_url: null,
        webhook_secret: null,
        email: 'help@brand.com',
        created_at: at,
        updated_at: at,
      },
      agent: { ...agent, protocols: JSON.stringify(['email']) },
      brand: { contact: {}, returns: { portal_url: 'https://brand.com/portal' } },
      found: [],
      failures: [],
    });
    expect(ranked[0]).toMatchObject({
      kind: 'email',
      address: 'help@brand.com',
      private: false,
      delivery_rank: 1,
    });
    expect(knownContactChannels(ranked)).toContainEqual({
      kind: 'form',
      address: 'https://brand.com/portal',
      source: 'registry',
    });
  });
});
