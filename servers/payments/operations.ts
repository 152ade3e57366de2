/**
 * The payment core's own operations: the public receipt of a payment, and referral handles with
 * their balances (docs/guides/paid/x402.md).
 */
import { z } from 'zod';
import { notFound, ServiceError } from '../errors.ts';
import { defineOperation, requireAccount } from '../operation.ts';
import { CreditsOfPayer, creditsOf } from './credits.ts';
import { findHandle, handleOfAccount, insertHandle, referralTotals } from './ledger.ts';
import { usdcOf } from './networks.ts';
import { PaymentId, PaymentReceipt, ReferralBalance, ReferralHandle } from './schemas.ts';
import { receiptOf } from './service.ts';

export const PaymentRecord = PaymentReceipt.extend({
  sku: z.string().describe('The catalog SKU paid for.'),
  amount_usdc: z.number().describe('Amount of the authorization, in USDC.'),
  created_at: z.iso.datetime(),
  settled_at: z.iso.datetime().nullable().describe('When it was settled on chain; null until then.'),
}).describe('Receipt of a payment. Names no person: the payer is the paying address.');

export const getPayment = defineOperation({
  name: 'getPayment',
  title: 'Receipt of a payment',
  description:
    'The receipt of an x402 payment made to this service, by the payment id every paid response carries ' +
    '(PAYMENT-RESPONSE header, MCP _meta["x402/payment-response"]): status (authorized, settled, ' +
    'reconciling, ...), network, settlement transaction, payer address, SKU and amount.',
  input: z.strictObject({ payment_id: PaymentId }),
  output: PaymentRecord,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  access: 'public',
  http: { surface: 'public_api', method: 'GET', path: '/payments/:payment_id', input: 'query' },
  mcp: ['public'],
  errors: ['validation_failed', 'not_found'],
  tags: ['payments'],
  handler: async (ctx, input) => {
    const row = await ctx.services.payments.receipt(input.payment_id);
    if (!row) throw notFound(`No payment ${input.payment_id}`);
    return {
      ...receiptOf(row, row.network, 2),
      sku: row.sku,
      amount_usdc: usdcOf(row.amount),
      created_at: row.created_at,
      settled_at: row.settled_at,
    };
  },
});

const RegisteredHandle = z.object({
  handle: z.string(),
  since: z.iso.datetime(),
  balance_url: z.url().describe('GET it for the balance of this handle.'),
});

export const registerReferralHandle = defineOperation({
  name: 'registerReferralHandle',
  title: 'Register your referral handle',
  description:
    "Registers the account's referral handle (one per account). Paid calls that name it with ref=<handle> " +
    'credit it payments.referral_share (10%) of each settled payment; GET /referral-balance?handle= shows ' +
    'the balance. Registering the same handle again returns it.',
  input: z.strictObject({ handle: ReferralHandle }),
  output: RegisteredHandle,
  annotations: { readOnlyHint: false, idempotentHint: true, openWorldHint: false },
  access: 'service_key',
  http: {
    surface: 'public_api',
    method: 'POST',
    path: '/referral-handle',
    input: 'body',
    successStatus: 201,
  },
  errors: ['validation_failed', 'referral_handle_taken'],
  tags: ['payments'],
  handler: async (ctx, input) => {
    const account = requireAccount(ctx);
    const { db, config } = ctx.services;
    const balanceUrl = `${config.public_api_url}/referral-balance?handle=${encodeURIComponent(input.handle)}`;
    const inserted = await insertHandle(db, input.handle, account.id, ctx.services.now().toISOString());
    const mine = await handleOfAccount(db, account.id);
    if (mine?.handle === input.handle)
      return { handle: mine.handle, since: mine.created_at, balance_url: balanceUrl };
    throw new ServiceError('referral_handle_taken', {
      detail:
        !inserted && mine
          ? `This account already registered the referral handle ${mine.handle}`
          : `The referral handle ${input.handle} belongs to another account`,
      errors: [{ field: 'handle', message: 'is taken' }],
    });
  },
});

export const getReferralBalance = defineOperation({
  name: 'getReferralBalance',
  title: 'Balance of a referral handle',
  description:
    'What a referral handle has earned: its share of settled payments that named it (ref=<handle>) in USDC, ' +
    'the share still pending (payments verified but not yet settled), how many settled payments credited it, ' +
    'and since when it exists.',
  input: z.strictObject({ handle: ReferralHandle }),
  output: ReferralBalance,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  access: 'public',
  http: { surface: 'public_api', method: 'GET', path: '/referral-balance', input: 'query' },
  mcp: ['public'],
  errors: ['validation_failed', 'not_found'],
  tags: ['payments'],
  handler: async (ctx, input) => {
    const { db } = ctx.services;
    const registered = await findHandle(db, input.handle);
    if (!registered) throw notFound(`No referral handle ${input.handle}`);
    const totals = await referralTotals(db, input.handle);
    return {
      handle: registered.handle,
      balance_usdc: usdcOf(totals.settled),
      pending_usdc: usdcOf(totals.pending),
      count: totals.count,
      since: registered.created_at,
    };
  },
});

export const getCredits = defineOperation({
  name: 'getCredits',
  title: 'Credits owed back to a payer',
  description:
    'USDC this service owes back, or has paid back, to a paying address: the unused part of a featured bid ' +
    'that was outbid (pro rata by the second), and the like. Each credit is transferred in USDC from the ' +
    "settler's address once its source payment is settled; until then it is owed. Public: the address is " +
    'the only identity involved.',
  input: z.strictObject({
    payer: z
      .string()
      .regex(/^0x[0-9a-fA-F]{40}$/, 'must be an EVM address (0x and 40 hex digits)')
      .describe('The paying address (authorization.from of the payment).'),
  }),
  output: CreditsOfPayer,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  access: 'public',
  http: { surface: 'public_api', method: 'GET', path: '/credits', input: 'query' },
  mcp: ['public'],
  errors: ['validation_failed'],
  tags: ['payments'],
  handler: async (ctx, input) => creditsOf(ctx.services.db, input.payer),
});

export const paymentOperations = [getPayment, registerReferralHandle, getReferralBalance, getCredits];
