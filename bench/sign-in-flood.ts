/**
 * Password guessing against the service's other work: fires GUESSES concurrent wrong sign-ins at
 * one OAuth sign-in form (`POST {auth_url}/interaction/:uid/login`) and, while they run, one
 * unrelated `POST /account` (which hashes a password too). Prints how long that request took, the
 * answers the guesses got and the service's resident memory before and at its peak. Not a test:
 * numbers for the notes, measured on the service as `npm start` runs it (SQLite in a temp folder).
 *
 * `node --experimental-strip-types bench/sign-in-flood.ts`; GUESSES (default 40); CONFIG_FILE
 * is passed on to the service (e.g. to lift the sign-in limits and measure the hashing queue alone).
 */
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startFlags } from '../scripts/start-command.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const guesses = Number(process.env.GUESSES ?? 40);

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function rssMb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return Math.round(kb / 1024);
}

function cookiesOf(res: Response, jar: Map<string, string>): void {
  for (const line of res.headers.getSetCookie()) {
    const [pair] = line.split(';');
    const eq = (pair ?? '').indexOf('=');
    if (eq > 0) jar.set((pair as string).slice(0, eq), (pair as string).slice(eq + 1));
  }
}
const cookieHeader = (jar: Map<string, string>) => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');

async function main(): Promise<void> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'agent-service-flood-'));
  const port = await freePort();
  const child = spawn(process.execPath, [...startFlags(), 'servers/main.ts'], {
    cwd: root,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'silent' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const site = `http://127.0.0.1:${port}`;
  try {
    for (let i = 0; ; i++) {
      try {
        if ((await fetch(`${site}/api/public/health`)).ok) break;
      } catch {
        // not listening yet
      }
      if (i > 300) throw new Error('service did not start');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const auth = `${site}/auth/v1`;
    const json = { 'content-type': 'application/json' };
    const owner = await fetch(`${site}/api/public/account`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ email: 'owner@example.com', password: 'correct horse battery staple' }),
    });
    if (owner.status !== 201) throw new Error(`account: ${owner.status}`);
    const client = (await (
      await fetch(`${auth}/oauth/clients/register`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ client_name: 'Flood', redirect_uris: ['http://127.0.0.1:9/cb'] }),
      })
    ).json()) as { client_id: string };
    const verifier = randomBytes(32).toString('base64url');
    const authorize = new URL(`${auth}/oauth/authorize`);
    authorize.search = new URLSearchParams({
      client_id: client.client_id,
      redirect_uri: 'http://127.0.0.1:9/cb',
      response_type: 'code',
      scope: 'agent-service',
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    }).toString();
    const jar = new Map<string, string>();
    const start = await fetch(authorize, { redirect: 'manual' });
    cookiesOf(start, jar);
    const formUrl = new URL(start.headers.get('location') as string, authorize).href;
    const form = await fetch(formUrl, { headers: { cookie: cookieHeader(jar) } });
    const csrf = /name="csrf" value="([^"]+)"/.exec(await form.text())?.[1] as string;

    const quietStart = performance.now();
    const quiet = await fetch(`${site}/api/public/account`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ email: 'quiet@example.com', password: 'another long password' }),
    });
    const quietMs = performance.now() - quietStart;
    if (quiet.status !== 201) throw new Error(`account: ${quiet.status}`);

    const rssBefore = rssMb(child.pid as number, 'VmRSS');
    let peak = rssBefore;
    const sampler = setInterval(() => {
      peak = Math.max(peak, rssMb(child.pid as number, 'VmRSS'));
    }, 20);

    const began = performance.now();
    const flood = Array.from({ length: guesses }, async () => {
      const res = await fetch(`${formUrl}/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookieHeader(jar) },
        body: new URLSearchParams({ csrf, email: 'owner@example.com', password: 'wrong guess wrong guess' }),
      });
      await res.arrayBuffer();
      return { status: res.status, ms: performance.now() - began };
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const accountStart = performance.now();
    const account = await fetch(`${site}/api/public/account`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ email: 'someone@example.com', password: 'another long password' }),
    });
    const accountMs = performance.now() - accountStart;
    const results = await Promise.all(flood);
    clearInterval(sampler);

    const statuses = new Map<number, number>();
    for (const r of results) statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
    const lastGuess = Math.max(...results.map((r) => r.ms));
    process.stdout.write(
      `${guesses} concurrent wrong sign-ins: answers ${[...statuses].map(([s, n]) => `${n}x ${s}`).join(', ')}; ` +
        `last answered after ${Math.round(lastGuess)} ms\n` +
        `POST /account meanwhile: ${account.status} in ${Math.round(accountMs)} ms (alone before: ${Math.round(quietMs)} ms)\n` +
        `RSS: ${rssBefore} MB before, ${peak} MB peak during the flood\n`,
    );
  } finally {
    child.kill();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
