/**
 * A local EVM chain for payment tests: chain id 8453 (Base), run in process by EDR (the Rust EVM
 * inside Hardhat, `@nomicfoundation/edr`) and served over JSON-RPC HTTP on 127.0.0.1, so the service
 * under test, a child process or the facilitator of x402-facilitator.ts reach it with a plain viem
 * `http(rpcUrl)` transport. USDC's address holds TestUsdc (contracts/chain-contracts.sol: the
 * FiatTokenV2 surface x402 uses, EIP-712 domain {name: "USD Coin", version: "2"}) and Multicall3's
 * canonical address a Multicall3 subset, both from genesis. Blocks are mined on each transaction and
 * stamped with the wall clock, so authorization windows behave as on Base. Three accounts hold ETH
 * for gas (the payer also starts with USDC); `newAccount` makes more. Starting takes milliseconds:
 * start one chain per test file.
 */
import http from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import type * as Edr from '@nomicfoundation/edr';
import {
  type Address,
  createPublicClient,
  encodeAbiParameters,
  type Hex,
  type HttpTransport,
  hexToBytes,
  http as httpTransport,
  keccak256,
  numberToHex,
  type PublicClient,
  toHex,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { base } from 'viem/chains';
import {
  multicall3SubsetRuntimeCode,
  testUsdcAbi,
  testUsdcRuntimeCode,
} from './contracts/chain-contracts.generated.ts';

// EDR is a CommonJS native addon.
const edr = createRequire(import.meta.url)('@nomicfoundation/edr') as typeof Edr;

export const BASE_CHAIN_ID = 8453;
export const BASE_NETWORK = 'eip155:8453';
/** USDC on Base mainnet; its EIP-712 domain is {name: "USD Coin", version: "2"}. */
export const USDC_ADDRESS: Address = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';
export const MULTICALL3_ADDRESS: Address = '0xcA11bde05977b3631167028862bE2a173976CA11';
/** One USDC in atomic units (6 decimals). */
export const USDC = 1_000_000n;

// TestUsdc's storage layout (chain-contracts.sol): balances at slot 0, total supply at slot 2.
const BALANCES_SLOT = 0n;
const TOTAL_SUPPLY_SLOT = 2n;
const GAS_ETH = 10n ** 21n; // 1000 ETH

export interface ChainAccount {
  privateKey: Hex;
  address: Address;
}

export interface LocalChain {
  /** `http://127.0.0.1:PORT`: JSON-RPC over HTTP POST, single or batch. */
  rpcUrl: string;
  chainId: typeof BASE_CHAIN_ID;
  /** CAIP-2 id of the chain, as x402 v2 names it. */
  network: typeof BASE_NETWORK;
  usdcAddress: Address;
  accounts: {
    /** Signs authorizations; starts with `payerUsdc` (default 100 USDC). */
    payer: ChainAccount;
    /** Receives payments; starts with no USDC. */
    payTo: ChainAccount;
    /** Submits settlements and pays their gas. */
    settler: ChainAccount;
  };
  /** A viem client on `rpcUrl` for reads, receipts and blocks. */
  client: PublicClient<HttpTransport, typeof base>;
  /** A fresh account holding gas ETH and `usdc` atomic units. */
  newAccount(usdc?: bigint): Promise<ChainAccount>;
  /** Credits `to` with `atomicAmount` USDC units (writes the token's storage; no transaction). */
  mint(to: Address, atomicAmount: bigint): Promise<void>;
  balanceOf(address: Address): Promise<bigint>;
  /** EIP-3009 `authorizationState`: true once the (authorizer, nonce) was used or canceled. */
  authorizationState(authorizer: Address, nonce: Hex): Promise<boolean>;
  /** A raw JSON-RPC call in process, e.g. `evm_increaseTime`, `evm_mine`, `hardhat_setBalance`. */
  rpc(method: string, params?: unknown[]): Promise<unknown>;
  close(): Promise<void>;
}

export interface LocalChainOptions {
  /** USDC atomic units the payer starts with (default 100 USDC). */
  payerUsdc?: bigint;
}

export class JsonRpcError extends Error {
  readonly code: number;
  readonly data: unknown;
  constructor(error: { code: number; message: string; data?: unknown }) {
    super(error.message);
    this.code = error.code;
    this.data = error.data;
  }
}

// "Should only be called once" per process (EdrContext's documentation).
let edrContext: Promise<Edr.EdrContext> | undefined;
function context(): Promise<Edr.EdrContext> {
  edrContext ??= (async () => {
    const ctx = new edr.EdrContext();
    await ctx.registerProviderFactory(edr.L1_CHAIN_TYPE, edr.l1ProviderFactory());
    return ctx;
  })();
  return edrContext;
}

function newChainAccount(): ChainAccount {
  const privateKey = generatePrivateKey();
  return { privateKey, address: privateKeyToAccount(privateKey).address };
}

export async function startLocalChain(options: LocalChainOptions = {}): Promise<LocalChain> {
  const accounts = { payer: newChainAccount(), payTo: newChainAccount(), settler: newChainAccount() };
  const hardfork = edr.SpecId.Prague; // Base's Isthmus upgrade brought Prague's EVM changes
  const provider = await (await context()).createProvider(
    edr.L1_CHAIN_TYPE,
    {
      allowBlocksWithSameTimestamp: false,
      allowUnlimitedContractSize: false,
      // As a node does: a reverting eth_call/eth_estimateGas is a JSON-RPC error (the facilitator's
      // simulation relies on it), a reverting transaction is mined with a failed receipt.
      bailOnCallFailure: true,
      bailOnTransactionFailure: false,
      chainId: BigInt(BASE_CHAIN_ID),
      coinbase: new Uint8Array(20),
      defaultTransactionGasLimit: 30_000_000n,
      genesisState: [
        ...edr.l1GenesisState(hardfork),
        { address: hexToBytes(USDC_ADDRESS), code: hexToBytes(testUsdcRuntimeCode) },
        { address: hexToBytes(MULTICALL3_ADDRESS), code: hexToBytes(multicall3SubsetRuntimeCode) },
        ...Object.values(accounts).map((a) => ({ address: hexToBytes(a.address), balance: GAS_ETH })),
      ],
      hardfork: edr.l1HardforkToString(hardfork),
      initialBaseFeePerGas: 1_000_000_000n,
      minGasPrice: 0n,
      mining: { autoMine: true, memPool: { order: edr.MineOrdering.Priority } },
      network: { genesisBlockGasLimit: 60_000_000n },
      networkId: BigInt(BASE_CHAIN_ID),
      observability: {},
      ownedAccounts: Object.values(accounts).map((a) => a.privateKey),
      precompileOverrides: [],
    },
    { enable: false, decodeConsoleLogInputsCallback: () => [], printLineCallback: () => {} },
    { subscriptionCallback: () => {} },
    new edr.ContractDecoder(),
  );

  /**
   * One JSON-RPC request object in, one response object out. JSON-RPC 2.0 lets a request omit
   * `params` (viem does for methods without them) where EDR requires it, and EDR answers without
   * `jsonrpc` and `id`.
   */
  async function handle(request: unknown): Promise<Record<string, unknown>> {
    if (typeof request !== 'object' || request === null || Array.isArray(request))
      return { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request' } };
    const { id = null, params = [] } = request as { id?: unknown; params?: unknown };
    const response = await provider.handleRequest(JSON.stringify({ ...request, params }));
    const data = typeof response.data === 'string' ? JSON.parse(response.data) : response.data;
    return { jsonrpc: '2.0', id, ...data };
  }

  async function rpc(method: string, params: unknown[] = []): Promise<unknown> {
    const response = await handle({ jsonrpc: '2.0', id: 1, method, params });
    if (response.error)
      throw new JsonRpcError(response.error as ConstructorParameters<typeof JsonRpcError>[0]);
    return response.result;
  }

  const server = http.createServer((req, res) => {
    if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'POST' }).end();
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        body = undefined;
      }
      const answer =
        body === undefined
          ? { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } }
          : Array.isArray(body)
            ? await Promise.all(body.map(handle))
            : await handle(body);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const rpcUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const client = createPublicClient({ chain: base, transport: httpTransport(rpcUrl), pollingInterval: 50 });

  const balanceSlot = (address: Address) =>
    keccak256(encodeAbiParameters([{ type: 'address' }, { type: 'uint256' }], [address, BALANCES_SLOT]));
  const readSlot = async (slot: Hex) => BigInt((await rpc('eth_getStorageAt', [USDC_ADDRESS, slot])) as Hex);
  const writeSlot = (slot: Hex, value: bigint) =>
    rpc('hardhat_setStorageAt', [USDC_ADDRESS, slot, numberToHex(value, { size: 32 })]);

  // Read-modify-write of two slots: mints run one at a time.
  let minting: Promise<unknown> = Promise.resolve();
  function mint(to: Address, atomicAmount: bigint): Promise<void> {
    const run = minting.then(async () => {
      const slot = balanceSlot(to);
      const supplySlot = toHex(TOTAL_SUPPLY_SLOT, { size: 32 });
      await writeSlot(slot, (await readSlot(slot)) + atomicAmount);
      await writeSlot(supplySlot, (await readSlot(supplySlot)) + atomicAmount);
    });
    minting = run.catch(() => {});
    return run;
  }

  await mint(accounts.payer.address, options.payerUsdc ?? 100n * USDC);

  return {
    rpcUrl,
    chainId: BASE_CHAIN_ID,
    network: BASE_NETWORK,
    usdcAddress: USDC_ADDRESS,
    accounts,
    client,
    async newAccount(usdc = 0n) {
      const account = newChainAccount();
      await rpc('hardhat_setBalance', [account.address, numberToHex(GAS_ETH)]);
      if (usdc > 0n) await mint(account.address, usdc);
      return account;
    },
    mint,
    balanceOf: (address) =>
      client.readContract({
        address: USDC_ADDRESS,
        abi: testUsdcAbi,
        functionName: 'balanceOf',
        args: [address],
      }),
    authorizationState: (authorizer, nonce) =>
      client.readContract({
        address: USDC_ADDRESS,
        abi: testUsdcAbi,
        functionName: 'authorizationState',
        args: [authorizer, nonce],
      }),
    rpc,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
