/**
 * `{site_url}/metrics` (both dialects): absent unless `metrics.enabled`; when on, Prometheus text
 * format that parses line by line, operation counters that move with calls (status included), and
 * queue depths read at scrape time.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/databases.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Prometheus text exposition format 0.0.4: every line is HELP, TYPE or a sample; throws otherwise. */
function parseExposition(text: string): { samples: Sample[]; types: Map<string, string> } {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  const name = '[a-zA-Z_:][a-zA-Z0-9_:]*';
  // Values as Go's strconv.ParseFloat reads them (Prometheus' parser): NaN and Inf in any case.
  const sampleLine = new RegExp(`^(${name})(?:\\{(.*)\\})? ([+-]?(?:[0-9.e+-]+|nan|inf))(?: -?\\d+)?$`, 'i');
  const label = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(?:,|$)/gy;
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const help = new RegExp(`^# HELP (${name}) .*$`).exec(line);
    if (help) continue;
    const type = new RegExp(`^# TYPE (${name}) (counter|gauge|histogram|summary|untyped)$`).exec(line);
    if (type) {
      types.set(type[1] as string, type[2] as string);
      continue;
    }
    const sample = sampleLine.exec(line);
    if (!sample) throw new Error(`not an exposition line: ${line}`);
    const labels: Record<string, string> = {};
    const body = sample[2] ?? '';
    label.lastIndex = 0;
    while (label.lastIndex < body.length) {
      const m = label.exec(body);
      if (!m) throw new Error(`bad labels: ${body}`);
      labels[m[1] as string] = m[2] as string;
    }
    samples.push({ name: sample[1] as string, labels, value: Number(sample[3]) });
  }
  return { samples, types };
}

const find = (samples: Sample[], name: string, labels: Record<string, string>) =>
  samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));

describe.each(dialects)('Prometheus metrics (%s)', (dialect) => {
  let service: TestService | undefined;

  afterEach(async () => {
    await service?.close();
    service = undefined;
  });

  it('is not served unless metrics.enabled (404)', async () => {
    service = await startTestService(dialect);
    const res = await fetch(`${service.config.site_url}/metrics`);
    expect(res.status).toBe(404);
  });

  it('serves the text format; operation counters and durations move by operation and status; queue depths', async () => {
    service = await startTestService(dialect, {
      'metrics.enabled': true,
      'rate_limits.unauthenticated_writes.points': 1000,
    });
    const { site_url: site, public_api_url: api } = service.config;
    const scrape = async () => {
      const res = await fetch(`${site}/metrics`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      return parseExposition(await res.text());
    };

    const before = await scrape();
    expect(before.types.get('agent_service_operation_requests_total')).toBe('counter');
    expect(before.types.get('agent_service_operation_duration_seconds')).toBe('histogram');
    expect(before.types.get('agent_service_payments')).toBe('gauge');
    expect(before.types.get('agent_service_outbox_lag_seconds')).toBe('gauge');
    expect(before.types.get('agent_service_scan_queue_age_seconds')).toBe('gauge');
    expect(find(before.samples, 'agent_service_nodejs_eventloop_lag_seconds', {})).toBeDefined();
    for (const queue of ['traffic_ingest', 'deliveries', 'security_events', 'scans']) {
      expect(find(before.samples, 'agent_service_queue_depth', { queue })?.value).toBe(0);
    }
    expect(find(before.samples, 'agent_service_outbox_lag_seconds', { outbox: 'deliveries' })?.value).toBe(0);
    expect(
      find(before.samples, 'agent_service_operation_requests_total', { operation: 'getHealth' }),
    ).toBeUndefined();
    expect(before.samples.every((s) => s.labels.pid === String(process.pid))).toBe(true);

    expect((await fetch(`${api}/health`)).status).toBe(200);
    expect((await fetch(`${api}/health`)).status).toBe(200);
    expect((await fetch(`${api}/health?unexpected=1`)).status).toBe(400);

    const account = await fetch(`${api}/account`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'metrics-owner@example.com', password: 'correct horse battery' }),
    });
    expect(account.status).toBe(201);
    const key: string = (await account.json()).key.service_key;
    const install = await fetch(`${api}/pixel-install`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-key': key },
      body: JSON.stringify({ domain: 'metrics-traffic.com' }),
    });
    const siteId: string = (await install.json()).site_id;
    const hit = await fetch(
      `${api}/beacon?${new URLSearchParams({ site: siteId, url: 'https://metrics-traffic.com/' })}`,
    );
    expect(hit.status).toBe(204);

    const after = await scrape();
    const ok = { operation: 'getHealth', via: 'rest', status: '200' };
    expect(find(after.samples, 'agent_service_operation_requests_total', ok)?.value).toBe(2);
    expect(
      find(after.samples, 'agent_service_operation_requests_total', { ...ok, status: '400' })?.value,
    ).toBe(1);
    expect(find(after.samples, 'agent_service_operation_duration_seconds_count', ok)?.value).toBe(2);
    expect(
      find(after.samples, 'agent_service_operation_duration_seconds_bucket', { ...ok, le: '+Inf' })?.value,
    ).toBe(2);
    expect(
      find(after.samples, 'agent_service_operation_requests_total', {
        operation: 'createAccount',
        status: '201',
      })?.value,
    ).toBe(1);
    // The beacon hit was answered once written: nothing of it waits any more.
    expect(find(after.samples, 'agent_service_queue_depth', { queue: 'traffic_ingest' })?.value).toBe(0);
  });
});
