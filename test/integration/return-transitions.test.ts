/**
 * Status changes after delivery go through the state machine (the brand-side endpoint arrives with
 * brand registration); every change is recorded, illegal ones are refused. Once per dialect.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServiceError } from '../../servers/errors.ts';
import { dialects } from '../helpers/databases.ts';
import { startWebhookReceiver, type WebhookReceiver, waitFor } from '../helpers/receivers.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

describe.each(dialects)('return request transitions (%s)', (dialect) => {
  let service: TestService;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    service = await startTestService(dialect);
    receiver = await startWebhookReceiver();
    await service.services.returns.connectBrandChannel({
      brand_domain: 'flow-brand.example',
      webhook_url: receiver.url,
      webhook_secret: receiver.secret,
      email: null,
    });
  });
  afterAll(async () => {
    await receiver?.close();
    await service?.close();
  });

  async function delivered(): Promise<string> {
    const res = await fetch(`${service.url}/cs/return`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        brand_domain: 'flow-brand.example',
        name: 'Jane Doe',
        contact: 'jane@example.com',
      }),
    });
    const { request_id } = await res.json();
    await waitFor(async () => (await service.services.returns.status(request_id)).status === 'delivered');
    return request_id;
  }

  it('walks a request to closed and records who did what', async () => {
    const id = await delivered();
    const returns = service.services.returns;
    await returns.advance(id, 'acknowledged', 'brand', 'Looking into it');
    await returns.advance(id, 'approved', 'brand', null);
    await returns.advance(id, 'refunded', 'brand', 'Refund 15.49 USD issued');
    const closed = await returns.advance(id, 'closed', 'brand', null);
    expect(closed.final).toBe(true);
    expect(closed.next_step).toBeNull();
    expect(closed.history.map((h) => [h.status, h.by])).toEqual([
      ['received', 'service'],
      ['delivered', 'service'],
      ['acknowledged', 'brand'],
      ['approved', 'brand'],
      ['refunded', 'brand'],
      ['closed', 'brand'],
    ]);
    const res = await fetch(`${service.config.base_url}/status?request_id=${id}`);
    expect((await res.json()).history.at(-2).note).toBe('Refund 15.49 USD issued');
  });

  it('refuses illegal transitions and leaves the request as it was', async () => {
    const id = await delivered();
    const returns = service.services.returns;
    for (const [to, actor] of [
      ['refunded', 'brand'],
      ['approved', 'requester'],
      ['received', 'brand'],
    ] as const) {
      const err = await returns.advance(id, to, actor, null).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ServiceError);
      expect((err as ServiceError).code).toBe('illegal_transition');
      expect((err as ServiceError).status).toBe(409);
    }
    const cancelled = await returns.advance(id, 'cancelled', 'requester', 'Changed my mind');
    expect(cancelled.status).toBe('cancelled');
    const late = await returns.advance(id, 'acknowledged', 'brand', null).catch((e: unknown) => e);
    expect((late as ServiceError).code).toBe('illegal_transition');
    expect((await returns.status(id)).history).toHaveLength(3);
  });

  it('answers 404 for transitions of an unknown request', async () => {
    const err = await service.services.returns
      .advance(crypto.randomUUID(), 'acknowledged', 'brand', null)
      .catch((e) => e);
    expect((err as ServiceError).code).toBe('not_found');
  });
});

describe('database failure', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService('sqlite', {}, { background: false });
  });
  afterAll(() => service?.close());

  it('answers 500 without internals, and health reports degraded (200: liveness, not readiness)', async () => {
    await service.database.close();
    const res = await fetch(`${service.config.base_url}/status?request_id=${crypto.randomUUID()}`);
    expect(res.status).toBe(500);
    const problem = await res.json();
    expect(problem).toMatchObject({ code: 'internal_error', detail: 'Internal error' });
    expect(JSON.stringify(problem)).not.toMatch(/destroy|sqlite|kysely|stack/i);
    const health = await fetch(`${service.config.public_api_url}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: 'degraded', database: { reachable: false } });
    expect((await fetch(`${service.config.public_api_url}/health/ready`)).status).toBe(503);
  });
});
