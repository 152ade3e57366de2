/**
 * A real x402 facilitator on loopback for the remote-facilitator mode: POST /verify, POST /settle and
 * GET /supported as the x402 v2 specification defines them (section 7, "Facilitator Interface") and
 * as the reference facilitator serves them (coinbase/x402 e2e/facilitators/typescript), built from
 * @x402/core's x402Facilitator with @x402/evm's exact EVM scheme: v2 on eip155:8453 and v1 on
 * `base`. It settles on the local chain of chain.ts with a viem wallet client; the chain's settler
 * account signs and pays gas. Faults can be switched on at any time through `faults` for
 * reconciliation tests; `requests` logs every call with what the facilitator computed and answered.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { x402Facilitator } from '@x402/core/facilitator';
import type { Network, PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { toFacilitatorEvmSigner } from '@x402/evm';
import { ExactEvmScheme } from '@x402/evm/exact/facilitator';
import { ExactEvmSchemeV1 } from '@x402/evm/exact/v1/facilitator';
import express from 'express';
import { type Address, createWalletClient, http as httpTransport, publicActions } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { base } from 'viem/chains';
import type { ChainAccount, LocalChain } from './chain.ts';

/**
 * - `invalid`: 200 `{isValid: false, invalidReason: FAULT_VERIFY_REASON}` without checking anything.
 * - `error`: 500, as the reference facilitator answers when verification throws.
 */
export type VerifyFault = 'invalid' | 'error';
/**
 * - `fail`: 200 `{success: false, errorReason: FAULT_SETTLE_REASON, transaction: ""}`; nothing on chain.
 * - `error`: 500; nothing on chain.
 * - `hang`: never answers (until the caller gives up or the facilitator closes); nothing on chain.
 * - `hang-after-settle`: settles on chain for real, then never answers: the caller cannot know the
 *   outcome and must reconcile (the chain's `authorizationState` tells).
 */
export type SettleFault = 'fail' | 'error' | 'hang' | 'hang-after-settle';

export interface FacilitatorFaults {
  verify?: VerifyFault | undefined;
  settle?: SettleFault | undefined;
}

/** The x402 EVM scheme's reasons, so a caller cannot tell an injected fault from a real one. */
export const FAULT_VERIFY_REASON = 'invalid_exact_evm_insufficient_balance';
export const FAULT_SETTLE_REASON = 'invalid_exact_evm_transaction_failed';

export interface FacilitatorCall {
  method: string;
  path: string;
  body: unknown;
  fault?: VerifyFault | SettleFault;
  /** What x402Facilitator returned, also when a fault withheld it (`hang-after-settle`). */
  result?: unknown;
  /** The HTTP answer; undefined while (or because) the call hangs. */
  status?: number;
  response?: unknown;
}

export interface TestFacilitator {
  /** Base URL, for `payments.facilitator_url` / `HTTPFacilitatorClient({url})`. */
  url: string;
  /** The address that submits settlements (listed in /supported `signers`). */
  signer: Address;
  /** Every call, in arrival order. */
  requests: FacilitatorCall[];
  /** Faults in force; change them between calls. */
  faults: FacilitatorFaults;
  close(): Promise<void>;
}

export interface FacilitatorOptions {
  faults?: FacilitatorFaults;
  /** Account that submits settlements and pays gas (default: the chain's settler). */
  settler?: ChainAccount;
}

const payerOf = (payload: PaymentPayload) =>
  (payload.payload as { authorization?: { from?: string } }).authorization?.from;

