/**
 * `agent-service-scan`, the CI gate (issue 35 item 4), run as CI runs it: the bin's launcher in a
 * child Node, against fixture sites on loopback, in process (`--local`) and through a real service
 * (`--api`, once per dialect). What is checked is what a CI job reads: the exit code (0 passed,
 * 1 below the minimum or a required check not passing, 2 usage, 3 could not run) and stdout in
 * both formats.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../servers/config.ts';
import { dialects } from '../helpers/databases.ts';
import {
  type FixtureSite,
  scannerOnLoopback,
  startFixtureSite,
  startHeldSite,
} from '../helpers/fixture-sites.ts';
import { freePort } from '../helpers/ports.ts';
import { childEnv } from '../helpers/process.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

const bin = path.join(projectRoot, 'bin', 'agent-service-scan.mjs');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The command as `npx agent-service-scan` runs it, from another directory than the package's. */
function scanCli(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], {
      cwd: path.dirname(projectRoot),
      // Local scans of the fixtures without the politeness delay, as the service's tests scan them.
      env: { ...childEnv(), SCAN_DELAY_MS: '0', SCAN_MAX_PAGES: '30', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const json = (run: Run) => JSON.parse(run.stdout);

describe('agent-service-scan --local', () => {
  let well: FixtureSite;
  let bare: FixtureSite;
  beforeAll(async () => {
    [well, bare] = await Promise.all([startFixtureSite('wellPrepared'), startFixtureSite('bare')]);
  });
  afterAll(async () => {
    await Promise.all([well, bare].map((s) => s?.close()));
  });

  it('passes a well-prepared site with exit 0 and reports it as JSON', async () => {
    const run = await scanCli([well.url, '--local', '--min-score', '70', '--require', 'robots_txt,llms_txt']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^## Signal Strength gate: passed for 127\.0\.0\.1:\d+/);
    const asJson = await scanCli([well.domain, '--local', '--min-score', '70', '--format', 'json']);
    expect(asJson.code, asJson.stderr).toBe(0);
    const report = json(asJson);
    expect(report).toMatchObject({ passed: true, domain: well.domain, source: 'local' });
    expect(report.score).toBeGreaterThanOrEqual(70);
    expect(report.gate).toEqual({ passed: true, min_score: 70, required: [], reasons: [] });
    expect(report.scan.result.components[1]).toMatchObject({ id: 'live_ai_traffic', status: 'no_data' });
    expect(well.requests.some((r) => r.path === '/robots.txt')).toBe(true);
  });

  it('fails a bare site below the minimum with exit 1 and the fix sheet in Markdown', async () => {
    const run = await scanCli([bare.domain, '--local', '--min-score', '50']);
    expect(run.code, run.stderr).toBe(1);
    expect(run.stdout).toMatch(/^## Signal Strength gate: failed for /);
    expect(run.stdout).toMatch(/- score \d+ is below the minimum 50/);
    // The scanner's fix sheet: each finding with its fix and a prompt for a coding agent.
    expect(run.stdout).toMatch(/## 1\. .+ \(`\w+`, (critical|warning|info)\)/);
    expect(run.stdout).toContain('- **How to fix:**');
    expect(run.stdout).toContain('Prompt for a coding agent:');
    expect(run.stderr).toMatch(/gate failed: score \d+ is below the minimum 50/);
  });

  it('fails with exit 1 when a required check does not pass, whatever the score', async () => {
    const run = await scanCli([well.domain, '--local', '--require', 'https', '--format', 'json']);
    expect(run.code, run.stderr).toBe(1);
    const report = json(run);
    expect(report.passed).toBe(false);
    expect(report.gate.required).toEqual([
      expect.objectContaining({ id: 'https', status: 'fail', passed: false }),
    ]);
    expect(report.gate.reasons).toEqual([
      expect.stringMatching(/^required check https .* is fail, not pass$/),
    ]);
  });

  it('answers usage errors with exit 2 and says what is wrong (the whole list: test/unit/scan-cli-options.test.ts)', async () => {
    const cases: [string[], RegExp][] = [
      [[], /name the site to scan/],
      [[well.domain, '--frobnicate'], /Unknown option '--frobnicate'/],
    ];
    for (const [args, said] of cases) {
      const run = await scanCli(args);
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stderr).toMatch(said);
      expect(run.stdout).toBe('');
    }
    // A required check the scanner does not have: a typo must not pass the gate.
    const typo = await scanCli([well.domain, '--local', '--require', 'llms_text']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(
      /--require: no check "llms_text" in scoring version \d+; the checks are .*llms_txt/,
    );
  });

  it('exits 3 when the site cannot be reached, with the reason in the JSON', async () => {
    const closed = await freePort();
    const run = await scanCli([`127.0.0.1:${closed}`, '--local', '--format', 'json']);
    expect(run.code).toBe(3);
    expect(json(run)).toEqual({
      passed: false,
      error: { exit_code: 3, message: expect.stringMatching(/^could not scan 127\.0\.0\.1:\d+: /) },
    });
  });

  it('--help prints the usage with exit 0', async () => {
    const run = await scanCli(['--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^usage: agent-service-scan <url or domain>/);
    expect(run.stdout).toContain('exit codes: 0 passed, 1 below --min-score');
  });
});

describe.each(dialects)('agent-service-scan --api (%s)', (dialect) => {
  let service: TestService;
  let api: string;
  let well: FixtureSite;
  let bare: FixtureSite;

  beforeAll(async () => {
    [well, bare] = await Promise.all([startFixtureSite('wellPrepared'), startFixtureSite('bare')]);
    service = await startTestService(dialect, {
      'rate_limits.unauthenticated_writes.points': 1000,
      ...scannerOnLoopback,
    });
    api = service.config.public_api_url;
  });
  afterAll(async () => {
    await service?.close();
    await Promise.all([well, bare].map((s) => s?.close()));
  });

  it('passes a well-prepared site scanned by the service (exit 0, JSON with the scan to follow)', async () => {
    const run = await scanCli([well.url, '--api', api, '--min-score', '70', '--format', 'json']);
    expect(run.code, run.stderr).toBe(0);
    const report = json(run);
    expect(report).toMatchObject({ passed: true, domain: well.domain, source: 'api', api });
    expect(report.status_url).toBe(`${api}/scans/${report.scan_id}`);
    expect(report.score).toBeGreaterThanOrEqual(70);
    // The scan is the service's own, public by default: readable at its status URL.
    const stored = await (await fetch(report.status_url)).json();
    expect(stored).toMatchObject({ status: 'done', public: true, result: { score: report.score } });
  });

  it('fails a bare site below the minimum (exit 1, Markdown with the fix sheet); SIGNAL_API names the service', async () => {
    const run = await scanCli([bare.domain, '--min-score', '50', '--profile', 'content'], {
      SIGNAL_API: api,
    });
    expect(run.code, run.stderr).toBe(1);
    expect(run.stdout).toMatch(/^## Signal Strength gate: failed for /);
    expect(run.stdout).toContain(`scanned by ${api}`);
    expect(run.stdout).toMatch(/profile content/);
    expect(run.stdout).toContain('- **How to fix:**');
  });

  it('a domain the service refuses is a usage error (exit 2) naming the field', async () => {
    const run = await scanCli(['not a domain', '--api', api]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/refused the scan: domain: .+ \(validation_failed\)/);
  });

  it('exits 3 when the service cannot be reached, or cannot reach the site', async () => {
    const closed = await freePort();
    const noService = await scanCli([well.domain, '--api', `http://127.0.0.1:${closed}/api/public`]);
    expect(noService.code).toBe(3);
    expect(noService.stderr).toMatch(
      /no answer from http:\/\/127\.0\.0\.1:\d+\/api\/public \(ECONNREFUSED\)/,
    );
    const noSite = await scanCli([`127.0.0.1:${closed}`, '--api', api, '--format', 'json']);
    expect(noSite.code).toBe(3);
    expect(json(noSite).error.message).toMatch(/^the scan of 127\.0\.0\.1:\d+ failed: /);
  });

  it('exits 3 when --timeout passes before the scan is done', async () => {
    const held = await startHeldSite();
    try {
      const run = await scanCli([held.domain, '--api', api, '--timeout', '1']);
      expect(run.code).toBe(3);
      expect(run.stderr).toMatch(/timed out \(--timeout\)/);
      expect(run.stdout).toBe('');
    } finally {
      held.release();
      await held.close();
    }
  });
});
