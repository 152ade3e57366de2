/**
 * `npm run bench:load` (`BENCH_ONLY=load npm run bench`): the service under a mixed load for a
 * minute (issue 15, section 3) - a bench script, not a test: it prints, it asserts nothing.
 *
 * One service process, as `npm start` runs it plus the benchmark's paid echo (bench/servers/paid.ts:
 * the embedded facilitator without a chain), SQLite in a temporary folder - or PostgreSQL in a fresh
 * schema with BENCH_DATABASE_URL. Five autocannon instances in this process share the connections
 * and run at once, each as fast as its connections go:
 * - card lookups, `GET {base_url}/agent?charge=...` over a rotating set of real statement lines;
 * - pixel beacons, `GET {public_api_url}/beacon` for a site of the bench's account;
 * - public MCP, `tools/call lookup_card_charge` on `{mcp_url}`;
 * - paid calls, `POST /api/public/x402/bench-echo`, each with its own payment signed beforehand
 *   (one authorization pays for one execution: verified, reserved, recorded `authorized`);
 * - owner MCP, `tools/call list_my_sites` on `{mcp_url}/auth` with an access token the bench got
 *   through the real authorization code flow (DCR, sign-in, consent, PKCE).
 * A warm-up of the same mix comes first. Printed: per kind the requests, rate, p50 and p99 latency,
 * and every error, timeout, non-2xx answer and body that is not the expected result (0 expected);
 * the service's resident memory (prom-client's `process_resident_memory_bytes`) after the warm-up and
 * right after the run, each as the load left it and after a full garbage collection asked for through
 * the service's inspector (target: after the run within 10% of after the warm-up, both collected).
 *
 * Environment: BENCH_LOAD_DURATION (seconds, default 60), BENCH_LOAD_CONNECTIONS (default 200),
 * BENCH_LOAD_WARMUP (seconds, default 10), BENCH_LOAD_PAYMENTS (a fixed number of payments signed
 * for the paid calls; by default 300 per second of warm-up, then, after the warm-up, one and a half
 * times what the paid calls' warm-up rate needs for the run; the paid kind stops early when they
 * run out and says so), BENCH_DATABASE_URL, LOG_LEVEL (the service's, default info).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PaymentRequired, PaymentRequirements } from '@x402/core/types';
import autocannon from 'autocannon';
import { sql } from 'kysely';
import { openDatabase } from '../db/database.ts';
import { startFlags } from '../scripts/start-command.ts';
import { OwnerTokenClient } from '../test/helpers/oauth.ts';
import { newAccount, paymentHeader, signPayment } from '../test/helpers/x402-payer.ts';
import { collectGarbage, INSPECT_ARG, inspectorOf } from './inspector.ts';
import { BENCH_PAY_TO, BENCH_SKU } from './payments.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const duration = Number(process.env.BENCH_LOAD_DURATION ?? 60);
const connections = Number(process.env.BENCH_LOAD_CONNECTIONS ?? 200);
const warmup = Number(process.env.BENCH_LOAD_WARMUP ?? 10);
/** A fixed number of payments (no top-up after the warm-up), when set. */
const paymentsFixed = process.env.BENCH_LOAD_PAYMENTS ? Number(process.env.BENCH_LOAD_PAYMENTS) : undefined;
/** Paid calls per second the first payments are signed for (the warm-up's; the run's are topped up). */
const PAID_RATE_GUESS = 300;
/** Payments signed for the run beyond the warm-up's paid rate times its length. */
const PAID_HEADROOM = 1.5;

/** Share of the connections each kind gets (they add up to all of them). */
const SHARES = { lookup: 0.3, beacon: 0.25, mcp: 0.2, paid: 0.125, owner: 0.125 } as const;
type Kind = keyof typeof SHARES;
const LABELS: Record<Kind, string> = {
  lookup: 'card lookup   GET /cs/agent',
  beacon: 'beacon        GET /api/public/beacon',
  mcp: 'public MCP    tools/call lookup_card_charge',
  paid: 'paid call     POST /api/public/x402/bench-echo',
  owner: 'owner MCP     tools/call list_my_sites',
};

const DESCRIPTORS = [
  'POS PURCHASE STARBUCKS STORE 11234 SEATTLE WA',
  'CHECKCARD 0312 NETFLIX.COM 866-579-7172 CA',
  'SQ *BLUE BOTTLE COFFEE OAKLAND CA',
  'AMZN Mktp US*2K4RT5QX3 Amzn.com/bill WA',
  'UBER *TRIP HELP.UBER.COM CA',
  'SPOTIFY USA 877-778-1161 NY',
  'APPLE.COM/BILL 866-712-7753 CA',
  'PAYPAL *EBAY INC 402-935-7733 CA',
  'GOOGLE *YouTube Premium g.co/helppay# CA',
  'TST* SHAKE SHACK 1234 NEW YORK NY',
  'DOORDASH*CHIPOTLE SAN FRANCISCO CA',
  'MICROSOFT *XBOX 800-642-7676 WA',
];
const CHROME =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const MCP_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2025-11-25',
};

