/**
 * The keys of development mode, generated once and kept in `DATA_DIR` (mode 0600): the pay-to
 * address a development service sells its paid SKUs for when no `PAY_TO` is set (`startService`),
 * and the payer key `npm run pay` signs with (`scripts/pay.ts`). Each is a real secp256k1 key, so
 * what is paid to the development address stays the developer's on a test network; production
 * never uses them (`startService` refuses a `PAY_TO` that is the development address).
 */
import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { getAddress, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';

export type DevelopmentKeyName = 'pay-to' | 'payer';

export interface DevelopmentKey {
  address: `0x${string}`;
  privateKey: Hex;
  /** Absolute path of the file that holds it. */
  file: string;
  /** Whether this call generated it (first start, or a `DATA_DIR` emptied since). */
  created: boolean;
}

const PURPOSE: Record<DevelopmentKeyName, string> = {
  'pay-to':
    'Development pay-to address: paid SKUs of a development service (NODE_ENV unset, no PAY_TO) are payable to it. Never used in production.',
  payer: 'Development payer key: npm run pay signs x402 payments with it. Unfunded; for local calls.',
};

export const developmentKeyFile = (dataDir: string, name: DevelopmentKeyName): string =>
  path.resolve(dataDir, `development-${name}.key.json`);

/** The key kept in `DATA_DIR` under `name`, or null when there is none yet. Throws on a damaged file. */
export function readDevelopmentKey(dataDir: string, name: DevelopmentKeyName): DevelopmentKey | null {
  const file = developmentKeyFile(dataDir, name);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  const damaged = (why: string) =>
    new Error(`${file}: ${why}; delete the file and a new ${name} key is generated at the next start`);
  let stored: { address?: unknown; private_key?: unknown };
  try {
    stored = JSON.parse(text) as typeof stored;
  } catch {
    throw damaged('not JSON');
  }
  if (typeof stored.private_key !== 'string' || !/^0x[0-9a-fA-F]{64}$/.test(stored.private_key))
    throw damaged('private_key is not a 32-byte hex key');
  const privateKey = stored.private_key as Hex;
  const { address } = privateKeyToAccount(privateKey);
  if (typeof stored.address !== 'string' || stored.address.toLowerCase() !== address.toLowerCase())
    throw damaged('address is not the address of private_key');
  return { address, privateKey, file, created: false };
}

/**
 * The key kept in `DATA_DIR` under `name`, generated on first use. Creation is atomic and happens
 * once even when several processes start at the same moment (`WORKERS=N`): the file is written
 * whole under a private name, then linked into place, which fails when another process won.
 */
export function developmentKey(dataDir: string, name: DevelopmentKeyName): DevelopmentKey {
  const existing = readDevelopmentKey(dataDir, name);
  if (existing) return existing;
  const file = developmentKeyFile(dataDir, name);
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const privateKey = generatePrivateKey();
  const address = getAddress(privateKeyToAccount(privateKey).address);
  const draft = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  writeFileSync(
    draft,
    `${JSON.stringify({ purpose: PURPOSE[name], address, private_key: privateKey }, null, 2)}\n`,
    { mode: 0o600, flag: 'wx' },
  );
  try {
    linkSync(draft, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    const winner = readDevelopmentKey(dataDir, name);
    if (!winner) throw err;
    return winner;
  } finally {
    unlinkSync(draft);
  }
  return { address, privateKey, file, created: true };
}
