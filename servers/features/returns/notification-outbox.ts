/**
 * Telling the requester's agent (issue 29 part 4), from the `return_notifications` outbox
 * (`servers/outbox-worker.ts`: lease, at least once with the event id stable across attempts,
 * backoff as `returns.delivery.*`), on the channel the request chose:
 *
 * - `webhook`: the event POSTed to `callback_url` as Standard Webhooks (`webhook-id` = event id,
 *   signed with the request's own `whsec_` secret, returned once with the request);
 * - `a2a`: an A2A message to the agent at `callback_url` through the official client
 *   (`@a2a-js/sdk` ClientFactory over our SSRF-safe fetch): `messageId` = event id, `contextId` =
 *   request id, a text part saying what happened and a data part holding the event;
 * - `email`: a plain-text mail to the person's contact, `Message-ID` = event id.
 */
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
} from '@a2a-js/sdk/client';
import type { Transporter } from 'nodemailer';
import type { ReturnNotificationRow, ReturnRequestRow } from '../../../db/schema.ts';
import type { Config } from '../../config.ts';
import type { SafeFetch } from '../../outbound/safe-fetch.ts';
import {
  type Attempt,
  networkFailure,
  OutboxWorker,
  type OutboxWorkerDeps,
  postSignedWebhook,
  sendMail,
} from '../../outbox-worker.ts';
import { callbackSecretPlace, type SecretBox } from '../../secrets.ts';
import { JSON_MEDIA_TYPE, requestMessage } from './a2a-message.ts';
import { eventAsText, eventSummary, type RequesterEvent, requesterEvent } from './notifications.ts';
import { findReturnRequest } from './repository.ts';

export interface NotificationDeps extends OutboxWorkerDeps {
  config: Config;
  fetch: SafeFetch;
  /** Opens the requests' callback secrets (sealed at rest with `SECRETS_KEY`). */
  secrets: SecretBox;
  mailer: Transporter | null;
  statusUrl: (requestId: string) => string;
}

export class NotificationWorker extends OutboxWorker<'return_notifications'> {
  private readonly deps: NotificationDeps;
  readonly #a2a: ClientFactory;

  constructor(deps: NotificationDeps) {
    super(deps, {
      name: 'requester notification',
      table: 'return_notifications',
      settings: deps.config.returns.delivery,
    });
    this.deps = deps;
    // The requester's agent is a URL the requester gave: every request to it, the card's included,
    // goes through the SSRF-safe fetcher.
    const fetchImpl = ((input: string | URL | Request, init?: RequestInit) =>
      deps.fetch(input instanceof Request ? input.url : input, init as never)) as unknown as typeof fetch;
    this.#a2a = new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
        transports: [new JsonRpcTransportFactory({ fetchImpl }), new RestTransportFactory({ fetchImpl })],
        cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
      }),
    );
  }

  protected async attempt(row: ReturnNotificationRow): Promise<Attempt> {
    const request = await findReturnRequest(this.deps.db, row.request_id);
    if (!request) return { ok: false, retryable: false, error: 'request no longer exists' };
    const event = requesterEvent(row, this.deps.statusUrl(request.id));
    switch (row.channel) {
      case 'webhook':
        return this.#webhook(row, request, event);
      case 'a2a':
        return this.#a2aMessage(row, request, event);
      case 'email':
        return this.#mail(row, request, event);
    }
  }

  #webhook(
    row: ReturnNotificationRow,
    request: ReturnRequestRow,
    event: RequesterEvent,
  ): Promise<Attempt> | Attempt {
    if (!request.callback_url || !request.callback_secret) {
      return { ok: false, retryable: false, error: 'no callback' };
    }
    const secret = this.deps.secrets.open(request.callback_secret, callbackSecretPlace(request.id));
    return postSignedWebhook(
      this.deps.fetch,
      request.callback_url,
      { id: row.id, body: JSON.stringify(event), secret },
      this.deps.now(),
    );
  }

  async #a2aMessage(
    row: ReturnNotificationRow,
    request: ReturnRequestRow,
    event: RequesterEvent,
  ): Promise<Attempt> {
    if (!request.callback_url) return { ok: false, retryable: false, error: 'no callback' };
    const url = request.callback_url;
    // A callback naming the card itself is read as is; any other URL is the agent's base URL.
    const cardPath = new URL(url).pathname.endsWith('.json') ? '' : undefined;
    const message = requestMessage({
      messageId: row.id,
      requestId: request.id,
      text: eventSummary(event, brandOf(request)),
      data: event,
    });
    try {
      const client = await this.#a2a.createFromUrl(url, cardPath);
      await client.sendMessage(
        {
          tenant: '',
          message,
          configuration: {
            acceptedOutputModes: [JSON_MEDIA_TYPE, 'text/plain'],
            taskPushNotificationConfig: undefined,
            returnImmediately: true,
          },
          metadata: undefined,
        },
        { signal: AbortSignal.timeout(this.deps.config.outbound.timeout_ms) },
      );
      return { ok: true };
    } catch (err) {
      // A refused destination is final; a network failure or an error the agent answered is retried.
      return networkFailure(err);
    }
  }

  #mail(
    row: ReturnNotificationRow,
    request: ReturnRequestRow,
    event: RequesterEvent,
  ): Promise<Attempt> | Attempt {
    if (request.contact_kind !== 'email') return { ok: false, retryable: false, error: 'no email contact' };
    const brand = brandOf(request);
    return sendMail(this.deps.mailer, {
      from: this.deps.config.smtp.from,
      to: request.contact,
      subject:
        event.type === 'return.message'
          ? `${brand} replied to your return request`
          : `Your return request with ${brand}: ${(event.data as { status: string }).status.replace('_', ' ')}`,
      text: eventAsText(event, brand),
      messageId: `<${row.id}@${new URL(this.deps.config.site_url).hostname}>`,
      headers: { 'X-Return-Request-Id': request.id },
    });
  }
}

const brandOf = (request: Pick<ReturnRequestRow, 'brand_name' | 'brand_domain'>): string =>
  request.brand_name ?? request.brand_domain;
