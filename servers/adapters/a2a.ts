/**
 * The public tools as an Agent2Agent (A2A 1.0) agent, for agents that speak A2A rather than MCP:
 * the agent card at `{site_url}/.well-known/agent-card.json` (A2A "Agent Discovery", the well-known
 * URI) lists one skill per free public MCP tool, and `POST {site_url}/a2a` answers A2A JSON-RPC
 * (`SendMessage`, protocol version 1.0, the `A2A-Version` header) through the official SDK
 * (`@a2a-js/sdk`: its request handler and Express transport).
 *
 * This agent has no language model: a message names the skill and its arguments as data, a
 * `data` part (or a text part holding the same JSON) `{"skill": "<skill id>", "arguments": {...}}`.
 * The skill runs through `invokeOperation` like an MCP call - the same input contract, rate limits,
 * anonymous sessions (`Authorization: Bearer`) and `x-service-key` - and the answer is a message
 * whose data part is the operation's output, or when it failed the body an MCP tool result carries
 * (`ServiceError.toolBody`). A message that names no skill is answered with how to name one and the
 * list of skills. Every answer is a message, never a task: nothing is kept between calls, so any
 * process can answer. Paid SKUs are not offered here (x402 over A2A is an extension this agent
 * does not implement); they stay on REST and MCP.
 */
import { randomUUID } from 'node:crypto';
import { type AgentCard, type Message, type Part, Role } from '@a2a-js/sdk';
import {
  AgentEvent,
  type AgentExecutor,
  DefaultRequestHandler,
  type ExecutionEventBus,
  InMemoryTaskStore,
  type RequestContext,
  type User,
} from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler } from '@a2a-js/sdk/server/express';
import express, { type Request, type RequestHandler } from 'express';
import { SERVICE_TITLE, serviceVersion } from '../config.ts';
import { failureLogLevel, ServiceError, toServiceError } from '../errors.ts';
import { jsonBody } from '../json-body.ts';
import { type AnyOperation, CallContext, invokeOperation, type RequestInfo } from '../operation.ts';
import type { Services } from '../services.ts';
import { A2A_PATH, AGENT_CARD_PATH } from './api-catalog.ts';
import { serviceSummary } from './llms-txt.ts';
import { argumentsOf } from './tool-table.ts';

const JSON_MODE = 'application/json';

/** The operations offered as skills: the free tools of the public MCP server. */
export function a2aSkills(operations: readonly AnyOperation[]): AnyOperation[] {
  return operations.filter((op) => op.mcp?.includes('public') && !op.sku && op.access === 'public');
}

/** The caller of one A2A request, as the adapters describe a request to an operation. */
class A2aCaller implements User {
  readonly request: RequestInfo;
  constructor(request: RequestInfo) {
    this.request = request;
  }
  get isAuthenticated(): boolean {
    return false;
  }
  get userName(): string {
    return '';
  }
}

export function agentCard(operations: readonly AnyOperation[], siteUrl: string): AgentCard {
  return {
    name: SERVICE_TITLE,
    description:
      `${serviceSummary} Over A2A: the free public tools, one skill each; a message names the skill and ` +
      'its arguments as a data part {"skill": "<id>", "arguments": {...}} and the answer carries the result as data.',
    supportedInterfaces: [
      { url: `${siteUrl}${A2A_PATH}`, protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: '' },
    ],
    provider: { organization: SERVICE_TITLE, url: siteUrl },
    version: serviceVersion,
    documentationUrl: `${siteUrl}/`,
    capabilities: { streaming: false, pushNotifications: false, extensions: [] },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: [JSON_MODE, 'text/plain'],
    defaultOutputModes: [JSON_MODE],
    skills: a2aSkills(operations).map((op) => ({
      id: op.toolName,
      name: op.title,
      description: `${op.description} Arguments: ${argumentsOf(op)}.`,
      tags: op.tags ?? [],
      examples: [],
      inputModes: [JSON_MODE],
      outputModes: [JSON_MODE],
      securityRequirements: [],
    })),
    signatures: [],
  };
}

const dataPart = (value: unknown): Part => ({
  content: { $case: 'data', value },
  metadata: undefined,
  filename: '',
  mediaType: JSON_MODE,
});
const textPart = (value: string): Part => ({
  content: { $case: 'text', value },
  metadata: undefined,
  filename: '',
  mediaType: 'text/plain',
});

