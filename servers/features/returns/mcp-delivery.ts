/**
 * Delivery to a brand agent registered with protocol `mcp` (issue 29 part 2): the service connects
 * to its Streamable HTTP endpoint with the official MCP client (`@modelcontextprotocol/client`, over
 * the SSRF-safe fetcher, bounded in time and size), lists its tools, picks the one for returns,
 * refunds or support (`channels/mcp.ts` `supportTool`, the rule discovery uses) and calls it with
 * the event as its input schema asks for it (`toolArguments`). A tool result is the brand's system
 * taking the request (`delivered`); its text goes into the thread, and a structured result naming
 * a decision (`{"status": "approved"}`) moves the request. A tool error is retried, then the next
 * channel is tried; a server with no such tool, or a tool that needs what the event does not
 * have, is not retried.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { serviceName, serviceVersion } from '../../config.ts';
import { cappedFetch } from '../../outbound/capped-fetch.ts';
import type { SafeFetch } from '../../outbound/safe-fetch.ts';
import { type Attempt, networkFailure } from '../../outbox-worker.ts';
import { type BrandAnswer, dataAsText, decisionIn } from './brand-answer.ts';
import { RETURN_REQUEST_EVENT, type RequestUpdateNotice, type ReturnRequestNotice } from './brand-notice.ts';
import { type ListedTool, supportTool } from './channels/mcp.ts';

/** Largest answer read from a brand's MCP server. */
const MAX_ANSWER_BYTES = 1_048_576;
const MAX_TOOL_PAGES = 3;

interface ToolWithSchema extends ListedTool {
  inputSchema?: { properties?: Record<string, { type?: string | string[] }>; required?: string[] };
}

/** What the tool is given for each of its input names we recognise (compared without `_`, `-`, case). */
function valuesOf(notice: ReturnRequestNotice | RequestUpdateNotice, text: string): Map<string, unknown> {
  const { data } = notice;
  const created = notice.type === RETURN_REQUEST_EVENT ? (notice as ReturnRequestNotice).data : null;
  const contact = created?.customer.contact;
  const entries: [string[], unknown][] = [
    [['event', 'notice', 'payload', 'returnrequest', 'request'], notice],
    [['requestid', 'externalid', 'reference', 'referenceid', 'caseid', 'ticketid'], data.request_id],
    [['deliveryid', 'idempotencykey'], data.delivery_id],
    [['type', 'eventtype', 'kind'], notice.type],
    [['message', 'reason', 'text', 'description', 'details', 'body', 'note', 'comment'], text],
    [
      ['subject', 'title'],
      created ? `Return request ${data.request_id}` : `Re: return request ${data.request_id}`,
    ],
    [['statusurl', 'callbackurl'], data.status_url],
    [['branddomain', 'domain'], data.brand_domain],
    [['ordernumber', 'orderid', 'order', 'orderref'], created?.order.number],
    [['amount', 'orderamount', 'total'], created?.order.amount],
    [['currency'], created?.order.currency],
    [['purchasedate', 'orderdate', 'date'], created?.order.date],
    [['cardlast4', 'last4'], created?.order.card_last4],
    [['customername', 'name', 'fullname'], created?.customer.name],
    [['contact', 'customercontact'], contact],
    [
      ['email', 'customeremail', 'contactemail'],
      created?.customer.contact_kind === 'email' ? contact : undefined,
    ],
    [
      ['phone', 'customerphone', 'contactphone'],
      created?.customer.contact_kind === 'phone' ? contact : undefined,
    ],
  ];
  const out = new Map<string, unknown>();
  for (const [names, value] of entries) for (const name of names) out.set(name, value);
  return out;
}

/**
 * The tool's arguments from the event, by the names its input schema declares (each value as the
 * schema types it), or the required names the event cannot fill. A tool that declares no inputs is
 * given the event and its text (`event`, `message`).
 */
