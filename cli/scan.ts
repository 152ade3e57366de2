/**
 * `agent-service-scan`: a Signal Strength gate for CI (issue 35 item 4). Scans one site through the
 * service's public API (default) or in this process (`--local`), prints the result as Markdown or
 * JSON on stdout (progress and failures go to stderr), and exits 0 when the gate passes, 1 when
 * the score is below `--min-score` or a `--require`d check does not pass, 2 on a usage error and 3
 * when the scan could not run. `bin/agent-service-scan.mjs` starts it; the guide is
 * docs/guides/site-owners/ci-gate.md.
 */
import { ConfigError, loadConfig } from '../servers/config.ts';
import { type DoneScan, judge, type Report, render } from './gate.ts';
import { apiUrlOf, CliFailure, readInvocation, type ScanOptions, USAGE } from './options.ts';
import { scanThroughApi } from './scan-api.ts';

export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: NodeJS.ProcessEnv;
}

const processIo: CliIo = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
};

/** Runs the command; resolves to its exit code. */
export async function main(argv: readonly string[], io: CliIo = processIo): Promise<number> {
  let options: ScanOptions | null = null;
  try {
    const invocation = readInvocation(argv);
    if (invocation.help) {
      io.stdout(`${USAGE}\n`);
      return 0;
    }
    options = invocation.options;
    const { scan, source } = await runScan(options, io);
    const verdict = judge(scan.result, options);
    io.stdout(render({ scan, verdict, source }, options.format));
    for (const reason of verdict.reasons) io.stderr(`agent-service-scan: gate failed: ${reason}\n`);
    return verdict.passed ? 0 : 1;
  } catch (err) {
    const failure =
      err instanceof CliFailure ? err : new CliFailure(3, `unexpected failure: ${(err as Error).message}`);
    io.stderr(`agent-service-scan: ${failure.message}\n`);
    // A program reading the JSON on stdout learns why there is no result.
    if (options?.format === 'json')
      io.stdout(
        `${JSON.stringify({ passed: false, error: { exit_code: failure.exitCode, message: failure.message } }, null, 2)}\n`,
      );
    return failure.exitCode;
  }
}

async function runScan(
  options: ScanOptions,
  io: CliIo,
): Promise<{ scan: DoneScan; source: Report['source'] }> {
  const progress = (line: string) => io.stderr(`agent-service-scan: ${line}\n`);
  if (options.mode.kind === 'local') {
    // Loaded only here: the API path needs none of the scanner's modules.
    const { scanInProcess } = await import('./scan-local.ts');
    const scan = await scanInProcess({ ...options, env: io.env, progress });
    return { scan, source: { kind: 'local' } };
  }
  const api = options.mode.api ?? apiOfEnvironment(io.env);
  const serviceKey = io.env.AGENT_SERVICE_KEY?.trim() || null;
  if (options.private && !serviceKey)
    throw new CliFailure(2, '--private needs AGENT_SERVICE_KEY: a private scan belongs to an account');
  const scan = await scanThroughApi({
    api,
    target: options.target,
    profile: options.profile,
    private: options.private,
    serviceKey,
    deadline: AbortSignal.timeout(options.timeoutMs),
    progress,
  });
  return { scan, source: { kind: 'api', api } };
}

/** `SIGNAL_API`, else the `public_api_url` the service's own settings give (`PUBLIC_API_URL`, `SITE_URL`). */
function apiOfEnvironment(env: NodeJS.ProcessEnv): string {
  if (env.SIGNAL_API) return apiUrlOf(env.SIGNAL_API, 'SIGNAL_API');
  try {
    return loadConfig({ env, overrides: { mode: 'development' } }).public_api_url;
  } catch (err) {
    if (err instanceof ConfigError) throw new CliFailure(2, err.message);
    throw err;
  }
}
