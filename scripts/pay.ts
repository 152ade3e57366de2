/**
 * `npm run pay -- <sku> '<json input>'`: pays one paid SKU of a running service as any x402 client
 * does - the stock `@x402/fetch` with a viem account - and shows each step: the 402's terms, the
 * payment signed, the result and the receipt (PAYMENT-RESPONSE). The payer key is generated once
 * and kept in `DATA_DIR` (`development-payer.key.json`, mode 0600); it holds no funds, which a
 * development service does not need (its embedded facilitator checks the signature offline).
 *
 * Options: `--url <service>` (or SERVICE_URL; default: the configured site_url,
 * http://localhost:8787), `--max-usdc <n>` (the most it signs for without asking; default the SKU's
 * catalog price).
 */
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from '@x402/core/http';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { privateKeyToAccount } from 'viem/accounts';
import { ConfigError, loadConfig } from '../servers/config.ts';
import { developmentKey } from '../servers/payments/development-keys.ts';
import { usdcText } from '../servers/payments/networks.ts';

interface Resource {
  sku: string;
  resource: string;
  price_usdc: number;
  pricing: 'fixed' | 'caller_set';
  input_example: Record<string, unknown>;
  available: boolean;
  unavailable_reason: string | null;
}

const USAGE =
  "usage: npm run pay -- <sku> '<json input>' [--url <service url>] [--max-usdc <n>]\n" +
  `  e.g. npm run pay -- signal '{"domain":"localhost:8787"}'`;

/** What the script refuses to do, said in one message; the exit code says which kind (2: usage). */
class Refusal extends Error {
  readonly exitCode: number;
  constructor(message: string, exitCode = 2) {
    super(message);
    this.exitCode = exitCode;
  }
}

const out = (text = '') => process.stdout.write(`${text}\n`);
const indent = (value: unknown) => JSON.stringify(value, null, 2).replace(/^/gm, '  ');
const atomic = (amount: string) => `${usdcText(BigInt(amount))} USDC (${amount} atomic units)`;

function parseArgs(argv: string[]): { sku?: string; input?: string; url?: string; maxUsdc?: number } {
  const positional: string[] = [];
  const options: { url?: string; maxUsdc?: number } = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const [flag, inline] = arg.startsWith('--') ? arg.split(/=(.*)/s) : [arg];
    if (flag === '--url' || flag === '--max-usdc') {
      const value = inline ?? argv[++i];
      if (value === undefined) throw new Refusal(`${flag} needs a value\n${USAGE}`);
      if (flag === '--url') options.url = value;
      else {
        const max = Number(value);
        if (!Number.isFinite(max) || max <= 0)
          throw new Refusal(`--max-usdc must be a positive number of USDC`);
        options.maxUsdc = max;
      }
    } else if (flag === '--help' || flag === '-h') {
      throw new Refusal(USAGE, 0);
    } else if (arg.startsWith('--')) {
      throw new Refusal(`unknown option ${flag}\n${USAGE}`);
    } else positional.push(arg);
  }
  if (positional.length > 2) throw new Refusal(`too many arguments (quote the JSON input)\n${USAGE}`);
  const [sku, input] = positional;
  return { ...(sku ? { sku } : {}), ...(input !== undefined ? { input } : {}), ...options };
}

/** The service's paid catalog (`/.well-known/x402.json`); a clear refusal when nothing answers there. */
async function catalogOf(base: string): Promise<Resource[]> {
  const url = `${base}/.well-known/x402.json`;
  let res: Response;
  try {
    res = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).message;
    throw new Refusal(
      `no service answers at ${base} (${cause}): start it with npm start, or name it with --url`,
      1,
    );
  }
  const body = (await res.json().catch(() => null)) as { resources?: Resource[] } | null;
  if (!res.ok || !Array.isArray(body?.resources))
    throw new Refusal(`${url} answered ${res.status} without a paid catalog: is ${base} this service?`, 1);
  return body.resources;
}

function skuList(resources: Resource[]): string {
  return resources
    .map(
      (r) =>
        `  ${r.sku.padEnd(18)} ${String(r.price_usdc).padStart(5)} USDC${r.pricing === 'caller_set' ? ' or more' : ''}` +
        `  ${JSON.stringify(r.input_example)}${r.available ? '' : `  (unavailable: ${r.unavailable_reason})`}`,
    )
    .join('\n');
}

function inputOf(text: string | undefined, resource: Resource): Record<string, unknown> {
  const example = `'${JSON.stringify(resource.input_example)}'`;
  if (text === undefined) throw new Refusal(`give ${resource.sku}'s input as JSON, e.g. ${example}`);
  let input: unknown;
  try {
    input = JSON.parse(text);
  } catch (err) {
    throw new Refusal(`the input is not JSON (${(err as Error).message}): e.g. ${example}`);
  }
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    throw new Refusal(`the input must be a JSON object, e.g. ${example}`);
  return input as Record<string, unknown>;
}