const format = (n: number, digits = 0) =>
  n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface BenchService {
  url: string;
  child: ChildProcess;
  /** The service's V8 inspector (`--inspect`), to ask for a full garbage collection before a reading. */
  inspector: string;
}

/**
 * The service with the bench SKU, its log to /dev/null (the load generator must not read logs), its
 * inspector on a loopback port (memory readings after a full GC; idle, it costs nothing).
 */
export async function startService(env: Record<string, string>): Promise<BenchService> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, [...startFlags(), INSPECT_ARG, 'bench/servers/paid.ts'], {
    cwd: root,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      SITE_URL: url,
      PAY_TO: BENCH_PAY_TO,
      METRICS_ENABLED: '1',
      // One client address sends everything: lift the per-address limit on unauthenticated writes.
      RATE_LIMIT_WRITES_PER_MINUTE: '1000000000',
      ...env,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const inspector = inspectorOf(child);
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the service exited with ${child.exitCode}`);
    try {
      if ((await fetch(`${url}/api/public/health/ready`)).ok)
        return { url, child, inspector: await inspector };
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error('the service did not start');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export interface Memory {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
}

/** The service's memory in bytes, as its own /metrics reports it (prom-client's default collectors). */
export async function memoryOf(url: string): Promise<Memory> {
  const lines = (await (await fetch(`${url}/metrics`)).text()).split('\n');
  const read = (name: string) => {
    const line = lines.find((l) => l.startsWith(`agent_service_${name}`));
    if (!line) throw new Error(`/metrics has no ${name}`);
    return Number(line.split(' ').at(-1));
  };
  return {
    rss: read('process_resident_memory_bytes'),
    heapUsed: read('nodejs_heap_size_used_bytes'),
    heapTotal: read('nodejs_heap_size_total_bytes'),
    external: read('nodejs_external_memory_bytes'),
  };
}

async function json(res: Response, what: string): Promise<Record<string, unknown>> {
  if (!res.ok) throw new Error(`${what} answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as Record<string, unknown>;
}

export interface Setup {
  siteId: string;
  accessToken: string;
  /** PAYMENT-SIGNATURE headers, one per paid call; taken from the front. */
  payments: string[];
  /** Signs `count` more payments onto `payments`; resolves with the seconds it took. */
  sign: (count: number) => Promise<number>;
}