/** `{skill, arguments}` from the first part that carries it (a data part, or JSON text). */
function invocationOf(message: Message): { skill: string; arguments: unknown } | null {
  for (const part of message.parts) {
    let value: unknown;
    if (part.content?.$case === 'data') value = part.content.value;
    else if (part.content?.$case === 'text') {
      try {
        value = JSON.parse(part.content.value);
      } catch {
        continue;
      }
    } else continue;
    if (value && typeof value === 'object' && typeof (value as { skill?: unknown }).skill === 'string') {
      const { skill, arguments: args } = value as { skill: string; arguments?: unknown };
      return { skill, arguments: args ?? {} };
    }
  }
  return null;
}

class ServiceExecutor implements AgentExecutor {
  readonly #services: Services;
  readonly #operations: readonly AnyOperation[];
  readonly #bySkill: Map<string, AnyOperation>;

  constructor(services: Services, operations: readonly AnyOperation[]) {
    this.#services = services;
    this.#operations = operations;
    this.#bySkill = new Map(a2aSkills(operations).map((op) => [op.toolName, op]));
  }

  async execute(context: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const reply = (parts: Part[]): void => {
      bus.publish(
        AgentEvent.message({
          messageId: randomUUID(),
          contextId: context.contextId,
          taskId: '',
          role: Role.ROLE_AGENT,
          parts,
          metadata: undefined,
          extensions: [],
          referenceTaskIds: [],
        }),
      );
      bus.finished();
    };
    const invocation = invocationOf(context.userMessage);
    const op = invocation ? this.#bySkill.get(invocation.skill) : undefined;
    if (!invocation || !op) {
      const skills = [...this.#bySkill.keys()];
      reply([
        textPart(
          `${invocation ? `No skill ${invocation.skill}. ` : ''}Name a skill and its arguments as a data part: ` +
            `{"skill": "<id>", "arguments": {...}}. Skills: ${skills.join(', ')} (the agent card describes each).`,
        ),
        dataPart({ code: invocation ? 'unknown_skill' : 'no_skill', skills }),
      ]);
      return;
    }
    const caller = context.context.user instanceof A2aCaller ? context.context.user.request : undefined;
    const request: RequestInfo = caller ?? { id: randomUUID(), ip: 'unknown', via: 'a2a', headers: {} };
    const ctx = new CallContext(
      {
        services: this.#services,
        operations: this.#operations,
        request,
        signal: new AbortController().signal,
      },
      () => this.#services.log.child({ req_id: request.id }),
    );
    try {
      reply([dataPart(await invokeOperation(op, ctx, invocation.arguments))]);
    } catch (err) {
      const error = toServiceError(err);
      const level = failureLogLevel(error);
      if (level) ctx.log[level]({ err: error.cause ?? err, skill: op.toolName }, 'a2a skill failed');
      reply([dataPart(error.toolBody())]);
    }
  }

  async cancelTask(): Promise<void> {
    // Every answer is a message: there is never a task to cancel.
  }
}

/** `POST {site_url}/a2a` (A2A JSON-RPC) and the agent card, for the site router. */
export function a2aRouter(services: Services, operations: readonly AnyOperation[]): RequestHandler {
  const card = agentCard(operations, services.config.site_url);
  const handler = new DefaultRequestHandler(
    card,
    new InMemoryTaskStore(),
    new ServiceExecutor(services, operations),
  );
  const router = express.Router();
  const cardHandler = agentCardHandler({ agentCardProvider: async () => card });
  router.use(AGENT_CARD_PATH, (req, res, next) => {
    res.setHeader('Access-Control-Allow-Origin', '*');
    cardHandler(req, res, next);
  });
  // The body is read here, under the service's one rule for JSON (`parseJsonBody`); the SDK's own
  // parser then finds it read. A refused body is a JSON-RPC Parse error, as over MCP.
  const body = jsonBody(services.config.http.body_limit_bytes);
  router.use(A2A_PATH, (req, res, next) => {
    body(req, res, (err?: unknown) => {
      if (!(err instanceof ServiceError) || err.code !== 'malformed_json') return next(err);
      res
        .status(400)
        .json({ jsonrpc: '2.0', id: null, error: { code: -32700, message: `Parse error: ${err.message}` } });
    });
  });
  router.use(
    A2A_PATH,
    jsonRpcHandler({
      requestHandler: handler,
      userBuilder: async (req: Request) =>
        new A2aCaller({
          id: req.id,
          ip: req.ip ?? 'unknown',
          via: 'a2a',
          headers: req.headers as Record<string, string | undefined>,
        }),
    }),
  );
  return router;
}
