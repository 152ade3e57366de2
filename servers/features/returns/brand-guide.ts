/**
 * How brands receive agent requests (issue 29 part 7): what a brand can publish so that the return
 * and refund requests personal agents file here reach it, and what it gets. One source for the page
 * (`/agent-requests`) and the section of `llms.txt`; the examples are built by the functions that
 * build what is really sent (`brand-notice.ts`), so they cannot drift from it.
 */
import { Message } from '@a2a-js/sdk';
import type { ReturnRequestRow } from '../../../db/schema.ts';
import type { Config } from '../../config.ts';
import { brandA2aMessage, buildNotice, type ReturnRequestNotice } from './brand-notice.ts';
import { statusUrl } from './service.ts';

export const AGENT_REQUESTS_PATH = '/agent-requests';
export const AGENT_REQUESTS_TITLE = 'How brands receive agent requests';

export interface BrandRoute {
  /** Fragment of the route's section on the page (`/agent-requests#brand-agent`: links point at it). */
  id: 'brand-agent' | 'a2a' | 'email';
  title: string;
  publish: string;
  gets: string;
}

/** What a brand can publish, in the order the service prefers it when it delivers. */
export function brandRoutes(config: Config): BrandRoute[] {
  const tasks = config.returns.brand_tasks;
  return [
    {
      id: 'brand-agent',
      title: 'A registered agent: webhook, A2A or MCP',
      publish:
        `Register your agent for your verified domain: POST ${config.public_api_url}/brand-agent with your ` +
        'x-service-key, your endpoint and its protocols: webhook, a2a (your A2A agent: its base URL or card URL), ' +
        'mcp (your MCP server: its Streamable HTTP URL) or email. It outranks anything found on your site.',
      gets:
        'webhook: Standard Webhooks POSTs (webhook-id, webhook-timestamp, webhook-signature), one event per delivery: ' +
        'return_request.created, then return_request.message (a follow-up) and return_request.cancelled. a2a: the ' +
        'A2A messages below. mcp: a call of your tool for returns, refunds or support (by its name or description) ' +
        'with the inputs its schema names, among event, request_id, order_number, reason or message (the request ' +
        'as text), customer_name, customer_email, phone, amount, currency, purchase_date, card_last4, status_url, ' +
        'type; its text goes to the thread of the request, and a structured result {"status": "acknowledged" | ' +
        '"approved" | "denied" | "refunded"} moves the request; a follow-up or the cancellation calls it again, ' +
        'with type return_request.message or return_request.cancelled. ' +
        `Act with GET ${config.public_api_url}/brand-agent/requests and POST .../requests/{request_id}/status.`,
    },
    {
      id: 'a2a',
      title: 'An A2A skill for returns',
      publish:
        'An A2A agent card at /.well-known/agent-card.json on your domain with a skill for customer service, ' +
        'returns or refunds (its id, name, description or tags say so).',
      gets:
        'A SendMessage per event: messageId = the delivery id (the same on retries), contextId = the request id, ' +
        'a text part and a data part holding the same event a webhook carries; a follow-up or the cancellation ' +
        'goes to the task you opened while it is open. Answer with a task, then move it: submitted or working - ' +
        "delivered; input-required - acknowledged, your question shown to the person's agent, whose answer comes " +
        'to the same task; completed - acknowledged, or your decision when a data part (of the status message or ' +
        'an artifact) says {"status": "approved" | "denied" | "refunded"}; rejected - denied; failed or canceled - ' +
        "the request goes to your next channel. Your messages and artifacts are shown to the person's agent. The " +
        `task is read with GetTask until it finishes (every ${tasks.poll_ms / 1000} s at first, then less often, ` +
        `for ${tasks.follow_days} days); an agent that errors or does not answer is retried with backoff, then ` +
        `skipped for ${config.returns.discovery.failed_channel_hold_hours} hours.`,
    },
    {
      id: 'email',
      title: 'A role email in schema.org ContactPoint',
      publish:
        'JSON-LD on your home or contact page: an Organization with a contactPoint of contactType "customer ' +
        'service", "returns" or "billing" and a role address (returns@, support@ - never a person).',
      gets:
        'The same facts as plain text from the service, with the request id in X-Return-Request-Id and the ' +
        'delivery id as Message-ID; follow-ups and the cancellation come as replies in the same thread. ' +
        "Reply to the mail: when its Reply-To is the request's own address (returns+<request>.<token>@...), your " +
        'answer is added to the request and the agent is told; sent from your domain and passing DMARC (DKIM or ' +
        'SPF aligned), it is marked verified and acknowledges the request.',
    },
  ];
}

/** A request as the examples show it: made up, in the shapes the service stores. */
const exampleRequest: ReturnRequestRow = {
  id: '019ac9a0-54f2-7c31-9a10-4b6c0f2d8e11',
  brand_domain: 'shop.example',
  brand_name: 'Shop',
  requester_name: 'Jane Doe',
  contact: 'jane@example.com',
  contact_kind: 'email',
  order_number: 'A-1001',
  card_last4: '4242',
  purchase_date: '2026-11-02',
  amount_cents: 4250,
  currency: 'EUR',
  message: 'The shoes are a size too small; I would like a refund.',
  agent_id: 'urn:example:agent:jane-assistant',
  protocol: 'email',
  callback_url: null,
  approval: JSON.stringify({ format: 'declaration', verified: false }),
  status: 'received',
  created_at: '2026-11-28T09:30:00.000Z',
  updated_at: '2026-11-28T09:30:00.000Z',
  request_token_hash: null,
  notify_channel: null,
  callback_secret: null,
};
const EXAMPLE_DELIVERY_ID = '019ac9a0-5511-7d02-8f3e-2a9b6c1d0e44';

/** The `return_request.created` event a brand receives (webhook body, A2A data part). */
export function exampleNotice(config: Config): ReturnRequestNotice {
  return buildNotice(
    exampleRequest,
    EXAMPLE_DELIVERY_ID,
    statusUrl(config, exampleRequest.id),
    new Date('2026-11-28T09:30:01.000Z'),
  );
}

/** The same event as the A2A message a brand's agent receives, in A2A 1.0 JSON. */
export function exampleA2aMessage(config: Config): unknown {
  return Message.toJSON(brandA2aMessage(exampleNotice(config)));
}
