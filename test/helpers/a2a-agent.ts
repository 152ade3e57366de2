/**
 * A real A2A agent (`@a2a-js/sdk` server: its request handler and Express transport) on loopback,
 * standing in for a personal agent that receives messages: it records every message it is sent
 * and answers each with a message. `respond` can fail an attempt with an HTTP status before the
 * JSON-RPC layer sees it (an agent that is down, then back).
 */
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type AgentCard, type Message, Role } from '@a2a-js/sdk';
import * as a2aServer from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import express from 'express';

export interface A2aAgent {
  /** The agent's base URL (its card at /.well-known/agent-card.json). */
  url: string;
  /** Every message the agent processed, in order (an id sent twice appears twice). */
  messages: Message[];
  /** JSON-RPC calls seen, failed ones included. */
  calls: number;
  respond: (call: number) => number | 'ok';
  close(): Promise<void>;
}

class Recorder implements a2aServer.AgentExecutor {
  readonly #messages: Message[];
  constructor(messages: Message[]) {
    this.#messages = messages;
  }
  async execute(context: a2aServer.RequestContext, bus: a2aServer.ExecutionEventBus): Promise<void> {
    this.#messages.push(context.userMessage);
    bus.publish(
      a2aServer.AgentEvent.message({
        messageId: crypto.randomUUID(),
        contextId: context.contextId,
        taskId: '',
        role: Role.ROLE_AGENT,
        parts: [
          {
            content: { $case: 'text', value: 'noted' },
            metadata: undefined,
            filename: '',
            mediaType: 'text/plain',
          },
        ],
        metadata: undefined,
        extensions: [],
        referenceTaskIds: [],
      }),
    );
    bus.finished();
  }
  async cancelTask(): Promise<void> {}
}

export async function startA2aAgent(respond: A2aAgent['respond'] = () => 'ok'): Promise<A2aAgent> {
  const app = express();
  const server: http.Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const agent: A2aAgent = {
    url,
    messages: [],
    calls: 0,
    respond,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const card = {
    name: 'Personal agent',
    description: 'Receives updates on return requests.',
    supportedInterfaces: [
      { url: `${url}/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: '' },
    ],
    version: '1.0.0',
    capabilities: { streaming: false, pushNotifications: false, extensions: [] },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['application/json', 'text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [],
    signatures: [],
  } as unknown as AgentCard;
  const handler = new a2aServer.DefaultRequestHandler(
    card,
    new a2aServer.InMemoryTaskStore(),
    new Recorder(agent.messages),
  );
  app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: async () => card }));
  app.use('/a2a', (_req, res, next) => {
    agent.calls += 1;
    const outcome = agent.respond(agent.calls);
    if (outcome === 'ok') return next();
    res.status(outcome).json({ error: 'unavailable' });
  });
  app.use('/a2a', jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  return agent;
}
