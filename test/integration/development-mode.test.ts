/**
 * Issue 33, must hold 1: development mode serves every surface out of the box. The service is
 * started as a newcomer starts it - `npm start`'s command with nothing set but PORT and DATA_DIR
 * (and DATABASE_URL for the PostgreSQL run) - and paid through `npm run pay`'s command: the 402
 * names a development pay-to address kept in DATA_DIR, the stock x402 client signs with a payer key
 * kept there too, and a local domain (the service itself) scans, verifies and lists. Production
 * mode keeps what it did: no PAY_TO answers 503, local names are refused, and the development
 * address is refused as PAY_TO.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../servers/config.ts';
import { createTestDatabase, dialects, type TestDatabase } from '../helpers/databases.ts';
import { freePort } from '../helpers/ports.ts';
import { childEnv, type ServiceProcess, spawnService } from '../helpers/process.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are checked structurally
type Json = Record<string, any>;

/** `npm run pay`'s command as package.json has it: `node <flags> scripts/pay.ts`. */
function payCommand(): string[] {
  const { scripts } = JSON.parse(readFileSync(path.join(projectRoot, 'package.json'), 'utf8')) as {
    scripts: { pay: string };
  };
  const words = scripts.pay.trim().split(/\s+/);
  if (words[0] !== 'node' || words.at(-1) !== 'scripts/pay.ts')
    throw new Error(`package.json pay script is not "node <flags> scripts/pay.ts": ${scripts.pay}`);
  return words.slice(1);
}

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `npm run pay -- <args>` from the project root, with only these variables set. */
function pay(args: string[], env: Record<string, string>): Promise<Ran> {
  const child = spawn(process.execPath, [...payCommand(), ...args], {
    cwd: projectRoot,
    env: { ...childEnv(), ...env },
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
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The JSON block printed under a heading line (indented two spaces), parsed. */
function blockAfter(stdout: string, heading: RegExp): Json {
  const lines = stdout.split('\n');
  const start = lines.findIndex((line) => heading.test(line));
  if (start < 0) throw new Error(`no ${heading} in:\n${stdout}`);
  const block: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (!line.startsWith('  ')) break;
    block.push(line);
  }
  return JSON.parse(block.join('\n')) as Json;
}

const fieldOf = (stdout: string, label: string): string | undefined =>
  new RegExp(`^\\s+${label}:\\s+(\\S+)`, 'm').exec(stdout)?.[1];

/** The development pay-to address announced at start, from the process's log lines. */
function announcedPayTo(service: ServiceProcess): string | undefined {
  for (const line of service.output().split('\n')) {
    if (!line.startsWith('{')) continue;
    const entry = JSON.parse(line) as Json;
    if (typeof entry.msg === 'string' && entry.msg.startsWith('development mode: paid SKUs'))
      return entry.pay_to;
  }
  return undefined;
}

const mode = (file: string) => statSync(file).mode & 0o777;

describe.each(dialects)('development mode, started with nothing set (%s)', (dialect) => {
  let dataDir: string;
  let database: TestDatabase | undefined;
  let service: ServiceProcess | undefined;
  let env: Record<string, string>;
  let port: string;
  let payTo: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'agent-service-dev-'));
    if (dialect === 'postgres') database = await createTestDatabase('postgres');
    env = { DATA_DIR: dataDir, ...(database?.env ?? {}) };
    service = await spawnService(env);
    port = new URL(service.url).port;
  }, 180_000);
  afterAll(async () => {
    await service?.stop();
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('announces a development pay-to address kept in DATA_DIR, and every paid SKU answers 402 to it', async () => {
    const running = service as ServiceProcess;
    payTo = announcedPayTo(running) as string;
    expect(payTo, running.output()).toMatch(/^0x[0-9a-fA-F]{40}$/);
    expect(running.output()).toContain(`npm run pay -- signal '{\\"domain\\":\\"localhost:${port}\\"}'`);
    const file = path.join(dataDir, 'development-pay-to.key.json');
    expect(mode(file)).toBe(0o600);
    const kept = JSON.parse(readFileSync(file, 'utf8')) as Json;
    expect(kept.address).toBe(payTo);
    expect(kept.private_key).toMatch(/^0x[0-9a-f]{64}$/);

    const document = (await (await fetch(`${running.url}/.well-known/x402.json`)).json()) as Json;
    expect(document.payments_enabled).toBe(true);
    const signal = document.resources.find((r: Json) => r.sku === 'signal');
    expect(signal).toMatchObject({ available: true, accepts: [{ payTo }] });
    const unpaid = await fetch(`${running.url}/api/public/x402/signal`, { method: 'POST' });
    expect(unpaid.status).toBe(402);
    await unpaid.arrayBuffer();
    expect(decodePaymentRequiredHeader(unpaid.headers.get('payment-required') ?? '').accepts[0]?.payTo).toBe(
      payTo,
    );
  });

  it('pays a scan of the service itself with npm run pay, and prints the terms, the payment, the result and the receipt', async () => {
    const running = service as ServiceProcess;
    const domain = `localhost:${port}`;
    const ran = await pay(['signal', JSON.stringify({ domain })], { PORT: port, DATA_DIR: dataDir });
    expect(ran.code, `${ran.stdout}\n${ran.stderr}`).toBe(0);
    const { stdout } = ran;
    expect(stdout).toContain(`402 Payment Required from http://localhost:${port}/api/public/x402/signal`);
    expect(stdout).toMatch(/price:\s+0\.1 USDC \(100000 atomic units\)/);
    expect(fieldOf(stdout, 'pay to')).toBe(payTo);

    const payerFile = path.join(dataDir, 'development-payer.key.json');
    expect(mode(payerFile)).toBe(0o600);
    const payer = (JSON.parse(readFileSync(payerFile, 'utf8')) as Json).address as string;
    expect(stdout).toContain(`Payer ${payer} (generated now, key in ${payerFile})`);
    expect(stdout).toMatch(/^Signed payment \(x402 v2, exact, EIP-3009 TransferWithAuthorization\)$/m);
    expect(fieldOf(stdout, 'payer')).toBe(payer);
    expect(fieldOf(stdout, 'network')).toBe('eip155:8453');
    expect(fieldOf(stdout, 'to')).toBe(payTo);

    expect(stdout).toMatch(/^Result: 200 OK$/m);
    const result = blockAfter(stdout, /^Result: /);
    expect(result).toMatchObject({ domain, depth: 'quick' });
    expect(result.score).toBeGreaterThan(50);
    expect(result.pages_read).toBeGreaterThan(0);

    const receipt = blockAfter(stdout, /^Receipt \(PAYMENT-RESPONSE, decoded\)$/);
    // The embedded facilitator checked the signature offline: authorized, nothing on chain.
    expect(receipt).toMatchObject({
      success: true,
      status: 'authorized',
      network: 'eip155:8453',
      transaction: '',
      payer: payer.toLowerCase(),
    });
    const stored = (await (await fetch(`${running.url}/api/public/payments/${receipt.id}`)).json()) as Json;
    expect(stored).toMatchObject({ id: receipt.id, status: 'authorized', payer: payer.toLowerCase() });

    // The second call signs with the same kept key.
    const again = await pay(['signal', JSON.stringify({ domain })], { PORT: port, DATA_DIR: dataDir });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain(`Payer ${payer} (key in ${payerFile})`);
  }, 120_000);

  it('says what is wrong with an unknown SKU (listing them), bad JSON, and a service that is not running', async () => {
    const unknown = await pay(['no-such-sku', '{}'], { PORT: port, DATA_DIR: dataDir });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain(`unknown SKU "no-such-sku"; http://localhost:${port} sells:`);
    for (const sku of ['signal', 'scan', 'llms-txt', 'spotlight']) expect(unknown.stderr).toMatch(` ${sku} `);

    const badJson = await pay(['signal', '{domain: localhost}'], { PORT: port, DATA_DIR: dataDir });
    expect(badJson.code).toBe(2);
    expect(badJson.stderr).toMatch(/^the input is not JSON \(.+\): e\.g\. '\{"domain":"example\.com"\}'$/m);

    const notAnObject = await pay(['signal', '["localhost"]'], { PORT: port, DATA_DIR: dataDir });
    expect(notAnObject.code).toBe(2);
    expect(notAnObject.stderr).toContain('the input must be a JSON object');

    const closed = await freePort();
    const down = await pay(['signal', '{"domain":"example.com"}', '--url', `http://127.0.0.1:${closed}`], {
      DATA_DIR: dataDir,
    });
    expect(down.code).toBe(1);
    expect(down.stderr).toContain(
      `no service answers at http://127.0.0.1:${closed} (ECONNREFUSED): start it with npm start, or name it with --url`,
    );
    // Nothing was signed for any of them.
    for (const ran of [unknown, badJson, notAnObject, down])
      expect(ran.stdout).not.toContain('Signed payment');
  }, 60_000);

  it('registers the service itself as a site, verifies it through the file it serves, and lists it', async () => {
    const api = `${(service as ServiceProcess).url}/api/public`;
    const domain = `localhost:${port}`;
    const installed = (await (
      await fetch(`${api}/pixel-install`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ domain, email: 'newcomer@example.com' }),
      })
    ).json()) as Json;
    expect(installed).toMatchObject({ domain, verified: false });
    const key = installed.key.service_key as string;
    const file = await fetch(installed.verification.http.url);
    expect(await file.text()).toContain(`agent-service-verification=${installed.verification.token}\n`);

    const verified = await fetch(`${api}/sites/${installed.site_id}/verify`, {
      method: 'POST',
      headers: { 'x-service-key': key },
    });
    expect(await verified.json()).toMatchObject({
      verified: true,
      verification_method: 'http',
      checks: [
        {
          method: 'http',
          passed: true,
          detail: `token found at http://${domain}/.well-known/agent-service-verification.txt`,
        },
      ],
    });

    const listing = await fetch(`${api}/listings`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-key': key },
      body: JSON.stringify({
        domain,
        name: 'This service, locally',
        description: 'The development service, listed by its own developer.',
        category: 'developer_tools',
        url: `http://${domain}/`,
        contact: { email: 'newcomer@example.com' },
      }),
    });
    expect(listing.status).toBe(200);
    expect(await listing.json()).toMatchObject({ domain, status: 'listed' });
    const found = (await (await fetch(`${api}/listings?q=locally`)).json()) as Json;
    expect(found.listings.map((l: Json) => l.domain)).toEqual([domain]);

    // A local name that is not this service must serve its own file: nothing answers there.
    const closed = await freePort();
    const elsewhere = (await (
      await fetch(`${api}/pixel-install`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-service-key': key },
        body: JSON.stringify({ domain: `127.0.0.1:${closed}` }),
      })
    ).json()) as Json;
    const notVerified = await fetch(`${api}/sites/${elsewhere.site_id}/verify`, {
      method: 'POST',
      headers: { 'x-service-key': key },
    });
    expect(await notVerified.json()).toMatchObject({ verified: false });
  }, 60_000);

  it('keeps the same development address across restarts', async () => {
    const stopped = await (service as ServiceProcess).stop();
    expect(stopped).toBe(0);
    service = await spawnService(env);
    expect(announcedPayTo(service)).toBe(payTo);
    const unpaid = await fetch(`${service.url}/api/public/x402/scan`, { method: 'POST' });
    await unpaid.arrayBuffer();
    expect(decodePaymentRequiredHeader(unpaid.headers.get('payment-required') ?? '').accepts[0]?.payTo).toBe(
      payTo,
    );
  }, 180_000);
});