/** An account with a site, its owner's access token for the owner MCP server, and signed payments. */
export async function setUp(url: string): Promise<Setup> {
  const owner = { email: `load-${Date.now()}@bench.example`, password: 'correct horse battery staple' };
  const account = await json(
    await fetch(`${url}/api/public/account`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(owner),
    }),
    'POST /account',
  );
  const key = (account.key as { service_key: string }).service_key;
  const site = await json(
    await fetch(`${url}/api/public/pixel-install`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-key': key },
      body: JSON.stringify({ domain: 'load-bench.com' }),
    }),
    'POST /pixel-install',
  );
  const client = await OwnerTokenClient.register(`${url}/auth/v1`);
  const tokens = await client.tokens(owner, `${url}/mcp/auth`);

  const unpaid = await fetch(`${url}/api/public/x402/${BENCH_SKU}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ text: 'load' }),
  });
  const required = unpaid.headers.get('payment-required');
  if (unpaid.status !== 402 || !required) throw new Error(`the bench SKU answered ${unpaid.status}`);
  const terms = JSON.parse(Buffer.from(required, 'base64').toString('utf8')) as PaymentRequired;
  const accepted = terms.accepts[0] as PaymentRequirements;
  const payers = Array.from({ length: 16 }, newAccount);
  const payments: string[] = [];
  let signed = 0;
  const sign = async (count: number): Promise<number> => {
    const started = performance.now();
    for (let i = 0; i < count; i++, signed++) {
      payments.push(
        paymentHeader(await signPayment(payers[signed % payers.length] as never, accepted, terms.resource)),
      );
    }
    return (performance.now() - started) / 1000;
  };
  const first = paymentsFixed ?? PAID_RATE_GUESS * warmup;
  const seconds = await sign(first);
  process.stdout.write(
    `  signed ${format(first)} payments in ${format(seconds, 1)} s (valid ${accepted.maxTimeoutSeconds} s)\n`,
  );
  return {
    siteId: site.site_id as string,
    accessToken: tokens.access_token,
    payments,
    sign,
  };
}

/**
 * Payments enough for the run: the paid calls' rate in the warm-up (over the time they ran, which
 * ends early when the payments run out) times the run's length, with headroom. Without it the paid
 * kind stopped half way through a minute on a fast machine and the mix was not a mix any more.
 */
async function topUpPayments(setup: Setup, warm: autocannon.Result): Promise<void> {
  if (paymentsFixed !== undefined) return;
  const rate = warm.duration > 0 ? warm.requests.total / warm.duration : PAID_RATE_GUESS;
  const needed = Math.ceil(rate * duration * PAID_HEADROOM) - setup.payments.length;
  if (needed <= 0) return;
  const seconds = await setup.sign(needed);
  process.stdout.write(
    `  signed ${format(needed)} more payments in ${format(seconds, 1)} s for the run (paid calls ran at ` +
      `${format(rate)}/s in the warm-up)\n`,
  );
}

/** Whether an MCP answer is a tool result (not a JSON-RPC error, not an isError result). */
const toolResult = (body: unknown) => {
  const text = String(body ?? '');
  return text.includes('"result"') && !text.includes('"isError":true');
};

function scenarios(url: string, setup: Setup, seconds: number): Record<Kind, autocannon.Options> {
  const split = Object.entries(SHARES).map(([kind, share]) => [
    kind,
    Math.max(1, Math.round(connections * share)),
  ]);
  // Rounding leaves the total a little off: the card lookups take the difference.
  const given = Object.fromEntries(split) as Record<Kind, number>;
  given.lookup += connections - Object.values(given).reduce((a, b) => a + b, 0);
  let n = 0;
  const mcpCall = (name: string, args: Record<string, unknown>) =>
    JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } });
  const common = { duration: seconds, timeout: 30 };
  return {
    lookup: {
      ...common,
      url,
      connections: given.lookup,
      requests: [
        {
          setupRequest: (request) => ({
            ...request,
            path: `/cs/agent?charge=${encodeURIComponent(DESCRIPTORS[n++ % DESCRIPTORS.length] as string)}`,
          }),
        },
      ],
    },
    beacon: {
      ...common,
      url,
      connections: given.beacon,
      headers: { 'user-agent': CHROME },
      requests: [
        {
          setupRequest: (request) => ({
            ...request,
            path: `/api/public/beacon?site=${setup.siteId}&url=${encodeURIComponent(`https://load-bench.com/p/${n++ % 200}`)}&ref=${encodeURIComponent('https://chatgpt.com/')}`,
          }),
        },
      ],
    },
    mcp: {
      ...common,
      url: `${url}/mcp`,
      connections: given.mcp,
      method: 'POST',
      headers: MCP_HEADERS,
      body: mcpCall('lookup_card_charge', { charge: 'CHECKCARD 0312 NETFLIX.COM 866-579-7172 CA' }),
      verifyBody: toolResult,
    },
    paid: {
      ...common,
      url: `${url}/api/public/x402/${BENCH_SKU}`,
      connections: given.paid,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'load' }),
      // Never more calls than payments left: each payment pays once.
      maxOverallRequests: Math.max(given.paid, setup.payments.length),
      requests: [
        {
          setupRequest: (request) => ({
            ...request,
            headers: { ...request.headers, 'PAYMENT-SIGNATURE': setup.payments.shift() ?? 'exhausted' },
          }),
        },
      ],
      verifyBody: (body: unknown) => String(body ?? '').includes('"echo":"load"'),
    },
    owner: {
      ...common,
      url: `${url}/mcp/auth`,
      connections: given.owner,
      method: 'POST',
      headers: { ...MCP_HEADERS, authorization: `Bearer ${setup.accessToken}` },
      body: mcpCall('list_my_sites', {}),
      verifyBody: toolResult,
    },
  };
}

type Results = Record<Kind, autocannon.Result>;

export async function runMix(url: string, setup: Setup, seconds: number): Promise<Results> {
  const options = scenarios(url, setup, seconds);
  const kinds = Object.keys(options) as Kind[];
  const results = await Promise.all(kinds.map((kind) => autocannon(options[kind])));
  return Object.fromEntries(kinds.map((kind, i) => [kind, results[i]])) as Results;
}

const problemsOf = (r: autocannon.Result) => r.errors + r.timeouts + r.non2xx + r.mismatches;

function report(results: Results, seconds: number): number {
  process.stdout.write(
    `\n  ${'kind'.padEnd(50)}${'conns'.padStart(6)}${'requests'.padStart(10)}${'req/s'.padStart(8)}` +
      `${'p50 ms'.padStart(8)}${'p99 ms'.padStart(8)}  errors / timeouts / non-2xx / wrong body\n`,
  );
  let total = 0;
  let problems = 0;
  for (const kind of Object.keys(SHARES) as Kind[]) {
    const r = results[kind];
    total += r.requests.total;
    problems += problemsOf(r);
    const early =
      r.duration < seconds - 1 ? `  (stopped after ${format(r.duration, 1)} s: payments used up)` : '';
    process.stdout.write(
      `  ${LABELS[kind].padEnd(50)}${String(r.connections).padStart(6)}${format(r.requests.total).padStart(10)}` +
        `${format(r.requests.total / r.duration).padStart(8)}${format(r.latency.p50).padStart(8)}` +
        `${format(r.latency.p99).padStart(8)}  ${r.errors} / ${r.timeouts} / ${r.non2xx} / ${r.mismatches}${early}\n`,
    );
  }
  process.stdout.write(
    `  ${'all'.padEnd(50)}${String(connections).padStart(6)}${format(total).padStart(10)}${format(total / seconds).padStart(8)}\n`,
  );
  return problems;
}

export async function runLoad(): Promise<void> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'agent-service-bench-load-'));
  const databaseUrl = process.env.BENCH_DATABASE_URL;
  const schema = databaseUrl ? `bench_load_${Date.now().toString(36)}` : undefined;
  if (databaseUrl && schema) {
    const admin = openDatabase({ url: databaseUrl });
    await sql.raw(`create schema ${schema}`).execute(admin.db);
    await admin.close();
  }
  let child: ChildProcess | undefined;
  try {
    const cpus = os.cpus();
    process.stdout.write(
      `bench load: ${duration} s at ${connections} connections after a ${warmup} s warm-up, node ${process.version}, ` +
        `${cpus.length} cores (${cpus[0]?.model ?? 'unknown'}), load average ${os
          .loadavg()
          .map((l) => format(l, 2))
          .join(' ')} - the load generator and the service share these cores; ` +
        `${databaseUrl ? 'PostgreSQL' : 'SQLite'}\n`,
    );
    const databaseEnv: Record<string, string> = databaseUrl
      ? {
          DATABASE_URL: `${databaseUrl}${databaseUrl.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`,
        }
      : { DATA_DIR: dataDir };
    const service = await startService(databaseEnv);
    child = service.child;
    const setup = await setUp(service.url);

    if (warmup > 0) {
      const warm = await runMix(service.url, setup, warmup);
      const bad = Object.values(warm).reduce((n, r) => n + problemsOf(r), 0);
      process.stdout.write(
        `  warm-up: ${format(Object.values(warm).reduce((n, r) => n + r.requests.total, 0))} requests, ${bad} problems\n`,
      );
      await topUpPayments(setup, warm.paid);
    }
    // Each reading twice: as the load left it (V8 grows and shrinks its heap on its own schedule, so
    // this moves by tens of percent with the timing of the last major GC), and after a full GC (what
    // is still held: the comparison that finds a leak).
    const readings = async () => {
      const raw = await memoryOf(service.url);
      await collectGarbage(service.inspector);
      return { raw, collected: await memoryOf(service.url) };
    };
    const warm = await readings();
    const results = await runMix(service.url, setup, duration);
    const after = await readings();

    const problems = report(results, duration);
    const mb = (b: number) => `${format(b / 2 ** 20, 1)} MB`;
    const pct = (a: number, b: number) => `${b >= a ? '+' : ''}${format(((b - a) / a) * 100, 1)}%`;
    const line = (what: string, m: Memory) =>
      `    ${what.padEnd(34)} resident ${mb(m.rss).padStart(9)}, heap used ${mb(m.heapUsed).padStart(9)} of ${mb(m.heapTotal).padStart(9)}, external ${mb(m.external).padStart(8)}\n`;
    const growth = (after.collected.rss - warm.collected.rss) / warm.collected.rss;
    process.stdout.write(
      `\n  errors: ${problems}  (target 0: ${problems === 0 ? 'met' : 'MISSED'})\n  memory of the service:\n` +
        line('after the warm-up', warm.raw) +
        line('after the warm-up, full GC', warm.collected) +
        line('right after the run', after.raw) +
        line('right after the run, full GC', after.collected) +
        `  resident after the run ${pct(warm.collected.rss, after.collected.rss)} of after the warm-up, both after a full GC ` +
        `(target within 10%: ${Math.abs(growth) <= 0.1 ? 'met' : 'MISSED'}); as the load left it ${pct(warm.raw.rss, after.raw.rss)}\n`,
    );
  } finally {
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child?.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(dataDir, { recursive: true, force: true });
    if (databaseUrl && schema) {
      const admin = openDatabase({ url: databaseUrl });
      await sql.raw(`drop schema ${schema} cascade`).execute(admin.db);
      await admin.close();
    }
  }
}