export async function startFacilitator(
  chain: LocalChain,
  options: FacilitatorOptions = {},
): Promise<TestFacilitator> {
  const account = privateKeyToAccount((options.settler ?? chain.accounts.settler).privateKey);
  const client = createWalletClient({
    account,
    chain: base,
    transport: httpTransport(chain.rpcUrl),
    pollingInterval: 50,
  }).extend(publicActions);
  // The signer adapter of the reference facilitator: reads, writes and receipts through viem.
  const signer = toFacilitatorEvmSigner(
    {
      address: account.address,
      getCode: (args) => client.getCode(args),
      readContract: (args) => client.readContract({ ...args, args: args.args ?? [] }),
      verifyTypedData: (args) => client.verifyTypedData(args as Parameters<typeof client.verifyTypedData>[0]),
      writeContract: (args) => client.writeContract({ ...args, args: args.args ?? [] }),
      sendTransaction: (args) => client.sendTransaction(args),
      waitForTransactionReceipt: (args) => client.waitForTransactionReceipt(args),
    },
    { confirmationTimeoutMs: 15_000 },
  );
  const facilitator = new x402Facilitator()
    .register(chain.network, new ExactEvmScheme(signer))
    // registerV1 is typed with v2's CAIP-2 `Network`, but v1 names networks plainly, as @x402/evm's
    // own registerExactEvmScheme passes them.
    .registerV1('base' as Network, new ExactEvmSchemeV1(signer));

  const requests: FacilitatorCall[] = [];
  const faults: FacilitatorFaults = { ...options.faults };
  const hanging = new Set<http.ServerResponse>();

  const app = express();
  app.use(express.json());
  app.use((req, res, next) => {
    res.locals.call = { method: req.method, path: req.path, body: req.body } satisfies FacilitatorCall;
    requests.push(res.locals.call);
    next();
  });
  const call = (res: express.Response) => res.locals.call as FacilitatorCall;
  const answer = (res: express.Response, status: number, body: unknown) => {
    Object.assign(call(res), { status, response: body });
    res.status(status).json(body);
  };
  const hang = (res: express.Response) => {
    hanging.add(res);
    res.on('close', () => hanging.delete(res));
  };

  /** The reference facilitator's request check: both objects present, else 400. */
  const paymentOf = (req: express.Request, res: express.Response) => {
    const { paymentPayload, paymentRequirements } = (req.body ?? {}) as {
      paymentPayload?: PaymentPayload;
      paymentRequirements?: PaymentRequirements;
    };
    if (!paymentPayload || !paymentRequirements) {
      answer(res, 400, { error: 'Missing paymentPayload or paymentRequirements' });
      return undefined;
    }
    return { paymentPayload, paymentRequirements };
  };

  app.post('/verify', async (req, res) => {
    const payment = paymentOf(req, res);
    if (!payment) return;
    const fault = faults.verify;
    if (fault) call(res).fault = fault;
    if (fault === 'error') return answer(res, 500, { error: 'injected verify fault' });
    if (fault === 'invalid') {
      const payer = payerOf(payment.paymentPayload);
      return answer(res, 200, { isValid: false, invalidReason: FAULT_VERIFY_REASON, payer });
    }
    try {
      const result = await facilitator.verify(payment.paymentPayload, payment.paymentRequirements);
      call(res).result = result;
      answer(res, 200, result);
    } catch (error) {
      answer(res, 500, { error: error instanceof Error ? error.message : 'Unknown error' });
    }
  });

  app.post('/settle', async (req, res) => {
    const payment = paymentOf(req, res);
    if (!payment) return;
    const fault = faults.settle;
    if (fault) call(res).fault = fault;
    if (fault === 'error') return answer(res, 500, { error: 'injected settle fault' });
    if (fault === 'hang') return hang(res);
    if (fault === 'fail') {
      const { network } = payment.paymentRequirements;
      const payer = payerOf(payment.paymentPayload);
      return answer(res, 200, {
        success: false,
        errorReason: FAULT_SETTLE_REASON,
        transaction: '',
        network,
        payer,
      });
    }
    try {
      const result = await facilitator.settle(payment.paymentPayload, payment.paymentRequirements);
      call(res).result = result;
      if (fault === 'hang-after-settle') return hang(res);
      answer(res, 200, result);
    } catch (error) {
      answer(res, 500, { error: error instanceof Error ? error.message : 'Unknown error' });
    }
  });

  app.get('/supported', (_req, res) => answer(res, 200, facilitator.getSupported()));

  const server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    signer: account.address,
    requests,
    faults,
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
