/**
 * The command line of `agent-service-scan` (docs/guides/site-owners/ci-gate.md), read with
 * node:util's parseArgs: strict, so an unknown or misspelt option is a usage error (exit 2) rather
 * than a gate that silently checks less than it was asked to.
 */
import { parseArgs } from 'node:util';
import { ProfileId } from '../servers/features/scans/schemas.ts';
import type { ProfileId as Profile } from '../servers/features/scans/scoring.ts';

export const USAGE = `usage: agent-service-scan <url or domain> [options]

  --min-score N       fail (exit 1) below this Signal Strength, 0-100 (default 0)
  --require IDS       fail unless these checks pass (comma-separated check ids, repeatable)
  --profile P         score as content, shop or api instead of the detected profile
  --format F          json or markdown (default markdown; markdown adds the fix sheet on failure)
  --api URL           the service's public API (default: SIGNAL_API, else the configured public_api_url)
  --local             run the scanner in this process instead (no service, no database)
  --private           a private scan (through the API; needs AGENT_SERVICE_KEY)
  --timeout SECONDS   give up after this long (default 300; exit 3)
  -h, --help          this text

exit codes: 0 passed, 1 below --min-score or a --require check did not pass,
            2 usage error, 3 the scan could not run (service or site unreachable, timeout)`;

export const DEFAULT_TIMEOUT_S = 300;

export type OutputFormat = 'json' | 'markdown';

export interface ScanOptions {
  target: string;
  minScore: number;
  required: string[];
  profile: Profile | null;
  format: OutputFormat;
  mode: { kind: 'local' } | { kind: 'api'; api: string | null };
  private: boolean;
  timeoutMs: number;
}

/** What the command was asked to do; `help` when it was asked for its usage. */
export type Invocation = { help: true } | { help: false; options: ScanOptions };

/** A failure that ends the command with `exitCode`: 2 usage, 3 the scan could not run. */
export class CliFailure extends Error {
  readonly exitCode: 2 | 3;
  constructor(exitCode: 2 | 3, message: string) {
    super(message);
    this.name = 'CliFailure';
    this.exitCode = exitCode;
  }
}

const usageError = (message: string) =>
  new CliFailure(2, `${message} (agent-service-scan --help lists the options)`);

export function readInvocation(argv: readonly string[]): Invocation {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (err) {
    throw usageError((err as Error).message);
  }
  const { values, positionals } = parsed;
  if (values.help) return { help: true };
  if (positionals.length !== 1)
    throw usageError(positionals.length === 0 ? 'name the site to scan' : 'scan one site at a time');
  if (values.local && values.api !== undefined) throw usageError('--local and --api exclude each other');
  if (values.local && values.private) throw usageError('--private applies to scans through the API');
  return {
    help: false,
    options: {
      target: positionals[0] as string,
      minScore: integerIn('--min-score', values['min-score'] ?? '0', 0, 100),
      required: requiredChecks(values.require ?? []),
      profile: profileOf(values.profile),
      format: formatOf(values.format),
      mode: values.local
        ? { kind: 'local' }
        : { kind: 'api', api: values.api === undefined ? null : apiUrlOf(values.api, '--api') },
      private: values.private ?? false,
      timeoutMs: 1000 * integerIn('--timeout', values.timeout ?? String(DEFAULT_TIMEOUT_S), 1, 3600),
    },
  };
}

function parse(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    allowPositionals: true,
    strict: true,
    options: {
      'min-score': { type: 'string' },
      require: { type: 'string', multiple: true },
      profile: { type: 'string' },
      format: { type: 'string' },
      api: { type: 'string' },
      local: { type: 'boolean' },
      private: { type: 'boolean' },
      timeout: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
}

function integerIn(flag: string, raw: string, min: number, max: number): number {
  const n = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || n < min || n > max)
    throw usageError(`${flag} must be a whole number from ${min} to ${max}, got "${raw}"`);
  return n;
}

const CHECK_ID = /^[a-z0-9_]+$/;

function requiredChecks(values: string[]): string[] {
  const ids = values.flatMap((v) => v.split(',')).map((id) => id.trim());
  const bad = ids.find((id) => !CHECK_ID.test(id));
  if (bad !== undefined)
    throw usageError(`--require takes check ids such as llms_txt (docs/reference/scoring.md), got "${bad}"`);
  return [...new Set(ids)];
}

function profileOf(raw: string | undefined): Profile | null {
  if (raw === undefined) return null;
  const parsed = ProfileId.safeParse(raw);
  if (!parsed.success)
    throw usageError(`--profile must be one of ${ProfileId.options.join(', ')}, got "${raw}"`);
  return parsed.data;
}

function formatOf(raw: string | undefined): OutputFormat {
  if (raw === undefined || raw === 'markdown' || raw === 'md') return 'markdown';
  if (raw === 'json') return 'json';
  throw usageError(`--format must be json or markdown, got "${raw}"`);
}

/** The public API's base URL from `source` (`--api`, `SIGNAL_API`), without a trailing slash. */
export function apiUrlOf(raw: string, source: string): string {
  let url: URL | null = null;
  try {
    url = new URL(raw);
  } catch {
    // said below
  }
  if (url?.protocol !== 'https:' && url?.protocol !== 'http:')
    throw usageError(`${source} must be an http(s) URL such as https://example.com/api/public, got "${raw}"`);
  return raw.replace(/\/+$/, '');
}
