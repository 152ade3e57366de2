/**
 * The public tools over Agent2Agent (A2A 1.0), driven by the official SDK's client (`ClientFactory`
 * from `@a2a-js/sdk/client`: it reads the agent card at /.well-known/agent-card.json, picks the
 * JSON-RPC interface and sends messages), on each dialect: the card lists one skill per free public
 * MCP tool and no paid SKU, a data part runs a skill through the same operation as MCP and REST, bad
 * arguments name their field, and a message that names no skill is told how to.
 */
import { type Message, type Part, Role } from '@a2a-js/sdk';
import { ClientFactory } from '@a2a-js/sdk/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { a2aSkills } from '../../servers/adapters/a2a.ts';
import { operations } from '../../servers/registry.ts';
import { dialects } from '../helpers/databases.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

// biome-ignore lint/suspicious/noExplicitAny: answers are checked structurally
type Json = Record<string, any>;

const data = (value: unknown): Part => ({
  content: { $case: 'data', value },
  metadata: undefined,
  filename: '',
  mediaType: 'application/json',
});
const text = (value: string): Part => ({
  content: { $case: 'text', value },
  metadata: undefined,
  filename: '',
  mediaType: 'text/plain',
});
const userMessage = (parts: Part[]): Message => ({
  messageId: crypto.randomUUID(),
  contextId: '',
  taskId: '',
  role: Role.ROLE_USER,
  parts,
  metadata: undefined,
  extensions: [],
  referenceTaskIds: [],
});

describe.each(dialects)('the public tools over A2A (%s)', (dialect) => {
  let service: TestService;
  let client: Awaited<ReturnType<ClientFactory['createFromUrl']>>;

  beforeAll(async () => {
    service = await startTestService(dialect, { 'rate_limits.unauthenticated_writes.points': 1000 });
    client = await new ClientFactory().createFromUrl(service.config.site_url);
  });
  afterAll(() => service?.close());

  /** Sends the parts; the answer must be a message (this agent never makes tasks). */
  async function send(parts: Part[]): Promise<Part[]> {
    const answer = await client.sendMessage({
      tenant: '',
      message: userMessage(parts),
      configuration: undefined,
      metadata: undefined,
    });
    expect('messageId' in answer, JSON.stringify(answer)).toBe(true);
    expect((answer as Message).role).toBe(Role.ROLE_AGENT);
    return (answer as Message).parts;
  }
  const dataOf = (parts: Part[]): Json => {
    const content = parts.find((p) => p.content?.$case === 'data')?.content;
    expect(content).toBeDefined();
    return (content as { value: Json }).value;
  };

  it('publishes an agent card with one skill per free public tool, reachable over JSON-RPC', async () => {
    const res = await fetch(`${service.config.site_url}/.well-known/agent-card.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    const card = (await res.json()) as Json;
    expect(card.name).toBeTruthy();
    expect(card.supportedInterfaces).toEqual([
      expect.objectContaining({
        url: `${service.config.site_url}/a2a`,
        protocolBinding: 'JSONRPC',
        protocolVersion: '1.0',
      }),
    ]);
    const ids = (card.skills as Json[]).map((s) => s.id).sort();
    expect(ids).toEqual(
      a2aSkills(operations)
        .map((op) => op.toolName)
        .sort(),
    );
    expect(ids).toContain('lookup_card_charge');
    // Filing and following a return request, the requester's own actions included.
    expect(ids).toEqual(
      expect.arrayContaining([
        'start_return_request',
        'get_return_status',
        'cancel_return_request',
        'send_return_message',
      ]),
    );
    for (const op of operations.filter((o) => o.sku)) expect(ids).not.toContain(op.toolName);
  });

  it('runs a skill named in a data part and answers its output as data, as MCP and REST do', async () => {
    const charge = 'CHECKCARD 0312 NETFLIX.COM 866-579-7172 CA';
    const answer = dataOf(await send([data({ skill: 'lookup_card_charge', arguments: { charge } })]));
    const rest = (await (
      await fetch(`${service.config.base_url}/agent?charge=${encodeURIComponent(charge)}`)
    ).json()) as Json;
    expect(answer).toEqual(rest);
    expect(answer.matches[0].domain).toBe('netflix.com');

    // A text part holding the same JSON is read alike; a write runs once and is durable.
    const started = dataOf(
      await send([
        text(
          JSON.stringify({
            skill: 'start_return_request',
            arguments: { brand_domain: 'netflix.com', name: 'A2A Person', contact: 'a2a@example.com' },
          }),
        ),
      ]),
    );
    expect(started.request_id).toEqual(expect.any(String));
    const status = dataOf(
      await send([data({ skill: 'get_return_status', arguments: { request_id: started.request_id } })]),
    );
    expect(status.request_id).toBe(started.request_id);
    const cancelled = dataOf(
      await send([
        data({
          skill: 'cancel_return_request',
          arguments: { request_id: started.request_id, request_token: started.request_token },
        }),
      ]),
    );
    expect(cancelled.status).toBe('cancelled');
  });

  it('names the bad field, and tells a message without a skill how to name one', async () => {
    const invalid = dataOf(await send([data({ skill: 'lookup_card_charge', arguments: {} })]));
    expect(invalid.code).toBe('validation_failed');
    expect(invalid.errors.map((e: Json) => e.field)).toEqual(['charge']);

    const vague = await send([text('what is this charge on my card?')]);
    expect(dataOf(vague)).toMatchObject({
      code: 'no_skill',
      skills: expect.arrayContaining(['lookup_card_charge']),
    });
    const unknown = dataOf(await send([data({ skill: 'buy_full_scan', arguments: {} })]));
    expect(unknown.code).toBe('unknown_skill');
  });
});
