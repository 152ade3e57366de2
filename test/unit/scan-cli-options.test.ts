/**
 * The command line of `agent-service-scan` (cli/options.ts), run in process through `main`: every
 * usage error is exit 2 with a message naming the option, and nothing on stdout. The spawned
 * command, its scans and its other exit codes are test/integration/scan-cli.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { readInvocation } from '../../cli/options.ts';
import { main } from '../../cli/scan.ts';

async function run(argv: string[], env: NodeJS.ProcessEnv = {}) {
  let stdout = '';
  let stderr = '';
  const code = await main(argv, {
    stdout: (t) => {
      stdout += t;
    },
    stderr: (t) => {
      stderr += t;
    },
    env,
  });
  return { code, stdout, stderr };
}

describe('agent-service-scan options', () => {
  it.each([
    [[], /name the site to scan/],
    [['a.example', 'b.example'], /scan one site at a time/],
    [['a.example', '--format', 'xml'], /--format must be json or markdown, got "xml"/],
    [['a.example', '--min-score', 'high'], /--min-score must be a whole number from 0 to 100, got "high"/],
    [['a.example', '--min-score', '101'], /--min-score must be a whole number from 0 to 100/],
    [['a.example', '--min-score', '-1'], /--min-score/],
    [['a.example', '--timeout', '0'], /--timeout must be a whole number from 1 to 3600/],
    [['a.example', '--profile', 'forum'], /--profile must be one of content, shop, api, got "forum"/],
    [
      ['a.example', '--require', 'llms_txt,Bad-Id'],
      /--require takes check ids such as llms_txt .* got "Bad-Id"/,
    ],
    [['a.example', '--local', '--api', 'http://127.0.0.1:1'], /--local and --api exclude each other/],
    [['a.example', '--local', '--private'], /--private applies to scans through the API/],
    [['a.example', '--frobnicate'], /Unknown option '--frobnicate'/],
    [['a.example', '--min-score'], /--min-score <value>' argument missing/],
    [['a.example', '--api', 'ftp://example.com'], /--api must be an http\(s\) URL/],
    [['a.example', '--api', 'not a url'], /--api must be an http\(s\) URL/],
  ])('%j is a usage error', async (argv, said) => {
    const result = await run(argv);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(said);
    expect(result.stderr).toContain('agent-service-scan --help lists the options');
    expect(result.stdout).toBe('');
  });

  it('a bad SIGNAL_API, and --private without AGENT_SERVICE_KEY, are usage errors too', async () => {
    const badApi = await run(['a.example'], { SIGNAL_API: 'example.com/api' });
    expect(badApi.code).toBe(2);
    expect(badApi.stderr).toMatch(/SIGNAL_API must be an http\(s\) URL/);
    const noKey = await run(['a.example', '--private', '--format', 'json'], {
      SIGNAL_API: 'http://127.0.0.1:1',
    });
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toMatch(/--private needs AGENT_SERVICE_KEY/);
    // The options were read: JSON output says why there is no result.
    expect(JSON.parse(noKey.stdout)).toEqual({
      passed: false,
      error: { exit_code: 2, message: expect.stringMatching(/--private needs AGENT_SERVICE_KEY/) },
    });
  });

  it('reads the options a CI step gives, with their defaults', () => {
    expect(readInvocation(['https://www.example.com/'])).toEqual({
      help: false,
      options: {
        target: 'https://www.example.com/',
        minScore: 0,
        required: [],
        profile: null,
        format: 'markdown',
        mode: { kind: 'api', api: null },
        private: false,
        timeoutMs: 300_000,
      },
    });
    const given = readInvocation([
      'example.com',
      '--min-score=70',
      '--require',
      'llms_txt, robots_ai_rules',
      '--require',
      'llms_txt',
      '--profile',
      'shop',
      '--format',
      'json',
      '--api',
      'https://signal.example.net/api/public/',
      '--timeout',
      '60',
    ]);
    expect(given).toMatchObject({
      options: {
        minScore: 70,
        required: ['llms_txt', 'robots_ai_rules'],
        profile: 'shop',
        format: 'json',
        mode: { kind: 'api', api: 'https://signal.example.net/api/public' },
        timeoutMs: 60_000,
      },
    });
    expect(readInvocation(['example.com', '--local'])).toMatchObject({
      options: { mode: { kind: 'local' } },
    });
    expect(readInvocation(['-h'])).toEqual({ help: true });
  });
});