function showTerms(url: string, res: Response): void {
  const header = res.headers.get('payment-required');
  out(`402 Payment Required from ${url}`);
  if (!header) return;
  const required = decodePaymentRequiredHeader(header);
  if (required.error) out(`  reason:   ${required.error}`);
  for (const accepts of required.accepts as PaymentRequirements[]) {
    out(`  price:    ${atomic(accepts.amount)}, scheme ${accepts.scheme}`);
    out(`  network:  ${accepts.network}`);
    out(`  asset:    ${accepts.asset} (${String(accepts.extra?.name)} ${String(accepts.extra?.version)})`);
    out(`  pay to:   ${accepts.payTo}`);
    out(`  valid for ${accepts.maxTimeoutSeconds} s after signing`);
  }
}

function showPayment(payload: PaymentPayload): void {
  const auth = (payload.payload as { authorization?: Record<string, string> }).authorization;
  out('');
  out(
    `Signed payment (x402 v${payload.x402Version}, ${payload.accepted.scheme}, EIP-3009 TransferWithAuthorization)`,
  );
  out(`  payer:    ${auth?.from ?? '?'}`);
  out(`  amount:   ${atomic(auth?.value ?? payload.accepted.amount)}`);
  out(`  network:  ${payload.accepted.network}`);
  out(`  to:       ${auth?.to ?? payload.accepted.payTo}`);
  if (auth?.validBefore) out(`  valid until ${new Date(Number(auth.validBefore) * 1000).toISOString()}`);
}

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2));
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) throw new Refusal(err.message, 78);
    throw err;
  }
  const base = (args.url ?? process.env.SERVICE_URL ?? config.site_url).replace(/\/+$/, '');
  const resources = await catalogOf(base);
  if (!args.sku) throw new Refusal(`${USAGE}\n\nSKUs of ${base}:\n${skuList(resources)}`);
  const resource = resources.find((r) => r.sku === args.sku);
  if (!resource) throw new Refusal(`unknown SKU "${args.sku}"; ${base} sells:\n${skuList(resources)}`);
  const input = inputOf(args.input, resource);
  if (!resource.available) {
    throw new Refusal(`${resource.sku} cannot be bought on ${base} now: ${resource.unavailable_reason}`, 1);
  }

  const payer = developmentKey(config.data_dir, 'payer');
  out(`Payer ${payer.address} (${payer.created ? 'generated now, ' : ''}key in ${payer.file})`);
  const maxUsdc = args.maxUsdc ?? resource.price_usdc;
  const client = new x402Client();
  registerExactEvmScheme(client, { signer: privateKeyToAccount(payer.privateKey) });
  client.setSpendControls({ maxAmountPerPayment: `$${maxUsdc}` });
  let asked: string | undefined;
  client.onAfterPaymentCreation(async ({ paymentPayload }) => showPayment(paymentPayload));

  // The stock client makes the calls; this fetch only shows what passes.
  const url = `${base}${new URL(resource.resource).pathname}`;
  const observed: typeof fetch = async (request, init) => {
    const res = await fetch(request, init);
    if (res.status === 402 && !(request instanceof Request && request.headers.has('payment-signature'))) {
      showTerms(url, res);
      const header = res.headers.get('payment-required');
      asked = header ? decodePaymentRequiredHeader(header).accepts[0]?.amount : undefined;
    }
    return res;
  };
  const pay = wrapFetchWithPayment(observed, client);
  out(`POST ${url} ${JSON.stringify(input)}`);
  out('');
  let res: Response;
  try {
    res = await pay(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(input),
    });
  } catch (err) {
    const message = (err as Error).message;
    if (asked && BigInt(asked) > BigInt(Math.round(maxUsdc * 1e6)))
      throw new Refusal(
        `not paid: the 402 asks ${usdcText(BigInt(asked))} USDC, more than --max-usdc ${maxUsdc}; ` +
          `pass --max-usdc ${usdcText(BigInt(asked))} to pay it (${message})`,
        1,
      );
    if ((err as { cause?: { code?: string } }).cause?.code)
      throw new Refusal(`the service stopped answering at ${base} (${message})`, 1);
    throw new Refusal(`not paid: ${message}`, 1);
  }
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // shown as text
  }
  out('');
  out(`Result: ${res.status} ${res.statusText}`);
  out(typeof body === 'string' ? body : indent(body));
  const receipt = res.headers.get('payment-response');
  if (receipt) {
    out('');
    out('Receipt (PAYMENT-RESPONSE, decoded)');
    out(indent(decodePaymentResponseHeader(receipt)));
  } else if (res.status === 402) {
    showTerms(url, res);
  }
  return res.ok ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    if (err instanceof Refusal) {
      (err.exitCode === 0 ? process.stdout : process.stderr).write(`${err.message}\n`);
      process.exit(err.exitCode);
    }
    console.error(err);
    process.exit(1);
  },
);