export function toolArguments(
  tool: ToolWithSchema,
  notice: ReturnRequestNotice | RequestUpdateNotice,
  text: string,
): { ok: true; arguments: Record<string, unknown> } | { ok: false; missing: string[] } {
  const properties = tool.inputSchema?.properties ?? {};
  const names = Object.keys(properties);
  if (names.length === 0) return { ok: true, arguments: { event: notice, message: text } };
  const values = valuesOf(notice, text);
  const args: Record<string, unknown> = {};
  for (const name of names) {
    const value = values.get(name.toLowerCase().replace(/[^a-z0-9]/g, ''));
    if (value === undefined || value === null) continue;
    const declared = properties[name]?.type;
    const types = Array.isArray(declared) ? declared : declared ? [declared] : [];
    if (typeof value === 'object') {
      if (types.length === 0 || types.includes('object')) args[name] = value;
      else if (types.includes('string')) args[name] = JSON.stringify(value);
    } else if (types.includes('string') && typeof value !== 'string') args[name] = String(value);
    else if ((types.includes('number') || types.includes('integer')) && typeof value === 'string') {
      if (Number.isFinite(Number(value))) args[name] = Number(value);
    } else args[name] = value;
  }
  const missing = (tool.inputSchema?.required ?? []).filter((name) => !(name in args));
  return missing.length ? { ok: false, missing } : { ok: true, arguments: args };
}

export type McpDelivery = { ok: true; tool: string; answer: BrandAnswer } | Extract<Attempt, { ok: false }>;

/** The MCP client of registered brand agents, over the SSRF-safe fetcher. */
export class BrandMcpClient {
  readonly #fetch: SafeFetch;
  readonly #timeoutMs: number;

  constructor(fetch: SafeFetch, timeoutMs: number) {
    this.#fetch = fetch;
    this.#timeoutMs = timeoutMs;
  }

  /** Calls the server's tool for returns at `url` with the event; `answerId` names its reply in the thread. */
  async deliver(
    url: string,
    notice: ReturnRequestNotice | RequestUpdateNotice,
    text: string,
    answerId: string,
  ): Promise<McpDelivery> {
    const signal = AbortSignal.timeout(this.#timeoutMs);
    // Either era: `server/discover` first (2026-07-28), else `initialize`, as discovery connects.
    const client = new Client(
      { name: serviceName, version: serviceVersion },
      { versionNegotiation: { mode: 'auto' } },
    );
    const transport = new StreamableHTTPClientTransport(new URL(url), {
      fetch: cappedFetch(this.#fetch, signal, MAX_ANSWER_BYTES),
    });
    try {
      await client.connect(transport, { signal });
      const tools: ToolWithSchema[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < MAX_TOOL_PAGES; page++) {
        const listed = await client.listTools(cursor ? { cursor } : {}, { signal });
        tools.push(...(listed.tools as ToolWithSchema[]));
        cursor = listed.nextCursor;
        if (!cursor) break;
      }
      const tool = supportTool(tools) as ToolWithSchema | null;
      if (!tool) {
        return {
          ok: false,
          retryable: false,
          error: 'the MCP server lists no tool for returns, refunds or support',
        };
      }
      const input = toolArguments(tool, notice, text);
      if (!input.ok) {
        return {
          ok: false,
          retryable: false,
          error: `the MCP tool ${tool.name} needs ${input.missing.join(', ')}`.slice(0, 200),
        };
      }
      const result = await client.callTool({ name: tool.name, arguments: input.arguments }, { signal });
      if (result.isError) return { ok: false, retryable: true, error: `MCP tool ${tool.name} failed` };
      return {
        ok: true,
        tool: tool.name,
        answer: answerOf(result as { content?: unknown; structuredContent?: unknown }, tool.name, answerId),
      };
    } catch (err) {
      const e = err as Error & { cause?: { name?: string } };
      if (e.name === 'BlockedDestinationError' || e.cause?.name === 'BlockedDestinationError') {
        return networkFailure(err) as Extract<Attempt, { ok: false }>;
      }
      if (signal.aborted) return { ok: false, retryable: true, error: 'MCP server timed out' };
      return { ok: false, retryable: true, error: 'MCP call failed' };
    } finally {
      await client.close().catch(() => {});
    }
  }
}

/** The tool's result as the brand's answer: its text (and structured result) in the thread. */
function answerOf(
  result: { content?: unknown; structuredContent?: unknown },
  tool: string,
  answerId: string,
): BrandAnswer {
  const content = Array.isArray(result.content) ? (result.content as { type?: string; text?: string }[]) : [];
  const texts = content.filter((c) => c.type === 'text' && typeof c.text === 'string').map((c) => c.text);
  if (result.structuredContent !== undefined) texts.push(dataAsText(result.structuredContent));
  const text = texts.join('\n').trim();
  const decision = decisionIn(result.structuredContent);
  return {
    outcome: decision ? 'decided' : 'working',
    decision,
    note: `The brand's MCP tool ${tool} answered`,
    messages: text ? [{ external_id: `mcp:${answerId}`, subject: null, text, attachments: [] }] : [],
  };
}