describe.each(dialects)('production mode keeps refusing (%s)', (dialect) => {
  let dataDir: string;
  let database: TestDatabase | undefined;
  let service: ServiceProcess | undefined;
  let env: Record<string, string>;

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'agent-service-prod-'));
    if (dialect === 'postgres') database = await createTestDatabase('postgres');
    env = {
      NODE_ENV: 'production',
      SITE_URL: 'https://agents.example.com',
      DATA_DIR: dataDir,
      ...(database?.env ?? {}),
    };
    service = await spawnService(env);
  }, 180_000);
  afterAll(async () => {
    await service?.stop();
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers paid SKUs 503 naming PAY_TO, with no development address', async () => {
    const running = service as ServiceProcess;
    const res = await fetch(`${running.url}/api/public/x402/signal`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ domain: 'example.com' }),
    });
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({
      code: 'sku_unavailable',
      detail: expect.stringContaining('PAY_TO'),
    });
    expect(res.headers.get('payment-required')).toBeNull();
    expect(running.output()).toContain('payments.pay_to (PAY_TO) is not set');
    expect(announcedPayTo(running)).toBeUndefined();
    expect(() => statSync(path.join(dataDir, 'development-pay-to.key.json'))).toThrow(/ENOENT/);
  });

  it('refuses local domains: no scan, no site', async () => {
    const api = `${(service as ServiceProcess).url}/api/public`;
    const port = new URL((service as ServiceProcess).url).port;
    for (const domain of [`localhost:${port}`, `127.0.0.1:${port}`]) {
      const scan = await fetch(`${api}/signal?domain=${encodeURIComponent(domain)}`);
      expect(scan.status, domain).toBe(400);
      expect((await scan.json()).errors).toEqual([
        { field: 'domain', message: 'must be a public domain name' },
      ]);
      const site = await fetch(`${api}/pixel-install`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ domain, email: 'owner@example.com' }),
      });
      expect(site.status, domain).toBe(400);
      expect((await site.json()).errors).toEqual([
        { field: 'domain', message: 'must be a public domain name' },
      ]);
    }
    // And serves no verification file for its own names.
    const file = await fetch(`${(service as ServiceProcess).url}/.well-known/agent-service-verification.txt`);
    expect(file.status).toBe(404);
    await file.arrayBuffer();
  });

  it('refuses to start with the development address of its DATA_DIR as PAY_TO', async () => {
    await (service as ServiceProcess).stop();
    service = undefined;
    // A development start in the same DATA_DIR made the address.
    const development = await spawnService({ DATA_DIR: dataDir, ...(database?.env ?? {}) });
    const address = announcedPayTo(development) as string;
    expect(address).toMatch(/^0x[0-9a-fA-F]{40}$/);
    await development.stop();
    await expect(spawnService({ ...env, PAY_TO: address })).rejects.toThrow(
      new RegExp(
        `service exited with 78: [\\s\\S]*payments\\.pay_to \\(PAY_TO\\): ${address} is the development address`,
      ),
    );
  }, 180_000);
});
